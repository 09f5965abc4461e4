/* Per-node sums kept from one scheduling cycle to the next (ABI 1.2; docs/plugins.md, "Counts
 * across cycles"). Implemented by the core (scheduler/framework/node_memo.c).
 *
 * A PreFilter or PreScore that sums, over the snapshot's nodes, what each node's pods contribute
 * for the incoming pod (upstream's InterPodAffinity counts and PodTopologySpread's per-domain
 * counts recount every pod each cycle) can keep each node's contribution and the sums: a node
 * info's generation identifies its content (every change takes a fresh generation from one
 * process-wide counter, copies keep it), so the next cycle recounts only the nodes whose
 * generation moved and subtracts the nodes that left the list. The plugin owns the "signature":
 * what of the incoming pod a contribution depends on; when it differs, sk_node_memo_reset starts
 * over. The sums equal a recount from scratch (the same entries with the same counts). Node infos
 * of generation 0 (built by hand) are recounted every time.
 *
 * Sums are handed out by reference (refcounted, read-only while shared); whoever changes shared
 * sums copies them first (sk_node_sums_own). */
#ifndef SK_SCHEDKIT_NODE_MEMO_H
#define SK_SCHEDKIT_NODE_MEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedkit/tpmap.h"
#include "schedkit/types.h"

struct sk_handle;

#define SK_NODE_SUMS_MAPS 2

/* Counts per (key, value) summed over nodes, in maps[0] and maps[1] (the plugin decides what each
 * holds). keys: every key ever added to maps[0] (a superset of its keys). */
struct sk_node_sums {
	atomic_int refs;
	struct sk_tpmap maps[SK_NODE_SUMS_MAPS];
	int nkeys, capkeys;
	const char **keys;
};

struct sk_node_sums *sk_node_sums_new(void); /* NULL on OOM */
struct sk_node_sums *sk_node_sums_ref(struct sk_node_sums *s);
void sk_node_sums_unref(struct sk_node_sums *s); /* NULL ok */
/* Makes *s private to the caller (a copy when shared); 0 or -1 (OOM, *s unchanged). */
int sk_node_sums_own(struct sk_node_sums **s);
/* maps[map][(key, value)] += delta, the entry removed at 0 (sk_tpmap_add_or_delete); key noted
 * when map is 0. 0 or -1 (OOM). */
int sk_node_sums_add(struct sk_node_sums *s, int map, const char *key, const char *value, int64_t delta);

/* One node's contribution: delta for (key, value) of maps[map]. Keys and values must live for
 * the process (interned: topology keys, node label values). */
struct sk_node_contrib {
	const char *key, *value;
	int64_t delta;
	int map;
};
struct sk_node_contribs {
	int n, cap;
	struct sk_node_contrib *c;
};
/* Adds delta to (map, key, value), merged with an equal entry; 0 or -1 (OOM). */
int sk_node_contribs_add(struct sk_node_contribs *cs, int map, const char *key, const char *value, int64_t delta);

/* Computes ni's contribution (ni->node is not NULL) into out (empty on entry); 0 or -1 (OOM).
 * Called from pool threads when many nodes are recounted at once: must be thread-safe. */
typedef int (*sk_node_contrib_fn)(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out);

struct sk_node_memo;

struct sk_node_memo *sk_node_memo_new(void); /* NULL on OOM */
void sk_node_memo_free(struct sk_node_memo *m); /* NULL ok */
/* The memo for this thread; false when another thread holds it (then use sk_node_sums_count). */
bool sk_node_memo_try_lock(struct sk_node_memo *m);
void sk_node_memo_unlock(struct sk_node_memo *m);
/* The signature the memo's contributions belong to (NULL after a reset without one). */
void *sk_node_memo_sig(const struct sk_node_memo *m);
/* Forgets every contribution and takes sig as the signature (sig_free(old sig) is called). */
void sk_node_memo_reset(struct sk_node_memo *m, void *sig, void (*sig_free)(void *sig));
/* Brings the sums up to date with list[0..n) (node infos without a node are skipped) and returns
 * a new reference to them, or NULL on OOM (the memo is then reset). Many nodes to recount are
 * counted in parallel on h's pool (h may be NULL: the caller's thread). */
struct sk_node_sums *sk_node_memo_update(struct sk_node_memo *m, struct sk_handle *h, struct sk_node_info *const *list,
					 int n, sk_node_contrib_fn fn, void *ctx);
/* What the last update did: nodes recounted, nodes dropped (they had left the list). */
void sk_node_memo_last(const struct sk_node_memo *m, int *recounted, int *dropped);

/* The sums over list computed from scratch, without a memo (new sums, or NULL on OOM). */
struct sk_node_sums *sk_node_sums_count(struct sk_handle *h, struct sk_node_info *const *list, int n,
					sk_node_contrib_fn fn, void *ctx);

#endif
