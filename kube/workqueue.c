/* client-go style work queue: FIFO of ready keys with dirty/processing sets, a min-heap of
 * delayed keys served by timed waits in get(), and the default controller rate limiter
 * (per-key exponential backoff, max'ed with a token bucket). q->mu guards everything below it. */
#include "kube/workqueue.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/util.h"
#include "kube/metrics.h"

/* ---- string-keyed map (key -> int64) ---- */

struct smap_entry {
	struct smap_entry *next;
	uint64_t hash;
	int64_t val;
	char key[];
};

struct smap {
	struct smap_entry **buckets;
	size_t nbuckets, n;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static struct smap_entry **smap_slot(struct smap *m, const char *key, uint64_t h)
{
	if (!m->nbuckets)
		return NULL;
	struct smap_entry **pp = &m->buckets[h & (m->nbuckets - 1)];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0)
			return pp;
	return pp;
}

static bool smap_get(struct smap *m, const char *key, int64_t *val)
{
	struct smap_entry **pp = smap_slot(m, key, str_hash(key));
	if (!pp || !*pp)
		return false;
	if (val)
		*val = (*pp)->val;
	return true;
}

static int smap_grow(struct smap *m)
{
	size_t nb = m->nbuckets ? m->nbuckets * 2 : 16;
	struct smap_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return -1;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct smap_entry *e = m->buckets[i];
		while (e) {
			struct smap_entry *next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
	return 0;
}

static int smap_put(struct smap *m, const char *key, int64_t val)
{
	uint64_t h = str_hash(key);
	struct smap_entry **pp = smap_slot(m, key, h);
	if (pp && *pp) {
		(*pp)->val = val;
		return 0;
	}
	if (m->n + 1 > m->nbuckets * 3 / 4) {
		if (smap_grow(m) != 0)
			return -1;
		pp = smap_slot(m, key, h);
	}
	size_t len = strlen(key);
	struct smap_entry *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -1;
	e->next = NULL;
	e->hash = h;
	e->val = val;
	memcpy(e->key, key, len + 1);
	*pp = e;
	m->n++;
	return 0;
}

static bool smap_del(struct smap *m, const char *key)
{
	struct smap_entry **pp = smap_slot(m, key, str_hash(key));
	if (!pp || !*pp)
		return false;
	struct smap_entry *e = *pp;
	*pp = e->next;
	free(e);
	m->n--;
	return true;
}

static void smap_clear(struct smap *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct smap_entry *e = m->buckets[i];
		while (e) {
			struct smap_entry *next = e->next;
			free(e);
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = NULL;
	m->nbuckets = m->n = 0;
}

/* ---- the queue ---- */

struct waiting_entry {
	int64_t ready_ns;
	uint64_t seq;
	char *key;
};

struct kube_workqueue {
	char *name;
	struct kube_workqueue_clock clock;
	int64_t base_delay_ns, max_delay_ns;
	double qps;
	int burst;

	pthread_mutex_t mu;
	pthread_cond_t cond; /* signalled on add, done-requeue, shutdown, wake */
	/* Everything below is guarded by mu. */
	char **ring; /* ready keys, FIFO */
	size_t ring_cap, ring_head, ring_len;
	struct smap dirty;      /* keys that need processing -> time they were added */
	struct smap processing; /* keys handed out by get, not yet done -> time processing began */
	struct smap failures;   /* key -> failure count (exponential backoff) */
	struct smap waiting;    /* key -> earliest ready time among its heap entries */
	struct waiting_entry *heap;
	size_t heap_len, heap_cap;
	uint64_t seq;
	double tokens; /* token bucket */
	int64_t tokens_last_ns;
	bool shutting_down;
	/* Optional metrics (NULL series are no-ops). */
	struct kube_metric_series *m_depth, *m_adds, *m_retries, *m_queue_dur, *m_work_dur;
};

static int64_t mono_now_ns(void *ctx)
{
	(void)ctx;
	return kube_mono_ns();
}

static const char *qname(const struct kube_workqueue *q)
{
	return q->name ? q->name : "";
}

/* client-go's workqueue metric names and buckets (ExponentialBuckets(10e-9, 10, 10)). */
static void register_metrics(struct kube_workqueue *q, struct kube_metrics_registry *reg, const char *name)
{
	const char *const *label = KUBE_LABELS("name");
	const char *const *value = KUBE_LABELS(name);
	double buckets[10];
	kube_exponential_buckets(10e-9, 10, 10, buckets);
	q->m_depth = kube_metric_with(kube_gauge_new(reg, "workqueue_depth", "Current depth of workqueue", 1, label),
				      value);
	q->m_adds = kube_metric_with(
		kube_counter_new(reg, "workqueue_adds_total", "Total number of adds handled by workqueue", 1, label),
		value);
	q->m_retries = kube_metric_with(
		kube_counter_new(reg, "workqueue_retries_total", "Total number of retries handled by workqueue", 1, label),
		value);
	q->m_queue_dur = kube_metric_with(
		kube_histogram_new(reg, "workqueue_queue_duration_seconds",
				   "How long in seconds an item stays in workqueue before being requested.", 1, label,
				   buckets, 10),
		value);
	q->m_work_dur = kube_metric_with(kube_histogram_new(reg, "workqueue_work_duration_seconds",
							    "How long in seconds processing an item from workqueue takes.",
							    1, label, buckets, 10),
					 value);
}

struct kube_workqueue *kube_workqueue_new(const struct kube_workqueue_opts *opts)
{
	struct kube_workqueue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	struct kube_workqueue_opts o = opts ? *opts : (struct kube_workqueue_opts){0};
	if (o.name && !(q->name = strdup(o.name))) {
		free(q);
		return NULL;
	}
	q->clock = o.clock ? *o.clock : (struct kube_workqueue_clock){mono_now_ns, NULL};
	if (!q->clock.now_ns)
		q->clock.now_ns = mono_now_ns;
	q->base_delay_ns = o.base_delay_ns > 0 ? o.base_delay_ns : 5000000LL;
	q->max_delay_ns = o.max_delay_ns > 0 ? o.max_delay_ns : 1000LL * 1000000000LL;
	q->qps = o.qps == 0 ? 10 : o.qps;
	q->burst = o.burst > 0 ? o.burst : 100;
	q->tokens = q->burst;
	q->tokens_last_ns = q->clock.now_ns(q->clock.ctx);
	if (o.metrics)
		register_metrics(q, o.metrics, o.name ? o.name : "");
	pthread_mutex_init(&q->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

static void drop_waiting_locked(struct kube_workqueue *q)
{
	for (size_t i = 0; i < q->heap_len; i++)
		free(q->heap[i].key);
	q->heap_len = 0;
	smap_clear(&q->waiting);
}

void kube_workqueue_free(struct kube_workqueue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->ring_len; i++)
		free(q->ring[(q->ring_head + i) % q->ring_cap]);
	free(q->ring);
	drop_waiting_locked(q);
	free(q->heap);
	smap_clear(&q->dirty);
	smap_clear(&q->processing);
	smap_clear(&q->failures);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mu);
	free(q->name);
	free(q);
}

static int ring_push_locked(struct kube_workqueue *q, const char *key)
{
	if (q->ring_len == q->ring_cap) {
		size_t cap = q->ring_cap ? q->ring_cap * 2 : 16;
		char **r = malloc(cap * sizeof(*r));
		if (!r)
			return -1;
		for (size_t i = 0; i < q->ring_len; i++)
			r[i] = q->ring[(q->ring_head + i) % q->ring_cap];
		free(q->ring);
		q->ring = r;
		q->ring_cap = cap;
		q->ring_head = 0;
	}
	char *copy = strdup(key);
	if (!copy)
		return -1;
	q->ring[(q->ring_head + q->ring_len) % q->ring_cap] = copy;
	q->ring_len++;
	return 0;
}

static void add_locked(struct kube_workqueue *q, const char *key)
{
	if (q->shutting_down || smap_get(&q->dirty, key, NULL))
		return;
	int64_t now = q->clock.now_ns(q->clock.ctx);
	if (smap_put(&q->dirty, key, now) != 0)
		goto oom;
	kube_series_add(q->m_adds, 1);
	kube_series_gauge_add(q->m_depth, 1);
	if (smap_get(&q->processing, key, NULL))
		return; /* queued again by done() */
	if (ring_push_locked(q, key) != 0) {
		smap_del(&q->dirty, key);
		kube_series_gauge_add(q->m_depth, -1);
		goto oom;
	}
	pthread_cond_signal(&q->cond);
	return;
oom:
	klog_error("Out of memory adding to work queue; key dropped", " queue=\"%s\" key=\"%s\"", qname(q), key);
}

void kube_workqueue_add(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return;
	pthread_mutex_lock(&q->mu);
	add_locked(q, key);
	pthread_mutex_unlock(&q->mu);
}

static bool heap_less(const struct waiting_entry *a, const struct waiting_entry *b)
{
	return a->ready_ns < b->ready_ns || (a->ready_ns == b->ready_ns && a->seq < b->seq);
}

static void heap_pop_locked(struct kube_workqueue *q)
{
	q->heap[0] = q->heap[--q->heap_len];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < q->heap_len && heap_less(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->heap_len && heap_less(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		struct waiting_entry t = q->heap[i];
		q->heap[i] = q->heap[m];
		q->heap[m] = t;
		i = m;
	}
}

static int heap_push_locked(struct kube_workqueue *q, const char *key, int64_t ready_ns)
{
	if (q->heap_len == q->heap_cap) {
		size_t cap = q->heap_cap ? q->heap_cap * 2 : 16;
		struct waiting_entry *h = realloc(q->heap, cap * sizeof(*h));
		if (!h)
			return -1;
		q->heap = h;
		q->heap_cap = cap;
	}
	char *copy = strdup(key);
	if (!copy)
		return -1;
	size_t i = q->heap_len++;
	q->heap[i] = (struct waiting_entry){ready_ns, q->seq++, copy};
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!heap_less(&q->heap[i], &q->heap[p]))
			break;
		struct waiting_entry t = q->heap[i];
		q->heap[i] = q->heap[p];
		q->heap[p] = t;
		i = p;
	}
	return 0;
}

/* Moves every delayed key whose time has come to the ready queue. Heap entries whose time no
 * longer matches the waiting map are stale (the key was moved earlier) and are dropped. */
static void promote_due_locked(struct kube_workqueue *q)
{
	if (!q->heap_len)
		return;
	int64_t now = q->clock.now_ns(q->clock.ctx);
	while (q->heap_len && q->heap[0].ready_ns <= now) {
		struct waiting_entry e = q->heap[0];
		heap_pop_locked(q);
		int64_t want;
		if (smap_get(&q->waiting, e.key, &want) && want == e.ready_ns) {
			smap_del(&q->waiting, e.key);
			add_locked(q, e.key);
		}
		free(e.key);
	}
}

void kube_workqueue_add_after(struct kube_workqueue *q, const char *key, int64_t delay_ns)
{
	if (!q || !key)
		return;
	pthread_mutex_lock(&q->mu);
	if (q->shutting_down) {
		pthread_mutex_unlock(&q->mu);
		return;
	}
	kube_series_add(q->m_retries, 1); /* client-go counts every AddAfter as a retry */
	if (delay_ns <= 0) {
		add_locked(q, key);
		pthread_mutex_unlock(&q->mu);
		return;
	}
	int64_t ready = q->clock.now_ns(q->clock.ctx) + delay_ns;
	int64_t cur;
	bool have = smap_get(&q->waiting, key, &cur);
	if (!have || ready < cur) {
		if (smap_put(&q->waiting, key, ready) != 0 || heap_push_locked(q, key, ready) != 0) {
			if (!have)
				smap_del(&q->waiting, key);
			else
				smap_put(&q->waiting, key, cur);
			klog_error("Out of memory delaying work queue key; key dropped", " queue=\"%s\" key=\"%s\"",
				   qname(q), key);
		} else {
			/* A getter may be sleeping until a later deadline. */
			pthread_cond_broadcast(&q->cond);
		}
	}
	pthread_mutex_unlock(&q->mu);
}

static int64_t when_locked(struct kube_workqueue *q, const char *key)
{
	/* Per-key exponential failure backoff. */
	int64_t failures = 0;
	smap_get(&q->failures, key, &failures);
	if (smap_put(&q->failures, key, failures + 1) != 0)
		klog_error("Out of memory counting work queue failures", " queue=\"%s\" key=\"%s\"", qname(q), key);
	double backoff = (double)q->base_delay_ns * pow(2, (double)failures);
	int64_t exp_delay = backoff >= (double)q->max_delay_ns ? q->max_delay_ns : (int64_t)backoff;

	/* Overall token bucket (golang.org/x/time/rate Reserve: always takes a token, the delay is
	 * the time until the balance is back to zero). */
	int64_t bucket_delay = 0;
	if (q->qps > 0) {
		int64_t now = q->clock.now_ns(q->clock.ctx);
		int64_t last = q->tokens_last_ns < now ? q->tokens_last_ns : now;
		double tokens = q->tokens + (double)(now - last) / 1e9 * q->qps;
		if (tokens > q->burst)
			tokens = q->burst;
		tokens -= 1;
		if (tokens < 0)
			bucket_delay = (int64_t)(-tokens / q->qps * 1e9);
		q->tokens = tokens;
		q->tokens_last_ns = now;
	}
	return exp_delay > bucket_delay ? exp_delay : bucket_delay;
}

int64_t kube_workqueue_when(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return 0;
	pthread_mutex_lock(&q->mu);
	int64_t d = when_locked(q, key);
	pthread_mutex_unlock(&q->mu);
	return d;
}

void kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return;
	kube_workqueue_add_after(q, key, kube_workqueue_when(q, key));
}

void kube_workqueue_forget(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return;
	pthread_mutex_lock(&q->mu);
	smap_del(&q->failures, key);
	pthread_mutex_unlock(&q->mu);
}

int kube_workqueue_num_requeues(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return 0;
	int64_t n = 0;
	pthread_mutex_lock(&q->mu);
	smap_get(&q->failures, key, &n);
	pthread_mutex_unlock(&q->mu);
	return (int)n;
}

static void abs_deadline(struct timespec *ts, int64_t in_ns)
{
	int64_t t = mono_now_ns(NULL) + in_ns;
	ts->tv_sec = (time_t)(t / 1000000000LL);
	ts->tv_nsec = (long)(t % 1000000000LL);
}

char *kube_workqueue_get_timeout(struct kube_workqueue *q, int64_t timeout_ns, bool *shutdown)
{
	if (shutdown)
		*shutdown = false;
	if (!q)
		return NULL;
	int64_t give_up = timeout_ns >= 0 ? mono_now_ns(NULL) + timeout_ns : INT64_MAX;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		promote_due_locked(q);
		if (q->ring_len) {
			char *key = q->ring[q->ring_head];
			q->ring_head = (q->ring_head + 1) % q->ring_cap;
			q->ring_len--;
			int64_t now = q->clock.now_ns(q->clock.ctx), added = now;
			smap_get(&q->dirty, key, &added);
			if (smap_put(&q->processing, key, now) != 0)
				klog_error("Out of memory tracking processing key", " queue=\"%s\" key=\"%s\"", qname(q),
					   key);
			smap_del(&q->dirty, key);
			kube_series_gauge_add(q->m_depth, -1);
			kube_series_observe(q->m_queue_dur, (double)(now - added) / 1e9);
			pthread_mutex_unlock(&q->mu);
			return key;
		}
		if (q->shutting_down) {
			if (shutdown)
				*shutdown = true;
			break;
		}
		int64_t real_now = mono_now_ns(NULL);
		if (real_now >= give_up)
			break;
		int64_t wait = give_up == INT64_MAX ? -1 : give_up - real_now;
		if (q->heap_len) {
			int64_t until = q->heap[0].ready_ns - q->clock.now_ns(q->clock.ctx);
			if (until < 1000000)
				until = 1000000; /* at least 1 ms: a fake clock may never reach it */
			if (wait < 0 || until < wait)
				wait = until;
		}
		if (wait < 0) {
			pthread_cond_wait(&q->cond, &q->mu);
		} else {
			struct timespec ts;
			abs_deadline(&ts, wait);
			int rc = pthread_cond_timedwait(&q->cond, &q->mu, &ts);
			(void)rc; /* ETIMEDOUT or a wake-up: either way re-check */
		}
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

char *kube_workqueue_get(struct kube_workqueue *q)
{
	return kube_workqueue_get_timeout(q, -1, NULL);
}

void kube_workqueue_done(struct kube_workqueue *q, const char *key)
{
	if (!q || !key)
		return;
	pthread_mutex_lock(&q->mu);
	int64_t started;
	/* A key that was not handed out is ignored: re-queueing it would queue it twice. */
	if (!smap_get(&q->processing, key, &started)) {
		pthread_mutex_unlock(&q->mu);
		return;
	}
	kube_series_observe(q->m_work_dur, (double)(q->clock.now_ns(q->clock.ctx) - started) / 1e9);
	smap_del(&q->processing, key);
	if (smap_get(&q->dirty, key, NULL)) {
		if (ring_push_locked(q, key) != 0) {
			smap_del(&q->dirty, key);
			kube_series_gauge_add(q->m_depth, -1);
			klog_error("Out of memory re-queueing key; key dropped", " queue=\"%s\" key=\"%s\"", qname(q),
				   key);
		} else {
			pthread_cond_signal(&q->cond);
		}
	}
	pthread_mutex_unlock(&q->mu);
}

int kube_workqueue_len(struct kube_workqueue *q)
{
	if (!q)
		return 0;
	pthread_mutex_lock(&q->mu);
	promote_due_locked(q);
	int n = (int)q->ring_len;
	pthread_mutex_unlock(&q->mu);
	return n;
}

void kube_workqueue_shut_down(struct kube_workqueue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->shutting_down = true;
	drop_waiting_locked(q);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mu);
}

bool kube_workqueue_shutting_down(struct kube_workqueue *q)
{
	if (!q)
		return true;
	pthread_mutex_lock(&q->mu);
	bool s = q->shutting_down;
	pthread_mutex_unlock(&q->mu);
	return s;
}

void kube_workqueue_wake(struct kube_workqueue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mu);
}
