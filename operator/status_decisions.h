/* SchedulerProfile status.decisions (docs/explain.md, "Profile summary"): the scheduler leader's
 * per-profile counts over its recent window and the top Unschedulable reasons, copied from its
 * Lease annotation schedkit.io/decision-summary, so `kubectl describe sp` says why pods wait. */
#ifndef OP_STATUS_DECISIONS_H
#define OP_STATUS_DECISIONS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#define OP_DECISION_SUMMARY_ANNOTATION "schedkit.io/decision-summary"

/* Adds status.decisions for scheduler_name to st from the Lease's summary (nothing when the
 * Lease, the annotation or the profile's entry is absent, or the annotation is not JSON).
 * 0, or -1 on OOM. */
int op_status_add_decisions(cJSON *st, const cJSON *lease, const char *scheduler_name);
/* Did the summary annotation change between two versions of the Lease? */
bool op_lease_decisions_changed(const cJSON *old_lease, const cJSON *new_lease);

#endif
