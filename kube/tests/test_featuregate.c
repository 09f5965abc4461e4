/* Tests for kube/featuregate.c: upstream's gate names (with and without "kube:"), values as
 * strconv.ParseBool reads them, the errors worded as component-base's, and defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/featuregate.h"

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in, *err;
	} cases[] = {
		{"SchedulerAsyncPreemption=false", NULL},
		{"kube:SchedulerPopFromBackoffQ=true,SchedulerAsyncAPICalls=0", NULL},
		{" AllAlpha = T , AllBeta=F", NULL},
		{"", NULL},
		{"SchedulerAsyncPreemption=false,", NULL},
		{"NoSuchGate=true", "unrecognized feature gate: NoSuchGate"},
		{"SchedulerAsyncPreemption=yes", "invalid value of SchedulerAsyncPreemption=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax"},
		{"SchedulerAsyncPreemption", "missing bool value for SchedulerAsyncPreemption"},
		{"other:SchedulerAsyncPreemption=true", "unrecognized component: other"},
		{"schedulerasyncpreemption=true", "unrecognized feature gate: schedulerasyncpreemption"},
		{"SchedulerQueueingHints=true", NULL}, /* GA: true is accepted */
		{"SchedulerQueueingHints=false", "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *err = NULL;
		int rc = kube_feature_gates_parse(cases[i].in, NULL, &err);
		if (cases[i].err) {
			if (rc != -1 || !err || strcmp(err, cases[i].err))
				fail_msg("%s: rc %d err \"%s\"", cases[i].in, rc, err ? err : "");
			free(err);
		} else if (rc != 0) {
			fail_msg("%s: %s", cases[i].in, err ? err : "");
		}
	}
}

static void test_values_and_defaults(void **state)
{
	(void)state;
	int *set = malloc(kube_nfeature_gates * sizeof *set);
	for (size_t i = 0; i < kube_nfeature_gates; i++)
		set[i] = -1;
	assert_true(kube_feature_gate_enabled(set, "SchedulerAsyncPreemption")); /* beta, on by default */
	assert_false(kube_feature_gate_enabled(set, "AllAlpha"));
	assert_int_equal(kube_feature_gates_parse("SchedulerAsyncPreemption=false,kube:AllAlpha=true", set, NULL), 0);
	assert_false(kube_feature_gate_enabled(set, "SchedulerAsyncPreemption"));
	assert_true(kube_feature_gate_enabled(set, "AllAlpha"));
	assert_false(kube_feature_gate_enabled(set, "NoSuchGate"));
	assert_true(kube_feature_gate_enabled(NULL, "PodLevelResources"));
	/* GA gates first, then the others sorted by name; no duplicate */
	size_t g = 0;
	while (g < kube_nfeature_gates && kube_feature_gates[g].stage == 'G')
		g++;
	assert_true(g > 0);
	for (size_t i = g + 1; i < kube_nfeature_gates; i++)
		assert_true(strcmp(kube_feature_gates[i - 1].name, kube_feature_gates[i].name) < 0);
	for (size_t i = 0; i < kube_nfeature_gates; i++)
		for (size_t k = i + 1; k < kube_nfeature_gates; k++)
			assert_true(strcmp(kube_feature_gates[i].name, kube_feature_gates[k].name) != 0);
	assert_true(kube_feature_gate_enabled(NULL, "SchedulerQueueingHints"));
	free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_values_and_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
