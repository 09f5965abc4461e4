/* NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless the pod tolerates the
 * node.kubernetes.io/unschedulable:NoSchedule taint (pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go). */
#include <string.h>

#include "schedkit/plugin.h"

#define ERR_REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"
#define ERR_REASON_UNSCHEDULABLE "node(s) were unschedulable"
#define TAINT_NODE_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

static bool tolerates_unschedulable(const struct sk_pod *pod)
{
	const struct sk_taint taint = { .key = TAINT_NODE_UNSCHEDULABLE, .value = "", .effect = SK_EFFECT_NO_SCHEDULE };
	for (int i = 0; i < pod->ntolerations; i++)
		if (sk_toleration_tolerates(&pod->tolerations[i], &taint))
			return true;
	return false;
}

/* node_unschedulable_filter past its common case: no node, or an unschedulable one. */
static __attribute__((noinline)) struct sk_status unschedulable_or_unknown(const struct sk_pod *pod,
									  const struct sk_node_info *ni)
{
	if (!ni->node)
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION);
	if (tolerates_unschedulable(pod))
		return sk_ok();
	return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE);
}

static struct sk_status node_unschedulable_filter(struct sk_plugin *self, struct sk_cycle_state *cs,
						  const struct sk_pod *pod, const struct sk_node_info *ni)
{
	(void)self;
	(void)cs;
	/* a schedulable node without a call, so that this path needs no stack frame */
	if (ni->node && !ni->node->unschedulable)
		return sk_ok();
	return unschedulable_or_unknown(pod, ni);
}

/* node_unschedulable_filter over a run of nodes (filter_batch, docs/plugins.md "Batch filtering"). */
static void node_unschedulable_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					    const struct sk_node_info *const *nodes, int n, uint8_t *ok,
					    struct sk_status *st)
{
	(void)self;
	(void)cs;
	for (int i = 0; i < n; i++) {
		if (!ok[i] || (nodes[i]->node && !nodes[i]->node->unschedulable))
			continue;
		struct sk_status s = unschedulable_or_unknown(pod, nodes[i]);
		if (s.code != SK_SUCCESS) {
			ok[i] = 0;
			st[i] = s;
		}
	}
}

/* Queue when a schedulable node is added or a node turns schedulable. Upstream does not look at
 * the pod's tolerations here: a pod that tolerated the taint was not rejected by this plugin. */
static enum sk_hint node_unschedulable_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
						 const void *new_obj)
{
	(void)self;
	(void)pod;
	const struct sk_node *old_node = old_obj, *node = new_obj;
	if (!node)
		return SK_QUEUE;
	if (!old_node)
		return node->unschedulable ? SK_QUEUE_SKIP : SK_QUEUE;
	return (old_node->unschedulable && !node->unschedulable) ? SK_QUEUE : SK_QUEUE_SKIP;
}

/* The rejected pod itself gained a toleration for the unschedulable taint. */
static enum sk_hint node_unschedulable_hint_pod_toleration(struct sk_plugin *self, const struct sk_pod *pod,
							   const void *old_obj, const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_pod *modified = new_obj;
	if (!modified)
		return SK_QUEUE;
	if (!pod->uid || !modified->uid || strcmp(pod->uid, modified->uid) != 0)
		return SK_QUEUE_SKIP;
	return tolerates_unschedulable(modified) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int node_unschedulable_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	int n = 0;
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_TAINT, "NodeAdd|UpdateNodeTaint" },
			.hint = node_unschedulable_hint_node,
		};
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_POD, SK_ACT_UPDATE_POD_TOLERATIONS, "UpdatePodToleration" },
			.hint = node_unschedulable_hint_pod_toleration,
		};
	return n;
}

const struct sk_plugin_desc sk_plugin_node_unschedulable = {
	SK_PLUGIN_HEADER,
	.name = "NodeUnschedulable",
	.filter = node_unschedulable_filter,
	.filter_batch = node_unschedulable_filter_batch,
	.events_to_register = node_unschedulable_events,
};
