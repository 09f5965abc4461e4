/* HTTP scheduler extenders (upstream HTTPExtender; pkg/scheduler/extender.go and staging/src/k8s.io/kube-scheduler/extender/v1/types.go): one client per `Extender`
 * config entry (the cJSON kept in sk_config.extenders / sk_profile_config.extenders), the wire
 * types of the filter, prioritize and bind verbs, and IsInterested (managedResources).
 *
 * Every call takes a curl easy handle of its own from the extender's pool of idle ones (so the
 * connection stays open between calls; extender_pool.c): an extender is otherwise immutable after
 * sk_extender_new and may be called from any thread (scheduling thread for filter/prioritize,
 * binder threads for bind, DefaultPreemption's PostFilter for preempt). */
#ifndef SK_EXTENDER_H
#define SK_EXTENDER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "schedkit/plugin.h" /* SK_MAX_EXTENDER_PRIORITY */
#include "schedkit/types.h"

#define SK_DEFAULT_EXTENDER_TIMEOUT_MS 5000
/* The pseudo plugin recorded as unschedulable when a filter extender removed nodes. */
#define SK_EXTENDER_NAME "Extender"

struct sk_extender;

/* Builds an extender from one validated config entry (cfg is not kept). httpTimeout "" or "0s" ->
 * 5s. Reads caFile/certFile/keyFile contents lazily (curl does, per call). NULL and *err (caller
 * frees) naming `path` and the field on failure. */
struct sk_extender *sk_extender_new(const cJSON *cfg, const char *path, char **err);
void sk_extender_free(struct sk_extender *e); /* NULL ok */

/* Builds the extenders of one framework: the top-level list then the profile's own (either may be
 * NULL), in config order, then every ignorable one moved to the end (order kept within each
 * group). *out (caller frees with sk_extenders_free) may be NULL when the count is 0. Returns the
 * count, or -1 and *err. */
int sk_extenders_build(const cJSON *top, const cJSON *profile, struct sk_extender ***out, char **err);
void sk_extenders_free(struct sk_extender **list, int n);

const char *sk_extender_name(const struct sk_extender *e); /* urlPrefix */
bool sk_extender_is_filter(const struct sk_extender *e);
bool sk_extender_is_prioritizer(const struct sk_extender *e);
bool sk_extender_is_binder(const struct sk_extender *e);
bool sk_extender_is_preempter(const struct sk_extender *e); /* preemptVerb set */
bool sk_extender_is_ignorable(const struct sk_extender *e);
bool sk_extender_node_cache_capable(const struct sk_extender *e);
int64_t sk_extender_weight(const struct sk_extender *e);
int64_t sk_extender_timeout_ms(const struct sk_extender *e);
/* IsInterested (pkg/scheduler/extender.go): no managedResources, or an init or regular container
 * of the pod lists one of them under resources.requests or resources.limits (the decoded requests,
 * and the limit names kept with the pod's object, scheduler/api/raw.h). */
bool sk_extender_is_interested(const struct sk_extender *e, const struct sk_pod *pod);

/* One node an extender rejected. */
struct sk_extender_failed {
	char *node;
	char *message;
	bool unresolvable; /* from FailedAndUnresolvableNodes (wins over FailedNodes) */
};
struct sk_extender_filter_result {
	const struct sk_node_info **nodes; /* kept nodes (pointers from the input), response order */
	int n;
	struct sk_extender_failed *failed;
	int nfailed;
};
void sk_extender_filter_result_free(struct sk_extender_filter_result *r); /* frees members; NULL ok */

/* Filter verb. Without filterVerb the input passes unchanged. Errors (transport, timeout, status
 * other than 200, bad JSON, non-empty Error, a returned node not in the input): -1 and *err. */
int sk_extender_filter(const struct sk_extender *e, const struct sk_pod *pod, const struct sk_node_info *const *nodes,
		       int n, struct sk_extender_filter_result *out, char **err);
/* Prioritize verb: adds Score × weight × (100/10) to add[i] for every returned host equal to
 * nodes[i]'s name (unknown hosts ignored; duplicates each added). No prioritizeVerb: nothing.
 * -1 and *err on error (add untouched). */
/* Prioritize of every prioritizer of es[0..ne) interested in the pod, at once (upstream
 * prioritizeNodes, pkg/scheduler/schedule_one.go, runs one goroutine per extender and waits for
 * all; extender_parallel.c): each one's Score x weight x 10 is added to totals; a failing one adds
 * nothing (logged at -v=5), as upstream. */
void sk_extenders_prioritize(const struct sk_extender *const *es, int ne, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n, int64_t *totals);
int sk_extender_prioritize(const struct sk_extender *e, const struct sk_pod *pod,
			   const struct sk_node_info *const *nodes, int n, int64_t *add, char **err);
/* Bind verb (ExtenderBindingArgs). 0, or -1 and *err (the Error field or the transport error). */
int sk_extender_bind(const struct sk_extender *e, const struct sk_pod *pod, const char *node, char **err);

/* Response decoding of the three verbs, from the parsed body (what the functions above do after
 * a 200), exposed for tests and the fuzz targets (scheduler/fuzz/). filter: out zeroed by the
 * caller, freed here on error. Same results and messages as the verbs. */
int sk_extender_filter_decode(const struct sk_extender *e, const cJSON *res, const struct sk_node_info *const *nodes,
			      int n, struct sk_extender_filter_result *out, char **err);
int sk_extender_prioritize_decode(const struct sk_extender *e, const cJSON *res, const struct sk_node_info *const *nodes,
				  int n, int64_t *add, char **err);
int sk_extender_bind_decode(const struct sk_extender *e, const cJSON *res, char **err);

/* The request bodies, exposed for tests and docs (caller cJSON_Delete's; NULL on ENOMEM). The pod
 * and the nodes are the objects as the API server served them (managedFields dropped;
 * scheduler/api/raw.h); an assumed copy of a pod carries its spec.nodeName. A pod or node decoded
 * without a kept object falls back to the rebuilt form of sk_extender_pod_json: metadata {name,
 * namespace, uid, labels}, spec {schedulerName, nodeName, priority, nodeSelector}, status
 * {nominatedNodeName}; a node to {metadata: {name, labels}}. */
cJSON *sk_extender_args_json(const struct sk_extender *e, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n);
cJSON *sk_extender_pod_json(const struct sk_pod *pod);

/* ---------- preempt (schedkit/plugin.h: struct sk_victims) ---------- */

/* ProcessPreemption: POSTs ExtenderPreemptionArgs (full pods in NodeNameToVictims, or UIDs in
 * NodeNameToMetaVictims with nodeCacheCapable) and converts the answer's NodeNameToMetaVictims back,
 * every node looked up in snap and every UID among that node's pods (else an error naming them).
 * *out (caller sk_victims_free's) in the answer's order; a node with no victim is kept (the caller
 * decides). 0, or -1 and *err. */
int sk_extender_process_preemption(const struct sk_extender *e, const struct sk_pod *pod,
				   const struct sk_snapshot *snap, const struct sk_victims *in, int nin,
				   struct sk_victims **out, int *nout, char **err);
/* The request body and the response decoding of the preempt verb (tests, fuzz). */
char *sk_extender_preempt_body(const struct sk_extender *e, const struct sk_pod *pod, const struct sk_victims *v,
			       int n);
int sk_extender_preempt_decode(const struct sk_extender *e, const cJSON *res, const struct sk_snapshot *snap,
			       struct sk_victims **out, int *nout, char **err);
/* callExtenders over list (a framework's extenders, in order): see sk_handle_preempt_extenders
 * (schedkit/plugin.h). A node left without victims is an error for a non-ignorable extender
 * ("expected at least one victim pod on node ...") and dropped for an ignorable one. */
int sk_extenders_call_preempt(struct sk_extender *const *list, int nlist, const struct sk_pod *pod,
			      const struct sk_snapshot *snap, struct sk_victims **io, int *n, char **err);

/* ---------- metrics (extender_metrics.c) ---------- */
struct kube_metrics_registry;
/* Registers scheduler_extender_request_duration_seconds{extender,verb} and
 * scheduler_extender_errors_total{extender,verb,kind} in reg; every extender call of the process
 * is recorded there from then on. sk_extender_metrics_unregister(reg) stops it if reg is the one
 * registered (call it before freeing reg). */
void sk_extender_metrics_register(struct kube_metrics_registry *reg);
void sk_extender_metrics_unregister(struct kube_metrics_registry *reg);

#endif
