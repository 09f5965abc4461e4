/* JSON text read without building a tree: the bytes of a member's value, a strict
 * well-formedness check, plain strings, and comparing two texts but for some members. The watch
 * frames its events with these and the informer stores and keys objects as the server sent them
 * (kube/watch.c, kube/informer.c); the scheduler tells a binding's echo from other pod changes
 * (scheduler/api/decode.c, sk_pod_decode_echo). */
#ifndef KUBE_JSONSPAN_H
#define KUBE_JSONSPAN_H

#include <stdbool.h>
#include <stddef.h>

/* A value's bytes in a text: p NULL when absent. */
struct kube_json_span {
	const char *p;
	size_t len;
};

/* s[0..n) holds a JSON object: the start of the value of its top-level member key (and *len its
 * length), or NULL when there is no such member or the text is not a well-formed object as far
 * as it was scanned (strings with escapes, nesting and literals are skipped, not validated).
 * With duplicate keys, the first (as cJSON's lookups). Keys are matched as bytes (no unescaping). */
const char *kube_json_member_span(const char *s, size_t n, const char *key, size_t *len);
/* The value at a path of member names (NULL-terminated, e.g. {"metadata", "name", NULL}). */
const char *kube_json_path_span(const char *s, size_t n, const char *const *path, size_t *len);

/* Whether s[0..n) is one JSON value, whitespace around it allowed, by RFC 8259's grammar and
 * "plain": no object key holds an escape, no string a \u0000 or a surrogate escape, nesting at
 * most 128 deep. What passes, cJSON parses to the same tree; what fails may still be JSON
 * (leave it to a parser, which also gives the error). */
bool kube_json_valid(const char *s, size_t n);

/* A member kube_json_find looks for, and what it found. */
struct kube_json_member {
	const char *const *path;   /* in: member names from the top-level object, NULL-terminated */
	struct kube_json_span val; /* its value at its first occurrence; p NULL when absent */
	struct kube_json_span cut; /* the member with one comma next to it (the one after, else the one
				      before): cutting it leaves the object without the member */
	int comma;                 /* 1: cut holds the comma after it, -1: the one before, 0: none */
	bool dup;                  /* its name comes again in the same object */
};
#define KUBE_JSON_FIND_MAX 32

/* kube_json_valid for an object, finding the members m[0..nm) (nm at most KUBE_JSON_FIND_MAX) in
 * the same pass; paths do not go through arrays. false: not plain JSON, or not an object (m
 * then undefined). */
bool kube_json_find(const char *s, size_t n, struct kube_json_member *m, int nm);
/* v[0..len) a value (a span above, or NULL): when it is a string without escapes, its bytes
 * between the quotes (*out_len long); else NULL. */
const char *kube_json_plain_string(const char *v, size_t len, size_t *out_len);

/* Whether the JSON objects a and b are the same bytes once the members m[0..nm) that
 * kube_json_find found in b are cut from b, and from a where a holds them at the same places
 * (a member of a elsewhere, or with its comma on the other side, makes them differ). false too
 * when a member of b comes twice. a_vals (NULL, or nm): the values of a's members at the cuts. */
bool kube_json_equal_cut(const char *a, size_t an, const char *b, size_t bn, const struct kube_json_member *m, int nm,
			 struct kube_json_span *a_vals);
/* Whether the JSON objects a and b are the same bytes once the members at paths (npaths of
 * them; each a NULL-terminated list of member names) are cut: kube_json_find on b (false when b
 * is not plain JSON), then kube_json_equal_cut. a_vals, b_vals (NULL, or npaths each): the cut
 * members' values. */
bool kube_json_equal_except(const char *a, size_t an, const char *b, size_t bn, const char *const *const *paths,
			    int npaths, struct kube_json_span *a_vals, struct kube_json_span *b_vals);

#endif
