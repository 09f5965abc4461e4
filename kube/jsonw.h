/* A small JSON text writer for request bodies made without a cJSON tree (the binder's Binding,
 * the event recorder's Events): appends raw text, escaped strings and integers to one growing
 * buffer. Strings are escaped as cJSON prints them (\" \\ \b \f \n \r \t, other control bytes as
 * \u00XX, UTF-8 as is), so the server reads the same document. Not thread-safe (one owner). */
#ifndef KUBE_JSONW_H
#define KUBE_JSONW_H

#include <stdbool.h>
#include <stddef.h>

struct kube_jsonw { char *p; size_t len, cap; bool oom; };   /* zero-initialise */

void kube_jsonw_raw(struct kube_jsonw *w, const char *s);   /* appended as is */
void kube_jsonw_str(struct kube_jsonw *w, const char *s);   /* a quoted JSON string; NULL -> null */
void kube_jsonw_int(struct kube_jsonw *w, long long v);
/* The text (caller frees), or NULL when an append ran out of memory (the buffer is freed). */
char *kube_jsonw_finish(struct kube_jsonw *w);

#endif
