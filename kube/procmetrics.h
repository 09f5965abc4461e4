/* The metrics every Kubernetes component exports besides its own, read at scrape time through
 * the registry's collector (kube_metrics_set_collector):
 *
 *   process_cpu_seconds_total, process_open_fds, process_max_fds, process_virtual_memory_bytes,
 *   process_virtual_memory_max_bytes, process_resident_memory_bytes, process_start_time_seconds
 *       (client_golang's process collector, from /proc/self)
 *   kubernetes_build_info{build_date,compiler,git_commit,git_tree_state,git_version,go_version,
 *       major,minor,platform} 1 (k8s.io/component-base/metrics/prometheus/version)
 *   rest_client_requests_total{code,host,method} (k8s.io/component-base/metrics/prometheus/restclient:
 *       every HTTP attempt of the given clients, by status code, "<error>" for a transport error)
 *   rest_client_request_duration_seconds{host,verb} (each attempt's latency, upstream's buckets;
 *       an observer set on the first client only, kube_client_set_observer: the others may
 *       outlive this, as the scheduler's abandoned event senders do)
 *   rest_client_request_size_bytes{host,verb}, rest_client_response_size_bytes{host,verb} (bodies,
 *       64 B .. 16 MiB), rest_client_rate_limiter_duration_seconds{host,verb} (the client-side
 *       limiter's wait), rest_client_request_retries_total{code,host,verb} (attempts followed by
 *       a retry, by the code that caused it): each attempt of clients[0], as the latency
 *
 * Thread-safe: the collector may run on any thread (renders are serialized by its mutex). */
#ifndef KUBE_PROCMETRICS_H
#define KUBE_PROCMETRICS_H

struct kube_metrics_registry;
struct kube_client;
struct kube_std_metrics;

/* Registers the metrics, installs the collector on reg and the latency observer on clients[0]
 * (before it is shared between threads). clients: NULL-terminated, borrowed (they must outlive
 * the registry's renders; free this before them); host: the API server's host:port for the label.
 * NULL on allocation failure. */
struct kube_std_metrics *kube_std_metrics_new(struct kube_metrics_registry *reg, struct kube_client *const *clients,
					      const char *host);
void kube_std_metrics_free(struct kube_std_metrics *m); /* NULL ok */
/* What the collector does (tests call it directly). */
void kube_std_metrics_collect(void *m);

#endif
