/* The scheduling queue (upstream PriorityQueue, v1.34 semantics; pkg/scheduler/backend/queue/scheduling_queue.go and backoff_queue.go): activeQ heap by
 * the QueueSort less, backoffQ (1 s windows, PopFromBackoffQ on) plus the error backoff queue,
 * unschedulablePods (gated pods included), PreEnqueue gating, requeueing on cluster events through
 * the rejecting plugins' queueing hints, in-flight event recording, and the pending-pod counts.
 *
 * Time comes from ops.now_ns (injectable). Nothing in here sleeps on the clock: the owner calls
 * sk_queue_flush_backoff(now) every second and sk_queue_flush_unschedulable(now) every 30 s
 * (sk_queue_start_flushers does so on a thread), tests call them directly.
 *
 * Locking: one mutex guards everything. The ops callbacks run under it: they must be quick and must
 * not call back into the queue. */
#ifndef SK_QUEUE_H
#define SK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "schedkit/plugin.h"

struct sk_queue_ops {
	void *ctx;
	/* QueueSort less (required). */
	bool (*less)(void *ctx, const struct sk_queued_pod *a, const struct sk_queued_pod *b);
	/* PreEnqueue of the pod's profile: Success, or a rejection with status.plugin set. NULL: none. */
	struct sk_status (*pre_enqueue)(void *ctx, const struct sk_pod *pod);
	/* Queueing hint of `plugin` for ev: -1 when the plugin did not register for ev, else SK_QUEUE or
	 * SK_QUEUE_SKIP. NULL: every rejecting plugin says Queue to every event. */
	int (*hint)(void *ctx, const struct sk_pod *pod, const char *plugin, const struct sk_cluster_event *ev,
		    const void *old_obj, const void *new_obj);
	int64_t (*now_ns)(void *ctx); /* NULL: CLOCK_MONOTONIC */
};

struct sk_queue_options {
	int64_t initial_backoff_ns;        /* podInitialBackoffSeconds (default 1 s) */
	int64_t max_backoff_ns;            /* podMaxBackoffSeconds (default 10 s) */
	int64_t max_in_unschedulable_ns;   /* podMaxInUnschedulablePodsDuration (5 min) */
	bool disable_queueing_hints;       /* SchedulerQueueingHints off (v1.31 behaviour) */
	bool disable_pop_from_backoff;     /* SchedulerPopFromBackoffQ off (no windows, no early pop) */
	/* Called under the queue lock for every pod a cluster event moves out of unschedulablePods
	 * (movePodsToActiveOrBackoffQueue): where it went (an enum sk_queue_where) and the event's
	 * label, for scheduler_queue_incoming_pods_total. Must not call the queue. NULL: none. */
	void (*moved)(void *ctx, const struct sk_pod *pod, int to, const char *event);
	void *moved_ctx;
	/* Also with moved_ctx, under the queue lock, each may be NULL:
	 * scheduler_inflight_events{event} += delta: "PodPopped" for a pod popped and in flight, the
	 * event's label for each cluster event recorded while pods are in flight (queueing hints on;
	 * -1 when the last attempt that could see it is done: upstream's inFlightEvents list). */
	void (*inflight)(void *ctx, const char *event, int delta);
	/* scheduler_queueing_hint_execution_duration_seconds{plugin, event, hint}: each call of a
	 * plugin's queueing hint for an event it registered, hint "Queue" or "QueueSkip". */
	void (*hint_observed)(void *ctx, const char *plugin, const char *event, const char *hint, double seconds);
};

/* Where a pod is (tests, metrics). */
enum sk_queue_where {
	SK_Q_NONE = 0, SK_Q_ACTIVE, SK_Q_BACKOFF, SK_Q_ERROR_BACKOFF, SK_Q_UNSCHEDULABLE, SK_Q_GATED, SK_Q_IN_FLIGHT
};

/* scheduler_pending_pods{queue=...} */
struct sk_queue_counts {
	int active, backoff, unschedulable, gated;
};

/* Well-known events (labels as upstream). */
extern const struct sk_cluster_event SK_EVENT_UNSCHEDULABLE_TIMEOUT; /* wildcard */
extern const struct sk_cluster_event SK_EVENT_FORCE_ACTIVATE;        /* wildcard */
extern const struct sk_cluster_event SK_EVENT_NODE_ADD;
extern const struct sk_cluster_event SK_EVENT_ASSIGNED_POD_ADD;
extern const struct sk_cluster_event SK_EVENT_ASSIGNED_POD_DELETE;

struct sk_queue;

/* opts NULL: defaults. Returns NULL on ENOMEM. */
struct sk_queue *sk_queue_new(const struct sk_queue_ops *ops, const struct sk_queue_options *opts);
/* Frees every queued pod, including popped ones not handed back. NULL ok. */
void sk_queue_free(struct sk_queue *q);
/* Wakes blocked Pop callers (they return NULL) and stops the flusher thread. */
void sk_queue_close(struct sk_queue *q);

/* A new pending pod (takes a reference): PreEnqueue, then activeQ or gated. An already known uid
 * is treated as an update. 0, or -1 on ENOMEM. */
int sk_queue_add(struct sk_queue *q, struct sk_pod *pod);
/* Update of a pending pod (pkg/scheduler/backend/queue/scheduling_queue.go). new_pod: a reference is taken. */
void sk_queue_update(struct sk_queue *q, const struct sk_pod *old_pod, struct sk_pod *new_pod);
/* The pod was deleted (or got bound by someone else): removed from every queue. */
void sk_queue_delete(struct sk_queue *q, const struct sk_pod *pod);

/* Blocks until a pod is available (activeQ, else the head of backoffQ with PopFromBackoffQ) or the
 * queue is closed (NULL). The returned item is in flight and belongs to the caller until it hands it
 * back with sk_queue_add_unschedulable or sk_queue_done; *cycle receives the scheduling cycle.
 * Attempts is incremented; unschedulable/pending/gating plugins are cleared. */
struct sk_queued_pod *sk_queue_pop(struct sk_queue *q, int64_t *cycle);
/* Non-blocking Pop (simulate, tests): NULL when nothing is poppable. */
struct sk_queued_pod *sk_queue_try_pop(struct sk_queue *q, int64_t *cycle);

/* AddUnschedulableIfNotPresent after a failed attempt. The caller has filled
 * qp->unschedulable_plugins / pending_plugins (empty = an error). fresh: the informer's current copy
 * of the pod (reference taken) or NULL. Counters, timestamp, then hints over the in-flight events
 * decide activeQ / backoffQ / unschedulablePods. Returns where the pod went. */
enum sk_queue_where sk_queue_add_unschedulable(struct sk_queue *q, struct sk_queued_pod *qp, struct sk_pod *fresh);
/* The attempt ended without requeueing (bound, or the pod is gone): frees the item. */
void sk_queue_done(struct sk_queue *q, struct sk_queued_pod *qp);

/* MoveAllToActiveOrBackoffQueue for a cluster event (old/new: sk_pod* or sk_node* per resource; for a
 * wildcard event new may be the one sk_pod* it is meant for, as ForceActivate, else NULL). */
void sk_queue_move_all(struct sk_queue *q, const struct sk_cluster_event *ev, const void *old_obj,
		       const void *new_obj);
/* The same with upstream's preCheck: only unschedulable pods for which pre_check(ctx, pod) is true
 * are considered (NULL: all). pre_check runs under the queue lock. */
void sk_queue_move_all_checked(struct sk_queue *q, const struct sk_cluster_event *ev, const void *old_obj,
			       const void *new_obj, bool (*pre_check)(void *ctx, const struct sk_pod *pod), void *ctx);
/* Calls fn for every pod waiting after a rejection (backoffQ or unschedulablePods) once per plugin
 * that rejected it (scheduler_unschedulable_pods). Under the queue lock: fn must not call the queue. */
void sk_queue_each_rejector(struct sk_queue *q, void (*fn)(void *ctx, const struct sk_pod *pod, const char *plugin),
			    void *ctx);
/* Activate (PodsToActivate): pods by "ns/name" move from unschedulable/backoff to activeQ. */
void sk_queue_activate(struct sk_queue *q, char *const *keys, int n);

/* Moves backoffQ pods whose backoff expired at `now` to activeQ. */
void sk_queue_flush_backoff(struct sk_queue *q, int64_t now_ns);
/* Moves pods that sat in unschedulablePods longer than max_in_unschedulable (UnschedulableTimeout). */
void sk_queue_flush_unschedulable(struct sk_queue *q, int64_t now_ns);
/* Starts a thread calling the two flushes every 1 s / 30 s of real time. 0 or -1. */
int sk_queue_start_flushers(struct sk_queue *q);

void sk_queue_counts(struct sk_queue *q, struct sk_queue_counts *out);
/* Calls fn for every pod the queue holds (in flight too) with where it is, under the queue lock:
 * fn must be quick and must not call the queue (the dashboard's per-profile counts). */
void sk_queue_each(struct sk_queue *q, void (*fn)(void *ctx, const struct sk_pod *pod, enum sk_queue_where where),
		   void *ctx);
enum sk_queue_where sk_queue_where_is(struct sk_queue *q, const char *uid);
/* The backoff duration (ns) the queue would apply to qp now (v1.34 counting rules). */
int64_t sk_queue_backoff_duration(struct sk_queue *q, const struct sk_queued_pod *qp);
/* The backoff expiry of a queued pod by uid (ns; window-truncated), or -1 when it is not queued. */
int64_t sk_queue_backoff_expiry(struct sk_queue *q, const char *uid);
int64_t sk_queue_scheduling_cycle(struct sk_queue *q);

/* The cluster events a pending-pod update amounts to (PodSchedulingPropertiesChange): fills up to
 * max events, returns the count (>= 1). */
int sk_pod_update_events(const struct sk_pod *old_pod, const struct sk_pod *new_pod, struct sk_cluster_event *out,
			 int max);

/* The ActionType bits of a node update (upstream nodeSchedulingPropertiesChange): allocatable,
 * labels, taints (spec.unschedulable counts as a taint change), images are not an event.
 * 0 when nothing that scheduling reads changed; SK_ACT_UPDATE when either node is NULL. */
uint32_t sk_node_update_actions(const struct sk_node *old_node, const struct sk_node *new_node);
/* The bits sk_node_update_actions cannot see in struct sk_node, from the API objects: condition
 * type/status changes (heartbeat times ignored) -> SK_ACT_UPDATE_NODE_CONDITION, annotation
 * changes -> SK_ACT_UPDATE_NODE_ANNOTATION. The informer's node update handler ORs the two. */
uint32_t sk_node_object_update_actions(const cJSON *old_obj, const cJSON *new_obj);

#endif
