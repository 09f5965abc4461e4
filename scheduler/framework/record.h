/* Per-attempt trace for decision records (docs/explain.md): the timings of each extension point
 * and the preemption victims of the attempt running on this thread. The attempt owns a struct
 * sk_rec_trace and makes it current on the thread that runs a part of it (the scheduling thread,
 * then the binder thread); the framework adds to the current trace, if any. When no profile
 * records decisions no trace is ever current, and the cost is one thread-local load per point. */
#ifndef SK_FRAMEWORK_RECORD_H
#define SK_FRAMEWORK_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "schedkit/types.h"

#define SK_REC_MAX_TIMES 24
#define SK_REC_MAX_VICTIMS 16
#define SK_REC_MAX_CANDIDATES 16

/* A preemption candidate (upstream preemption.Candidate): a node where evicting `victims` pods
 * would let the pod fit. */
struct sk_rec_candidate {
	const char *node;        /* interned */
	int victims;
	int64_t pdb_violations;  /* victims whose eviction a PodDisruptionBudget forbids */
	bool dropped;            /* a preempt extender took it out of the list */
};

struct sk_rec_time {
	const char *point; /* static: "PreFilter", "Filter", ... */
	double seconds;    /* summed over the runs of the point in the attempt */
	int runs;
};

/* times are written by the thread running the attempt; victims also by pool workers (an atomic
 * slot index), read once the loop that noted them has joined. */
struct sk_rec_trace {
	int ntimes;
	struct sk_rec_time times[SK_REC_MAX_TIMES];
	int nvictims;                          /* kept (at most SK_REC_MAX_VICTIMS) */
	int victims_total;                     /* all victims seen (atomic) */
	char *victims[SK_REC_MAX_VICTIMS];     /* "ns/name", owned; slot order, NULL on OOM */
	/* the candidates PostFilter handed to sk_handle_preempt_extenders (scheduling thread only) */
	int ncandidates, candidates_total;
	struct sk_rec_candidate candidates[SK_REC_MAX_CANDIDATES];
};

extern _Thread_local struct sk_rec_trace *sk_rec_current;

/* Makes t current on this thread (NULL: none). Returns the previous one. */
struct sk_rec_trace *sk_rec_set_current(struct sk_rec_trace *t);
static inline bool sk_rec_active(void) { return sk_rec_current != NULL; }
/* Adds seconds to point in the current trace (no-op without one). point must be static. */
void sk_rec_time(const char *point, double seconds);
/* Notes a preemption victim in the current trace (no-op without one). */
void sk_rec_victim(const struct sk_pod *victim);
/* Notes the candidates of a preemption (the list a PostFilter plugin gives the extenders; no-op
 * without a trace), the first SK_REC_MAX_CANDIDATES kept; then, with what the extenders kept,
 * marks the others dropped. */
struct sk_victims;
void sk_rec_candidates(const struct sk_victims *list, int n);
void sk_rec_candidates_kept(const struct sk_victims *list, int n);
/* sk_parallel_for with the caller's current trace made current on the workers for each call
 * (plugins' parallel loops, e.g. DefaultPreemption evicting its victims). */
struct sk_pool;
void sk_rec_parallel_for(struct sk_pool *pool, int n, void (*fn)(int i, void *ctx), void *ctx);
/* Frees what t owns and zeroes it. */
void sk_rec_trace_reset(struct sk_rec_trace *t);

#endif
