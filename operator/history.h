/* Which version of each profile a configuration the operator rendered holds: the ConfigMap's
 * annotation OP_PROFILE_HASHES_ANNOTATION maps the sha256 of each recent config.yaml to
 * {schedulerName: profile hash}, newest first, so a profile's Applied condition is judged by its
 * own rendered hash against the configuration the scheduler's leader runs (which may be an older
 * one): changing one profile leaves the others Applied. Kept on the ConfigMap, it survives operator
 * restarts. Pure. */
#ifndef OP_HISTORY_H
#define OP_HISTORY_H

#include <cjson/cJSON.h>

#include "operator/plan.h"

#define OP_PROFILE_HASHES_ANNOTATION "schedkit.io/profile-hashes"
#define OP_HISTORY_MAX 8 /* configurations remembered (the scheduler normally lags by one) */
#define OP_HISTORY_MAX_BYTES 65536 /* and older ones dropped beyond this size (annotations are
				      limited to 256 KiB in all) */

/* The history after rendering plan: {"<plan's config hash>": {"<schedulerName>": "<rendered
 * hash>", ...}} first, then the configurations of old (the live annotation's value; NULL or
 * unparsable = none) other than that one, in their order, at most OP_HISTORY_MAX in all and no
 * older one past OP_HISTORY_MAX_BYTES of JSON (the plan's own is always kept). A plan
 * with no configuration returns old's configurations unchanged. Caller frees (cJSON_Delete); NULL
 * on OOM. Deterministic: the same old and plan give the same history, and a history whose first
 * entry is the plan's comes back equal, so an unchanged situation writes nothing. */
cJSON *op_history_update(const char *old, const struct op_plan *plan);

/* The hash of the profile named scheduler_name in the configuration config_hash according to
 * history: 1 and *out (borrowed) when known, 0 when that configuration is known and does not hold
 * the name, -1 when history does not know the configuration. */
int op_history_lookup(const cJSON *history, const char *config_hash, const char *scheduler_name, const char **out);

#endif
