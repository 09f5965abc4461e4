/* The informer handlers of the daemon: pod events feed the cache (assigned pods) and the queue
 * and nominator (our pending pods), node events the cache and the queue's requeueing; plus the
 * pod helpers the other files of the daemon share (decode, ours, terminal). */
#include <stdlib.h>
#include <string.h>

#include "kube/jsonspan.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/api/raw.h"
#include "scheduler/backend/queue.h"
#include "scheduler/daemon/internal.h"

/* ---------- helpers shared by the daemon's files ---------- */

bool sk_dm_is_ours_locked(struct sk_daemon *d, const char *scheduler_name)
{
	if (!scheduler_name || !d->gen)
		return false;
	for (int i = 0; i < d->gen->n; i++)
		if (!strcmp(d->gen->pcs[i].name, scheduler_name))
			return true;
	return false;
}

bool sk_dm_is_ours(struct sk_daemon *d, const char *scheduler_name)
{
	pthread_rwlock_rdlock(&d->names_lock);
	bool r = sk_dm_is_ours_locked(d, scheduler_name);
	pthread_rwlock_unlock(&d->names_lock);
	return r;
}

bool sk_dm_pod_terminal(const struct sk_pod *p)
{
	return p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed"));
}

/* Decodes obj with the offer already made (raw.h), withdraws it; logs a failure. */
static struct sk_pod *decode_offered(const cJSON *obj)
{
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(obj, &err);
	sk_obj_raw_offer(NULL, NULL);
	if (!p) {
		klog_error("Cannot decode pod", " pod=%s/%s err=\"%s\"", kube_meta_namespace(obj) ? kube_meta_namespace(obj) : "",
			   kube_meta_name(obj) ? kube_meta_name(obj) : "", err ? err : "");
		free(err);
	}
	return p;
}

struct sk_pod *sk_dm_decode_pod_text(const cJSON *obj, struct kube_text *t)
{
	sk_obj_raw_offer(obj, t);
	return decode_offered(obj);
}

/* Decodes obj; when it is the object the informer is handing out, the decoded view shares the
 * store's text for the extender wire instead of printing its own (scheduler/api/raw.h). */
static struct sk_pod *dm_decode_pod(struct sk_daemon *d, const cJSON *obj)
{
	struct kube_text *t = d && d->pods ? kube_informer_text_of(d->pods, obj) : NULL;
	struct sk_pod *p = sk_dm_decode_pod_text(obj, t);
	kube_text_unref(t);
	return p;
}

struct sk_pod *sk_dm_decode_pod(const cJSON *obj)
{
	return sk_dm_decode_pod_text(obj, NULL);
}

static void log_cache_err(const char *what, const struct sk_pod *p, char *err)
{
	if (err) {
		klog_error(what, " pod=%s/%s err=\"%s\"", p->ns, p->name, err);
		free(err);
	}
}

static void handled(void *ctx, const char *event, int64_t t0);

/* ---------- pod informer handlers ---------- */

void sk_dm_incoming(struct sk_daemon *d, const struct sk_pod *p, const char *event)
{
	const char *q = sk_sched_metrics_queue_label(sk_queue_where_is(sk_scheduler_queue(d->sched), p->uid));
	sk_sched_metrics_incoming(d->metrics, q, event);
}

static void assigned_add(struct sk_daemon *d, struct sk_pod *p)
{
	char *err = NULL;
	if (sk_dm_pod_terminal(p)) {
		if (sk_cache_pod_state(d->cache, p->uid) != SK_POD_NOT_CACHED &&
		    sk_cache_remove_pod(d->cache, p, &err) == 0)
			sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_DELETE, p, NULL);
		log_cache_err("Scheduler cache RemovePod failed", p, err);
		return;
	}
	if (sk_cache_add_pod(d->cache, p, &err) != 0) {
		log_cache_err("Scheduler cache AddPod failed", p, err);
		return;
	}
	sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, p);
}

static void on_pod_add(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	struct sk_pod *p = dm_decode_pod(d, obj);
	if (!p)
		return;
	/* The read side of names_lock for the whole handler: a reload's queue changes for added
	 * and removed profiles are ordered with this event, never interleaved with it. */
	pthread_rwlock_rdlock(&d->names_lock);
	if (p->node_name) {
		assigned_add(d, p);
		sk_dm_conflict_has(d, p->uid, true);
	} else if (sk_dm_is_ours_locked(d, p->scheduler_name) && !sk_dm_pod_terminal(p)) {
		if (sk_queue_add(sk_scheduler_queue(d->sched), p) == 0) {
			sk_nominator_add(d->nom, p, NULL);
			sk_dm_incoming(d, p, "PodAdd");
		}
	}
	pthread_rwlock_unlock(&d->names_lock);
	sk_pod_unref(p);
}

static const char *const node_name_path[] = { "spec", "nodeName", NULL };

/* Whether the previous object of the update new_obj had spec.nodeName (a string, as
 * kube_obj_get_string finds it). Read from the stored text when it holds no backslash (every key
 * is then its plain bytes, and the first member of a name is the one cJSON finds); otherwise
 * from the parsed old object. */
static bool old_was_assigned(struct sk_daemon *d, const cJSON *new_obj)
{
	struct kube_text *t = kube_informer_old_text(d->pods, new_obj);
	if (t && !memchr(t->s, '\\', t->len)) {
		size_t vl;
		const char *v = kube_json_path_span(t->s, t->len, node_name_path, &vl);
		kube_text_unref(t);
		return v && *v == '"';
	}
	kube_text_unref(t);
	return kube_obj_get_string(kube_informer_old(d->pods, new_obj), "spec.nodeName") != NULL;
}

/* An update of a pod, decoded (p). st: the cache's state of it. new_obj: the new object, for
 * kube_informer_old; NULL only when st is not SK_POD_BOUND and p is assigned (the binding's
 * echo), the one path that reads no old object. */
static void pod_updated(struct sk_daemon *d, struct sk_pod *p, enum sk_pod_cache_state st, const cJSON *new_obj)
{
	struct sk_queue *q = sk_scheduler_queue(d->sched);
	pthread_rwlock_rdlock(&d->names_lock);
	if (p->node_name) {
		sk_dm_conflict_has(d, p->uid, true);
		if (sk_dm_is_ours_locked(d, p->scheduler_name)) {
			/* Unassigned -> assigned: it leaves the queue (no-op when not queued). A pod
			 * the cache does not hold as bound is being assigned now (or is terminal, not
			 * queued): only a bound one needs its old object to tell. */
			if (st != SK_POD_BOUND || !old_was_assigned(d, new_obj)) {
				sk_queue_delete(q, p);
				sk_nominator_delete(d->nom, p->uid);
			}
		}
		if (st != SK_POD_BOUND || sk_dm_pod_terminal(p)) {
			assigned_add(d, p);
		} else {
			struct sk_pod *old = sk_cache_get_pod(d->cache, p->uid);
			char *err = NULL;
			if (sk_cache_update_pod(d->cache, p, &err) != 0) {
				log_cache_err("Scheduler cache UpdatePod failed", p, err);
			} else if (old) {
				struct sk_cluster_event evs[8];
				int n = sk_pod_update_events(old, p, evs, 8);
				for (int i = 0; i < n; i++) {
					evs[i].resource = SK_EV_ASSIGNED_POD;
					sk_queue_move_all(q, &evs[i], old, p);
				}
			}
			sk_pod_unref(old);
		}
	} else if (sk_dm_is_ours_locked(d, p->scheduler_name)) {
		if (sk_dm_pod_terminal(p)) {
			sk_queue_delete(q, p);
			sk_nominator_delete(d->nom, p->uid);
		} else {
			struct sk_pod *old = sk_dm_decode_pod(kube_informer_old(d->pods, new_obj));
			if (old) {
				sk_queue_update(q, old, p);
				sk_nominator_update(d->nom, old, p);
				sk_dm_incoming(d, p, "PodUpdate");
			}
			sk_pod_unref(old);
		}
	}
	pthread_rwlock_unlock(&d->names_lock);
}

/* old_obj is NULL (old_on_demand): kube_informer_old parses the previous object only on the
 * paths that read it, not for our own bindings' updates (the common event, which mostly does
 * not get here: on_pod_update_text). */
static void on_pod_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	(void)old_obj;
	struct sk_daemon *d = ctx;
	struct sk_pod *p = dm_decode_pod(d, new_obj);
	if (!p)
		return;
	pod_updated(d, p, p->node_name ? sk_cache_pod_state(d->cache, p->uid) : SK_POD_NOT_CACHED, new_obj);
	sk_pod_unref(p);
}

static const char *const uid_path[] = { "metadata", "uid", NULL };

/* The pod informer's text hook (m: the uid, then sk_pod_echo_paths, found by the watch): the
 * binding's echo of a pod the cache holds as assumed — the same object but for what
 * sk_pod_decode_echo allows (resourceVersion, nodeName, conditions) — becomes the assumed pod's
 * view with the new text, without a tree or a decode; then as on_pod_update (queue and nominator
 * cleared, the cache confirms it: AddPod). Anything else, false: the informer parses the object
 * and calls on_pod_update. */
static bool on_pod_update_text(void *ctx, struct kube_text *t, const struct kube_json_member *m)
{
	struct sk_daemon *d = ctx;
	int64_t t0 = kube_mono_ns();
	size_t ul;
	const char *u = kube_json_plain_string(m[0].val.p, m[0].val.len, &ul);
	char uid[256];
	if (!u || !ul || ul >= sizeof(uid) || memchr(u, 0, ul))
		return false;
	memcpy(uid, u, ul);
	uid[ul] = 0;
	if (sk_cache_pod_state(d->cache, uid) != SK_POD_ASSUMED)
		return false;
	struct sk_pod *assumed = sk_cache_get_pod(d->cache, uid);
	struct sk_pod *p = assumed ? sk_pod_decode_echo(assumed, t, m + 1) : NULL;
	sk_pod_unref(assumed);
	if (!p)
		return false;
	pod_updated(d, p, SK_POD_ASSUMED, NULL);
	sk_pod_unref(p);
	handled(d, "AssignedPodUpdate", t0);
	return true;
}

/* A deleted pod's view only leaves the cache, the queue and the nominator (and the queueing
 * hints, which see the plugin ABI's fields): it keeps no JSON for the extenders (raw.h). */
static void on_pod_delete(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	sk_obj_raw_offer_none(obj);
	struct sk_pod *p = decode_offered(obj);
	if (!p)
		return;
	sk_dm_conflict_has(d, p->uid, true);
	pthread_rwlock_rdlock(&d->names_lock);
	if (sk_cache_pod_state(d->cache, p->uid) != SK_POD_NOT_CACHED) {
		char *err = NULL;
		if (sk_cache_remove_pod(d->cache, p, &err) == 0)
			sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_DELETE, p, NULL);
		log_cache_err("Scheduler cache RemovePod failed", p, err);
	}
	if (!p->node_name && sk_dm_is_ours_locked(d, p->scheduler_name)) {
		sk_queue_delete(sk_scheduler_queue(d->sched), p);
		sk_nominator_delete(d->nom, p->uid);
		sk_sched_metrics_forget_pod(d->metrics, p->uid);
	}
	pthread_rwlock_unlock(&d->names_lock);
	sk_pod_unref(p);
}

/* ---------- node informer handlers ---------- */

static struct sk_node *decode_node(struct sk_daemon *d, const cJSON *obj)
{
	char *err = NULL;
	struct kube_text *t = kube_informer_text_of(d->nodes, obj);
	sk_obj_raw_offer(obj, t);
	struct sk_node *n = sk_node_decode(obj, &err);
	sk_obj_raw_offer(NULL, NULL);
	kube_text_unref(t);
	if (!n) {
		klog_error("Cannot decode node", " node=%s err=\"%s\"", kube_meta_name(obj) ? kube_meta_name(obj) : "",
			   err ? err : "");
		free(err);
	}
	return n;
}

static void on_node_add(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	struct sk_node *n = decode_node(d, obj);
	if (!n)
		return;
	char *err = NULL;
	if (sk_cache_add_node(d->cache, n, &err) == 0)
		sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_NODE_ADD, NULL, n);
	else
		klog_error("Scheduler cache AddNode failed", " node=%s err=\"%s\"", n->name, err ? err : "");
	free(err);
	sk_node_unref(n);
}

static void on_node_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	struct sk_daemon *d = ctx;
	struct sk_node *n = decode_node(d, new_obj);
	struct sk_node *o = n ? decode_node(d, old_obj) : NULL;
	char *err = NULL;
	if (n && sk_cache_update_node(d->cache, n, &err) == 0) {
		uint32_t actions = sk_node_update_actions(o, n) | sk_node_object_update_actions(old_obj, new_obj);
		if (actions) {
			struct sk_cluster_event ev = { .resource = SK_EV_NODE, .action = actions, .label = "NodeUpdate" };
			sk_queue_move_all(sk_scheduler_queue(d->sched), &ev, o, n);
		}
	} else if (n) {
		klog_error("Scheduler cache UpdateNode failed", " node=%s err=\"%s\"", n->name, err ? err : "");
	}
	free(err);
	sk_node_unref(o);
	sk_node_unref(n);
}

static void on_node_delete(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	const char *name = kube_meta_name(obj);
	char *err = NULL;
	if (name && sk_cache_remove_node(d->cache, name, &err) != 0)
		klog_error("Scheduler cache RemoveNode failed", " node=%s err=\"%s\"", name, err ? err : "");
	free(err);
}

/* ---------- scheduler_event_handling_duration_seconds ----------
 * Each handler timed as a whole (pkg/scheduler/eventhandlers.go times each of its handlers), by
 * the event it handles: an assigned or an unscheduled pod's add/update/delete, a node's. */

static void handled(void *ctx, const char *event, int64_t t0)
{
	struct sk_daemon *d = ctx;
	sk_sched_metrics_event_handled(d->metrics, event, (double)(kube_mono_ns() - t0) / 1e9);
}

static bool assigned(const cJSON *obj)
{
	const char *n = kube_obj_get_string(obj, "spec.nodeName");
	return n && *n;
}

static void timed_pod_add(void *ctx, const cJSON *obj)
{
	int64_t t0 = kube_mono_ns();
	on_pod_add(ctx, obj);
	handled(ctx, assigned(obj) ? "AssignedPodAdd" : "PodAdd", t0);
}

static void timed_pod_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	int64_t t0 = kube_mono_ns();
	on_pod_update(ctx, old_obj, new_obj);
	handled(ctx, assigned(new_obj) ? "AssignedPodUpdate" : "PodUpdate", t0);
}

static void timed_pod_delete(void *ctx, const cJSON *obj)
{
	int64_t t0 = kube_mono_ns();
	on_pod_delete(ctx, obj);
	handled(ctx, assigned(obj) ? "AssignedPodDelete" : "PodDelete", t0);
}

static void timed_node_add(void *ctx, const cJSON *obj)
{
	int64_t t0 = kube_mono_ns();
	on_node_add(ctx, obj);
	handled(ctx, "NodeAdd", t0);
}

static void timed_node_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	int64_t t0 = kube_mono_ns();
	on_node_update(ctx, old_obj, new_obj);
	handled(ctx, "NodeUpdate", t0);
}

static void timed_node_delete(void *ctx, const cJSON *obj)
{
	int64_t t0 = kube_mono_ns();
	on_node_delete(ctx, obj);
	handled(ctx, "NodeDelete", t0);
}

void sk_dm_add_handlers(struct sk_daemon *d)
{
	/* what on_pod_update_text reads; the informer keeps pointers to these static name lists */
	const char *const *paths[1 + SK_POD_ECHO_NPATHS];
	paths[0] = uid_path;
	for (int i = 0; i < SK_POD_ECHO_NPATHS; i++)
		paths[1 + i] = sk_pod_echo_paths[i];
	kube_informer_add_handlers_with_text(d->pods, &(struct kube_informer_handlers){ timed_pod_add, timed_pod_update,
										timed_pod_delete, d },
					     on_pod_update_text, paths, 1 + SK_POD_ECHO_NPATHS);
	kube_informer_add_handlers(d->nodes, &(struct kube_informer_handlers){ timed_node_add, timed_node_update,
									       timed_node_delete, d });
}
