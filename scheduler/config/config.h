/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decode, default, validate.
 * A library: the scheduler and the operator link it, so a profile is validated by exactly the code
 * that will run it. Facts: pkg/scheduler/apis/config/ (types, defaults, validation); docs/config.md. The result is immutable once loaded; the
 * framework builder (framework.c) turns each profile into running plugin instances. */
#ifndef SK_CONFIG_H
#define SK_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"
#include "scheduler/framework/registry.h"

enum sk_ext_point {
	SK_EP_PRE_ENQUEUE = 0,
	SK_EP_QUEUE_SORT,
	SK_EP_PRE_FILTER,
	SK_EP_FILTER,
	SK_EP_POST_FILTER,
	SK_EP_PRE_SCORE,
	SK_EP_SCORE,
	SK_EP_RESERVE,
	SK_EP_PERMIT,
	SK_EP_PRE_BIND,
	SK_EP_BIND,
	SK_EP_POST_BIND,
	SK_EP_COUNT
};
/* "preEnqueue", "queueSort", ... (the config field names) */
const char *sk_ext_point_field(enum sk_ext_point ep);
/* Does desc implement ep? (queueSort: less; reserve: reserve or unreserve; ...) */
bool sk_desc_implements(const struct sk_plugin_desc *desc, enum sk_ext_point ep);

struct sk_plugin_ref {
	const struct sk_plugin_desc *desc;
	int32_t weight;                   /* score only: 0 or unset becomes 1 (upstream getScoreWeights; a negative
					     weight is kept and run as given, see sk_score_weight_overflows) */
};
struct sk_plugin_list {
	int n;
	struct sk_plugin_ref *items;
};

struct sk_plugin_args {               /* one per enabled plugin that has args */
	const struct sk_plugin_desc *desc;
	void *args;                       /* decoded by desc->args_decode, freed by desc->args_free */
};

/* One PluginSet after mergePluginSet with the defaults (pkg/scheduler/apis/config/v1/default_plugins.go (mergePlugins)), in the upstream shape. Kept
 * for sk_config_to_json; the framework uses sk_profile_config.points instead. */
struct sk_plugin_set_entry {
	char *name;
	int32_t weight;
	bool has_weight;
	int user_index;                   /* index in the user's enabled list, -1 when it came from the defaults */
};
struct sk_plugin_set_config {
	int nenabled, ndisabled;
	struct sk_plugin_set_entry *enabled;
	char **disabled;
};

/* One pluginConfig entry as given (defaulted), or added with default args for an enabled plugin. */
struct sk_plugin_config_entry {
	char *name;
	const struct sk_plugin_desc *desc; /* NULL: unknown plugin, or one without an args type (raw kept) */
	void *args;                       /* decoded by desc->args_decode (desc->args_kind != NULL) */
	cJSON *raw;                       /* args as given when not decoded, else NULL */
};

/* Decision records of a profile (schedkit extension `decisionRecords`, docs/explain.md). */
struct sk_records_config {
	bool enabled;      /* keep a decision record of every attempt (default false) */
	bool annotations;  /* write the result annotations on the pod (default false) */
	bool given;        /* the field was in the input (printed back by sk_config_to_json) */
};
int sk_records_config_decode(const cJSON *obj, const char *path, struct sk_records_config *out, struct sk_errors *e);
cJSON *sk_records_config_json(const struct sk_records_config *c); /* caller frees; NULL on OOM */

struct sk_profile_config {
	char *scheduler_name;
	int32_t percentage_of_nodes_to_score; /* -1 = unset (use global) */
	/* after merging with the default set and multiPoint expansion (mergePlugins in pkg/scheduler/apis/config/v1/default_plugins.go, expandMultiPointPlugins in pkg/scheduler/framework/runtime/framework.go): */
	struct sk_plugin_list points[SK_EP_COUNT];
	int nargs;
	struct sk_plugin_args *args;      /* borrowed from plugin_config (not owned) */
	cJSON *extenders;                 /* schedkit extension: per-profile extenders, or NULL */
	struct sk_records_config records; /* schedkit extension: decision records */

	/* the merged plugin sets: [ep] per extension point, [SK_EP_COUNT] = multiPoint */
	struct sk_plugin_set_config merged[SK_EP_COUNT + 1];
	int nplugin_config;
	struct sk_plugin_config_entry *plugin_config; /* user entries first, then defaults (by name) */
	/* Upstream plugins enabled by this profile but not built into this binary (skipped with a
	 * warning); static strings from sk_unavailable_default_plugins. */
	int nunavailable;
	const char **unavailable;
};
/* The decoded args of plugin `name` in a profile, or NULL. */
const void *sk_profile_args(const struct sk_profile_config *p, const char *name);

struct sk_leader_election_config {
	bool leader_elect;
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
	char *resource_lock, *resource_namespace, *resource_name;
};

struct sk_config {
	int32_t parallelism;
	int32_t percentage_of_nodes_to_score;     /* 0 = adaptive */
	int64_t pod_initial_backoff_seconds, pod_max_backoff_seconds;
	bool enable_profiling, enable_contention_profiling, delay_cache_until_active;
	bool enable_contention_profiling_set;     /* false: left unset (enableProfiling false) */
	struct sk_leader_election_config leader_election;
	double client_qps; int32_t client_burst; char *client_content_type;
	char *client_kubeconfig, *client_accept_content_types;
	int nprofiles;
	struct sk_profile_config *profiles;
	cJSON *extenders;                 /* top-level extenders as given (validated), or NULL */
	char sha256[65];                  /* hex sha256 of the input bytes */
	/* What the loader noticed but accepted ("profiles[0].pluginConfig[2]: plugin \"X\" is not
	 * registered; ..."): the loader never logs; --validate prints them as "warning:" lines, the
	 * daemon logs them with sk_config_log_warnings when it builds the config's frameworks. */
	struct sk_errors warnings;
	/* Plugins beyond the in-tree ones (sk_config_opts): the module set the config was loaded with
	 * (one reference held, dropped by sk_config_free after every args_free ran), and the
	 * placeholder descriptors of external plugin names. */
	struct sk_module_set *modules;
	int nexternal;
	struct sk_plugin_desc *external;
	/* What a legacy Policy could not carry over (opts.policy_path), one line each; --validate
	 * prints them as warnings, the daemon logs them. */
	struct sk_errors notes;
};

/* How a configuration is loaded beyond its text. A zeroed struct (or NULL) is sk_config_load. */
struct sk_module_set;
struct sk_config_opts {
	/* Plugins loaded from --plugin-dir (scheduler/framework/loader.h): their names are known to
	 * this load and their args are decoded and validated by their own args_decode. The config
	 * takes a reference. NULL: in-tree plugins only. */
	struct sk_module_set *modules;
	/* NULL-terminated names of plugins provided elsewhere (the operator: by SchedulerPlugins the
	 * scheduler loads). Such a name is accepted at every extension point it is enabled at, with
	 * its args kept raw; a framework cannot be built from it. A loaded or in-tree plugin of the
	 * same name wins. */
	const char *const *external_plugins;
	/* --policy-config-file: a legacy Policy translated into the config's one profile
	 * (scheduler/config/legacy.h, sk_policy_merge_file); NULL = none. */
	const char *policy_path;
	/* The Policy's content instead of reading policy_path (the daemon hands what it hashed, or a
	 * ConfigMap's policy.cfg: scheduler/daemon/policy_source.c); policy_where names it in errors.
	 * NULL = none. */
	const char *policy_text;
	size_t policy_len;
	const char *policy_where;
};

/* The upstream field name for the multiPoint PluginSet (index SK_EP_COUNT of merged[]). */
#define SK_EP_MULTI_POINT SK_EP_COUNT
/* The registered descriptor-like stub of an upstream plugin that is not built yet (name, args
 * decoder, no callbacks), or NULL. Used to accept and validate configs that name it. */
const struct sk_plugin_desc *sk_unavailable_plugin_desc(const char *name);
/* Plugin names removed from the v1 API (AzureDiskLimits, CinderLimits, EBSLimits, GCEPDLimits);
 * NULL-terminated. Configs naming them are rejected as upstream does. */
extern const char *const sk_removed_v1_plugins[];
/* `--validate`: loads the file (path NULL: the defaults, e.g. with opts->policy_path) like sk_config_load_file, prints every error to out (one per line,
 * "error: <message>") and returns the exit code: 0 valid, 1 invalid or unreadable. When valid and
 * some upstream defaults are unavailable, says which on out (one "warning: ..." line per profile). */
int sk_config_validate_file(const char *path, FILE *out);

/* Parses YAML or JSON text, applies upstream defaults, validates. On failure returns NULL and
 * fills errs with every error, each naming its field ("profiles[0].plugins.score.enabled[1]:
 * unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?"). The result is owned by
 * the caller (sk_config_free). Logs nothing: what is accepted with a warning is in cfg->warnings
 * (sk_config_log_warnings), the skipped upstream defaults in each profile (sk_config_log_unavailable). */
struct sk_config *sk_config_load(const char *text, size_t len, struct sk_errors *errs);
struct sk_config *sk_config_load_file(const char *path, struct sk_errors *errs);
/* The same with opts (NULL = the plain loaders above). */
struct sk_config *sk_config_load_opts(const char *text, size_t len, const struct sk_config_opts *opts,
				      struct sk_errors *errs);
struct sk_config *sk_config_load_file_opts(const char *path, const struct sk_config_opts *opts, struct sk_errors *errs);
int sk_config_validate_file_opts(const char *path, const struct sk_config_opts *opts, FILE *out);
void sk_config_free(struct sk_config *cfg);
/* The fully defaulted config as JSON, upstream shape (for /configz and the operator). Caller frees. */
cJSON *sk_config_to_json(const struct sk_config *cfg);
/* Which upstream default plugins each profile runs without (not built yet), for /configz beside
 * sk_config_to_json (which stays in the strict upstream shape): {"<schedulerName>": ["VolumeRestrictions",
 * ...], ...}; profiles missing none are left out. Caller frees. */
cJSON *sk_config_unavailable_json(const struct sk_config *cfg);
/* One warning per note of a legacy Policy translation (cfg->notes). */
void sk_config_log_notes(const struct sk_config *cfg);
/* Start-up log: one warning per profile naming the upstream plugins it runs without. */
void sk_config_log_unavailable(const struct sk_config *cfg);
/* One warning log line per entry of cfg->warnings. */
void sk_config_log_warnings(const struct sk_config *cfg);
/* getScoreWeights' overflow check (pkg/scheduler/framework/runtime/framework.go): is
 * weight*MaxNodeScore > MaxTotalScore-total, computed as Go does, with wrapping int64 arithmetic?
 * So a negative weight is accepted only as upstream accepts it: once the running total is negative,
 * MaxTotalScore-total wraps and every later Score plugin "could overflow". sk_score_total_add is
 * the wrapping total += weight*MaxNodeScore. No undefined behaviour for any inputs. */
bool sk_score_weight_overflows(int64_t total, int32_t weight);
int64_t sk_score_total_add(int64_t total, int32_t weight);
/* numFeasibleNodesToFind (pkg/scheduler/schedule_one.go (numFeasibleNodesToFind)): p's percentage when set (>= 0), else the global one; p may be
 * NULL. The "no score plugins and no extenders -> 1" rule is the caller's (schedule_one). */
int32_t sk_num_feasible_nodes_to_find(const struct sk_config *cfg, const struct sk_profile_config *p, int32_t num_nodes);

/* config_ext.c: the schedkit extensions a loaded file uses, one "note:" line each on out (for
 * --validate: kube-scheduler cannot load such a file), e.g. profiles[1].extenders
 * (docs/extenders.md). */
void sk_config_note_extensions(const struct sk_config *cfg, FILE *out);
/* Replaces, in a configuration's JSON form (sk_config_to_json), every extender's
 * tlsConfig.keyData and certData (top-level and per-profile) with "--- REDACTED ---" (as client-go
 * prints a rest.Config), for /configz and logs. */
void sk_config_redact_secrets(cJSON *cc);

#endif
