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
#include <unistd.h>

#include "kube/log.h"

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
		/* GA and deprecated gates of the other components: locked ones refuse the other value */
		{"SidecarContainers=true", NULL},
		{"SidecarContainers=false", "cannot set feature gate SidecarContainers to false, feature is locked to true"},
		{"ExecProbeTimeout=false", NULL}, /* GA, not locked */
		{"KMSv1=true", NULL},             /* deprecated, not locked */
		{"kube:WatchFromStorageWithoutResourceVersion=false", NULL},
		{"WatchFromStorageWithoutResourceVersion=true",
		 "cannot set feature gate WatchFromStorageWithoutResourceVersion to true, feature is locked to false"},
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
	/* the scheduler's GA gates first, then the other GA/deprecated ones sorted by name, then the
	 * alpha and beta ones sorted by name; no duplicate */
	size_t g = 0;
	while (g < kube_nfeature_gates && kube_feature_gates[g].stage == 'G' && kube_feature_gates[g].locked &&
	       (g == 0 || strcmp(kube_feature_gates[g - 1].name, kube_feature_gates[g].name) < 0))
		g++;
	assert_true(g > 0);
	size_t o = g;
	while (o < kube_nfeature_gates && strchr("GD", kube_feature_gates[o].stage))
		o++;
	assert_true(o > g + 10);
	for (size_t i = g + 1; i < o; i++)
		assert_true(strcmp(kube_feature_gates[i - 1].name, kube_feature_gates[i].name) < 0);
	for (size_t i = o; i < kube_nfeature_gates; i++) {
		assert_true(strchr("AB", kube_feature_gates[i].stage) != NULL);
		assert_false(kube_feature_gates[i].locked);
		if (i > o)
			assert_true(strcmp(kube_feature_gates[i - 1].name, kube_feature_gates[i].name) < 0);
	}
	for (size_t i = 0; i < kube_nfeature_gates; i++)
		for (size_t k = i + 1; k < kube_nfeature_gates; k++)
			assert_true(strcmp(kube_feature_gates[i].name, kube_feature_gates[k].name) != 0);
	assert_true(kube_feature_gate_enabled(NULL, "SchedulerQueueingHints"));
	free(set);
}

/* Upstream's warning for a GA or deprecated gate, one line per gate set; none for alpha/beta. */
static void test_warnings(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want; /* want NULL: no warning */
	} cases[] = {
		{"SidecarContainers=true", "Setting GA feature gate SidecarContainers=true. It will be removed in a future release."},
		{"ExecProbeTimeout=false", "Setting GA feature gate ExecProbeTimeout=false. It will be removed in a future release."},
		{"kube:KMSv1=true", "Setting deprecated feature gate KMSv1=true. It will be removed in a future release."},
		{"SchedulerQueueingHints=true", "Setting GA feature gate SchedulerQueueingHints=true. It will be removed in a future release."},
		{"SchedulerAsyncPreemption=false", NULL},
		{"SidecarContainers=false", NULL}, /* an error, not a warning */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[] = "/tmp/sk-featuregate-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		kube_log_set_fd(fd);
		char *err = NULL;
		kube_feature_gates_parse(cases[i].in, NULL, &err);
		free(err);
		kube_log_set_fd(2);
		char buf[1024] = "";
		ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		close(fd);
		unlink(path);
		if (cases[i].want ? (buf[0] != 'W' || !strstr(buf, cases[i].want) || strchr(buf, '\n') != buf + strlen(buf) - 1)
				  : buf[0] != 0)
			fail_msg("%s: logged \"%s\"", cases[i].in, buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_values_and_defaults),
		cmocka_unit_test(test_warnings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
