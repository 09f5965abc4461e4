/* simulate's metrics.k8s.io: the NodeMetrics and PodMetrics objects of the cluster file, checked
 * once and served to sk_handle_api_get as metrics-server would answer the same GETs (lists and
 * single objects of metrics.k8s.io/v1beta1 nodes and pods). Read-only after sk_sim_metrics_new,
 * so any number of plugin threads may call sk_sim_metrics_get at once. */
#ifndef SK_SIM_METRICS_H
#define SK_SIM_METRICS_H

#include <stdint.h>

#include <cjson/cJSON.h>

struct sk_sim_metrics;

/* Picks the NodeMetrics and PodMetrics among objs (the cluster file's objects, in document
 * order; index i is reported as "object i+1"). Each must have metadata.name and a usage (pods: a
 * containers list with names and usages) whose values are quantities. A missing timestamp
 * becomes now_unix (the run's start: metrics that are fresh), a missing window "30s", a missing
 * namespace "default". Returns NULL and *err (caller frees) on an invalid object or ENOMEM. The
 * objects are copied: objs need not outlive the result. */
struct sk_sim_metrics *sk_sim_metrics_new(const cJSON *const *objs, int n, int64_t now_unix, char **err);
void sk_sim_metrics_free(struct sk_sim_metrics *m); /* NULL ok */
/* Number of NodeMetrics and PodMetrics objects held. */
int sk_sim_metrics_count(const struct sk_sim_metrics *m);

/* Answers GET path: /apis/metrics.k8s.io/v1beta1/nodes (a NodeMetricsList), .../nodes/<name>,
 * .../pods (every namespace), .../namespaces/<ns>/pods and .../namespaces/<ns>/pods/<name>. A
 * query ("?...") is refused, as the file has nothing to select on but names. 0 and *out (caller
 * frees), or -1 and *err (caller frees): "... not found" for an absent object, "the server could
 * not find the requested resource" for any other path. */
int sk_sim_metrics_get(const struct sk_sim_metrics *m, const char *path, cJSON **out, char **err);

#endif
