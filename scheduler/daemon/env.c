/* The environment of the daemon's frameworks (one per profile and generation: bind, events,
 * metrics, preemption) and of its scheduler (cache, informer lookups, failure patches), the set
 * of pods whose binding got 409, and the status-patch worker that writes PodScheduled=False. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/featuregate.h"
#include "kube/hash.h"
#include "kube/jsonw.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/text.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"

/* ---------- 409 conflicts: pods someone else bound (or that are being deleted) ---------- */

void sk_dm_conflict_add(struct sk_daemon *d, const char *uid)
{
	struct conflict *c = calloc(1, sizeof *c);
	if (!c || !(c->uid = strdup(uid))) {
		free(c);
		return;
	}
	uint32_t b = kube_fnv1a32(uid) % CONFLICT_BUCKETS;
	pthread_mutex_lock(&d->conflict_mu);
	c->next = d->conflicts[b];
	d->conflicts[b] = c;
	pthread_mutex_unlock(&d->conflict_mu);
}

/* Tests (and with remove, clears) membership. */
bool sk_dm_conflict_has(struct sk_daemon *d, const char *uid, bool remove)
{
	uint32_t b = kube_fnv1a32(uid) % CONFLICT_BUCKETS;
	bool found = false;
	pthread_mutex_lock(&d->conflict_mu);
	for (struct conflict **pp = &d->conflicts[b]; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->uid, uid)) {
			found = true;
			if (remove) {
				struct conflict *c = *pp;
				*pp = c->next;
				free(c->uid);
				free(c);
			}
			break;
		}
	pthread_mutex_unlock(&d->conflict_mu);
	return found;
}

static void ref_member(cJSON *parent, cJSON *prev, cJSON *item, const char *key, const char *value)
{
	/* a string item that owns nothing: key and value are borrowed (never cJSON_Delete'd) */
	*item = (cJSON){ .type = cJSON_String | cJSON_IsReference | cJSON_StringIsConst, .string = (char *)key,
			 .valuestring = (char *)value };
	if (prev) {
		prev->next = item;
		item->prev = prev;
	} else {
		parent->child = item;
	}
	parent->child->prev = item; /* cJSON keeps the first child's prev at the last one */
}

const cJSON *sk_dm_pod_ref(struct sk_dm_pod_ref *r, const struct sk_pod *pod)
{
	*r = (struct sk_dm_pod_ref){ 0 };
	if (!pod->ns || !pod->name)
		return NULL;
	r->root.type = cJSON_Object;
	ref_member(&r->root, NULL, &r->meta, "metadata", NULL);
	r->meta.type = cJSON_Object | cJSON_StringIsConst;
	ref_member(&r->root, &r->meta, &r->kind, "kind", "Pod");
	ref_member(&r->root, &r->kind, &r->api, "apiVersion", "v1");
	ref_member(&r->meta, NULL, &r->ns, "namespace", pod->ns);
	ref_member(&r->meta, &r->ns, &r->name, "name", pod->name);
	ref_member(&r->meta, &r->name, &r->uid, "uid", pod->uid ? pod->uid : "");
	if (pod->resource_version)
		ref_member(&r->meta, &r->uid, &r->rv, "resourceVersion", pod->resource_version);
	return &r->root;
}

/* ---------- framework env ---------- */

static const struct sk_snapshot *fw_snapshot(void *ctx)
{
	struct profile_ctx *pc = ctx;
	return sk_scheduler_snapshot(pc->d->sched);
}

/* The v1 Binding of pod to node_name as JSON text (no cJSON tree: one per bound pod). Caller
 * frees; NULL on OOM. */
static char *binding_body(const struct sk_pod *pod, const char *node_name)
{
	struct kube_jsonw w = {0};
	kube_jsonw_raw(&w, "{\"metadata\":{\"name\":");
	kube_jsonw_str(&w, pod->name);
	kube_jsonw_raw(&w, ",\"namespace\":");
	kube_jsonw_str(&w, pod->ns);
	if (pod->uid && *pod->uid) {   /* the UID precondition; omitted when empty, as upstream's omitempty */
		kube_jsonw_raw(&w, ",\"uid\":");
		kube_jsonw_str(&w, pod->uid);
	}
	kube_jsonw_raw(&w, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
	kube_jsonw_str(&w, node_name);
	kube_jsonw_raw(&w, "},\"apiVersion\":\"v1\",\"kind\":\"Binding\"}");
	return kube_jsonw_finish(&w);
}

/* DefaultBinder: POST pods/<name>/binding. A 409 means someone else bound the pod (or it is
 * being deleted): remember it so the failure path forgets the pod instead of requeueing it. */
static int fw_bind(void *ctx, const struct sk_pod *pod, const char *node_name, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	struct profile_ctx *pc = ctx;
	struct sk_daemon *d = pc->d;
	char *path = kube_path("", "v1", "pods", pod->ns, pod->name, "binding");
	char *b = binding_body(pod, node_name);
	if (!path || !b) {
		free(path);
		free(b);
		return kube_errf(err, "binding pod %s/%s: out of memory", pod->ns, pod->name);
	}
	/* Shutting down with the API server gone: fail the queued bindings at once instead of
	 * retrying each of them (the pods stay pending for the next leader). */
	if (atomic_load(&d->stopping) && atomic_load(&d->api_down)) {
		free(path);
		free(b);
		return kube_errf(err, "binding pod %s/%s: the API server is unreachable and the scheduler is stopping",
			    pod->ns, pod->name);
	}
	/* A reload that removed this profile waits for the POSTs in flight, then refuses the rest:
	 * once the reload returns, no pod of a removed profile is bound. */
	pthread_mutex_lock(&pc->bind_mu);
	bool removed = atomic_load(&pc->removed);
	if (!removed)
		pc->binds++;
	pthread_mutex_unlock(&pc->bind_mu);
	if (removed) {
		free(path);
		free(b);
		return kube_errf(err, "binding pod %s/%s: profile %s was removed by a configuration reload", pod->ns,
			    pod->name, pc->name);
	}
	struct kube_error ke = { 0 };
	int rc = kube_create_text(d->client, path, b, NULL, &ke);
	free(path);
	free(b);
	/* The test hook runs inside the in-flight window, so a reload that returned has seen it. */
	if (d->opts.on_binding)
		d->opts.on_binding(d->opts.on_binding_ctx, pod, node_name, rc == 0 ? 201 : ke.http_code);
	pthread_mutex_lock(&pc->bind_mu);
	if (--pc->binds == 0)
		pthread_cond_broadcast(&pc->bind_cv);
	pthread_mutex_unlock(&pc->bind_mu);
	if (rc == 0)
		return 0;
	if (ke.http_code == 0 && atomic_load(&d->stopping))
		atomic_store(&d->api_down, true);
	if (ke.http_code == 409) {
		sk_dm_conflict_add(d, pod->uid);
		sk_sched_metrics_binding_conflict(d->metrics);
		klog_warning("Binding conflict: the pod is bound already or being deleted; not retrying",
			     " pod=%s/%s node=%s err=\"%s\"", pod->ns, pod->name, node_name, ke.message);
	}
	return kube_errf(err, "%s", ke.message[0] ? ke.message : "binding failed");
}

static void fw_event(void *ctx, const struct sk_pod *pod, const char *type, const char *reason, const char *action,
		     const char *note)
{
	struct profile_ctx *pc = ctx;
	if (atomic_load(&pc->removed))
		return; /* not ours any more: leave the pod alone */
	struct sk_dm_pod_ref r;
	const cJSON *ref = sk_dm_pod_ref(&r, pod);
	if (ref)
		kube_event_record(pc->rh->rec, ref, type, reason, action, "%s", note);
}

static void fw_observe(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
		       double seconds)
{
	struct profile_ctx *pc = ctx;
	sk_sched_metrics_observe_point(pc->d->metrics, profile, point, plugin, code, seconds);
}

static void fw_evaluated(void *ctx, const char *profile, const char *point, const char *plugin, double n)
{
	struct profile_ctx *pc = ctx;
	sk_sched_metrics_plugin_evaluated(pc->d->metrics, profile, point, plugin, n);
}

static void fw_working(void *ctx, const char *operation, int delta)
{
	struct profile_ctx *pc = ctx;
	sk_sched_metrics_goroutines(pc->d->metrics, operation, delta);
}

static void se_working(void *ctx, const char *operation, int delta)
{
	struct sk_daemon *d = ctx;
	sk_sched_metrics_goroutines(d->metrics, operation, delta);
}

static void fw_permit_waited(void *ctx, enum sk_code code, double seconds)
{
	struct profile_ctx *pc = ctx;
	sk_sched_metrics_permit_waited(pc->d->metrics, code, seconds);
}

/* ---------- scheduler env ---------- */

static const struct sk_snapshot *se_update_snapshot(void *ctx, char **err)
{
	struct sk_daemon *d = ctx;
	return sk_cache_update_snapshot(d->cache, d->snap, err) == 0 ? d->snap : NULL;
}
static int se_assume(void *ctx, struct sk_pod *p, char **err) { return sk_cache_assume_pod(((struct sk_daemon *)ctx)->cache, p, err); }
static int se_forget(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_forget_pod(((struct sk_daemon *)ctx)->cache, p, err); }
static int se_finish(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_finish_binding(((struct sk_daemon *)ctx)->cache, p, err); }
static bool se_is_assumed(void *ctx, const char *uid) { return sk_cache_is_assumed(((struct sk_daemon *)ctx)->cache, uid); }

/* The informer's copy; NULL when gone, replaced by a pod of the same name, or when our binding
 * got 409 (someone else bound it: never requeue). Decoded from the store's text, which the view
 * then shares (a print of the tree per call was as costly as the parse: docs/benchmarks.md,
 * "The daemon's cost per preemptor"). */
static struct sk_pod *se_get_pod(void *ctx, const struct sk_pod *pod)
{
	struct sk_daemon *d = ctx;
	if (sk_dm_conflict_has(d, pod->uid, false))
		return NULL;
	/* A reload removed its profile while it was in flight: not requeued. */
	if (!sk_dm_is_ours(d, pod->scheduler_name))
		return NULL;
	char key[512];
	snprintf(key, sizeof key, "%s/%s", pod->ns, pod->name);
	size_t len = 0;
	char *json = kube_store_get_json(d->pods, key, &len);
	struct kube_text *t = json ? kube_text_new(json, len) : NULL;
	free(json);
	cJSON *obj = t ? cJSON_ParseWithLength(t->s, t->len) : NULL;
	if (json && !obj)
		klog_error("Informer store: cannot read an object: out of memory", " key=%s", key);
	const char *uid = obj ? kube_meta_uid(obj) : NULL;
	struct sk_pod *out = uid && !strcmp(uid, pod->uid) ? sk_dm_decode_pod_text(obj, t) : NULL;
	cJSON_Delete(obj);
	kube_text_unref(t);
	return out;
}

/* ---------- framework env: preemption (ctx = struct profile_ctx *) ---------- */

static struct sk_daemon *pc_daemon(void *ctx) { return ((struct profile_ctx *)ctx)->d; }

static int fw_list_pdbs(void *ctx, struct sk_pdb ***out, char **err)
{
	*out = NULL;
	return sk_preempt_list_pdbs(pc_daemon(ctx)->preempt, out, err);
}

static struct sk_pod *fw_get_pod(void *ctx, const struct sk_pod *pod) { return se_get_pod(pc_daemon(ctx), pod); }

static int64_t fw_pod_start_time(void *ctx, const struct sk_pod *pod)
{
	return sk_preempt_pod_start_time(pc_daemon(ctx)->preempt, pod);
}

static bool fw_terminating_by_preemption(void *ctx, const struct sk_pod *pod)
{
	return sk_preempt_terminating_by_preemption(pc_daemon(ctx)->preempt, pod);
}

/* Evicts a victim. A profile dropped by a reload evicts nothing, as it binds nothing. */
static int fw_preempt_victim(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim, const char *node,
			     const char *msg, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	struct profile_ctx *pc = ctx;
	if (atomic_load(&pc->removed))
		return kube_errf(err, "preempting for pod %s/%s: profile %s was removed by a configuration reload",
			    preemptor->ns, preemptor->name, pc->name);
	int rc = sk_preempt_victim(pc->d->preempt, preemptor, victim, node, msg, err);
	if (rc >= 0)
		sk_sched_metrics_victim(pc->d->metrics, preemptor->uid);
	return rc;
}

static int fw_clear_nominated(void *ctx, const struct sk_pod *pod, char **err)
{
	return sk_preempt_clear_nominated(pc_daemon(ctx)->preempt, pod, err);
}

/* --feature-gates (validated at start-up): the given value, else the gate's default. Asked at
 * plugin init only. */
static bool fw_feature_enabled(void *ctx, const char *gate)
{
	struct sk_daemon *d = pc_daemon(ctx);
	int *set = malloc(kube_nfeature_gates * sizeof(*set));
	if (!set)
		return kube_feature_gate_enabled(NULL, gate);
	for (size_t i = 0; i < kube_nfeature_gates; i++)
		set[i] = -1;
	for (int i = 0; d->opts.feature_gates && d->opts.feature_gates[i]; i++) {
		char *e = NULL;
		if (kube_feature_gates_parse(d->opts.feature_gates[i], set, &e) != 0)
			free(e); /* refused at start-up already */
	}
	bool on = kube_feature_gate_enabled(set, gate);
	free(set);
	return on;
}

static void fw_activate(void *ctx, const struct sk_pod *pod)
{
	char key[512];
	snprintf(key, sizeof key, "%s/%s", pod->ns, pod->name);
	char *keys[1] = { key };
	sk_queue_activate(sk_scheduler_queue(pc_daemon(ctx)->sched), keys, 1);
}

static bool fw_pod_deleted(void *ctx, const struct sk_pod *pod)
{
	return sk_preempt_pod_deleted(pc_daemon(ctx)->preempt, pod);
}

/* sk_handle_patch_pod_annotation: a JSON merge patch of metadata.annotations, synchronous (the
 * plugin calls it at PreBind or later, on a binder thread; its result decides the binding). */
static int fw_patch_annotation(void *ctx, const struct sk_pod *pod, const char *key, const char *value, char **err)
{
	struct profile_ctx *pc = ctx;
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
	cJSON *ann = meta ? cJSON_AddObjectToObject(meta, "annotations") : NULL;
	bool ok = ann && cJSON_AddStringToObject(ann, key, value);
	char *path = ok ? kube_path("", "v1", "pods", pod->ns, pod->name, NULL) : NULL;
	struct kube_error ke = { 0 };
	int rc = 0;
	if (!path)
		rc = kube_errf(err, "annotating pod %s/%s: out of memory", pod->ns, pod->name);
	else if (kube_patch(pc->d->client, path, KUBE_PATCH_MERGE, patch, NULL, &ke) != 0)
		rc = kube_errf(err, "annotating pod %s/%s with %s: %s", pod->ns, pod->name, key, ke.message);
	free(path);
	cJSON_Delete(patch);
	return rc;
}

/* sk_handle_api_get: a GET through the daemon's client (its QPS limiter and retries apply; the
 * caller is a plugin's own thread, so blocking here holds up no scheduling cycle). */
static int fw_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	struct profile_ctx *pc = ctx;
	const char *q = strchr(path, '?');
	char *p = q ? strndup(path, (size_t)(q - path)) : strdup(path);
	struct kube_error ke = { 0 };
	if (!p)
		return kube_errf(err, "GET %s: out of memory", path);
	int rc = kube_request(pc->d->client, "GET", p, q && q[1] ? q + 1 : NULL, NULL, NULL, out, &ke);
	free(p);
	if (rc != 0)
		return kube_errf(err, "GET %s: %s", path, ke.message[0] ? ke.message : "request failed");
	if (!*out)
		return kube_errf(err, "GET %s: empty response", path);
	return 0;
}

static void patch_job_free(struct patch_job *j)
{
	if (!j)
		return;
	free(j->ns);
	free(j->name);
	free(j->uid);
	free(j->reason);
	free(j->message);
	free(j->nominated_node);
	free(j);
}

/* Queued for the patch thread: the scheduling thread never waits on this HTTP call. */
static void se_patch_failure(void *ctx, const struct sk_pod *pod, const char *reason, const char *message,
			     bool nominate, const char *nominated_node)
{
	struct sk_daemon *d = ctx;
	/* Someone else bound it (409): never mark a bound pod PodScheduled=False. A pod whose
	 * profile a reload removed is not ours any more. */
	if (sk_dm_conflict_has(d, pod->uid, false) || !sk_dm_is_ours(d, pod->scheduler_name))
		return;
	struct patch_job *j = calloc(1, sizeof *j);
	if (!j || !(j->ns = strdup(pod->ns)) || !(j->name = strdup(pod->name)) || !(j->uid = strdup(pod->uid)) ||
	    !(j->reason = strdup(reason)) || !(j->message = strdup(message ? message : "")) ||
	    !(j->nominated_node = strdup(nominated_node ? nominated_node : ""))) {
		patch_job_free(j);
		klog_error("Cannot queue the pod status update: out of memory", " pod=%s/%s", pod->ns, pod->name);
		return;
	}
	j->nominate = nominate;
	pthread_mutex_lock(&d->patch_mu);
	if (d->patch_tail)
		d->patch_tail->next = j;
	else
		d->patch_head = j;
	d->patch_tail = j;
	d->npatch_pending++;
	pthread_cond_broadcast(&d->patch_cv);
	pthread_mutex_unlock(&d->patch_mu);
}

struct cond_check {
	const char *uid, *reason, *message, *nominated;
	bool nominate;
	bool exists, cond_same, nom_same, status_false;
};

static void cond_check_fn(const cJSON *obj, void *u)
{
	struct cond_check *c = u;
	const char *uid = obj ? kube_meta_uid(obj) : NULL;
	if (!uid || strcmp(uid, c->uid) || kube_obj_get_string(obj, "spec.nodeName"))
		return;
	c->exists = true;
	const cJSON *cond = kube_condition_find(kube_obj_get(obj, "status.conditions"), "PodScheduled");
	const char *st = cond ? kube_obj_get_string(cond, "status") : NULL;
	const char *re = cond ? kube_obj_get_string(cond, "reason") : NULL;
	const char *me = cond ? kube_obj_get_string(cond, "message") : NULL;
	c->status_false = st && !strcmp(st, "False");
	c->cond_same = c->status_false && re && !strcmp(re, c->reason) && me && !strcmp(me, c->message);
	const char *nn = kube_obj_get_string(obj, "status.nominatedNodeName");
	c->nom_same = !c->nominate || !strcmp(nn ? nn : "", c->nominated);
}

static void do_patch(struct sk_daemon *d, const struct patch_job *j)
{
	char key[512];
	snprintf(key, sizeof key, "%s/%s", j->ns, j->name);
	struct cond_check c = { .uid = j->uid, .reason = j->reason, .message = j->message,
				.nominated = j->nominated_node, .nominate = j->nominate };
	kube_store_get_with(d->pods, key, cond_check_fn, &c);
	if (!c.exists || (c.cond_same && c.nom_same))
		return; /* gone, bound, or nothing would change */
	char now[32];
	kube_time_rfc3339(now, time(NULL));
	cJSON *patch = cJSON_CreateObject();
	cJSON *status = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
	cJSON *conds = status ? cJSON_AddArrayToObject(status, "conditions") : NULL;
	cJSON *cond = cJSON_CreateObject();
	bool ok = conds && cond && cJSON_AddItemToArray(conds, cond);
	if (!ok)
		cJSON_Delete(cond);
	ok = ok && cJSON_AddStringToObject(cond, "type", "PodScheduled") &&
	     cJSON_AddStringToObject(cond, "status", "False") && cJSON_AddStringToObject(cond, "reason", j->reason) &&
	     cJSON_AddStringToObject(cond, "message", j->message) && cJSON_AddNullToObject(cond, "lastProbeTime");
	if (ok && !c.status_false)
		ok = cJSON_AddStringToObject(cond, "lastTransitionTime", now) != NULL;
	if (ok && !c.nom_same)
		ok = (*j->nominated_node ? cJSON_AddStringToObject(status, "nominatedNodeName", j->nominated_node)
					 : cJSON_AddNullToObject(status, "nominatedNodeName")) != NULL;
	char *path = ok ? kube_path("", "v1", "pods", j->ns, j->name, "status") : NULL;
	struct kube_error ke = { 0 };
	if (!path)
		klog_error("Cannot build the pod status patch: out of memory", " pod=%s", key);
	else if (kube_patch(d->client, path, KUBE_PATCH_STRATEGIC, patch, NULL, &ke) != 0 && ke.http_code != 404)
		klog_error("Error updating pod", " pod=%s err=\"%s\"", key, ke.message);
	free(path);
	cJSON_Delete(patch);
}

void *sk_dm_patch_main(void *arg)
{
	struct sk_daemon *d = arg;
	pthread_mutex_lock(&d->patch_mu);
	for (;;) {
		while (!d->patch_head && !d->patch_stop)
			pthread_cond_wait(&d->patch_cv, &d->patch_mu);
		/* On stop, pending patches are dropped (freed by sk_daemon_free): the next leader
		 * re-evaluates those pods and writes their conditions again. */
		if (!d->patch_head || d->patch_stop)
			break;
		struct patch_job *j = d->patch_head;
		d->patch_head = j->next;
		if (!d->patch_head)
			d->patch_tail = NULL;
		d->patch_busy = true;
		pthread_mutex_unlock(&d->patch_mu);
		do_patch(d, j);
		patch_job_free(j);
		pthread_mutex_lock(&d->patch_mu);
		d->patch_busy = false;
		d->npatch_pending--;
		pthread_cond_broadcast(&d->patch_cv);
	}
	pthread_mutex_unlock(&d->patch_mu);
	return NULL;
}

static void se_observe(void *ctx, const struct sk_outcome *o)
{
	struct sk_daemon *d = ctx;
	sk_sched_metrics_attempt(d->metrics, o, kube_mono_ns());
	sk_summary_add_outcome(d->summary, o, kube_mono_ns() / 1000000000LL);
	if (o->record || o->annotate) {
		struct sk_decision *r = sk_decision_build(o, 0, sk_decisions_now_ns(d->decisions));
		if (o->record)
			sk_decisions_insert(d->decisions, r);
		if (o->annotate)
			sk_annotator_add(d->annotator, r);
		sk_decision_unref(r);
	}
	if (o->result != SK_RESULT_SCHEDULED)
		sk_dm_incoming(d, o->pod, "ScheduleAttemptFailure");
}

void sk_dm_framework_env(struct profile_ctx *pc, struct sk_framework_env *out)
{
	struct sk_daemon *d = pc->d;
	*out = (struct sk_framework_env){
		.ctx = pc, .pool = d->pool, .nominator = d->nom, .snapshot = fw_snapshot,
		.bind = fw_bind, .event = fw_event, .observe = fw_observe, .evaluated = fw_evaluated,
		.permit_waited = fw_permit_waited, .working = fw_working,
		.list_pdbs = fw_list_pdbs, .get_pod = fw_get_pod, .pod_start_time = fw_pod_start_time,
		.terminating_by_preemption = fw_terminating_by_preemption,
		.preempt_victim = fw_preempt_victim, .clear_nominated = fw_clear_nominated,
		.patch_pod_annotation = fw_patch_annotation, .api_get = fw_api_get,
		.volumes = pc->d->volumes, .api_patch = sk_dm_api_patch, .listers = &pc->d->listers,
		.feature_enabled = fw_feature_enabled, .activate = fw_activate, .pod_deleted = fw_pod_deleted,
	};
}

void sk_dm_sched_env(struct sk_daemon *d, const struct sk_config *cfg, struct sk_sched_env *out)
{
	*out = (struct sk_sched_env){
		.ctx = d,
		.update_snapshot = se_update_snapshot,
		.assume = se_assume,
		.forget = se_forget,
		.finish_binding = se_finish,
		.is_assumed = se_is_assumed,
		.get_pod = se_get_pod,
		.patch_failure = se_patch_failure,
		.observe = se_observe,
		.working = se_working,
		.binder_threads = d->opts.binder_threads > 0 ? d->opts.binder_threads : DEFAULT_BINDER_THREADS,
		.nominator = d->nom,
		.queue = {
			.initial_backoff_ns = cfg->pod_initial_backoff_seconds * 1000000000LL,
			.max_backoff_ns = cfg->pod_max_backoff_seconds * 1000000000LL,
		},
	};
}

void sk_dm_free_pending(struct sk_daemon *d)
{
	for (struct patch_job *j = d->patch_head, *n; j; j = n) {
		n = j->next;
		patch_job_free(j);
	}
	d->patch_head = d->patch_tail = NULL;
	for (int b = 0; b < CONFLICT_BUCKETS; b++) {
		for (struct conflict *c = d->conflicts[b], *n; c; c = n) {
			n = c->next;
			free(c->uid);
			free(c);
		}
		d->conflicts[b] = NULL;
	}
}
