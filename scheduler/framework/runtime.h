/* The framework runtime: one struct sk_framework per profile, built from a validated profile
 * (config.h) into plugin instances and flat per-extension-point arrays, plus the functions that
 * run each extension point with upstream semantics (pkg/scheduler/framework/runtime/framework.go) and the CycleState.
 * Plugins never include this header; they see the plugin API (schedkit/plugin.h) only. */
#ifndef SK_RUNTIME_H
#define SK_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/config/config.h"
#include "schedkit/plugin.h"
#include "scheduler/backend/nominator.h"
#include "scheduler/framework/parallel.h"
#include "schedkit/types.h"
#include "scheduler/framework/waiting.h"

/* What the framework needs from the process around it. Copied at sk_framework_new; every
 * pointer must outlive the framework. Callbacks may run on any scheduler thread (scheduling
 * loop, pool workers for `observe`, binder threads) and must be thread-safe. */
struct sk_framework_env {
	void *ctx;
	/* Monotonic clock in ns; NULL = CLOCK_MONOTONIC. Used for queue timestamps and the handle. */
	int64_t (*now_ns)(void *ctx);
	struct sk_pool *pool;                 /* NULL: everything runs serially */
	struct sk_nominator *nominator;       /* NULL: no nominated pods */
	/* The snapshot of the running cycle (sk_handle_snapshot). */
	const struct sk_snapshot *(*snapshot)(void *ctx);
	/* Binds the pod (POST pods/<name>/binding, or record it in simulate). 0, or -1 and *err. */
	int (*bind)(void *ctx, const struct sk_pod *pod, const char *node_name, char **err);
	/* Event recorder: type "Normal"/"Warning", reason, action, note (message). May be NULL. */
	void (*event)(void *ctx, const struct sk_pod *pod, const char *type, const char *reason, const char *action,
		      const char *note);
	/* Metric hook (may be NULL). plugin == NULL: scheduler_framework_extension_point_duration_seconds
	 * {extension_point, status, profile}; else scheduler_plugin_execution_duration_seconds
	 * {plugin, extension_point, status}. Per-plugin samples are taken in 10% of the cycles
	 * (upstream pluginMetricsSamplePercent), see sk_cycle_state_new. */
	void (*observe)(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
			double seconds);
	/* ---- preemption (DefaultPreemption); every one may be NULL, see schedkit/plugin.h ---- */
	/* All PodDisruptionBudgets (new list, caller sk_pdb_list_free's); count, or -1 and *err. */
	int (*list_pdbs)(void *ctx, struct sk_pdb ***out, char **err);
	/* Informer copy of pod (new reference) or NULL when gone. */
	struct sk_pod *(*get_pod)(void *ctx, const struct sk_pod *pod);
	/* status.startTime in Unix ns, -1 when unset. */
	int64_t (*pod_start_time)(void *ctx, const struct sk_pod *pod);
	/* deletionTimestamp set and DisruptionTarget=True/PreemptionByScheduler. */
	bool (*terminating_by_preemption)(void *ctx, const struct sk_pod *pod);
	/* Patch DisruptionTarget (condition_message) then DELETE the victim. 0 done, 1 already gone
	 * (404), or -1 and *err. */
	int (*preempt_victim)(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim,
			      const char *node_name, const char *condition_message, char **err);
	/* Status patch clearing status.nominatedNodeName. 0, or -1 and *err. */
	int (*clear_nominated)(void *ctx, const struct sk_pod *pod, char **err);
	/* sk_handle_patch_pod_annotation: merge-patch metadata.annotations[key] = value (daemon), or
	 * record it with the attempt (simulate). 0, or -1 and *err. NULL: the handle refuses. */
	int (*patch_pod_annotation)(void *ctx, const struct sk_pod *pod, const char *key, const char *value, char **err);
	/* sk_handle_api_get: GET path (may carry "?query") with the process's API client (daemon), or
	 * answer it from the cluster file (simulate). Called from plugins' own threads, concurrently.
	 * 0 and *out (caller frees), or -1 and *err. NULL: the handle refuses. */
	int (*api_get)(void *ctx, const char *path, cJSON **out, char **err);
	/* ---- storage (the volume plugins; schedkit/volume.h) ---- */
	/* The PVC/PV/StorageClass/CSINode/CSIDriver listers (scheduler/backend/volume_store.h).
	 * NULL: every lookup finds nothing. */
	struct sk_volume_store *volumes;
	/* sk_handle_api_patch: a JSON merge patch of path (daemon: the API; simulate: its store).
	 * 0 and *out (may be NULL), or -1, *err and *conflict (409). NULL: the handle refuses. */
	int (*api_patch)(void *ctx, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err);
	/* ---- listers (scheduler/api/workloads.h): Services, controllers, Namespaces; NULL: none ---- */
	const struct sk_listers *listers;
	/* ---- more metric hooks (each may be NULL) ---- */
	/* scheduler_plugin_evaluation_total{plugin, extension_point, profile} += n: every call of a
	 * PreFilter, Filter (per node), PreScore and Score (per node) plugin, as upstream's
	 * instrumented plugins count. Filter calls of a chunk of nodes are summed per thread and
	 * reported once per chunk (sk_fw_filter_chunk_begin/end), not once per node. */
	void (*evaluated)(void *ctx, const char *profile, const char *point, const char *plugin, double n);
	/* scheduler_permit_wait_duration_seconds{result}: a pod waited on Permit for seconds; code is
	 * the outcome (framework.go WaitOnPermit). */
	void (*permit_waited)(void *ctx, enum sk_code code, double seconds);
	/* scheduler_goroutines{operation} += delta: a pool thread starts (+1) or ends (-1) a chunk of
	 * the parallel work of operation "Filter" or "Score" (upstream's parallelizer counts each
	 * piece it runs, by the same operation names). */
	void (*working)(void *ctx, const char *operation, int delta);
	/* ---- asynchronous preemption (DefaultPreemption, docs/framework.md); each may be NULL ---- */
	/* Whether a feature gate is on (the daemon's --feature-gates). NULL: the gate's v1.34 default
	 * (kube/featuregate.h). */
	bool (*feature_enabled)(void *ctx, const char *gate);
	/* Activate (pkg/scheduler/framework/interface.go Handle.Activate): move the pod from the
	 * unschedulable pool or backoffQ to activeQ. Called from plugins' own threads. NULL: nothing. */
	void (*activate)(void *ctx, const struct sk_pod *pod);
	/* Whether the informer no longer holds pod (by uid, any scheduler) or holds it with a
	 * deletionTimestamp. NULL: get_pod answers (NULL or terminating). Called under the
	 * scheduling queue's lock (PreEnqueue): quick, never calls the queue. */
	bool (*pod_deleted)(void *ctx, const struct sk_pod *pod);
};

struct sk_framework;
struct sk_volume_store;

/* Builds the framework of one profile: one instance per distinct plugin (built once even when it
 * sits at several points; slot = instance index), args from the profile's pluginConfig (defaults
 * decoded when absent), per-point arrays, score weights. cfg and profile must outlive the
 * framework (the daemon frees an old config after the last unref of its frameworks).
 * Returns NULL and *err (caller frees) naming the profile and plugin on failure. */
struct sk_framework *sk_framework_new(const struct sk_config *cfg, const struct sk_profile_config *profile,
				      const struct sk_framework_env *env, char **err);
struct sk_framework *sk_framework_ref(struct sk_framework *fw);
/* Drops a reference; the last one calls every plugin's fini and frees. Returns true when freed. NULL ok. */
bool sk_framework_unref(struct sk_framework *fw);

const char *sk_framework_profile_name(const struct sk_framework *fw);
const struct sk_profile_config *sk_framework_profile(const struct sk_framework *fw);
const struct sk_config *sk_framework_config(const struct sk_framework *fw);
const struct sk_framework_env *sk_framework_env(const struct sk_framework *fw);
/* The env of the framework a handle belongs to (for the handle functions outside framework.c). */
const struct sk_framework_env *sk_handle_env(const struct sk_handle *h);
struct sk_handle *sk_framework_handle(struct sk_framework *fw);
struct sk_framework *sk_handle_framework(struct sk_handle *h); /* the framework a handle belongs to */
struct sk_waiting_pods *sk_framework_waiting_pods(struct sk_framework *fw);
int sk_framework_nplugins(const struct sk_framework *fw);               /* distinct instances */
struct sk_plugin *sk_framework_instance(struct sk_framework *fw, int slot);
int sk_framework_point_len(const struct sk_framework *fw, enum sk_ext_point ep);
struct sk_plugin *sk_framework_point_plugin(const struct sk_framework *fw, enum sk_ext_point ep, int i);
int32_t sk_framework_score_weight(const struct sk_framework *fw, int i); /* i-th score plugin */
bool sk_framework_has(const struct sk_framework *fw, enum sk_ext_point ep);
/* HTTP extenders of this framework (extender.h): the top-level config's then the profile's own,
 * ignorable ones moved last; built by sk_framework_new, immutable, freed with the framework. */
struct sk_extender;
int sk_framework_nextenders(const struct sk_framework *fw);
struct sk_extender *sk_framework_extender(const struct sk_framework *fw, int i); /* NULL out of range */
int64_t sk_framework_now_ns(const struct sk_framework *fw);

/* ---------- cycle state ---------- */
/* A fresh state for one attempt, sized for fw's slots. record_plugin_metrics: sample per-plugin
 * durations in this cycle. NULL on ENOMEM. */
struct sk_cycle_state *sk_cycle_state_new(const struct sk_framework *fw, bool record_plugin_metrics);
void sk_cycle_state_free(struct sk_cycle_state *cs); /* frees owned slot data; NULL ok */
/* Deep copy for dry runs: slots with ops->clone are cloned, the others are shared read-only (the
 * clone never frees them; it must not outlive cs). Skip sets are copied. NULL on failure. */
struct sk_cycle_state *sk_cycle_state_clone(const struct sk_cycle_state *cs);
bool sk_cycle_state_skip_filter(const struct sk_cycle_state *cs, int slot);
bool sk_cycle_state_skip_score(const struct sk_cycle_state *cs, int slot);
bool sk_cycle_state_records_plugin_metrics(const struct sk_cycle_state *cs);
/* Moves the PodsToActivate keys out (caller frees each and the array). Returns the count. */
int sk_cycle_state_take_pods_to_activate(struct sk_cycle_state *cs, char ***keys);

/* ---------- extension points ---------- */
/* Around one thread's run of sk_fw_run_filter over a chunk of nodes: Filter evaluations are
 * counted in a per-thread array meanwhile and reported to env.evaluated at the end (one call per
 * plugin per chunk). Without them every Filter call reports itself. Not nestable. */
void sk_fw_filter_chunk_begin(const struct sk_framework *fw);
void sk_fw_filter_chunk_end(const struct sk_framework *fw);
/* PreEnqueue plugins in order; first non-success stops (status.plugin set). */
struct sk_status sk_fw_run_pre_enqueue(struct sk_framework *fw, const struct sk_pod *pod);
/* The QueueSort plugin's less. */
bool sk_fw_less(struct sk_framework *fw, const struct sk_queued_pod *a, const struct sk_queued_pod *b);

/* PreFilter (pkg/scheduler/framework/runtime/framework.go (RunPreFilterPlugins)). *result receives the intersection (all=true when nothing narrowed;
 * caller frees result->names). narrowing[] receives the names of plugins that narrowed, in order
 * (up to max; *nnarrowing set). Returns: Success; Unschedulable / UU / (Pending) with plugin set;
 * UU "node(s) didn't satisfy plugin ..." for an empty intersection; Error wrapped as
 * `running PreFilter plugin "X": ...`. Skips are recorded in cs. */
struct sk_status sk_fw_run_pre_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result, const char **narrowing, int max,
				      int *nnarrowing);
/* AddPod/RemovePod extensions of PreFilter plugins not skipped in cs. */
struct sk_status sk_fw_run_pre_filter_add_pod(struct sk_framework *fw, struct sk_cycle_state *cs,
					      const struct sk_pod *pod, const struct sk_pod *to_add,
					      const struct sk_node_info *ni);
struct sk_status sk_fw_run_pre_filter_remove_pod(struct sk_framework *fw, struct sk_cycle_state *cs,
						 const struct sk_pod *pod, const struct sk_pod *to_remove,
						 const struct sk_node_info *ni);
/* Filter plugins on one node, stopping at the first non-success (status.plugin set; a status other
 * than rejected becomes Error `running "X" filter plugin: ...`). Thread-safe. */
struct sk_status sk_fw_run_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni);
/* sk_fw_run_filter on nodes[0], nodes[1], ... in order, stopping after max_feasible feasible
 * nodes or after n: res[k] receives SK_FW_FEASIBLE, SK_FW_REJECTED or SK_FW_FAILED (Error) and,
 * for the last two, st[k] the status (caller resets). An Error does not stop the run. Returns the
 * feasible count; *ran is how many nodes were filtered. Thread-safe. */
enum { SK_FW_FEASIBLE = 1, SK_FW_REJECTED = 2, SK_FW_FAILED = 3 };
int sk_fw_run_filter_nodes(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			   const struct sk_node_info *const *nodes, int n, int max_feasible, uint8_t *res,
			   struct sk_status *st, int *ran);
/* A Filter plugin's non-Success status as RunFilterPlugins returns it: a rejection gets the
 * plugin's name, anything else becomes an Error naming it (s is consumed). */
struct sk_status sk_fw_filter_failed(const struct sk_plugin *pl, struct sk_status *s);
/* sk_fw_run_filter_nodes's plain and per-chunk counted cases with pts[0..nf) in blocks of nodes
 * (scheduler/framework/filter_blocks.c): the same results, the same nodes filtered; evals (NULL:
 * not counted) gets each plugin's evaluations added at its slot. */
int sk_fw_filter_blocks(struct sk_plugin *const *pts, int nf, struct sk_cycle_state *cs, const struct sk_pod *pod,
			const struct sk_node_info *const *nodes, int n, int max_feasible, uint8_t *res,
			struct sk_status *st, int *ran, uint32_t *evals);
/* RunFilterPluginsWithNominatedPods (pkg/scheduler/framework/runtime/framework.go): two passes when nominated pods of priority
 * >= pod's (other than pod) exist for the node. Thread-safe. */
struct sk_status sk_fw_run_filter_with_nominated(struct sk_framework *fw, struct sk_cycle_state *cs,
						 const struct sk_pod *pod, const struct sk_node_info *ni);
/* Whether sk_fw_run_filter_with_nominated may add nominated pods on ni (nom: the framework env's
 * nominator); false means it is the plain Filter run. Lock-free (sk_nominator_maybe_on). */
static inline bool sk_fw_nominated_maybe_on(struct sk_nominator *nom, const struct sk_node_info *ni)
{
	return nom && ni->node && sk_nominator_maybe_on(nom, ni->node->name);
}
/* PostFilter: first Success or UU returns; rejections accumulate reasons (message = reasons of all
 * rejecting plugins joined by ", "), the last non-noop result wins. *have_result says whether
 * *result was set. */
struct sk_status sk_fw_run_post_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *result,
				       bool *have_result);
struct sk_status sk_fw_run_pre_score(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes);

/* Scores of one attempt. scores[p * nnodes + i] is score plugin `ran[p]`'s normalized score for
 * node i (before weight); total[i] is Σ score × weight. Plugins skipped at PreScore are absent. */
struct sk_score_table {
	int nnodes, nplugins;
	int *ran;              /* index into the profile's score plugins, per row */
	const char **plugin;   /* plugin name per row */
	int32_t *weight;       /* weight per row */
	int64_t *scores;       /* normalised, [plugin][node] */
	int64_t *total;
	int64_t *raw;          /* before NormalizeScore, [plugin][node]: only when want_raw was set */
	bool want_raw;         /* set by the caller before sk_fw_run_score (decision records) */
};
void sk_score_table_free(struct sk_score_table *t); /* frees the arrays, not t; NULL ok */
/* Score + NormalizeScore + weights over nodes (parallel). Errors: `running Score plugins: plugin
 * "X" failed with: ...`, `running Normalize on Score plugins: ...`, and `applying score
 * defaultWeights on Score plugins: plugin "X" returns an invalid score N, it should in the range
 * of [0, 100] after normalizing`. On error t is left empty. */
struct sk_status sk_fw_run_score(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *const *nodes, int nnodes, struct sk_score_table *t);

struct sk_status sk_fw_run_reserve(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node);
void sk_fw_run_unreserve(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node); /* reverse order */
/* Permit: Success; rejected (plugin set); Error; or Wait after the pod was put in the waiting map
 * (message `one or more plugins asked to wait and no plugin rejected pod "name"`). */
struct sk_status sk_fw_run_permit(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const char *node);
/* Blocks until a waiting pod is allowed, rejected or timed out; Success when it was not waiting. */
struct sk_status sk_fw_wait_on_permit(struct sk_framework *fw, const struct sk_pod *pod);
struct sk_status sk_fw_run_pre_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node);
/* Bind plugins in order until one returns other than Skip; Skip when none bound. */
struct sk_status sk_fw_run_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				const char *node);
void sk_fw_run_post_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node);

/* ---------- queueing hints ---------- */
/* Does registration `reg` match event `ev`? (Pod registrations cover assigned and unscheduled pods;
 * wildcard registrations match everything.) */
bool sk_event_matches(const struct sk_cluster_event *reg, const struct sk_cluster_event *ev);
/* The hint of plugin `plugin` (by name) for ev: -1 when the plugin registered for no matching
 * event (or is not in this profile), else SK_QUEUE if any matching registration says Queue, else
 * SK_QUEUE_SKIP. */
int sk_fw_queueing_hint(struct sk_framework *fw, const char *plugin, const struct sk_cluster_event *ev,
			const struct sk_pod *pod, const void *old_obj, const void *new_obj);


#endif
