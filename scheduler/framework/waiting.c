/* Permit's waiting pods (see waiting.h). Entries are kept in an array (waiting pods are few: only
 * pods some Permit plugin holds back); each has per-plugin deadlines on CLOCK_MONOTONIC. The first
 * Reject or expired deadline decides; Allow by every pending plugin lets the pod through. */
#include "scheduler/framework/waiting.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/framework/runtime.h"
#include "kube/util.h"

#define MAX_WAIT_PLUGINS 16

struct waiter {
	struct sk_pod *pod;
	int n;
	const char *plugins[MAX_WAIT_PLUGINS];
	int64_t timeout_ms[MAX_WAIT_PLUGINS];
	int64_t deadline_ns[MAX_WAIT_PLUGINS];
	bool pending[MAX_WAIT_PLUGINS];
	bool done;
	struct sk_status result;
	pthread_cond_t cv;
};

struct sk_waiting_pods {
	pthread_mutex_t mu;
	pthread_cond_t idle_cv; /* signalled when blocked drops to 0 */
	int blocked;
	int n, cap;
	struct waiter **items;
};

struct sk_waiting_pods *sk_waiting_new(void)
{
	struct sk_waiting_pods *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->idle_cv, NULL);
	return w;
}

static void waiter_free(struct waiter *e)
{
	sk_pod_unref(e->pod);
	sk_status_reset(&e->result);
	pthread_cond_destroy(&e->cv);
	free(e);
}

static int find_locked(struct sk_waiting_pods *w, const char *uid)
{
	for (int i = 0; i < w->n; i++)
		if (strcmp(w->items[i]->pod->uid, uid) == 0)
			return i;
	return -1;
}

static void remove_at_locked(struct sk_waiting_pods *w, int i)
{
	memmove(&w->items[i], &w->items[i + 1], (size_t)(w->n - i - 1) * sizeof(w->items[0]));
	w->n--;
}

static void finish_locked(struct waiter *e, struct sk_status st)
{
	if (e->done) {
		sk_status_reset(&st);
		return;
	}
	e->done = true;
	e->result = st;
	pthread_cond_broadcast(&e->cv);
}

void sk_waiting_free(struct sk_waiting_pods *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	for (int i = 0; i < w->n; i++) {
		struct sk_status st = sk_status(SK_UNSCHEDULABLE, "scheduler is shutting down");
		finish_locked(w->items[i], st);
	}
	while (w->blocked > 0)
		pthread_cond_wait(&w->idle_cv, &w->mu);
	for (int i = 0; i < w->n; i++)
		waiter_free(w->items[i]);
	pthread_mutex_unlock(&w->mu);
	free(w->items);
	pthread_cond_destroy(&w->idle_cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

int sk_waiting_add(struct sk_waiting_pods *w, struct sk_pod *pod, const char *const *plugins,
		   const int64_t *timeouts_ms, int n)
{
	if (n < 1 || n > MAX_WAIT_PLUGINS)
		return -1;
	struct waiter *e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cv, &ca);
	pthread_condattr_destroy(&ca);
	int64_t now = kube_mono_ns();
	e->n = n;
	for (int i = 0; i < n; i++) {
		e->plugins[i] = plugins[i];
		e->timeout_ms[i] = timeouts_ms[i];
		e->deadline_ns[i] = now + timeouts_ms[i] * 1000000LL;
		e->pending[i] = true;
	}
	pthread_mutex_lock(&w->mu);
	if (find_locked(w, pod->uid) >= 0) {
		pthread_mutex_unlock(&w->mu);
		pthread_cond_destroy(&e->cv);
		free(e);
		return -1;
	}
	if (w->n == w->cap) {
		int cap = w->cap ? w->cap * 2 : 8;
		struct waiter **items = realloc(w->items, (size_t)cap * sizeof(*items));
		if (!items) {
			pthread_mutex_unlock(&w->mu);
			pthread_cond_destroy(&e->cv);
			free(e);
			return -1;
		}
		w->items = items;
		w->cap = cap;
	}
	e->pod = sk_pod_ref(pod);
	w->items[w->n++] = e;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* Rejects e for the first pending plugin whose deadline passed; returns whether it did. */
static bool expire_locked(struct waiter *e, int64_t now)
{
	for (int i = 0; i < e->n; i++) {
		if (e->pending[i] && now >= e->deadline_ns[i]) {
			char d[KUBE_DURATION_BUF];
			/* a timeout that is not positive reads "0s" (Go would print "-1s") */
			kube_duration_format_ms(e->timeout_ms[i] > 0 ? e->timeout_ms[i] : 0, d, sizeof(d));
			struct sk_status st =
				sk_statusf(SK_UNSCHEDULABLE, "rejected due to timeout after waiting %s at plugin %s", d,
					   e->plugins[i]);
			st.plugin = e->plugins[i];
			finish_locked(e, st);
			return true;
		}
	}
	return false;
}

struct sk_status sk_waiting_wait(struct sk_waiting_pods *w, const char *uid)
{
	pthread_mutex_lock(&w->mu);
	int i = find_locked(w, uid);
	if (i < 0) {
		pthread_mutex_unlock(&w->mu);
		return sk_ok();
	}
	struct waiter *e = w->items[i];
	w->blocked++;
	while (!e->done) {
		int64_t now = kube_mono_ns();
		if (expire_locked(e, now))
			break;
		int64_t next = INT64_MAX;
		for (int k = 0; k < e->n; k++)
			if (e->pending[k] && e->deadline_ns[k] < next)
				next = e->deadline_ns[k];
		struct timespec ts = { .tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL };
		pthread_cond_timedwait(&e->cv, &w->mu, &ts);
	}
	struct sk_status st = e->result;
	e->result = sk_ok();
	i = find_locked(w, uid);
	if (i >= 0 && w->items[i] == e)
		remove_at_locked(w, i);
	if (--w->blocked == 0)
		pthread_cond_broadcast(&w->idle_cv);
	pthread_mutex_unlock(&w->mu);
	waiter_free(e);
	return st;
}

int sk_waiting_allow(struct sk_waiting_pods *w, const char *uid, const char *plugin)
{
	pthread_mutex_lock(&w->mu);
	int i = find_locked(w, uid);
	if (i < 0) {
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	struct waiter *e = w->items[i];
	bool left = false;
	for (int k = 0; k < e->n; k++) {
		if (e->pending[k] && strcmp(e->plugins[k], plugin) == 0)
			e->pending[k] = false;
		left |= e->pending[k];
	}
	if (!left)
		finish_locked(e, sk_ok());
	pthread_mutex_unlock(&w->mu);
	return 0;
}

int sk_waiting_reject(struct sk_waiting_pods *w, const char *uid, const char *plugin, const char *msg)
{
	pthread_mutex_lock(&w->mu);
	int i = find_locked(w, uid);
	if (i < 0) {
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	struct sk_status st = sk_statusf(SK_UNSCHEDULABLE, "%s", msg ? msg : "");
	st.plugin = plugin ? sk_intern(plugin) : NULL;
	finish_locked(w->items[i], st);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

bool sk_waiting_has(struct sk_waiting_pods *w, const char *uid)
{
	pthread_mutex_lock(&w->mu);
	bool has = find_locked(w, uid) >= 0;
	pthread_mutex_unlock(&w->mu);
	return has;
}

int sk_waiting_count(struct sk_waiting_pods *w)
{
	pthread_mutex_lock(&w->mu);
	int n = w->n;
	pthread_mutex_unlock(&w->mu);
	return n;
}

int sk_waiting_list(struct sk_waiting_pods *w, char **uids, int max)
{
	pthread_mutex_lock(&w->mu);
	int k = 0;
	for (int i = 0; i < w->n && k < max; i++) {
		uids[k] = strdup(w->items[i]->pod->uid);
		if (uids[k])
			k++;
	}
	pthread_mutex_unlock(&w->mu);
	return k;
}
