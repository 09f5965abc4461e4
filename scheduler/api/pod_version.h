/* What preemption asks of a pod version beyond the decoded view (struct sk_pod is the plugin
 * ABI's and cannot grow): status.startTime (upstream pkg/scheduler/util GetPodStartTime) and
 * podTerminatingByPreemption (pkg/scheduler/framework/preemption). sk_pod_decode reads them from
 * the object it decodes when that object is the pod informer's (its text shared with the view:
 * sk_obj_raw_offer, scheduler/api/raw.h), so the dry run reads a field of the pod it holds instead
 * of a memo or the store (docs/benchmarks.md, "The daemon's cost per preemptor"). Private to the
 * core. */
#ifndef SK_API_POD_VERSION_H
#define SK_API_POD_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "schedkit/types.h"

/* The facts of p's own version: true and *start_ns (-1: none or unparsable) and *terminating when
 * p was decoded from the informer's object (or is a copy of such a view: sk_pod_with_node); false
 * for any other view (built from another object, a binding's echo), which must ask elsewhere. p is
 * a view this core made (sk_pod_decode and its copies), as for sk_pod_raw. */
bool sk_pod_version_facts(const struct sk_pod *p, int64_t *start_ns, bool *terminating);

/* The same facts of a pod object: status.startTime in Unix ns (-1 when absent or bad), and whether
 * it has a deletionTimestamp and a DisruptionTarget condition True with reason
 * PreemptionByScheduler. */
int64_t sk_pod_object_start_time(const cJSON *pod);
bool sk_pod_object_terminating_by_preemption(const cJSON *pod);

#endif
