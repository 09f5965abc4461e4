/* op_queue: kube_workqueue behind the operator's own names (see queue.h for why). */
#include "operator/queue.h"

#include "kube/workqueue.h"

struct op_queue *op_queue_new(const char *name, struct kube_metrics_registry *metrics)
{
	struct kube_workqueue_opts o = { .name = name, .metrics = metrics };
	return (struct op_queue *)kube_workqueue_new(&o);
}

void op_queue_free(struct op_queue *q)
{
	kube_workqueue_free((struct kube_workqueue *)q);
}

void op_queue_add(struct op_queue *q, const char *key)
{
	kube_workqueue_add((struct kube_workqueue *)q, key);
}

void op_queue_add_rate_limited(struct op_queue *q, const char *key)
{
	kube_workqueue_add_rate_limited((struct kube_workqueue *)q, key);
}

void op_queue_add_after(struct op_queue *q, const char *key, int64_t delay_ns)
{
	kube_workqueue_add_after((struct kube_workqueue *)q, key, delay_ns);
}

void op_queue_forget(struct op_queue *q, const char *key)
{
	kube_workqueue_forget((struct kube_workqueue *)q, key);
}

char *op_queue_get(struct op_queue *q, int64_t timeout_ns, bool *shutdown)
{
	return kube_workqueue_get_timeout((struct kube_workqueue *)q, timeout_ns, shutdown);
}

void op_queue_done(struct op_queue *q, const char *key)
{
	kube_workqueue_done((struct kube_workqueue *)q, key);
}

int op_queue_num_requeues(struct op_queue *q, const char *key)
{
	return kube_workqueue_num_requeues((struct kube_workqueue *)q, key);
}

void op_queue_shut_down(struct op_queue *q)
{
	kube_workqueue_shut_down((struct kube_workqueue *)q);
}
