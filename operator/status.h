/* SchedulerProfile status from a plan and the scheduler leader's Lease: observedGeneration,
 * schedulerName, renderedHash (the profile's own hash), appliedHash (its hash in the configuration
 * the leader runs) and the Accepted/Applied/Ready conditions. Applied is judged per profile:
 * the leader's configuration hash is looked up in the plan's history (history.h), so a change of
 * one profile leaves the status of every other one as it was.
 * Pure; lastTransitionTime moves only when a condition's status changes, so an unchanged
 * situation gives an identical status (and the operator writes nothing). */
#ifndef OP_STATUS_H
#define OP_STATUS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "operator/plan.h"

/* Ready condition: True/Ready when the current spec is accepted and run (Applied/Applied); else
 * False with the reason and message of the Accepted condition (not accepted) or of Applied. */
#define OP_READY_READY "Ready"

/* Applied condition reasons. */
#define OP_APPLIED_APPLIED "Applied"                /* the scheduler runs this spec */
#define OP_APPLIED_LAST_ACCEPTED "LastAcceptedVersion" /* it runs the last accepted version */
#define OP_APPLIED_PENDING "Pending"                /* in the config; the scheduler has not loaded it yet */
#define OP_APPLIED_NOT_IN_CONFIG "NotInConfig"      /* left out of the configuration */
#define OP_APPLIED_CONFIG_REJECTED "ConfigRejected" /* the scheduler refused to load the configuration
						       rendered now (its message on the Lease) */

/* What the scheduler's leader writes on its Lease after a reload it refused (kept running the
 * previous configuration): the sha256 of the rejected config file and the loader's message
 * (at most 1024 bytes). Both are removed after a successful reload. */
#define OP_REJECTED_HASH_ANNOTATION "schedkit.io/rejected-config-hash"
#define OP_REJECTED_ERROR_ANNOTATION "schedkit.io/rejected-config-error"

/* The config hash the scheduler's leader reports on its Lease (annotation
 * schedkit.io/config-hash), or NULL when the Lease is absent, unheld (holderIdentity empty)
 * or carries no hash. Borrowed from lease. */
const char *op_lease_applied_hash(const cJSON *lease);

/* The scheduler's message for rejecting the configuration whose sha256 is config_hash (the
 * OP_REJECTED_* annotations of lease), or NULL when it did not reject that one. The annotations
 * are read whether or not the Lease is held: a leader that stepped down still rejected it.
 * Borrowed from lease. */
const char *op_lease_rejected_error(const cJSON *lease, const char *config_hash);

/* The status profile_obj should have. applied_hash: op_lease_applied_hash (NULL = none);
 * rejected_error: op_lease_rejected_error for the plan's hash (NULL = not rejected): every profile
 * in the configuration whose rendered version the leader does not run turns Applied=False,
 * reason ConfigRejected, with that message; when applied_hash is the plan's own hash (the plugin
 * files changed under it), every profile in it does. lease_ref "ns/name" for messages; now:
 * RFC 3339 for new transitions. Caller frees; NULL on OOM. */
cJSON *op_status_desired(const cJSON *profile_obj, const struct op_profile_result *r, const struct op_plan *plan,
			 const char *applied_hash, const char *rejected_error, const char *lease_ref, const char *now);

/* True when two status objects are equal (NULL equals an empty object). */
bool op_status_equal(const cJSON *a, const cJSON *b);

#endif
