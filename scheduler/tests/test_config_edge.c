/* Tests for the config loader's edge cases (scheduler/config/config.c): strict decoding (a key
 * given twice), score weights at the int32 extremes and negative ones (upstream getScoreWeights,
 * computed with Go's wrapping arithmetic and no C undefined behaviour), removed apiVersions, no
 * follow-on errors after an unknown plugin, warnings instead of log lines, no Go struct dumps. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scheduler/config/config.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/simulate/simulate.h"

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
/* a profile whose only Score plugin is the one the case names (weights are the case's) */
#define ONLY_SCORE(list)                                                                                        \
	"profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: [{name: PrioritySort}, "     \
	"{name: DefaultBinder}]}, score: {enabled: " list "}}}]\n"

struct edge_case {
	const char *name;
	const char *body;      /* after HDR; a leading '!' means the whole text */
	const char *const *errors; /* every error, in order; NULL: the config loads */
};

static const char *const e_dup_yaml[] = { "failed to parse config: line 5 column 3: key \"leaderElect\" already set in map", NULL };
static const char *const e_dup_top[] = { "failed to parse config: line 4 column 1: key \"parallelism\" already set in map", NULL };
static const char *const e_dup_json[] = {
	"failed to parse config: line 1 column 100: key \"parallelism\" already set in map", NULL
};
static const char *const e_dup_args[] = {
	"failed to parse config: line 8 column 7: key \"hardPodAffinityWeight\" already set in map", NULL
};
static const char *const e_overflow[] = { "profiles[0].plugins.score: total score of Score plugins could overflow", NULL };
static const char *const e_v1beta1[] = {
	"apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta1\": supported values: "
	"\"kubescheduler.config.k8s.io/v1\" (kubescheduler.config.k8s.io/v1beta1 was removed in Kubernetes v1.23; "
	"convert the file with \"schedkit-scheduler convert\")",
	NULL
};
static const char *const e_v1beta2[] = {
	"apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta2\": supported values: "
	"\"kubescheduler.config.k8s.io/v1\" (kubescheduler.config.k8s.io/v1beta2 was removed in Kubernetes v1.28; "
	"convert the file with \"schedkit-scheduler convert\")",
	NULL
};
static const char *const e_v1beta3[] = {
	"apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": supported values: "
	"\"kubescheduler.config.k8s.io/v1\" (kubescheduler.config.k8s.io/v1beta3 was removed in Kubernetes v1.29; "
	"convert the file with \"schedkit-scheduler convert\")",
	NULL
};
static const char *const e_v2[] = {
	"apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v2\": supported values: \"kubescheduler.config.k8s.io/v1\"",
	NULL
};
static const char *const e_unknown_qs[] = {
	"profiles[0].plugins.queueSort.enabled[0]: unknown plugin \"PrioritySrt\"; did you mean \"PrioritySort\"?", NULL
};
static const char *const e_unknown_bind[] = {
	"profiles[0].plugins.bind.enabled[0]: unknown plugin \"DefaultBindr\"; did you mean \"DefaultBinder\"?", NULL
};
static const char *const e_unknown_mp[] = {
	"profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"PrioritySorter\"; did you mean \"PrioritySort\"?", NULL
};
static const char *const e_qs_differs[] = {
	"profiles[1].plugins.queueSort: Invalid value: {\"enabled\":[{\"name\":\"PrioritySort\"}],\"disabled\":[{\"name\":\"*\"}]}: "
	"queueSort must be the same for all profiles",
	NULL
};
static const char *const e_no_qs[] = {
	"profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
	"\"default-scheduler\", but got 0",
	NULL
};

static const struct edge_case cases[] = {
	/* strict decoding */
	{ "duplicate nested key", "leaderElection:\n  leaderElect: false\n  leaderElect: true\n", e_dup_yaml },
	{ "duplicate top-level key", "parallelism: 4\nparallelism: 8\n", e_dup_top },
	{ "duplicate key in JSON",
	  "!{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":\"KubeSchedulerConfiguration\",\"parallelism\":4,"
	  "\"parallelism\":8}",
	  e_dup_json },
	{ "duplicate key in plugin args",
	  "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 1\n      "
	  "hardPodAffinityWeight: 2\n",
	  e_dup_args },
	{ "same key in two profiles", "profiles:\n- schedulerName: a\n- schedulerName: b\n", NULL },
	/* score weights (getScoreWeights): 0 becomes 1, negative weights are kept, the overflow check
	 * wraps as Go's int64 does */
	{ "int32 max weight alone", ONLY_SCORE("[{name: ImageLocality, weight: 2147483647}]"), NULL },
	{ "int32 max weights twice", ONLY_SCORE("[{name: ImageLocality, weight: 2147483647}, {name: NodeAffinity, weight: 2147483647}]"), NULL },
	{ "int32 min weight alone", ONLY_SCORE("[{name: ImageLocality, weight: -2147483648}]"), NULL },
	{ "negative weight last", ONLY_SCORE("[{name: ImageLocality, weight: 5}, {name: NodeAffinity, weight: -3}]"), NULL },
	{ "negative weight then another plugin",
	  ONLY_SCORE("[{name: ImageLocality, weight: -1}, {name: NodeAffinity, weight: 1}]"), e_overflow },
	{ "int32 min then int32 max",
	  ONLY_SCORE("[{name: ImageLocality, weight: -2147483648}, {name: NodeAffinity, weight: 2147483647}]"), e_overflow },
	{ "negative weight before the default multiPoint plugins",
	  "profiles: [{plugins: {score: {enabled: [{name: ImageLocality, weight: -2147483648}]}}}]\n", e_overflow },
	{ "negative multiPoint weight, the last score plugin",
	  "profiles: [{plugins: {multiPoint: {enabled: [{name: NodeResourcesBalancedAllocation, weight: 1}, "
	  "{name: ImageLocality, weight: -7}]}}}]\n",
	  NULL },
	{ "weight beyond int32", ONLY_SCORE("[{name: ImageLocality, weight: 2147483648}]"), NULL /* any error */ },
	/* removed apiVersions name their release */
	{ "v1beta1", "!apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n", e_v1beta1 },
	{ "v1beta2", "!apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n", e_v1beta2 },
	{ "v1beta3", "!apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", e_v1beta3 },
	{ "never a version", "!apiVersion: kubescheduler.config.k8s.io/v2\nkind: KubeSchedulerConfiguration\n", e_v2 },
	/* an unknown plugin is the only error, not followed by what its absence implies */
	{ "unknown queue sort", "profiles: [{schedulerName: a, plugins: {queueSort: {enabled: [{name: PrioritySrt}], disabled: [{name: '*'}]}}}, "
				"{schedulerName: b}]\n", e_unknown_qs },
	{ "unknown binder", "profiles: [{plugins: {bind: {enabled: [{name: DefaultBindr}], disabled: [{name: '*'}]}}}]\n",
	  e_unknown_bind },
	{ "unknown multiPoint plugin",
	  "profiles: [{schedulerName: a, plugins: {multiPoint: {enabled: [{name: PrioritySorter}], disabled: [{name: '*'}]}}}, "
	  "{schedulerName: b}]\n",
	  e_unknown_mp },
	/* the checks still run when nothing is unknown; sets are printed as the user writes them */
	{ "queue sort differs", "profiles: [{schedulerName: a}, {schedulerName: b, plugins: {queueSort: {enabled: "
				"[{name: PrioritySort}], disabled: [{name: '*'}]}}}]\n", e_qs_differs },
	{ "no queue sort", "profiles: [{plugins: {queueSort: {disabled: [{name: '*'}]}}}]\n", e_no_qs },
};

static void test_edge_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct edge_case *c = &cases[i];
		char *text = NULL;
		if (c->body[0] == '!')
			text = strdup(c->body + 1);
		else if (asprintf(&text, "%s%s", HDR, c->body) < 0)
			text = NULL;
		assert_non_null(text);
		struct sk_errors e = { 0 };
		struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
		bool want_ok = !c->errors && strcmp(c->name, "weight beyond int32");
		char *all = sk_errors_join(&e, "\n  ");
		if (want_ok && !cfg)
			fail_msg("%s: errors:\n  %s", c->name, all);
		if (!want_ok && cfg)
			fail_msg("%s: loaded, want an error", c->name);
		if (c->errors) {
			int n = 0;
			while (c->errors[n])
				n++;
			if (e.n != n)
				fail_msg("%s: %d errors, want %d:\n  %s", c->name, e.n, n, all);
			for (int k = 0; k < n; k++)
				if (strcmp(e.msgs[k], c->errors[k]))
					fail_msg("%s: error %d:\n  %s\nwant\n  %s", c->name, k, e.msgs[k], c->errors[k]);
		}
		free(all);
		sk_errors_free(&e);
		sk_config_free(cfg);
		free(text);
	}
}

static int32_t score_weight(const struct sk_profile_config *p, const char *name)
{
	for (int i = 0; i < p->points[SK_EP_SCORE].n; i++)
		if (!strcmp(p->points[SK_EP_SCORE].items[i].desc->name, name))
			return p->points[SK_EP_SCORE].items[i].weight;
	fail_msg("%s is not a score plugin", name);
	return 0;
}

/* A negative weight is run as given (it used to become +1), by the loader and the framework. */
static void test_negative_weight_kept(void **state)
{
	(void)state;
	static const char text[] = HDR ONLY_SCORE("[{name: ImageLocality, weight: 5}, {name: NodeAffinity, weight: -3}]");
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(text, sizeof text - 1, &e);
	assert_non_null(cfg);
	const struct sk_profile_config *p = &cfg->profiles[0];
	assert_int_equal(score_weight(p, "ImageLocality"), 5);
	assert_int_equal(score_weight(p, "NodeAffinity"), -3);
	struct sk_framework_env env = { 0 };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(cfg, p, &env, &err);
	if (!fw)
		fail_msg("sk_framework_new: %s", err);
	assert_int_equal(sk_framework_point_len(fw, SK_EP_SCORE), 2);
	int32_t w0 = sk_framework_score_weight(fw, 0), w1 = sk_framework_score_weight(fw, 1);
	assert_true((w0 == 5 && w1 == -3) || (w0 == -3 && w1 == 5));
	sk_framework_unref(fw);
	sk_config_free(cfg);
}

/* The overflow check itself, at the extremes: Go's wrapping answers, no undefined behaviour (the
 * UBSan build of this test is the proof; see docs/config.md). */
static void test_score_weight_arithmetic(void **state)
{
	(void)state;
	static const struct {
		int64_t total;
		int32_t weight;
		bool overflows;
		int64_t next;
	} cases[] = {
		{ 0, 1, false, 100 },
		{ 0, INT32_MAX, false, (int64_t)INT32_MAX * 100 },
		{ 0, INT32_MIN, false, (int64_t)INT32_MIN * 100 },
		{ -100, 1, true, 0 },                    /* MaxInt64 - (-100) wraps negative */
		{ -1, INT32_MIN, true, (int64_t)INT32_MIN * 100 - 1 }, /* wraps to MinInt64: even a negative weight "overflows" */
		{ INT64_MAX, 0, false, INT64_MAX },
		{ INT64_MAX, 1, true, INT64_MIN + 99 },
		{ INT64_MAX - 99, 1, true, INT64_MIN },
		{ INT64_MAX - 100, 1, false, INT64_MAX },
		{ INT64_MIN, INT32_MAX, true, INT64_MIN + (int64_t)INT32_MAX * 100 },
		{ INT64_MIN, INT32_MIN, false, INT64_MAX + (int64_t)INT32_MIN * 100 + 1 }, /* MaxInt64 - MinInt64 wraps to -1 */
		{ INT64_MIN + 1, -1, false, INT64_MAX - 98 },  /* MaxInt64 - total wraps to -2 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (sk_score_weight_overflows(cases[i].total, cases[i].weight) != cases[i].overflows)
			fail_msg("case %zu: total %lld weight %d: overflows should be %d", i, (long long)cases[i].total,
				 cases[i].weight, cases[i].overflows);
		int64_t next = sk_score_total_add(cases[i].total, cases[i].weight);
		if (next != cases[i].next)
			fail_msg("case %zu: next %lld, want %lld", i, (long long)next, (long long)cases[i].next);
	}
}

/* Runs --validate on text; returns what it printed on out and (through *err_out) on stderr. */
static char *validate_text(const char *text, int *rc, char **err_out)
{
	char path[] = "/tmp/sk_cfg_edgeXXXXXX", errpath[] = "/tmp/sk_cfg_edge_errXXXXXX";
	int fd = mkstemp(path), efd = mkstemp(errpath);
	assert_true(fd >= 0 && efd >= 0);
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	fflush(stderr);
	int saved = dup(2);
	dup2(efd, 2);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	*rc = sk_config_validate_file(path, out);
	fclose(out);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	off_t n = lseek(efd, 0, SEEK_END);
	*err_out = calloc(1, (size_t)n + 1);
	assert_int_equal(pread(efd, *err_out, (size_t)n, 0), n);
	close(efd);
	unlink(path);
	unlink(errpath);
	return buf;
}

static void test_validate_prints_warnings_not_logs(void **state)
{
	(void)state;
	int rc;
	char *err = NULL;
	/* a pluginConfig of an unregistered plugin, a not-built plugin named at one point, invalid
	 * args of a plugin that is not enabled: accepted, each a warning line */
	char *out = validate_text(HDR "profiles:\n- plugins:\n    filter:\n      enabled: [{name: DynamicResources}]\n"
				      "    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n"
				      "  pluginConfig:\n  - {name: NotAPlugin, args: {a: 1}}\n"
				      "  - {name: NodeResourcesFit, args: {scoringStrategy: {type: Nope}}}\n",
				  &rc, &err);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	assert_string_equal(out,
			    "warning: profiles[0].pluginConfig[0]: plugin \"NotAPlugin\" is not registered; its args are kept as given\n"
			    "warning: profiles[0].pluginConfig[1].args: invalid args of plugin \"NodeResourcesFit\", which the "
			    "profile does not enable; ignored as upstream does\n"
			    "warning: profiles[0].plugins.filter.enabled[0]: plugin \"DynamicResources\" is not available in this build; skipped\n"
			    "warning: profile \"default-scheduler\": upstream plugins not available in this build are skipped: "
			    "DynamicResources\n");
	free(out);
	free(err);

	/* errors: only "error:" lines, nothing on stderr */
	out = validate_text(HDR "parallelism: 1\nparallelism: 2\n", &rc, &err);
	assert_int_equal(rc, 1);
	assert_string_equal(err, "");
	assert_string_equal(out, "error: failed to parse config: line 4 column 1: key \"parallelism\" already set in map\n");
	free(out);
	free(err);
}

/* End to end through simulate: with NodeResourcesFit (LeastAllocated) the only Score plugin at
 * weight -1, the busier node wins (upstream runs the weight as given; it used to become +1). The
 * profile names it in multiPoint only: disabling '*' at the score point would still leave the
 * default multiPoint Score plugins in getScoreWeights' walk, after the negative weight. */
static void test_negative_weight_placement(void **state)
{
	(void)state;
	static const struct {
		const char *weight, *want;
	} cases[] = { { "-1", "\"node\":\"busy\"" }, { "1", "\"node\":\"idle\"" } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char config[1024];
		snprintf(config, sizeof config,
			 HDR "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
			 "    multiPoint:\n      disabled: [{name: '*'}]\n      enabled: [{name: PrioritySort}, {name: DefaultBinder},"
			 " {name: NodeResourcesFit, weight: %s}]\n",
			 cases[i].weight);
		static const char cluster[] =
			"---\napiVersion: v1\nkind: Node\nmetadata: {name: idle}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n"
			"---\napiVersion: v1\nkind: Node\nmetadata: {name: busy}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n"
			"---\napiVersion: v1\nkind: Pod\nmetadata: {name: load}\nspec: {nodeName: busy, containers: [{name: c, image: i, "
			"resources: {requests: {cpu: \"2\", memory: 4Gi}}}]}\n"
			"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i, "
			"resources: {requests: {cpu: \"1\", memory: 1Gi}}}]}\n";
		struct sk_errors e = { 0 };
		struct sk_config *cfg = sk_config_load(config, strlen(config), &e);
		if (!cfg) {
			char *all = sk_errors_join(&e, "; ");
			fail_msg("weight %s: %s", cases[i].weight, all);
		}
		char *buf = NULL, *err = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct sk_simulate_opts opts = { .seed = 1 };
		assert_int_equal(sk_simulate(cfg, cluster, strlen(cluster), &opts, out, &err), 0);
		fclose(out);
		if (!strstr(buf, cases[i].want))
			fail_msg("weight %s: got %s, want %s", cases[i].weight, buf, cases[i].want);
		free(buf);
		free(err);
		sk_config_free(cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_negative_weight_kept),
		cmocka_unit_test(test_score_weight_arithmetic),
		cmocka_unit_test(test_validate_prints_warnings_not_logs),
		cmocka_unit_test(test_negative_weight_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
