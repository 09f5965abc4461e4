/* One scheduling attempt and its binding cycle (pkg/scheduler/schedule_one.go):
 * the scheduler object owns the queue, the profiles' frameworks (swappable on reload), the
 * round-robin filter start index, the tie-break RNG and the binder threads.
 *
 * Threads: sk_schedule_one runs on one scheduling thread (the loop, or simulate's main thread);
 * Filter and Score fan out over the frameworks' pool; binding cycles run on `binder_threads`
 * threads (0: inline, right after the scheduling cycle, as simulate wants). profiles_mu guards
 * the framework list; the queue has its own lock; nothing here holds a lock across a callback
 * that may do I/O. */
#ifndef SK_SCHEDULE_ONE_H
#define SK_SCHEDULE_ONE_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/backend/queue.h"
#include "scheduler/framework/record.h"
#include "scheduler/framework/runtime.h"

enum sk_result { SK_RESULT_SCHEDULED = 0, SK_RESULT_UNSCHEDULABLE, SK_RESULT_ERROR };
const char *sk_result_string(enum sk_result r); /* "Scheduled", "Unschedulable", "Error" */

/* One rejected node: the plugin that rejected it and its status (message = reasons joined). */
struct sk_outcome_filter {
	const char *node;
	const char *plugin;      /* may be "" (e.g. a node left out by a PreFilterResult: the narrowing plugin) */
	const struct sk_status *status;
};

/* The record of one attempt, delivered to sk_sched_env.observe (valid during the call only). */
struct sk_outcome {
	const struct sk_pod *pod;
	const char *profile;
	enum sk_result result;
	const char *node;               /* chosen node, NULL unless Scheduled */
	const char *message;            /* FitError / error text; NULL when Scheduled */
	const char *nominated_node;     /* set by PostFilter (preemption), else NULL */
	int attempts;
	double duration_s;              /* pop to end of the attempt (binding included) */
	double algorithm_s;             /* schedulePod alone, when it found a host; else 0 */
	/* Details (only when sk_sched_env.want_details): */
	int nfilter;
	const struct sk_outcome_filter *filter; /* rejected nodes, scan order */
	const struct sk_score_table *scores;    /* NULL when not scored (0 or 1 feasible node) */
	const char *const *score_nodes;         /* node name per score column */
	/* Decision-record details (docs/explain.md), with the details above: */
	bool record;                            /* the profile records decisions (decisionRecords.enabled) */
	bool annotate;                          /* ... and annotates pods with the result (decisionRecords.annotations) */
	int num_all_nodes;                      /* nodes in the snapshot */
	int prefilter_nodes;                    /* -1: every node (no PreFilterResult), else the narrowed count */
	const char *prefilter_message;          /* the PreFilter rejection, or NULL */
	const char *nominated_path;             /* the pod's nominated node, evaluated first, or NULL */
	bool nominated_path_fit;                /* ... it passed and was taken without the full pass */
	bool permit_wait;                       /* a Permit plugin asked to wait */
	const struct sk_rec_trace *trace;       /* timings per extension point, victims; may be NULL */
	/* The attempt's score arrays, which the observer may take instead of copying: it then owns
	 * (and frees) the arrays it set to NULL here. NULL when not scored. */
	struct sk_score_table *take_scores;
	const char ***take_score_nodes;
};

/* What the attempt needs from the process around it (cache, API, observers). Callbacks may be
 * called from the scheduling thread and the binder threads. */
struct sk_sched_env {
	void *ctx;
	/* UpdateSnapshot: returns the up-to-date snapshot for this cycle (owned by the env), or NULL
	 * and *err (caller frees). */
	const struct sk_snapshot *(*update_snapshot)(void *ctx, char **err);
	/* Cache callbacks: assume (pod has node_name set), forget, finish binding, is-assumed. */
	int (*assume)(void *ctx, struct sk_pod *assumed, char **err);
	int (*forget)(void *ctx, const struct sk_pod *assumed, char **err);
	int (*finish_binding)(void *ctx, const struct sk_pod *assumed, char **err);
	bool (*is_assumed)(void *ctx, const char *uid);
	/* The informer's current copy of pod (new reference), or NULL when it no longer exists.
	 * NULL callback: the queued copy is used. */
	struct sk_pod *(*get_pod)(void *ctx, const struct sk_pod *pod);
	/* PodScheduled=False patch (reason "Unschedulable"/"SchedulerError", full message) with the
	 * nominated node: nominate == false: leave it; true: set to nominated_node ("" clears). The
	 * FailedScheduling event is recorded through the framework env's event hook. May be NULL. */
	void (*patch_failure)(void *ctx, const struct sk_pod *pod, const char *reason, const char *message,
			      bool nominate, const char *nominated_node);
	/* Every attempt's outcome (simulate output, metrics). May be NULL. */
	void (*observe)(void *ctx, const struct sk_outcome *o);
	bool want_details;
	/* Random numbers for the tie-break; NULL: an internal generator seeded with `seed`. */
	uint64_t (*rand)(void *ctx);
	uint64_t seed;
	int binder_threads;             /* 0: bind inline */
	struct sk_nominator *nominator; /* shared with the frameworks' env; may be NULL */
	struct sk_queue_options queue;  /* zero: upstream defaults */
	/* scheduler_goroutines{operation="binding"} += delta: a binding cycle starts (+1) or ends (-1),
	 * on a binder thread (or inline). May be NULL. */
	void (*working)(void *ctx, const char *operation, int delta);
};

struct sk_scheduler;

/* Creates the scheduler and its queue (the queue's QueueSort/PreEnqueue/hints come from the
 * profiles' frameworks). NULL and *err on failure. */
struct sk_scheduler *sk_scheduler_new(const struct sk_sched_env *env, char **err);
/* Stops the binder threads after draining their jobs, frees the queue and drops the frameworks. NULL ok. */
void sk_scheduler_free(struct sk_scheduler *s);
struct sk_queue *sk_scheduler_queue(struct sk_scheduler *s);
/* Installs the frameworks (one per profile; references are taken, the old ones dropped: cycles in
 * flight finish on the framework they started with). */
int sk_scheduler_set_frameworks(struct sk_scheduler *s, struct sk_framework *const *fws, int n);
/* The framework for a scheduler name (new reference) or NULL. */
struct sk_framework *sk_scheduler_framework(struct sk_scheduler *s, const char *scheduler_name);
/* The snapshot of the running cycle (for the frameworks' env.snapshot). */
const struct sk_snapshot *sk_scheduler_snapshot(struct sk_scheduler *s);

/* Pops one pod (blocking when `block`, else returns 0 when nothing is poppable) and runs one attempt.
 * Returns 1 when an attempt ran, 0 when nothing was popped (non-blocking), -1 when the queue is closed. */
int sk_schedule_one(struct sk_scheduler *s, bool block);
/* Waits until no binding cycle is queued or running. */
void sk_scheduler_wait_bindings(struct sk_scheduler *s);
int sk_scheduler_next_start_index(struct sk_scheduler *s);

/* FitError message (pkg/scheduler/framework/types.go (FitError.Error)): "0/<num_all> nodes are available: ...". statuses: the
 * rejected nodes; absent: status of the nodes not in statuses (count num_all - n) or NULL;
 * prefilter_msg / postfilter_msg may be NULL or "". Caller frees. */
char *sk_fit_error_message(int num_all, const struct sk_node_status *statuses, int n, const struct sk_status *absent,
			   const char *prefilter_msg, const char *postfilter_msg);

/* Truncates an event note to 1024 bytes the way upstream does (first 1020 + " ..."). Caller frees. */
char *sk_truncate_event_message(const char *msg);

#endif
