/* Tests for operator/controller.c against the in-process local API server (e2e/apiserver): a
 * reconcile creates every owned object and each profile's status; a second one writes nothing
 * (resourceVersions unchanged); deleted or hand-edited objects are restored; the Lease's hash
 * turns Applied True; a broken update keeps the last accepted version; a deleted profile leaves
 * the configuration; SchedulerPlugins get their Accepted status and their init containers in the
 * Deployment (and lose them when deleted); a configuration the scheduler rejected (its Lease
 * says so) turns the profiles Applied=False ConfigRejected; the informer-driven controller
 * converges on its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "operator/controller.h"
#include "operator/status.h"

#define NS "schedkit-system"

struct env {
	struct apis_server *srv;
	struct kube_client *client;
	struct op_controller_opts opts;
};

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static cJSON *y(const char *text)
{
	char *err = NULL;
	cJSON *o = kube_yaml_parse_one(text, strlen(text), &err);
	if (!o)
		fail_msg("bad YAML: %s", err ? err : "?");
	return o;
}

static void create(struct env *e, const char *group, const char *version, const char *resource, const char *ns,
		   const char *yaml)
{
	char *path = kube_path(group, version, resource, ns, NULL, NULL);
	cJSON *o = y(yaml);
	struct kube_error ke = { 0 };
	if (kube_create(e->client, path, o, NULL, &ke) != 0)
		fail_msg("create %s: %s", resource, ke.message);
	cJSON_Delete(o);
	free(path);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	if (apis_server_start(&o, &e->srv) != 0)
		return -1;
	struct kube_config *kc = kube_config_new(apis_server_url(e->srv));
	char *err = NULL;
	if (kube_client_new(kc, &e->client, &err) != 0)
		return -1;
	kube_config_free(kc);
	char path[512];
	const char *root = getenv("SK_ROOT");
	static const char *const crds[] = { "schedulerprofiles", "schedulerplugins" };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/crds/%s.schedkit.io.yaml", root ? root : ".", crds[i]);
		char *crd = read_file(path);
		if (!crd)
			return -1;
		create(e, "apiextensions.k8s.io", "v1", "customresourcedefinitions", NULL, crd);
		free(crd);
	}
	create(e, "", "v1", "namespaces", NULL, "{apiVersion: v1, kind: Namespace, metadata: {name: " NS "}}");
	/* wait until the new resources are served */
	for (int k = 0; k < 2; k++) {
		char *list = kube_path("schedkit.io", "v1alpha1", crds[k], NULL, NULL, NULL);
		for (int i = 0; i < 200; i++) {
			cJSON *out = NULL;
			if (kube_get(e->client, list, &out, NULL) == 0) {
				cJSON_Delete(out);
				break;
			}
			sleep_ms(20);
		}
		free(list);
	}
	e->opts.res.namespace = NS;
	e->opts.res.scheduler_image = "schedkit/schedkit:test";
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_client_free(e->client);
	apis_server_stop(e->srv);
	free(e);
	return 0;
}

static void add_profile(struct env *e, const char *yaml)
{
	create(e, "schedkit.io", "v1alpha1", "schedulerprofiles", NULL, yaml);
}

static cJSON *get(struct env *e, const char *group, const char *version, const char *resource, const char *ns,
		  const char *name)
{
	char *path = kube_path(group, version, resource, ns, name, NULL);
	cJSON *o = NULL;
	struct kube_error ke = { 0 };
	if (kube_get(e->client, path, &o, &ke) != 0)
		o = NULL;
	free(path);
	return o;
}

static cJSON *get_profile(struct env *e, const char *name)
{
	cJSON *o = get(e, "schedkit.io", "v1alpha1", "schedulerprofiles", NULL, name);
	assert_non_null(o);
	return o;
}

static char *config_text(struct env *e)
{
	cJSON *cm = get(e, "", "v1", "configmaps", NS, OP_CONFIGMAP_NAME);
	assert_non_null(cm);
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "data"), OP_CONFIG_KEY);
	char *s = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
	cJSON_Delete(cm);
	return s;
}

static struct op_reconcile_result reconcile(struct env *e)
{
	struct op_snapshot s;
	struct kube_error ke = { 0 };
	if (op_snapshot_fetch(e->client, NS, &s, &ke) != 0)
		fail_msg("fetch: %s", ke.message);
	struct op_reconcile_result r;
	char *err = NULL;
	int rc = op_reconcile(e->client, &e->opts, &s, &r, &err);
	op_snapshot_free(&s);
	if (rc != 0)
		fail_msg("reconcile: %s", err ? err : "?");
	return r;
}

static const char *cond_field(const cJSON *obj, const char *type, const char *field)
{
	const cJSON *c = kube_condition_find(kube_obj_get(obj, "status.conditions"), type);
	return c ? kube_obj_get_string(c, field) : NULL;
}

/* resourceVersion of every owned object, concatenated. */
static char *owned_rvs(struct env *e)
{
	char *out = calloc(1, 4096);
	for (int k = 0; k < OP_OBJ_COUNT; k++) {
		const struct op_kind_info *ki = op_kind_info(k);
		cJSON *o = get(e, ki->group, ki->version, ki->resource, ki->namespaced ? NS : NULL, ki->name);
		assert_non_null(o);
		strcat(out, kube_meta_resource_version(o));
		strcat(out, ",");
		cJSON_Delete(o);
	}
	return out;
}

static void test_reconcile_lifecycle(void **state)
{
	struct env *e = *state;
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: pack},"
		       " spec: {provider: ClusterAutoscaler}}");
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: typo},"
		       " spec: {plugins: {score: {enabled: [{name: NodeResourceFit}]}}}}");
	struct kube_event_recorder *rec = NULL;
	assert_int_equal(kube_event_recorder_new(e->client, "schedkit-operator", "test", &rec), 0);
	e->opts.events = rec;
	struct op_reconcile_result r = reconcile(e);
	e->opts.events = NULL;
	kube_event_recorder_free(rec); /* flushes */
	cJSON *evs = NULL;
	char *ep = kube_path("events.k8s.io", "v1", "events", "default", NULL, NULL);
	assert_int_equal(kube_list(e->client, ep, NULL, NULL, &evs, NULL), 0);
	free(ep);
	bool warned = false;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(evs, "items")) {
		const char *who = kube_obj_get_string(ev, "regarding.name"), *why = kube_obj_get_string(ev, "reason");
		if (who && why && !strcmp(who, "typo") && !strcmp(why, "Invalid"))
			warned = !strcmp(kube_obj_get_string(ev, "type"), "Warning") &&
				 strstr(kube_obj_get_string(ev, "note"), "NodeResourceFit") != NULL;
	}
	cJSON_Delete(evs);
	assert_true(warned); /* `kubectl describe sp typo` shows why */
	assert_int_equal(r.profiles, 2);
	assert_int_equal(r.accepted, 1);
	assert_int_equal(r.invalid, 1);
	/* 9 objects + 2 statuses + 1 last-accepted annotation */
	assert_int_equal(r.writes, 12);

	char *cfg = config_text(e);
	assert_non_null(cfg);
	assert_non_null(strstr(cfg, "schedulerName: pack"));
	assert_non_null(strstr(cfg, "type: MostAllocated"));
	assert_null(strstr(cfg, "typo"));

	cJSON *pack = get_profile(e, "pack");
	assert_string_equal(cond_field(pack, "Accepted", "status"), "True");
	assert_string_equal(cond_field(pack, "Applied", "reason"), OP_APPLIED_PENDING);
	assert_string_equal(kube_obj_get_string(pack, "status.renderedHash"), r.config_hash); /* pack alone is the whole configuration */
	assert_non_null(kube_meta_annotation(pack, "schedkit.io/last-accepted"));
	cJSON_Delete(pack);
	cJSON *typo = get_profile(e, "typo");
	assert_string_equal(cond_field(typo, "Accepted", "status"), "False");
	assert_string_equal(cond_field(typo, "Accepted", "reason"), "Invalid");
	assert_string_equal(cond_field(typo, "Accepted", "message"),
			    "spec.plugins.score.enabled[0]: unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?");
	cJSON_Delete(typo);

	/* idempotent: nothing written, no resourceVersion moves */
	char *rv1 = owned_rvs(e);
	r = reconcile(e);
	assert_int_equal(r.writes, 0);
	char *rv2 = owned_rvs(e);
	assert_string_equal(rv1, rv2);
	free(rv1);
	free(rv2);

	/* drift: a deleted ConfigMap and a hand-scaled Deployment come back */
	char *p = kube_path("", "v1", "configmaps", NS, OP_CONFIGMAP_NAME, NULL);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	free(p);
	p = kube_path("apps", "v1", "deployments", NS, OP_SCHEDULER_NAME, NULL);
	cJSON *patch = y("{spec: {replicas: 7}}");
	assert_int_equal(kube_patch(e->client, p, KUBE_PATCH_MERGE, patch, NULL, NULL), 0);
	cJSON_Delete(patch);
	r = reconcile(e);
	assert_int_equal(r.writes, 2);
	char *cfg2 = config_text(e);
	assert_string_equal(cfg, cfg2);
	free(cfg2);
	cJSON *d = get(e, "apps", "v1", "deployments", NS, OP_SCHEDULER_NAME);
	assert_int_equal(kube_obj_get(d, "spec.replicas")->valueint, 2);
	cJSON_Delete(d);
	free(p);

	/* the scheduler's leader reports the hash: Applied */
	char lease[1024];
	snprintf(lease, sizeof lease,
		 "{apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: schedkit-scheduler, namespace: " NS
		 ", annotations: {schedkit.io/config-hash: '%s'}}, spec: {holderIdentity: h_1, leaseDurationSeconds: 15}}",
		 r.config_hash);
	create(e, "coordination.k8s.io", "v1", "leases", NS, lease);
	r = reconcile(e);
	assert_int_equal(r.writes, 1); /* pack's status; typo is not in the config either way */
	pack = get_profile(e, "pack");
	assert_string_equal(cond_field(pack, "Applied", "status"), "True");
	assert_string_equal(kube_obj_get_string(pack, "status.appliedHash"), r.config_hash);
	cJSON_Delete(pack);

	/* a broken update keeps the last accepted version running */
	p = kube_path("schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "pack", NULL);
	patch = y("{spec: {plugins: {score: {enabled: [{name: Nope}]}}}}");
	assert_int_equal(kube_patch(e->client, p, KUBE_PATCH_MERGE, patch, NULL, NULL), 0);
	cJSON_Delete(patch);
	free(p);
	r = reconcile(e);
	char *cfg3 = config_text(e);
	assert_string_equal(cfg, cfg3);
	free(cfg3);
	pack = get_profile(e, "pack");
	assert_string_equal(cond_field(pack, "Accepted", "status"), "False");
	assert_non_null(strstr(cond_field(pack, "Accepted", "message"), "unknown plugin \"Nope\""));
	assert_string_equal(cond_field(pack, "Applied", "reason"), OP_APPLIED_LAST_ACCEPTED);
	cJSON_Delete(pack);

	/* deleting the only rendered profile empties the configuration and stops the scheduler */
	p = kube_path("schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "pack", NULL);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	free(p);
	r = reconcile(e);
	assert_int_equal(r.rendered, 0);
	char *cfg4 = config_text(e);
	assert_null(cfg4);
	d = get(e, "apps", "v1", "deployments", NS, OP_SCHEDULER_NAME);
	assert_int_equal(kube_obj_get(d, "spec.replicas")->valueint, 0);
	cJSON_Delete(d);
	free(cfg);
	p = kube_path("schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "typo", NULL);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	free(p);
}

static void del(struct env *e, const char *resource, const char *ns, const char *name)
{
	char *p = kube_path(resource[0] == 's' ? "schedkit.io" : "coordination.k8s.io",
			    resource[0] == 's' ? "v1alpha1" : "v1", resource, ns, name, NULL);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	free(p);
}

static void patch_lease(struct env *e, const char *yaml)
{
	char *p = kube_path("coordination.k8s.io", "v1", "leases", NS, OP_SCHEDULER_NAME, NULL);
	cJSON *patch = y(yaml);
	assert_int_equal(kube_patch(e->client, p, KUBE_PATCH_MERGE, patch, NULL, NULL), 0);
	cJSON_Delete(patch);
	free(p);
}

/* SchedulerPlugins: Accepted status, the Deployment's init containers and plugins-hash, taken
 * away again when the last one goes; a rejected configuration on the Lease reaches the profiles. */
/* The events of one profile in namespace default, as "type/reason/note|..." in creation order. */
static char *events_of(struct env *e, const char *name)
{
	cJSON *evs = NULL;
	char *ep = kube_path("events.k8s.io", "v1", "events", "default", NULL, NULL);
	assert_int_equal(kube_list(e->client, ep, NULL, NULL, &evs, NULL), 0);
	free(ep);
	char *out = calloc(1, 8192);
	size_t k = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(evs, "items")) {
		const char *who = kube_obj_get_string(ev, "regarding.name");
		if (who && !strcmp(who, name) && k < 8000)
			k += (size_t)snprintf(out + k, 8192 - k, "%s/%s/%s|", kube_obj_get_string(ev, "type"),
					      kube_obj_get_string(ev, "reason"), kube_obj_get_string(ev, "note"));
	}
	cJSON_Delete(evs);
	return out;
}

/* Ready transitions are Events of their own: Normal Ready when the leader runs the accepted spec,
 * Warning NotReady (the condition's reason and message) when a broken update makes it not Ready;
 * not being Ready yet at creation is no event. */
static void test_ready_events(void **state)
{
	struct env *e = *state;
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: rdy}, spec: {}}");
	struct kube_event_recorder *rec = NULL;
	assert_int_equal(kube_event_recorder_new(e->client, "schedkit-operator", "test", &rec), 0);
	e->opts.events = rec;
	struct op_reconcile_result r = reconcile(e);
	kube_event_recorder_flush(rec);
	char *evs = events_of(e, "rdy");
	assert_null(strstr(evs, "Ready/")); /* Pending: not Ready yet, no Ready event */
	free(evs);
	char lease[512];
	snprintf(lease, sizeof lease, "{metadata: {annotations: {schedkit.io/config-hash: '%s'}}, spec: {holderIdentity: h_1}}",
		 r.config_hash);
	patch_lease(e, lease); /* the Lease of the earlier tests' scheduler */
	reconcile(e);
	kube_event_recorder_flush(rec);
	evs = events_of(e, "rdy");
	if (!strstr(evs, "Normal/Ready/accepted, and run by schedkit-scheduler|"))
		fail_msg("events: %s", evs);
	free(evs);
	char *p = kube_path("schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "rdy", NULL);
	cJSON *patch = y("{spec: {plugins: {score: {enabled: [{name: Nope}]}}}}");
	assert_int_equal(kube_patch(e->client, p, KUBE_PATCH_MERGE, patch, NULL, NULL), 0);
	cJSON_Delete(patch);
	reconcile(e);
	kube_event_recorder_flush(rec);
	evs = events_of(e, "rdy");
	if (!strstr(evs, "Warning/NotReady/Invalid: spec.plugins.score.enabled[0]: unknown plugin \"Nope\""))
		fail_msg("events: %s", evs);
	free(evs);
	e->opts.events = NULL;
	kube_event_recorder_free(rec);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	free(p);
	reconcile(e);
}

static void test_plugins_and_rejected_config(void **state)
{
	struct env *e = *state;
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: plain}, spec: {}}");
	create(e, "schedkit.io", "v1alpha1", "schedulerplugins", NULL,
	       "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerPlugin, metadata: {name: sample},"
	       " spec: {image: 'schedkit/sample-plugin:0.2.0', files: [/plugins/sample.so], plugins: [Sample]}}");
	create(e, "schedkit.io", "v1alpha1", "schedulerplugins", NULL,
	       "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerPlugin, metadata: {name: evil},"
	       " spec: {image: 'evil:1', files: [/e/evil.so], plugins: [NodeName]}}");
	struct op_reconcile_result r = reconcile(e);
	assert_int_equal(r.plugins, 2);
	assert_int_equal(r.plugins_accepted, 1);
	cJSON *o = get(e, "schedkit.io", "v1alpha1", "schedulerplugins", NULL, "sample");
	assert_string_equal(cond_field(o, "Accepted", "status"), "True");
	assert_int_equal(kube_obj_get(o, "status.observedGeneration")->valueint, 1);
	cJSON_Delete(o);
	o = get(e, "schedkit.io", "v1alpha1", "schedulerplugins", NULL, "evil");
	assert_string_equal(cond_field(o, "Accepted", "status"), "False");
	assert_string_equal(cond_field(o, "Accepted", "message"),
			    "spec.plugins[0]: Invalid value: \"NodeName\": shadows an in-tree plugin");
	cJSON_Delete(o);
	cJSON *d = get(e, "apps", "v1", "deployments", NS, OP_SCHEDULER_NAME);
	const cJSON *inits = kube_obj_get(d, "spec.template.spec.initContainers");
	assert_int_equal(cJSON_GetArraySize(inits), 1);
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(inits, 0), "name"), "plugin-sample");
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(inits, 0), "image"), "schedkit/sample-plugin:0.2.0");
	assert_non_null(cJSON_GetObjectItem(kube_obj_get(d, "spec.template.metadata.annotations"), "schedkit.io/plugins-hash"));
	char *args = kube_json_print(kube_obj_get(cJSON_GetArrayItem(kube_obj_get(d, "spec.template.spec.containers"), 0), "args"));
	assert_non_null(strstr(args, "--plugin-dir=/var/lib/schedkit/plugins"));
	free(args);
	cJSON_Delete(d);
	/* idempotent with SchedulerPlugins too */
	assert_int_equal(reconcile(e).writes, 0);

	/* the scheduler refused the configuration rendered now: every profile in it says why */
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "{metadata: {annotations: {schedkit.io/rejected-config-hash: '%s',"
		 " schedkit.io/rejected-config-error: 'plugin file \"/p/x.so\": not a schedkit plugin'}}}",
		 r.config_hash);
	patch_lease(e, buf);
	reconcile(e);
	cJSON *plain = get_profile(e, "plain");
	assert_string_equal(cond_field(plain, "Applied", "status"), "False");
	assert_string_equal(cond_field(plain, "Applied", "reason"), "ConfigRejected");
	assert_string_equal(cond_field(plain, "Applied", "message"), "plugin file \"/p/x.so\": not a schedkit plugin");
	assert_string_equal(cond_field(plain, "Accepted", "status"), "True");
	cJSON_Delete(plain);
	/* a successful reload removes the annotations and reports the hash */
	snprintf(buf, sizeof buf,
		 "{metadata: {annotations: {schedkit.io/rejected-config-hash: null, schedkit.io/rejected-config-error: null,"
		 " schedkit.io/config-hash: '%s'}}}",
		 r.config_hash);
	patch_lease(e, buf);
	reconcile(e);
	plain = get_profile(e, "plain");
	assert_string_equal(cond_field(plain, "Applied", "reason"), OP_APPLIED_APPLIED);
	cJSON_Delete(plain);

	/* the last accepted SchedulerPlugin deleted: the Deployment loses what it added */
	del(e, "schedulerplugins", NULL, "sample");
	r = reconcile(e);
	assert_int_equal(r.plugins_accepted, 0);
	d = get(e, "apps", "v1", "deployments", NS, OP_SCHEDULER_NAME);
	assert_null(kube_obj_get(d, "spec.template.spec.initContainers"));
	assert_null(cJSON_GetObjectItem(kube_obj_get(d, "spec.template.metadata.annotations"), "schedkit.io/plugins-hash"));
	args = kube_json_print(kube_obj_get(cJSON_GetArrayItem(kube_obj_get(d, "spec.template.spec.containers"), 0), "args"));
	assert_null(strstr(args, "--plugin-dir=/var/lib/schedkit/plugins"));
	assert_non_null(strstr(args, "\"--plugin-dir=/usr/lib/schedkit/plugins\"")); /* the image's stays */
	free(args);
	assert_int_equal(cJSON_GetArraySize(kube_obj_get(d, "spec.template.spec.volumes")), 1);
	cJSON_Delete(d);
	assert_int_equal(reconcile(e).writes, 0);
	del(e, "schedulerplugins", NULL, "evil");
	del(e, "schedulerprofiles", NULL, "plain");
	reconcile(e);
}

/* The informer-driven controller converges by itself and repairs drift it is told about. */
static void test_controller_converges(void **state)
{
	struct env *e = *state;
	struct op_controller *c = NULL;
	char *err = NULL;
	assert_int_equal(op_controller_new(e->client, &e->opts, &c, &err), 0);
	assert_int_equal(op_controller_start_informers(c, &err), 0);
	assert_int_equal(op_controller_run(c), 0);
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: live},"
		       " spec: {schedulerName: live-sched}}");
	bool ok = false;
	for (int i = 0; i < 500 && !ok; i++) {
		cJSON *o = get_profile(e, "live");
		const char *acc = cond_field(o, "Accepted", "status");
		char *cfg = acc ? config_text(e) : NULL;
		ok = acc && !strcmp(acc, "True") && cfg && strstr(cfg, "live-sched");
		free(cfg);
		cJSON_Delete(o);
		if (!ok)
			sleep_ms(20);
	}
	assert_true(ok);
	/* hand-deleted Service is recreated */
	char *p = kube_path("", "v1", "services", NS, OP_SCHEDULER_NAME, NULL);
	assert_int_equal(kube_delete(e->client, p, NULL), 0);
	ok = false;
	for (int i = 0; i < 500 && !ok; i++) {
		cJSON *o = NULL;
		ok = kube_get(e->client, p, &o, NULL) == 0;
		cJSON_Delete(o);
		if (!ok)
			sleep_ms(20);
	}
	free(p);
	assert_true(ok);
	assert_true(op_controller_reconciles(c) > 0);
	op_controller_free(c);
}

static const char *rv_of(struct env *e, const char *name, char *buf, size_t len)
{
	cJSON *o = get_profile(e, name);
	snprintf(buf, len, "%s", kube_obj_get_string(o, "metadata.resourceVersion"));
	cJSON_Delete(o);
	return buf;
}

/* Applied judged per profile: changing one profile rewrites its status only; the other stays
 * Applied (its resourceVersion does not move) before and after the leader loads the change. */
static void test_change_of_one_profile_leaves_others(void **state)
{
	struct env *e = *state;
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: steady}, spec: {}}");
	add_profile(e, "{apiVersion: schedkit.io/v1alpha1, kind: SchedulerProfile, metadata: {name: moving}, spec: {}}");
	struct op_reconcile_result r = reconcile(e);
	char buf[512];
	snprintf(buf, sizeof buf, "{metadata: {annotations: {schedkit.io/config-hash: '%s'}}, spec: {holderIdentity: h_1}}",
		 r.config_hash);
	patch_lease(e, buf);
	reconcile(e);
	cJSON *o = get_profile(e, "steady");
	assert_string_equal(cond_field(o, "Applied", "reason"), OP_APPLIED_APPLIED);
	assert_string_equal(cond_field(o, "Ready", "status"), "True");
	cJSON_Delete(o);
	char rv1[64], rv2[64], rv3[64];
	rv_of(e, "steady", rv1, sizeof rv1);

	char *p = kube_path("schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "moving", NULL);
	cJSON *patch = y("{spec: {percentageOfNodesToScore: 40}}");
	assert_int_equal(kube_patch(e->client, p, KUBE_PATCH_MERGE, patch, NULL, NULL), 0);
	cJSON_Delete(patch);
	free(p);
	struct op_reconcile_result r2 = reconcile(e);
	assert_string_not_equal(r2.config_hash, r.config_hash);
	o = get_profile(e, "moving");
	assert_string_equal(cond_field(o, "Applied", "reason"), OP_APPLIED_PENDING);
	assert_string_equal(cond_field(o, "Ready", "reason"), OP_APPLIED_PENDING);
	cJSON_Delete(o);
	assert_string_equal(rv_of(e, "steady", rv2, sizeof rv2), rv1); /* not even rewritten */

	snprintf(buf, sizeof buf, "{metadata: {annotations: {schedkit.io/config-hash: '%s'}}}", r2.config_hash);
	patch_lease(e, buf);
	reconcile(e);
	o = get_profile(e, "moving");
	assert_string_equal(cond_field(o, "Applied", "reason"), OP_APPLIED_APPLIED);
	assert_string_equal(kube_obj_get_string(o, "status.appliedHash"), kube_obj_get_string(o, "status.renderedHash"));
	cJSON_Delete(o);
	assert_string_equal(rv_of(e, "steady", rv3, sizeof rv3), rv1);
	del(e, "schedulerprofiles", NULL, "steady");
	del(e, "schedulerprofiles", NULL, "moving");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reconcile_lifecycle),
		cmocka_unit_test(test_ready_events),
		cmocka_unit_test(test_plugins_and_rejected_config),
		cmocka_unit_test(test_controller_converges),
		cmocka_unit_test(test_change_of_one_profile_leaves_others),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
