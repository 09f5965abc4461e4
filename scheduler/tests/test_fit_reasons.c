/* Every insufficient resource NodeResourcesFit reports reaches the FitError histogram (upstream
 * FitError.Error counts each reason per node, with no cap) and the per-node filter reasons, through
 * scheduler/schedule_one.c and the status reasons past the inline six (scheduler/framework/status.c),
 * run end to end with simulate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/config/config.h"
#include "scheduler/simulate/simulate.h"

static const char CONFIG[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			     "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
			     "    postFilter:\n      disabled: [{name: '*'}]\n";

#define NODE(name)                                                                                                     \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                               \
	"status: {allocatable: {cpu: \"1\", memory: 1Gi, pods: \"110\", example.com/a: \"1\"}}\n"

static void test_histogram_has_every_reason(void **state)
{
	(void)state;
	static const char cluster[] =
		NODE("n1") NODE("n2")
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n  - name: c\n    image: i\n"
		"    resources:\n      requests: {cpu: \"2\", memory: 2Gi, example.com/a: \"2\", example.com/b: \"1\","
		" example.com/c: \"1\", example.com/d: \"1\", example.com/e: \"1\", example.com/f: \"1\"}\n"
		"      limits: {example.com/a: \"2\", example.com/b: \"1\", example.com/c: \"1\", example.com/d: \"1\","
		" example.com/e: \"1\", example.com/f: \"1\"}\n";
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(CONFIG, strlen(CONFIG), &errs);
	assert_non_null(cfg);
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct sk_simulate_opts opts = { .seed = 1 };
	assert_int_equal(sk_simulate(cfg, cluster, strlen(cluster), &opts, out, &err), 0);
	fclose(out);
	const char *want_msg =
		"\"message\":\"0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient example.com/a, "
		"2 Insufficient example.com/b, 2 Insufficient example.com/c, 2 Insufficient example.com/d, "
		"2 Insufficient example.com/e, 2 Insufficient example.com/f, 2 Insufficient memory.\"";
	const char *want_filter =
		"\"n1\":{\"NodeResourcesFit\":\"Insufficient cpu, Insufficient memory, Insufficient example.com/a, "
		"Insufficient example.com/b, Insufficient example.com/c, Insufficient example.com/d, "
		"Insufficient example.com/e, Insufficient example.com/f\"}";
	if (!strstr(buf, want_msg) || !strstr(buf, want_filter))
		fail_msg("got %s\nwant %s\nand %s", buf, want_msg, want_filter);
	free(buf);
	free(err);
	sk_config_free(cfg);
	sk_errors_free(&errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram_has_every_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
