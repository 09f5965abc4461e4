/* Reconcile against the API server, and the informer/queue/worker machinery around it. */
#include "operator/controller.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"
#include "kube/informer.h"
#include "kube/log.h"
#include "kube/metrics.h"
#include "kube/object.h"
#include "kube/util.h"
#include "operator/history.h"
#include "operator/plan.h"
#include "operator/plugins.h"
#include "operator/settings.h"
#include "operator/queue.h"
#include "operator/status.h"
#include "operator/status_decisions.h"

#define QUEUE_KEY "reconcile"
/* Apply order: identity and permissions before the workload that uses them. */
static const enum op_kind apply_order[OP_OBJ_COUNT] = {
	OP_OBJ_SERVICE_ACCOUNT, OP_OBJ_CLUSTER_ROLE, OP_OBJ_CLUSTER_ROLE_BINDING, OP_OBJ_ROLE,
	OP_OBJ_ROLE_BINDING,    OP_OBJ_CONFIGMAP,    OP_OBJ_SERVICE,              OP_OBJ_DEPLOYMENT,
	OP_OBJ_PDB,
};

static const char *ns_of(const struct op_controller_opts *o)
{
	return o->res.namespace ? o->res.namespace : OP_DEFAULT_NAMESPACE;
}

static char *object_path(enum op_kind k, const char *ns, bool with_name)
{
	const struct op_kind_info *ki = op_kind_info(k);
	return kube_path(ki->group, ki->version, ki->resource, ki->namespaced ? ns : NULL, with_name ? ki->name : NULL,
			 NULL);
}

void op_snapshot_free(struct op_snapshot *s)
{
	if (!s)
		return;
	cJSON_Delete(s->profiles);
	cJSON_Delete(s->splugins);
	for (int k = 0; k < OP_OBJ_COUNT; k++)
		cJSON_Delete(s->owned[k]);
	cJSON_Delete(s->lease);
	memset(s, 0, sizeof *s);
}

int op_snapshot_fetch(struct kube_client *client, const char *ns, struct op_snapshot *s, struct kube_error *e)
{
	memset(s, 0, sizeof *s);
	char *path = kube_path(OP_API_GROUP, OP_API_VERSION, OP_RESOURCE, NULL, NULL, NULL);
	cJSON *list = NULL;
	int rc = path ? kube_list(client, path, NULL, NULL, &list, e) : -1;
	free(path);
	if (rc)
		return -1;
	cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	cJSON_Delete(list);
	s->profiles = items && cJSON_IsArray(items) ? items : cJSON_CreateArray();
	if (items && s->profiles != items)
		cJSON_Delete(items);
	/* SchedulerPlugins; a cluster without their CRD yet simply has none */
	path = kube_path(OP_API_GROUP, OP_API_VERSION, OP_PLUGIN_RESOURCE, NULL, NULL, NULL);
	list = NULL;
	rc = path ? kube_list(client, path, NULL, NULL, &list, e) : -1;
	free(path);
	if (rc && !(e && kube_error_is_not_found(e))) {
		op_snapshot_free(s);
		return -1;
	}
	items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	cJSON_Delete(list);
	s->splugins = items && cJSON_IsArray(items) ? items : cJSON_CreateArray();
	if (items && s->splugins != items)
		cJSON_Delete(items);
	for (int k = 0; k < OP_OBJ_COUNT; k++) {
		path = object_path(k, ns, true);
		cJSON *o = NULL;
		if (!path || kube_get(client, path, &o, e) != 0) {
			free(path);
			if (e && kube_error_is_not_found(e))
				continue;
			op_snapshot_free(s);
			return -1;
		}
		free(path);
		/* only labelled objects count as ours, as the informers see it */
		const char *mb = kube_meta_label(o, OP_LABEL_MANAGED_BY);
		if (mb && !strcmp(mb, OP_MANAGED_BY))
			s->owned[k] = o;
		else
			cJSON_Delete(o);
	}
	path = kube_path("coordination.k8s.io", "v1", "leases", ns, OP_SCHEDULER_NAME, NULL);
	if (!path || kube_get(client, path, &s->lease, e) != 0) {
		s->lease = NULL;
		if (!path || !(e && kube_error_is_not_found(e))) {
			free(path);
			op_snapshot_free(s);
			return -1;
		}
	}
	free(path);
	return 0;
}

/* Creates or repairs one owned object. 1 when it wrote, 0 when nothing to do, -1 on error. */
static int ensure_object(struct kube_client *client, enum op_kind k, const char *ns, const cJSON *live,
			 const cJSON *desired, char **err)
{
	const struct op_kind_info *ki = op_kind_info(k);
	struct kube_error e = { 0 };
	cJSON *fetched = NULL;
	int rc = -1;
	if (live && op_object_matches(k, live, desired))
		return 0;
	if (!live) {
		char *coll = object_path(k, ns, false);
		if (coll && kube_create(client, coll, desired, NULL, &e) == 0) {
			free(coll);
			klog_info(0, "Created owned object", " kind=%s namespace=%s name=%s", ki->kind, ki->namespaced ? ns : "",
				  ki->name);
			return 1;
		}
		free(coll);
		if (!kube_error_is(&e, "AlreadyExists")) {
			kube_errf_first(err, "create %s %s: %s", ki->kind, ki->name, e.message);
			return -1;
		}
		/* Exists without our label (hand-edited, or made by someone else): take it over. */
		char *p = object_path(k, ns, true);
		if (!p || kube_get(client, p, &fetched, &e) != 0) {
			free(p);
			kube_errf_first(err, "get %s %s: %s", ki->kind, ki->name, e.message);
			return -1;
		}
		free(p);
		live = fetched;
		if (op_object_matches(k, live, desired)) {
			cJSON_Delete(fetched);
			return 0;
		}
	}
	cJSON *body = op_object_overlay(k, live, desired);
	char *p = object_path(k, ns, true);
	if (body && p && kube_update(client, p, body, NULL, &e) == 0) {
		klog_info(0, "Repaired owned object", " kind=%s namespace=%s name=%s", ki->kind, ki->namespaced ? ns : "",
			  ki->name);
		rc = 1;
	} else {
		kube_errf_first(err, "update %s %s: %s", ki->kind, ki->name, body && p ? e.message : "out of memory");
	}
	free(p);
	cJSON_Delete(body);
	cJSON_Delete(fetched);
	return rc;
}

/* Records the last accepted spec on the profile; *obj becomes the patched object. */
static int record_last_accepted(struct kube_client *client, const struct op_profile_result *r, cJSON **obj,
				char **err)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *ann = cJSON_CreateObject();
	cJSON *md = cJSON_CreateObject();
	struct kube_error e = { 0 };
	int rc = -1;
	if (!patch || !ann || !md || !cJSON_AddStringToObject(ann, OP_LAST_ACCEPTED_ANNOTATION, r->last_accepted) ||
	    !cJSON_AddItemToObject(md, "annotations", ann)) {
		cJSON_Delete(ann);
		cJSON_Delete(md);
		goto out;
	}
	if (!cJSON_AddItemToObject(patch, "metadata", md)) {
		cJSON_Delete(md);
		goto out;
	}
	char *path = kube_path(OP_API_GROUP, OP_API_VERSION, OP_RESOURCE, NULL, r->name, NULL);
	cJSON *resp = NULL;
	if (path && kube_patch(client, path, KUBE_PATCH_MERGE, patch, &resp, &e) == 0 && resp) {
		cJSON_Delete(*obj);
		*obj = resp;
		rc = 0;
	} else {
		cJSON_Delete(resp);
		kube_errf_first(err, "record last accepted spec of SchedulerProfile %s: %s", r->name, path ? e.message : "out of memory");
	}
	free(path);
out:
	cJSON_Delete(patch);
	return rc;
}

/* Ready's own Events, when its status changes: Normal "Ready" when it turns True, Warning
 * "NotReady" (note "<reason>: <message>" of the condition) when it turns False after being True.
 * A new profile that is not Ready yet is no news (Accepted and Applied say why). */
static void record_ready(struct kube_event_recorder *rec, const cJSON *obj, const cJSON *old_status,
			 const cJSON *new_status)
{
	const cJSON *o = kube_condition_find(cJSON_GetObjectItemCaseSensitive(old_status, "conditions"), "Ready");
	const cJSON *n = kube_condition_find(cJSON_GetObjectItemCaseSensitive(new_status, "conditions"), "Ready");
	const char *ns = kube_obj_get_string(n, "status"), *os = kube_obj_get_string(o, "status");
	if (!ns || (os && !strcmp(os, ns)))
		return;
	bool ready = !strcmp(ns, "True");
	if (!ready && !(os && !strcmp(os, "True")))
		return;
	const char *msg = kube_obj_get_string(n, "message"), *why = kube_obj_get_string(n, "reason");
	if (ready)
		kube_event_record(rec, obj, "Normal", "Ready", "Ready", "%s", msg ? msg : "");
	else
		kube_event_record(rec, obj, "Warning", "NotReady", "Ready", "%s: %s", why ? why : "", msg ? msg : "");
}

/* An Event when a condition's status or reason changed: what `kubectl describe sp` shows.
 * ntypes 1: Accepted (SchedulerPlugins); 3: Accepted, Applied and Ready (SchedulerProfiles). */
static void record_transitions(struct kube_event_recorder *rec, const cJSON *obj, const cJSON *old_status,
			       const cJSON *new_status, int ntypes)
{
	if (!rec)
		return;
	static const char *const types[] = { "Accepted", "Applied" };
	if (ntypes > 2) {
		record_ready(rec, obj, old_status, new_status);
		ntypes = 2;
	}
	for (int i = 0; i < ntypes; i++) {
		const cJSON *o = kube_condition_find(cJSON_GetObjectItemCaseSensitive(old_status, "conditions"), types[i]);
		const cJSON *n = kube_condition_find(cJSON_GetObjectItemCaseSensitive(new_status, "conditions"), types[i]);
		const char *ns = kube_obj_get_string(n, "status"), *nr = kube_obj_get_string(n, "reason");
		const char *os = kube_obj_get_string(o, "status"), *orr = kube_obj_get_string(o, "reason");
		if (!ns || !nr || (os && orr && !strcmp(os, ns) && !strcmp(orr, nr)))
			continue;
		/* Applied: report reaching it and losing it; Pending/NotInConfig of a new profile is no news
		 * (Accepted already said why) */
		if (i == 1 && strcmp(ns, "True") && !(os && !strcmp(os, "True")))
			continue;
		const char *msg = kube_obj_get_string(n, "message");
		bool warn = !strcmp(ns, "False") && strcmp(nr, OP_APPLIED_PENDING) && strcmp(nr, OP_APPLIED_NOT_IN_CONFIG);
		kube_event_record(rec, obj, warn ? "Warning" : "Normal", nr, types[i], "%s", msg ? msg : "");
	}
}

static int write_status(struct kube_client *client, const char *resource, const char *kind, cJSON *obj,
			cJSON *status, const char *name, char **err)
{
	struct kube_error e = { 0 };
	cJSON *st = cJSON_Duplicate(status, 1);
	if (!st) {
		kube_errf_first(err, "out of memory");
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(obj, "status"))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, "status", st);
	else
		cJSON_AddItemToObject(obj, "status", st);
	char *path = kube_path(OP_API_GROUP, OP_API_VERSION, resource, NULL, name, "status");
	int rc = path ? kube_update(client, path, obj, NULL, &e) : -1;
	if (rc)
		kube_errf_first(err, "update status of %s %s: %s", kind, name, path ? e.message : "out of memory");
	free(path);
	return rc;
}

/* Each SchedulerPlugin's status (written only when it changed). 0, or -1 with *err. */
static int write_plugin_statuses(struct kube_client *client, const struct op_controller_opts *opts,
				 const cJSON *objs, const struct op_plugin_set *set, const char *now,
				 struct op_reconcile_result *res, char **err)
{
	int failed = 0;
	const cJSON *obj;
	cJSON_ArrayForEach(obj, objs) {
		const char *name = kube_meta_name(obj);
		const struct op_plugin_result *r = name ? op_plugin_set_find(set, name) : NULL;
		if (!r)
			continue; /* being deleted */
		res->plugins++;
		res->plugins_accepted += r->accepted;
		cJSON *st = op_plugin_status_desired(obj, r, now);
		cJSON *cur = st ? cJSON_Duplicate(obj, 1) : NULL;
		if (!st || !cur) {
			kube_errf_first(err, "out of memory");
			failed = 1;
		} else if (!op_status_equal(cJSON_GetObjectItemCaseSensitive(cur, "status"), st)) {
			cJSON *old_status = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cur, "status"), 1);
			if (write_status(client, OP_PLUGIN_RESOURCE, OP_PLUGIN_KIND, cur, st, name, err) == 0) {
				record_transitions(opts->events, cur, old_status, st, 1);
				res->writes++;
				klog_info(1, "Updated SchedulerPlugin status", " name=%s accepted=%s reason=%s", name,
					  r->accepted ? "True" : "False", r->reason);
			} else {
				failed = 1;
			}
			cJSON_Delete(old_status);
		}
		cJSON_Delete(cur);
		cJSON_Delete(st);
	}
	return failed ? -1 : 0;
}

int op_reconcile(struct kube_client *client, const struct op_controller_opts *opts, const struct op_snapshot *s,
		 struct op_reconcile_result *res, char **err)
{
	struct op_reconcile_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof *res);
	if (err)
		*err = NULL;
	const char *ns = ns_of(opts);
	struct op_plugin_set plugins;
	char *perr = NULL;
	if (op_plugin_set_build_with(s->splugins, opts->modules, &plugins, &perr) != 0) {
		kube_errf_first(err, "SchedulerPlugins: %s", perr ? perr : "out of memory");
		free(perr);
		return -1;
	}
	/* profiles may name what the accepted SchedulerPlugins provide */
	struct op_render_opts ro = { .lease_namespace = ns, .lease_name = OP_SCHEDULER_NAME,
				     .external_plugins = plugins.external, .modules = opts->modules };
	struct op_plan plan;
	if (op_plan_build(s->profiles, &ro, &plan, &perr) != 0) {
		kube_errf_first(err, "plan: %s", perr ? perr : "out of memory");
		free(perr);
		op_plugin_set_free(&plugins);
		return -1;
	}
	plan.plugins = &plugins;
	/* what each recent configuration held, so Applied is judged per profile (history.h) */
	plan.history = op_history_update(kube_meta_annotation(s->owned[OP_OBJ_CONFIGMAP], OP_PROFILE_HASHES_ANNOTATION),
					 &plan);
	if (!plan.history) {
		kube_errf_first(err, "out of memory");
		op_plan_free(&plan);
		op_plugin_set_free(&plugins);
		return -1;
	}
	int failed = 0;
	for (int i = 0; i < OP_OBJ_COUNT; i++) {
		enum op_kind k = apply_order[i];
		cJSON *desired = op_desired_object(k, &opts->res, &plan);
		if (!desired) {
			kube_errf_first(err, "out of memory");
			failed = 1;
			continue;
		}
		int w = ensure_object(client, k, ns, s->owned[k], desired, err);
		cJSON_Delete(desired);
		if (w < 0)
			failed = 1;
		else
			res->writes += w;
	}

	char lease_ref[256], now[32];
	snprintf(lease_ref, sizeof lease_ref, "%s/%s", ns, OP_SCHEDULER_NAME);
	kube_time_rfc3339(now, time(NULL));
	const char *applied = op_lease_applied_hash(s->lease);
	const char *rejected = op_lease_rejected_error(s->lease, plan.config_hash);
	if (write_plugin_statuses(client, opts, s->splugins, &plugins, now, res, err) != 0)
		failed = 1;
	const cJSON *obj;
	cJSON_ArrayForEach(obj, s->profiles) {
		const char *name = kube_meta_name(obj);
		const struct op_profile_result *r = name ? op_plan_find(&plan, name) : NULL;
		if (!r)
			continue; /* being deleted */
		res->profiles++;
		if (r->accepted)
			res->accepted++;
		else if (!strcmp(r->reason, OP_REASON_CONFLICT))
			res->conflict++;
		else
			res->invalid++;
		cJSON *cur = cJSON_Duplicate(obj, 1);
		if (!cur) {
			kube_errf_first(err, "out of memory");
			failed = 1;
			continue;
		}
		if (r->last_accepted) {
			if (record_last_accepted(client, r, &cur, err) != 0) {
				failed = 1;
				cJSON_Delete(cur);
				continue;
			}
			res->writes++;
		}
		cJSON *st = op_status_desired(cur, r, &plan, applied, rejected, lease_ref, now);
		if (st && op_status_add_decisions(st, s->lease, r->scheduler_name) != 0) {
			cJSON_Delete(st);
			st = NULL;
		}
		if (!st) {
			kube_errf_first(err, "out of memory");
			failed = 1;
		} else if (!op_status_equal(cJSON_GetObjectItemCaseSensitive(cur, "status"), st)) {
			cJSON *old_status = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cur, "status"), 1);
			int wrc = write_status(client, OP_RESOURCE, OP_KIND, cur, st, name, err);
			if (wrc == 0)
				record_transitions(opts->events, cur, old_status, st, 3);
			cJSON_Delete(old_status);
			if (wrc != 0) {
				failed = 1;
			} else {
				res->writes++;
				const cJSON *acc = kube_condition_find(cJSON_GetObjectItemCaseSensitive(st, "conditions"), "Accepted");
				const cJSON *app = kube_condition_find(cJSON_GetObjectItemCaseSensitive(st, "conditions"), "Applied");
				klog_info(1, "Updated SchedulerProfile status", " name=%s accepted=%s reason=%s applied=%s", name,
					  kube_obj_get_string(acc, "status"), kube_obj_get_string(acc, "reason"),
					  kube_obj_get_string(app, "status"));
			}
		}
		cJSON_Delete(st);
		cJSON_Delete(cur);
	}
	res->rendered = plan.nrendered;
	memcpy(res->config_hash, plan.config_hash, sizeof res->config_hash);
	op_plan_free(&plan);
	op_plugin_set_free(&plugins);
	return failed ? -1 : 0;
}

/* ---------------------------------------------------------------- controller */

enum { INF_PROFILES = OP_OBJ_COUNT, INF_PLUGINS, INF_LEASE, INF_COUNT };

struct op_controller {
	struct kube_client *client;
	struct op_controller_opts opts;
	char *ns;
	struct kube_informer *inf[INF_COUNT];
	struct op_queue *queue;
	pthread_t worker;
	pthread_mutex_t mu; /* guards running, pending* */
	bool running;
	atomic_bool stopping;
	atomic_uint_fast64_t reconciles;
	struct kube_metric *m_total, *m_duration, *m_profiles, *m_writes;
	/* op_controller_set_settings: a new version waiting for the worker (guarded by mu), and the
	 * version in force (owned here once one was set; read by the worker only) */
	struct op_settings *pending, *current;
	char *pending_image, *current_image;
	int pending_replicas;
};

static void enqueue(struct op_controller *c)
{
	op_queue_add(c->queue, QUEUE_KEY);
}

static void on_add(void *ctx, const cJSON *obj)
{
	(void)obj;
	enqueue(ctx);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	(void)old_obj;
	(void)new_obj;
	enqueue(ctx);
}

static void on_delete(void *ctx, const cJSON *obj)
{
	(void)obj;
	enqueue(ctx);
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The scheduler's leader renews its Lease every few seconds: only a change of what status reads
 * (the hash annotations, the rejection message, or whether anyone holds it) needs a reconcile. */
static void on_lease_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	if (!same_string(op_lease_applied_hash(old_obj), op_lease_applied_hash(new_obj)) ||
	    !same_string(kube_meta_annotation(old_obj, OP_REJECTED_HASH_ANNOTATION),
			 kube_meta_annotation(new_obj, OP_REJECTED_HASH_ANNOTATION)) ||
	    !same_string(kube_meta_annotation(old_obj, OP_REJECTED_ERROR_ANNOTATION),
			 kube_meta_annotation(new_obj, OP_REJECTED_ERROR_ANNOTATION)) ||
	    op_lease_decisions_changed(old_obj, new_obj))
		enqueue(ctx);
}

int op_controller_new(struct kube_client *client, const struct op_controller_opts *opts, struct op_controller **out,
		      char **err)
{
	*out = NULL;
	struct op_controller *c = calloc(1, sizeof *c);
	if (!c) {
		kube_errf_first(err, "out of memory");
		return -1;
	}
	c->client = client;
	c->opts = *opts;
	c->ns = strdup(ns_of(opts));
	c->opts.res.namespace = c->ns;
	pthread_mutex_init(&c->mu, NULL);
	c->queue = op_queue_new("schedkit_operator", opts->metrics);
	if (!c->ns || !c->queue) {
		op_controller_free(c);
		kube_errf_first(err, "out of memory");
		return -1;
	}
	if (opts->metrics) {
		c->m_total = kube_counter_new(opts->metrics, "schedkit_operator_reconcile_total",
					      "Reconcile passes by result (success, error).", 1, KUBE_LABELS("result"));
		c->m_duration = kube_histogram_new(opts->metrics, "schedkit_operator_reconcile_duration_seconds",
						   "Duration of reconcile passes.", 0, NULL, NULL, 0);
		c->m_profiles = kube_gauge_new(opts->metrics, "schedkit_operator_profiles",
					       "SchedulerProfiles by state (accepted, invalid, conflict, rendered).", 1,
					       KUBE_LABELS("state"));
		c->m_writes = kube_counter_new(opts->metrics, "schedkit_operator_writes_total",
					       "Writes to the API server (creates, repairs, status updates).", 0, NULL);
	}
	int resync = opts->resync_seconds > 0 ? opts->resync_seconds : 600;
	for (int i = 0; i < INF_COUNT; i++) {
		struct kube_informer_opts io = { .resync_seconds = resync };
		if (i < OP_OBJ_COUNT) {
			const struct op_kind_info *ki = op_kind_info(i);
			io.group = ki->group;
			io.version = ki->version;
			io.resource = ki->resource;
			io.ns = ki->namespaced ? c->ns : NULL;
			io.label_selector = OP_MANAGED_SELECTOR;
		} else if (i == INF_PROFILES) {
			io.group = OP_API_GROUP;
			io.version = OP_API_VERSION;
			io.resource = OP_RESOURCE;
		} else if (i == INF_PLUGINS) {
			io.group = OP_API_GROUP;
			io.version = OP_API_VERSION;
			io.resource = OP_PLUGIN_RESOURCE;
		} else {
			io.group = "coordination.k8s.io";
			io.version = "v1";
			io.resource = "leases";
			io.ns = c->ns;
			io.field_selector = "metadata.name=" OP_SCHEDULER_NAME;
		}
		struct kube_informer_handlers h = { on_add, i == INF_LEASE ? on_lease_update : on_update, on_delete, c };
		if (kube_informer_new(client, &io, &c->inf[i]) != 0) {
			op_controller_free(c);
			kube_errf_first(err, "cannot create informer");
			return -1;
		}
		kube_informer_add_handlers(c->inf[i], &h);
	}
	*out = c;
	return 0;
}

int op_controller_start_informers(struct op_controller *c, char **err)
{
	for (int i = 0; i < INF_COUNT; i++) {
		if (kube_informer_start(c->inf[i]) != 0) {
			kube_errf_first(err, "cannot start informer %d", i);
			return -1;
		}
	}
	return 0;
}

bool op_controller_synced(struct op_controller *c)
{
	for (int i = 0; i < INF_COUNT; i++)
		if (!kube_informer_has_synced(c->inf[i]))
			return false;
	return true;
}

static void snapshot_from_caches(struct op_controller *c, struct op_snapshot *s)
{
	memset(s, 0, sizeof *s);
	s->profiles = kube_store_list(c->inf[INF_PROFILES]);
	s->splugins = kube_store_list(c->inf[INF_PLUGINS]);
	char key[512];
	for (int k = 0; k < OP_OBJ_COUNT; k++) {
		const struct op_kind_info *ki = op_kind_info(k);
		if (ki->namespaced)
			snprintf(key, sizeof key, "%s/%s", c->ns, ki->name);
		else
			snprintf(key, sizeof key, "%s", ki->name);
		s->owned[k] = kube_store_get(c->inf[k], key);
	}
	snprintf(key, sizeof key, "%s/%s", c->ns, OP_SCHEDULER_NAME);
	s->lease = kube_store_get(c->inf[INF_LEASE], key);
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The worker takes a new settings version between two reconciles, so a reconcile never sees
 * half of one; the version it replaces is freed here (nothing else reads it). */
static void take_pending_settings(struct op_controller *c)
{
	pthread_mutex_lock(&c->mu);
	struct op_settings *s = c->pending;
	char *image = c->pending_image;
	int replicas = c->pending_replicas;
	c->pending = NULL;
	c->pending_image = NULL;
	pthread_mutex_unlock(&c->mu);
	if (!s)
		return;
	if (c->current)
		op_settings_free(c->current);
	free(c->current);
	free(c->current_image);
	c->current = s;
	c->current_image = image;
	c->opts.res.settings = s;
	c->opts.res.scheduler_image = image;
	c->opts.res.replicas = replicas;
}

int op_controller_set_settings(struct op_controller *c, struct op_settings *s, const char *image, int replicas)
{
	struct op_settings *copy = malloc(sizeof *copy);
	char *img = image ? strdup(image) : NULL;
	if (!copy || (image && !img)) {
		free(copy);
		free(img);
		op_settings_free(s);
		return -1;
	}
	*copy = *s;
	memset(s, 0, sizeof *s);
	s->replicas = -1;
	pthread_mutex_lock(&c->mu);
	if (c->pending) {
		op_settings_free(c->pending);
		free(c->pending);
	}
	free(c->pending_image);
	c->pending = copy;
	c->pending_image = img;
	c->pending_replicas = replicas;
	pthread_mutex_unlock(&c->mu);
	enqueue(c);
	return 0;
}

static void reconcile_key(struct op_controller *c, const char *key)
{
	take_pending_settings(c);
	struct op_snapshot s;
	snapshot_from_caches(c, &s);
	if (!s.profiles || !s.splugins) {
		op_snapshot_free(&s);
		op_queue_add_rate_limited(c->queue, key);
		return;
	}
	struct op_reconcile_result res;
	char *err = NULL;
	double t0 = mono_now();
	int rc = op_reconcile(c->client, &c->opts, &s, &res, &err);
	kube_histogram_observe(c->m_duration, mono_now() - t0, NULL);
	op_snapshot_free(&s);
	kube_counter_add(c->m_writes, res.writes, NULL);
	kube_gauge_set(c->m_profiles, res.accepted, KUBE_LABELS("accepted"));
	kube_gauge_set(c->m_profiles, res.invalid, KUBE_LABELS("invalid"));
	kube_gauge_set(c->m_profiles, res.conflict, KUBE_LABELS("conflict"));
	kube_gauge_set(c->m_profiles, res.rendered, KUBE_LABELS("rendered"));
	if (rc == 0) {
		kube_counter_inc(c->m_total, KUBE_LABELS("success"));
		op_queue_forget(c->queue, key);
		atomic_fetch_add(&c->reconciles, 1);
		if (res.writes)
			klog_info(0, "Reconciled",
				  " profiles=%d accepted=%d invalid=%d conflict=%d rendered=%d plugins=%d plugins-accepted=%d"
				  " writes=%d config-hash=%s",
				  res.profiles, res.accepted, res.invalid, res.conflict, res.rendered, res.plugins,
				  res.plugins_accepted, res.writes, res.config_hash);
		else
			klog_info(4, "Reconciled, nothing to change", " profiles=%d", res.profiles);
	} else {
		kube_counter_inc(c->m_total, KUBE_LABELS("error"));
		/* A 409 after our own write is the cache catching up: retry soon, quietly. */
		klog_info(1, "Reconcile failed, will retry", " requeues=%d err=\"%s\"", op_queue_num_requeues(c->queue, key),
			  err ? err : "");
		if (op_queue_num_requeues(c->queue, key) >= 5)
			klog_error("Reconcile keeps failing", " err=\"%s\"", err ? err : "");
		op_queue_add_rate_limited(c->queue, key);
	}
	free(err);
}

static void *worker_main(void *arg)
{
	struct op_controller *c = arg;
	while (!atomic_load(&c->stopping) && !op_controller_synced(c)) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	enqueue(c);
	while (!atomic_load(&c->stopping)) {
		bool shutdown = false;
		char *key = op_queue_get(c->queue, 500LL * 1000 * 1000, &shutdown);
		if (!key) {
			if (shutdown)
				break;
			continue;
		}
		reconcile_key(c, key);
		op_queue_done(c->queue, key);
		free(key);
	}
	return NULL;
}

int op_controller_run(struct op_controller *c)
{
	pthread_mutex_lock(&c->mu);
	int rc = -1;
	if (!c->running && pthread_create(&c->worker, NULL, worker_main, c) == 0) {
		c->running = true;
		rc = 0;
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void op_controller_stop(struct op_controller *c)
{
	if (!c)
		return;
	atomic_store(&c->stopping, true);
	if (c->queue)
		op_queue_shut_down(c->queue);
	pthread_mutex_lock(&c->mu);
	bool join = c->running;
	c->running = false;
	pthread_mutex_unlock(&c->mu);
	if (join)
		pthread_join(c->worker, NULL);
	for (int i = 0; i < INF_COUNT; i++)
		if (c->inf[i])
			kube_informer_stop(c->inf[i]);
}

void op_controller_free(struct op_controller *c)
{
	if (!c)
		return;
	op_controller_stop(c);
	for (int i = 0; i < INF_COUNT; i++)
		kube_informer_free(c->inf[i]);
	op_queue_free(c->queue);
	pthread_mutex_destroy(&c->mu);
	for (int i = 0; i < 2; i++) {
		struct op_settings *s = i ? c->pending : c->current;
		if (s)
			op_settings_free(s);
		free(s);
	}
	free(c->pending_image);
	free(c->current_image);
	free(c->ns);
	free(c);
}

uint64_t op_controller_reconciles(struct op_controller *c)
{
	return atomic_load(&c->reconciles);
}
