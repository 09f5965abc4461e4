/* The operator with the scheduler image's plugin modules (its --plugin-dir, loaded with the
 * scheduler's loader): a SchedulerProfile may name such a plugin without a SchedulerPlugin, its
 * args are validated by the plugin's own decoder (a bad field is Invalid with the plugin's
 * message), and a SchedulerPlugin may not provide the same name. The module is the SDK's sample
 * (plugins/examples/sample/sample.c), compiled by the test with $CC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/plan.h"
#include "operator/plugins.h"
#include "scheduler/framework/loader.h"

static char tmp[256];
static struct sk_module_set *set;

static const char SPEC_OK[] =
	"{\"plugins\":{\"preFilter\":{\"enabled\":[{\"name\":\"Sample\"}]},"
	"\"filter\":{\"enabled\":[{\"name\":\"Sample\"}]}},"
	"\"pluginConfig\":[{\"name\":\"Sample\",\"args\":{\"nodeLabel\":\"disk=ssd\"}}]}";
static const char SPEC_BAD_ARGS[] =
	"{\"plugins\":{\"filter\":{\"enabled\":[{\"name\":\"Sample\"}]}},"
	"\"pluginConfig\":[{\"name\":\"Sample\",\"args\":{\"nodeLabel\":\"disk=ssd\",\"whatever\":1}}]}";

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "/tmp/sk-op-modules-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	const char *root = getenv("SK_ROOT"), *cc = getenv("CC");
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "%s -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -Wl,--no-undefined "
		 "-I%s/plugins/sdk/include $(pkg-config --cflags libcjson) -o %s/sample.so "
		 "%s/plugins/examples/sample/sample.c $(pkg-config --libs libcjson)",
		 cc && *cc ? cc : "cc", root && *root ? root : ".", tmp, root && *root ? root : ".");
	if (system(cmd) != 0)
		return -1;
	const char *dirs[] = { tmp };
	char *err = NULL;
	if (sk_module_set_load(dirs, 1, &set, &err) != 0) {
		fprintf(stderr, "load: %s\n", err ? err : "?");
		free(err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sk_module_set_unref(set);
	char path[300];
	snprintf(path, sizeof path, "%s/sample.so", tmp);
	unlink(path);
	rmdir(tmp);
	return 0;
}

static cJSON *profile(const char *name, const char *spec)
{
	char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":\"SchedulerProfile\","
		 "\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"2025-01-01T00:00:00Z\",\"generation\":1},"
		 "\"spec\":%s}",
		 name, spec);
	cJSON *o = kube_json_parse(buf, strlen(buf), NULL);
	assert_non_null(o);
	return o;
}

static const struct op_profile_result *find(const struct op_plan *p, const char *name)
{
	const struct op_profile_result *r = op_plan_find(p, name);
	if (!r)
		fail_msg("no result for %s", name);
	return r;
}

static void test_profiles_name_image_plugins(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("ok", SPEC_OK));
	cJSON_AddItemToArray(arr, profile("bad-args", SPEC_BAD_ARGS));
	struct op_render_opts ro = { .modules = set };
	struct op_plan p;
	char *err = NULL;
	assert_int_equal(op_plan_build(arr, &ro, &p, &err), 0);
	const struct op_profile_result *r = find(&p, "ok");
	if (!r->accepted)
		fail_msg("ok rejected: %s", r->message);
	assert_non_null(strstr(p.config_yaml, "name: Sample"));
	assert_non_null(strstr(p.config_yaml, "nodeLabel: disk=ssd"));
	/* the plugin's own strict decoder saw the args: an unknown field is its error */
	r = find(&p, "bad-args");
	assert_false(r->accepted);
	assert_string_equal(r->reason, OP_REASON_INVALID);
	if (!strstr(r->message, "spec.pluginConfig[0].args.whatever"))
		fail_msg("bad-args: %s", r->message);
	op_plan_free(&p);

	/* without the modules the same name is unknown */
	struct op_render_opts none = { 0 };
	assert_int_equal(op_plan_build(arr, &none, &p, &err), 0);
	r = find(&p, "ok");
	assert_false(r->accepted);
	assert_non_null(strstr(r->message, "unknown plugin \"Sample\""));
	op_plan_free(&p);
	cJSON_Delete(arr);
}

static void test_splugin_may_not_shadow(void **state)
{
	(void)state;
	const char *obj = "[{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":\"SchedulerPlugin\","
			  "\"metadata\":{\"name\":\"mine\",\"creationTimestamp\":\"2025-01-01T00:00:00Z\",\"generation\":1},"
			  "\"spec\":{\"image\":\"x/y:1\",\"files\":[\"/p/s.so\"],\"plugins\":[\"Other\",\"Sample\"]}}]";
	cJSON *arr = kube_json_parse(obj, strlen(obj), NULL);
	struct op_plugin_set s;
	char *err = NULL;
	assert_int_equal(op_plugin_set_build_with(arr, set, &s, &err), 0);
	const struct op_plugin_result *r = op_plugin_set_find(&s, "mine");
	assert_false(r->accepted);
	assert_string_equal(r->reason, OP_REASON_INVALID);
	assert_string_equal(r->message,
			    "spec.plugins[1]: Invalid value: \"Sample\": shadows a plugin of the scheduler image");
	assert_int_equal(s.naccepted, 0);
	op_plugin_set_free(&s);
	/* without modules (an operator image with none) it is accepted */
	assert_int_equal(op_plugin_set_build_with(arr, NULL, &s, &err), 0);
	assert_true(op_plugin_set_find(&s, "mine")->accepted);
	op_plugin_set_free(&s);
	cJSON_Delete(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles_name_image_plugins),
		cmocka_unit_test(test_splugin_may_not_shadow),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
