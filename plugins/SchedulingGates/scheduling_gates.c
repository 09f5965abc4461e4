/* SchedulingGates (PreEnqueue): a pod with spec.schedulingGates stays out of activeQ until the
 * gates are removed (pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go). */
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"

static struct sk_status gates_pre_enqueue(struct sk_plugin *self, const struct sk_pod *pod)
{
	(void)self;
	if (pod->nscheduling_gates == 0)
		return sk_ok();
	/* Go %v of a []string: "[g1 g2]". */
	size_t len = 3;
	for (int i = 0; i < pod->nscheduling_gates; i++)
		len += strlen(pod->scheduling_gates[i]) + 1;
	char *list = malloc(len);
	if (!list)
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates");
	char *p = list;
	*p++ = '[';
	for (int i = 0; i < pod->nscheduling_gates; i++) {
		size_t l = strlen(pod->scheduling_gates[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, pod->scheduling_gates[i], l);
		p += l;
	}
	*p++ = ']';
	*p = '\0';
	struct sk_status s = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: %s", list);
	free(list);
	return s;
}

/* A pod update that removed every gate retries the pod; other pods' updates never do. */
static enum sk_hint gates_hint_gates_eliminated(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
						const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_pod *modified = new_obj;
	if (!modified || !pod->uid || !modified->uid)
		return SK_QUEUE;
	return strcmp(modified->uid, pod->uid) == 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int gates_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 1)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_POD, SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "PodSchedulingGatesEliminated" },
		.hint = gates_hint_gates_eliminated,
	};
	return 1;
}

const struct sk_plugin_desc sk_plugin_scheduling_gates = {
	SK_PLUGIN_HEADER,
	.name = "SchedulingGates",
	.pre_enqueue = gates_pre_enqueue,
	.events_to_register = gates_events,
};
