/* The plugin handle (schedkit/plugin.h, "the handle"): what a plugin may ask of the scheduler —
 * the cycle's snapshot, parallelism, bindings, nominated and waiting pods, and the preemption
 * support. Each call goes to the framework's environment (runtime.h, struct sk_framework_env). */
#include <stdlib.h>
#include <string.h>

#include "kube/featuregate.h"
#include "kube/util.h"
#include "scheduler/framework/extender.h"
#include "scheduler/framework/fw_internal.h"
#include "scheduler/framework/record.h"

/* ---------- handle ---------- */

const struct sk_snapshot *sk_handle_snapshot(struct sk_handle *h)
{
	return h->fw->env.snapshot ? h->fw->env.snapshot(h->fw->env.ctx) : NULL;
}
const char *sk_handle_profile_name(struct sk_handle *h) { return h->fw->name; }
int sk_handle_parallelism(struct sk_handle *h)
{
	if (h->fw->env.pool)
		return sk_pool_parallelism(h->fw->env.pool);
	return h->fw->cfg && h->fw->cfg->parallelism > 0 ? h->fw->cfg->parallelism : 16;
}
void sk_handle_parallel_for(struct sk_handle *h, int n, void (*fn)(int i, void *ctx), void *ctx)
{
	sk_rec_parallel_for(h->fw->env.pool, n, fn, ctx); /* the workers see the attempt's trace (record.h) */
}
int sk_handle_bind_pod(struct sk_handle *h, const struct sk_pod *pod, const char *node_name, char **err)
{
	if (!h->fw->env.bind)
		return kube_errf(err, "no binder configured for profile %s", h->fw->name);
	return h->fw->env.bind(h->fw->env.ctx, pod, node_name, err);
}
int sk_handle_nominated_pods(struct sk_handle *h, const char *node_name, struct sk_pod ***out)
{
	*out = NULL;
	if (!h->fw->env.nominator)
		return 0;
	return sk_nominator_pods_for_node(h->fw->env.nominator, node_name, out);
}
int sk_handle_allow_waiting_pod(struct sk_handle *h, const char *pod_uid, const char *plugin_name)
{
	return sk_waiting_allow(h->fw->waiting, pod_uid, plugin_name);
}
int sk_handle_reject_waiting_pod(struct sk_handle *h, const char *pod_uid, const char *plugin_name, const char *msg)
{
	return sk_waiting_reject(h->fw->waiting, pod_uid, plugin_name, msg);
}
int64_t sk_handle_now_ns(struct sk_handle *h) { return sk_framework_now_ns(h->fw); }

/* ---------- handle: preemption support (schedkit/plugin.h) ---------- */

struct sk_cycle_state *sk_handle_cycle_state_clone(struct sk_handle *h, const struct sk_cycle_state *cs)
{
	(void)h;
	return sk_cycle_state_clone(cs);
}

void sk_handle_cycle_state_free(struct sk_handle *h, struct sk_cycle_state *cs)
{
	(void)h;
	sk_cycle_state_free(cs);
}

struct sk_status sk_handle_run_pre_filter_add_pod(struct sk_handle *h, struct sk_cycle_state *cs,
						  const struct sk_pod *pod, const struct sk_pod *to_add,
						  const struct sk_node_info *ni)
{
	return sk_fw_run_pre_filter_add_pod(h->fw, cs, pod, to_add, ni);
}

struct sk_status sk_handle_run_pre_filter_remove_pod(struct sk_handle *h, struct sk_cycle_state *cs,
						     const struct sk_pod *pod, const struct sk_pod *to_remove,
						     const struct sk_node_info *ni)
{
	return sk_fw_run_pre_filter_remove_pod(h->fw, cs, pod, to_remove, ni);
}

struct sk_status sk_handle_run_filter_with_nominated(struct sk_handle *h, struct sk_cycle_state *cs,
						     const struct sk_pod *pod, const struct sk_node_info *ni)
{
	return sk_fw_run_filter_with_nominated(h->fw, cs, pod, ni);
}

const struct sk_framework_env *sk_handle_env(const struct sk_handle *h) { return &h->fw->env; }

int sk_handle_list_pdbs(struct sk_handle *h, struct sk_pdb ***out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (!h->fw->env.list_pdbs)
		return 0;
	return h->fw->env.list_pdbs(h->fw->env.ctx, out, err);
}

struct sk_pod *sk_handle_get_pod(struct sk_handle *h, const struct sk_pod *pod)
{
	if (!h->fw->env.get_pod)
		return sk_pod_ref((struct sk_pod *)pod);
	return h->fw->env.get_pod(h->fw->env.ctx, pod);
}

int64_t sk_handle_pod_start_time(struct sk_handle *h, const struct sk_pod *pod)
{
	if (h->fw->env.pod_start_time)
		return h->fw->env.pod_start_time(h->fw->env.ctx, pod);
	return pod->creation_time > 0 ? (int64_t)pod->creation_time * 1000000000LL : -1;
}

int64_t sk_handle_wall_now_ns(struct sk_handle *h)
{
	(void)h;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool sk_handle_terminating_by_preemption(struct sk_handle *h, const struct sk_pod *pod)
{
	if (h->fw->env.terminating_by_preemption)
		return h->fw->env.terminating_by_preemption(h->fw->env.ctx, pod);
	return pod->terminating;
}

int sk_handle_preempt_victim(struct sk_handle *h, const struct sk_pod *preemptor, const struct sk_pod *victim,
			     const char *node_name, char **err)
{
	if (err)
		*err = NULL;
	sk_rec_victim(victim); /* the attempt's decision record, when one is made (record.h) */
	if (!h->fw->env.preempt_victim)
		return kube_errf(err, "cannot preempt pod %s/%s: profile %s has no API client to delete victims", victim->ns,
			    victim->name, h->fw->name);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority pod", h->fw->name);
	return h->fw->env.preempt_victim(h->fw->env.ctx, preemptor, victim, node_name, msg, err);
}

int sk_handle_clear_nominated(struct sk_handle *h, const struct sk_pod *pod, char **err)
{
	if (err)
		*err = NULL;
	if (h->fw->env.nominator)
		sk_nominator_delete(h->fw->env.nominator, pod->uid);
	if (!h->fw->env.clear_nominated)
		return 0;
	return h->fw->env.clear_nominated(h->fw->env.ctx, pod, err);
}

bool sk_handle_feature_enabled(struct sk_handle *h, const char *gate)
{
	if (!gate)
		return false;
	if (h->fw->env.feature_enabled)
		return h->fw->env.feature_enabled(h->fw->env.ctx, gate);
	return kube_feature_gate_enabled(NULL, gate);
}

void sk_handle_activate_pod(struct sk_handle *h, const struct sk_pod *pod)
{
	if (pod && h->fw->env.activate)
		h->fw->env.activate(h->fw->env.ctx, pod);
}

bool sk_handle_pod_deleted(struct sk_handle *h, const struct sk_pod *pod)
{
	if (h->fw->env.pod_deleted)
		return h->fw->env.pod_deleted(h->fw->env.ctx, pod);
	struct sk_pod *cur = sk_handle_get_pod(h, pod);
	bool gone = !cur || cur->terminating || (pod->uid && cur->uid && strcmp(cur->uid, pod->uid) != 0);
	sk_pod_unref(cur);
	return gone;
}

void sk_handle_record_victim(struct sk_handle *h, const struct sk_pod *victim)
{
	(void)h;
	sk_rec_victim(victim);
}

bool sk_handle_is_waiting_pod(struct sk_handle *h, const char *pod_uid)
{
	return sk_waiting_has(h->fw->waiting, pod_uid);
}

void sk_handle_event(struct sk_handle *h, const struct sk_pod *pod, const char *type, const char *reason,
		     const char *action, const char *note)
{
	if (h->fw->env.event)
		h->fw->env.event(h->fw->env.ctx, pod, type, reason, action, note);
}

int sk_handle_patch_pod_annotation(struct sk_handle *h, const struct sk_pod *pod, const char *key, const char *value,
				   char **err)
{
	if (err)
		*err = NULL;
	if (!key || !*key)
		return kube_errf(err, "cannot annotate pod %s/%s: empty annotation key", pod->ns, pod->name);
	if (!h->fw->env.patch_pod_annotation)
		return kube_errf(err, "cannot annotate pod %s/%s: profile %s has no API client to patch pods", pod->ns,
				 pod->name, h->fw->name);
	return h->fw->env.patch_pod_annotation(h->fw->env.ctx, pod, key, value ? value : "", err);
}

int sk_handle_api_get(struct sk_handle *h, const char *path, cJSON **out, char **err)
{
	if (err)
		*err = NULL;
	if (out)
		*out = NULL;
	if (!out)
		return kube_errf(err, "GET %s: no place for the response (out is NULL)", path ? path : "");
	if (!path || path[0] != '/')
		return kube_errf(err, "GET %s: an API path starts with '/'", path ? path : "");
	if (!h->fw->env.api_get)
		return kube_errf(err, "GET %s: profile %s has no API client", path, h->fw->name);
	return h->fw->env.api_get(h->fw->env.ctx, path, out, err);
}

/* callExtenders over this framework's extenders (extender_preempt.c), on the cycle's snapshot. */
int sk_handle_preempt_extenders(struct sk_handle *h, const struct sk_pod *pod, struct sk_victims **list, int *n,
				char **err)
{
	/* the decision record keeps the candidates, and which ones the extenders dropped (record.h) */
	sk_rec_candidates(*list, *n);
	const struct sk_victims *sent = *list;
	int rc = sk_extenders_call_preempt(h->fw->extenders, h->fw->nextenders, pod, sk_handle_snapshot(h), list, n, err);
	if (rc == 0 && *list != sent)
		sk_rec_candidates_kept(*list, *n);
	return rc;
}
