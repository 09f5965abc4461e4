/* Prometheus metrics: a registry of counters, gauges and histograms (optionally labelled
 * vectors) rendered in the text exposition format 0.0.4, as client_golang writes it.
 *
 * Hot path: resolve a series once with kube_metric_with() (client_golang's WithLabelValues) and
 * keep the pointer; kube_series_add/observe are then a few relaxed atomics on a per-thread
 * stripe, with no lock at all. The convenience forms taking label values look the series up
 * lock-free (insert-only hash chains) and take the metric's own mutex only the first time a
 * label set is seen. Nothing on the observe path takes a registry-wide lock.
 *
 * Label values are passed as arrays (`const char *const *values`, exactly nlabels entries, NULL
 * entries read as ""); KUBE_LABELS("a", "b") builds such an array inline. A metric without
 * labels takes NULL.
 *
 * Ownership: the registry owns every metric and series; they live until
 * kube_metrics_registry_free(). Names, help and label strings are copied. */
#ifndef KUBE_METRICS_H
#define KUBE_METRICS_H

#include <stddef.h>

struct kube_metrics_registry;
struct kube_metric;
struct kube_metric_series;

enum kube_metric_type { KUBE_METRIC_COUNTER, KUBE_METRIC_GAUGE, KUBE_METRIC_HISTOGRAM };

/* Inline label-value array: kube_counter_add(m, 1, KUBE_LABELS("default", "scheduled")). */
#define KUBE_LABELS(...) ((const char *const[]){__VA_ARGS__})

/* NULL on allocation failure. Thread-safe: registration and rendering take the registry mutex. */
struct kube_metrics_registry *kube_metrics_registry_new(void);
/* Frees the registry, its metrics and series. NULL is a no-op. No other thread may still use it. */
void kube_metrics_registry_free(struct kube_metrics_registry *reg);

/* Register a metric. name must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
 * not starting with "__" (histograms also refuse "le"), no duplicates. Registering a name again
 * with the same type, labels (and buckets) returns the existing metric; a conflicting
 * registration, an invalid name or an allocation failure logs an error naming the metric and
 * field and returns NULL. Every function below accepts a NULL metric or series as a no-op, so a
 * failed registration never crashes the caller. */
struct kube_metric *kube_counter_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				     int nlabels, const char *const *label_names);
struct kube_metric *kube_gauge_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				   int nlabels, const char *const *label_names);
/* buckets: upper bounds, strictly increasing; a trailing +Inf is implied (and dropped if given).
 * NULL/0 buckets means client_golang's DefBuckets (.005 .. 10). */
struct kube_metric *kube_histogram_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				       int nlabels, const char *const *label_names, const double *buckets,
				       int nbuckets);

/* Looks up a registered metric by name (NULL when absent). */
struct kube_metric *kube_metrics_lookup(struct kube_metrics_registry *reg, const char *name);
enum kube_metric_type kube_metric_type_of(const struct kube_metric *m);

/* The series for these label values, created on first use; NULL only on allocation failure.
 * The pointer stays valid until the registry is freed: cache it on hot paths. */
struct kube_metric_series *kube_metric_with(struct kube_metric *m, const char *const *label_values);

/* Counters: v must be >= 0 (a negative add is ignored and logged once per metric). */
void kube_series_add(struct kube_metric_series *s, double v);
void kube_counter_add(struct kube_metric *m, double v, const char *const *label_values);
void kube_counter_inc(struct kube_metric *m, const char *const *label_values);

/* Gauges. */
void kube_series_set(struct kube_metric_series *s, double v);
void kube_series_gauge_add(struct kube_metric_series *s, double v);
void kube_gauge_set(struct kube_metric *m, double v, const char *const *label_values);
void kube_gauge_add(struct kube_metric *m, double v, const char *const *label_values);

/* Histograms: NaN observations are ignored. */
void kube_series_observe(struct kube_metric_series *s, double v);
void kube_histogram_observe(struct kube_metric *m, double v, const char *const *label_values);

/* Current value of a counter or gauge series; for a histogram, its observation count.
 * 0 when the series does not exist yet (the lookup does not create it). For tests and status. */
double kube_metric_value(struct kube_metric *m, const char *const *label_values);
double kube_histogram_sum(struct kube_metric *m, const char *const *label_values);
/* Cumulative count of observations <= le (le may be INFINITY). */
double kube_histogram_bucket_count(struct kube_metric *m, const char *const *label_values, double le);
/* Same as kube_metric_value but by name; 0 when the metric is unknown. */
double kube_metrics_value(struct kube_metrics_registry *reg, const char *name, const char *const *label_values);

/* Text exposition format 0.0.4: families sorted by name, "# HELP" (\\ and \n escaped) and
 * "# TYPE" lines, series sorted by label values, labels in label-name order, label values with
 * \\, \" and \n escaped, histograms as cumulative _bucket{le=...} (ending with +Inf), _sum,
 * _count. A labelled metric with no series yet is left out entirely, as client_golang does.
 * Returns a NUL-terminated string the caller frees with free(), or NULL on allocation failure. */
char *kube_metrics_render(struct kube_metrics_registry *reg);
/* fn runs at the start of every kube_metrics_render (before the lock; it may set series): the
 * metrics read from elsewhere at scrape time, as client_golang's collectors (process_*,
 * rest_client_* counts). Set once, before rendering starts. */
void kube_metrics_set_collector(struct kube_metrics_registry *reg, void (*fn)(void *ctx), void *ctx);
/* Content type of kube_metrics_render's output. */
#define KUBE_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Formats v as Go's strconv.FormatFloat(v, 'g', -1, 64) (+Inf, -Inf, NaN as Prometheus writes
 * them). buf should hold 32 bytes. Returns buf. */
char *kube_metrics_format_float(double v, char *buf, size_t len);

/* client_golang's ExponentialBuckets / LinearBuckets: writes count bounds to out.
 * Returns 0, or -1 when count < 1, start <= 0 or factor <= 1 (width <= 0 for linear). */
int kube_exponential_buckets(double start, double factor, int count, double *out);
int kube_linear_buckets(double start, double width, int count, double *out);

#endif
