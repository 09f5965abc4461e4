/* The operator's decision for a set of SchedulerProfiles: which are accepted (validated with the
 * scheduler's own loader, sk_config_load, each rendered alone and then all together), which lose a
 * schedulerName conflict (the older profile by creationTimestamp, then name, keeps the name),
 * which keep running their last accepted version, and the resulting configuration text and hash.
 * Pure: reads the objects, does no I/O. */
#ifndef OP_PLAN_H
#define OP_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "operator/render.h"

/* Annotation on a SchedulerProfile holding its last accepted spec:
 * {"generation":N,"spec":{...}} (compact JSON). It survives operator restarts. */
#define OP_LAST_ACCEPTED_ANNOTATION "schedkit.io/last-accepted"

/* Accepted condition reasons. */
#define OP_REASON_ACCEPTED "Accepted"
#define OP_REASON_INVALID "Invalid"
#define OP_REASON_CONFLICT "Conflict"

/* The schedulerName kube-scheduler runs under; a SchedulerProfile may not take it. */
#define OP_RESERVED_SCHEDULER_NAME "default-scheduler"

enum op_source {
	OP_SOURCE_NONE = 0,      /* not in the configuration */
	OP_SOURCE_CURRENT,       /* the current spec is in the configuration */
	OP_SOURCE_LAST_ACCEPTED, /* the current spec is not; its last accepted version is */
};

struct op_profile_result {
	char *name;                    /* metadata.name */
	int64_t generation;            /* metadata.generation (0 when absent) */
	char *scheduler_name;          /* the name the current spec asks for */
	bool accepted;                 /* the current spec is in the configuration */
	const char *reason;            /* OP_REASON_* (static) */
	char *message;                 /* Accepted message; for Invalid the loader's exact message */
	enum op_source source;
	char *rendered_scheduler_name; /* schedulerName of the configuration's entry; NULL when none */
	int64_t rendered_generation;   /* generation of what the configuration holds; -1 when none */
	char *last_accepted;           /* new OP_LAST_ACCEPTED_ANNOTATION value to write; NULL = unchanged */
	cJSON *translation;            /* legacyPolicy / upstream provider of the accepted spec: the
					  plugin sets and notes (op_render_legacy); NULL otherwise */
	char rendered_hash[65];        /* this profile's own hash: sha256 hex of the configuration
					  holding only its entry (so the shared parts count too);
					  "" when not in the configuration */
};

struct op_plugin_set;

struct op_plan {
	int n;
	struct op_profile_result *profiles; /* sorted by metadata.name */
	int nrendered;                      /* profiles in the configuration */
	char *config_yaml;                  /* the configuration; NULL when no profile is in it */
	char config_hash[65];               /* sha256 hex of config_yaml ("" when NULL); equals the
					       scheduler's sk_config.sha256 of the same bytes */
	const struct op_plugin_set *plugins; /* the accepted SchedulerPlugins the Deployment copies
						into --plugin-dir; borrowed, set by the caller after
						op_plan_build; NULL = none */
	cJSON *history;                     /* the ConfigMap's profile-hash history after this plan
					       (history.h); set and owned by the caller's
					       op_history_update, freed by op_plan_free; NULL = none */
};

/* Who wins a name clash (a schedulerName between SchedulerProfiles, a plugin name between
 * SchedulerPlugins): the oldest object, by creationTimestamp (unparsable = 0), then by name. */
struct op_age {
	const char *name;   /* metadata.name, borrowed */
	time_t created;
};
/* False for an object being deleted or without a name (it takes part in no clash). */
bool op_object_age(const cJSON *obj, struct op_age *out);
int op_age_cmp(const struct op_age *a, const struct op_age *b); /* oldest first */

/* Builds the plan for profiles (a JSON array of SchedulerProfile objects; objects being deleted
 * are left out). The configuration holds only profiles that load together (checked with
 * sk_config_load). Returns 0 and fills *out (free with op_plan_free), or -1 and *err (caller
 * frees) on OOM. */
int op_plan_build(const cJSON *profiles, const struct op_render_opts *opts, struct op_plan *out, char **err);
void op_plan_free(struct op_plan *plan);
/* The result for metadata.name, or NULL. Borrowed. */
const struct op_profile_result *op_plan_find(const struct op_plan *plan, const char *name);

/* Validates one rendered profile entry the way the scheduler would load it alone: renders a
 * configuration holding only it and runs sk_config_load. Returns 0 when valid (and, when
 * unavailable is non-NULL, *unavailable = "A, B" naming upstream plugins it would run without,
 * or NULL; caller frees), or -1 with *msg = the loader's messages joined by "; " with their field
 * paths in the SchedulerProfile's terms (op_spec_paths: "spec.plugins..." for the loader's
 * "profiles[0].plugins..."; caller frees). */
int op_validate_profile(const cJSON *profile, const struct op_render_opts *opts, char **msg, char **unavailable);

/* msg with every "profiles[0]" (the loader's path of a profile rendered alone) written "spec": the
 * rendered entry's fields are the spec's (schedulerName, percentageOfNodesToScore, plugins,
 * pluginConfig, extenders, same indices: the provider's NodeResourcesFit entry is merged into
 * the user's or appended after them). Caller frees; NULL on OOM. */
char *op_spec_paths(const char *msg);
/* The same for the entry the loader numbered index (a profile loaded with others: the rules
 * that span profiles, such as one queueSort for all). */
char *op_spec_paths_at(const char *msg, int index);

#endif
