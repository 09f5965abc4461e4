/* NodeName (Filter): a pod that names a node in spec.nodeName fits only that node (pkg/scheduler/framework/plugins/nodename/node_name.go). */
#include <string.h>

#include "schedkit/plugin.h"

#define ERR_REASON_NODE_NAME "node(s) didn't match the requested node name"

static struct sk_status node_name_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					 const struct sk_node_info *ni)
{
	(void)self;
	(void)cs;
	if (!pod->node_name || !*pod->node_name)
		return sk_ok();
	if (!ni->node || strcmp(pod->node_name, ni->node->name) != 0)
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_NAME);
	return sk_ok();
}

/* node_name_filter over a run of nodes (filter_batch, docs/plugins.md "Batch filtering"): a pod
 * naming no node passes them all at once. */
static void node_name_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	(void)self;
	(void)cs;
	if (!pod->node_name || !*pod->node_name)
		return;
	for (int i = 0; i < n; i++) {
		if (ok[i] && (!nodes[i]->node || strcmp(pod->node_name, nodes[i]->node->name) != 0)) {
			ok[i] = 0;
			st[i] = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_NAME);
		}
	}
}

/* Only a node with the requested name (or any node, for a pod naming none) can help. */
static enum sk_hint node_name_hint_node_add(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					    const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_node *node = new_obj;
	if (!node || !pod->node_name || !*pod->node_name)
		return SK_QUEUE;
	return strcmp(node->name, pod->node_name) == 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int node_name_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 1)
		return 0;
	out[0] = (struct sk_event_registration){ .event = { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" },
						 .hint = node_name_hint_node_add };
	return 1;
}

const struct sk_plugin_desc sk_plugin_node_name = {
	SK_PLUGIN_HEADER,
	.name = "NodeName",
	.filter = node_name_filter,
	.filter_batch = node_name_filter_batch,
	.events_to_register = node_name_events,
};
