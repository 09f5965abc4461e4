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

#include "schedkit/plugin.h"

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
	int32_t weight;                   /* score only: 0 or unset becomes 1 (upstream getScoreWeights; negative
					     weights are accepted as upstream does) */
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

struct sk_extender_config;            /* extenders (later issue): kept as JSON until then */

struct sk_profile_config {
	char *scheduler_name;
	int32_t percentage_of_nodes_to_score; /* -1 = unset (use global) */
	/* after merging with the default set and multiPoint expansion (mergePlugins in pkg/scheduler/apis/config/v1/default_plugins.go, expandMultiPointPlugins in pkg/scheduler/framework/runtime/framework.go): */
	struct sk_plugin_list points[SK_EP_COUNT];
	int nargs;
	struct sk_plugin_args *args;      /* borrowed from plugin_config (not owned) */
	cJSON *extenders;                 /* schedkit extension: per-profile extenders, or NULL */

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
};

/* The upstream field name for the multiPoint PluginSet (index SK_EP_COUNT of merged[]). */
#define SK_EP_MULTI_POINT SK_EP_COUNT
/* The registered descriptor-like stub of an upstream plugin that is not built yet (name, args
 * decoder, no callbacks), or NULL. Used to accept and validate configs that name it. */
const struct sk_plugin_desc *sk_unavailable_plugin_desc(const char *name);
/* Plugin names removed from the v1 API (AzureDiskLimits, CinderLimits, EBSLimits, GCEPDLimits);
 * NULL-terminated. Configs naming them are rejected as upstream does. */
extern const char *const sk_removed_v1_plugins[];
/* `--validate`: loads the file like sk_config_load_file, prints every error to out (one per line,
 * "error: <message>") and returns the exit code: 0 valid, 1 invalid or unreadable. When valid and
 * some upstream defaults are unavailable, says which on out (one "warning: ..." line per profile). */
int sk_config_validate_file(const char *path, FILE *out);

/* Parses YAML or JSON text, applies upstream defaults, validates. On failure returns NULL and
 * fills errs with every error, each naming its field ("profiles[0].plugins.score.enabled[1]:
 * unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?"). The result is owned by
 * the caller (sk_config_free). Logs a warning when a profile names a not-built upstream plugin at a
 * specific extension point; sk_config_log_unavailable reports the skipped defaults. */
struct sk_config *sk_config_load(const char *text, size_t len, struct sk_errors *errs);
struct sk_config *sk_config_load_file(const char *path, struct sk_errors *errs);
void sk_config_free(struct sk_config *cfg);
/* The fully defaulted config as JSON, upstream shape (for /configz and the operator). Caller frees. */
cJSON *sk_config_to_json(const struct sk_config *cfg);
/* Which upstream default plugins each profile runs without (not built yet), for /configz beside
 * sk_config_to_json (which stays in the strict upstream shape): {"<schedulerName>": ["VolumeRestrictions",
 * ...], ...}; profiles missing none are left out. Caller frees. */
cJSON *sk_config_unavailable_json(const struct sk_config *cfg);
/* Start-up log: one warning per profile naming the upstream plugins it runs without. */
void sk_config_log_unavailable(const struct sk_config *cfg);
/* numFeasibleNodesToFind (pkg/scheduler/schedule_one.go (numFeasibleNodesToFind)): p's percentage when set (>= 0), else the global one; p may be
 * NULL. The "no score plugins and no extenders -> 1" rule is the caller's (schedule_one). */
int32_t sk_num_feasible_nodes_to_find(const struct sk_config *cfg, const struct sk_profile_config *p, int32_t num_nodes);

/* ---------- helpers for args decoders (config.c and every plugin's args_decode) ----------
 * Messages follow upstream field.Error: "<path>: Invalid value: <value>: <detail>", "<path>:
 * Required value: <detail>", "<path>: Unsupported value: \"x\": supported values: \"a\", \"b\"",
 * "<path>: Duplicate value: \"x\"", "<path>: Forbidden: <detail>". Strict decoding rejects unknown
 * keys with `unknown field "<path>.<key>"` (the full path, as sigs.k8s.io/json reports it). */
void sk_err_invalid_int(struct sk_errors *e, const char *path, int64_t v, const char *detail);
void sk_err_invalid_str(struct sk_errors *e, const char *path, const char *v, const char *detail);
void sk_err_invalid_raw(struct sk_errors *e, const char *path, const char *printed, const char *detail);
void sk_err_required(struct sk_errors *e, const char *path, const char *detail);
void sk_err_forbidden(struct sk_errors *e, const char *path, const char *detail);
void sk_err_duplicate(struct sk_errors *e, const char *path, const char *v);
void sk_err_unsupported(struct sk_errors *e, const char *path, const char *v, const char *const *supported);
/* "<base>.<child>" (or child alone when base is ""), "<base>[i]": malloc'd, NULL on OOM. */
char *sk_path_child(const char *base, const char *child);
char *sk_path_index(const char *base, int i);
/* NULL or an object whose keys are all in allowed (NULL-terminated; "apiVersion" and "kind" are
 * always allowed when allow_type_meta). Reports every offending key. Returns 0 or -1. */
int sk_json_check_object(const cJSON *obj, const char *path, const char *const *allowed, bool allow_type_meta,
			 struct sk_errors *e);
/* Typed field readers. Absent or JSON null: *present = false (may be NULL), *out untouched, 0.
 * Wrong type or out of [min, max]: error naming path.field, -1. */
int sk_json_int(const cJSON *obj, const char *field, const char *path, int64_t min, int64_t max, int64_t *out,
		bool *present, struct sk_errors *e);
int sk_json_bool(const cJSON *obj, const char *field, const char *path, bool *out, bool *present,
		 struct sk_errors *e);
/* *out is malloc'd (caller frees; replaced only when present). */
int sk_json_string(const cJSON *obj, const char *field, const char *path, char **out, bool *present,
		   struct sk_errors *e);
/* metav1validation.ValidateLabelName: one "Invalid value" error per problem. Returns 0 or -1. */
int sk_validate_label_name(struct sk_errors *e, const char *path, const char *v);
/* Checks apiVersion/kind of plugin args when given: kind must equal kind_expected and apiVersion
 * kubescheduler.config.k8s.io/v1. Returns 0 or -1. */
int sk_args_check_type_meta(const cJSON *args, const char *kind_expected, const char *path, struct sk_errors *e);
/* A new args object {"kind": kind, "apiVersion": "kubescheduler.config.k8s.io/v1"}; NULL on OOM. */
cJSON *sk_args_json_new(const char *kind);

/* resources [{name, weight}] shared by NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs */
struct sk_resource_spec {
	char *name;
	int64_t weight;
};
/* Decodes a resources array at path (strict); *out malloc'd array of *n entries (names malloc'd). */
int sk_resource_specs_decode(const cJSON *arr, const char *path, struct sk_resource_spec **out, int *n,
			     struct sk_errors *e);
void sk_resource_specs_free(struct sk_resource_spec *specs, int n);
cJSON *sk_resource_specs_encode(const struct sk_resource_spec *specs, int n);

#endif
