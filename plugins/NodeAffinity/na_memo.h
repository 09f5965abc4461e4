/* NodeAffinity's Filter outcomes kept across cycles (docs/benchmarks.md, "NodeAffinity's outcomes
 * by node index"): pods of one shape (the same nodeSelector and the same required node affinity
 * terms) get the same Filter outcome on the same node object, so a memo per shape keeps, by
 * sk_node_info.index, the node object an outcome was computed for and the outcome. A later pod of
 * the shape reads one word per node instead of looking its labels up (a cache miss per node).
 *
 * A memo is reference counted: the instance holds one, every cycle state (and clone) that reads
 * it another. Its words are written with compare-and-swap by any thread running Filter; each word
 * holds a reference on its node, so a node pointer found there is a live object and equality with
 * the node info's object means the same node: an updated node (a new object) misses and is
 * recomputed, a removed node's index taken by another node misses the same way.
 * A schedkit extension; upstream matches every node's labels in every cycle
 * (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go). */
#ifndef SK_NA_MEMO_H
#define SK_NA_MEMO_H

#include <pthread.h>
#include <stdint.h>

#include "schedkit/types.h"

/* Outcomes (two bits). */
enum na_outcome { NA_NONE = 0, NA_FITS = 1, NA_ENFORCED = 2, NA_POD = 3 };

struct na_memo;

#define NA_MEMO_SHAPES 4

/* One per plugin instance: the shapes seen last, most recent first. A shape gets a memo the
 * second time it is seen, so one-off shapes cost no table. */
struct na_shape {
	struct sk_pod *key;    /* a reference to a pod of the shape */
	struct na_memo *memo;  /* one reference, or NULL (seen once, or out of memory) */
};
struct na_memos {
	pthread_mutex_t mu;
	struct na_shape shape[NA_MEMO_SHAPES];
};

void na_memos_init(struct na_memos *ms);
void na_memos_fini(struct na_memos *ms);
/* The memo for pod's shape with room for indexes below index_end, with a reference for the
 * caller, or NULL (first sighting, index_end <= 0, out of memory). Any thread. */
struct na_memo *na_memo_get(struct na_memos *ms, const struct sk_pod *pod, int32_t index_end);
struct na_memo *na_memo_ref(struct na_memo *m);
void na_memo_unref(struct na_memo *m); /* NULL ok */
/* The outcome kept for ni's node object at ni's index, NA_NONE when none. */
enum na_outcome na_memo_lookup(const struct na_memo *m, const struct sk_node_info *ni);
/* Keeps outcome for ni's node object at ni's index (replacing another object's); no-op for an
 * index outside the memo or a node info without an index or node. */
void na_memo_record(struct na_memo *m, const struct sk_node_info *ni, enum na_outcome outcome);
/* Two pods have one shape: nodeSelector and required node affinity equal. */
bool na_same_shape(const struct sk_pod *a, const struct sk_pod *b);

#endif
