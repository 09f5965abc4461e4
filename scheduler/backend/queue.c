/* The scheduling queue (see queue.h). Every pod the queue knows is one struct qitem, found by uid
 * in a chained hash and linked into exactly one of: the activeQ heap, the backoffQ heap, the error
 * backoffQ heap, the unschedulable array, or the in-flight array (popped, not handed back yet).
 * Cluster events seen while pods are in flight are kept in a list, pruned as attempts finish. */
#include "scheduler/backend/queue.h"
#include "kube/hash.h"
#include "kube/object.h"
#include "kube/util.h"
#include "schedkit/volume.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW_NS 1000000000LL

const struct sk_cluster_event SK_EVENT_UNSCHEDULABLE_TIMEOUT = { SK_EV_WILDCARD, SK_ACT_ALL, "UnschedulableTimeout" };
const struct sk_cluster_event SK_EVENT_FORCE_ACTIVATE = { SK_EV_WILDCARD, SK_ACT_ALL, "ForceActivate" };
const struct sk_cluster_event SK_EVENT_NODE_ADD = { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" };
const struct sk_cluster_event SK_EVENT_ASSIGNED_POD_ADD = { SK_EV_ASSIGNED_POD, SK_ACT_ADD, "AssignedPodAdd" };
const struct sk_cluster_event SK_EVENT_ASSIGNED_POD_DELETE = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" };

enum strategy { Q_SKIP, Q_AFTER_BACKOFF, Q_IMMEDIATELY };
enum heap_kind { H_ACTIVE, H_BACKOFF, H_ERROR };

struct qitem {
	struct sk_queued_pod qp; /* first: the caller's handle points here */
	enum sk_queue_where where;
	int idx;                 /* heap / array index */
	int64_t expiry;          /* cached backoff expiry, valid when has_expiry */
	bool has_expiry;
	bool deleted;            /* deleted while in flight */
	uint64_t event_seq;      /* in flight: first event seq recorded for this attempt */
	int64_t pod_cycle;
	struct qitem *hnext;
};

struct heap {
	int n, cap;
	struct qitem **a;
};

struct recorded_event {
	uint64_t seq;
	struct sk_cluster_event ev;
	void *old_obj, *new_obj; /* references per ev.resource */
};

struct sk_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* Pop waiters; flusher sleeps */
	struct sk_queue_ops ops;
	struct sk_queue_options opt;
	bool closed;
	int64_t cycle, move_request_cycle;
	/* uid -> item */
	int nbuckets, nitems;
	struct qitem **buckets;
	struct heap active, backoff, errq;
	int nunsched, capunsched, ngated;
	struct qitem **unsched;
	int ninflight, capinflight;
	struct qitem **inflight;
	uint64_t next_seq;
	int nevents, capevents;
	struct recorded_event *events;
	pthread_t flusher;
	bool flusher_running;
};

/* ---------- helpers ---------- */

static int64_t now_ns(struct sk_queue *q)
{
	return q->ops.now_ns ? q->ops.now_ns(q->ops.ctx) : kube_mono_ns();
}

static struct qitem *lookup(struct sk_queue *q, const char *uid)
{
	for (struct qitem *it = q->buckets[kube_fnv1a32(uid) & (unsigned)(q->nbuckets - 1)]; it; it = it->hnext)
		if (strcmp(it->qp.pod->uid, uid) == 0)
			return it;
	return NULL;
}

static int hash_insert(struct sk_queue *q, struct qitem *it)
{
	if (q->nitems >= q->nbuckets) {
		int nb = q->nbuckets * 2;
		struct qitem **b = calloc((size_t)nb, sizeof(*b));
		if (!b)
			return -1;
		for (int i = 0; i < q->nbuckets; i++) {
			struct qitem *x = q->buckets[i];
			while (x) {
				struct qitem *next = x->hnext;
				unsigned h = kube_fnv1a32(x->qp.pod->uid) & (unsigned)(nb - 1);
				x->hnext = b[h];
				b[h] = x;
				x = next;
			}
		}
		free(q->buckets);
		q->buckets = b;
		q->nbuckets = nb;
	}
	unsigned h = kube_fnv1a32(it->qp.pod->uid) & (unsigned)(q->nbuckets - 1);
	it->hnext = q->buckets[h];
	q->buckets[h] = it;
	q->nitems++;
	return 0;
}

static void hash_remove(struct sk_queue *q, struct qitem *it)
{
	struct qitem **pp = &q->buckets[kube_fnv1a32(it->qp.pod->uid) & (unsigned)(q->nbuckets - 1)];
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == it) {
			*pp = it->hnext;
			q->nitems--;
			return;
		}
}

static void item_free(struct qitem *it)
{
	sk_pod_unref(it->qp.pod);
	free(it);
}

/* ---------- backoff ---------- */

static int64_t backoff_duration(const struct sk_queue *q, const struct sk_queued_pod *qp)
{
	int count = qp->consecutive_errors > 0 ? qp->consecutive_errors : qp->unschedulable_count;
	if (count <= 0)
		return 0;
	if (!q->opt.disable_pop_from_backoff && q->opt.max_backoff_ns == 0)
		return 0;
	int64_t d = q->opt.initial_backoff_ns, max = q->opt.max_backoff_ns;
	if (d > max)
		return max;
	for (int i = 1; i < count; i++) {
		if (d > max - d)
			return max;
		d += d;
	}
	return d;
}

static int64_t expiry_of(struct sk_queue *q, struct qitem *it)
{
	if (!it->has_expiry) {
		int64_t e = it->qp.timestamp_ns + backoff_duration(q, &it->qp);
		if (!q->opt.disable_pop_from_backoff)
			e -= ((e % WINDOW_NS) + WINDOW_NS) % WINDOW_NS;
		it->expiry = e;
		it->has_expiry = true;
	}
	return it->expiry;
}

static bool backing_off(struct sk_queue *q, struct qitem *it, int64_t now)
{
	return expiry_of(q, it) > now;
}

/* ---------- heaps ---------- */

static bool item_less(struct sk_queue *q, enum heap_kind k, struct qitem *a, struct qitem *b)
{
	if (k != H_ACTIVE) {
		int64_t ea = expiry_of(q, a), eb = expiry_of(q, b);
		if (ea != eb)
			return ea < eb;
	}
	return q->ops.less(q->ops.ctx, &a->qp, &b->qp);
}

static struct heap *heap_of(struct sk_queue *q, enum heap_kind k)
{
	return k == H_ACTIVE ? &q->active : k == H_BACKOFF ? &q->backoff : &q->errq;
}

static void heap_swap(struct heap *h, int i, int j)
{
	struct qitem *t = h->a[i];
	h->a[i] = h->a[j];
	h->a[j] = t;
	h->a[i]->idx = i;
	h->a[j]->idx = j;
}

static void heap_up(struct sk_queue *q, enum heap_kind k, int i)
{
	struct heap *h = heap_of(q, k);
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!item_less(q, k, h->a[i], h->a[p]))
			break;
		heap_swap(h, i, p);
		i = p;
	}
}

static void heap_down(struct sk_queue *q, enum heap_kind k, int i)
{
	struct heap *h = heap_of(q, k);
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && item_less(q, k, h->a[l], h->a[m]))
			m = l;
		if (r < h->n && item_less(q, k, h->a[r], h->a[m]))
			m = r;
		if (m == i)
			return;
		heap_swap(h, i, m);
		i = m;
	}
}

static int heap_push(struct sk_queue *q, enum heap_kind k, struct qitem *it)
{
	struct heap *h = heap_of(q, k);
	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		struct qitem **a = realloc(h->a, (size_t)cap * sizeof(*a));
		if (!a)
			return -1;
		h->a = a;
		h->cap = cap;
	}
	it->idx = h->n;
	h->a[h->n++] = it;
	heap_up(q, k, it->idx);
	return 0;
}

static void heap_remove(struct sk_queue *q, enum heap_kind k, struct qitem *it)
{
	struct heap *h = heap_of(q, k);
	int i = it->idx;
	h->n--;
	if (i != h->n) {
		h->a[i] = h->a[h->n];
		h->a[i]->idx = i;
		heap_down(q, k, i);
		heap_up(q, k, i);
	}
}

static void heap_fix(struct sk_queue *q, enum heap_kind k, struct qitem *it)
{
	heap_down(q, k, it->idx);
	heap_up(q, k, it->idx);
}

/* ---------- arrays ---------- */

static int array_add(struct qitem ***a, int *n, int *cap, struct qitem *it)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 64;
		struct qitem **na = realloc(*a, (size_t)c * sizeof(*na));
		if (!na)
			return -1;
		*a = na;
		*cap = c;
	}
	it->idx = *n;
	(*a)[(*n)++] = it;
	return 0;
}

static void array_remove(struct qitem **a, int *n, struct qitem *it)
{
	int i = it->idx;
	(*n)--;
	if (i != *n) {
		a[i] = a[*n];
		a[i]->idx = i;
	}
}

/* scheduler_inflight_events (sk_queue_options.inflight): tracked only with queueing hints, as
 * upstream keeps its in-flight list only then. */
static void inflight_metric(struct sk_queue *q, const char *event, int delta)
{
	if (q->opt.inflight && !q->opt.disable_queueing_hints)
		q->opt.inflight(q->opt.moved_ctx, event, delta);
}

/* Takes it out of whatever structure holds it (not the hash). */
static void unlink_item(struct sk_queue *q, struct qitem *it)
{
	switch (it->where) {
	case SK_Q_ACTIVE: heap_remove(q, H_ACTIVE, it); break;
	case SK_Q_BACKOFF: heap_remove(q, H_BACKOFF, it); break;
	case SK_Q_ERROR_BACKOFF: heap_remove(q, H_ERROR, it); break;
	case SK_Q_GATED: q->ngated--; /* fall through */
	case SK_Q_UNSCHEDULABLE: array_remove(q->unsched, &q->nunsched, it); break;
	case SK_Q_IN_FLIGHT:
		array_remove(q->inflight, &q->ninflight, it);
		inflight_metric(q, "PodPopped", -1);
		break;
	case SK_Q_NONE: break;
	}
	it->where = SK_Q_NONE;
}

/* Links it into dst; on ENOMEM the pod lands in unschedulablePods if possible (it is retried by the
 * periodic flush) and otherwise is dropped with an error value. */
static int link_item(struct sk_queue *q, struct qitem *it, enum sk_queue_where dst)
{
	int rc = 0;
	switch (dst) {
	case SK_Q_ACTIVE: rc = heap_push(q, H_ACTIVE, it); break;
	case SK_Q_BACKOFF: rc = heap_push(q, H_BACKOFF, it); break;
	case SK_Q_ERROR_BACKOFF: rc = heap_push(q, H_ERROR, it); break;
	case SK_Q_GATED:
	case SK_Q_UNSCHEDULABLE:
		rc = array_add(&q->unsched, &q->nunsched, &q->capunsched, it);
		if (rc == 0 && dst == SK_Q_GATED)
			q->ngated++;
		break;
	case SK_Q_IN_FLIGHT:
		rc = array_add(&q->inflight, &q->ninflight, &q->capinflight, it);
		if (rc == 0)
			inflight_metric(q, "PodPopped", 1);
		break;
	case SK_Q_NONE: break;
	}
	if (rc == 0) {
		it->where = dst;
		if (dst == SK_Q_ACTIVE)
			pthread_cond_broadcast(&q->cv);
	}
	return rc;
}

static void move_item(struct sk_queue *q, struct qitem *it, enum sk_queue_where dst)
{
	unlink_item(q, it);
	if (link_item(q, it, dst) != 0 && link_item(q, it, SK_Q_UNSCHEDULABLE) != 0) {
		hash_remove(q, it);
		item_free(it);
	}
}

/* ---------- PreEnqueue and the moves ---------- */

/* Runs PreEnqueue; sets or clears gating_plugin. Returns true when the pod may proceed. */
static bool run_pre_enqueue(struct sk_queue *q, struct qitem *it)
{
	it->qp.gating_plugin = NULL;
	if (!q->ops.pre_enqueue)
		return true;
	struct sk_status s = q->ops.pre_enqueue(q->ops.ctx, it->qp.pod);
	bool ok = s.code == SK_SUCCESS;
	if (!ok)
		it->qp.gating_plugin = s.plugin ? s.plugin : "";
	sk_status_reset(&s);
	return ok;
}

static enum sk_queue_where to_unschedulable(struct sk_queue *q, struct qitem *it)
{
	enum sk_queue_where w = it->qp.gating_plugin ? SK_Q_GATED : SK_Q_UNSCHEDULABLE;
	if (it->where != w)
		move_item(q, it, w);
	return it->where;
}

static enum sk_queue_where to_active(struct sk_queue *q, struct qitem *it, bool from_backoff_complete)
{
	if (q->opt.disable_pop_from_backoff || !from_backoff_complete) {
		if (!run_pre_enqueue(q, it))
			return to_unschedulable(q, it);
	}
	if (it->qp.initial_attempt_ns == 0)
		it->qp.initial_attempt_ns = now_ns(q);
	move_item(q, it, SK_Q_ACTIVE);
	return it->where;
}

static enum sk_queue_where to_backoff(struct sk_queue *q, struct qitem *it)
{
	if (!q->opt.disable_pop_from_backoff && !run_pre_enqueue(q, it))
		return to_unschedulable(q, it);
	move_item(q, it, it->qp.consecutive_errors > 0 ? SK_Q_ERROR_BACKOFF : SK_Q_BACKOFF);
	return it->where;
}

static enum sk_queue_where requeue(struct sk_queue *q, struct qitem *it, enum strategy s, int64_t now)
{
	if (s == Q_SKIP)
		return to_unschedulable(q, it);
	if (s == Q_AFTER_BACKOFF && backing_off(q, it, now))
		return to_backoff(q, it);
	return to_active(q, it, false);
}

static bool has_name(const char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (list[i] == name || strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* isPodWorthRequeuing */
static enum strategy worth_requeuing(struct sk_queue *q, struct qitem *it, const struct sk_cluster_event *ev,
				     const void *old_obj, const void *new_obj)
{
	const struct sk_queued_pod *qp = &it->qp;
	const char *rejectors[33];
	int n = 0;
	/* A gated pod moves only on an event its gating plugin registered for (upstream
	 * podMatchesEvent on GatingPluginEvents); the hints asked are then those of every plugin that
	 * rejected it: the gating one, which upstream's runPreEnqueuePlugins inserts into
	 * UnschedulablePlugins, and those of its last attempt (a preemptor held back while its
	 * asynchronous preemption runs still carries the Filter plugins the preemption resolves). */
	if (qp->gating_plugin && !(ev->resource & SK_EV_WILDCARD) && q->ops.hint &&
	    q->ops.hint(q->ops.ctx, qp->pod, qp->gating_plugin, ev, old_obj, new_obj) < 0)
		return Q_SKIP;
	if (qp->gating_plugin)
		rejectors[n++] = qp->gating_plugin;
	for (int i = 0; i < qp->nunschedulable_plugins && n < 32; i++)
		if (!has_name(rejectors, n, qp->unschedulable_plugins[i]))
			rejectors[n++] = qp->unschedulable_plugins[i];
	for (int i = 0; i < qp->npending_plugins && n < 32; i++)
		if (!has_name(rejectors, n, qp->pending_plugins[i]))
			rejectors[n++] = qp->pending_plugins[i];
	if (n == 0)
		return Q_AFTER_BACKOFF;
	if (ev->resource & SK_EV_WILDCARD) {
		/* A gated pod moves only on its gating plugin's events, and upstream's event match
		 * never takes an incoming wildcard (UnschedulableTimeout) for one of them. */
		if (qp->gating_plugin)
			return Q_SKIP;
		/* A wildcard event carrying a pod (ForceActivate of an in-flight pod) is meant for
		 * that pod only. */
		const struct sk_pod *target = new_obj;
		if (target && strcmp(target->uid, qp->pod->uid) != 0)
			return Q_SKIP;
		return Q_AFTER_BACKOFF;
	}
	if (!q->ops.hint)
		return Q_AFTER_BACKOFF;
	enum strategy s = Q_SKIP;
	for (int i = 0; i < n; i++) {
		int64_t t0 = q->opt.hint_observed ? kube_mono_ns() : 0;
		int h = q->ops.hint(q->ops.ctx, qp->pod, rejectors[i], ev, old_obj, new_obj);
		if (t0 && h >= 0)
			q->opt.hint_observed(q->opt.moved_ctx, rejectors[i], ev->label ? ev->label : "",
					     h == SK_QUEUE ? "Queue" : "QueueSkip", (double)(kube_mono_ns() - t0) / 1e9);
		if (h != SK_QUEUE)
			continue;
		if (!qp->gating_plugin && has_name(qp->pending_plugins, qp->npending_plugins, rejectors[i]))
			return Q_IMMEDIATELY;
		s = Q_AFTER_BACKOFF;
	}
	return s;
}

/* ---------- in-flight events ---------- */

static bool is_pod_resource(uint32_t r)
{
	return (r & (SK_EV_POD | SK_EV_ASSIGNED_POD | SK_EV_UNSCHEDULED_POD)) != 0;
}

/* Objects of pod events, and the target pod of a wildcard event (ForceActivate), are pods. */
#define SK_EV_STORAGE                                                                                   \
	(SK_EV_PV | SK_EV_PVC | SK_EV_STORAGE_CLASS | SK_EV_CSI_NODE | SK_EV_CSI_DRIVER | SK_EV_CSI_STORAGE_CAPACITY | \
	 SK_EV_VOLUME_ATTACHMENT)

static void *obj_ref(uint32_t resource, const void *obj)
{
	if (!obj)
		return NULL;
	if (is_pod_resource(resource) || (resource & SK_EV_WILDCARD))
		return sk_pod_ref((struct sk_pod *)obj);
	if (resource & SK_EV_NODE)
		return sk_node_ref((struct sk_node *)obj);
	if (resource & SK_EV_STORAGE)
		return sk_vobj_ref(obj); /* struct sk_vobj views (schedkit/volume.h) */
	return NULL; /* other resources: hints get NULL objects */
}

static void obj_unref(uint32_t resource, void *obj)
{
	if (!obj)
		return;
	if (is_pod_resource(resource) || (resource & SK_EV_WILDCARD))
		sk_pod_unref(obj);
	else if (resource & SK_EV_NODE)
		sk_node_unref(obj);
	else if (resource & SK_EV_STORAGE)
		sk_vobj_unref(obj);
}

static void record_event(struct sk_queue *q, const struct sk_cluster_event *ev, const void *old_obj,
			 const void *new_obj)
{
	if (q->opt.disable_queueing_hints || q->ninflight == 0)
		return;
	if (q->nevents == q->capevents) {
		int cap = q->capevents ? q->capevents * 2 : 64;
		struct recorded_event *e = realloc(q->events, (size_t)cap * sizeof(*e));
		if (!e)
			return; /* a lost event only delays a retry until the next flush */
		q->events = e;
		q->capevents = cap;
	}
	struct recorded_event *re = &q->events[q->nevents++];
	re->seq = q->next_seq++;
	re->ev = *ev;
	re->old_obj = obj_ref(ev->resource, old_obj);
	re->new_obj = obj_ref(ev->resource, new_obj);
	inflight_metric(q, ev->label ? ev->label : "", 1);
}

/* Drops events no in-flight attempt can still see. */
static void prune_events(struct sk_queue *q)
{
	uint64_t min = q->next_seq;
	for (int i = 0; i < q->ninflight; i++)
		if (q->inflight[i]->event_seq < min)
			min = q->inflight[i]->event_seq;
	int k = 0;
	while (k < q->nevents && q->events[k].seq < min) {
		inflight_metric(q, q->events[k].ev.label ? q->events[k].ev.label : "", -1);
		obj_unref(q->events[k].ev.resource, q->events[k].old_obj);
		obj_unref(q->events[k].ev.resource, q->events[k].new_obj);
		k++;
	}
	if (k) {
		memmove(q->events, q->events + k, (size_t)(q->nevents - k) * sizeof(*q->events));
		q->nevents -= k;
	}
}

/* determineSchedulingHintForInFlightPod */
static enum strategy inflight_hint(struct sk_queue *q, struct qitem *it)
{
	const struct sk_queued_pod *qp = &it->qp;
	if (qp->nunschedulable_plugins == 0 && qp->npending_plugins == 0)
		return Q_AFTER_BACKOFF;
	enum strategy s = Q_SKIP;
	for (int i = 0; i < q->nevents; i++) {
		struct recorded_event *re = &q->events[i];
		if (re->seq < it->event_seq)
			continue;
		enum strategy r = worth_requeuing(q, it, &re->ev, re->old_obj, re->new_obj);
		if (r == Q_IMMEDIATELY)
			return r;
		if (r == Q_AFTER_BACKOFF)
			s = r;
	}
	return s;
}

/* ---------- lifecycle ---------- */

struct sk_queue *sk_queue_new(const struct sk_queue_ops *ops, const struct sk_queue_options *opts)
{
	struct sk_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->ops = *ops;
	if (opts) {
		q->opt = *opts;
	} else {
		q->opt.initial_backoff_ns = 1000000000LL;
		q->opt.max_backoff_ns = 10000000000LL;
	}
	if (q->opt.max_in_unschedulable_ns <= 0)
		q->opt.max_in_unschedulable_ns = 300LL * 1000000000LL;
	q->nbuckets = 256;
	q->buckets = calloc((size_t)q->nbuckets, sizeof(*q->buckets));
	if (!q->buckets) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cv, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

void sk_queue_close(struct sk_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	pthread_cond_broadcast(&q->cv);
	bool join = q->flusher_running;
	q->flusher_running = false;
	pthread_mutex_unlock(&q->mu);
	if (join)
		pthread_join(q->flusher, NULL);
}

void sk_queue_free(struct sk_queue *q)
{
	if (!q)
		return;
	sk_queue_close(q);
	for (int i = 0; i < q->nbuckets; i++) {
		struct qitem *it = q->buckets[i];
		while (it) {
			struct qitem *next = it->hnext;
			item_free(it);
			it = next;
		}
	}
	/* in-flight items that were deleted are out of the hash */
	for (int i = 0; i < q->ninflight; i++)
		if (q->inflight[i]->deleted)
			item_free(q->inflight[i]);
	for (int i = 0; i < q->nevents; i++) {
		obj_unref(q->events[i].ev.resource, q->events[i].old_obj);
		obj_unref(q->events[i].ev.resource, q->events[i].new_obj);
	}
	free(q->events);
	free(q->buckets);
	free(q->active.a);
	free(q->backoff.a);
	free(q->errq.a);
	free(q->unsched);
	free(q->inflight);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* ---------- pending pods ---------- */

static void update_locked(struct sk_queue *q, struct qitem *it, const struct sk_pod *old_pod, struct sk_pod *new_pod);

int sk_queue_add(struct sk_queue *q, struct sk_pod *pod)
{
	pthread_mutex_lock(&q->mu);
	struct qitem *it = lookup(q, pod->uid);
	if (it) {
		struct sk_pod *old = sk_pod_ref(it->qp.pod);
		update_locked(q, it, old, pod);
		sk_pod_unref(old);
		pthread_mutex_unlock(&q->mu);
		return 0;
	}
	it = calloc(1, sizeof(*it));
	if (it)
		it->qp.pod = pod;
	if (!it || hash_insert(q, it) != 0) {
		pthread_mutex_unlock(&q->mu);
		free(it);
		return -1;
	}
	sk_pod_ref(pod);
	it->qp.timestamp_ns = now_ns(q);
	to_active(q, it, false);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

static bool scaled_down(const struct sk_resource *o, const struct sk_resource *n)
{
	if (n->milli_cpu < o->milli_cpu || n->memory < o->memory || n->ephemeral_storage < o->ephemeral_storage)
		return true;
	for (int i = 0; i < o->nscalar; i++)
		if (sk_resource_scalar(n, o->scalar[i].name) < o->scalar[i].value)
			return true;
	return false;
}

int sk_pod_update_events(const struct sk_pod *old_pod, const struct sk_pod *new_pod, struct sk_cluster_event *out,
			 int max)
{
	uint32_t res = new_pod->node_name ? SK_EV_ASSIGNED_POD : SK_EV_UNSCHEDULED_POD;
	int n = 0;
	struct sk_cluster_event cand[4];
	int nc = 0;
	if (old_pod && !sk_labels_equal(&old_pod->labels, &new_pod->labels))
		cand[nc++] = (struct sk_cluster_event){ res, SK_ACT_UPDATE_POD_LABEL, "UpdatePodLabel" };
	if (old_pod && scaled_down(&old_pod->requests, &new_pod->requests))
		cand[nc++] = (struct sk_cluster_event){ res, SK_ACT_UPDATE_POD_SCALE_DOWN, "UpdatePodScaleDown" };
	if (old_pod && old_pod->nscheduling_gates > 0 && new_pod->nscheduling_gates == 0)
		cand[nc++] = (struct sk_cluster_event){ res, SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
							"UpdatePodSchedulingGatesEliminated" };
	if (old_pod && !sk_tolerations_equal(old_pod, new_pod))
		cand[nc++] = (struct sk_cluster_event){ res, SK_ACT_UPDATE_POD_TOLERATIONS, "UpdatePodToleration" };
	for (int i = 0; i < nc && n < max; i++)
		out[n++] = cand[i];
	if (n == 0 && max > 0) {
		/* updatePodOther: matches only registrations for any Pod update (action Update). */
		uint32_t other = SK_ACT_UPDATE & ~(uint32_t)(SK_ACT_UPDATE_POD_LABEL | SK_ACT_UPDATE_POD_SCALE_DOWN |
							    SK_ACT_UPDATE_POD_TOLERATIONS |
							    SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED |
							    SK_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
		out[n++] = (struct sk_cluster_event){ res, other, "UpdatePodOther" };
	}
	return n;
}

/* ---------- node updates (upstream nodeSchedulingPropertiesChange) ---------- */

static bool resource_equal(const struct sk_resource *a, const struct sk_resource *b)
{
	if (a->milli_cpu != b->milli_cpu || a->memory != b->memory || a->ephemeral_storage != b->ephemeral_storage ||
	    a->allowed_pod_number != b->allowed_pod_number || a->nscalar != b->nscalar)
		return false;
	for (int i = 0; i < a->nscalar; i++)
		if (strcmp(a->scalar[i].name, b->scalar[i].name) || a->scalar[i].value != b->scalar[i].value)
			return false;
	return true;
}

uint32_t sk_node_update_actions(const struct sk_node *o, const struct sk_node *n)
{
	uint32_t a = 0;
	if (!o || !n)
		return SK_ACT_UPDATE;
	if (o->unschedulable != n->unschedulable)
		a |= SK_ACT_UPDATE_NODE_TAINT;
	if (!resource_equal(&o->allocatable, &n->allocatable))
		a |= SK_ACT_UPDATE_NODE_ALLOCATABLE;
	if (!sk_labels_equal(&o->labels, &n->labels))
		a |= SK_ACT_UPDATE_NODE_LABEL;
	if (!sk_taints_equal(o->taints, o->ntaints, n->taints, n->ntaints))
		a |= SK_ACT_UPDATE_NODE_TAINT;
	return a;
}

/* "type=status" of every condition, in order, for comparison. */
static bool conditions_equal(const cJSON *a, const cJSON *b)
{
	int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++) {
		const cJSON *ca = cJSON_GetArrayItem(a, i);
		const char *t = kube_obj_get_string(ca, "type"), *st = kube_obj_get_string(ca, "status");
		const cJSON *cb = t ? kube_condition_find(b, t) : NULL;
		const char *st2 = cb ? kube_obj_get_string(cb, "status") : NULL;
		if (!cb || !st != !st2 || (st && strcmp(st, st2)))
			return false;
	}
	return true;
}

uint32_t sk_node_object_update_actions(const cJSON *old_obj, const cJSON *new_obj)
{
	uint32_t a = 0;
	if (!conditions_equal(kube_obj_get(old_obj, "status.conditions"), kube_obj_get(new_obj, "status.conditions")))
		a |= SK_ACT_UPDATE_NODE_CONDITION;
	const cJSON *oa = kube_meta_annotations(old_obj), *na = kube_meta_annotations(new_obj);
	bool same = (!oa || !cJSON_GetArraySize(oa)) && (!na || !cJSON_GetArraySize(na));
	if (!same && !(oa && na && cJSON_Compare(oa, na, true)))
		a |= SK_ACT_UPDATE_NODE_ANNOTATION;
	return a;
}

static void replace_pod(struct qitem *it, struct sk_pod *new_pod)
{
	if (it->qp.pod == new_pod)
		return;
	sk_pod_ref(new_pod);
	sk_pod_unref(it->qp.pod);
	it->qp.pod = new_pod;
}

static void update_locked(struct sk_queue *q, struct qitem *it, const struct sk_pod *old_pod, struct sk_pod *new_pod)
{
	struct sk_cluster_event evs[8];
	int nev = sk_pod_update_events(old_pod, new_pod, evs, 8);
	switch (it->where) {
	case SK_Q_IN_FLIGHT:
		/* The attempt requeues with the informer's copy; remember the update for its hints. */
		for (int i = 0; i < nev; i++)
			record_event(q, &evs[i], old_pod, new_pod);
		return;
	case SK_Q_ACTIVE:
		replace_pod(it, new_pod);
		heap_fix(q, H_ACTIVE, it);
		return;
	case SK_Q_BACKOFF:
	case SK_Q_ERROR_BACKOFF:
		replace_pod(it, new_pod);
		heap_fix(q, it->where == SK_Q_BACKOFF ? H_BACKOFF : H_ERROR, it);
		return;
	case SK_Q_UNSCHEDULABLE:
	case SK_Q_GATED: {
		replace_pod(it, new_pod);
		int64_t now = now_ns(q);
		if (q->opt.disable_queueing_hints) {
			/* Without hints any update retries the pod (we keep no full spec to diff). */
			if (backing_off(q, it, now))
				to_backoff(q, it);
			else
				to_active(q, it, false);
			return;
		}
		for (int i = 0; i < nev; i++) {
			enum strategy s = worth_requeuing(q, it, &evs[i], old_pod, new_pod);
			enum sk_queue_where w = requeue(q, it, s, now);
			if (w != SK_Q_UNSCHEDULABLE && w != SK_Q_GATED)
				return;
		}
		return;
	}
	case SK_Q_NONE:
		replace_pod(it, new_pod);
		to_active(q, it, false);
		return;
	}
}

void sk_queue_update(struct sk_queue *q, const struct sk_pod *old_pod, struct sk_pod *new_pod)
{
	pthread_mutex_lock(&q->mu);
	struct qitem *it = lookup(q, new_pod->uid);
	pthread_mutex_unlock(&q->mu);
	if (!it) {
		sk_queue_add(q, new_pod);
		return;
	}
	pthread_mutex_lock(&q->mu);
	it = lookup(q, new_pod->uid);
	if (it)
		update_locked(q, it, old_pod, new_pod);
	pthread_mutex_unlock(&q->mu);
	if (!it)
		sk_queue_add(q, new_pod);
}

void sk_queue_delete(struct sk_queue *q, const struct sk_pod *pod)
{
	pthread_mutex_lock(&q->mu);
	struct qitem *it = lookup(q, pod->uid);
	if (it) {
		hash_remove(q, it);
		if (it->where == SK_Q_IN_FLIGHT) {
			it->deleted = true; /* freed when the attempt hands it back */
		} else {
			unlink_item(q, it);
			item_free(it);
		}
	}
	pthread_mutex_unlock(&q->mu);
}

/* ---------- Pop and the end of an attempt ---------- */

static struct sk_queued_pod *pop_locked(struct sk_queue *q, int64_t *cycle)
{
	struct qitem *it = NULL;
	if (q->active.n)
		it = q->active.a[0];
	else if (!q->opt.disable_pop_from_backoff && q->backoff.n)
		it = q->backoff.a[0];
	if (!it)
		return NULL;
	unlink_item(q, it);
	if (link_item(q, it, SK_Q_IN_FLIGHT) != 0) {
		link_item(q, it, SK_Q_ACTIVE);
		return NULL;
	}
	it->qp.attempts++;
	it->has_expiry = false;
	it->qp.nunschedulable_plugins = 0;
	it->qp.npending_plugins = 0;
	it->qp.gating_plugin = NULL;
	if (it->qp.initial_attempt_ns == 0)
		it->qp.initial_attempt_ns = now_ns(q);
	it->event_seq = q->next_seq;
	q->cycle++;
	it->pod_cycle = q->cycle;
	if (cycle)
		*cycle = q->cycle;
	return &it->qp;
}

struct sk_queued_pod *sk_queue_pop(struct sk_queue *q, int64_t *cycle)
{
	pthread_mutex_lock(&q->mu);
	struct sk_queued_pod *qp = NULL;
	while (!q->closed && !(qp = pop_locked(q, cycle)))
		pthread_cond_wait(&q->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
	return qp;
}

struct sk_queued_pod *sk_queue_try_pop(struct sk_queue *q, int64_t *cycle)
{
	pthread_mutex_lock(&q->mu);
	struct sk_queued_pod *qp = q->closed ? NULL : pop_locked(q, cycle);
	pthread_mutex_unlock(&q->mu);
	return qp;
}

static void finish_inflight(struct sk_queue *q, struct qitem *it)
{
	if (it->where == SK_Q_IN_FLIGHT)
		unlink_item(q, it);
	prune_events(q);
}

enum sk_queue_where sk_queue_add_unschedulable(struct sk_queue *q, struct sk_queued_pod *qp, struct sk_pod *fresh)
{
	struct qitem *it = (struct qitem *)qp;
	pthread_mutex_lock(&q->mu);
	if (it->deleted) {
		finish_inflight(q, it);
		item_free(it);
		pthread_mutex_unlock(&q->mu);
		return SK_Q_NONE;
	}
	if (fresh)
		replace_pod(it, fresh);
	bool rejected = qp->nunschedulable_plugins > 0 || qp->npending_plugins > 0;
	if (rejected) {
		qp->unschedulable_count++;
		qp->consecutive_errors = 0;
	} else {
		qp->consecutive_errors++;
	}
	int64_t now = now_ns(q);
	qp->timestamp_ns = now;
	it->has_expiry = false;
	enum strategy s;
	if (!q->opt.disable_queueing_hints)
		s = inflight_hint(q, it);
	else
		/* upstream passes SchedulingCycle() at failure time, not the pod's own cycle: a binding
		 * failure that ends after later pops needs a move request at least that recent */
		s = (q->move_request_cycle >= q->cycle || !rejected) ? Q_AFTER_BACKOFF : Q_SKIP;
	finish_inflight(q, it);
	enum sk_queue_where w;
	if (q->opt.disable_queueing_hints && s == Q_AFTER_BACKOFF) {
		/* v1.31 without hints: straight to backoffQ */
		w = to_backoff(q, it);
	} else {
		w = requeue(q, it, s, now);
	}
	pthread_mutex_unlock(&q->mu);
	return w;
}

void sk_queue_done(struct sk_queue *q, struct sk_queued_pod *qp)
{
	struct qitem *it = (struct qitem *)qp;
	pthread_mutex_lock(&q->mu);
	finish_inflight(q, it);
	if (!it->deleted)
		hash_remove(q, it);
	item_free(it);
	pthread_mutex_unlock(&q->mu);
}

/* ---------- events ---------- */

static void move_list(struct sk_queue *q, struct qitem **list, int n, const struct sk_cluster_event *ev,
		      const void *old_obj, const void *new_obj, int64_t now)
{
	for (int i = 0; i < n; i++) {
		struct qitem *it = list[i];
		enum strategy s = worth_requeuing(q, it, ev, old_obj, new_obj);
		if (s == Q_SKIP)
			continue;
		requeue(q, it, s, now);
		if (q->opt.moved && it->where != SK_Q_UNSCHEDULABLE)
			q->opt.moved(q->opt.moved_ctx, it->qp.pod, (int)it->where, ev->label);
	}
	q->move_request_cycle = q->cycle;
}

/* Copies the unschedulable array (moves mutate it). */
static struct qitem **unsched_snapshot(struct sk_queue *q, int *n)
{
	*n = q->nunsched;
	if (!*n)
		return NULL;
	struct qitem **l = malloc((size_t)*n * sizeof(*l));
	if (l)
		memcpy(l, q->unsched, (size_t)*n * sizeof(*l));
	else
		*n = 0;
	return l;
}

void sk_queue_move_all(struct sk_queue *q, const struct sk_cluster_event *ev, const void *old_obj,
		       const void *new_obj)
{
	sk_queue_move_all_checked(q, ev, old_obj, new_obj, NULL, NULL);
}

void sk_queue_move_all_checked(struct sk_queue *q, const struct sk_cluster_event *ev, const void *old_obj,
			       const void *new_obj, bool (*pre_check)(void *ctx, const struct sk_pod *pod), void *ctx)
{
	pthread_mutex_lock(&q->mu);
	record_event(q, ev, old_obj, new_obj);
	int n;
	struct qitem **l = unsched_snapshot(q, &n);
	if (pre_check) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (pre_check(ctx, l[i]->qp.pod))
				l[k++] = l[i];
		n = k;
	}
	move_list(q, l, n, ev, old_obj, new_obj, now_ns(q));
	free(l);
	pthread_mutex_unlock(&q->mu);
}

void sk_queue_each_rejector(struct sk_queue *q, void (*fn)(void *ctx, const struct sk_pod *pod, const char *plugin),
			    void *ctx)
{
	pthread_mutex_lock(&q->mu);
	for (int b = 0; b < q->nbuckets; b++)
		for (struct qitem *it = q->buckets[b]; it; it = it->hnext)
			if (it->where == SK_Q_BACKOFF || it->where == SK_Q_UNSCHEDULABLE)
				for (int i = 0; i < it->qp.nunschedulable_plugins; i++)
					fn(ctx, it->qp.pod, it->qp.unschedulable_plugins[i]);
	pthread_mutex_unlock(&q->mu);
}

static bool key_matches(const struct sk_pod *p, const char *key)
{
	size_t nl = strlen(p->ns);
	return strncmp(key, p->ns, nl) == 0 && key[nl] == '/' && strcmp(key + nl + 1, p->name) == 0;
}

void sk_queue_activate(struct sk_queue *q, char *const *keys, int n)
{
	bool *done = calloc((size_t)(n > 0 ? n : 1), sizeof(*done));
	pthread_mutex_lock(&q->mu);
	for (int b = 0; b < q->nbuckets; b++) {
		for (struct qitem *it = q->buckets[b]; it;) {
			struct qitem *next = it->hnext;
			int k = 0;
			while (k < n && !key_matches(it->qp.pod, keys[k]))
				k++;
			if (k < n) {
				if (it->where == SK_Q_IN_FLIGHT) {
					/* requeued when it comes back (the event with hints) */
					record_event(q, &SK_EVENT_FORCE_ACTIVATE, NULL, it->qp.pod);
				} else if (it->where == SK_Q_UNSCHEDULABLE || it->where == SK_Q_GATED) {
					if (to_active(q, it, false) == SK_Q_ACTIVE && done)
						done[k] = true;
				} else if (it->where == SK_Q_BACKOFF || it->where == SK_Q_ERROR_BACKOFF) {
					/* PreEnqueue already ran when it entered backoffQ (PopFromBackoffQ) */
					if (to_active(q, it, true) == SK_Q_ACTIVE && done)
						done[k] = true;
				}
			}
			it = next;
		}
	}
	/* upstream: every pod of the map that was not activated (in flight, already active, gated,
	 * unknown) sets the move request cycle, which the no-hints requeue looks at */
	for (int k = 0; k < n; k++)
		if (!done || !done[k])
			q->move_request_cycle = q->cycle;
	pthread_mutex_unlock(&q->mu);
	free(done);
}

void sk_queue_flush_backoff(struct sk_queue *q, int64_t now)
{
	pthread_mutex_lock(&q->mu);
	for (enum heap_kind k = H_BACKOFF; k <= H_ERROR; k++) {
		struct heap *h = heap_of(q, k);
		while (h->n && !backing_off(q, h->a[0], now))
			to_active(q, h->a[0], true);
	}
	pthread_mutex_unlock(&q->mu);
}

void sk_queue_flush_unschedulable(struct sk_queue *q, int64_t now)
{
	pthread_mutex_lock(&q->mu);
	int n = 0;
	struct qitem **l = malloc((size_t)(q->nunsched ? q->nunsched : 1) * sizeof(*l));
	if (l) {
		for (int i = 0; i < q->nunsched; i++)
			if (now - q->unsched[i]->qp.timestamp_ns > q->opt.max_in_unschedulable_ns)
				l[n++] = q->unsched[i];
		move_list(q, l, n, &SK_EVENT_UNSCHEDULABLE_TIMEOUT, NULL, NULL, now);
		free(l);
	}
	pthread_mutex_unlock(&q->mu);
}

static void *flusher_main(void *arg)
{
	struct sk_queue *q = arg;
	int ticks = 0;
	pthread_mutex_lock(&q->mu);
	while (!q->closed) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		ts.tv_nsec = 0; /* align to whole seconds, as the backoff windows are */
		while (!q->closed && pthread_cond_timedwait(&q->cv, &q->mu, &ts) != ETIMEDOUT)
			;
		if (q->closed)
			break;
		pthread_mutex_unlock(&q->mu);
		int64_t now = now_ns(q);
		sk_queue_flush_backoff(q, now);
		if (++ticks % 30 == 0)
			sk_queue_flush_unschedulable(q, now);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int sk_queue_start_flushers(struct sk_queue *q)
{
	pthread_mutex_lock(&q->mu);
	int rc = 0;
	if (!q->flusher_running && !q->closed) {
		rc = pthread_create(&q->flusher, NULL, flusher_main, q) == 0 ? 0 : -1;
		q->flusher_running = rc == 0;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* ---------- introspection ---------- */

void sk_queue_counts(struct sk_queue *q, struct sk_queue_counts *out)
{
	pthread_mutex_lock(&q->mu);
	out->active = q->active.n;
	out->backoff = q->backoff.n + q->errq.n;
	out->unschedulable = q->nunsched - q->ngated;
	out->gated = q->ngated;
	pthread_mutex_unlock(&q->mu);
}

void sk_queue_each(struct sk_queue *q, void (*fn)(void *ctx, const struct sk_pod *pod, enum sk_queue_where where),
		   void *ctx)
{
	pthread_mutex_lock(&q->mu);
	for (int b = 0; b < q->nbuckets; b++)
		for (struct qitem *it = q->buckets[b]; it; it = it->hnext)
			if (!it->deleted)
				fn(ctx, it->qp.pod, it->where);
	pthread_mutex_unlock(&q->mu);
}

enum sk_queue_where sk_queue_where_is(struct sk_queue *q, const char *uid)
{
	pthread_mutex_lock(&q->mu);
	struct qitem *it = lookup(q, uid);
	enum sk_queue_where w = it ? it->where : SK_Q_NONE;
	pthread_mutex_unlock(&q->mu);
	return w;
}

int64_t sk_queue_backoff_duration(struct sk_queue *q, const struct sk_queued_pod *qp)
{
	return backoff_duration(q, qp);
}

int64_t sk_queue_backoff_expiry(struct sk_queue *q, const char *uid)
{
	pthread_mutex_lock(&q->mu);
	struct qitem *it = lookup(q, uid);
	int64_t e = it && it->where != SK_Q_IN_FLIGHT ? expiry_of(q, it) : -1;
	pthread_mutex_unlock(&q->mu);
	return e;
}

int64_t sk_queue_scheduling_cycle(struct sk_queue *q)
{
	pthread_mutex_lock(&q->mu);
	int64_t c = q->cycle;
	pthread_mutex_unlock(&q->mu);
	return c;
}
