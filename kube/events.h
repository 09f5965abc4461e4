/* events.k8s.io/v1 recorder: asynchronous (bounded queue + one sender thread, callers never wait
 * on HTTP), de-duplicating repeats into an Event series as client-go's events broadcaster (v1.34)
 * does. Repeats are keyed by (type, action, reason, reportingController, reportingInstance,
 * regarding, related) — not by note: a repeat with another note joins the first one's series.
 * The first occurrence is created (POST), the second PATCHes series {count: 2, lastObservedTime}
 * (strategic merge), later ones bump the cached series, which is PATCHed on the refresh interval
 * and on flush; a series whose Event expired on the server (404) is created again. Creates are
 * retried (3 tries) on transport errors and 5xx; rejected events are dropped and counted as failed.
 * Cache entries unobserved for 6 minutes are forgotten.
 *
 * Locking: rec->mu guards the queue, the options, the flush counters and the stats; the series
 * cache belongs to the sender thread alone. No lock is held across an HTTP call. */
#ifndef KUBE_EVENTS_H
#define KUBE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/rest.h"

struct kube_event_recorder;

/* reporting_controller e.g. "default-scheduler"; reporting_instance e.g. "default-scheduler-host1".
 * Returns 0 and *out, or -1 (OOM / thread creation failure). Free with kube_event_recorder_free. */
int kube_event_recorder_new(struct kube_client *, const char *reporting_controller,
                            const char *reporting_instance, struct kube_event_recorder **out);

/* Options (call before the first record): queue capacity (default 1000), series refresh interval
 * in seconds (default 1800, as client-go; the PATCH of counts beyond 2). */
void kube_event_recorder_set_queue_size(struct kube_event_recorder *, size_t n);
void kube_event_recorder_set_refresh_interval(struct kube_event_recorder *, double seconds);

/* Queues an event about regarding_obj (its kind/apiVersion/namespace/name/uid/resourceVersion are
 * copied into "regarding"). type "Normal"|"Warning". note is truncated to 1024 bytes. Never blocks
 * on HTTP; when the queue is full the event is dropped and counted. */
void kube_event_record(struct kube_event_recorder *, const cJSON *regarding_obj, const char *type,
                       const char *reason, const char *action, const char *note_fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Same with an optional related object (may be NULL). */
void kube_event_record_related(struct kube_event_recorder *, const cJSON *regarding_obj,
                               const cJSON *related_obj, const char *type, const char *reason,
                               const char *action, const char *note_fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* Waits until everything queued so far has been sent (or failed) and pending series counts are
 * PATCHed. */
void kube_event_recorder_flush(struct kube_event_recorder *);

/* pipelined: creates sent with others in one pipeline (kube_request_pipelined), a burst's. */
struct kube_event_stats { uint64_t recorded, created, patched, dropped, failed, pipelined; };
void kube_event_recorder_stats(struct kube_event_recorder *, struct kube_event_stats *out);

/* Flushes, stops the sender thread and frees. NULL is a no-op. */
void kube_event_recorder_free(struct kube_event_recorder *);

#endif
