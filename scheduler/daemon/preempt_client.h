/* The API side of preemption (DefaultPreemption's env callbacks, runtime.h) for the daemon:
 * PodDisruptionBudgets from an informer (or a LIST when there is none), status.startTime and the
 * DisruptionTarget condition read from the pod informer's JSON, the victim's DisruptionTarget
 * status patch followed by its DELETE, and the status patch clearing a nominatedNodeName.
 * Start times and "terminating by preemption" are memoized per pod version (uid and
 * resourceVersion; see preempt_client.c): the dry run asks for every potential victim of every
 * candidate node, and each store read parses a whole pod. A view decoded from the informer's
 * object answers from its own facts (scheduler/api/pod_version.h) before the memo is asked.
 * Everything borrowed (client, informers) must outlive the preempt client. Thread-safe: the memo
 * has its own locks; the rest is the borrowed, thread-safe client and informer stores. */
#ifndef SK_PREEMPT_CLIENT_H
#define SK_PREEMPT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/informer.h"
#include "kube/rest.h"
#include "schedkit/plugin.h"

struct sk_preempt_client;

/* client: required. pods: the pod informer (NULL: start times unknown, terminating = deletion
 * timestamp only). pdbs: an informer on policy/v1 poddisruptionbudgets, all namespaces (NULL: each
 * list_pdbs does a LIST). NULL on ENOMEM. */
struct sk_preempt_client *sk_preempt_client_new(struct kube_client *client, struct kube_informer *pods,
						struct kube_informer *pdbs);
void sk_preempt_client_free(struct sk_preempt_client *pc); /* NULL ok */

/* The env callbacks (runtime.h struct sk_framework_env), with the preempt client as first argument. */
int sk_preempt_list_pdbs(struct sk_preempt_client *pc, struct sk_pdb ***out, char **err);
int64_t sk_preempt_pod_start_time(struct sk_preempt_client *pc, const struct sk_pod *pod);
bool sk_preempt_terminating_by_preemption(struct sk_preempt_client *pc, const struct sk_pod *pod);
/* The informer no longer has pod (by namespace/name and uid) or has it with a deletionTimestamp
 * (asynchronous preemption's last-victim check). false without a pod informer. */
bool sk_preempt_pod_deleted(struct sk_preempt_client *pc, const struct sk_pod *pod);
/* Strategic-merge patch of pods/<name>/status adding {DisruptionTarget, True, PreemptionByScheduler,
 * condition_message} (skipped when the informer's copy already carries that condition), then
 * DELETE pods/<name>. 0 done; 1 the victim was already gone (404 on either call); -1 and *err =
 * the API's message (upstream returns the client error as is). */
int sk_preempt_victim(struct sk_preempt_client *pc, const struct sk_pod *preemptor, const struct sk_pod *victim,
		      const char *node_name, const char *condition_message, char **err);
/* Status patch nominatedNodeName: null (skipped when the pod carries none). 0, or -1 and *err. */
int sk_preempt_clear_nominated(struct sk_preempt_client *pc, const struct sk_pod *pod, char **err);

/* Pure helpers (tests): status.startTime of a pod object in Unix ns, -1 when absent or bad; and
 * upstream podTerminatingByPreemption on a pod object. */
int64_t sk_preempt_start_time_of(const cJSON *pod);
bool sk_preempt_terminating_of(const cJSON *pod);

#endif
