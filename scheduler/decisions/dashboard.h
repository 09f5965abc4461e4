/* The messages of the scheduler's live web view (docs/explain.md, "The live web view"): the state
 * (per-profile queue depths, node fill, recent decisions) and the feed of new decisions, built
 * from plain arrays so they are tested without a daemon. The daemon's side
 * (scheduler/daemon/dashboard.c) gathers the arrays from the queue, the cache and the store. */
#ifndef SK_DECISIONS_DASHBOARD_H
#define SK_DECISIONS_DASHBOARD_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "scheduler/backend/queue.h"
#include "scheduler/decisions/store.h"

/* One profile's pending pods: the queue's sub-queues as scheduler_pending_pods names them. */
struct sk_dash_queue {
	const char *profile;  /* borrowed (interned or the configuration's) */
	int active, backoff, unschedulable, gated;
	bool records;         /* the profile keeps decision records (its decisions reach the feed) */
};

struct sk_dash_queues {
	int n, cap;
	struct sk_dash_queue *v;
};

/* Adds a profile with zero counts if it is not there yet; its entry, or NULL on OOM. */
struct sk_dash_queue *sk_dash_queues_profile(struct sk_dash_queues *q, const char *profile);
/* Counts one queued pod of profile at `where` (in-flight pods are not pending: ignored; the error
 * backoff queue counts as backoff). 0, or -1 on OOM. */
int sk_dash_queues_count(struct sk_dash_queues *q, const char *profile, enum sk_queue_where where);
void sk_dash_queues_free(struct sk_dash_queues *q);

/* One node's fill: the requests of its pods against its allocatable. */
struct sk_dash_node {
	const char *name;     /* borrowed */
	int64_t cpu_requested, cpu_allocatable;  /* millicores */
	int64_t mem_requested, mem_allocatable;  /* bytes */
	int pods, max_pods;
	bool unschedulable;   /* spec.unschedulable (cordoned) */
};

/* {"type":"state","time":..,"leading":..,"profiles":[..],"nodes":[..],"totals":{..},
 *  "store":{..},"recent":[..]}: profiles and nodes sorted by name (the arrays are sorted in
 * place); recent (decision summaries, newest first) is taken (NULL: []); st may be NULL.
 * NULL on OOM. */
cJSON *sk_dash_state_json(struct sk_dash_queues *q, struct sk_dash_node *nodes, int nnodes, cJSON *recent,
			  const struct sk_decisions_stats *st, bool leading, int64_t time_ns);
/* {"type":"decisions","items":[..]} with the summaries of v (newest first), or NULL on OOM. */
cJSON *sk_dash_decisions_json(struct sk_decision *const *v, int n);

#endif
