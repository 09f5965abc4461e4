/* The scheduler's Prometheus metrics under their upstream names (kube-scheduler's
 * pkg/scheduler/metrics), registered in a kube/metrics.h registry and fed by the daemon:
 *
 *   scheduler_schedule_attempts_total{profile,result}               counter
 *   scheduler_scheduling_attempt_duration_seconds{profile,result}   histogram
 *   scheduler_pod_scheduling_attempts                               histogram (attempts until scheduled)
 *   scheduler_pod_scheduling_sli_duration_seconds{attempts}         histogram (first attempt -> scheduled)
 *   scheduler_pending_pods{queue}                                   gauge (active|backoff|unschedulable|gated)
 *   scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
 *   scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}
 *   scheduler_queue_incoming_pods_total{queue,event}                counter
 *   scheduler_scheduler_cache_size{type}                            gauge (nodes|pods|assumed_pods)
 *   scheduler_scheduling_algorithm_duration_seconds                 histogram (schedulePod, when it found a host)
 *   scheduler_preemption_attempts_total                             counter (PostFilter runs)
 *   scheduler_preemption_victims                                    histogram (victims of a nominated preemptor)
 *   scheduler_unschedulable_pods{plugin,profile}                    gauge (pods waiting after a rejection, per rejector)
 *   leader_election_master_status{name}                             gauge
 *   leader_election_slowpath_total{name}                            counter (renewals through GET + PUT)
 *   scheduler_plugin_evaluation_total{plugin,extension_point,profile} counter (PreFilter/Filter/PreScore/Score calls)
 *   scheduler_permit_wait_duration_seconds{result}                  histogram (WaitOnPermit of a waiting pod)
 *   scheduler_goroutines{operation}                                 gauge (threads at work: binding, Filter, Score)
 *   scheduler_event_handling_duration_seconds{event}                histogram (informer handlers)
 *   scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint} histogram (each hint call)
 *   scheduler_inflight_events{event}                                gauge (the queue's in-flight events and pods)
 *   schedkit_scheduler_binding_conflicts_total                      counter (409 on pods/binding)
 *
 * Thread-safe: every function may be called from any thread; the SLI map (uid -> time of the
 * pod's first attempt, kept only for pods that failed at least once) has its own mutex. */
#ifndef SK_METRICS_SCHED_H
#define SK_METRICS_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/metrics.h"
#include "schedkit/plugin.h"
#include "scheduler/backend/queue.h"
#include "scheduler/schedule_one.h"

struct sk_sched_metrics;

/* Registers every metric in reg (which must outlive the result). NULL on ENOMEM. */
struct sk_sched_metrics *sk_sched_metrics_new(struct kube_metrics_registry *reg);
void sk_sched_metrics_free(struct sk_sched_metrics *m); /* NULL ok */

/* Framework hook (struct sk_framework_env.observe): plugin NULL = extension point duration. */
void sk_sched_metrics_observe_point(struct sk_sched_metrics *m, const char *profile, const char *point,
				    const char *plugin, enum sk_code code, double seconds);
/* One attempt's outcome (struct sk_sched_env.observe). now_ns: monotonic clock of the call. */
void sk_sched_metrics_attempt(struct sk_sched_metrics *m, const struct sk_outcome *o, int64_t now_ns);
/* The pod left the scheduler without being scheduled (deleted, bound elsewhere): forget its SLI start. */
void sk_sched_metrics_forget_pod(struct sk_sched_metrics *m, const char *uid);
void sk_sched_metrics_pending(struct sk_sched_metrics *m, const struct sk_queue_counts *c);
void sk_sched_metrics_cache_size(struct sk_sched_metrics *m, int nodes, int pods, int assumed_pods);
/* queue: "active", "backoff", "unschedulable", "gated"; event e.g. "PodAdd", "ScheduleAttemptFailure". */
void sk_sched_metrics_incoming(struct sk_sched_metrics *m, const char *queue, const char *event);
void sk_sched_metrics_binding_conflict(struct sk_sched_metrics *m);
/* A victim was evicted for the preemptor (its count is observed with the preemptor's outcome). */
void sk_sched_metrics_victim(struct sk_sched_metrics *m, const char *preemptor_uid);
/* scheduler_unschedulable_pods from the queue now (the housekeeper, every second). */
void sk_sched_metrics_unschedulable(struct sk_sched_metrics *m, struct sk_queue *q);
/* sk_queue_options.moved (ctx = the metrics): a pod moved by a cluster event counts in
 * scheduler_queue_incoming_pods_total{queue, event}. */
void sk_sched_metrics_queue_moved(void *ctx, const struct sk_pod *pod, int to, const char *event);
void sk_sched_metrics_leader(struct sk_sched_metrics *m, const char *lease_name, bool leading);
/* kube_leader_config.on_slowpath: leader_election_slowpath_total{name}. */
void sk_sched_metrics_leader_slowpath(struct sk_sched_metrics *m, const char *lease_name);
/* sk_framework_env.evaluated: scheduler_plugin_evaluation_total{plugin, extension_point, profile} += n. */
void sk_sched_metrics_plugin_evaluated(struct sk_sched_metrics *m, const char *profile, const char *point,
				       const char *plugin, double n);
/* sk_framework_env.permit_waited: scheduler_permit_wait_duration_seconds{result} (result is
 * sk_code_string of the outcome: Success, Unschedulable, ...). */
void sk_sched_metrics_permit_waited(struct sk_sched_metrics *m, enum sk_code code, double seconds);
/* sk_framework_env.working / sk_sched_env.working: scheduler_goroutines{operation} += delta. */
void sk_sched_metrics_goroutines(struct sk_sched_metrics *m, const char *operation, int delta);
/* scheduler_event_handling_duration_seconds{event}: one informer handler's run. */
void sk_sched_metrics_event_handled(struct sk_sched_metrics *m, const char *event, double seconds);
/* sk_queue_options.inflight (ctx = the metrics): scheduler_inflight_events{event} += delta. */
void sk_sched_metrics_queue_inflight(void *ctx, const char *event, int delta);
/* sk_queue_options.hint_observed (ctx = the metrics): scheduler_queueing_hint_execution_duration_seconds. */
void sk_sched_metrics_queue_hint(void *ctx, const char *plugin, const char *event, const char *hint, double seconds);
/* "scheduled", "unschedulable", "error" (the upstream result label). */
const char *sk_sched_metrics_result_label(enum sk_result r);
/* The queue label of a queue position ("active", ...), NULL for none/in flight. */
const char *sk_sched_metrics_queue_label(enum sk_queue_where w);

#endif
