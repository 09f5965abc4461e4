/* The module loader (scheduler/framework/loader.c) against real .so files: the test compiles
 * scheduler/tests/plugins/loader_plugin.c with $CC (default cc) into a good module and modules
 * broken one way each, then checks loading, the ABI and name errors, args validation through the
 * config loader, the deferred dlclose, a changed file loading anew and the score range. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scheduler/config/config.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fixtures.h"
#include "schedkit/module.h"

static char tmp[256];

static const char *root(void)
{
	const char *r = getenv("SK_ROOT");
	return r && *r ? r : ".";
}

/* Compiles the test plugin into path; fails the test when the compiler does. */
static void build(const char *path, const char *name, int variant, int behaviour)
{
	const char *cc = getenv("CC");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "%s -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -Wl,--no-undefined "
		 "-I%s/plugins/sdk/include $(pkg-config --cflags libcjson) -DPLUGIN_NAME='\"%s\"' -DVARIANT=%d "
		 "-DBEHAVIOUR=%d -o %s.tmp %s/scheduler/tests/plugins/loader_plugin.c $(pkg-config --libs libcjson) "
		 "&& mv -f %s.tmp %s",
		 cc && *cc ? cc : "cc", root(), name, variant, behaviour, path, root(), path, path);
	assert_int_equal(system(cmd), 0);
}

/* A fresh directory under tmp; returns its path (static buffer per call site is the caller's). */
static void mkdir_in(char *out, size_t n, const char *sub)
{
	snprintf(out, n, "%s/%s", tmp, sub);
	assert_int_equal(mkdir(out, 0755), 0);
}

static char *load_err(const char *dir)
{
	struct sk_module_set *set = NULL;
	char *err = NULL;
	const char *dirs[] = { dir };
	assert_int_equal(sk_module_set_load(dirs, 1, &set, &err), -1);
	assert_null(set);
	assert_non_null(err);
	assert_int_equal(sk_loader_live_modules(), 0);
	return err;
}

static struct sk_module_set *load_ok(const char *dir)
{
	struct sk_module_set *set = NULL;
	char *err = NULL;
	const char *dirs[] = { dir };
	int rc = sk_module_set_load(dirs, 1, &set, &err);
	if (rc != 0)
		fail_msg("load %s: %s", dir, err ? err : "?");
	return set;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/sk-loader-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *const config_fmt = "apiVersion: kubescheduler.config.k8s.io/v1\n"
				      "kind: KubeSchedulerConfiguration\n"
				      "profiles:\n"
				      "- schedulerName: lt\n"
				      "  plugins:\n"
				      "    multiPoint:\n"
				      "      enabled:\n"
				      "      - name: %s\n"
				      "  pluginConfig:\n"
				      "  - name: %s\n"
				      "    args: %s\n";

static struct sk_config *config_with(struct sk_module_set *set, const char *name, const char *args,
				     struct sk_errors *errs)
{
	char text[2048];
	snprintf(text, sizeof(text), config_fmt, name, name, args);
	struct sk_config_opts opts = { .modules = set };
	return sk_config_load_opts(text, strlen(text), &opts, errs);
}

static struct sk_plugin *instance(struct sk_framework *fw, const char *name)
{
	for (int i = 0; i < sk_framework_nplugins(fw); i++) {
		struct sk_plugin *pl = sk_framework_instance(fw, i);
		if (!strcmp(pl->desc->name, name))
			return pl;
	}
	fail_msg("no instance %s", name);
	return NULL;
}

/* Filter of the named instance on a node with the given labels (flow YAML); the status message. */
static char *filter_message(struct sk_framework *fw, const char *name, const char *labels)
{
	char node[256];
	snprintf(node, sizeof(node), "{metadata: {name: n1, labels: %s}}", labels);
	struct sk_node_info *ni = fx_node_info(fx_node(node), NULL);
	struct sk_pod *pod = fx_pod("{metadata: {name: p}}");
	struct sk_plugin *pl = instance(fw, name);
	struct sk_status s = pl->desc->filter(pl, NULL, pod, ni);
	char *msg = s.code == SK_SUCCESS ? strdup("ok") : sk_status_message(&s);
	sk_status_reset(&s);
	sk_pod_unref(pod);
	sk_node_info_free(ni);
	return msg;
}

struct patch_rec {
	char key[64], value[64];
	int calls;
};

static int rec_patch(void *ctx, const struct sk_pod *pod, const char *key, const char *value, char **err)
{
	(void)pod, (void)err;
	struct patch_rec *r = ctx;
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->value, sizeof(r->value), "%s", value);
	r->calls++;
	return 0;
}

static void test_good_module(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "good");
	snprintf(so, sizeof(so), "%s/good.so", dir);
	build(so, "LoaderGood", 0, 1);

	/* no schedkit symbol is left for the dynamic linker: everything goes through the table */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "nm -u %s | grep -E ' (sk_|kube_)' >/dev/null", so);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s | grep -q ' T sk_module_init$'", so);
	assert_int_equal(system(cmd), 0);

	struct sk_module_set *set = load_ok(dir);
	assert_int_equal(sk_loader_live_modules(), 1);
	assert_int_equal(sk_module_set_nplugins(set), 1);
	const struct sk_plugin_desc *d = sk_module_set_lookup(set, "LoaderGood");
	assert_non_null(d);
	assert_string_equal(d->args_kind, "LoaderGoodArgs");
	assert_string_equal(sk_module_set_file_of(set, "LoaderGood"), so);
	assert_null(sk_registry_lookup("LoaderGood")); /* the set's, not the process's */

	struct sk_errors errs = { 0 };
	struct sk_config *cfg = config_with(set, "LoaderGood", "{label: zone}", &errs);
	if (!cfg)
		fail_msg("%s", errs.n ? errs.msgs[0] : "?");
	struct patch_rec rec = { .calls = 0 };
	struct sk_framework_env env = { .ctx = &rec, .patch_pod_annotation = rec_patch };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(cfg, &cfg->profiles[0], &env, &err);
	if (!fw)
		fail_msg("%s", err);
	/* multiPoint put it at Filter, Score and PreBind */
	bool at_filter = false, at_score = false, at_pre_bind = false;
	for (int i = 0; i < sk_framework_point_len(fw, SK_EP_FILTER); i++)
		at_filter |= !strcmp(sk_framework_point_plugin(fw, SK_EP_FILTER, i)->desc->name, "LoaderGood");
	for (int i = 0; i < sk_framework_point_len(fw, SK_EP_SCORE); i++)
		at_score |= !strcmp(sk_framework_point_plugin(fw, SK_EP_SCORE, i)->desc->name, "LoaderGood");
	for (int i = 0; i < sk_framework_point_len(fw, SK_EP_PRE_BIND); i++)
		at_pre_bind |= !strcmp(sk_framework_point_plugin(fw, SK_EP_PRE_BIND, i)->desc->name, "LoaderGood");
	assert_true(at_filter && at_score && at_pre_bind);

	char *msg = filter_message(fw, "LoaderGood", "{zone: a}");
	assert_string_equal(msg, "ok");
	free(msg);
	msg = filter_message(fw, "LoaderGood", "{other: a}");
	assert_string_equal(msg, "loader test v1: node(s) lack the label zone");
	free(msg);

	/* PreBind reaches the env through sk_handle_patch_pod_annotation */
	struct sk_pod *pod = fx_pod("{metadata: {name: p}}");
	struct sk_plugin *pl = instance(fw, "LoaderGood");
	struct sk_status s = pl->desc->pre_bind(pl, NULL, pod, "n7");
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(rec.calls, 1);
	assert_string_equal(rec.key, "schedkit.io/loader-test");
	assert_string_equal(rec.value, "n7");
	sk_pod_unref(pod);

	sk_framework_unref(fw);
	sk_config_free(cfg);
	sk_errors_free(&errs);
	sk_module_set_unref(set);
	assert_int_equal(sk_loader_live_modules(), 0);
}

static void expect_error(const char *sub, int variant, const char *name, const char *want_fmt)
{
	char dir[300], so[400], want[1024];
	mkdir_in(dir, sizeof(dir), sub);
	snprintf(so, sizeof(so), "%s/%s.so", dir, sub);
	build(so, name, variant, 1);
	char *err = load_err(dir);
	snprintf(want, sizeof(want), want_fmt, so);
	assert_string_equal(err, want);
	free(err);
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define THIS_ABI STR(SK_ABI_MAJOR) "." STR(SK_ABI_MINOR)

static void test_abi_major(void **state)
{
	(void)state;
	char want[512];
	snprintf(want, sizeof(want), "plugin file \"%%s\": plugin \"LoaderMajor\": ABI %d.%d is not supported by this scheduler (ABI %s)",
		 SK_ABI_MAJOR + 1, SK_ABI_MINOR, THIS_ABI);
	expect_error("major", 1, "LoaderMajor", want);
}

static void test_abi_minor(void **state)
{
	(void)state;
	char want[512];
	snprintf(want, sizeof(want), "plugin file \"%%s\": plugin \"LoaderMinor\": ABI %d.%d is not supported by this scheduler (ABI %s)",
		 SK_ABI_MAJOR, SK_ABI_MINOR + 1, THIS_ABI);
	expect_error("minor", 2, "LoaderMinor", want);
}

/* The compatibility promise (docs/plugins.md, "ABI and compatibility"): a module built for an
 * older minor of this major loads, compared against the layout signature that minor shipped. The
 * current one is printed so a minor bump can record it in loader.c's released_signatures. */
/* Builds the loader-test plugin as variant under dir/<dir>.so and checks it loads with abi_minor
 * minor, filter set and filter_batch set only when want_batch: the plugin sets both, but an older
 * minor's descriptor (variants 6 to 8) ends before filter_batch, so the loader must read it NULL. */
static void loads_as(const char *dirname, const char *plugin, int variant, uint32_t minor, bool want_batch)
{
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), dirname);
	snprintf(so, sizeof(so), "%s/%s.so", dir, dirname);
	build(so, plugin, variant, 1);
	struct sk_module_set *set = load_ok(dir);
	const struct sk_plugin_desc *d = sk_module_set_lookup(set, plugin);
	assert_non_null(d);
	assert_int_equal(d->abi_minor, minor);
	assert_non_null(d->filter);
	assert_int_equal(d->filter_batch != NULL, want_batch);
	sk_module_set_unref(set);
	assert_int_equal(sk_loader_live_modules(), 0);
}

static void test_older_minor_loads(void **state)
{
	(void)state;
	print_message("ABI %s layout signature: 0x%016" PRIx64 "\n", THIS_ABI, (uint64_t)SK_LAYOUT_SIGNATURE);
	loads_as("older", "LoaderOlder", 6, 0, false);     /* the 1.0 headers */
	loads_as("older11", "LoaderOlder11", 7, 1, false); /* 1.1 */
	loads_as("older12", "LoaderOlder12", 8, 2, false); /* 1.2: its descriptor ends before filter_batch */
	loads_as("current", "LoaderCurrent", 0, SK_ABI_MINOR, true);
}

static void test_descriptor_size(void **state)
{
	(void)state;
	char want[512];
	snprintf(want, sizeof(want),
		 "plugin file \"%%s\": plugin \"LoaderSize\": descriptor of %zu bytes does not match ABI " THIS_ABI " (%zu to %zu bytes)",
		 offsetof(struct sk_plugin_desc, score_batch) - 8, offsetof(struct sk_plugin_desc, score_batch),
		 sizeof(struct sk_plugin_desc));
	expect_error("size", 3, "LoaderSize", want);
}

static void test_layout_signature(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "sig");
	snprintf(so, sizeof(so), "%s/sig.so", dir);
	build(so, "LoaderSig", 4, 1);
	char *err = load_err(dir);
	char want[512];
	snprintf(want, sizeof(want), "plugin file \"%s\": plugin \"LoaderSig\": built against schedkit headers of another build", so);
	assert_non_null(strstr(err, want));
	free(err);
}

static void test_missing_entry_point(void **state)
{
	(void)state;
	char dir[300], so[400], want[600];
	mkdir_in(dir, sizeof(dir), "noentry");
	snprintf(so, sizeof(so), "%s/noentry.so", dir);
	build(so, "Unused", 5, 1);
	char *err = load_err(dir);
	snprintf(want, sizeof(want), "plugin file \"%s\": not a schedkit plugin (no sk_module_init): ", so);
	assert_memory_equal(err, want, strlen(want));
	free(err);
}

static void test_not_elf(void **state)
{
	(void)state;
	char dir[300], so[400], want[600];
	mkdir_in(dir, sizeof(dir), "text");
	snprintf(so, sizeof(so), "%s/readme.so", dir);
	FILE *f = fopen(so, "w");
	assert_non_null(f);
	fputs("not a shared object\n", f);
	fclose(f);
	char *err = load_err(dir);
	snprintf(want, sizeof(want), "plugin file \"%s\": ", so);
	assert_memory_equal(err, want, strlen(want));
	assert_null(strstr(err, "/proc/self/fd")); /* the file is named, not the private copy */
	free(err);
	/* a missing directory is an error too */
	char missing[400];
	snprintf(missing, sizeof(missing), "%s/none", tmp);
	err = load_err(missing);
	snprintf(want, sizeof(want), "plugin dir \"%s\": No such file or directory", missing);
	assert_string_equal(err, want);
	free(err);
}

static void test_duplicate_name(void **state)
{
	(void)state;
	char dir[300], a[400], b[400], want[1024];
	mkdir_in(dir, sizeof(dir), "dup");
	snprintf(a, sizeof(a), "%s/a.so", dir);
	snprintf(b, sizeof(b), "%s/b.so", dir);
	build(a, "LoaderDup", 0, 1);
	build(b, "LoaderDup", 0, 2);
	char *err = load_err(dir);
	snprintf(want, sizeof(want), "plugin file \"%s\": plugin \"LoaderDup\" is also provided by \"%s\"", b, a);
	assert_string_equal(err, want);
	free(err);
}

static void test_shadows_in_tree(void **state)
{
	(void)state;
	expect_error("shadow", 0, "NodeName", "plugin file \"%s\": plugin \"NodeName\" shadows an in-tree plugin");
}

static void test_args_rejected(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "args");
	snprintf(so, sizeof(so), "%s/args.so", dir);
	build(so, "LoaderArgs", 0, 1);
	struct sk_module_set *set = load_ok(dir);
	struct sk_errors errs = { 0 };
	assert_null(config_with(set, "LoaderArgs", "{label: '', bogus: 1}", &errs));
	char *all = sk_errors_join(&errs, "\n");
	assert_non_null(strstr(all, "unknown field \"profiles[0].pluginConfig[0].args.bogus\""));
	assert_non_null(strstr(all, "profiles[0].pluginConfig[0].args.label: Invalid value: \"\": must not be empty"));
	free(all);
	sk_errors_free(&errs);
	/* the same config without the module set: the name is unknown */
	struct sk_errors e2 = { 0 };
	char text[1024];
	snprintf(text, sizeof(text), config_fmt, "LoaderArgs", "LoaderArgs", "{label: x}");
	assert_null(sk_config_load(text, strlen(text), &e2));
	all = sk_errors_join(&e2, "\n");
	assert_non_null(strstr(all, "profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"LoaderArgs\""));
	free(all);
	sk_errors_free(&e2);
	sk_module_set_unref(set);
	assert_int_equal(sk_loader_live_modules(), 0);
}

static void test_unload_deferred(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "defer");
	snprintf(so, sizeof(so), "%s/defer.so", dir);
	build(so, "LoaderDefer", 0, 1);
	struct sk_module_set *set = load_ok(dir);
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = config_with(set, "LoaderDefer", "{label: zone}", &errs);
	assert_non_null(cfg);
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(cfg, &cfg->profiles[0], NULL, &err);
	assert_non_null(fw);
	sk_module_set_unref(set);
	assert_int_equal(sk_loader_live_modules(), 1); /* the config holds the set */
	/* The framework alone keeps the module: its plugin (which copied its args at init) still runs
	 * after the configuration and the set are gone. */
	sk_config_free(cfg);
	assert_int_equal(sk_loader_live_modules(), 1);
	char *msg = filter_message(fw, "LoaderDefer", "{other: a}");
	assert_string_equal(msg, "loader test v1: node(s) lack the label zone");
	free(msg);
	assert_true(sk_framework_unref(fw)); /* fini runs, then the module closes */
	assert_int_equal(sk_loader_live_modules(), 0);
	sk_errors_free(&errs);
}

static void test_reload_changed_file(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "reload");
	snprintf(so, sizeof(so), "%s/plugin.so", dir);
	const char *dirs[] = { dir };
	char h1[65], h2[65], h3[65];
	build(so, "LoaderReload", 0, 1);
	assert_int_equal(sk_plugin_dirs_hash(dirs, 1, h1, NULL), 0);
	struct sk_module_set *s1 = load_ok(dir);
	struct sk_errors errs = { 0 };
	struct sk_config *c1 = config_with(s1, "LoaderReload", "{label: zone}", &errs);
	assert_non_null(c1);
	struct sk_framework *f1 = sk_framework_new(c1, &c1->profiles[0], NULL, NULL);
	assert_non_null(f1);

	/* the same path, rebuilt with other behaviour, loads anew beside the running one */
	build(so, "LoaderReload", 0, 2);
	assert_int_equal(sk_plugin_dirs_hash(dirs, 1, h2, NULL), 0);
	assert_string_not_equal(h1, h2);
	assert_int_equal(sk_plugin_dirs_hash(dirs, 1, h3, NULL), 0);
	assert_string_equal(h2, h3);
	struct sk_module_set *s2 = load_ok(dir);
	assert_int_equal(sk_loader_live_modules(), 2);
	struct sk_config *c2 = config_with(s2, "LoaderReload", "{label: zone}", &errs);
	assert_non_null(c2);
	struct sk_framework *f2 = sk_framework_new(c2, &c2->profiles[0], NULL, NULL);
	assert_non_null(f2);
	char *m1 = filter_message(f1, "LoaderReload", "{}");
	char *m2 = filter_message(f2, "LoaderReload", "{}");
	assert_string_equal(m1, "loader test v1: node(s) lack the label zone");
	assert_string_equal(m2, "loader test v2: node(s) lack the label zone");
	free(m1);
	free(m2);

	/* the old generation goes: its module closes, the new one keeps running */
	sk_framework_unref(f1);
	sk_config_free(c1);
	sk_module_set_unref(s1);
	assert_int_equal(sk_loader_live_modules(), 1);
	m2 = filter_message(f2, "LoaderReload", "{}");
	assert_string_equal(m2, "loader test v2: node(s) lack the label zone");
	free(m2);
	sk_framework_unref(f2);
	sk_config_free(c2);
	sk_module_set_unref(s2);
	assert_int_equal(sk_loader_live_modules(), 0);
	sk_errors_free(&errs);
}

/* A loaded Score plugin is held to [0, 100] after normalizing like any other (RunScorePlugins). */
static void test_score_out_of_range(void **state)
{
	(void)state;
	char dir[300], so[400];
	mkdir_in(dir, sizeof(dir), "score");
	snprintf(so, sizeof(so), "%s/score.so", dir);
	build(so, "LoaderScore", 0, 11); /* scores 110 */
	struct sk_module_set *set = load_ok(dir);
	struct sk_errors errs = { 0 };
	static const char text[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
				   "kind: KubeSchedulerConfiguration\n"
				   "profiles:\n"
				   "- schedulerName: lt\n"
				   "  plugins:\n"
				   "    score:\n"
				   "      disabled: [{name: '*'}]\n"
				   "      enabled: [{name: LoaderScore}]\n";
	struct sk_config_opts opts = { .modules = set };
	struct sk_config *cfg = sk_config_load_opts(text, sizeof(text) - 1, &opts, &errs);
	assert_non_null(cfg);
	struct sk_framework *fw = sk_framework_new(cfg, &cfg->profiles[0], NULL, NULL);
	assert_non_null(fw);
	struct sk_node_info *ni = fx_node_info(fx_node("{metadata: {name: n1, labels: {zone: a}}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}"), NULL);
	struct sk_pod *pod = fx_pod("{metadata: {name: p}}");
	const struct sk_node_info *nodes[] = { ni };
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_score_table t = { 0 };
	struct sk_status s = sk_fw_run_pre_score(fw, cs, pod, nodes, 1);
	assert_true(s.code == SK_SUCCESS || s.code == SK_SKIP);
	sk_status_reset(&s);
	s = sk_fw_run_score(fw, cs, pod, nodes, 1, &t);
	assert_int_equal(s.code, SK_ERROR);
	char *msg = sk_status_message(&s);
	assert_string_equal(msg, "applying score defaultWeights on Score plugins: plugin \"LoaderScore\" returns an invalid "
				 "score 110, it should in the range of [0, 100] after normalizing");
	free(msg);
	sk_status_reset(&s);
	sk_score_table_free(&t);
	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_node_info_free(ni);
	sk_framework_unref(fw);
	sk_config_free(cfg);
	sk_module_set_unref(set);
	sk_errors_free(&errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_module),
		cmocka_unit_test(test_abi_major),
		cmocka_unit_test(test_abi_minor),
		cmocka_unit_test(test_older_minor_loads),
		cmocka_unit_test(test_descriptor_size),
		cmocka_unit_test(test_layout_signature),
		cmocka_unit_test(test_missing_entry_point),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_duplicate_name),
		cmocka_unit_test(test_shadows_in_tree),
		cmocka_unit_test(test_args_rejected),
		cmocka_unit_test(test_unload_deferred),
		cmocka_unit_test(test_reload_changed_file),
		cmocka_unit_test(test_score_out_of_range),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
