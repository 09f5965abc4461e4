/* A client-go style rate-limited work queue of string keys (the operator's reconcile queue).
 *
 * Semantics (as k8s.io/client-go/util/workqueue):
 *  - add: a key that is already queued is not queued twice ("dirty" set); a key that is being
 *    processed (handed out by get, not yet done) and is added again is queued once, when done()
 *    is called for it. So one key is never processed by two workers at once.
 *  - add_after(delay): the key becomes ready after delay; a key already waiting keeps the earlier
 *    of its two ready times.
 *  - add_rate_limited: add_after(when(key)), where when() is the maximum of a per-key exponential
 *    failure backoff (base * 2^failures, capped; 5 ms and 1000 s by default) and an overall token
 *    bucket (10 qps, burst 100 by default): client-go's DefaultControllerRateLimiter.
 *  - forget clears a key's failure count; num_requeues reports it.
 *  - shut_down: further adds are ignored, waiting (delayed) keys are dropped, getters wake;
 *    get keeps handing out already queued keys and returns NULL once the queue is empty.
 *
 * Delays are served with timed waits inside get() (no extra thread). Time comes from an
 * injectable clock; with a fake clock, call kube_workqueue_wake() after moving it so blocked
 * getters re-check, and len()/get() promote keys whose time has come.
 *
 * Threads: every function is thread-safe; one mutex guards the whole queue state (metrics are
 * updated under it too, with the metrics module's own atomics). */
#ifndef KUBE_WORKQUEUE_H
#define KUBE_WORKQUEUE_H

#include <stdbool.h>
#include <stdint.h>

struct kube_workqueue;
struct kube_metrics_registry;

/* Monotonic nanoseconds. */
struct kube_workqueue_clock {
	int64_t (*now_ns)(void *ctx);
	void *ctx;
};

struct kube_workqueue_opts {
	const char *name;           /* for logs; may be NULL */
	const struct kube_workqueue_clock *clock; /* NULL: CLOCK_MONOTONIC. Copied. */
	int64_t base_delay_ns;      /* 0: 5 ms */
	int64_t max_delay_ns;       /* 0: 1000 s */
	double qps;                 /* 0: 10; < 0 disables the token bucket */
	int burst;                  /* 0: 100 */
	/* Optional: client-go's workqueue metrics, labelled name=<name>: workqueue_depth,
	 * workqueue_adds_total, workqueue_retries_total, workqueue_queue_duration_seconds,
	 * workqueue_work_duration_seconds. The registry must outlive the queue. */
	struct kube_metrics_registry *metrics;
};

/* opts may be NULL (all defaults). Returns NULL on allocation failure. */
struct kube_workqueue *kube_workqueue_new(const struct kube_workqueue_opts *opts);
/* Shuts down if needed and frees every key. No thread may be inside get() any more (join your
 * workers after kube_workqueue_shut_down first). NULL is a no-op. */
void kube_workqueue_free(struct kube_workqueue *q);

void kube_workqueue_add(struct kube_workqueue *q, const char *key);
void kube_workqueue_add_after(struct kube_workqueue *q, const char *key, int64_t delay_ns);
void kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key);

/* Blocks until a key is ready or the queue is shut down and empty (then returns NULL).
 * Returns a copy the caller frees with free(); pass it to kube_workqueue_done() when finished. */
char *kube_workqueue_get(struct kube_workqueue *q);
/* Like get, but gives up after timeout_ns (returns NULL; *shutdown tells why, if non-NULL). */
char *kube_workqueue_get_timeout(struct kube_workqueue *q, int64_t timeout_ns, bool *shutdown);
void kube_workqueue_done(struct kube_workqueue *q, const char *key);

void kube_workqueue_forget(struct kube_workqueue *q, const char *key);
int kube_workqueue_num_requeues(struct kube_workqueue *q, const char *key);
/* The delay add_rate_limited would use now, consuming it exactly as add_rate_limited does
 * (bumps the failure count, takes a token). Exposed for tests and for callers that schedule. */
int64_t kube_workqueue_when(struct kube_workqueue *q, const char *key);

/* Keys ready to be handed out (delayed keys not counted until their time has come). */
int kube_workqueue_len(struct kube_workqueue *q);
void kube_workqueue_shut_down(struct kube_workqueue *q);
bool kube_workqueue_shutting_down(struct kube_workqueue *q);
/* Wakes blocked getters so they re-read the clock (for fake clocks). */
void kube_workqueue_wake(struct kube_workqueue *q);

#endif
