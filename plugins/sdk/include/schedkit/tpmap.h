/* Topology-pair counters (upstream shares them in pkg/scheduler/framework/), used by
 * PodTopologySpread and InterPodAffinity: an open-addressing hash map
 * from a (topology key, topology value) pair to an int64 count. Keys are borrowed (interned label
 * strings that live for the process); they compare by pointer first, then by strcmp.
 * Not thread-safe: callers fill a map from one thread and treat it as read-only afterwards.
 * Implemented by the core (scheduler/framework/tpmap.c). */
#ifndef SK_SCHEDKIT_TPMAP_H
#define SK_SCHEDKIT_TPMAP_H

#include <stdbool.h>
#include <stdint.h>

struct sk_tpmap_entry {
	const char *key;   /* NULL = free slot */
	const char *value;
	uint64_t hash;     /* of (key, value), checked before the strings */
	int64_t count;
};

struct sk_tpmap {
	int n, cap;                 /* cap is 0 or a power of two */
	struct sk_tpmap_entry *e;   /* owned */
};

/* The count slot of (key, value), inserted with 0 when absent. NULL on OOM. key must not be NULL. */
int64_t *sk_tpmap_slot(struct sk_tpmap *m, const char *key, const char *value);
/* The count of (key, value), or NULL when absent. */
const int64_t *sk_tpmap_find(const struct sk_tpmap *m, const char *key, const char *value);
/* Adds delta to (key, value); the entry is removed when the count becomes exactly 0 (Go's
 * "delete when down to zero"). 0, or -1 on OOM. */
int sk_tpmap_add_or_delete(struct sk_tpmap *m, const char *key, const char *value, int64_t delta);
/* dst becomes a copy of src (dst must be empty or freed). 0 or -1 on OOM. */
int sk_tpmap_copy(struct sk_tpmap *dst, const struct sk_tpmap *src);
void sk_tpmap_free(struct sk_tpmap *m); /* back to empty; NULL ok */

#endif
