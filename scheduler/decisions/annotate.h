/* Result annotations (docs/explain.md): for profiles with decisionRecords.annotations, the
 * outcome of each attempt written on the pod, like the kube-scheduler-simulator's result
 * annotations, for tools that read objects rather than endpoints. */
#ifndef SK_DECISIONS_ANNOTATE_H
#define SK_DECISIONS_ANNOTATE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/rest.h"
#include "scheduler/decisions/store.h"

#define SK_ANN_RESULT "schedkit.io/decision-result"       /* Scheduled, Unschedulable, Error */
#define SK_ANN_NODE "schedkit.io/decision-node"           /* the chosen node (removed when none) */
#define SK_ANN_TIME "schedkit.io/decision-time"           /* RFC 3339, when recorded */
#define SK_ANN_MESSAGE "schedkit.io/decision-message"     /* the FailedScheduling text (removed when none) */
#define SK_ANN_FILTER "schedkit.io/decision-filter"       /* JSON {"node": {"Plugin": "reasons"}} */
#define SK_ANN_SCORE "schedkit.io/decision-score"         /* JSON {"node": {"Plugin": score, "total": n}} */
#define SK_ANN_TRUNCATED "schedkit.io/decision-truncated" /* "filter", "score" or "filter,score" when cut */

/* Size limits: each JSON value at most 16 KiB (whole node entries are left out past it: filter in
 * scan order, score with the chosen node first then by total), the message 1 KiB (as an event's
 * note: the first 1020 bytes and " ..."); the seven values stay under 34 KiB, far below the API's
 * 256 KiB for all of a pod's annotations. */
#define SK_ANNOTATION_VALUE_MAX 16384
#define SK_ANNOTATION_MESSAGE_MAX 1024
#define SK_ANNOTATOR_QUEUE_MAX 1024

/* The annotations of r as a merge-patch object (null values delete keys that no longer apply).
 * Caller frees; NULL on OOM. */
cJSON *sk_decision_annotations(const struct sk_decision *r);

/* A worker writing the annotations with one merge patch per record, in order, off the
 * scheduling threads; at most SK_ANNOTATOR_QUEUE_MAX waiting (more are dropped and counted). */
struct sk_annotator;
struct sk_annotator *sk_annotator_new(struct kube_client *client); /* client must outlive it */
void sk_annotator_add(struct sk_annotator *a, struct sk_decision *r); /* takes its own reference */
void sk_annotator_counts(struct sk_annotator *a, uint64_t *written, uint64_t *dropped, uint64_t *failed);
void sk_annotator_free(struct sk_annotator *a); /* drops what is pending; NULL ok */

#endif
