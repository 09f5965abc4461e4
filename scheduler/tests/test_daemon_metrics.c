/* Tests for scheduler/metrics_sched.c (the daemon's metrics): upstream names and labels,
 * attempt counters and durations, the SLI measured from the first attempt across retries,
 * pending-pod gauges, extension point / plugin histograms through the per-thread series cache
 * (two instances never share series), and the binding-conflict counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) < (eps))

#include "kube/metrics.h"
#include "scheduler/daemon/metrics_sched.h"
#include "scheduler/tests/fixtures.h"

static void test_attempts_and_sli(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct sk_sched_metrics *m = sk_sched_metrics_new(reg);
	assert_non_null(m);
	struct sk_pod *pod = fx_pod("{metadata: {name: p1, uid: u1}, spec: {containers: [{name: c}]}}");
	/* attempt 1 fails at t=1s (took 0.25 s), attempt 2 succeeds at t=4s (took 0.5 s) */
	struct sk_outcome fail = { .pod = pod, .profile = "prof", .result = SK_RESULT_UNSCHEDULABLE, .attempts = 1,
				   .duration_s = 0.25 };
	sk_sched_metrics_attempt(m, &fail, 1000000000LL);
	struct sk_outcome ok = { .pod = pod, .profile = "prof", .result = SK_RESULT_SCHEDULED, .attempts = 2,
				 .node = "n1", .duration_s = 0.5 };
	sk_sched_metrics_attempt(m, &ok, 4000000000LL);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_schedule_attempts_total", KUBE_LABELS("unschedulable", "prof")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_schedule_attempts_total", KUBE_LABELS("scheduled", "prof")), 1);
	struct kube_metric *dur = kube_metrics_lookup(reg, "scheduler_scheduling_attempt_duration_seconds");
	assert_near(kube_histogram_sum(dur, KUBE_LABELS("scheduled", "prof")), 0.5, 1e-9);
	/* SLI: from the first attempt's start (0.75 s) to the end of the successful one (4 s) */
	struct kube_metric *sli = kube_metrics_lookup(reg, "scheduler_pod_scheduling_sli_duration_seconds");
	assert_int_equal((int)kube_metric_value(sli, KUBE_LABELS("2")), 1);
	assert_near(kube_histogram_sum(sli, KUBE_LABELS("2")), 3.25, 1e-6);
	struct kube_metric *pa = kube_metrics_lookup(reg, "scheduler_pod_scheduling_attempts");
	assert_near(kube_histogram_sum(pa, NULL), 2, 1e-9);

	/* a pod scheduled at once: SLI = its attempt; a forgotten pod starts over */
	struct sk_pod *q = fx_pod("{metadata: {name: p2, uid: u2}, spec: {containers: [{name: c}]}}");
	struct sk_outcome f2 = { .pod = q, .profile = "prof", .result = SK_RESULT_ERROR, .attempts = 1, .duration_s = 0.1 };
	sk_sched_metrics_attempt(m, &f2, 10000000000LL);
	sk_sched_metrics_forget_pod(m, "u2");
	struct sk_outcome o2 = { .pod = q, .profile = "prof", .result = SK_RESULT_SCHEDULED, .attempts = 1, .duration_s = 0.2 };
	sk_sched_metrics_attempt(m, &o2, 20000000000LL);
	assert_near(kube_histogram_sum(sli, KUBE_LABELS("1")), 0.2, 1e-6);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_schedule_attempts_total", KUBE_LABELS("error", "prof")), 1);

	sk_pod_unref(pod);
	sk_pod_unref(q);
	sk_sched_metrics_free(m);
	kube_metrics_registry_free(reg);
}

static void test_gauges_counters_and_render(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct sk_sched_metrics *m = sk_sched_metrics_new(reg);
	struct sk_queue_counts c = { .active = 3, .backoff = 2, .unschedulable = 1, .gated = 4 };
	sk_sched_metrics_pending(m, &c);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_pending_pods", KUBE_LABELS("active")), 3);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_pending_pods", KUBE_LABELS("gated")), 4);
	sk_sched_metrics_incoming(m, "active", "PodAdd");
	sk_sched_metrics_incoming(m, "active", "PodAdd");
	sk_sched_metrics_incoming(m, NULL, "PodAdd"); /* in flight: not counted */
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_queue_incoming_pods_total", KUBE_LABELS("active", "PodAdd")), 2);
	sk_sched_metrics_cache_size(m, 5, 7, 2);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_scheduler_cache_size", KUBE_LABELS("assumed_pods")), 2);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_scheduler_cache_size", KUBE_LABELS("nodes")), 5);
	sk_sched_metrics_binding_conflict(m);
	assert_int_equal((int)kube_metrics_value(reg, "schedkit_scheduler_binding_conflicts_total", NULL), 1);
	sk_sched_metrics_leader(m, "kube-scheduler", true);
	assert_int_equal((int)kube_metrics_value(reg, "leader_election_master_status", KUBE_LABELS("kube-scheduler")), 1);
	char *text = kube_metrics_render(reg);
	assert_non_null(strstr(text, "# TYPE scheduler_pending_pods gauge\n"));
	assert_non_null(strstr(text, "scheduler_pending_pods{queue=\"unschedulable\"} 1\n"));
	assert_non_null(strstr(text, "scheduler_queue_incoming_pods_total{event=\"PodAdd\",queue=\"active\"} 2\n"));
	free(text);
	assert_string_equal(sk_sched_metrics_queue_label(SK_Q_ERROR_BACKOFF), "backoff");
	assert_null(sk_sched_metrics_queue_label(SK_Q_IN_FLIGHT));
	assert_string_equal(sk_sched_metrics_result_label(SK_RESULT_UNSCHEDULABLE), "unschedulable");
	sk_sched_metrics_free(m);
	kube_metrics_registry_free(reg);
}

static void test_points_and_plugins_cached_per_instance(void **state)
{
	(void)state;
	struct kube_metrics_registry *r1 = kube_metrics_registry_new(), *r2 = kube_metrics_registry_new();
	struct sk_sched_metrics *m1 = sk_sched_metrics_new(r1), *m2 = sk_sched_metrics_new(r2);
	static const char *const point = "PreFilter", *const plugin = "NodeResourcesFit", *const profile = "p";
	for (int i = 0; i < 3; i++) {
		sk_sched_metrics_observe_point(m1, profile, point, NULL, SK_SUCCESS, 0.001);
		sk_sched_metrics_observe_point(m1, profile, "Filter", plugin, SK_UNSCHEDULABLE, 0.0001);
	}
	sk_sched_metrics_observe_point(m2, profile, point, NULL, SK_SUCCESS, 0.001);
	sk_sched_metrics_observe_point(m1, profile, point, NULL, SK_ERROR, 0.001);
	struct kube_metric *ep1 = kube_metrics_lookup(r1, "scheduler_framework_extension_point_duration_seconds");
	struct kube_metric *ep2 = kube_metrics_lookup(r2, "scheduler_framework_extension_point_duration_seconds");
	struct kube_metric *pl1 = kube_metrics_lookup(r1, "scheduler_plugin_execution_duration_seconds");
	assert_int_equal((int)kube_metric_value(ep1, KUBE_LABELS("PreFilter", "Success", "p")), 3);
	assert_int_equal((int)kube_metric_value(ep1, KUBE_LABELS("PreFilter", "Error", "p")), 1);
	assert_int_equal((int)kube_metric_value(ep2, KUBE_LABELS("PreFilter", "Success", "p")), 1);
	assert_int_equal((int)kube_metric_value(pl1, KUBE_LABELS("NodeResourcesFit", "Filter", "Unschedulable")), 3);
	sk_sched_metrics_free(m1);
	kube_metrics_registry_free(r1);
	/* a new instance (possibly at the same address) never reuses the old instance's series */
	struct kube_metrics_registry *r3 = kube_metrics_registry_new();
	struct sk_sched_metrics *m3 = sk_sched_metrics_new(r3);
	sk_sched_metrics_observe_point(m3, profile, point, NULL, SK_SUCCESS, 0.001);
	struct kube_metric *ep3 = kube_metrics_lookup(r3, "scheduler_framework_extension_point_duration_seconds");
	assert_int_equal((int)kube_metric_value(ep3, KUBE_LABELS("PreFilter", "Success", "p")), 1);
	sk_sched_metrics_free(m2);
	sk_sched_metrics_free(m3);
	kube_metrics_registry_free(r2);
	kube_metrics_registry_free(r3);
	sk_sched_metrics_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attempts_and_sli),
		cmocka_unit_test(test_gauges_counters_and_render),
		cmocka_unit_test(test_points_and_plugins_cached_per_instance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
