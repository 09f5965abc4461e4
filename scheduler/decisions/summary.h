/* Per-profile outcome counts over a recent window (docs/explain.md, "Profile summary"): how
 * many attempts were Scheduled, Unschedulable or Error in the last window_s seconds, and the
 * reasons most Unschedulable attempts gave (each reason counted once per attempt). The daemon
 * serves it at /debug/schedkit/v1/summary and publishes it on its Lease
 * (schedkit.io/decision-summary), from which the operator fills SchedulerProfile
 * status.decisions. Thread-safe (one mutex). */
#ifndef SK_DECISIONS_SUMMARY_H
#define SK_DECISIONS_SUMMARY_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "scheduler/schedule_one.h"

#define SK_SUMMARY_WINDOW_S 600
#define SK_SUMMARY_BUCKET_S 60
#define SK_SUMMARY_TOP 5
#define SK_SUMMARY_ANNOTATION "schedkit.io/decision-summary"

struct sk_summary;
/* NULL when bucket_s <= 0 or window_s < bucket_s (or out of memory). */
struct sk_summary *sk_summary_new(int window_s, int bucket_s);
void sk_summary_free(struct sk_summary *s);
/* One attempt of profile at now_s (seconds, any clock that only moves forward); reasons are the
 * rejected nodes' reasons (counted for Unschedulable attempts only). */
void sk_summary_add(struct sk_summary *s, const char *profile, enum sk_result result, const char *const *reasons,
		    int nreasons, int64_t now_s);
/* The same from an outcome (its filter details, when it has them). */
void sk_summary_add_outcome(struct sk_summary *s, const struct sk_outcome *o, int64_t now_s);
/* {"<profile>": {"windowSeconds", "scheduled", "unschedulable", "errors", "topReasons": [{reason,
 * count}] (at most top, by count then name)}}; caller frees. */
cJSON *sk_summary_json(struct sk_summary *s, int64_t now_s, int top);

#endif
