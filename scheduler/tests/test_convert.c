/* Tests for scheduler/config/convert.c (`schedkit-scheduler convert`): golden conversions of old
 * configurations in the styles of public repositories (scheduler/tests/testdata/convert/README.md
 * names each source), every converted file loaded by the v1 loader, and the errors and flags.
 * Regenerate the golden files with SK_UPDATE_GOLDEN=1 and review the diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/object.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"

#define DATA "scheduler/tests/testdata/convert/"
#define GOLDEN "scheduler/tests/golden/convert/"

static char *read_all(const char *path)
{
	size_t len;
	int e;
	return kube_read_file(path, 0, &len, &e);
}

/* Runs convert with argv (NULL-terminated after "convert"); *out and *err get the two streams. */
static int run(const char *const *args, char **out, char **err)
{
	char *argv[16];
	int argc = 0;
	argv[argc++] = (char *)"convert";
	for (int i = 0; args[i] && argc < 15; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	size_t on = 0, en = 0;
	FILE *fo = open_memstream(out, &on), *fe = open_memstream(err, &en);
	assert_non_null(fo);
	assert_non_null(fe);
	int rc = sk_convert_main(argc, argv, fo, fe);
	fclose(fo);
	fclose(fe);
	return rc;
}

static void check_golden(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, GOLDEN "%s.yaml", name);
	if (getenv("SK_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	}
	char *want = read_all(path);
	if (!want) {
		print_error("missing golden file %s (SK_UPDATE_GOLDEN=1 writes it)\n", path);
		fail();
	}
	if (strcmp(want, text)) {
		print_error("%s differs from the golden file; got:\n%s\n", path, text);
		free(want);
		fail();
	}
	free(want);
}

/* The output loads with the v1 loader (plugins unknown to this build excepted: out-of-tree ones). */
static void check_loads(const char *name, const char *text, const char *const *external)
{
	struct sk_errors errs = { 0 };
	struct sk_config_opts co = { .external_plugins = external };
	struct sk_config *cfg = sk_config_load_opts(text, strlen(text), &co, &errs);
	if (!cfg) {
		char *j = sk_errors_join(&errs, "\n");
		print_error("%s: the converted file does not load:\n%s\n", name, j);
		free(j);
		fail();
	}
	sk_config_free(cfg);
	sk_errors_free(&errs);
}

static void test_golden(void **state)
{
	(void)state;
	static const char *const external[] = { "TargetLoadPacking", NULL };
	static const struct {
		const char *name, *config, *policy;
		int notes; /* lines on standard error */
	} cases[] = {
		{ "hardway-v1beta1", DATA "hardway-v1beta1.yaml", NULL, 4 },
		{ "profiles-v1beta1", DATA "profiles-v1beta1.yaml", NULL, 7 },
		/* + the loader's word on the out-of-tree plugin */
		{ "trimaran-v1beta1", DATA "trimaran-v1beta1.yaml", NULL, 5 },
		{ "autoscaler-v1beta1", DATA "autoscaler-v1beta1.yaml", NULL, 7 },
		{ "policy-file-v1beta1", DATA "policy-file-v1beta1.yaml", DATA "policy-file-v1beta1.policy.json", 0 },
		{ "extender-v1beta1", DATA "extender-v1beta1.yaml", DATA "extender-v1beta1.policy.json", 4 },
		{ "ratio-v1beta1", DATA "ratio-v1beta1.yaml", NULL, 5 },
		{ "ratio-v1beta2", DATA "ratio-v1beta2.yaml", NULL, 4 },
		{ "mostallocated-v1beta3", DATA "mostallocated-v1beta3.yaml", NULL, 2 },
		{ "openai", NULL, DATA "openai.policy.json", 0 },
		{ "openshift", NULL, DATA "openshift.policy.json", 8 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[8];
		int n = 0;
		if (cases[i].config) {
			args[n++] = "--config";
			args[n++] = cases[i].config;
		}
		if (cases[i].policy) {
			args[n++] = "--policy";
			args[n++] = cases[i].policy;
		}
		args[n] = NULL;
		char *out = NULL, *err = NULL;
		int rc = run(args, &out, &err);
		if (rc != 0)
			print_error("%s: rc %d: %s\n", cases[i].name, rc, err);
		assert_int_equal(rc, 0);
		check_golden(cases[i].name, out);
		check_loads(cases[i].name, out, external);
		int lines = 0;
		for (const char *p = err; *p; p++)
			lines += *p == '\n';
		if (lines != cases[i].notes)
			print_error("%s: %d notes, want %d:\n%s\n", cases[i].name, lines, cases[i].notes, err);
		assert_int_equal(lines, cases[i].notes);
		if (!strcmp(cases[i].name, "trimaran-v1beta1") &&
		    !strstr(err, "warning: schedkit-scheduler --validate (without --plugin-dir) will report: "
				 "profiles[0].plugins.score.enabled[5]: unknown plugin \"TargetLoadPacking\""))
			fail_msg("no loader warning for the out-of-tree plugin:\n%s", err);
		free(out);
		free(err);
	}
}

/* The points of the conversion that matter most, checked on the parsed result (not the text). */
static void test_semantics(void **state)
{
	(void)state;
	/* v1beta1 bin packing: MostAllocated with the old args' resources, old default weights kept */
	char *text = NULL, *err = NULL;
	const char *args[] = { "--config", DATA "profiles-v1beta1.yaml", NULL };
	assert_int_equal(run(args, &text, &err), 0);
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &errs);
	assert_non_null(cfg);
	assert_int_equal(cfg->nprofiles, 2);
	const struct sk_profile_config *p = &cfg->profiles[0];
	const struct sk_plugin_list *score = &p->points[SK_EP_SCORE];
	int32_t taint_weight = 0, fit_weight = 0;
	for (int i = 0; i < score->n; i++) {
		if (!strcmp(score->items[i].desc->name, "TaintToleration"))
			taint_weight = score->items[i].weight;
		if (!strcmp(score->items[i].desc->name, "NodeResourcesFit"))
			fit_weight = score->items[i].weight;
	}
	assert_int_equal(taint_weight, 1); /* v1beta1's default, not v1's 3 */
	assert_int_equal(fit_weight, 1);
	cJSON *j = sk_config_to_json(cfg);
	char *fit = kube_json_print(kube_obj_get(cJSON_GetArrayItem(kube_obj_get(j, "profiles"), 0), "pluginConfig"));
	assert_non_null(strstr(fit, "\"type\":\"MostAllocated\""));
	assert_non_null(strstr(fit, "{\"name\":\"nvidia.com/gpu\",\"weight\":5}"));
	free(fit);
	cJSON_Delete(j);
	/* the no-scoring profile scores with nothing */
	assert_int_equal(cfg->profiles[1].points[SK_EP_SCORE].n, 0);
	assert_int_equal(cfg->profiles[1].points[SK_EP_PRE_SCORE].n, 0);
	sk_config_free(cfg);
	free(text);
	free(err);
}

static void test_errors(void **state)
{
	(void)state;
	char path[] = "/tmp/sk-convert-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	static const struct {
		const char *doc, *want;
	} cases[] = {
		{ "apiVersion: kubescheduler.config.k8s.io/v1alpha1\nkind: KubeSchedulerConfiguration\n",
		  "error: apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1alpha1\": supported values: "
		  "\"kubescheduler.config.k8s.io/v1beta1\", \"kubescheduler.config.k8s.io/v1beta2\", "
		  "\"kubescheduler.config.k8s.io/v1beta3\", \"kubescheduler.config.k8s.io/v1\"\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n",
		  "error: kind: Unsupported value: \"KubeProxyConfiguration\": supported values: \"KubeSchedulerConfiguration\"\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nalgorithmSource:\n"
		  "  provider: FancyProvider\n",
		  "error: algorithmSource.provider: Unsupported value: \"FancyProvider\": supported values: \"DefaultProvider\", "
		  "\"ClusterAutoscalerProvider\"\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nschedulerName: x\n",
		  "error: unknown field \"schedulerName\" (kubescheduler.config.k8s.io/v1beta2)\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
		  "    multiPoint:\n      enabled: [{name: A}]\n",
		  "error: profiles[0].plugins.multiPoint: not in this version (multiPoint came with v1beta3)\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n"
		  "- schedulerName: a\n  percentageOfNodesToScore: 5\n",
		  "error: unknown field \"profiles[0].percentageOfNodesToScore\"\n" },
		{ "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nalgorithmSource:\n"
		  "  policy:\n    configMap: {name: p}\n",
		  "error: algorithmSource.policy.configMap: the Policy is the data key \"policy.cfg\" of ConfigMap "
		  "kube-system/p; save it to a file and pass --policy FILE\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		FILE *f = fopen(path, "w");
		fputs(cases[i].doc, f);
		fclose(f);
		char *out = NULL, *err = NULL;
		const char *args[] = { "--config", path, NULL };
		assert_int_equal(run(args, &out, &err), 1);
		if (strcmp(err, cases[i].want)) {
			print_error("got:  %swant: %s", err, cases[i].want);
			fail();
		}
		assert_string_equal(out, "");
		free(out);
		free(err);
	}
	/* profiles and a Policy */
	FILE *f = fopen(path, "w");
	fputs("apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n"
	      "- schedulerName: a\n  plugins:\n    score:\n      disabled: [{name: ImageLocality}]\n", f);
	fclose(f);
	char *out = NULL, *err = NULL;
	const char *args[] = { "--config", path, "--policy", DATA "openai.policy.json", NULL };
	assert_int_equal(run(args, &out, &err), 1);
	assert_non_null(strstr(err, "profiles and policy config both set"));
	free(out);
	free(err);
	unlink(path);
	/* usage */
	const char *none[] = { NULL };
	assert_int_equal(run(none, &out, &err), 2);
	assert_non_null(strstr(err, "--config or --policy is required"));
	free(out);
	free(err);
	const char *bad[] = { "--nope", NULL };
	assert_int_equal(run(bad, &out, &err), 2);
	assert_non_null(strstr(err, "unknown flag: --nope"));
	free(out);
	free(err);
	const char *missing[] = { "--config", NULL };
	assert_int_equal(run(missing, &out, &err), 2);
	free(out);
	free(err);
	const char *nofile[] = { "--config", "/nonexistent/x.yaml", NULL };
	assert_int_equal(run(nofile, &out, &err), 1);
	assert_non_null(strstr(err, "cannot read \"/nonexistent/x.yaml\""));
	free(out);
	free(err);
}

/* --output writes the file; the daemon's loader takes it unchanged. */
static void test_output_file(void **state)
{
	(void)state;
	char path[] = "/tmp/sk-convert-out-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	char *out = NULL, *err = NULL;
	const char *args[] = { "--policy", DATA "openai.policy.json", "--output", path, NULL };
	assert_int_equal(run(args, &out, &err), 0);
	assert_string_equal(out, "");
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load_file(path, &errs);
	assert_non_null(cfg);
	assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
	sk_config_free(cfg);
	free(out);
	free(err);
	unlink(path);
}

static int setup(void **state)
{
	(void)state;
	const char *root = getenv("SK_ROOT");
	if (root && chdir(root) != 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_semantics),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_output_file),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
