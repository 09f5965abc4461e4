/* Extender metrics (a schedkit addition; upstream kube-scheduler has none per extender):
 *   scheduler_extender_request_duration_seconds{extender,verb}  histogram of whole calls
 *   scheduler_extender_errors_total{extender,verb,kind}         kind: transport, timeout, status,
 *                                                               decode, response
 * Registered once into the daemon's registry (sk_extender_metrics_register); until then, and in
 * tests without a registry, calls are not recorded. */
#include <stdatomic.h>

#include "kube/metrics.h"
#include "scheduler/framework/extender_priv.h"

static _Atomic(struct kube_metric *) duration_m, errors_m;
static _Atomic(struct kube_metrics_registry *) registered;

/* Extender calls span a wider range than plugin points: 1ms .. ~16s. */
static const double buckets[] = { 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
				  0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384 };

void sk_extender_metrics_register(struct kube_metrics_registry *reg)
{
	if (!reg)
		return;
	atomic_store(&registered, reg);
	atomic_store(&duration_m,
		     kube_histogram_new(reg, "scheduler_extender_request_duration_seconds",
					"Duration of HTTP extender calls in seconds, by extender (urlPrefix) and verb.", 2,
					KUBE_LABELS("extender", "verb"), buckets, (int)(sizeof(buckets) / sizeof(buckets[0]))));
	atomic_store(&errors_m, kube_counter_new(reg, "scheduler_extender_errors_total",
						 "Failed HTTP extender calls by extender, verb and kind "
						 "(transport, timeout, status, decode, response).",
						 3, KUBE_LABELS("extender", "verb", "kind")));
}

void sk_extender_metrics_unregister(struct kube_metrics_registry *reg)
{
	struct kube_metrics_registry *cur = reg;
	if (!reg || !atomic_compare_exchange_strong(&registered, &cur, NULL))
		return;
	atomic_store(&duration_m, NULL);
	atomic_store(&errors_m, NULL);
}

void sk_extender_observe(const struct sk_extender *e, const char *label, double seconds, const char *error_kind)
{
	struct kube_metric *d = atomic_load(&duration_m), *x = atomic_load(&errors_m);
	if (d && seconds >= 0)
		kube_histogram_observe(d, seconds, KUBE_LABELS(e->name, label));
	if (x && error_kind)
		kube_counter_inc(x, KUBE_LABELS(e->name, label, error_kind));
}
