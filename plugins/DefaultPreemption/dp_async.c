/* See dp_async.h. One preemption is a job; the pool runs its tasks: START (clear the lower-priority
 * nominations, fan out), one task per victim but the last, and the last victim once the others are
 * done (upstream evicts all but the last in parallel, records the last in
 * lastVictimsPendingPreemption, then evicts it). The last victim is recorded before its eviction
 * starts, so a PreEnqueue that runs when its deletion arrives (before the job has left the
 * preempting set) lets the preemptor through.
 * Locking: a->mu guards the task list, the preempting set and the counters; no API call, handle
 * call or plugin callback runs under it. */
#include "dp_async.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/log.h"

#define NAME "DefaultPreemption"
#define NBUCKETS 1024
#define MAX_WORKERS 16

struct job {
	struct sk_pod *preemptor; /* one reference */
	const char *node;         /* interned */
	int nvictims;
	struct sk_pod **victims;  /* references; none already being deleted */
	char note[512];
	atomic_int pending;       /* victim tasks but the last not yet finished */
	atomic_bool failed;       /* a victim's eviction failed: the rest is cancelled */
	bool clear_failed;        /* clearing a nomination failed (reported, not fatal) */
};

struct task {
	struct job *job;
	int index;                /* -1: START; else a victim index below nvictims - 1 */
	struct task *next;
};

/* The preempting set: uid -> the last victim once its eviction started. */
struct entry {
	char *uid;
	struct sk_pod *last;      /* reference, or NULL */
	struct entry *next;
};

struct dp_async {
	struct sk_plugin *self;
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* a task was queued, or stop */
	pthread_cond_t idle_cv;   /* a job finished */
	struct task *head, *tail;
	struct entry *buckets[NBUCKETS];
	int jobs;                 /* in flight */
	int max_workers, nworkers;
	pthread_t workers[MAX_WORKERS];
	bool stop;
};

static size_t bucket_of(const char *uid)
{
	size_t h = 5381;
	for (; *uid; uid++)
		h = h * 33 + (unsigned char)*uid;
	return h % NBUCKETS;
}

static struct entry **entry_slot(struct dp_async *a, const char *uid)
{
	struct entry **e = &a->buckets[bucket_of(uid)];
	while (*e && strcmp((*e)->uid, uid) != 0)
		e = &(*e)->next;
	return e;
}

/* ---------- PreemptPod and the nominations (shared with the synchronous path) ---------- */

int dp_preempt_pod(struct sk_plugin *self, const struct sk_pod *pod, const char *node, const char *note,
		   const struct sk_pod *v, char **err)
{
	*err = NULL;
	if (sk_handle_is_waiting_pod(self->handle, v->uid) &&
	    sk_handle_reject_waiting_pod(self->handle, v->uid, NAME, "preempted") == 0) {
		klog_info(2, "Preemptor pod rejected a waiting pod", " preemptor=%s/%s waitingPod=%s/%s node=%s", pod->ns,
			  pod->name, v->ns, v->name, node);
	} else {
		int rc = sk_handle_preempt_victim(self->handle, pod, v, node, err);
		if (rc < 0) {
			if (!*err)
				*err = strdup("preempting a victim failed");
			return -1;
		}
		free(*err);
		*err = NULL;
		if (rc > 0) { /* already gone: nothing to report */
			klog_info(2, "Victim Pod is already deleted", " preemptor=%s/%s victim=%s/%s node=%s", pod->ns,
				  pod->name, v->ns, v->name, node);
			return 0;
		}
	}
	sk_handle_event(self->handle, v, "Normal", "Preempted", "Preempting", note);
	return 0;
}

int dp_clear_lower_nominated(struct sk_plugin *self, const struct sk_pod *pod, const char *node)
{
	struct sk_pod **nominated = NULL;
	int nn = sk_handle_nominated_pods(self->handle, node, &nominated), failures = 0;
	for (int i = 0; i < nn; i++) {
		struct sk_pod *np = nominated[i];
		if (np->priority < pod->priority && strcmp(np->uid, pod->uid) != 0) {
			char *err = NULL;
			if (sk_handle_clear_nominated(self->handle, np, &err) != 0) {
				klog_error("Cannot clear 'NominatedNodeName' field", " pod=%s/%s node=%s err=\"%s\"", np->ns,
					   np->name, node, err ? err : "");
				failures++;
			}
			free(err);
		}
		sk_pod_unref(np);
	}
	free(nominated);
	return failures;
}

/* ---------- the pool ---------- */

struct dp_async *dp_async_new(struct sk_plugin *self, int nworkers)
{
	struct dp_async *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->self = self;
	a->max_workers = nworkers < 1 ? 1 : nworkers > MAX_WORKERS ? MAX_WORKERS : nworkers;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	pthread_cond_init(&a->idle_cv, NULL);
	return a;
}

static void job_free(struct job *j)
{
	for (int i = 0; i < j->nvictims; i++)
		sk_pod_unref(j->victims[i]);
	free(j->victims);
	sk_pod_unref(j->preemptor);
	free(j);
}

/* Under a->mu. */
static void push_locked(struct dp_async *a, struct task *t)
{
	t->next = NULL;
	if (a->tail)
		a->tail->next = t;
	else
		a->head = t;
	a->tail = t;
	pthread_cond_signal(&a->cv);
}

static void preempt_or_fail(struct dp_async *a, struct job *j, int i)
{
	char *err = NULL;
	if (dp_preempt_pod(a->self, j->preemptor, j->node, j->note, j->victims[i], &err) != 0) {
		klog_error("Error occurred during async preemption", " preemptor=%s/%s victim=%s/%s node=%s err=\"%s\"",
			   j->preemptor->ns, j->preemptor->name, j->victims[i]->ns, j->victims[i]->name, j->node,
			   err ? err : "");
		atomic_store(&j->failed, true);
	}
	free(err);
}

/* The last victim (unless an earlier one failed), then the job leaves the preempting set; after
 * an error the preemptor is activated (it may otherwise sit in the unschedulable pool). */
static void finish_job(struct dp_async *a, struct job *j)
{
	int last = j->nvictims - 1;
	if (!atomic_load(&j->failed)) {
		pthread_mutex_lock(&a->mu);
		struct entry *e = *entry_slot(a, j->preemptor->uid);
		if (e && !e->last)
			e->last = sk_pod_ref(j->victims[last]);
		pthread_mutex_unlock(&a->mu);
		preempt_or_fail(a, j, last);
	}
	bool failed = atomic_load(&j->failed) || j->clear_failed;
	pthread_mutex_lock(&a->mu);
	struct entry **slot = entry_slot(a, j->preemptor->uid), *e = *slot;
	if (e) {
		*slot = e->next;
		sk_pod_unref(e->last);
		free(e->uid);
		free(e);
	}
	pthread_mutex_unlock(&a->mu);
	klog_info(2, "Async Preemption finished completely", " preemptor=%s/%s node=%s result=%s", j->preemptor->ns,
		  j->preemptor->name, j->node, failed ? "error" : "success");
	if (failed)
		sk_handle_activate_pod(a->self->handle, j->preemptor);
	job_free(j);
	pthread_mutex_lock(&a->mu);
	a->jobs--;
	pthread_cond_broadcast(&a->idle_cv);
	pthread_mutex_unlock(&a->mu);
}

static void run_task(struct dp_async *a, struct task *t)
{
	struct job *j = t->job;
	if (t->index < 0) {
		klog_info(2, "Start the preemption asynchronously", " preemptor=%s/%s node=%s numVictimsToDelete=%d",
			  j->preemptor->ns, j->preemptor->name, j->node, j->nvictims);
		/* an error here is reported, not fatal (upstream marks the result an error and goes on) */
		j->clear_failed = dp_clear_lower_nominated(a->self, j->preemptor, j->node) > 0;
		int others = j->nvictims - 1;
		if (others == 0) {
			free(t);
			finish_job(a, j);
			return;
		}
		atomic_store(&j->pending, others);
		/* this worker takes victim 0, the pool the others */
		pthread_mutex_lock(&a->mu);
		for (int i = 1; i < others; i++) {
			struct task *vt = calloc(1, sizeof(*vt));
			if (!vt) { /* ENOMEM: run them here */
				pthread_mutex_unlock(&a->mu);
				for (int k = i; k < others; k++) {
					if (!atomic_load(&j->failed))
						preempt_or_fail(a, j, k);
					atomic_fetch_sub(&j->pending, 1);
				}
				pthread_mutex_lock(&a->mu);
				break;
			}
			vt->job = j;
			vt->index = i;
			push_locked(a, vt);
		}
		pthread_mutex_unlock(&a->mu);
		t->index = 0;
	}
	if (!atomic_load(&j->failed)) /* upstream cancels what is left after the first error */
		preempt_or_fail(a, j, t->index);
	free(t);
	if (atomic_fetch_sub(&j->pending, 1) == 1)
		finish_job(a, j);
}

static void *worker_main(void *arg)
{
	struct dp_async *a = arg;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->head && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		struct task *t = a->head;
		if (!t) /* stop, nothing left */
			break;
		a->head = t->next;
		if (!a->head)
			a->tail = NULL;
		pthread_mutex_unlock(&a->mu);
		run_task(a, t);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

bool dp_async_wait_idle(struct dp_async *a)
{
	if (!a)
		return false;
	pthread_mutex_lock(&a->mu);
	bool busy = a->jobs > 0;
	while (a->jobs > 0)
		pthread_cond_wait(&a->idle_cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
	return busy;
}

void dp_async_free(struct dp_async *a)
{
	if (!a)
		return;
	dp_async_wait_idle(a);
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (int i = 0; i < a->nworkers; i++)
		pthread_join(a->workers[i], NULL);
	for (int b = 0; b < NBUCKETS; b++)
		for (struct entry *e = a->buckets[b], *n; e; e = n) {
			n = e->next;
			sk_pod_unref(e->last);
			free(e->uid);
			free(e);
		}
	pthread_cond_destroy(&a->cv);
	pthread_cond_destroy(&a->idle_cv);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* Under a->mu: one more worker while below the cap and every started one may be busy. */
static bool grow_locked(struct dp_async *a)
{
	if (a->nworkers >= a->max_workers || a->nworkers >= a->jobs * 2)
		return a->nworkers > 0;
	if (pthread_create(&a->workers[a->nworkers], NULL, worker_main, a) != 0)
		return a->nworkers > 0;
	a->nworkers++;
	return true;
}

static struct job *job_new(const struct sk_pod *preemptor, const struct sk_dp_candidate *c)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->victims = calloc((size_t)(c->nvictims ? c->nvictims : 1), sizeof(*j->victims));
	if (!j->victims) {
		free(j);
		return NULL;
	}
	j->preemptor = sk_pod_ref((struct sk_pod *)preemptor);
	j->node = c->node;
	snprintf(j->note, sizeof(j->note), "Preempted by pod %s on node %s", preemptor->uid ? preemptor->uid : "",
		 c->node);
	for (int i = 0; i < c->nvictims; i++) {
		struct sk_pod *v = c->victims[i].pod;
		if (v->terminating) { /* graceful deletion already started: no API call */
			klog_info(2, "Victim Pod is already being deleted, skipping the API call for it",
				  " preemptor=%s/%s node=%s victim=%s/%s", preemptor->ns, preemptor->name, c->node, v->ns,
				  v->name);
			continue;
		}
		j->victims[j->nvictims++] = sk_pod_ref(v);
	}
	atomic_init(&j->pending, 0);
	atomic_init(&j->failed, false);
	return j;
}

struct sk_status dp_async_start(struct dp_async *a, const struct sk_pod *preemptor, const struct sk_dp_candidate *c)
{
	if (!preemptor->uid)
		return sk_status(SK_ERROR, "preemption: preemptor without a uid");
	struct job *j = job_new(preemptor, c);
	if (!j)
		return sk_status(SK_ERROR, "preemption: out of memory");
	if (j->nvictims == 0) {
		job_free(j);
		return sk_ok();
	}
	struct task *t = calloc(1, sizeof(*t));
	struct entry *e = calloc(1, sizeof(*e));
	char *uid = strdup(preemptor->uid);
	if (!t || !e || !uid) {
		free(t);
		free(e);
		free(uid);
		job_free(j);
		return sk_status(SK_ERROR, "preemption: out of memory");
	}
	t->job = j;
	t->index = -1;
	for (int i = 0; i < j->nvictims; i++) /* the attempt's record names them now; the workers evict */
		sk_handle_record_victim(a->self->handle, j->victims[i]);
	pthread_mutex_lock(&a->mu);
	struct entry **slot = entry_slot(a, uid);
	bool inserted = !*slot; /* else a retry before the last one finished (PreEnqueue prevents it) */
	if (inserted) {
		e->uid = uid;
		*slot = e;
	} else {
		free(e);
		free(uid);
		e = NULL;
	}
	a->jobs++;
	if (!grow_locked(a)) {
		a->jobs--;
		if (inserted) {
			*entry_slot(a, preemptor->uid) = e->next;
			free(e->uid);
			free(e);
		}
		pthread_mutex_unlock(&a->mu);
		free(t);
		job_free(j);
		return sk_status(SK_ERROR, "preemption: cannot start a preemption worker");
	}
	push_locked(a, t);
	pthread_mutex_unlock(&a->mu);
	return sk_ok();
}

bool dp_async_running(struct dp_async *a, const char *uid)
{
	if (!a || !uid)
		return false;
	pthread_mutex_lock(&a->mu);
	struct entry *e = *entry_slot(a, uid);
	bool in = e != NULL;
	struct sk_pod *last = e && e->last ? sk_pod_ref(e->last) : NULL;
	pthread_mutex_unlock(&a->mu);
	if (!in)
		return false;
	if (!last) /* the last victim's eviction has not begun */
		return true;
	bool done = sk_handle_pod_deleted(a->self->handle, last);
	sk_pod_unref(last);
	return !done;
}
