/* DefaultPreemption's asynchronous preemption (upstream SchedulerAsyncPreemption,
 * pkg/scheduler/framework/preemption/preemption.go prepareCandidateAsync and
 * IsPodRunningPreemption): the victims of a chosen candidate are evicted by a pool of worker
 * threads after PostFilter has nominated the preemptor; while that runs the preemptor is in the
 * `preempting` set, which DefaultPreemption's PreEnqueue consults. Internal to the plugin. */
#ifndef SK_PLUGIN_DP_ASYNC_H
#define SK_PLUGIN_DP_ASYNC_H

#include <stdbool.h>

#include "default_preemption.h"

struct dp_async;

/* A pool of up to nworkers threads (started on the first preemption) for plugin self. NULL on
 * ENOMEM. */
struct dp_async *dp_async_new(struct sk_plugin *self, int nworkers);
/* Waits for every preemption in flight to finish, then stops the workers. NULL ok. */
void dp_async_free(struct dp_async *a);
/* prepareCandidateAsync: victims of c that are not already being deleted are evicted off the
 * calling thread (the lower-priority pods nominated to c->node lose their nomination first);
 * preemptor (uid) is in the preempting set until that ends; on an API error it is activated.
 * Returns Success, or Error when the work could not be queued (out of memory or no worker). */
struct sk_status dp_async_start(struct dp_async *a, const struct sk_pod *preemptor, const struct sk_dp_candidate *c);
/* IsPodRunningPreemption: uid is in the preempting set, and its last victim (once its eviction
 * began) is neither gone nor being deleted. */
bool dp_async_running(struct dp_async *a, const char *uid);
/* Blocks until no preemption is in flight (tests, sk_dp_wait_async); true when one was. */
bool dp_async_wait_idle(struct dp_async *a);

/* PreemptPod (shared by the synchronous and the asynchronous paths): a waiting (Permit) victim is
 * rejected, any other gets the DisruptionTarget status patch and its DELETE; an event
 * "Preempted" is recorded unless the victim was already gone. 0, or -1 and *err (caller frees). */
int dp_preempt_pod(struct sk_plugin *self, const struct sk_pod *preemptor, const char *node, const char *note,
		   const struct sk_pod *victim, char **err);
/* Clears the nomination of the pods nominated to node with a lower priority than preemptor
 * (getLowerPriorityNominatedPods + clearNominatedNodeName). Returns the number of failures. */
int dp_clear_lower_nominated(struct sk_plugin *self, const struct sk_pod *preemptor, const char *node);

#endif
