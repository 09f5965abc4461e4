/* Topology pair ids for InterPodAffinity (docs/benchmarks.md, "Affinity and spreading: topology pair ids"):
 * every (topology key, node label value) pair the instance meets gets a small integer id, each
 * node of the snapshot keeps, by sk_node_info.index, the ids of its values for the keys in use,
 * and the counts of an sk_node_sums are mirrored into flat arrays by pair id, so Filter and Score
 * read two array elements per key instead of hashing two strings and probing a map per node.
 *
 * The tables a cycle reads (struct topo_nodes, struct topo_dense) are reference counted and
 * never change while shared: an update replaces or copies them. struct topo_ids itself is changed
 * only by the thread holding its mutex. A schedkit extension; upstream hashes per node. */
#ifndef SK_IPA_TOPOLOGY_IDS_H
#define SK_IPA_TOPOLOGY_IDS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedkit/node_memo.h"
#include "schedkit/tpmap.h"
#include "schedkit/types.h"

#define TOPO_MAX_KEYS 8

/* Node index -> pair id per key, for one snapshot's numbering at one nodes_version. */
struct topo_nodes {
	atomic_int refs;
	int nkeys, stride;            /* stride = 1 + nkeys words per node */
	const char *keys[TOPO_MAX_KEYS];
	int32_t n;                    /* indexes [0, n) */
	uint64_t nodes_version;
	uint32_t *at;                 /* [i * stride]: serial (0: no node), then a pair id per key (-1: no label) */
	struct sk_node **node;        /* [i]: a reference to the node the ids were read from */
};

/* The counts of one sk_node_sums (maps[0] and maps[1]) by pair id. */
struct topo_dense {
	atomic_int refs;
	int npairs;
	int64_t *count[SK_NODE_SUMS_MAPS];
};

/* One per plugin instance. */
struct topo_ids {
	pthread_mutex_t mu;
	int nkeys;
	const char *keys[TOPO_MAX_KEYS];
	struct sk_tpmap pairs;        /* (key, value) -> pair id + 1 */
	int npairs, cappairs;
	const char **pair_key, **pair_value;
	struct topo_nodes *nodes;     /* the latest table; one reference */
	uint64_t epoch;               /* bumped whenever nodes is replaced */
};

/* A mirror kept with one memo (guarded by that memo's lock). */
struct topo_mirror {
	struct topo_dense *d;         /* one reference, or NULL */
	uint64_t epoch;               /* the topo_ids epoch d was built against */
	bool valid;                   /* d equals the memo's sums */
};

int topo_ids_init(struct topo_ids *ids);
void topo_ids_destroy(struct topo_ids *ids);

/* The key's id, added when new; -1 when TOPO_MAX_KEYS keys are in use. Caller holds ids->mu. */
int topo_key_id(struct topo_ids *ids, const char *key);
/* The key's id in a table, or -1. */
int topo_nodes_key(const struct topo_nodes *t, const char *key);

/* The table for snap's nodes and ids' keys (a new reference), rebuilt when the snapshot's nodes or
 * the keys changed. NULL on OOM or for a snapshot without numbering. Caller holds ids->mu. */
struct topo_nodes *topo_nodes_get(struct topo_ids *ids, const struct sk_snapshot *snap);
struct topo_nodes *topo_nodes_ref(struct topo_nodes *t);
void topo_nodes_unref(struct topo_nodes *t); /* NULL ok */

/* The pair ids row of ni in t, or NULL when t does not number ni (then hash as before). */
static inline const uint32_t *topo_row(const struct topo_nodes *t, const struct sk_node_info *ni)
{
	uint32_t i = (uint32_t)ni->index;
	if (!t || !ni->index_serial || i >= (uint32_t)t->n || t->at[(size_t)i * (size_t)t->stride] != ni->index_serial)
		return NULL;
	return &t->at[(size_t)i * (size_t)t->stride + 1];
}

/* Brings m's mirror up to date with sums, which differ from what it mirrored only at the values
 * of touched[0..ntouched) (the nodes the memo recounted) unless full. Returns a new reference to
 * the mirror, or NULL when it cannot mirror sums (a key without an id, OOM): then m is invalid
 * and the caller hashes. Caller holds ids->mu and the memo's lock; t is ids->nodes. */
struct topo_dense *topo_mirror_update(struct topo_ids *ids, struct topo_mirror *m, const struct topo_nodes *t,
				      const struct sk_node_sums *sums, const struct sk_node_info *const *touched,
				      int ntouched, bool full);
void topo_mirror_clear(struct topo_mirror *m);
struct topo_dense *topo_dense_ref(struct topo_dense *d);
void topo_dense_unref(struct topo_dense *d); /* NULL ok */

#endif
