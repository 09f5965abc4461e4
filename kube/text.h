/* Shared immutable text: one allocation holding a reference count, the length and the bytes
 * (NUL-terminated). The informer's store keeps each object's JSON this way, and the scheduler's
 * decoded objects keep a reference to the same bytes for the extender wire
 * (scheduler/api/raw.h) instead of a second copy. */
#ifndef KUBE_TEXT_H
#define KUBE_TEXT_H

#include <stdatomic.h>
#include <stddef.h>

struct kube_text {
	atomic_int refs;
	size_t len;
	char s[];
};

/* A text of refcount 1 holding a copy of s[0..len). NULL on OOM. */
struct kube_text *kube_text_new(const char *s, size_t len);
/* Takes malloc'd s (freed here, also on failure) into a new text. NULL on OOM or s NULL. */
struct kube_text *kube_text_adopt(char *s);
/* Another reference (t may be NULL); returns t. Thread-safe. */
struct kube_text *kube_text_ref(struct kube_text *t);
/* Drops a reference; frees at zero. NULL is a no-op. Thread-safe. */
void kube_text_unref(struct kube_text *t);

#endif
