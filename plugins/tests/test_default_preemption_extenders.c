/* DefaultPreemption through the HTTP extenders (plugins/DefaultPreemption, callExtenders of
 * pkg/scheduler/framework/preemption/preemption.go) against the scripted fake extender
 * (scheduler/tests/fake_extender.h): the candidates of the dry run reach the preempt verb (full
 * pods or UIDs), a vetoed node is not used, the extender's victims are the ones evicted, an error
 * fails the preemption unless the extender is ignorable, an uninterested extender is not called. */
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
#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fake_extender.h"
#include "scheduler/tests/fixtures.h"

/* SchedulerAsyncPreemption: main runs the cases with it off, then on (post_filter then waits for
 * DefaultPreemption's workers). */
static bool g_async;

struct tenv {
	pthread_mutex_t mu; /* t_preempt runs on the preemption workers too */
	struct sk_config *cfg;
	struct sk_framework *fw;
	struct sk_snapshot *snap;
	int ndeleted;
	char deleted[8][64];
};

static struct fe_server *fe;

static const struct sk_snapshot *t_snapshot(void *ctx) { return ((struct tenv *)ctx)->snap; }

static int t_preempt(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim, const char *node,
		     const char *msg, char **err)
{
	struct tenv *t = ctx;
	(void)preemptor, (void)node, (void)msg, (void)err;
	pthread_mutex_lock(&t->mu);
	assert_true(t->ndeleted < 8);
	snprintf(t->deleted[t->ndeleted++], 64, "%s", victim->name);
	pthread_mutex_unlock(&t->mu);
	return 0;
}

static bool t_feature(void *ctx, const char *gate)
{
	(void)ctx;
	return strcmp(gate, "SchedulerAsyncPreemption") ? kube_feature_gate_enabled(NULL, gate) : g_async;
}

static int cmp_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static int32_t offset0(int32_t n)
{
	(void)n;
	return 0;
}

/* node1 {low1, low2}, node2 {low3}: both need eviction for a 1-pod-capacity preemptor. ext: the
 * extender entry's extra fields (YAML flow), or NULL for none. */
static struct tenv *tenv_new(const char *ext)
{
	struct tenv *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	pthread_mutex_init(&t->mu, NULL);
	char *text = NULL;
	char extenders[512] = "";
	if (ext)
		snprintf(extenders, sizeof(extenders), "extenders:\n- {urlPrefix: '%s', preemptVerb: preempt%s}\n", fe_url(fe),
			 ext);
	assert_true(asprintf(&text,
			     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n%s"
			     "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
			     "    multiPoint:\n      disabled: [{name: '*'}]\n"
			     "      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeResourcesFit}, "
			     "{name: DefaultPreemption}]\n",
			     extenders) >= 0);
	struct sk_errors e = { 0 };
	t->cfg = sk_config_load(text, strlen(text), &e);
	if (!t->cfg)
		fail_msg("config: %s", sk_errors_join(&e, "\n"));
	free(text);
	char *err = NULL;
	struct sk_framework_env env = { .ctx = t, .snapshot = t_snapshot, .preempt_victim = t_preempt,
					.feature_enabled = t_feature };
	t->fw = sk_framework_new(t->cfg, &t->cfg->profiles[0], &env, &err);
	if (!t->fw)
		fail_msg("framework: %s", err);
	static const char *const pods[3][2] = { { "low1", "node1" }, { "low2", "node1" }, { "low3", "node2" } };
	struct sk_pod *p[3];
	for (int i = 0; i < 3; i++) {
		char buf[512];
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
			 "\"spec\":{\"nodeName\":\"%s\",\"priority\":%d,\"containers\":[{\"name\":\"c\"}]}}",
			 pods[i][0], pods[i][0], pods[i][1], i);
		p[i] = fx_pod(buf);
	}
	t->snap = fx_snapshot(
		fx_node_info(fx_node("{\"metadata\":{\"name\":\"node1\"},\"status\":{\"allocatable\":{\"pods\":\"2\"}}}"), p[0], p[1], NULL),
		fx_node_info(fx_node("{\"metadata\":{\"name\":\"node2\"},\"status\":{\"allocatable\":{\"pods\":\"1\"}}}"), p[2], NULL),
		NULL);
	return t;
}

static void tenv_free(struct tenv *t)
{
	sk_framework_unref(t->fw);
	sk_config_free(t->cfg);
	sk_snapshot_free(t->snap);
	pthread_mutex_destroy(&t->mu);
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

/* PreFilter then PostFilter with node1 and node2 Unschedulable; "code|nominated|deleted|msg". */
static void post_filter(struct tenv *t, const char *pod_extra, char *out, size_t n)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"high\",\"namespace\":\"default\",\"uid\":\"uid-high\"},"
		 "\"spec\":{\"priority\":1000,\"containers\":[{\"name\":\"c\"%s}]}}",
		 pod_extra ? pod_extra : "");
	struct sk_pod *pod = fx_pod(buf);
	struct sk_cycle_state *cs = sk_cycle_state_new(t->fw, false);
	struct sk_prefilter_result pre = { .all = true };
	int nn = 0;
	struct sk_status ps = sk_fw_run_pre_filter(t->fw, cs, pod, &pre, NULL, 0, &nn);
	free(pre.names);
	sk_status_reset(&ps);
	struct sk_node_status ns[2] = {
		{ .node = sk_snapshot_get(t->snap, "node1"), .status = sk_status(SK_UNSCHEDULABLE, NULL) },
		{ .node = sk_snapshot_get(t->snap, "node2"), .status = sk_status(SK_UNSCHEDULABLE, NULL) },
	};
	struct sk_filter_diagnosis diag = { .nodes = ns, .n = 2, .num_all_nodes = 2 };
	struct sk_postfilter_result r = { 0 };
	struct sk_plugin *pl = dp(t);
	t->ndeleted = 0;
	struct sk_status s = pl->desc->post_filter(pl, cs, pod, &diag, &r);
	assert_int_equal(sk_dp_is_async(pl), g_async);
	sk_dp_wait_async(pl);
	qsort(t->deleted, (size_t)t->ndeleted, sizeof(t->deleted[0]), cmp_names); /* workers: any order */
	char *m = sk_status_message(&s);
	char del[256] = "";
	for (int i = 0; i < t->ndeleted; i++)
		snprintf(del + strlen(del), sizeof(del) - strlen(del), "%s%s", i ? "," : "", t->deleted[i]);
	snprintf(out, n, "%s|%s|%s|%s", sk_code_string(s.code), r.nominated_node ? r.nominated_node : "", del, m ? m : "");
	free(m);
	sk_status_reset(&s);
	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
}

static void test_preemption_through_extender(void **state)
{
	(void)state;
	static const struct {
		const char *ext;      /* extra extender fields, NULL: no extender */
		int status;
		const char *answer;
		const char *pod_extra;
		const char *want;     /* prefix of code|nominated|deleted|msg */
		int calls;
	} cases[] = {
		/* without extenders node1 wins (its victim low1 has the lowest priority) */
		{ NULL, 0, NULL, NULL, "Success|node1|low1|", 0 },
		/* the extender vetoes node1 and keeps node2 */
		{ "", 200, "{\"NodeNameToMetaVictims\":{\"node2\":{\"Pods\":[{\"UID\":\"uid-low3\"}]}}}", NULL,
		  "Success|node2|low3|", 1 },
		/* ... or keeps node1 with another victim than the dry run's: that one is evicted */
		{ ", nodeCacheCapable: true", 200, "{\"NodeNameToMetaVictims\":{\"node1\":{\"Pods\":[{\"UID\":\"uid-low2\"}]}}}",
		  NULL, "Success|node1|low2|", 1 },
		/* every node vetoed: nothing evicted */
		{ "", 200, "{\"NodeNameToMetaVictims\":{}}", NULL, "Unschedulable|||preemption: no candidate node for preemption", 1 },
		/* an error fails the preemption; ignorable: as without the extender */
		{ "", 500, "{}", NULL, "Error|||preemption: failed preempt with extender at URL", 1 },
		{ ", ignorable: true", 500, "{}", NULL, "Success|node1|low1|", 1 },
		{ "", 200, "{\"NodeNameToMetaVictims\":{\"node1\":{\"Pods\":[{\"UID\":\"uid-low3\"}]}}}", NULL,
		  "Error|||preemption: extender: ", 1 },
		/* an extender managing a resource the pod does not use is not asked */
		{ ", managedResources: [{name: example.com/gpu}]", 200, "{}", NULL, "Success|node1|low1|", 0 },
		{ ", managedResources: [{name: example.com/gpu}]", 200,
		  "{\"NodeNameToMetaVictims\":{\"node2\":{\"Pods\":[{\"UID\":\"uid-low3\"}]}}}",
		  ",\"resources\":{\"limits\":{\"example.com/gpu\":\"1\"}}", "Success|node2|low3|", 1 },
	};
	sk_dp_set_offset_fn(offset0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fe_clear(fe);
		if (cases[i].answer)
			fe_respond(fe, "/preempt", cases[i].status, cases[i].answer, 0);
		struct tenv *t = tenv_new(cases[i].ext);
		char got[1024];
		post_filter(t, cases[i].pod_extra, got, sizeof(got));
		if (strncmp(got, cases[i].want, strlen(cases[i].want)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, got, cases[i].want);
		if (fe_count(fe, "/preempt") != cases[i].calls)
			fail_msg("case %zu: %d preempt calls, want %d", i, fe_count(fe, "/preempt"), cases[i].calls);
		if (cases[i].calls) { /* the dry run's candidates were sent: both nodes */
			cJSON *b = fe_body(fe, "/preempt", -1);
			bool cache = cases[i].ext && strstr(cases[i].ext, "nodeCacheCapable");
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(b, cache ? "NodeNameToMetaVictims" : "NodeNameToVictims");
			assert_int_equal(cJSON_GetArraySize(m), 2);
			assert_non_null(cJSON_GetObjectItemCaseSensitive(m, "node1"));
			cJSON_Delete(b);
		}
		tenv_free(t);
	}
	sk_dp_set_offset_fn(NULL);
}

static int setup(void **state)
{
	(void)state;
	fe = fe_start();
	return fe ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fe_stop(fe);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preemption_through_extender),
	};
	g_async = false;
	int failed = cmocka_run_group_tests_name("SchedulerAsyncPreemption=false", tests, setup, teardown);
	g_async = true;
	return failed + cmocka_run_group_tests_name("SchedulerAsyncPreemption=true", tests, setup, teardown);
}
