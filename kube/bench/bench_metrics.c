/* Benchmark for kube/metrics: counter increments/s and histogram observations/s with 1 and 2
 * threads, through a cached series (the hot path) and through label-value lookups (the
 * convenience path), plus the cost of rendering a scheduler-sized registry. Prints figures. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/metrics.h"

#define OPS 5000000L

enum mode { COUNTER_CACHED, COUNTER_LABELS, HIST_CACHED, HIST_LABELS };

struct arg {
	enum mode mode;
	struct kube_metric *counter, *hist;
	long ops;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *p)
{
	struct arg *a = p;
	const char *const *cl = KUBE_LABELS("default-scheduler", "scheduled");
	const char *const *hl = KUBE_LABELS("NodeResourcesFit", "Filter", "Success");
	struct kube_metric_series *cs = kube_metric_with(a->counter, cl);
	struct kube_metric_series *hs = kube_metric_with(a->hist, hl);
	for (long i = 0; i < a->ops; i++) {
		switch (a->mode) {
		case COUNTER_CACHED:
			kube_series_add(cs, 1);
			break;
		case COUNTER_LABELS:
			kube_counter_inc(a->counter, cl);
			break;
		case HIST_CACHED:
			kube_series_observe(hs, (double)(i & 1023) * 1e-5);
			break;
		case HIST_LABELS:
			kube_histogram_observe(a->hist, (double)(i & 1023) * 1e-5, hl);
			break;
		}
	}
	return NULL;
}

static void bench(const char *what, enum mode mode, int threads, struct kube_metric *c, struct kube_metric *h)
{
	pthread_t th[2];
	struct arg a = {mode, c, h, OPS};
	double t0 = now_s();
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, run, &a);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	double dt = now_s() - t0;
	double total = (double)OPS * threads;
	printf("%-34s threads=%d  %8.1f M ops/s  (%5.1f ns/op per thread)\n", what, threads, total / dt / 1e6,
	       dt / (double)OPS * 1e9);
}

int main(void)
{
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct kube_metric *c = kube_counter_new(reg, "scheduler_schedule_attempts_total", "Attempts.", 2,
						 KUBE_LABELS("profile", "result"));
	double b[20];
	kube_exponential_buckets(0.00001, 1.5, 20, b);
	struct kube_metric *h = kube_histogram_new(reg, "scheduler_plugin_execution_duration_seconds", "Duration.", 3,
						   KUBE_LABELS("plugin", "extension_point", "status"), b, 20);
	for (int threads = 1; threads <= 2; threads++) {
		bench("counter add (cached series)", COUNTER_CACHED, threads, c, h);
		bench("counter add (label lookup)", COUNTER_LABELS, threads, c, h);
		bench("histogram observe (cached series)", HIST_CACHED, threads, c, h);
		bench("histogram observe (label lookup)", HIST_LABELS, threads, c, h);
	}

	/* Render: ~20 plugins x 12 extension points x 2 statuses of a 20-bucket histogram. */
	char plugin[32], point[32];
	for (int p = 0; p < 20; p++)
		for (int e = 0; e < 12; e++)
			for (int s = 0; s < 2; s++) {
				snprintf(plugin, sizeof(plugin), "Plugin%02d", p);
				snprintf(point, sizeof(point), "Point%02d", e);
				kube_histogram_observe(h, 0.001, KUBE_LABELS(plugin, point, s ? "Success" : "Error"));
			}
	double t0 = now_s();
	size_t bytes = 0;
	int renders = 20;
	for (int i = 0; i < renders; i++) {
		char *out = kube_metrics_render(reg);
		bytes = strlen(out);
		free(out);
	}
	double dt = (now_s() - t0) / renders;
	printf("render 481 series (%zu bytes)          %8.2f ms per render\n", bytes, dt * 1e3);
	kube_metrics_registry_free(reg);
	return 0;
}
