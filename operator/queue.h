/* The operator's reconcile queue: kube/workqueue.h with the operator's policy fixed in one place
 * (client-go's DefaultControllerRateLimiter, metrics labelled by queue name). Same semantics as
 * kube_workqueue_*; thread-safe. */
#ifndef OP_QUEUE_H
#define OP_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

struct op_queue;
struct kube_metrics_registry;

/* Rate limiting as client-go's DefaultControllerRateLimiter; workqueue metrics labelled
 * name=<name> when metrics is non-NULL. NULL on OOM. */
struct op_queue *op_queue_new(const char *name, struct kube_metrics_registry *metrics);
void op_queue_free(struct op_queue *q); /* NULL is a no-op; no thread may be in get */
void op_queue_add(struct op_queue *q, const char *key);
void op_queue_add_rate_limited(struct op_queue *q, const char *key);
void op_queue_add_after(struct op_queue *q, const char *key, int64_t delay_ns);
void op_queue_forget(struct op_queue *q, const char *key);
/* Blocks up to timeout_ns; NULL on timeout or shutdown (*shutdown says which). Caller frees and
 * calls op_queue_done. */
char *op_queue_get(struct op_queue *q, int64_t timeout_ns, bool *shutdown);
void op_queue_done(struct op_queue *q, const char *key);
int op_queue_num_requeues(struct op_queue *q, const char *key);
void op_queue_shut_down(struct op_queue *q);

#endif
