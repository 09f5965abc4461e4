/* NodePorts (PreFilter, Filter): a pod's host ports must be free on the node (pkg/scheduler/framework/plugins/nodeports/node_ports.go).
 * PreFilter records the wanted ports in CycleState (a borrowed pointer to the pod, which outlives
 * the cycle); Filter without that state is an Error, as upstream. */
#include <string.h>

#include "schedkit/plugin.h"

#define ERR_REASON_PORTS "node(s) didn't have free ports for the requested pod ports"

static void no_free(void *p) { (void)p; }
static const struct sk_state_ops borrowed_ops = { .free = no_free, .clone = NULL };

static bool is_any_ip(const char *ip)
{
	return !ip || !*ip || strcmp(ip, "0.0.0.0") == 0;
}

/* HostPortInfo.CheckConflict: same protocol and port, and IPs equal or either is 0.0.0.0. */
static bool port_conflicts(const struct sk_host_port *want, const char *used_ip, enum sk_protocol used_proto,
			   int32_t used_port)
{
	if (want->port <= 0 || want->protocol != used_proto || want->port != used_port)
		return false;
	if (is_any_ip(want->host_ip) || is_any_ip(used_ip))
		return true;
	return strcmp(want->host_ip, used_ip) == 0;
}

static bool fits_ports(const struct sk_pod *pod, const struct sk_node_info *ni)
{
	for (int i = 0; i < pod->nhost_ports; i++)
		for (int j = 0; j < ni->nused_ports; j++)
			if (port_conflicts(&pod->host_ports[i], ni->used_ports[j].host_ip, ni->used_ports[j].protocol,
					   ni->used_ports[j].port))
				return false;
	return true;
}

static struct sk_status ports_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					 struct sk_prefilter_result *result)
{
	(void)result;
	if (pod->nhost_ports == 0)
		return sk_status(SK_SKIP, NULL);
	sk_cycle_state_put(cs, self->slot, (void *)pod, &borrowed_ops);
	return sk_ok();
}

static struct sk_status ports_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *ni)
{
	(void)pod;
	const struct sk_pod *wanted = sk_cycle_state_get(cs, self->slot);
	if (!wanted)
		return sk_status(SK_ERROR, "reading \"PreFilterNodePorts\" from cycleState: not found");
	if (!fits_ports(wanted, ni))
		return sk_status(SK_UNSCHEDULABLE, ERR_REASON_PORTS);
	return sk_ok();
}

/* A deleted pod helps only if it was placed (or nominated) and held a port this pod wants. */
static enum sk_hint ports_hint_pod_deleted(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					   const void *new_obj)
{
	(void)self;
	(void)new_obj;
	const struct sk_pod *deleted = old_obj;
	if (!deleted)
		return SK_QUEUE;
	if (!deleted->node_name && !deleted->nominated_node_name)
		return SK_QUEUE_SKIP;
	for (int i = 0; i < pod->nhost_ports; i++)
		for (int j = 0; j < deleted->nhost_ports; j++)
			if (port_conflicts(&pod->host_ports[i], deleted->host_ports[j].host_ip,
					   deleted->host_ports[j].protocol, deleted->host_ports[j].port))
				return SK_QUEUE;
	return SK_QUEUE_SKIP;
}

static int ports_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	int n = 0;
	if (n < max)
		out[n++] = (struct sk_event_registration){ .event = { SK_EV_POD, SK_ACT_DELETE, "PodDelete" },
							   .hint = ports_hint_pod_deleted };
	/* A new node has no pods yet, so it always has the ports free. */
	if (n < max)
		out[n++] = (struct sk_event_registration){ .event = { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" }, .hint = NULL };
	return n;
}

const struct sk_plugin_desc sk_plugin_node_ports = {
	SK_PLUGIN_HEADER,
	.name = "NodePorts",
	.pre_filter = ports_pre_filter,
	.filter = ports_filter,
	.events_to_register = ports_events,
};
