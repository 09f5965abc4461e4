/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decode, default, validate.
 * A library: the scheduler and the operator link it, so a profile is validated by exactly the code
 * that will run it. Facts: shared/spec/config.md. The result is immutable once loaded; the
 * framework builder (framework.c) turns each profile into running plugin instances. */
#ifndef SK_CONFIG_H
#define SK_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "scheduler/framework.h"

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
	int32_t weight;                   /* score only; >= 1 after expansion */
};
struct sk_plugin_list {
	int n;
	struct sk_plugin_ref *items;
};

struct sk_plugin_args {               /* one per enabled plugin that has args */
	const struct sk_plugin_desc *desc;
	void *args;                       /* decoded by desc->args_decode, freed by desc->args_free */
};

struct sk_extender_config;            /* extenders (later issue): kept as JSON until then */

struct sk_profile_config {
	char *scheduler_name;
	int32_t percentage_of_nodes_to_score; /* -1 = unset (use global) */
	/* after merging with the default set and multiPoint expansion (config.md §5.3, §5.4): */
	struct sk_plugin_list points[SK_EP_COUNT];
	int nargs;
	struct sk_plugin_args *args;
	cJSON *extenders;                 /* schedkit extension: per-profile extenders, or NULL */
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
	struct sk_leader_election_config leader_election;
	double client_qps; int32_t client_burst; char *client_content_type;
	int nprofiles;
	struct sk_profile_config *profiles;
	cJSON *extenders;                 /* top-level extenders as given (validated), or NULL */
	char sha256[65];                  /* hex sha256 of the input bytes */
};

/* Parses YAML or JSON text, applies upstream defaults, validates. On failure returns NULL and
 * fills errs with every error, each naming its field ("profiles[0].plugins.score.enabled[1].name:
 * unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?"). */
struct sk_config *sk_config_load(const char *text, size_t len, struct sk_errors *errs);
struct sk_config *sk_config_load_file(const char *path, struct sk_errors *errs);
void sk_config_free(struct sk_config *cfg);
/* The fully defaulted config as JSON, upstream shape (for /configz and the operator). Caller frees. */
cJSON *sk_config_to_json(const struct sk_config *cfg);
/* numFeasibleNodesToFind (config.md §4). percentage: profile value, or -1 for the global one. */
int32_t sk_num_feasible_nodes_to_find(const struct sk_config *cfg, const struct sk_profile_config *p, int32_t num_nodes);

#endif
