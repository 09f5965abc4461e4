/* Tests for scheduler/preempt_client.c against the in-process local API server: the victim's
 * DisruptionTarget patch then DELETE (a finalizer keeps the object visible), a victim already gone,
 * PDBs by LIST, clearing nominatedNodeName, and the JSON helpers (startTime, terminating by
 * preemption). */
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
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "kube/text.h"
#include "scheduler/api/raw.h"
#include "scheduler/daemon/preempt_client.h"
#include "scheduler/tests/fixtures.h"

struct env {
	struct apis_server *srv;
	struct kube_client *c;
	struct sk_preempt_client *pc;
};

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof *v);
	if (!v)
		return -1;
	*state = v;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	if (apis_server_start(&o, &v->srv) != 0)
		return -1;
	struct kube_config *cfg = kube_config_new(apis_server_url(v->srv));
	if (!cfg)
		return -1;
	cfg->qps = 0;
	char *err = NULL;
	int rc = kube_client_new(cfg, &v->c, &err);
	free(err);
	kube_config_free(cfg);
	v->pc = sk_preempt_client_new(v->c, NULL, NULL);
	return rc == 0 && v->pc ? 0 : -1;
}

static int teardown(void **state)
{
	struct env *v = *state;
	sk_preempt_client_free(v->pc);
	kube_client_free(v->c);
	apis_server_stop(v->srv);
	free(v);
	return 0;
}

static void create(struct env *v, const char *group, const char *version, const char *resource, const char *ns,
		   const char *yaml)
{
	char *path = kube_path(group, version, resource, ns, NULL, NULL);
	cJSON *obj = fx_json(yaml);
	struct kube_error ke = { 0 };
	if (kube_create(v->c, path, obj, NULL, &ke) != 0)
		fail_msg("create %s: %s", resource, ke.message);
	cJSON_Delete(obj);
	free(path);
}

static cJSON *get_pod(struct env *v, const char *name, struct kube_error *ke)
{
	char *path = kube_path("", "v1", "pods", "default", name, NULL);
	cJSON *out = NULL;
	if (kube_get(v->c, path, &out, ke) != 0)
		out = NULL;
	free(path);
	return out;
}

/* A started and synced informer on every pod (caller kube_informer_free's). */
static struct kube_informer *pod_informer(struct env *v)
{
	struct kube_informer *inf = NULL;
	struct kube_informer_opts o = { .version = "v1", .resource = "pods" };
	assert_int_equal(kube_informer_new(v->c, &o, &inf), 0);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 10000));
	return inf;
}

static void test_victim_patch_then_delete(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: victim, namespace: default, finalizers: [test/keep]}, "
	       "spec: {nodeName: n1, containers: [{name: c, image: x}]}}");
	cJSON *obj = get_pod(v, "victim", &(struct kube_error){ 0 });
	assert_non_null(obj);
	char *e = NULL;
	struct sk_pod *victim = sk_pod_decode(obj, &e);
	cJSON_Delete(obj);
	assert_non_null(victim);
	struct sk_pod *pre = fx_pod("{metadata: {name: p, uid: p}, spec: {priority: 10, containers: [{name: c}]}}");
	char *err = NULL;
	assert_int_equal(sk_preempt_victim(v->pc, pre, victim, "n1", "prof: preempting to accommodate a higher priority pod",
					   &err),
			 0);
	assert_null(err);
	obj = get_pod(v, "victim", &(struct kube_error){ 0 });
	assert_non_null(obj); /* held by the finalizer, deletionTimestamp set */
	assert_non_null(kube_obj_get_string(obj, "metadata.deletionTimestamp"));
	const cJSON *c = kube_condition_find(kube_obj_get(obj, "status.conditions"), "DisruptionTarget");
	assert_non_null(c);
	assert_string_equal(kube_obj_get_string(c, "status"), "True");
	assert_string_equal(kube_obj_get_string(c, "reason"), "PreemptionByScheduler");
	assert_string_equal(kube_obj_get_string(c, "message"), "prof: preempting to accommodate a higher priority pod");
	assert_true(sk_preempt_terminating_of(obj));
	cJSON_Delete(obj);

	/* a victim that is already gone: 1, no error */
	struct sk_pod *gone = fx_pod("{metadata: {name: nosuch, uid: nosuch}, spec: {containers: [{name: c}]}}");
	assert_int_equal(sk_preempt_victim(v->pc, pre, gone, "n1", "m", &err), 1);
	assert_null(err);
	sk_pod_unref(gone);
	sk_pod_unref(victim);
	sk_pod_unref(pre);
}

static void test_condition_already_present_skips_patch(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: again, namespace: default}, "
	       "spec: {nodeName: n1, containers: [{name: c, image: x}]}}");
	char *spath = kube_path("", "v1", "pods", "default", "again", "status");
	cJSON *patch = fx_json("{status: {conditions: [{type: DisruptionTarget, status: 'True', reason: "
			       "PreemptionByScheduler, message: 'prof: preempting to accommodate a higher priority pod'}]}}");
	struct kube_error ke = { 0 };
	assert_int_equal(kube_patch(v->c, spath, KUBE_PATCH_STRATEGIC, patch, NULL, &ke), 0);
	cJSON_Delete(patch);
	free(spath);
	struct kube_informer *inf = pod_informer(v);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	cJSON *obj = get_pod(v, "again", &ke);
	char *e = NULL;
	struct sk_pod *victim = sk_pod_decode(obj, &e);
	cJSON_Delete(obj);
	struct sk_pod *pre = fx_pod("{metadata: {name: p, uid: p}, spec: {priority: 10, containers: [{name: c}]}}");
	uint64_t patches = kube_client_request_count(v->c, "PATCH", 200);
	char *err = NULL;
	assert_int_equal(sk_preempt_victim(pc, pre, victim, "n1", "prof: preempting to accommodate a higher priority pod",
					   &err),
			 0);
	assert_true(kube_client_request_count(v->c, "PATCH", 200) == patches); /* no second patch */
	assert_null(get_pod(v, "again", &ke));                                   /* but deleted */
	assert_true(kube_error_is_not_found(&ke));
	sk_pod_unref(victim);
	sk_pod_unref(pre);
	sk_preempt_client_free(pc);
	kube_informer_free(inf);
}

/* The last-victim check of asynchronous preemption: present -> false; deletionTimestamp set (a
 * finalizer keeps the object) -> true; another uid under the name, or no such pod -> true; no
 * pod informer -> false (nothing to tell). */
static void test_pod_deleted(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: kept, namespace: default, finalizers: [test/keep]}, "
	       "spec: {nodeName: n1, containers: [{name: c, image: x}]}}");
	struct kube_informer *inf = pod_informer(v);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	struct kube_error ke = { 0 };
	cJSON *obj = get_pod(v, "kept", &ke);
	char *e = NULL;
	struct sk_pod *kept = sk_pod_decode(obj, &e);
	cJSON_Delete(obj);
	assert_non_null(kept);
	struct sk_pod *other = fx_pod("{metadata: {name: kept, namespace: default, uid: not-the-same}, spec: {containers: [{name: c}]}}");
	struct sk_pod *absent = fx_pod("{metadata: {name: nobody, namespace: default, uid: u}, spec: {containers: [{name: c}]}}");
	assert_false(sk_preempt_pod_deleted(pc, kept));
	assert_true(sk_preempt_pod_deleted(pc, other));
	assert_true(sk_preempt_pod_deleted(pc, absent));
	assert_false(sk_preempt_pod_deleted(v->pc, absent)); /* no informer */
	char *path = kube_path("", "v1", "pods", "default", "kept", NULL);
	assert_int_equal(kube_delete(v->c, path, &ke), 0);
	free(path);
	bool seen = false;
	for (int i = 0; i < 500 && !seen; i++) { /* the informer's copy gets its deletionTimestamp */
		seen = sk_preempt_pod_deleted(pc, kept);
		if (!seen)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	assert_true(seen);
	sk_pod_unref(kept);
	sk_pod_unref(other);
	sk_pod_unref(absent);
	sk_preempt_client_free(pc);
	kube_informer_free(inf);
}

static void test_list_pdbs_by_list(void **state)
{
	struct env *v = *state;
	create(v, "policy", "v1", "poddisruptionbudgets", "default",
	       "{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: db, namespace: default}, "
	       "spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}}");
	struct sk_pdb **l = NULL;
	char *err = NULL;
	int n = sk_preempt_list_pdbs(v->pc, &l, &err);
	assert_int_equal(n, 1);
	assert_string_equal(l[0]->name, "db");
	assert_string_equal(l[0]->ns, "default");
	assert_non_null(l[0]->selector);
	sk_pdb_list_free(l, n);
}

static void test_clear_nominated(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: nom, namespace: default}, spec: {containers: [{name: c, image: x}]}}");
	char *spath = kube_path("", "v1", "pods", "default", "nom", "status");
	cJSON *patch = fx_json("{status: {nominatedNodeName: n1}}");
	struct kube_error ke = { 0 };
	assert_int_equal(kube_patch(v->c, spath, KUBE_PATCH_MERGE, patch, NULL, &ke), 0);
	cJSON_Delete(patch);
	free(spath);
	cJSON *obj = get_pod(v, "nom", &ke);
	char *e = NULL;
	struct sk_pod *p = sk_pod_decode(obj, &e);
	cJSON_Delete(obj);
	assert_non_null(p);
	assert_string_equal(p->nominated_node_name, "n1");
	char *err = NULL;
	assert_int_equal(sk_preempt_clear_nominated(v->pc, p, &err), 0);
	obj = get_pod(v, "nom", &ke);
	assert_null(kube_obj_get_string(obj, "status.nominatedNodeName"));
	cJSON_Delete(obj);
	sk_pod_unref(p);
}

/* Waits until the informer's copy of default/<name> has resourceVersion rv (NULL: is gone). */
static void wait_store_version(struct kube_informer *inf, const char *name, const char *rv)
{
	char key[256];
	snprintf(key, sizeof(key), "default/%s", name);
	for (int i = 0; i < 500; i++) {
		cJSON *o = kube_store_get(inf, key);
		const char *have = o ? kube_meta_resource_version(o) : NULL;
		bool ok = rv ? have && strcmp(have, rv) == 0 : !o;
		cJSON_Delete(o);
		if (ok)
			return;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	fail_msg("the informer never saw %s at %s", name, rv ? rv : "(deleted)");
}

static struct sk_pod *pod_now(struct env *v, const char *name)
{
	cJSON *obj = get_pod(v, name, &(struct kube_error){ 0 });
	assert_non_null(obj);
	char *e = NULL;
	struct sk_pod *p = sk_pod_decode(obj, &e);
	free(e);
	cJSON_Delete(obj);
	assert_non_null(p);
	return p;
}

static void set_start(struct env *v, const char *name, const char *t)
{
	char *spath = kube_path("", "v1", "pods", "default", name, "status");
	char yaml[256];
	snprintf(yaml, sizeof(yaml), "{status: {startTime: '%s'}}", t);
	cJSON *patch = fx_json(yaml);
	struct kube_error ke = { 0 };
	assert_int_equal(kube_patch(v->c, spath, KUBE_PATCH_MERGE, patch, NULL, &ke), 0);
	cJSON_Delete(patch);
	free(spath);
}

/* The per-version memo of start time and "terminating by preemption": a pod's facts are those of
 * its own resourceVersion (upstream reads them from the snapshot's pod), also after the store
 * moved on or lost the pod; a version the store never held as such reads the store's current
 * object, and is not memoized. The table's rows run after the store moved from v1 to v2. */
static void test_facts_by_version(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: ver, namespace: default, finalizers: [test/keep]}, "
	       "spec: {nodeName: n1, containers: [{name: c, image: x}]}}");
	set_start(v, "ver", "1970-01-01T00:00:05Z");
	struct sk_pod *v1 = pod_now(v, "ver");
	struct kube_informer *inf = pod_informer(v);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	wait_store_version(inf, "ver", v1->resource_version);
	char *other_yaml = NULL;
	assert_true(asprintf(&other_yaml,
			     "{metadata: {name: ver, namespace: default, uid: %s, resourceVersion: '999999'}, "
			     "spec: {containers: [{name: c}]}}",
			     v1->uid) > 0);
	struct sk_pod *unseen = fx_pod(other_yaml); /* same pod, a version the store never held */
	free(other_yaml);

	assert_true(sk_preempt_pod_start_time(pc, v1) == 5000000000LL); /* read, memoized */
	assert_false(sk_preempt_terminating_by_preemption(pc, v1));
	set_start(v, "ver", "1970-01-01T00:00:07Z");
	struct sk_pod *v2 = pod_now(v, "ver");
	wait_store_version(inf, "ver", v2->resource_version);
	struct {
		const struct sk_pod *pod;
		int64_t start;
	} rows[] = {
		{ v1, 5000000000LL },     /* its own version's start, not the store's newer one */
		{ v2, 7000000000LL },     /* the new version */
		{ unseen, 7000000000LL }, /* the store's current object */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_true(sk_preempt_pod_start_time(pc, rows[i].pod) == rows[i].start);

	/* The eviction: v3 carries deletionTimestamp and DisruptionTarget. */
	struct sk_pod *pre = fx_pod("{metadata: {name: p, uid: p}, spec: {priority: 10, containers: [{name: c}]}}");
	char *err = NULL;
	assert_int_equal(sk_preempt_victim(pc, pre, v2, "n1", "m", &err), 0);
	struct sk_pod *v3 = pod_now(v, "ver");
	wait_store_version(inf, "ver", v3->resource_version);
	assert_false(sk_preempt_terminating_by_preemption(pc, v2)); /* the version before (memoized) */
	assert_true(sk_preempt_terminating_by_preemption(pc, unseen)); /* the store's object */
	assert_true(sk_preempt_terminating_by_preemption(pc, v3));

	/* Gone from the store: the version read last keeps its facts (one memo slot per pod); the
	 * versions it replaced and an unseen one have none. */
	char *path = kube_path("", "v1", "pods", "default", "ver", NULL);
	cJSON *patch = fx_json("{metadata: {finalizers: null}}");
	struct kube_error ke = { 0 };
	assert_int_equal(kube_patch(v->c, path, KUBE_PATCH_MERGE, patch, NULL, &ke), 0);
	cJSON_Delete(patch);
	free(path);
	wait_store_version(inf, "ver", NULL);
	assert_true(sk_preempt_pod_start_time(pc, v3) == 7000000000LL);
	assert_true(sk_preempt_terminating_by_preemption(pc, v3));
	assert_true(sk_preempt_pod_start_time(pc, v1) == -1);
	assert_true(sk_preempt_pod_start_time(pc, v2) == -1);
	assert_true(sk_preempt_pod_start_time(pc, unseen) == -1);
	assert_false(sk_preempt_terminating_by_preemption(pc, unseen));
	sk_pod_unref(v1);
	sk_pod_unref(v2);
	sk_pod_unref(v3);
	sk_pod_unref(unseen);
	sk_pod_unref(pre);
	sk_preempt_client_free(pc);
	kube_informer_free(inf);
}

/* A pod object of uid and rv: start (NULL: none), and with terminating a deletionTimestamp and
 * the scheduler's DisruptionTarget condition. */
static cJSON *facts_obj(const char *uid, const char *rv, const char *start, bool terminating)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", "rem");
	cJSON_AddStringToObject(md, "namespace", "default");
	cJSON_AddStringToObject(md, "uid", uid);
	cJSON_AddStringToObject(md, "resourceVersion", rv);
	if (terminating)
		cJSON_AddStringToObject(md, "deletionTimestamp", "2026-01-01T00:00:00Z");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "spec"), "nodeName", "n1");
	cJSON *st = cJSON_AddObjectToObject(o, "status");
	if (start)
		cJSON_AddStringToObject(st, "startTime", start);
	if (terminating) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "DisruptionTarget");
		cJSON_AddStringToObject(c, "status", "True");
		cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(st, "conditions"), c);
	}
	return o;
}

/* obj decoded as the daemon's pod handlers decode the informer's object: its text offered to the
 * view (scheduler/api/raw.h), or with informer false as anything else is decoded. */
static struct sk_pod *decode_as(const cJSON *obj, bool informer)
{
	struct kube_text *t = NULL;
	if (informer) {
		char *s = cJSON_PrintUnformatted(obj);
		assert_non_null(s);
		t = kube_text_adopt(s);
		assert_non_null(t);
	}
	sk_obj_raw_offer(obj, t);
	char *e = NULL;
	struct sk_pod *p = sk_pod_decode(obj, &e);
	sk_obj_raw_offer(NULL, NULL);
	kube_text_unref(t);
	free(e);
	assert_non_null(p);
	return p;
}

/* A view decoded from the informer's object answers its own version's facts (upstream reads the
 * snapshot pod's fields), also when the store holds another version; so does a copy of it
 * (sk_pod_with_node: an assumed pod). Any other view asks the store as before. The store holds
 * v2 (start 7 s) throughout, and each row's object carries facts the store does not have, so a
 * row tells which answered. */
static void test_own_facts(void **state)
{
	struct env *v = *state;
	create(v, "", "v1", "pods", "default",
	       "{apiVersion: v1, kind: Pod, metadata: {name: rem, namespace: default}, "
	       "spec: {nodeName: n1, containers: [{name: c, image: x}]}}");
	set_start(v, "rem", "1970-01-01T00:00:05Z");
	struct sk_pod *v1 = pod_now(v, "rem");
	set_start(v, "rem", "1970-01-01T00:00:07Z");
	struct sk_pod *v2 = pod_now(v, "rem");
	struct kube_informer *inf = pod_informer(v);
	wait_store_version(inf, "rem", v2->resource_version);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	const char *u = v1->uid, *r1 = v1->resource_version, *r2 = v2->resource_version;
	struct {
		const char *name;
		const char *uid, *rv, *start;
		bool terminating, informer, copy;
		int64_t want_start;
		bool want_terminating;
	} rows[] = {
		{ "v1 from the informer", u, r1, "1970-01-01T00:00:03Z", false, true, false, 3000000000LL, false },
		{ "v1 from the informer, no start time", u, r1, NULL, false, true, false, -1, false },
		{ "v1 from the informer, a bad start time", u, r1, "yesterday", false, true, false, -1, false },
		{ "v1 from the informer, terminating", u, r1, "1970-01-01T00:00:03Z", true, true, false, 3000000000LL, true },
		{ "a copy of v1 from the informer", u, r1, "1970-01-01T00:00:03Z", true, true, true, 3000000000LL, true },
		{ "v2 from the informer", u, r2, "1970-01-01T00:00:09Z", false, true, false, 9000000000LL, false },
		{ "another uid from the informer", "other", r1, "1970-01-01T00:00:03Z", false, true, false, 3000000000LL,
		  false },
		{ "v1 not from the informer: the store's v2", u, r1, "1970-01-01T00:00:03Z", true, false, false, 7000000000LL,
		  false },
		{ "a copy of v1 not from the informer", u, r1, "1970-01-01T00:00:03Z", true, false, true, 7000000000LL, false },
		{ "v2 not from the informer: the store's (memoized)", u, r2, "1970-01-01T00:00:09Z", false, false, false,
		  7000000000LL, false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *o = facts_obj(rows[i].uid, rows[i].rv, rows[i].start, rows[i].terminating);
		struct sk_pod *p = decode_as(o, rows[i].informer);
		cJSON_Delete(o);
		if (rows[i].copy) {
			struct sk_pod *c = sk_pod_with_node(p, "n2");
			assert_non_null(c);
			sk_pod_unref(p);
			p = c;
		}
		int64_t start = sk_preempt_pod_start_time(pc, p);
		bool term = sk_preempt_terminating_by_preemption(pc, p);
		if (start != rows[i].want_start || term != rows[i].want_terminating)
			fail_msg("%s: start %lld terminating %d, want %lld %d", rows[i].name, (long long)start, term,
				 (long long)rows[i].want_start, rows[i].want_terminating);
		sk_pod_unref(p);
	}
	sk_preempt_client_free(pc);
	sk_pod_unref(v1);
	sk_pod_unref(v2);
	kube_informer_free(inf);
}

/* The questions the store's text answers without a parse (deleted? may the victim carry the
 * scheduler's DisruptionTarget condition?) give the parse's answers: on plain text, on text with
 * an escape (the parse then), and where the member names or the reason appear elsewhere in the
 * object (annotations), which a byte search must not take for the member itself. */
static void test_text_questions(void **state)
{
	struct env *v = *state;
	static const char cond[] = "{type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler, message: m}";
	struct {
		const char *name, *annotations, *conditions;
		bool other_uid; /* ask for a pod of another uid under the name */
		bool deleted;   /* sk_preempt_pod_deleted */
		bool patched;   /* sk_preempt_victim sends the status patch */
	} rows[] = {
		{ "plain", "{}", NULL, false, false, true },
		{ "escaped", "{q: 'say \"hi\"'}", NULL, false, false, true },
		{ "names-elsewhere", "{uid: x, deletionTimestamp: '2026-01-01T00:00:00Z', r: PreemptionByScheduler}", NULL, false,
		  false, true },
		{ "other-uid", "{}", NULL, true, true, true },
		{ "other-uid-escaped", "{q: 'a\\b'}", NULL, true, true, true },
		{ "has-condition", "{}", cond, false, false, false },
		{ "has-condition-escaped", "{q: 'say \"hi\"'}", cond, false, false, false },
		{ "other-message",
		  "{}",
		  "{type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler, message: another}",
		  false,
		  false,
		  true },
	};
	size_t n = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < n; i++) {
		char *yaml = NULL;
		assert_true(asprintf(&yaml,
				     "{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: default, annotations: %s}, "
				     "spec: {nodeName: n1, containers: [{name: c, image: x}]}}",
				     rows[i].name, rows[i].annotations) > 0);
		create(v, "", "v1", "pods", "default", yaml);
		free(yaml);
		if (rows[i].conditions) {
			char *spath = kube_path("", "v1", "pods", "default", rows[i].name, "status");
			char *py = NULL;
			assert_true(asprintf(&py, "{status: {conditions: [%s]}}", rows[i].conditions) > 0);
			cJSON *patch = fx_json(py);
			struct kube_error ke = { 0 };
			assert_int_equal(kube_patch(v->c, spath, KUBE_PATCH_STRATEGIC, patch, NULL, &ke), 0);
			cJSON_Delete(patch);
			free(py);
			free(spath);
		}
	}
	struct kube_informer *inf = pod_informer(v);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	struct sk_pod *pre = fx_pod("{metadata: {name: p, uid: p}, spec: {priority: 10, containers: [{name: c}]}}");
	for (size_t i = 0; i < n; i++) {
		struct sk_pod *pod = pod_now(v, rows[i].name);
		wait_store_version(inf, rows[i].name, pod->resource_version);
		if (rows[i].other_uid) {
			char *y = NULL;
			assert_true(asprintf(&y, "{metadata: {name: %s, namespace: default, uid: not-the-uid}, spec: {nodeName: n1}}",
					     rows[i].name) > 0);
			sk_pod_unref(pod);
			pod = fx_pod(y);
			free(y);
		}
		if (sk_preempt_pod_deleted(pc, pod) != rows[i].deleted)
			fail_msg("%s: deleted %d, want %d", rows[i].name, !rows[i].deleted, rows[i].deleted);
		uint64_t patches = kube_client_request_count(v->c, "PATCH", 200);
		char *err = NULL;
		sk_preempt_victim(pc, pre, pod, "n1", "m", &err);
		free(err);
		bool patched = kube_client_request_count(v->c, "PATCH", 200) != patches;
		if (patched != rows[i].patched)
			fail_msg("%s: patched %d, want %d", rows[i].name, patched, rows[i].patched);
		sk_pod_unref(pod);
	}
	sk_pod_unref(pre);
	sk_preempt_client_free(pc);
	kube_informer_free(inf);
}

/* Many pods decoded from the informer's objects (the Preemption workload's 20,000 low pods, then
 * three times as many): each answers its own start time, never another pod's (nothing in the
 * store, no memo: a view's facts are its own). */
static void test_many_pods(void **state)
{
	struct env *v = *state;
	struct kube_informer *inf = pod_informer(v);
	struct sk_preempt_client *pc = sk_preempt_client_new(v->c, inf, NULL);
	static const struct {
		const char *uid_fmt; /* %d: the pod's number */
		int n;
	} rows[] = {
		{ "0f3c2a1e-7b6d-4c5a-9e8f-%012d", 20000 },
		{ "u%d", 20000 },
		{ "%d-0f3c2a1e-7b6d-4c5a-9e8f-00000000", 60000 },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		int n = rows[r].n;
		struct sk_pod **pods = calloc((size_t)n, sizeof(*pods));
		assert_non_null(pods);
		for (int i = 0; i < n; i++) {
			char uid[64], rv[16], start[32];
			snprintf(uid, sizeof(uid), rows[r].uid_fmt, i);
			snprintf(rv, sizeof(rv), "%d", 1000 + i);
			time_t t = (time_t)(r * 100000 + (size_t)i + 1);
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
			cJSON *o = cJSON_CreateObject();
			cJSON *md = cJSON_AddObjectToObject(o, "metadata");
			cJSON_AddStringToObject(md, "name", uid);
			cJSON_AddStringToObject(md, "namespace", "many");
			cJSON_AddStringToObject(md, "uid", uid);
			cJSON_AddStringToObject(md, "resourceVersion", rv);
			cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "spec"), "nodeName", "n1");
			cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "status"), "startTime", start);
			pods[i] = decode_as(o, true);
			cJSON_Delete(o);
		}
		for (int i = 0; i < n; i++) {
			int64_t want = (int64_t)(r * 100000 + (size_t)i + 1) * 1000000000LL;
			int64_t got = sk_preempt_pod_start_time(pc, pods[i]);
			if (got != want)
				fail_msg("row %zu pod %d: start %lld, want %lld", r, i, (long long)got, (long long)want);
			sk_pod_unref(pods[i]);
		}
		free(pods);
	}
	sk_preempt_client_free(pc);
	kube_informer_free(inf);
}

static void test_json_helpers(void **state)
{
	(void)state;
	cJSON *p = fx_json("{metadata: {name: a}, status: {startTime: '1970-01-01T00:00:05Z'}}");
	assert_true(sk_preempt_start_time_of(p) == 5000000000LL);
	assert_false(sk_preempt_terminating_of(p));
	cJSON_Delete(p);
	p = fx_json("{metadata: {name: a}, status: {}}");
	assert_true(sk_preempt_start_time_of(p) == -1);
	cJSON_Delete(p);
	/* the condition without a deletionTimestamp, or with another reason, is not "terminating by preemption" */
	p = fx_json("{metadata: {name: a}, status: {conditions: [{type: DisruptionTarget, status: 'True', reason: "
		    "PreemptionByScheduler}]}}");
	assert_false(sk_preempt_terminating_of(p));
	cJSON_Delete(p);
	p = fx_json("{metadata: {name: a, deletionTimestamp: '2026-01-01T00:00:00Z'}, status: {conditions: [{type: "
		    "DisruptionTarget, status: 'True', reason: EvictionByEvictionAPI}]}}");
	assert_false(sk_preempt_terminating_of(p));
	cJSON_Delete(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_victim_patch_then_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_condition_already_present_skips_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_pdbs_by_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear_nominated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pod_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_facts_by_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_questions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_pods, setup, teardown),
		cmocka_unit_test(test_json_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
