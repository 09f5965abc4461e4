/* Tests for kube/metrics: float formatting, exposition golden strings (escaping, sorting,
 * cumulative histogram buckets), registration rules, bucket helpers, concurrent exact totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/metrics.h"

static void test_format_float(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0, "0"},
		{1, "1"},
		{-1, "-1"},
		{2.5, "2.5"},
		{100, "100"},
		{0.005, "0.005"},
		{0.1, "0.1"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{123456, "123456"},
		{1000000, "1e+06"},
		{1234567, "1.234567e+06"},
		{17560473, "1.7560473e+07"},
		{16.384, "16.384"},
		{1.0 / 3, "0.3333333333333333"},
		{-0.25, "-0.25"},
		{INFINITY, "+Inf"},
		{-INFINITY, "-Inf"},
		{NAN, "NaN"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[40];
		kube_metrics_format_float(cases[i].v, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("case %zu: format(%g) = %s, want %s", i, cases[i].v, buf, cases[i].want);
	}
}

static void test_render_counter_gauge_golden(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	assert_non_null(reg);
	/* Label names deliberately out of order: rendering sorts them by name. */
	struct kube_metric *c = kube_counter_new(reg, "scheduler_schedule_attempts_total",
						 "Number of attempts to schedule pods, by the result.", 2,
						 KUBE_LABELS("result", "profile"));
	struct kube_metric *g = kube_gauge_new(reg, "scheduler_pending_pods", "Number of pending pods.", 1,
					       KUBE_LABELS("queue"));
	struct kube_metric *u = kube_counter_new(reg, "a_total", "Help with \\ and\nnewline \"q\".", 0, NULL);
	assert_non_null(c);
	assert_non_null(g);
	assert_non_null(u);
	kube_counter_inc(c, KUBE_LABELS("scheduled", "default-scheduler"));
	kube_counter_add(c, 2, KUBE_LABELS("unschedulable", "default-scheduler"));
	kube_counter_add(c, 0.5, KUBE_LABELS("error", "b\"x\\y\nz"));
	kube_counter_add(c, 1, KUBE_LABELS("scheduled", "default-scheduler"));
	kube_gauge_set(g, 3, KUBE_LABELS("active"));
	kube_gauge_add(g, -1.5, KUBE_LABELS("active"));
	kube_gauge_set(g, 7, KUBE_LABELS("backoff"));
	kube_gauge_add(g, 2, KUBE_LABELS("unschedulable"));

	char *out = kube_metrics_render(reg);
	assert_non_null(out);
	const char *want =
		"# HELP a_total Help with \\\\ and\\nnewline \"q\".\n"
		"# TYPE a_total counter\n"
		"a_total 0\n"
		"# HELP scheduler_pending_pods Number of pending pods.\n"
		"# TYPE scheduler_pending_pods gauge\n"
		"scheduler_pending_pods{queue=\"active\"} 1.5\n"
		"scheduler_pending_pods{queue=\"backoff\"} 7\n"
		"scheduler_pending_pods{queue=\"unschedulable\"} 2\n"
		"# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.\n"
		"# TYPE scheduler_schedule_attempts_total counter\n"
		"scheduler_schedule_attempts_total{profile=\"b\\\"x\\\\y\\nz\",result=\"error\"} 0.5\n"
		"scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 2\n"
		"scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} 2\n";
	assert_string_equal(out, want);
	free(out);

	assert_true(kube_metric_value(c, KUBE_LABELS("scheduled", "default-scheduler")) == 2);
	assert_true(kube_metrics_value(reg, "scheduler_pending_pods", KUBE_LABELS("active")) == 1.5);
	assert_true(kube_metric_value(c, KUBE_LABELS("nope", "x")) == 0);
	kube_metrics_registry_free(reg);
}

static void test_render_histogram_golden(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	double b[3];
	assert_int_equal(kube_exponential_buckets(0.001, 2, 3, b), 0);
	struct kube_metric *h = kube_histogram_new(reg, "scheduler_plugin_execution_duration_seconds", "Duration.", 3,
						   KUBE_LABELS("plugin", "extension_point", "status"), b, 3);
	struct kube_metric *plain = kube_histogram_new(reg, "plain_seconds", "Plain.", 0, NULL, b, 3);
	assert_non_null(h);
	assert_non_null(plain);
	const char *const *fs = KUBE_LABELS("NodeResourcesFit", "Filter", "Success");
	kube_histogram_observe(h, 0.0005, fs);
	kube_histogram_observe(h, 0.001, fs); /* on the bound: le is inclusive */
	kube_histogram_observe(h, 0.003, fs);
	kube_histogram_observe(h, 5, fs);
	kube_histogram_observe(h, NAN, fs); /* ignored */
	kube_histogram_observe(h, 0.002, KUBE_LABELS("ImageLocality", "Score", "Success"));
	kube_histogram_observe(plain, 0.5, NULL);

	char *out = kube_metrics_render(reg);
	assert_non_null(out);
	/* Filter sorts before Score: extension_point is the first label by name; le comes last. */
	const char *want =
		"# HELP plain_seconds Plain.\n"
		"# TYPE plain_seconds histogram\n"
		"plain_seconds_bucket{le=\"0.001\"} 0\n"
		"plain_seconds_bucket{le=\"0.002\"} 0\n"
		"plain_seconds_bucket{le=\"0.004\"} 0\n"
		"plain_seconds_bucket{le=\"+Inf\"} 1\n"
		"plain_seconds_sum 0.5\n"
		"plain_seconds_count 1\n"
		"# HELP scheduler_plugin_execution_duration_seconds Duration.\n"
		"# TYPE scheduler_plugin_execution_duration_seconds histogram\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\",le=\"0.001\"} 2\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\",le=\"0.002\"} 2\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\",le=\"0.004\"} 3\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\",le=\"+Inf\"} 4\n"
		"scheduler_plugin_execution_duration_seconds_sum{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\"} 5.0045\n"
		"scheduler_plugin_execution_duration_seconds_count{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",status=\"Success\"} 4\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\",le=\"0.001\"} 0\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\",le=\"0.002\"} 1\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\",le=\"0.004\"} 1\n"
		"scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\",le=\"+Inf\"} 1\n"
		"scheduler_plugin_execution_duration_seconds_sum{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\"} 0.002\n"
		"scheduler_plugin_execution_duration_seconds_count{extension_point=\"Score\",plugin=\"ImageLocality\",status=\"Success\"} 1\n";
	assert_string_equal(out, want);

	assert_true(kube_metric_value(h, fs) == 4);
	assert_true(kube_histogram_bucket_count(h, fs, 0.002) == 2);
	assert_true(kube_histogram_bucket_count(h, fs, INFINITY) == 4);
	assert_true(fabs(kube_histogram_sum(h, fs) - 5.0045) < 1e-12);
	free(out);
	kube_metrics_registry_free(reg);
}

static void test_empty_vector_omitted_and_default_buckets(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	char *empty = kube_metrics_render(reg);
	assert_non_null(empty);
	assert_string_equal(empty, "");
	free(empty);
	assert_non_null(kube_counter_new(reg, "v_total", "V.", 1, KUBE_LABELS("x")));
	struct kube_metric *h = kube_histogram_new(reg, "d_seconds", "D.", 0, NULL, NULL, 0);
	assert_non_null(h);
	char *out = kube_metrics_render(reg);
	assert_null(strstr(out, "v_total"));
	assert_non_null(strstr(out, "d_seconds_bucket{le=\"0.005\"} 0\n"));
	assert_non_null(strstr(out, "d_seconds_bucket{le=\"10\"} 0\nd_seconds_bucket{le=\"+Inf\"} 0\n"));
	free(out);
	kube_metrics_registry_free(reg);
}

static void test_registration_rules(void **state)
{
	(void)state;
	kube_log_set_fd(-1); /* errors are expected here; keep the test output readable */
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct kube_metric *a = kube_counter_new(reg, "x_total", "X.", 1, KUBE_LABELS("a"));
	assert_non_null(a);
	assert_ptr_equal(kube_counter_new(reg, "x_total", "X again.", 1, KUBE_LABELS("a")), a);
	assert_ptr_equal(kube_metrics_lookup(reg, "x_total"), a);
	assert_null(kube_metrics_lookup(reg, "y_total"));
	static const struct {
		const char *name;
		int nlabels;
		const char *l0, *l1;
		int histogram;
	} bad[] = {
		{"x_total", 1, "b", NULL, 0},   /* same name, other labels */
		{"x_total", 1, "a", NULL, 1},   /* same name, other type */
		{"1abc", 0, NULL, NULL, 0},     /* name starts with a digit */
		{"a-b", 0, NULL, NULL, 0},      /* dash */
		{"", 0, NULL, NULL, 0},         /* empty */
		{"ok", 1, "__x", NULL, 0},      /* reserved label prefix */
		{"ok", 1, "a:b", NULL, 0},      /* colon in label name */
		{"ok", 2, "a", "a", 0},         /* duplicate label */
		{"okh", 1, "le", NULL, 1},      /* le on a histogram */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *labels[2] = {bad[i].l0, bad[i].l1};
		struct kube_metric *m =
			bad[i].histogram
				? kube_histogram_new(reg, bad[i].name, "h", bad[i].nlabels, labels, NULL, 0)
				: kube_counter_new(reg, bad[i].name, "h", bad[i].nlabels, labels);
		if (m)
			fail_msg("case %zu (%s) registered", i, bad[i].name);
	}
	double unsorted[] = {1, 0.5};
	assert_null(kube_histogram_new(reg, "u_seconds", "u", 0, NULL, unsorted, 2));
	double with_inf[] = {1, 2, INFINITY};
	struct kube_metric *h = kube_histogram_new(reg, "i_seconds", "i", 0, NULL, with_inf, 3);
	assert_non_null(h);
	kube_histogram_observe(h, 3, NULL);
	char *out = kube_metrics_render(reg);
	assert_non_null(strstr(out, "i_seconds_bucket{le=\"2\"} 0\ni_seconds_bucket{le=\"+Inf\"} 1\ni_seconds_sum 3\n"));
	free(out);
	/* Counters ignore negative adds; a NULL metric is a no-op. */
	kube_counter_add(a, -1, KUBE_LABELS("v"));
	assert_true(kube_metric_value(a, KUBE_LABELS("v")) == 0);
	kube_counter_inc(NULL, NULL);
	kube_histogram_observe(NULL, 1, NULL);
	kube_log_set_fd(2);
	kube_metrics_registry_free(reg);
	kube_metrics_registry_free(NULL);
}

static void test_bucket_helpers(void **state)
{
	(void)state;
	double out[15];
	assert_int_equal(kube_exponential_buckets(0.001, 2, 15, out), 0);
	assert_true(out[0] == 0.001);
	assert_true(fabs(out[14] - 16.384) < 1e-12);
	assert_int_equal(kube_exponential_buckets(0, 2, 3, out), -1);
	assert_int_equal(kube_exponential_buckets(1, 1, 3, out), -1);
	assert_int_equal(kube_exponential_buckets(1, 2, 0, out), -1);
	assert_int_equal(kube_linear_buckets(1, 2, 3, out), 0);
	assert_true(out[0] == 1 && out[1] == 3 && out[2] == 5);
	assert_int_equal(kube_linear_buckets(1, 0, 3, out), -1);
}

#define THREADS 8
#define INCREMENTS 20000

struct worker_arg {
	struct kube_metric *counter, *hist, *gauge;
	int id;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	struct kube_metric_series *cached = kube_metric_with(a->counter, KUBE_LABELS("cached"));
	for (int i = 0; i < INCREMENTS; i++) {
		kube_counter_inc(a->counter, KUBE_LABELS(i % 2 ? "odd" : "even"));
		kube_series_add(cached, 1);
		kube_histogram_observe(a->hist, (i % 4) * 0.5, KUBE_LABELS(a->id % 2 ? "a" : "b"));
		kube_gauge_add(a->gauge, 0.5, NULL);
		kube_counter_add(a->counter, 0.25, KUBE_LABELS("float"));
	}
	return NULL;
}

static void test_concurrent_exact_totals(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct kube_metric *c = kube_counter_new(reg, "c_total", "c", 1, KUBE_LABELS("k"));
	double b[] = {0.5, 1};
	struct kube_metric *h = kube_histogram_new(reg, "h_seconds", "h", 1, KUBE_LABELS("k"), b, 2);
	struct kube_metric *g = kube_gauge_new(reg, "g", "g", 0, NULL);
	pthread_t th[THREADS];
	struct worker_arg args[THREADS];
	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct worker_arg){c, h, g, i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	/* Render concurrently with the writers: must not crash or tear the output. */
	for (int i = 0; i < 20; i++) {
		char *out = kube_metrics_render(reg);
		assert_non_null(out);
		free(out);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	double total = (double)THREADS * INCREMENTS;
	assert_true(kube_metric_value(c, KUBE_LABELS("even")) == total / 2);
	assert_true(kube_metric_value(c, KUBE_LABELS("odd")) == total / 2);
	assert_true(kube_metric_value(c, KUBE_LABELS("cached")) == total);
	assert_true(kube_metric_value(c, KUBE_LABELS("float")) == total * 0.25);
	assert_true(kube_metric_value(g, NULL) == total * 0.5);
	double per_label = total / 2;
	assert_true(kube_metric_value(h, KUBE_LABELS("a")) == per_label);
	/* Values 0, 0.5, 1, 1.5 in equal shares: <=0.5 half, <=1 three quarters. */
	assert_true(kube_histogram_bucket_count(h, KUBE_LABELS("a"), 0.5) == per_label / 2);
	assert_true(kube_histogram_bucket_count(h, KUBE_LABELS("a"), 1) == per_label * 3 / 4);
	assert_true(kube_histogram_sum(h, KUBE_LABELS("b")) == per_label / 4 * (0 + 0.5 + 1 + 1.5));
	kube_metrics_registry_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_float),
		cmocka_unit_test(test_render_counter_gauge_golden),
		cmocka_unit_test(test_render_histogram_golden),
		cmocka_unit_test(test_empty_vector_omitted_and_default_buckets),
		cmocka_unit_test(test_registration_rules),
		cmocka_unit_test(test_bucket_helpers),
		cmocka_unit_test(test_concurrent_exact_totals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
