/* SchedulerProfile (schedkit.io/v1alpha1) -> KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).
 * Pure functions, no I/O: one profile entry per SchedulerProfile spec (provider merged into its
 * pluginConfig), and the whole configuration as deterministic YAML (profiles sorted by
 * schedulerName, keys in a fixed order, so equal input gives byte-identical output). */
#ifndef OP_RENDER_H
#define OP_RENDER_H

#include <cjson/cJSON.h>

#define OP_API_GROUP "schedkit.io"
#define OP_API_VERSION "v1alpha1"
#define OP_KIND "SchedulerProfile"
#define OP_RESOURCE "schedulerprofiles"

/* Where the scheduler's leader keeps its Lease (leaderElection.resourceNamespace/resourceName),
 * and, for validation only (plan.h; rendering ignores it), the plugin names accepted
 * SchedulerPlugins provide. */
struct sk_module_set;

struct op_render_opts {
	const char *lease_namespace; /* NULL: "schedkit-system" */
	const char *lease_name;      /* NULL: "schedkit-scheduler" */
	const char *const *external_plugins; /* NULL-terminated; NULL = none. The loader takes them
						at any extension point with raw args (the scheduler
						validates the args when it loads the plugin) */
	struct sk_module_set *modules;        /* the operator's --plugin-dir modules (the scheduler
						 image's): known to the loader, args validated by
						 the plugins themselves; NULL = none */
};

/* The schedulerName a SchedulerProfile asks for: spec.schedulerName when it is a non-empty
 * string, else metadata_name. Borrowed from the arguments. */
const char *op_profile_scheduler_name(const cJSON *spec, const char *metadata_name);

/* One KubeSchedulerProfile for spec (a SchedulerProfile's .spec; NULL = empty spec), named
 * op_profile_scheduler_name(spec, metadata_name). Fields, in this order: schedulerName,
 * percentageOfNodesToScore, plugins, pluginConfig, extenders (copied as given: the scheduler's
 * loader validates them). provider ClusterAutoscaler adds NodeResourcesFit args with
 * scoringStrategy.type MostAllocated: a user pluginConfig entry for NodeResourcesFit is kept in
 * place and merged over that base (every field the user set wins, so an explicit
 * scoringStrategy.type overrides the provider as a user plugin set overrode upstream's provider);
 * without one, the entry is appended. Returns 0 and *out (caller frees), or -1 and *err (caller
 * frees) for what the loader cannot see: an unsupported provider, a spec field of the wrong JSON
 * type, a legacyPolicy that does not translate. spec.legacyPolicy and spec.provider
 * DefaultProvider/ClusterAutoscalerProvider are rendered by op_render_legacy (operator/legacy.h). Messages name the field ("spec.provider: Unsupported
 * value: ..."). */
int op_render_profile(const cJSON *spec, const char *metadata_name, cJSON **out, char **err);

/* The whole configuration as YAML: apiVersion, kind, leaderElection (leaderElect true, leases,
 * resourceNamespace/resourceName from opts), profiles (deep copies of profiles[0..n), sorted by
 * schedulerName, ties by input order). n may be 0 (an empty profiles list). Returns malloc'd text
 * (caller frees), NULL on OOM. */
char *op_render_config(const cJSON *const *profiles, int n, const struct op_render_opts *opts);

/* Deep merge: a copy of base with every key of over applied on top (objects merged key by key,
 * anything else replaced). Either may be NULL. Caller frees; NULL on OOM. */
cJSON *op_json_merge(const cJSON *base, const cJSON *over);

/* Lower-case hex sha256 of data into out (65 bytes). */
void op_sha256_hex(const void *data, size_t len, char out[65]);

#endif
