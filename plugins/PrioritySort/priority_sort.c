/* PrioritySort (QueueSort): higher spec.priority first, then the earlier queue timestamp
 * (pkg/scheduler/framework/plugins/queuesort/priority_sort.go). */
#include "schedkit/plugin.h"

static bool priority_sort_less(struct sk_plugin *self, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)self;
	int32_t pa = a->pod->priority, pb = b->pod->priority;
	return pa > pb || (pa == pb && a->timestamp_ns < b->timestamp_ns);
}

const struct sk_plugin_desc sk_plugin_priority_sort = {
	SK_PLUGIN_HEADER,
	.name = "PrioritySort",
	.less = priority_sort_less,
};
