/* InterPodAffinity's PreFilter counts kept from one cycle to the next (docs/plugins.md,
 * "InterPodAffinity's counts across cycles").
 *
 * Upstream recounts, every cycle, each existing pod against the incoming pod
 * (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: getExistingAntiAffinityCounts,
 * getIncomingAffinityAntiAffinityCounts). The counts are sums over nodes of what each node's pods
 * contribute; a node's contribution depends only on the node's content and on a part of the
 * incoming pod (its labels and namespace, or its required terms), which the plugin compares
 * (the "signature"). A node info's generation identifies its content (scheduler/api/nodeinfo.c:
 * every change takes a fresh generation from one process-wide counter, copies keep it), so a memo
 * keeps, per node info, its generation and its contribution, and the summed maps: a cycle with
 * the same signature recounts only the nodes whose generation moved and subtracts the
 * contributions of the nodes that left the list. The result equals a recount (same entries, same
 * counts). Generation 0 (node infos built by hand) is never trusted.
 *
 * The summed maps are handed to the cycle's state by reference (struct ipa_agg, refcounted,
 * read-only while shared); whoever changes a shared aggregate copies it first (ipa_agg_own). */
#ifndef IPA_MEMO_H
#define IPA_MEMO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedkit/plugin.h"
#include "schedkit/tpmap.h"
#include "schedkit/types.h"

#define IPA_AGG_MAPS 2

/* Counts (per topology pair) summed over nodes; maps[0] and, for the incoming pod's terms,
 * maps[1]. keys: every topology key ever added to maps[0] (a superset of its keys). */
struct ipa_agg {
	atomic_int refs;
	struct sk_tpmap maps[IPA_AGG_MAPS];
	int nkeys, capkeys;
	const char **keys;
};

struct ipa_agg *ipa_agg_new(void);
struct ipa_agg *ipa_agg_ref(struct ipa_agg *a);
void ipa_agg_unref(struct ipa_agg *a); /* NULL ok */
/* Makes *a private to the caller (a copy when shared); 0 or -1 (OOM, *a unchanged). */
int ipa_agg_own(struct ipa_agg **a);
/* maps[map][(key, value)] += delta (entry removed at 0); key noted when map is 0. 0 or -1. */
int ipa_agg_add(struct ipa_agg *a, int map, const char *key, const char *value, int64_t delta);

/* One node's contribution: delta for (key, value) of maps[map]. Keys and values are interned. */
struct ipa_contrib {
	const char *key, *value;
	int64_t delta;
	int map;
};
struct ipa_contribs {
	int n, cap;
	struct ipa_contrib *c;
};
/* Adds delta to (map, key, value), merging with an equal entry; 0 or -1 (OOM). */
int ipa_contribs_add(struct ipa_contribs *cs, int map, const char *key, const char *value, int64_t delta);

/* Computes the contribution of ni (ni->node is not NULL) into out (empty on entry); 0 or -1. */
typedef int (*ipa_contrib_fn)(const struct sk_node_info *ni, void *ctx, struct ipa_contribs *out);

struct ipa_memo_node;

struct ipa_memo {
	pthread_mutex_t mu;              /* held by ipa_memo_try_lock's caller */
	void *sig;                       /* the signature the contributions belong to (owner: sig_free) */
	void (*sig_free)(void *sig);
	int n, cap;
	struct ipa_memo_node *nodes;     /* in the order of the last list walked */
	int icap;
	int *index;                      /* open addressing: node info pointer -> position + 1 */
	struct ipa_agg *agg;             /* the sums; one reference */
	uint32_t epoch;
	/* what the last update did (for tests and profiles) */
	int last_recounted, last_dropped;
};

void ipa_memo_init(struct ipa_memo *m);
void ipa_memo_destroy(struct ipa_memo *m);
/* The memo for this thread, or NULL when another thread holds it (then count without one). */
bool ipa_memo_try_lock(struct ipa_memo *m);
void ipa_memo_unlock(struct ipa_memo *m);
/* Forgets every contribution and takes sig as the new signature (sig_free(old) is called). */
void ipa_memo_reset(struct ipa_memo *m, void *sig, void (*sig_free)(void *));

/* Brings the sums up to date with list[0..n) (nodes without a node are skipped) and returns a
 * new reference to them, or NULL on OOM (the memo is then reset). Many nodes to recount (a new
 * signature) are counted in parallel on h's pool (fn must then be thread-safe); h may be NULL. */
struct ipa_agg *ipa_memo_update(struct ipa_memo *m, struct sk_handle *h, struct sk_node_info *const *list, int n,
				ipa_contrib_fn fn, void *ctx);

/* The sums for list computed from scratch, without a memo (a new aggregate, or NULL on OOM). */
struct ipa_agg *ipa_count_fresh(struct sk_handle *h, struct sk_node_info *const *list, int n, ipa_contrib_fn fn,
				void *ctx);

#endif
