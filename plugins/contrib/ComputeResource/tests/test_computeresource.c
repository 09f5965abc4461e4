/* Tests for plugins/contrib/ComputeResource, linked from the module's own objects (not dlopen'd),
 * with a framework env whose sk_handle_api_get answers a NodeMetricsList the test writes and
 * whose monotonic clock the test moves: quantities, missing and stale metrics, thresholds at their
 * edges, the score arithmetic written out, reserved pods until a newer sample, a failing metrics
 * API, args errors with their paths, and the events. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fixtures.h"
#include "schedkit/module.h"

#define GI (1024LL * 1024 * 1024)
#define REASON_CPU "node(s) had cpu usage above the load threshold"
#define REASON_MEM "node(s) had memory usage above the load threshold"

/* ---------- the env: metrics API and clock under the test's control ---------- */

static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static char *api_body;   /* the response; NULL: the GET fails with api_error */
static const char *api_error = "the server could not find the requested resource";
static int api_calls;
static int64_t fake_now = 1000LL * 1000000000LL;

static void set_body(const char *body)
{
	pthread_mutex_lock(&api_lock);
	free(api_body);
	api_body = body ? strdup(body) : NULL;
	pthread_mutex_unlock(&api_lock);
}

static int calls(void)
{
	pthread_mutex_lock(&api_lock);
	int n = api_calls;
	pthread_mutex_unlock(&api_lock);
	return n;
}

static int t_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	(void)ctx;
	pthread_mutex_lock(&api_lock);
	api_calls++;
	int rc = -1;
	if (strcmp(path, "/apis/metrics.k8s.io/v1beta1/nodes")) {
		*err = strdup("unexpected path");
	} else if (api_body) {
		*out = cJSON_Parse(api_body);
		rc = *out ? 0 : -1;
		if (rc)
			*err = strdup("bad test body");
	} else {
		*err = strdup(api_error);
	}
	pthread_mutex_unlock(&api_lock);
	return rc;
}

static int64_t t_now(void *ctx)
{
	(void)ctx;
	return __atomic_load_n(&fake_now, __ATOMIC_RELAXED);
}

static const struct sk_snapshot *t_snapshot(void *ctx)
{
	return ((struct ph *)ctx)->snap;
}

/* A struct ph (plugins/tests/harness.h) over our env, so ph_scores/ph_filter/ph_free apply.
 * args: the ComputeResourceArgs YAML flow mapping ("" = defaults); points: multiPoint unless
 * plugins_yaml is given. */
static struct ph *t_new_with(const char *args, const char *plugins_yaml)
{
	ph_use_module(sk_module_init);
	struct ph *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	char *text = NULL;
	assert_true(asprintf(&text,
			     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
			     "- plugins:\n%s%s%s%s",
			     plugins_yaml ? plugins_yaml : "    multiPoint:\n      enabled: [{name: ComputeResource}]\n",
			     *args ? "  pluginConfig:\n  - name: ComputeResource\n    args: " : "", args,
			     *args ? "\n" : "") >= 0);
	struct sk_errors e = { 0 };
	h->cfg = sk_config_load(text, strlen(text), &e);
	if (!h->cfg) {
		char *all = sk_errors_join(&e, "\n");
		fail_msg("config errors:\n%s\nconfig:\n%s", all, text);
	}
	free(text);
	sk_errors_free(&e);
	struct sk_framework_env env = { .ctx = h, .now_ns = t_now, .snapshot = t_snapshot, .api_get = t_api_get };
	char *err = NULL;
	h->fw = sk_framework_new(h->cfg, &h->cfg->profiles[0], &env, &err);
	if (!h->fw)
		fail_msg("framework: %s", err ? err : "?");
	h->cs = sk_cycle_state_new(h->fw, false);
	assert_non_null(h->cs);
	return h;
}

static struct ph *t_new(const char *args)
{
	return t_new_with(args, NULL);
}

/* ---------- objects ---------- */

static struct sk_node *node(const char *name, const char *cpu, const char *mem)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
		 "{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"110\"}}}", name, cpu, mem);
	return fx_node(buf);
}

/* cpu/mem NULL: a container without requests (scored as 100m / 200Mi). */
static struct sk_pod *pod(const char *name, const char *node_name, const char *cpu, const char *mem)
{
	char buf[1024], req[256] = "";
	if (cpu)
		snprintf(req, sizeof(req), ",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}", cpu, mem);
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{%s%s%s"
		 "\"containers\":[{\"name\":\"c\"%s}]}}", name, name, node_name ? "\"nodeName\":\"" : "",
		 node_name ? node_name : "", node_name ? "\"," : "", req);
	return fx_pod(buf);
}

/* One NodeMetrics item; ts NULL: no timestamp (the fetch time). */
static void item(char *buf, size_t n, const char *name, const char *ts, const char *cpu, const char *mem)
{
	size_t len = strlen(buf);
	snprintf(buf + len, n - len, "%s{\"metadata\":{\"name\":\"%s\"},%s%s%s\"window\":\"20s\",\"usage\":"
		 "{\"cpu\":\"%s\",\"memory\":\"%s\"}}", buf[len - 1] == '[' ? "" : ",", name, ts ? "\"timestamp\":\"" : "",
		 ts ? ts : "", ts ? "\"," : "", cpu, mem);
}

static void list_begin(char *buf) { strcpy(buf, "{\"kind\":\"NodeMetricsList\",\"items\":["); }
static void list_end(char *buf, size_t n) { strncat(buf, "]}", n - strlen(buf) - 1); }

static void one_node_metrics(const char *cpu, const char *mem)
{
	char body[1024];
	list_begin(body);
	item(body, sizeof(body), "n1", NULL, cpu, mem);
	list_end(body, sizeof(body));
	set_body(body);
}

static int64_t score_of(struct ph *h, struct sk_pod *p, int i)
{
	int64_t out[16];
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, out);
	return out[i];
}

/* PreFilter, then Filter on node i even when PreFilter skipped it (the rule itself is tested);
 * *skipped (may be NULL) says whether PreFilter returned Skip. A rejecting Filter after a skipping
 * PreFilter fails the test: the skip must only happen when no node is above a threshold. */
static char *filter_msg_skip(struct ph *h, struct sk_pod *p, int i, bool *skipped)
{
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	ph_reset_state(h);
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, p, &r);
	free(r.names);
	bool skip = s.code == SK_SKIP;
	if (!skip && s.code != SK_SUCCESS)
		return ph_message(&s);
	sk_status_reset(&s);
	s = pl->desc->filter(pl, h->cs, p, h->snap->nodes[i]);
	char *m = ph_message(&s);
	if (skip && *m)
		fail_msg("PreFilter skipped Filter, which rejects node %d: %s", i, m);
	if (skipped)
		*skipped = skip;
	return m;
}

static char *filter_msg(struct ph *h, struct sk_pod *p, int i)
{
	return filter_msg_skip(h, p, i, NULL);
}

static void teardown_body(void)
{
	set_body(NULL);
	api_error = "the server could not find the requested resource";
}

/* ---------- quantities, through the score ----------
 * One node of 4 cpu / 16Gi, resources [cpu] or [memory] only, the pod's estimate scaled to 0: the
 * score is (allocatable - usage) * 100 / allocatable, integer division, usage rounded up. */
struct qcase {
	const char *res;     /* "cpu" or "memory" */
	const char *usage;
	int64_t want;
};

static void test_quantities(void **state)
{
	(void)state;
	static const struct qcase cases[] = {
		{ "cpu", "1", 75 },                    /* 1000m of 4000m */
		{ "cpu", "1000m", 75 },
		{ "cpu", "2000000000n", 50 },          /* metrics-server reports nanocores */
		{ "cpu", "1500000u", 62 },             /* 1500m: 2500*100/4000 = 62.5 */
		{ "cpu", "0.5", 87 },                  /* 3500*100/4000 = 87.5 */
		{ "cpu", "3999999001n", 0 },           /* rounds up to 4000m: nothing free */
		{ "cpu", "5", 0 },                     /* above allocatable: 0, never negative */
		{ "cpu", "0", 100 },
		{ "cpu", "1e30", 0 },                  /* saturates: no overflow, nothing free */
		{ "memory", "99999999999Ei", 0 },
		{ "memory", "0.0000000125Ei", 16 },    /* 0.0000000125 * 2^60 = 14411518807.6 -> 14411518808 B: 16.1 */
		{ "cpu", "0.001E", 0 },                /* 10^15 cores: "E" is exa */
		{ "cpu", "2e0", 50 },
		{ "cpu", "1e3m", 75 },                 /* not a quantity ("m" after an exponent): no metrics, */
		{ "memory", "4Gi", 75 },               /* so scored by requests: 100m -> 97 (see below) */
		{ "memory", "4294967296", 75 },
		{ "memory", "4194304Ki", 75 },
		{ "memory", "1.5Gi", 90 },             /* 14.5/16 = 90.6 */
		{ "memory", "12G", 30 },               /* (17179869184 - 12e9) * 100 / 17179869184 = 30.1 */
		{ "memory", "17179869185", 0 },        /* one byte over */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct qcase *c = &cases[i];
		bool cpu = !strcmp(c->res, "cpu");
		one_node_metrics(cpu ? c->usage : "0", cpu ? "0" : c->usage);
		char args[256];
		snprintf(args, sizeof(args), "{resources: [{name: %s, weight: 1}], estimatedUsagePercent: {cpu: 0, memory: 0}}",
			 c->res);
		struct ph *h = t_new(args);
		ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
		struct sk_pod *p = pod("p", NULL, NULL, NULL);
		int64_t want = c->want;
		if (!strcmp(c->usage, "1e3m"))
			want = (4000 - 100) * 100 / 4000; /* 97: the pod's 100m default request on an empty node */
		int64_t got = score_of(h, p, 0);
		if (got != want)
			fail_msg("%s usage %s: score %lld, want %lld", c->res, c->usage, (long long)got, (long long)want);
		sk_pod_unref(p);
		ph_free(h);
	}
	teardown_body();
}

/* ---------- score arithmetic ---------- */

static void test_score_arithmetic(void **state)
{
	(void)state;
	char body[2048];
	list_begin(body);
	item(body, sizeof(body), "n1", NULL, "1", "4Gi");
	item(body, sizeof(body), "n2", NULL, "3", "2Gi");
	/* n3: no NodeMetrics item at all */
	list_end(body, sizeof(body));
	set_body(body);
	/* cpu weight 1, memory weight 3; the pod's estimate is 50% of its cpu and 25% of its memory
	 * requests (2 cpu, 8Gi -> 1000m, 2Gi). */
	struct ph *h = t_new("{resources: [{name: cpu, weight: 1}, {name: memory, weight: 3}], "
			     "estimatedUsagePercent: {cpu: 50, memory: 25}}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL),
				       fx_node_info(node("n2", "4", "16Gi"), NULL),
				       fx_node_info(node("n3", "4", "16Gi"), pod("old", "n3", "1", "2Gi"), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "2", "8Gi");
	int64_t got[3];
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, got);
	/* n1: cpu (4000 - 1000 - 1000) * 100 / 4000 = 50; memory (16 - 4 - 2) / 16 -> 62;
	 *     (50 * 1 + 62 * 3) / 4 = 236 / 4 = 59 */
	assert_int_equal(got[0], 59);
	/* n2: cpu (4000 - 3000 - 1000) -> 0; memory (16 - 2 - 2) / 16 -> 75; (0 + 225) / 4 = 56 */
	assert_int_equal(got[1], 56);
	/* n3 (no metrics: its requests + the pod's full requests, as LeastAllocated):
	 *     cpu (4000 - 1000 - 2000) / 4000 -> 25; memory (16 - 2 - 8) / 16 -> 37 (37.5);
	 *     (25 + 111) / 4 = 34 */
	assert_int_equal(got[2], 34);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

/* ---------- the index by node (sk_node_info.index, plugin ABI 1.2) ----------
 * 75 nodes (more than two of cr_score_batch's blocks of 32) of 4 cpu / 16Gi; node i uses
 * (100 + 40 i) millicores and (i % 16) Gi, every 7th has no NodeMetrics item. The pod requests
 * 500m / 1Gi, estimated at 100%; weights 1 and 1: score = (cpu free % + memory free %) / 2, each
 * (allocatable - usage - request) * 100 / allocatable (0 when negative), a node without metrics
 * at usage 0 (no pods: its requests are 0). The snapshot is the cache's, updated in place: after
 * node x5 leaves and then "fresh" (no metrics) arrives, "fresh" has x5's index but not its sample. */
#define NIDX 75
static int64_t free_pct(int64_t alloc, int64_t used)
{
	return used > alloc ? 0 : (alloc - used) * 100 / alloc;
}

static int64_t want_index_score(const char *name)
{
	int i = -1;
	if (sscanf(name, "x%d", &i) != 1 || i % 7 == 0) /* "fresh" or no item */
		return (free_pct(4000, 500) + free_pct(16 * GI, GI)) / 2;
	return (free_pct(4000, 100 + 40 * i + 500) + free_pct(16 * GI, (int64_t)(i % 16) * GI + GI)) / 2;
}

static void test_index_many_nodes(void **state)
{
	(void)state;
	static char body[NIDX * 160];
	list_begin(body);
	for (int i = 0; i < NIDX; i++) {
		char name[16], cpu[16], mem[16];
		snprintf(name, sizeof(name), "x%d", i);
		snprintf(cpu, sizeof(cpu), "%dm", 100 + 40 * i);
		snprintf(mem, sizeof(mem), "%dGi", i % 16);
		if (i % 7)
			item(body, sizeof(body), name, NULL, cpu, mem);
	}
	list_end(body, sizeof(body));
	set_body(body);
	struct ph *h = t_new("");
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *snap = sk_snapshot_new();
	for (int i = 0; i < NIDX; i++) {
		char name[16];
		snprintf(name, sizeof(name), "x%d", i);
		struct sk_node *n = node(name, "4", "16Gi");
		assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
		sk_node_unref(n);
	}
	assert_int_equal(sk_cache_update_snapshot(c, snap, NULL), 0);
	ph_set_snapshot(h, snap); /* the harness owns it; the cache updates it in place */
	struct sk_pod *p = pod("p", NULL, "500m", "1Gi");
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	int32_t index5 = sk_snapshot_get(snap, "x5")->index;
	for (int round = 0; round < 2; round++) {
		if (round) {
			assert_int_equal(sk_cache_remove_node(c, "x5", NULL), 0);
			assert_int_equal(sk_cache_update_snapshot(c, snap, NULL), 0);
			struct sk_node *n = node("fresh", "4", "16Gi");
			assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
			sk_node_unref(n);
			assert_int_equal(sk_cache_update_snapshot(c, snap, NULL), 0);
			assert_int_equal(sk_snapshot_get(snap, "fresh")->index, index5);
		}
		int64_t got[NIDX];
		ph_scores(h, pl, p, got); /* also checks score_batch against score in chunks of every size */
		for (int i = 0; i < snap->nnodes; i++) {
			const struct sk_node_info *ni = snap->nodes[i];
			int64_t want = want_index_score(ni->node->name);
			if (got[i] != want)
				fail_msg("round %d, node %s: score %lld, want %lld", round, ni->node->name, (long long)got[i],
					 (long long)want);
			/* the same node unnumbered (found by its name) scores the same */
			struct sk_node_info *plain = sk_node_info_clone(ni);
			plain->index = 0;
			plain->index_serial = 0;
			int64_t one = -1;
			struct sk_status st = pl->desc->score(pl, h->cs, p, plain, &one);
			assert_int_equal(st.code, SK_SUCCESS);
			if (one != want)
				fail_msg("round %d, node %s unnumbered: score %lld, want %lld", round, ni->node->name,
					 (long long)one, (long long)want);
			sk_node_info_free(plain);
		}
	}
	sk_pod_unref(p);
	ph_free(h);
	sk_cache_free(c);
	teardown_body();
}

/* Without any metrics (the API refuses), every node is scored as NodeResourcesFit's LeastAllocated
 * would (cpu and memory, weight 1 each): the same numbers on the same nodes. */
static void test_no_metrics_api_scores_like_least_allocated(void **state)
{
	(void)state;
	set_body(NULL);
	struct ph *h = t_new("");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "8Gi"), pod("a", "n1", "1", "1Gi"), NULL),
				       fx_node_info(node("n2", "8", "8Gi"), pod("b", "n2", NULL, NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "1", "2Gi");
	int64_t mine[2], fit[2];
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, mine);
	ph_scores(h, ph_plugin(h, "NodeResourcesFit"), p, fit);
	/* n1: cpu 2000/4000 -> 50, memory 5/8 -> 62: 56. n2: cpu (8000-100-1000)/8000 -> 86, memory
	 * (8192Mi - 200Mi - 2048Mi) / 8192Mi -> 72: 79. */
	assert_int_equal(mine[0], 56);
	assert_int_equal(mine[1], 79);
	assert_int_equal(mine[0], fit[0]);
	assert_int_equal(mine[1], fit[1]);
	/* and Filter never rejects a node without metrics, even with thresholds */
	ph_free(h);
	h = t_new("{usageThresholds: {cpu: 1, memory: 1}}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "8Gi"), pod("a", "n1", "4", "8Gi"), NULL), NULL));
	char *m = filter_msg(h, p, 0);
	assert_string_equal(m, "");
	free(m);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

/* ---------- thresholds ---------- */

struct fcase {
	const char *name;
	const char *args;
	const char *cpu, *mem;  /* the node's usage; NULL: no NodeMetrics for it */
	const char *want;       /* Filter message, "" = fits (PreFilter then skips Filter: the only node fits) */
};

static void test_thresholds(void **state)
{
	(void)state;
	static const struct fcase cases[] = {
		{ "off by default", "", "4", "16Gi", "" },
		{ "cpu at the threshold", "{usageThresholds: {cpu: 80}}", "3200m", "0", "" },
		{ "cpu 1m above", "{usageThresholds: {cpu: 80}}", "3201m", "0", REASON_CPU },
		{ "memory at 90%", "{usageThresholds: {memory: 90}}", "4", "14745Mi", "" },
		{ "memory 1 byte above 90%", "{usageThresholds: {memory: 90}}", "4", "15461882266", REASON_MEM },
		{ "memory just below", "{usageThresholds: {memory: 90}}", "4", "15461882265", "" },
		{ "both above", "{usageThresholds: {cpu: 50, memory: 50}}", "2001m", "9Gi", REASON_CPU ", " REASON_MEM },
		{ "0 is off", "{usageThresholds: {cpu: 0, memory: 10}}", "4", "1Gi", "" },
		{ "100 only past allocatable", "{usageThresholds: {cpu: 100}}", "4001m", "0", REASON_CPU },
		{ "no metrics for the node", "{usageThresholds: {cpu: 1}}", NULL, NULL, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];
		char body[1024];
		list_begin(body);
		if (c->cpu)
			item(body, sizeof(body), "n1", NULL, c->cpu, c->mem);
		else
			item(body, sizeof(body), "other", NULL, "1", "1Gi");
		list_end(body, sizeof(body));
		set_body(body);
		struct ph *h = t_new(c->args);
		/* 15461882266 = 16Gi * 90 / 100 rounded up: the first byte above 90% */
		ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
		struct sk_pod *p = pod("p", NULL, "1", "1Gi");
		bool skipped = false;
		char *m = filter_msg_skip(h, p, 0, &skipped);
		if (strcmp(m, c->want))
			fail_msg("%s: filter \"%s\", want \"%s\"", c->name, m, c->want);
		if (skipped != !*c->want)
			fail_msg("%s: PreFilter %s Filter", c->name, skipped ? "skipped" : "did not skip");
		free(m);
		sk_pod_unref(p);
		ph_free(h);
	}
	teardown_body();
}

/* The PreFilter skip: evaluated once per table, again when the number of nodes changes. */
static void test_skip_follows_nodes(void **state)
{
	(void)state;
	char body[1024];
	list_begin(body);
	item(body, sizeof(body), "n1", NULL, "1", "1Gi");
	item(body, sizeof(body), "n2", NULL, "4", "1Gi"); /* hot, but not in the first snapshot */
	list_end(body, sizeof(body));
	set_body(body);
	struct ph *h = t_new("{usageThresholds: {cpu: 90}}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "1", "1Gi");
	bool skipped = false;
	char *m = filter_msg_skip(h, p, 0, &skipped);
	assert_string_equal(m, "");
	assert_true(skipped);
	free(m);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL),
				       fx_node_info(node("n2", "4", "16Gi"), NULL), NULL));
	m = filter_msg_skip(h, p, 1, &skipped);
	assert_string_equal(m, REASON_CPU);
	assert_false(skipped);
	free(m);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

/* ---------- stale metrics ---------- */

static void test_stale_metrics(void **state)
{
	(void)state;
	char body[2048];
	list_begin(body);
	item(body, sizeof(body), "n1", "2026-06-01T12:00:00Z", "3", "12Gi");
	item(body, sizeof(body), "n2", "2026-06-01T11:57:00Z", "3", "12Gi");     /* 180 s behind: still fresh */
	item(body, sizeof(body), "n3", "2026-06-01T11:56:59.5Z", "3", "12Gi");   /* 180.5 s behind: stale */
	item(body, sizeof(body), "n4", "2026-06-01T13:56:00+02:00", "3", "12Gi"); /* = 11:56:00Z: stale */
	list_end(body, sizeof(body));
	set_body(body);
	struct ph *h = t_new("{usageThresholds: {cpu: 50}, estimatedUsagePercent: {cpu: 0, memory: 0}}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL),
				       fx_node_info(node("n2", "4", "16Gi"), NULL),
				       fx_node_info(node("n3", "4", "16Gi"), NULL),
				       fx_node_info(node("n4", "4", "16Gi"), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "1", "4Gi");
	/* fresh: 3 of 4 cpu is above 50% */
	for (int i = 0; i < 2; i++) {
		char *m = filter_msg(h, p, i);
		assert_string_equal(m, REASON_CPU);
		free(m);
	}
	/* stale: neither filtered nor scored by the sample */
	for (int i = 2; i < 4; i++) {
		char *m = filter_msg(h, p, i);
		assert_string_equal(m, "");
		free(m);
	}
	int64_t got[4];
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, got);
	/* measured: cpu 1000/4000 -> 25, memory 4/16 -> 25: 25; by requests (empty node + the pod):
	 * cpu 3000/4000 -> 75, memory 12/16 -> 75: 75 */
	assert_int_equal(got[0], 25);
	assert_int_equal(got[1], 25);
	assert_int_equal(got[2], 75);
	assert_int_equal(got[3], 75);

	/* Time passes without a refresh: 180 s after the fetch n1 is still fresh, 1 ns later too old
	 * for n1 and n2 alike (n2 was already 180 s behind). */
	__atomic_add_fetch(&fake_now, 180LL * 1000000000LL, __ATOMIC_RELAXED);
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, got);
	assert_int_equal(got[0], 25);
	assert_int_equal(got[1], 75);
	__atomic_add_fetch(&fake_now, 1, __ATOMIC_RELAXED);
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, got);
	assert_int_equal(got[0], 75);
	char *m = filter_msg(h, p, 0);
	assert_string_equal(m, "");
	free(m);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

/* A broken item (no usage, a bad quantity, a bad timestamp) leaves only that node without metrics. */
static void test_malformed_items(void **state)
{
	(void)state;
	set_body("{\"kind\":\"NodeMetricsList\",\"items\":["
		 "{\"metadata\":{\"name\":\"n1\"},\"usage\":{\"cpu\":\"3\",\"memory\":\"12Gi\"}},"
		 "{\"metadata\":{\"name\":\"n2\"}},"
		 "{\"metadata\":{\"name\":\"n3\"},\"usage\":{\"cpu\":\"-1\",\"memory\":\"1Gi\"}},"
		 "{\"metadata\":{\"name\":\"n4\"},\"timestamp\":\"yesterday\",\"usage\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}},"
		 "{\"usage\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}]}");
	struct ph *h = t_new("{estimatedUsagePercent: {cpu: 0, memory: 0}}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL),
				       fx_node_info(node("n2", "4", "16Gi"), NULL),
				       fx_node_info(node("n3", "4", "16Gi"), NULL),
				       fx_node_info(node("n4", "4", "16Gi"), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "1", "4Gi");
	int64_t got[4];
	ph_scores(h, ph_plugin(h, "ComputeResource"), p, got);
	assert_int_equal(got[0], 25); /* measured 3 cpu / 12Gi */
	assert_int_equal(got[1], 75); /* the others: by requests */
	assert_int_equal(got[2], 75);
	assert_int_equal(got[3], 75);
	sk_pod_unref(p);
	ph_free(h);
	/* not a list at all: no metrics */
	set_body("{\"kind\":\"Status\",\"items\":7}");
	h = t_new("");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
	p = pod("p", NULL, "1", "4Gi");
	assert_int_equal(score_of(h, p, 0), 75);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

/* ---------- reserved pods ---------- */

static void test_reserve_counts_until_measured(void **state)
{
	(void)state;
	char body[1024];
	struct sk_pod *p = pod("p", NULL, "1", "4Gi"), *q = pod("q", NULL, "1", "4Gi");
	/* newer 0: the sample predates the reservations (they count on top of it); newer 1: it was
	 * taken after them (it measures them already) */
	for (int newer = 0; newer < 2; newer++) {
		list_begin(body);
		item(body, sizeof(body), "n1", newer ? "2100-01-01T00:00:00Z" : "2026-01-01T00:00:00Z", "1", "4Gi");
		list_end(body, sizeof(body));
		set_body(body);
		struct ph *h = t_new("{refreshSeconds: 120, usageThresholds: {cpu: 75}}");
		ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
		struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
		/* measured 1 cpu + the pod's 1 cpu: cpu 50, memory (16-4-4)/16 = 50 -> 50 */
		assert_int_equal(score_of(h, p, 0), 50);
		struct sk_status s = pl->desc->reserve(pl, h->cs, q, "n1");
		assert_int_equal(s.code, SK_SUCCESS);
		/* counted (sample before the reservation): 1 + 1 + 1 cpu -> 25, 4 + 4 + 4Gi -> 25 */
		assert_int_equal(score_of(h, p, 0), newer ? 50 : 25);
		/* the filter sees 2 of 4 cpu = 50%, not above 75; a second reservation makes 3 = 75%,
		 * still not above; a third 4 = 100% is */
		s = pl->desc->reserve(pl, h->cs, p, "n1");
		assert_int_equal(s.code, SK_SUCCESS);
		char *m = filter_msg(h, p, 0);
		assert_string_equal(m, "");
		free(m);
		struct sk_pod *r = pod("r", NULL, "1", "4Gi");
		s = pl->desc->reserve(pl, h->cs, r, "n1");
		m = filter_msg(h, p, 0);
		assert_string_equal(m, newer ? "" : REASON_CPU);
		free(m);
		/* Unreserve releases exactly what Reserve added, and is idempotent */
		pl->desc->unreserve(pl, h->cs, r, "n1");
		pl->desc->unreserve(pl, h->cs, r, "n1");
		pl->desc->unreserve(pl, h->cs, p, "n1");
		pl->desc->unreserve(pl, h->cs, p, "other-node");
		assert_int_equal(score_of(h, p, 0), newer ? 50 : 25);
		pl->desc->unreserve(pl, h->cs, q, "n1");
		assert_int_equal(score_of(h, p, 0), 50);
		sk_pod_unref(r);
		ph_free(h);
	}
	sk_pod_unref(p);
	sk_pod_unref(q);
	teardown_body();
}

/* The refresh thread: a newer sample replaces the reservations it measures; a failed refresh
 * keeps the last table. refreshSeconds 1, so this test waits on the real clock for refreshes. */
static void wait_refresh(int after)
{
	for (int i = 0; i < 400 && calls() <= after; i++)
		usleep(10000);
	assert_true(calls() > after);
	usleep(50000); /* the swap happens right after the GET returns */
}

static void test_refresh(void **state)
{
	(void)state;
	char body[1024];
	list_begin(body);
	item(body, sizeof(body), "n1", "2026-01-01T00:00:00Z", "1", "4Gi");
	list_end(body, sizeof(body));
	set_body(body);
	struct ph *h = t_new("{refreshSeconds: 1, metricsExpirationSeconds: 600}");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	struct sk_pod *p = pod("p", NULL, "1", "4Gi"), *q = pod("q", NULL, "1", "4Gi");
	assert_int_equal(pl->desc->reserve(pl, h->cs, q, "n1").code, SK_SUCCESS);
	assert_int_equal(score_of(h, p, 0), 25);
	/* the same sample again: the reservation still counts */
	wait_refresh(calls());
	assert_int_equal(score_of(h, p, 0), 25);
	/* the API fails: the last table and its reservation stay */
	pthread_mutex_lock(&api_lock);
	free(api_body);
	api_body = NULL;
	api_error = "metrics-server is down";
	pthread_mutex_unlock(&api_lock);
	wait_refresh(calls());
	assert_int_equal(score_of(h, p, 0), 25);
	/* a sample taken after the reservation measures the pod: 2 cpu, 8Gi measured, no extra */
	list_begin(body);
	item(body, sizeof(body), "n1", "2100-01-01T00:00:00Z", "2", "8Gi");
	list_end(body, sizeof(body));
	set_body(body);
	wait_refresh(calls());
	assert_int_equal(score_of(h, p, 0), 25);
	/* and the pod leaving the node is seen at the next sample */
	list_begin(body);
	item(body, sizeof(body), "n1", "2100-01-01T00:00:30Z", "1", "4Gi");
	list_end(body, sizeof(body));
	set_body(body);
	wait_refresh(calls());
	assert_int_equal(score_of(h, p, 0), 50);
	pl->desc->unreserve(pl, h->cs, q, "n1"); /* no longer held: nothing to undo */
	assert_int_equal(score_of(h, p, 0), 50);
	sk_pod_unref(p);
	sk_pod_unref(q);
	ph_free(h);
	teardown_body();
}

/* ---------- points ---------- */

/* Enabled at Score only (no PreFilter): PreScore takes the table. */
static void test_score_without_prefilter(void **state)
{
	(void)state;
	one_node_metrics("1", "4Gi");
	struct ph *h = t_new_with("", "    preScore:\n      enabled: [{name: ComputeResource}]\n"
				      "    score:\n      enabled: [{name: ComputeResource, weight: 1}]\n");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("n1", "4", "16Gi"), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "1", "4Gi");
	assert_int_equal(score_of(h, p, 0), 50);
	/* Score with no state at all is an error naming the state */
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	ph_reset_state(h);
	int64_t s = 0;
	struct sk_status st = pl->desc->score(pl, h->cs, p, h->snap->nodes[0], &s);
	assert_int_equal(st.code, SK_ERROR);
	char *m = ph_message(&st);
	assert_non_null(strstr(m, "cycleState"));
	free(m);
	sk_pod_unref(p);
	ph_free(h);
	teardown_body();
}

static void test_events(void **state)
{
	(void)state;
	set_body(NULL);
	struct ph *h = t_new("");
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	struct sk_event_registration regs[8];
	int n = pl->desc->events_to_register(pl, regs, 8);
	assert_int_equal(n, 2);
	assert_int_equal(regs[0].event.resource, SK_EV_ASSIGNED_POD);
	assert_int_equal(regs[0].event.action, SK_ACT_DELETE);
	assert_int_equal(regs[1].event.resource, SK_EV_NODE);
	assert_int_equal(regs[1].event.action, SK_ACT_ADD | SK_ACT_UPDATE_NODE_ALLOCATABLE);
	assert_null(regs[0].hint);
	assert_null(regs[1].hint);
	ph_free(h);
	teardown_body();
}

/* ---------- args ---------- */

static char *args_errors(const char *args)
{
	ph_use_module(sk_module_init);
	char *text = NULL;
	assert_true(asprintf(&text, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
				    "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: ComputeResource}]\n"
				    "  pluginConfig:\n  - name: ComputeResource\n    args: %s\n", args) >= 0);
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
	free(text);
	char *all = cfg ? strdup("") : sk_errors_join(&e, "\n");
	sk_config_free(cfg);
	sk_errors_free(&e);
	return all;
}

static void test_args(void **state)
{
	(void)state;
	static const struct { const char *args, *want; } cases[] = {
		{ "{}", "" },
		{ "{refreshSeconds: 30, metricsExpirationSeconds: 30, usageThresholds: {cpu: 100, memory: 0}, "
		  "estimatedUsagePercent: {cpu: 1000, memory: 0}, resources: [{name: memory, weight: 100}]}", "" },
		{ "{refresh: 1}", "unknown field \"profiles[0].pluginConfig[0].args.refresh\"" },
		{ "{refreshSeconds: 0}", "profiles[0].pluginConfig[0].args.refreshSeconds: Invalid value: 0: must be in the range [1, 3600]" },
		{ "{refreshSeconds: 1.5}", "profiles[0].pluginConfig[0].args.refreshSeconds" },
		{ "{metricsExpirationSeconds: 86401}",
		  "profiles[0].pluginConfig[0].args.metricsExpirationSeconds: Invalid value: 86401: must be in the range [1, 86400]" },
		{ "{refreshSeconds: 600}",
		  "profiles[0].pluginConfig[0].args.metricsExpirationSeconds: Invalid value: 180: must be at least refreshSeconds (600)" },
		{ "{refreshSeconds: 60, metricsExpirationSeconds: 59}",
		  "profiles[0].pluginConfig[0].args.metricsExpirationSeconds: Invalid value: 59: must be at least refreshSeconds (60)" },
		{ "{usageThresholds: {cpu: 101}}",
		  "profiles[0].pluginConfig[0].args.usageThresholds.cpu: Invalid value: 101: must be in the range [0, 100]" },
		{ "{usageThresholds: {disk: 1}}", "unknown field \"profiles[0].pluginConfig[0].args.usageThresholds.disk\"" },
		{ "{usageThresholds: 5}", "profiles[0].pluginConfig[0].args.usageThresholds" },
		{ "{estimatedUsagePercent: {memory: -1}}",
		  "profiles[0].pluginConfig[0].args.estimatedUsagePercent.memory: Invalid value: -1: must be in the range [0, 1000]" },
		{ "{resources: [{name: gpu, weight: 1}]}",
		  "profiles[0].pluginConfig[0].args.resources[0].name: Unsupported value: \"gpu\": supported values: \"cpu\", \"memory\"" },
		{ "{resources: [{name: cpu, weight: 1}, {name: cpu, weight: 2}]}",
		  "profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: \"cpu\"" },
		{ "{resources: [{name: cpu, weight: 0}]}",
		  "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 0: must be in the range [1, 100]" },
		{ "{resources: []}", "profiles[0].pluginConfig[0].args.resources: Required value" },
		{ "{kind: NodeResourcesFitArgs}", "args: args were not of type ComputeResourceArgs, got NodeResourcesFitArgs" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = args_errors(cases[i].args);
		bool ok = *cases[i].want ? strstr(got, cases[i].want) != NULL : *got == '\0';
		if (!ok)
			fail_msg("args %s: errors \"%s\", want \"%s\"", cases[i].args, got, cases[i].want);
		free(got);
	}
}

/* The defaulted args as /configz shows them. */
static void test_args_encode(void **state)
{
	(void)state;
	set_body(NULL);
	struct ph *h = t_new("{usageThresholds: {cpu: 80}}");
	struct sk_plugin *pl = ph_plugin(h, "ComputeResource");
	void *args = NULL;
	struct sk_errors e = { 0 };
	cJSON *in = cJSON_Parse("{\"usageThresholds\":{\"cpu\":80}}");
	assert_int_equal(pl->desc->args_decode(in, &args, &e, "args"), 0);
	cJSON *out = pl->desc->args_encode(args);
	char *text = cJSON_PrintUnformatted(out);
	assert_string_equal(text, "{\"kind\":\"ComputeResourceArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
				  "\"refreshSeconds\":15,\"metricsExpirationSeconds\":180,\"usageThresholds\":{\"cpu\":80,"
				  "\"memory\":0},\"estimatedUsagePercent\":{\"cpu\":100,\"memory\":100},\"resources\":"
				  "[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}");
	free(text);
	cJSON_Delete(out);
	cJSON_Delete(in);
	pl->desc->args_free(args);
	sk_errors_free(&e);
	ph_free(h);
	teardown_body();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantities),
		cmocka_unit_test(test_score_arithmetic),
		cmocka_unit_test(test_index_many_nodes),
		cmocka_unit_test(test_no_metrics_api_scores_like_least_allocated),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_skip_follows_nodes),
		cmocka_unit_test(test_stale_metrics),
		cmocka_unit_test(test_malformed_items),
		cmocka_unit_test(test_reserve_counts_until_measured),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test(test_score_without_prefilter),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_args_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
