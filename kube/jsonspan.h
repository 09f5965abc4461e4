/* The bytes of one member's value in JSON text, found without building a tree: the watch hands
 * the informer an event's "object" exactly as the server sent it, so the store keeps those bytes
 * instead of printing the parsed tree again. */
#ifndef KUBE_JSONSPAN_H
#define KUBE_JSONSPAN_H

#include <stddef.h>

/* s[0..n) holds a JSON object: the start of the value of its top-level member key (and *len its
 * length), or NULL when there is no such member or the text is not a well-formed object as far
 * as it was scanned (strings with escapes, nesting and literals are skipped, not validated). */
const char *kube_json_member_span(const char *s, size_t n, const char *key, size_t *len);

#endif
