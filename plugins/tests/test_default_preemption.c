/* Tests for plugins/DefaultPreemption (upstream default_preemption_test tables, ported as values:
 * TestPostFilter, TestDryRunPreemption / SelectVictimsOnNode, PDB accounting, eligibility
 * (TestPodEligibleToPreemptOthers), pickOneNodeForPreemption criteria, number of candidates,
 * args), plus victim eviction, waiting victims, nominated pods and the NULL-callback paths. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/DefaultPreemption/default_preemption.h"
#include "kube/featuregate.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/record.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fixtures.h"

#define LOW "0"
#define MID "100"
#define HIGH "1000"
#define VERY_HIGH "10000"

/* ---------- a framework with a controllable env ---------- */

/* SchedulerAsyncPreemption for the frameworks built next: main runs every test with it off, then
 * on (the victims are then evicted by DefaultPreemption's workers; post_filter waits for them). */
static bool g_async;

struct tenv {
	pthread_mutex_t mu; /* the callbacks below run on the preemption workers too */
	pthread_cond_t cv;
	int nactivated;
	char activated[64];
	const char *block;     /* preempt_victim of this victim ("*": any) waits while block is set */
	char blocked_name[64]; /* the last victim that waited there */
	int nblocked;          /* calls waiting there */
	char marked_gone[64];  /* pod_deleted answers true for this victim (its deletion arrived) */
	bool no_wait;          /* post_filter returns without waiting for the evictions */
	struct sk_config *cfg;
	struct sk_framework *fw;
	struct sk_pool *pool;
	struct sk_nominator *nom;
	struct sk_snapshot *snap;
	const char *pdb_json[4];
	int npdbs;
	int ndeleted;
	char deleted[16][64];
	char cond_msg[256];
	const char *delete_error;
	const char *gone; /* victim name for which preempt_victim answers "already gone" */
	int npreempt_calls;
	int nevents;
	char last_event[256];
	int start_reads; /* t_start calls (atomic: the dry run's pool threads call it) */
	const char *start_names[8];
	int64_t start_ns[8];
	int nstart;
};

static const struct sk_snapshot *t_snapshot(void *ctx) { return ((struct tenv *)ctx)->snap; }

static int t_list_pdbs(void *ctx, struct sk_pdb ***out, char **err)
{
	struct tenv *t = ctx;
	*out = NULL;
	if (!t->npdbs)
		return 0;
	struct sk_pdb **l = calloc((size_t)t->npdbs, sizeof(*l));
	assert_non_null(l);
	for (int i = 0; i < t->npdbs; i++) {
		cJSON *j = fx_json(t->pdb_json[i]);
		l[i] = sk_pdb_decode(j, err);
		cJSON_Delete(j);
		assert_non_null(l[i]);
	}
	*out = l;
	return t->npdbs;
}

static int t_preempt(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim, const char *node,
		     const char *msg, char **err)
{
	struct tenv *t = ctx;
	(void)preemptor;
	(void)node;
	pthread_mutex_lock(&t->mu);
	int rc = 0;
	if (t->block && (!strcmp(t->block, victim->name) || !strcmp(t->block, "*"))) {
		snprintf(t->blocked_name, sizeof(t->blocked_name), "%s", victim->name);
		t->nblocked++;
		pthread_cond_broadcast(&t->cv);
		while (t->block && (!strcmp(t->block, victim->name) || !strcmp(t->block, "*")))
			pthread_cond_wait(&t->cv, &t->mu);
		t->nblocked--;
	}
	t->npreempt_calls++;
	if (t->gone && !strcmp(t->gone, victim->name)) {
		rc = 1;
	} else if (t->delete_error) {
		*err = strdup(t->delete_error);
		rc = -1;
	} else {
		snprintf(t->cond_msg, sizeof(t->cond_msg), "%s", msg);
		assert_true(t->ndeleted < 16);
		snprintf(t->deleted[t->ndeleted++], 64, "%s", victim->name);
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

static bool t_feature(void *ctx, const char *gate)
{
	(void)ctx;
	return strcmp(gate, "SchedulerAsyncPreemption") ? kube_feature_gate_enabled(NULL, gate) : g_async;
}

static bool t_pod_deleted(void *ctx, const struct sk_pod *pod)
{
	struct tenv *t = ctx;
	pthread_mutex_lock(&t->mu);
	bool gone = !strcmp(t->marked_gone, pod->name);
	pthread_mutex_unlock(&t->mu);
	return gone;
}

static void t_activate(void *ctx, const struct sk_pod *pod)
{
	struct tenv *t = ctx;
	pthread_mutex_lock(&t->mu);
	t->nactivated++;
	snprintf(t->activated, sizeof(t->activated), "%s", pod->name);
	pthread_mutex_unlock(&t->mu);
}

static int64_t t_start(void *ctx, const struct sk_pod *pod)
{
	struct tenv *t = ctx;
	__atomic_fetch_add(&t->start_reads, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < t->nstart; i++)
		if (!strcmp(t->start_names[i], pod->name))
			return t->start_ns[i];
	return -1;
}

/* In these tests a terminating pod labelled disruption-target=preemption stands for one with the
 * DisruptionTarget=True/PreemptionByScheduler condition. */
static bool t_terminating(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	const char *v = sk_labels_get(&pod->labels, "disruption-target");
	return pod->terminating && v && !strcmp(v, "preemption");
}

static void t_event(void *ctx, const struct sk_pod *pod, const char *type, const char *reason, const char *action,
		    const char *note)
{
	struct tenv *t = ctx;
	pthread_mutex_lock(&t->mu);
	t->nevents++;
	snprintf(t->last_event, sizeof(t->last_event), "%s %s %s %s %s", pod->name, type, reason, action, note);
	pthread_mutex_unlock(&t->mu);
}

/* "error=true" node label makes this PreFilter plugin's AddPod/RemovePod fail (upstream TestPlugin). */
static struct sk_status tp_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *r)
{
	(void)self, (void)cs, (void)pod, (void)r;
	return sk_ok();
}
static struct sk_status tp_add(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			       const struct sk_pod *other, const struct sk_node_info *ni)
{
	(void)self, (void)cs, (void)other;
	const char *v = sk_labels_get(&ni->node->labels, "error");
	if (v && !strcmp(v, "true"))
		return sk_statusf(SK_ERROR, "failed to add pod: %s", pod->name);
	return sk_ok();
}
static struct sk_status tp_remove(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_pod *other, const struct sk_node_info *ni)
{
	(void)self, (void)cs, (void)other;
	const char *v = sk_labels_get(&ni->node->labels, "error");
	if (v && !strcmp(v, "true"))
		return sk_statusf(SK_ERROR, "failed to remove pod: %s", pod->name);
	return sk_ok();
}
static const struct sk_plugin_desc test_plugin = {
	SK_PLUGIN_HEADER,
	.name = "test-plugin",
	.pre_filter = tp_pre_filter,
	.pre_filter_add_pod = tp_add,
	.pre_filter_remove_pod = tp_remove,
};

enum { WITH_DELETE = 1, WITH_POOL = 2 };

/* extra_plugins: more multiPoint entries (YAML flow items) or NULL; args: pluginConfig items or NULL. */
static struct tenv *tenv_new(const char *extra_plugins, const char *args, int flags)
{
	static bool registered;
	if (!registered) {
		char *err = NULL;
		assert_int_equal(sk_registry_register(&test_plugin, &err), 0);
		registered = true;
	}
	struct tenv *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	char *text = NULL;
	assert_true(asprintf(&text,
			     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			     "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
			     "    multiPoint:\n      disabled: [{name: '*'}]\n"
			     "      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeResourcesFit}, "
			     "{name: DefaultPreemption}%s%s]\n"
			     "  pluginConfig: [%s]\n",
			     extra_plugins ? ", " : "", extra_plugins ? extra_plugins : "", args ? args : "") >= 0);
	struct sk_errors e = { 0 };
	t->cfg = sk_config_load(text, strlen(text), &e);
	if (!t->cfg) {
		char *all = sk_errors_join(&e, "\n");
		fail_msg("config: %s", all);
	}
	free(text);
	sk_errors_free(&e);
	t->nom = sk_nominator_new();
	char *err = NULL;
	if (flags & WITH_POOL) {
		t->pool = sk_pool_new(4, &err);
		assert_non_null(t->pool);
	}
	struct sk_framework_env env = {
		.ctx = t, .snapshot = t_snapshot, .nominator = t->nom, .pool = t->pool, .event = t_event,
		.list_pdbs = t_list_pdbs, .pod_start_time = t_start, .terminating_by_preemption = t_terminating,
		.preempt_victim = (flags & WITH_DELETE) ? t_preempt : NULL,
		.feature_enabled = t_feature, .activate = t_activate, .pod_deleted = t_pod_deleted,
	};
	t->fw = sk_framework_new(t->cfg, &t->cfg->profiles[0], &env, &err);
	if (!t->fw)
		fail_msg("framework: %s", err);
	return t;
}

static void tenv_free(struct tenv *t)
{
	sk_framework_unref(t->fw);
	sk_config_free(t->cfg);
	sk_nominator_free(t->nom);
	sk_pool_free(t->pool);
	sk_snapshot_free(t->snap);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t);
}

static struct sk_plugin *dp(struct tenv *t)
{
	for (int i = 0; i < sk_framework_nplugins(t->fw); i++) {
		struct sk_plugin *pl = sk_framework_instance(t->fw, i);
		if (!strcmp(pl->desc->name, "DefaultPreemption"))
			return pl;
	}
	fail_msg("no DefaultPreemption instance");
	return NULL;
}

/* "node1:32" -> node1 with pods 32 (and cpu/mem from res: "" none, "large" 300m/300, "very" 500m/500,
 * "node" 200m/400); labels optional after a second colon ("error=true"). */
static struct sk_node *mk_node(const char *name, const char *pods, const char *res, const char *labels)
{
	char buf[512];
	const char *cpu = NULL, *mem = NULL;
	if (!strcmp(res, "large"))
		cpu = "300m", mem = "300";
	else if (!strcmp(res, "very"))
		cpu = "500m", mem = "500";
	else if (!strcmp(res, "node"))
		cpu = "200m", mem = "400";
	snprintf(buf, sizeof(buf), "{metadata: {name: %s%s%s%s}, status: {allocatable: {pods: '%s'%s%s%s%s%s}}}", name,
		 labels ? ", labels: {" : "", labels ? labels : "", labels ? "}" : "", pods, cpu ? ", cpu: " : "",
		 cpu ? cpu : "", mem ? ", memory: '" : "", mem ? mem : "", mem ? "'" : "");
	return fx_node(buf);
}

/* A pod: name, node (or NULL), priority, request ("" none, small/medium/large/very), extra metadata
 * YAML (labels etc., or NULL). */
static struct sk_pod *mk_pod(const char *name, const char *node, const char *prio, const char *req, const char *meta)
{
	const char *cpu = NULL, *mem = NULL;
	if (!strcmp(req, "small"))
		cpu = "100m", mem = "100";
	else if (!strcmp(req, "medium"))
		cpu = "200m", mem = "200";
	else if (!strcmp(req, "large"))
		cpu = "300m", mem = "300";
	else if (!strcmp(req, "very"))
		cpu = "500m", mem = "500";
	char res[128] = "";
	if (cpu)
		snprintf(res, sizeof(res), ", resources: {requests: {cpu: %s, memory: '%s'}}", cpu, mem);
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{metadata: {name: '%s', namespace: default, uid: '%s'%s%s}, spec: {%s%s%spriority: %s, "
		 "containers: [{name: c%s}]}}",
		 name, name, meta ? ", " : "", meta ? meta : "", node ? "nodeName: " : "", node ? node : "",
		 node ? ", " : "", prio, res);
	return fx_pod(buf);
}

/* Runs PreFilter then PostFilter. statuses: "node1=U,node2=UU" (others absent = UU). */
struct pf_out {
	enum sk_code code;
	char msg[1024];
	char nominated[64];
	bool clear;
};

static struct pf_out post_filter(struct tenv *t, const struct sk_pod *pod, const char *statuses)
{
	struct pf_out out = { 0 };
	struct sk_cycle_state *cs = sk_cycle_state_new(t->fw, false);
	struct sk_prefilter_result pre = { .all = true };
	int nn = 0;
	struct sk_status ps = sk_fw_run_pre_filter(t->fw, cs, pod, &pre, NULL, 0, &nn);
	free(pre.names);
	sk_status_reset(&ps);
	struct sk_node_status ns[16];
	struct sk_node_info *clones[16]; /* "name=U!": the status is of a clone, not the snapshot's node info */
	int nclones = 0;
	struct sk_filter_diagnosis diag = { .nodes = ns, .num_all_nodes = t->snap->nnodes };
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", statuses ? statuses : "");
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		assert_non_null(eq);
		*eq = '\0';
		if (!strcmp(tok, "*")) { /* nodes not listed: rejected by PreFilter with this code */
			diag.absent_unschedulable = !strcmp(eq + 1, "U");
			continue;
		}
		const struct sk_node_info *ni = sk_snapshot_get(t->snap, tok);
		assert_non_null(ni);
		char *bang = strchr(eq + 1, '!');
		if (bang) {
			*bang = '\0';
			assert_true(nclones < 16);
			ni = clones[nclones++] = sk_node_info_clone(ni);
			assert_non_null(ni);
		}
		assert_true(diag.n < 16);
		ns[diag.n].node = ni;
		ns[diag.n].status = sk_status(!strcmp(eq + 1, "U") ? SK_UNSCHEDULABLE : SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
					      NULL);
		diag.n++;
	}
	struct sk_postfilter_result r = { 0 };
	struct sk_plugin *pl = dp(t);
	struct sk_status s = pl->desc->post_filter(pl, cs, pod, &diag, &r);
	assert_int_equal(sk_dp_is_async(pl), g_async);
	if (!t->no_wait)
		sk_dp_wait_async(pl); /* the evictions are done when the checks run */
	out.code = s.code;
	char *m = sk_status_message(&s);
	snprintf(out.msg, sizeof(out.msg), "%s", m ? m : "");
	free(m);
	sk_status_reset(&s);
	snprintf(out.nominated, sizeof(out.nominated), "%s", r.nominated_node ? r.nominated_node : "");
	out.clear = r.clear_nominated;
	sk_cycle_state_free(cs);
	for (int i = 0; i < nclones; i++)
		sk_node_info_free(clones[i]);
	return out;
}

static int cmp_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void assert_deleted(struct tenv *t, const char *want)
{
	qsort(t->deleted, (size_t)t->ndeleted, sizeof(t->deleted[0]), cmp_names);
	char got[512] = "";
	for (int i = 0; i < t->ndeleted; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", t->deleted[i]);
	assert_string_equal(got, want);
}

/* ---------- TestPostFilter ---------- */

static void test_post_filter_simple_cases(void **state)
{
	(void)state;
	/* "pod with higher priority can be made schedulable" */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", LOW, "", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.msg, "");
	assert_string_equal(o.nominated, "node1");
	assert_deleted(t, "p1");
	assert_string_equal(t->cond_msg, "default-scheduler: preempting to accommodate a higher priority pod");
	assert_int_equal(t->nevents, 1);
	assert_string_equal(t->last_event, "p1 Normal Preempted Preempting Preempted by pod p on node node1");
	sk_pod_unref(p);

	/* "pod with tied priority is still unschedulable" */
	t->ndeleted = 0;
	p = mk_pod("p", NULL, LOW, "", NULL);
	o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_UNSCHEDULABLE);
	assert_string_equal(o.msg, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
	assert_string_equal(o.nominated, "");
	assert_true(o.clear);
	assert_int_equal(t->ndeleted, 0);
	sk_pod_unref(p);

	/* "preemption should respect filteredNodesStatuses" and the absent entry meaning UU */
	p = mk_pod("p", NULL, HIGH, "", NULL);
	o = post_filter(t, p, "node1=UU");
	assert_int_equal(o.code, SK_UNSCHEDULABLE);
	assert_string_equal(o.msg, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
	assert_true(o.clear);
	o = post_filter(t, p, NULL);
	assert_string_equal(o.msg, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
	/* a PreFilter Unschedulable (absent nodes Unschedulable): every node is a candidate */
	o = post_filter(t, p, "*=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node1");
	assert_deleted(t, "p1");
	t->ndeleted = 0;
	assert_int_equal(t->ndeleted, 0);
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_post_filter_one_node(void **state)
{
	(void)state;
	/* "pod can be made schedulable on one node" */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE | WITH_POOL);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", HIGH, "", NULL), NULL),
			      fx_node_info(mk_node("node2", "1", "", NULL), mk_pod("p2", "node2", LOW, "", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, MID, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U,node2=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node2");
	assert_deleted(t, "p2");
	sk_pod_unref(p);
	tenv_free(t);
}

static const char PDB_VIOLATING[] =
	"{metadata: {name: violating-pdb, namespace: default}, spec: {selector: {matchLabels: "
	"{test.kubernetes.io/is-violating-pdb: violating}}, minAvailable: '100%'}, status: {disruptionsAllowed: 0}}";
static const char PDB_NON_VIOLATING[] =
	"{metadata: {name: non-violating-pdb, namespace: default}, spec: {selector: {matchLabels: "
	"{test.kubernetes.io/is-violating-pdb: non-violating}}, minAvailable: '0'}, status: {disruptionsAllowed: 2147483647}}";

static void test_post_filter_min_highest_priority_with_pdbs(void **state)
{
	(void)state;
	/* "pod can be made schedulable on minHighestPriority node" */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->pdb_json[0] = PDB_VIOLATING;
	t->pdb_json[1] = PDB_NON_VIOLATING;
	t->npdbs = 2;
	t->snap = fx_snapshot(
		fx_node_info(mk_node("node1", "1", "", NULL),
			     mk_pod("p1", "node1", HIGH, "", "labels: {test.kubernetes.io/is-violating-pdb: non-violating}"),
			     mk_pod("p2", "node1", LOW, "", "labels: {test.kubernetes.io/is-violating-pdb: violating}"), NULL),
		fx_node_info(mk_node("node2", "1", "", NULL),
			     mk_pod("p3", "node2", MID, "", "labels: {test.kubernetes.io/is-violating-pdb: violating}"), NULL),
		NULL);
	struct sk_pod *p = mk_pod("p", NULL, VERY_HIGH, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U,node2=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node2");
	assert_deleted(t, "p3");
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_post_filter_no_candidates_messages(void **state)
{
	(void)state;
	/* "no candidate nodes found, no enough resource after removing low priority pods" */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "node", NULL), mk_pod("p1", "node1", LOW, "", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "node", NULL), mk_pod("p2", "node2", LOW, "", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	struct pf_out o = post_filter(t, p, "node1=U,node2=U");
	assert_int_equal(o.code, SK_UNSCHEDULABLE);
	assert_string_equal(o.msg, "preemption: 0/2 nodes are available: 2 Insufficient cpu.");
	assert_true(o.clear);
	tenv_free(t);

	/* "... mixed reasons, no lower priority pod and no enough CPU resource" */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", HIGH, "", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "node", NULL), mk_pod("p2", "node2", LOW, "", NULL), NULL),
			      fx_node_info(mk_node("node3", "1", "", NULL), mk_pod("p3", "node3", HIGH, "", NULL), NULL),
			      NULL);
	o = post_filter(t, p, "node1=U,node2=U,node3=U");
	assert_string_equal(o.msg, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims "
				   "found for incoming pod.");
	tenv_free(t);

	/* "... 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource" */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "node", NULL), mk_pod("p1", "node1", LOW, "", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "node", NULL), mk_pod("p2", "node2", LOW, "", NULL), NULL),
			      fx_node_info(mk_node("node3", "32", "node", NULL), NULL),
			      fx_node_info(mk_node("node4", "32", "node", NULL), NULL), NULL);
	o = post_filter(t, p, "node1=U,node2=U,node4=UU");
	assert_string_equal(o.msg, "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful "
				   "for scheduling.");
	assert_int_equal(t->ndeleted, 0);
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_post_filter_add_remove_errors(void **state)
{
	(void)state;
	/* "only one node but failed with TestPlugin" */
	struct tenv *t = tenv_new("{name: test-plugin}", NULL, WITH_DELETE);
	t->snap = fx_snapshot(
		fx_node_info(mk_node("node1", "32", "large", "error: 'true'"), mk_pod("p1", "node1", LOW, "", NULL), NULL),
		NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	struct pf_out o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_ERROR);
	assert_string_equal(o.msg, "preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p");
	tenv_free(t);

	/* "one failed with TestPlugin and the other pass": node2 is still nominated */
	t = tenv_new("{name: test-plugin}", NULL, WITH_DELETE);
	t->snap = fx_snapshot(
		fx_node_info(mk_node("node1", "32", "large", "error: 'true'"), mk_pod("p1", "node1", LOW, "", NULL), NULL),
		fx_node_info(mk_node("node2", "32", "large", NULL), mk_pod("p2", "node2", LOW, "medium", NULL), NULL), NULL);
	o = post_filter(t, p, "node1=U,node2=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node2");
	assert_deleted(t, "p2");
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_post_filter_without_api_callbacks(void **state)
{
	(void)state;
	/* env without preempt_victim (daemon not wired yet): an Error explaining why, no nomination */
	struct tenv *t = tenv_new(NULL, NULL, 0);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", LOW, "", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U");
	if (g_async) {
		/* asynchronous (upstream prepareCandidateAsync): nominated at once; the worker's error
		 * activates the preemptor, which is then no longer preempting */
		assert_int_equal(o.code, SK_SUCCESS);
		assert_string_equal(o.nominated, "node1");
		assert_int_equal(t->nactivated, 1);
		assert_string_equal(t->activated, "p");
		assert_false(sk_dp_running_preemption(dp(t), "p"));
	} else {
		assert_int_equal(o.code, SK_ERROR);
		assert_string_equal(o.msg, "preemption: cannot preempt pod default/p1: profile default-scheduler has no "
					   "API client to delete victims");
		assert_string_equal(o.nominated, "");
		assert_int_equal(t->nactivated, 0);
	}
	/* a failing delete is an Error too (asynchronous: the preemptor is activated) */
	tenv_free(t);
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->delete_error = "pods \"p1\" is forbidden";
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", LOW, "", NULL), NULL),
			      NULL);
	o = post_filter(t, p, "node1=U");
	if (g_async) {
		assert_int_equal(o.code, SK_SUCCESS);
		assert_string_equal(o.nominated, "node1");
		assert_int_equal(t->nactivated, 1);
		assert_int_equal(t->nevents, 0);
	} else {
		assert_int_equal(o.code, SK_ERROR);
		assert_string_equal(o.msg, "preemption: pods \"p1\" is forbidden");
		assert_int_equal(t->nactivated, 0);
	}
	sk_pod_unref(p);
	tenv_free(t);
}

/* Waits until a call waits on `name` ("*": any); copies the victim's name into out. */
static void wait_blocked(struct tenv *t, const char *name, char out[64])
{
	pthread_mutex_lock(&t->mu);
	while (t->nblocked == 0 || (strcmp(name, "*") && strcmp(t->blocked_name, name)))
		pthread_cond_wait(&t->cv, &t->mu);
	snprintf(out, 64, "%s", t->blocked_name);
	pthread_mutex_unlock(&t->mu);
}

static void unblock(struct tenv *t, const char *next)
{
	pthread_mutex_lock(&t->mu);
	t->block = next;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

static bool pre_enqueue_waits(struct sk_plugin *pl, const struct sk_pod *p)
{
	struct sk_status s = pl->desc->pre_enqueue(pl, p);
	bool waits = s.code != SK_SUCCESS;
	if (waits) {
		assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
		char *m = sk_status_message(&s);
		assert_string_equal(m, "waiting for the preemption for this pod to be finished");
		free(m);
	}
	sk_status_reset(&s);
	return waits;
}

/* Asynchronous preemption (upstream prepareCandidateAsync / IsPodRunningPreemption / PreEnqueue):
 * nominated before any eviction; while the evictions run PreEnqueue holds the preemptor back;
 * once the last victim's eviction has begun, its deletion arriving lets the preemptor through
 * even before the API call returns. Without the gate PreEnqueue never holds a pod and no event is
 * registered. */
static void test_async_preemption_in_flight(void **state)
{
	(void)state;
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	struct sk_plugin *pl = dp(t);
	struct sk_event_registration regs[4];
	int nregs = pl->desc->events_to_register(pl, regs, 4);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	if (!g_async) {
		assert_int_equal(nregs, 0);
		assert_false(pre_enqueue_waits(pl, p));
		sk_pod_unref(p);
		tenv_free(t);
		return;
	}
	assert_int_equal(nregs, 1);
	assert_int_equal(regs[0].event.resource, SK_EV_ASSIGNED_POD);
	assert_int_equal(regs[0].event.action, SK_ACT_DELETE);
	assert_int_equal(regs[0].hint(pl, p, NULL, NULL), SK_QUEUE_SKIP);
	/* two victims must go (300m node, 100m each, the preemptor asks 300m): v1, then v2 last */
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "large", NULL), mk_pod("v1", "node1", LOW, "small", NULL),
					   mk_pod("v2", "node1", LOW, "small", NULL), NULL),
			      NULL);
	assert_false(pre_enqueue_waits(pl, p));
	t->block = "*";
	t->no_wait = true;
	struct pf_out o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node1"); /* nominated while nothing is evicted yet */
	char first[64], last[64];
	wait_blocked(t, "*", first); /* the first victim's call hangs */
	assert_int_equal(t->ndeleted, 0);
	assert_true(sk_dp_running_preemption(pl, "p"));
	assert_true(pre_enqueue_waits(pl, p)); /* not retried while in flight */
	const char *other = !strcmp(first, "v1") ? "v2" : "v1";
	unblock(t, other); /* the first goes; the last victim's call hangs */
	wait_blocked(t, other, last);
	assert_true(pre_enqueue_waits(pl, p));
	pthread_mutex_lock(&t->mu);
	snprintf(t->marked_gone, sizeof(t->marked_gone), "%s", last); /* its deletion arrives first */
	pthread_mutex_unlock(&t->mu);
	assert_false(pre_enqueue_waits(pl, p));
	unblock(t, NULL);
	sk_dp_wait_async(pl);
	assert_false(sk_dp_running_preemption(pl, "p"));
	assert_deleted(t, "v1,v2");
	assert_int_equal(t->nactivated, 0); /* success: the deletions requeue it, not Activate */
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_terminating_and_gone_victims(void **state)
{
	(void)state;
	/* a victim already being deleted gets no API call; one already gone (1) gets no event */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->gone = "p2";
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "2", "", NULL),
					   mk_pod("p1", "node1", LOW, "", "deletionTimestamp: '2026-01-01T00:00:00Z'"),
					   mk_pod("p2", "node1", LOW, "", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node1");
	assert_int_equal(t->ndeleted, 0);
	assert_int_equal(t->npreempt_calls, 1);
	assert_int_equal(t->nevents, 0);
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_waiting_victim_and_nominated_pods(void **state)
{
	(void)state;
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	struct sk_pod *w = mk_pod("w", "node1", LOW, "", NULL);
	/* room for two pods: the nominated higher-priority pod counts in the dry run */
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "2", "", NULL), sk_pod_ref(w), NULL), NULL);
	/* w waits at Permit: it is rejected with "preempted", not deleted */
	const char *plugins[] = { "SomePermit" };
	int64_t timeouts[] = { 60000 };
	assert_int_equal(sk_waiting_add(sk_framework_waiting_pods(t->fw), w, plugins, timeouts, 1), 0);
	/* nominated to node1: a lower-priority pod (cleared) and a higher one (kept) */
	struct sk_pod *nlow = mk_pod("nlow", NULL, MID, "", NULL), *nhigh = mk_pod("nhigh", NULL, VERY_HIGH, "", NULL);
	sk_nominator_add(t->nom, nlow, "node1");
	sk_nominator_add(t->nom, nhigh, "node1");
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "", NULL);
	struct pf_out o = post_filter(t, p, "node1=U");
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node1");
	assert_int_equal(t->ndeleted, 0);
	struct sk_status ws = sk_waiting_wait(sk_framework_waiting_pods(t->fw), w->uid);
	assert_int_equal(ws.code, SK_UNSCHEDULABLE);
	char *m = sk_status_message(&ws);
	assert_string_equal(m, "preempted");
	free(m);
	sk_status_reset(&ws);
	assert_null(sk_nominator_node_of(t->nom, "nlow"));
	assert_string_equal(sk_nominator_node_of(t->nom, "nhigh"), "node1");
	assert_string_equal(t->last_event, "w Normal Preempted Preempting Preempted by pod p on node node1");
	sk_pod_unref(p);
	sk_pod_unref(w);
	sk_pod_unref(nlow);
	sk_pod_unref(nhigh);
	tenv_free(t);
}

/* ---------- TestPodEligibleToPreemptOthers ---------- */

static void test_eligibility(void **state)
{
	(void)state;
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	const char *term = "deletionTimestamp: '2026-01-01T00:00:00Z', labels: {disruption-target: preemption}";
	t->snap = fx_snapshot(
		fx_node_info(mk_node("node1", "1", "", NULL), mk_pod("p1", "node1", LOW, "", term), NULL),
		fx_node_info(mk_node("node2", "1", "", NULL), mk_pod("p2", "node2", VERY_HIGH, "", term), NULL),
		fx_node_info(mk_node("node3", "1", "", NULL),
			     mk_pod("p3", "node3", LOW, "", "deletionTimestamp: '2026-01-01T00:00:00Z'"), NULL),
		NULL);
	struct {
		const char *name, *pod_json, *statuses, *want;
	} cases[] = {
		{ "Pod with 'PreemptNever' preemption policy",
		  "{metadata: {name: p, uid: p}, spec: {priority: 1000, preemptionPolicy: Never, containers: [{name: c}]}}",
		  "node1=U", "preemption: not eligible due to preemptionPolicy=Never." },
		{ "victim pod terminating by preemption on the nominated node",
		  "{metadata: {name: p, uid: p}, spec: {priority: 1000, containers: [{name: c}]}, status: "
		  "{nominatedNodeName: node1}}",
		  "node1=U", "preemption: not eligible due to a terminating pod on the nominated node." },
		{ "nominated node is UnschedulableAndUnresolvable: eligible again",
		  "{metadata: {name: p, uid: p}, spec: {priority: 1000, containers: [{name: c}]}, status: "
		  "{nominatedNodeName: node1}}",
		  "node1=UU", "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling." },
		{ "non-victim (higher priority) pod terminating: eligible",
		  "{metadata: {name: p, uid: p}, spec: {priority: 1000, containers: [{name: c}]}, status: "
		  "{nominatedNodeName: node2}}",
		  "node2=U", "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 "
			     "Preemption is not helpful for scheduling." },
		{ "terminating, but not because of preemption: eligible",
		  "{metadata: {name: p, uid: p}, spec: {priority: 1000, containers: [{name: c}]}, status: "
		  "{nominatedNodeName: node3}}",
		  "node2=U", "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 "
			     "Preemption is not helpful for scheduling." },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_pod *p = fx_pod(cases[i].pod_json);
		struct pf_out o = post_filter(t, p, cases[i].statuses);
		if (strcmp(o.msg, cases[i].want) != 0)
			fail_msg("%s: got %s", cases[i].name, o.msg);
		assert_int_equal(o.code, SK_UNSCHEDULABLE);
		sk_pod_unref(p);
	}
	assert_int_equal(t->ndeleted, 0);
	tenv_free(t);
}

/* ---------- TestDryRunPreemption / SelectVictimsOnNode ---------- */

struct dry_case {
	const char *name;
	const char *pdbs[2];
	const char *want; /* "node:victim,victim[:violations];..." sorted victims, or "" */
};

/* Renders a candidate as "node:victim,victim[:violations]" (victims sorted) after out's text. */
static void render_candidate(const struct sk_dp_candidate *c, char *out, size_t n)
{
	char names[8][64];
	for (int k = 0; k < c->nvictims; k++)
		snprintf(names[k], 64, "%s", c->victims[k].pod->name);
	qsort(names, (size_t)c->nvictims, 64, cmp_names);
	snprintf(out + strlen(out), n - strlen(out), "%s%s:", *out ? ";" : "", c->node);
	for (int k = 0; k < c->nvictims; k++)
		snprintf(out + strlen(out), n - strlen(out), "%s%s", k ? "," : "", names[k]);
	if (c->num_pdb_violations)
		snprintf(out + strlen(out), n - strlen(out), ":%d", c->num_pdb_violations);
}

/* Runs select-victims on every node of t->snap (as the dry run does) and renders the candidates. */
static void run_select(struct tenv *t, const struct sk_pod *pod, char *out, size_t n)
{
	struct sk_cycle_state *cs = sk_cycle_state_new(t->fw, false);
	struct sk_prefilter_result pre = { .all = true };
	int nn = 0;
	struct sk_status ps = sk_fw_run_pre_filter(t->fw, cs, pod, &pre, NULL, 0, &nn);
	free(pre.names);
	assert_int_equal(ps.code, SK_SUCCESS);
	struct sk_pdb **pdbs = NULL;
	int npdbs = t_list_pdbs(t, &pdbs, NULL);
	out[0] = '\0';
	for (int i = 0; i < t->snap->nnodes; i++) {
		struct sk_node_info *ni = sk_node_info_clone(t->snap->nodes[i]);
		struct sk_cycle_state *c2 = sk_cycle_state_clone(cs);
		struct sk_dp_candidate c = { .node = ni->node->name };
		struct sk_status s = sk_dp_select_victims_on_node(dp(t), c2, pod, ni, pdbs, npdbs, 1000, &c);
		if (s.code == SK_SUCCESS && c.nvictims > 0)
			render_candidate(&c, out, n);
		sk_status_reset(&s);
		sk_dp_candidate_clear(&c);
		sk_cycle_state_free(c2);
		sk_node_info_free(ni);
	}
	sk_pdb_list_free(pdbs, npdbs);
	sk_cycle_state_free(cs);
}

static void test_select_victims_tables(void **state)
{
	(void)state;
	char got[512];
	/* "a pod that fits on both nodes when lower priority pods are preempted" */
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL), mk_pod("p1", "node1", MID, "large", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "very", NULL), mk_pod("p2", "node2", MID, "large", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1;node2:p2");
	sk_pod_unref(p);
	/* "... but other pods running are higher priority, no preemption would happen" */
	p = mk_pod("p", NULL, LOW, "large", NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "");
	sk_pod_unref(p);
	tenv_free(t);

	/* "medium priority pod is preempted, but lower priority one stays as it is small" */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL), mk_pod("p1.1", "node1", LOW, "small", NULL),
					   mk_pod("p1.2", "node1", MID, "large", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "very", NULL), mk_pod("p2", "node2", MID, "large", NULL), NULL),
			      NULL);
	p = mk_pod("p", NULL, HIGH, "large", NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1.2;node2:p2");
	tenv_free(t);

	/* Start times are read only where removing every lower-priority pod lets the pod fit
	 * (node2: p2.2 alone fills it), once per potential victim there. */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL), mk_pod("p1.1", "node1", LOW, "small", NULL),
					   mk_pod("p1.2", "node1", LOW, "small", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "very", NULL), mk_pod("p2.1", "node2", LOW, "small", NULL),
					   mk_pod("p2.2", "node2", HIGH, "very", NULL), NULL),
			      NULL);
	struct sk_pod *big = mk_pod("p", NULL, HIGH, "very", NULL);
	run_select(t, big, got, sizeof(got));
	assert_string_equal(got, "node1:p1.1,p1.2");
	assert_int_equal(t->start_reads, 2); /* node1's two; node2's p2.1 is never asked about */
	sk_pod_unref(big);
	tenv_free(t);

	/* "mixed priority pods are preempted" */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL), mk_pod("p1.1", "node1", MID, "small", NULL),
					   mk_pod("p1.2", "node1", LOW, "small", NULL), mk_pod("p1.3", "node1", MID, "medium", NULL),
					   mk_pod("p1.4", "node1", HIGH, "small", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "very", NULL), mk_pod("p2", "node2", HIGH, "large", NULL), NULL),
			      NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1.2,p1.3");

	/* "... pick later StartTime one when priorities are equal": p1.2 started earlier, it stays */
	t->start_names[0] = "p1.1", t->start_ns[0] = 5;
	t->start_names[1] = "p1.2", t->start_ns[1] = 4;
	t->start_names[2] = "p1.3", t->start_ns[2] = 3;
	t->start_names[3] = "p1.4", t->start_ns[3] = 2;
	t->start_names[4] = "p2", t->start_ns[4] = 1;
	t->nstart = 5;
	sk_snapshot_free(t->snap);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL), mk_pod("p1.1", "node1", LOW, "small", NULL),
					   mk_pod("p1.2", "node1", LOW, "small", NULL), mk_pod("p1.3", "node1", MID, "medium", NULL),
					   mk_pod("p1.4", "node1", HIGH, "small", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "very", NULL), mk_pod("p2", "node2", HIGH, "large", NULL), NULL),
			      NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1.1,p1.3");
	sk_pod_unref(p);
	tenv_free(t);

	/* PDB cases: "preemption with violation of same pdb" and the DisruptedPods variants */
	const struct dry_case pdb_cases[] = {
		{ "violation of same pdb",
		  { "{metadata: {namespace: default}, spec: {selector: {matchLabels: {app: foo}}}, status: {disruptionsAllowed: 1}}" },
		  "node1:p1.1,p1.2:1" },
		{ "evicted pod not among the victims",
		  { "{metadata: {namespace: default}, spec: {selector: {matchLabels: {app: foo}}}, status: {disruptionsAllowed: 1, "
		    "disruptedPods: {p2: '2026-01-01T00:00:00Z'}}}" },
		  "node1:p1.1,p1.2:1" },
		{ "victim already in DisruptedPods",
		  { "{metadata: {namespace: default}, spec: {selector: {matchLabels: {app: foo}}}, status: {disruptionsAllowed: 1, "
		    "disruptedPods: {p1.2: '2026-01-01T00:00:00Z'}}}" },
		  "node1:p1.1,p1.2" },
		{ "PDB of another namespace", { "{metadata: {namespace: other}, spec: {selector: {matchLabels: {app: foo}}}}" },
		  "node1:p1.1,p1.2" },
		{ "empty selector matches nothing", { "{metadata: {namespace: default}, spec: {selector: {}}}" }, "node1:p1.1,p1.2" },
	};
	for (size_t i = 0; i < sizeof(pdb_cases) / sizeof(pdb_cases[0]); i++) {
		t = tenv_new(NULL, NULL, WITH_DELETE);
		t->pdb_json[0] = pdb_cases[i].pdbs[0];
		t->npdbs = 1;
		t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL),
						   mk_pod("p1.1", "node1", MID, "medium", "labels: {app: foo}"),
						   mk_pod("p1.2", "node1", MID, "medium", "labels: {app: foo}"), NULL),
				      NULL);
		p = mk_pod("p", NULL, HIGH, "very", NULL);
		run_select(t, p, got, sizeof(got));
		if (strcmp(got, pdb_cases[i].want) != 0)
			fail_msg("%s: got %s want %s", pdb_cases[i].name, got, pdb_cases[i].want);
		sk_pod_unref(p);
		tenv_free(t);
	}
	/* "... the victim which belongs to DisruptedPods is treated as 'nonViolating'" (3 victims, 1 violation) */
	t = tenv_new(NULL, NULL, WITH_DELETE);
	t->pdb_json[0] = "{metadata: {namespace: default}, spec: {selector: {matchLabels: {app: foo}}}, status: "
			 "{disruptionsAllowed: 1, disruptedPods: {p1.3: '2026-01-01T00:00:00Z'}}}";
	t->npdbs = 1;
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "very", NULL),
					   mk_pod("p1.1", "node1", MID, "medium", "labels: {app: foo}"),
					   mk_pod("p1.2", "node1", MID, "medium", "labels: {app: foo}"),
					   mk_pod("p1.3", "node1", MID, "medium", "labels: {app: foo}"), NULL),
			      NULL);
	p = mk_pod("p", NULL, HIGH, "very", NULL);
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1.1,p1.2,p1.3:1");
	sk_pod_unref(p);
	tenv_free(t);
}

/* The candidates reach the attempt's decision record when one is current (docs/explain.md), and
 * the preemption decides the same with and without one. */
static void test_candidates_for_the_record(void **state)
{
	(void)state;
	struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
	t->snap = fx_snapshot(fx_node_info(mk_node("node1", "32", "large", NULL), mk_pod("p1", "node1", LOW, "large", NULL), NULL),
			      fx_node_info(mk_node("node2", "32", "large", NULL), mk_pod("p2.1", "node2", LOW, "small", NULL),
					   mk_pod("p2.2", "node2", LOW, "medium", NULL), NULL),
			      NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	const struct {
		bool record;
		int want_candidates;
	} rows[] = { { false, 0 }, { true, 2 } };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sk_rec_trace trace;
		memset(&trace, 0, sizeof(trace));
		struct sk_rec_trace *prev = sk_rec_set_current(rows[i].record ? &trace : NULL);
		struct pf_out o = post_filter(t, p, "node1=U,node2=U");
		sk_rec_set_current(prev);
		assert_int_equal(o.code, SK_SUCCESS);
		assert_string_equal(o.nominated, "node1"); /* one victim rather than two */
		assert_int_equal(trace.candidates_total, rows[i].want_candidates);
		for (int k = 0; k < trace.nvictims; k++)
			free(trace.victims[k]);
		t->ndeleted = 0;
	}
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_pod_with_anti_affinity_is_preempted(void **state)
{
	(void)state;
	char got[256];
	struct tenv *t = tenv_new("{name: InterPodAffinity}", NULL, WITH_DELETE);
	t->snap = fx_snapshot(
		fx_node_info(mk_node("node1", "32", "very", "hostname: node1"),
			     fx_pod("{metadata: {name: p1.1, uid: p1.1, labels: {foo: ''}}, spec: {nodeName: node1, priority: 0, "
				    "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
				    "{matchExpressions: [{key: foo, operator: Exists}]}, topologyKey: hostname}]}}, "
				    "containers: [{name: c, resources: {requests: {cpu: 100m, memory: '100'}}}]}}"),
			     mk_pod("p1.2", "node1", MID, "small", NULL), mk_pod("p1.3", "node1", HIGH, "small", NULL), NULL),
		fx_node_info(mk_node("node2", "32", "very", "hostname: node2"), mk_pod("p2", "node2", HIGH, "small", NULL),
			     NULL),
		NULL);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "small", "labels: {foo: ''}");
	run_select(t, p, got, sizeof(got));
	assert_string_equal(got, "node1:p1.1");
	sk_pod_unref(p);
	tenv_free(t);
}

static void test_candidate_limit_and_offset(void **state)
{
	(void)state;
	/* "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2": offset 4 gives node5
	 * then node1; the pick among equal candidates is the first found */
	struct tenv *t = tenv_new(NULL, "{name: DefaultPreemption, args: {minCandidateNodesPercentage: 40, "
					"minCandidateNodesAbsolute: 1}}",
				  WITH_DELETE);
	struct sk_node_info *nis[5];
	for (int i = 0; i < 5; i++) {
		char n[16], pn[16];
		snprintf(n, sizeof(n), "node%d", i + 1);
		snprintf(pn, sizeof(pn), "p%d", i + 1);
		nis[i] = fx_node_info(mk_node(n, "32", "very", NULL), mk_pod(pn, n, MID, "large", NULL), NULL);
	}
	t->snap = fx_snapshot_of(nis, 5);
	struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
	int32_t offset4(int32_t n);
	sk_dp_set_offset_fn(offset4);
	struct pf_out o = post_filter(t, p, "node1=U,node2=U,node3=U,node4=U,node5=U");
	sk_dp_set_offset_fn(NULL);
	assert_int_equal(o.code, SK_SUCCESS);
	assert_string_equal(o.nominated, "node5");
	assert_deleted(t, "p5");
	sk_pod_unref(p);
	tenv_free(t);
}

int32_t offset4(int32_t n)
{
	return 4 % n;
}

static int32_t offset_last(int32_t n) { return n - 1; }

/* nodesWherePreemptionMightHelp over successive PostFilter calls of one plugin instance: the codes
 * kept at the snapshot index between calls must not leak into the next call; a node listed twice
 * takes its last status; a status of a node info that is not the snapshot's (a clone) is matched
 * by name. One candidate wanted, offset at the last potential node: the nomination names the last
 * potential node in snapshot order. */
/* node1..node5 (32 cpu), each holding one MID-priority pod named <prefix>1..5; one candidate
 * is enough (minCandidateNodesAbsolute 1). */
static struct tenv *five_nodes(const char *prefix)
{
	struct tenv *t = tenv_new(NULL, "{name: DefaultPreemption, args: {minCandidateNodesPercentage: 0, "
					"minCandidateNodesAbsolute: 1}}",
				  WITH_DELETE);
	struct sk_node_info *nis[5];
	for (int i = 0; i < 5; i++) {
		char n[16], pn[16];
		snprintf(n, sizeof(n), "node%d", i + 1);
		snprintf(pn, sizeof(pn), "%s%d", prefix, i + 1);
		nis[i] = fx_node_info(mk_node(n, "32", "very", NULL), mk_pod(pn, n, MID, "large", NULL), NULL);
	}
	t->snap = fx_snapshot_of(nis, 5);
	return t;
}

static void test_potential_nodes_between_calls(void **state)
{
	(void)state;
	static const struct {
		const char *statuses;
		const char *nominated; /* "": none, Unschedulable */
	} steps[] = {
		{ "node1=U,node3=U", "node3" },
		{ "node2=U", "node2" },                   /* node3 of the previous call is gone */
		{ "node4=U,node4=UU", "" },               /* the last status counts */
		{ "node4=UU,node4=U", "node4" },
		{ "*=U,node5=UU", "node4" },              /* unlisted nodes carry the absent code */
		{ "node2=U!,node1=U", "node2" },          /* a clone's status, by name */
		{ "node1=U!,node1=UU", "node1" },         /* by name: the first status of that name */
		{ "node5=U", "node5" },
		{ "", "" },
	};
	struct tenv *t = five_nodes("p");
	sk_dp_set_offset_fn(offset_last);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char name[16];
		snprintf(name, sizeof(name), "pre%zu", i);
		struct sk_pod *p = mk_pod(name, NULL, HIGH, "large", NULL);
		struct pf_out o = post_filter(t, p, steps[i].statuses);
		const char *want = steps[i].nominated;
		if (strcmp(o.nominated, want) != 0 || o.code != (*want ? SK_SUCCESS : SK_UNSCHEDULABLE))
			fail_msg("step %zu (%s): nominated \"%s\" code %d (%s), want \"%s\"", i, steps[i].statuses,
				 o.nominated, o.code, o.msg, want);
		if (!*want)
			assert_string_equal(o.msg, "preemption: 0/5 nodes are available: 5 Preemption is not helpful for "
						   "scheduling.");
		sk_pod_unref(p);
	}
	sk_dp_set_offset_fn(NULL);
	tenv_free(t);
}

/* A diagnosis with one status for every snapshot node, in snapshot order from some node on (the
 * scheduling loop's failing pass starts at nextStartNodeIndex and wraps): the potential nodes are
 * read in place, in snapshot order. With the offset at the last potential node and one candidate
 * wanted, the nominated node is the last potential one in snapshot order, for every rotation; a
 * full-length diagnosis of another shape (a node twice, one out of order, a clone's status) gives
 * the answers of the general path. */
static void test_potential_nodes_in_order(void **state)
{
	(void)state;
	static const struct {
		const char *statuses;
		const char *nominated;
	} rows[] = {
		{ "node1=UU,node2=U,node3=U,node4=UU,node5=UU", "node3" },
		{ "node3=U,node4=UU,node5=U,node1=U,node2=UU", "node5" },
		{ "node4=U,node5=UU,node1=U,node2=U,node3=UU", "node4" },
		{ "node5=UU,node1=U,node2=UU,node3=UU,node4=UU", "node1" },
		{ "node2=UU,node3=UU,node4=UU,node5=UU,node1=UU", "" },
		{ "node1=U,node1=UU,node3=U,node4=UU,node5=UU", "node3" }, /* node1 twice: the last counts */
		{ "node2=U,node3=UU,node5=U,node4=UU,node1=UU", "node5" }, /* out of order */
		{ "node4=U!,node5=UU,node1=U,node2=UU,node3=UU", "node4" }, /* a clone's status, by name */
	};
	struct tenv *t = five_nodes("q");
	sk_dp_set_offset_fn(offset_last);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char name[16];
		snprintf(name, sizeof(name), "ord%zu", i);
		struct sk_pod *p = mk_pod(name, NULL, HIGH, "large", NULL);
		struct pf_out o = post_filter(t, p, rows[i].statuses);
		const char *want = rows[i].nominated;
		if (strcmp(o.nominated, want) != 0 || o.code != (*want ? SK_SUCCESS : SK_UNSCHEDULABLE))
			fail_msg("row %zu (%s): nominated \"%s\" code %d (%s), want \"%s\"", i, rows[i].statuses,
				 o.nominated, o.code, o.msg, want);
		sk_pod_unref(p);
	}
	sk_dp_set_offset_fn(NULL);
	tenv_free(t);
}

/* The dry run over more nodes than one batch of the pool's parallelism: the result slots grow
 * while the search goes on; the no-candidate message counts every node tried, and a candidate
 * found in the last batch is the one nominated. */
static void test_dry_run_over_many_batches(void **state)
{
	(void)state;
	static const struct {
		int nnodes;
		int fitting; /* 1-based node that fits without its victim; 0: none */
		const char *msg;
	} cases[] = {
		{ 40, 0, "preemption: 0/40 nodes are available: 40 Insufficient cpu." },
		{ 70, 0, "preemption: 0/70 nodes are available: 70 Insufficient cpu." },
		{ 40, 40, "" },
		{ 70, 37, "" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct tenv *t = tenv_new(NULL, NULL, WITH_DELETE);
		struct sk_node_info *nis[70];
		for (int i = 0; i < cases[c].nnodes; i++) {
			char n[16], pn[16];
			snprintf(n, sizeof(n), "node%d", i + 1);
			snprintf(pn, sizeof(pn), "p%d", i + 1);
			bool fits = i + 1 == cases[c].fitting;
			nis[i] = fx_node_info(mk_node(n, "32", fits ? "very" : "node", NULL),
					      mk_pod(pn, n, LOW, fits ? "large" : "", NULL), NULL);
		}
		t->snap = fx_snapshot_of(nis, cases[c].nnodes);
		struct sk_pod *p = mk_pod("p", NULL, HIGH, "large", NULL);
		struct pf_out o = post_filter(t, p, "*=U");
		if (cases[c].fitting) {
			char want[16];
			snprintf(want, sizeof(want), "node%d", cases[c].fitting);
			assert_int_equal(o.code, SK_SUCCESS);
			assert_string_equal(o.nominated, want);
		} else {
			assert_int_equal(o.code, SK_UNSCHEDULABLE);
			assert_string_equal(o.msg, cases[c].msg);
		}
		sk_pod_unref(p);
		tenv_free(t);
	}
}

/* ---------- pickOneNodeForPreemption ---------- */

struct pick_case {
	const char *name;
	/* per candidate: victims as "priority@start" separated by spaces, then ":violations" */
	const char *cands[4];
	int want;
};

static void build_cand(struct sk_dp_candidate *c, const char *spec)
{
	memset(c, 0, sizeof(*c));
	c->victims = calloc(8, sizeof(*c->victims));
	assert_non_null(c->victims);
	const char *s = spec;
	while (*s && *s != ':') {
		char *end;
		long prio = strtol(s, &end, 10);
		assert_true(*end == '@');
		long long start = strtoll(end + 1, &end, 10);
		char name[16];
		snprintf(name, sizeof(name), "v%d", c->nvictims);
		char buf[128];
		snprintf(buf, sizeof(buf), "{metadata: {name: %s}, spec: {priority: %ld, containers: [{name: c}]}}", name, prio);
		c->victims[c->nvictims].pod = fx_pod(buf);
		c->victims[c->nvictims].start_ns = start;
		c->nvictims++;
		s = end;
		while (*s == ' ')
			s++;
	}
	if (*s == ':')
		c->num_pdb_violations = atoi(s + 1);
}

static void test_pick_one_node(void **state)
{
	(void)state;
	/* victims are listed most important first, as SelectVictimsOnNode returns them */
	const struct pick_case cases[] = {
		{ "fewest PDB violations", { "0@1:1", "1000@1 1000@2", "0@1:2" }, 1 },
		{ "node with min highest priority pod is picked", { "1000@1", "100@1 100@2 100@3", "500@1" }, 1 },
		{ "same highest priority: minimum sum of priorities", { "100@1 0@1 0@2", "100@1 -100@1 -100@1", "100@1 0@1 0@2 0@3" }, 1 },
		{ "same highest priority and sum: fewest pods", { "100@1 0@1 0@1", "100@1 0@1" }, 1 },
		{ "sum of adjusted priorities (negative priorities count as more pods)",
		  { "0@1 -100@1 -100@1", "0@1 -100@1" }, 1 },
		{ "same priority and number of victims: latest start of the earliest victim",
		  { "100@1 100@2", "100@3 100@4", "100@2 100@5" }, 1 },
		{ "start time only looks at the highest-priority victims", { "100@5 0@1", "100@4 0@9" }, 0 },
		{ "all equal: the first one", { "100@1", "100@1", "100@1" }, 0 },
		{ "one candidate", { "10@1" }, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_dp_candidate c[4];
		int n = 0;
		for (; n < 4 && cases[i].cands[n]; n++) {
			build_cand(&c[n], cases[i].cands[n]);
			c[n].node = "n";
		}
		int got = sk_dp_pick_one_node(c, n);
		if (got != cases[i].want)
			fail_msg("%s: got %d want %d", cases[i].name, got, cases[i].want);
		for (int k = 0; k < n; k++)
			sk_dp_candidate_clear(&c[k]);
	}
	assert_int_equal(sk_dp_pick_one_node(NULL, 0), -1);
}

/* ---------- helpers: num candidates, importance, PDB decode, args ---------- */

static void test_num_candidates(void **state)
{
	(void)state;
	const struct {
		int32_t pct, abs, nodes, want;
	} cases[] = {
		{ 10, 100, 10, 10 },   { 10, 100, 1000, 100 }, { 40, 100, 1000, 400 },
		{ 10, 500, 1000, 500 }, { 0, 50, 1000, 50 },    { 100, 0, 7, 7 },
		{ 40, 1, 5, 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_default_preemption_args a = { cases[i].pct, cases[i].abs };
		assert_int_equal(sk_dp_num_candidates(&a, cases[i].nodes), cases[i].want);
	}
}

static void test_more_important_and_pdb_violations(void **state)
{
	(void)state;
	struct sk_dp_victim a = { fx_pod("{metadata: {name: a, labels: {app: x}}, spec: {priority: 10, containers: [{name: c}]}}"), 5 };
	struct sk_dp_victim b = { fx_pod("{metadata: {name: b, labels: {app: x}}, spec: {priority: 10, containers: [{name: c}]}}"), 7 };
	struct sk_dp_victim c = { fx_pod("{metadata: {name: c}, spec: {priority: 20, containers: [{name: c}]}}"), 9 };
	assert_true(sk_dp_more_important(&c, &a));
	assert_true(sk_dp_more_important(&a, &b)); /* earlier start */
	assert_false(sk_dp_more_important(&b, &a));
	struct sk_dp_victim v[3] = { c, a, b };
	cJSON *j = fx_json("{metadata: {name: x, namespace: default}, spec: {selector: {matchLabels: {app: x}}}, "
			   "status: {disruptionsAllowed: 1, disruptedPods: {zz: '2026-01-01T00:00:00Z'}}}");
	char *err = NULL;
	struct sk_pdb *pdb = sk_pdb_decode(j, &err);
	cJSON_Delete(j);
	assert_non_null(pdb);
	assert_string_equal(pdb->name, "x");
	assert_int_equal(pdb->disruptions_allowed, 1);
	assert_int_equal(pdb->ndisrupted, 1);
	assert_string_equal(pdb->disrupted_pods[0], "zz");
	bool viol[3];
	struct sk_pdb *const list[] = { pdb };
	sk_dp_pdb_violations(v, 3, list, 1, viol);
	assert_false(viol[0]); /* no labels */
	assert_false(viol[1]); /* allowed 1 -> 0 */
	assert_true(viol[2]);  /* 0 -> -1 */
	sk_pdb_free(pdb);
	/* invalid selector: kept as "matches nothing" */
	j = fx_json("{metadata: {name: bad}, spec: {selector: {matchExpressions: [{key: app, operator: Bogus}]}}}");
	pdb = sk_pdb_decode(j, &err);
	cJSON_Delete(j);
	assert_non_null(pdb);
	assert_null(pdb->selector);
	sk_dp_pdb_violations(v, 3, (struct sk_pdb *const[]){ pdb }, 1, viol);
	assert_false(viol[1] || viol[2]);
	sk_pdb_free(pdb);
	assert_null(sk_pdb_decode(NULL, &err));
	assert_non_null(err);
	free(err);
	sk_pdb_free(NULL);
	sk_pdb_list_free(NULL, 0);
	sk_pod_unref(a.pod);
	sk_pod_unref(b.pod);
	sk_pod_unref(c.pod);
}

static void test_args(void **state)
{
	(void)state;
	const struct sk_plugin_desc *d = sk_registry_lookup("DefaultPreemption");
	assert_non_null(d);
	assert_string_equal(d->args_kind, "DefaultPreemptionArgs");
	struct sk_errors e = { 0 };
	void *a = NULL;
	assert_int_equal(d->args_decode(NULL, &a, &e, "args"), 0);
	const struct sk_default_preemption_args *dpa = a;
	assert_int_equal(dpa->min_candidate_nodes_percentage, 10);
	assert_int_equal(dpa->min_candidate_nodes_absolute, 100);
	cJSON *enc = d->args_encode(a);
	char *s = cJSON_PrintUnformatted(enc);
	assert_non_null(strstr(s, "\"kind\":\"DefaultPreemptionArgs\""));
	assert_non_null(strstr(s, "\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100"));
	free(s);
	cJSON_Delete(enc);
	d->args_free(a);
	/* validation (pkg/scheduler/apis/config/validation/validation_pluginargs.go) */
	const struct {
		const char *json, *want;
	} bad[] = {
		{ "{minCandidateNodesPercentage: 101}", "args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]" },
		{ "{minCandidateNodesAbsolute: -1}", "args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)" },
		{ "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
		  "args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *j = fx_json(bad[i].json);
		a = NULL;
		assert_int_equal(d->args_decode(j, &a, &e, "args"), -1);
		assert_null(a);
		assert_true(e.n >= 1);
		if (strcmp(e.msgs[0], bad[i].want) != 0)
			fail_msg("got %s want %s", e.msgs[0], bad[i].want);
		sk_errors_free(&e);
		cJSON_Delete(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_filter_simple_cases),
		cmocka_unit_test(test_post_filter_one_node),
		cmocka_unit_test(test_post_filter_min_highest_priority_with_pdbs),
		cmocka_unit_test(test_post_filter_no_candidates_messages),
		cmocka_unit_test(test_post_filter_add_remove_errors),
		cmocka_unit_test(test_post_filter_without_api_callbacks),
		cmocka_unit_test(test_terminating_and_gone_victims),
		cmocka_unit_test(test_async_preemption_in_flight),
		cmocka_unit_test(test_waiting_victim_and_nominated_pods),
		cmocka_unit_test(test_eligibility),
		cmocka_unit_test(test_select_victims_tables),
		cmocka_unit_test(test_pod_with_anti_affinity_is_preempted),
		cmocka_unit_test(test_candidates_for_the_record),
		cmocka_unit_test(test_candidate_limit_and_offset),
		cmocka_unit_test(test_potential_nodes_between_calls),
		cmocka_unit_test(test_potential_nodes_in_order),
		cmocka_unit_test(test_dry_run_over_many_batches),
		cmocka_unit_test(test_pick_one_node),
		cmocka_unit_test(test_num_candidates),
		cmocka_unit_test(test_more_important_and_pdb_violations),
		cmocka_unit_test(test_args),
	};
	g_async = false;
	int failed = cmocka_run_group_tests_name("SchedulerAsyncPreemption=false", tests, NULL, NULL);
	g_async = true;
	return failed + cmocka_run_group_tests_name("SchedulerAsyncPreemption=true", tests, NULL, NULL);
}
