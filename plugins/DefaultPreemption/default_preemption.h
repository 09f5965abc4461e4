/* DefaultPreemption (PostFilter; pkg/scheduler/framework/preemption/preemption.go, upstream pkg/scheduler/framework/preemption and
 * plugins/defaultpreemption): when no node fits, finds the node where evicting the fewest and least
 * important lower-priority pods makes room, evicts them and nominates the pod to that node.
 * The pieces are exposed here for tests (upstream's default_preemption_test tables). */
#ifndef SK_PLUGIN_DEFAULT_PREEMPTION_H
#define SK_PLUGIN_DEFAULT_PREEMPTION_H

#include <stdint.h>

#include "schedkit/plugin.h"

extern const struct sk_plugin_desc sk_plugin_default_preemption;

/* DefaultPreemptionArgs, defaulted and validated (pkg/scheduler/apis/config/validation/validation_pluginargs.go). */
struct sk_default_preemption_args {
	int32_t min_candidate_nodes_percentage; /* default 10 */
	int32_t min_candidate_nodes_absolute;   /* default 100 */
};

/* A victim of the dry run: the pod (one reference) and its start time (Unix ns; "now" resolved). */
struct sk_dp_victim {
	struct sk_pod *pod;
	int64_t start_ns;
};
/* A candidate: node name (interned) and its victims, most important first. */
struct sk_dp_candidate {
	const char *node;
	int nvictims;
	struct sk_dp_victim *victims;
	int num_pdb_violations;
	bool victims_borrowed; /* victims is in the dry run's block, not the candidate's to free */
};
void sk_dp_candidate_clear(struct sk_dp_candidate *c); /* unrefs victims, frees the array (unless borrowed) */

/* upstream calculateNumCandidates. */
int32_t sk_dp_num_candidates(const struct sk_default_preemption_args *a, int32_t num_nodes);
/* upstream MoreImportantPod: higher priority, then earlier start. */
bool sk_dp_more_important(const struct sk_dp_victim *a, const struct sk_dp_victim *b);
/* upstream filterPodsWithPDBViolation over pods (in order): violating[i] set per pod. */
void sk_dp_pdb_violations(struct sk_dp_victim *pods, int n, struct sk_pdb *const *pdbs, int npdbs, bool *violating);
/* upstream SelectVictimsOnNode on ni (a private copy, modified) and cs (a private clone). On Success
 * c->victims/num_pdb_violations are set (c->node is set by the caller). now_ns: "now" for pods
 * without a start time. */
struct sk_status sk_dp_select_victims_on_node(struct sk_plugin *self, struct sk_cycle_state *cs,
					      const struct sk_pod *pod, struct sk_node_info *ni,
					      struct sk_pdb *const *pdbs, int npdbs, int64_t now_ns,
					      struct sk_dp_candidate *c);
/* upstream pickOneNodeForPreemption over candidates (in order); returns the index, -1 when n == 0. */
int sk_dp_pick_one_node(const struct sk_dp_candidate *cands, int n);
/* Test hook for the random offset (upstream getOffsetRand): fn(n) in [0, n). NULL restores the
 * internal generator. Not thread-safe against a running PostFilter. */
void sk_dp_set_offset_fn(int32_t (*fn)(int32_t n));
/* Asynchronous preemption (dp_async.h), for tests and the benchmark: whether the instance runs it
 * (the SchedulerAsyncPreemption gate at init), waiting until no preemption is in flight (true
 * when one was), and IsPodRunningPreemption. */
bool sk_dp_is_async(struct sk_plugin *self);
bool sk_dp_wait_async(struct sk_plugin *self);
bool sk_dp_running_preemption(struct sk_plugin *self, const char *uid);

#endif
