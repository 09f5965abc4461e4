/* The scheduling framework's public face: status codes, cycle state, the plugin descriptor and the
 * handle plugins use to reach the scheduler. In-tree plugins (plugins/<Name>/) and out-of-tree
 * plugins are written against the headers of plugins/sdk/include/schedkit/ only (this one, types.h,
 * args.h, selector.h, log.h, tpmap.h, resource_allocation.h); the registry is the core's
 * (scheduler/framework/registry.h). The rule is in docs/architecture.md.
 *
 * A plugin is plain data (the nginx module model): one const struct sk_plugin_desc with a name,
 * an args decoder and optional function pointers, one per extension point; NULL means "does not
 * implement". The framework resolves the enabled plugins of each extension point into flat arrays
 * when a profile is built (framework.c), so the per-pod loops never test for NULL. */
#ifndef SK_FRAMEWORK_H
#define SK_FRAMEWORK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "schedkit/args.h"
#include "schedkit/types.h"
#include "schedkit/version.h"

#define SK_MAX_NODE_SCORE 100
#define SK_MIN_NODE_SCORE 0
#define SK_MAX_EXTENDER_PRIORITY 10

/* ---------- status (pkg/scheduler/framework/interface.go (Code)) ---------- */
enum sk_code {
	SK_SUCCESS = 0,
	SK_ERROR,
	SK_UNSCHEDULABLE,
	SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
	SK_WAIT,
	SK_SKIP,
	SK_PENDING,
};
const char *sk_code_string(enum sk_code c); /* "Success", "Error", "Unschedulable", ... */

#define SK_STATUS_MAX_REASONS 6 /* reasons read directly from `reasons`; any number more, see below */
/* Returned by value. reasons[i] (i < nreasons) is a static string unless bit i of owned is set, in
 * which case it was malloc'd by sk_status_addf and is freed by sk_status_reset. A zeroed struct is
 * Success. plugin is set by the framework to the name of the plugin that returned it. A status
 * takes any number of reasons (NodeResourcesFit reports every insufficient resource, as upstream):
 * past the sixth they are kept by the host, and reasons[5] stays the sixth one's text (the layout
 * of this struct is ABI 1.0's); read them all with sk_status_reason_count / sk_status_reason (ABI
 * 1.1). A status with reasons is moved, never copied by assignment and reset twice
 * (sk_status_copy makes an independent copy). Bit 7 of owned is the host's. */
struct sk_status {
	enum sk_code code;
	uint8_t nreasons;
	uint8_t owned;
	const char *plugin;
	const char *reasons[SK_STATUS_MAX_REASONS];
};
static inline struct sk_status sk_ok(void) { struct sk_status s = { 0 }; return s; }
/* A status with one static reason (may be NULL for none). */
struct sk_status sk_status(enum sk_code code, const char *static_reason);
/* A status with one formatted reason (owned). */
struct sk_status sk_statusf(enum sk_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sk_status_add(struct sk_status *s, const char *static_reason);
void sk_status_addf(struct sk_status *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The va_list forms of sk_statusf and sk_status_addf (the host table carries these: a module's
 * variadic sk_statusf forwards its arguments to them, module.h). */
struct sk_status sk_statusv(enum sk_code code, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sk_status_addv(struct sk_status *s, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sk_status_reset(struct sk_status *s);            /* frees owned reasons, back to Success */
struct sk_status sk_status_copy(const struct sk_status *s); /* deep copy (owned reasons duplicated) */
char *sk_status_message(const struct sk_status *s);   /* reasons joined by ", "; caller frees */
int sk_status_reason_count(const struct sk_status *s); /* every reason, the inline ones and the rest */
const char *sk_status_reason(const struct sk_status *s, int i); /* i < sk_status_reason_count, else NULL */
static inline bool sk_is_success(const struct sk_status *s) { return s->code == SK_SUCCESS; }
static inline bool sk_is_rejected(const struct sk_status *s)
{
	return s->code == SK_UNSCHEDULABLE || s->code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE || s->code == SK_PENDING;
}

/* ---------- cycle state (upstream CycleState) ---------- */
/* Per-pod scratch shared by a profile's plugins during one scheduling cycle. Each plugin instance
 * owns one slot (struct sk_plugin.slot). Data written at PreFilter/PreScore is read by
 * Filter/Score from many threads at once: it must be treated as read-only after PreFilter/PreScore.
 * clone is needed for data that PreFilter AddPod/RemovePod modify (dry runs clone the state). */
struct sk_state_ops {
	void (*free)(void *data);
	void *(*clone)(const void *data); /* NULL: shared by pointer in clones (immutable data) */
};
struct sk_cycle_state;
void *sk_cycle_state_get(const struct sk_cycle_state *cs, int slot);
/* Replaces any previous data in the slot (freeing it). */
void sk_cycle_state_put(struct sk_cycle_state *cs, int slot, void *data, const struct sk_state_ops *ops);
/* Pods to activate after this cycle (PodsToActivate), by "ns/name". */
void sk_cycle_state_activate_pod(struct sk_cycle_state *cs, const char *pod_key);

/* ---------- types passed to extension points ---------- */
struct sk_plugin;
struct sk_handle;

struct sk_node_score {
	const char *name;   /* node name (interned) */
	int64_t score;
};

/* PreFilterResult: the set of nodes worth filtering. A plugin that narrows sets all=false and adds
 * names; the framework intersects the results of all plugins (pkg/scheduler/framework/runtime/framework.go (RunPreFilterPlugins)). */
struct sk_prefilter_result {
	bool all;           /* true = no narrowing (initial value) */
	int n, cap;
	const char **names; /* interned */
};
int sk_prefilter_result_add(struct sk_prefilter_result *r, const char *node_name);

/* Filter outcomes per node, given to PostFilter. */
struct sk_node_status {
	const struct sk_node_info *node;
	struct sk_status status;
};
struct sk_filter_diagnosis {
	int n;
	struct sk_node_status *nodes;       /* one per rejected node */
	int num_all_nodes;
	char *prefilter_msg;                /* non-NULL when PreFilter rejected */
	const char *unschedulable_plugins[32];
	int nunschedulable_plugins;
	/* Nodes not in nodes[] (PreFilter rejection or left out by a PreFilterResult) were rejected
	 * with plain Unschedulable, so preemption may help there (addition; false = they count as UU). */
	bool absent_unschedulable;
};
struct sk_postfilter_result {
	const char *nominated_node;         /* interned, or NULL; ModeOverride with "" clears */
	bool clear_nominated;
};

/* Queue item as seen by QueueSort. */
struct sk_queued_pod {
	struct sk_pod *pod;
	int64_t timestamp_ns;    /* when added or re-queued (PrioritySort tie-break) */
	int attempts;
	int unschedulable_count;
	int consecutive_errors;
	int64_t initial_attempt_ns;
	const char *unschedulable_plugins[16]; /* names that rejected it last time */
	int nunschedulable_plugins;
	const char *pending_plugins[8];
	int npending_plugins;
	const char *gating_plugin;           /* PreEnqueue plugin that gated it, or NULL */
};

/* ---------- cluster events and queueing hints (EnqueueExtensions) ---------- */
enum sk_event_resource {
	SK_EV_POD = 1 << 0,
	SK_EV_ASSIGNED_POD = 1 << 1,
	SK_EV_UNSCHEDULED_POD = 1 << 2,
	SK_EV_NODE = 1 << 3,
	SK_EV_PV = 1 << 4,
	SK_EV_PVC = 1 << 5,
	SK_EV_STORAGE_CLASS = 1 << 6,
	SK_EV_CSI_NODE = 1 << 7,
	SK_EV_CSI_DRIVER = 1 << 8,
	SK_EV_NAMESPACE = 1 << 9,
	SK_EV_CSI_STORAGE_CAPACITY = 1 << 10, /* ABI 1.2 */
	SK_EV_VOLUME_ATTACHMENT = 1 << 11,    /* ABI 1.2 */
	SK_EV_WILDCARD = 1 << 30,
};
enum sk_event_action {
	SK_ACT_ADD = 1 << 0,
	SK_ACT_DELETE = 1 << 1,
	SK_ACT_UPDATE_NODE_ALLOCATABLE = 1 << 2,
	SK_ACT_UPDATE_NODE_LABEL = 1 << 3,
	SK_ACT_UPDATE_NODE_TAINT = 1 << 4,
	SK_ACT_UPDATE_NODE_CONDITION = 1 << 5,
	SK_ACT_UPDATE_NODE_ANNOTATION = 1 << 6,
	SK_ACT_UPDATE_POD_LABEL = 1 << 7,
	SK_ACT_UPDATE_POD_SCALE_DOWN = 1 << 8,
	SK_ACT_UPDATE_POD_TOLERATIONS = 1 << 9,
	SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10,
	SK_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11,
	SK_ACT_UPDATE = 0x0ffc, /* any update */
	SK_ACT_ALL = 0x0fff,
};
struct sk_cluster_event {
	uint32_t resource;  /* enum sk_event_resource */
	uint32_t action;    /* enum sk_event_action bits */
	const char *label;  /* for logs/metrics, e.g. "NodeAdd" */
};
enum sk_hint { SK_QUEUE_SKIP = 0, SK_QUEUE = 1 };
/* old_obj/new_obj are struct sk_pod* or struct sk_node* depending on the event resource, and the
 * storage views of schedkit/volume.h (struct sk_pvc*, sk_pv*, sk_storage_class*, sk_csi_node*,
 * sk_csi_driver*; ABI 1.2: sk_csi_storage_capacity*, sk_volume_attachment*) for SK_EV_PVC ...
 * SK_EV_CSI_DRIVER, SK_EV_CSI_STORAGE_CAPACITY and SK_EV_VOLUME_ATTACHMENT (NULL for add/delete
 * sides, and NULL for both when a source cannot give them: a hint then answers Queue); other
 * resources pass NULL. Must be cheap and must not block. */
typedef enum sk_hint (*sk_hint_fn)(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				   const void *new_obj);
struct sk_event_registration {
	struct sk_cluster_event event;
	sk_hint_fn hint;    /* NULL = always Queue */
};

/* ---------- the plugin descriptor ---------- */
/* All callbacks get `self`: the instance (see struct sk_plugin) so they reach their private data and
 * CycleState slot. Callbacks that run per node (filter, score, pre_filter_add_pod/remove_pod) are
 * called from several threads at once and must not modify shared state. Legal status codes per
 * point follow upstream: PreFilter Success/Skip/Unschedulable/UU/Error; Filter Success/U/UU/Error;
 * PreScore Success/Skip/Error; Score Success/Error; Permit Success/Wait/U/UU/Error; Bind
 * Success/Skip/Error. */
/* The descriptor header every plugin initialises with SK_PLUGIN_HEADER: the ABI it was built
 * against and the descriptor's own size. Fields are only appended within a major version (a
 * scheduler reads an older, smaller descriptor as if the missing fields were NULL); abi_major,
 * abi_minor, size and name stay where they are in every major, so any scheduler can name what it
 * refuses. */
#define SK_PLUGIN_HEADER .abi_major = SK_ABI_MAJOR, .abi_minor = SK_ABI_MINOR, .size = sizeof(struct sk_plugin_desc)

struct sk_plugin_desc {
	uint32_t abi_major, abi_minor; /* SK_ABI_MAJOR, SK_ABI_MINOR of the headers it was built with */
	uint32_t size;             /* sizeof(struct sk_plugin_desc) of those headers */
	const char *name;          /* upstream name, e.g. "NodeResourcesFit" */

	/* Args. args_kind is "<Name>Args" or NULL when the plugin takes none. args_decode parses JSON
	 * args (NULL = absent: fill upstream defaults), applies defaults, validates; errors go to errs
	 * prefixed with path (e.g. "profiles[0].pluginConfig[2].args"); returns 0 or -1. */
	const char *args_kind;
	int (*args_decode)(const cJSON *json, void **args, struct sk_errors *errs, const char *path);
	cJSON *(*args_encode)(const void *args);   /* defaulted args for /configz; caller frees */
	void (*args_free)(void *args);

	/* Instance lifecycle: one instance per profile. args may be NULL when args_kind is NULL. */
	int (*init)(struct sk_plugin *self, const void *args, char **err);
	void (*fini)(struct sk_plugin *self);

	/* Extension points (NULL = not implemented). */
	struct sk_status (*pre_enqueue)(struct sk_plugin *self, const struct sk_pod *pod);
	bool (*less)(struct sk_plugin *self, const struct sk_queued_pod *a, const struct sk_queued_pod *b);
	struct sk_status (*pre_filter)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result);
	struct sk_status (*pre_filter_add_pod)(struct sk_plugin *self, struct sk_cycle_state *cs,
					       const struct sk_pod *pod, const struct sk_pod *to_add,
					       const struct sk_node_info *ni);
	struct sk_status (*pre_filter_remove_pod)(struct sk_plugin *self, struct sk_cycle_state *cs,
						  const struct sk_pod *pod, const struct sk_pod *to_remove,
						  const struct sk_node_info *ni);
	struct sk_status (*filter)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni);
	struct sk_status (*post_filter)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *result);
	struct sk_status (*pre_score)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *const *nodes, int nnodes);
	struct sk_status (*score)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score);
	struct sk_status (*normalize_score)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					    struct sk_node_score *scores, int n);
	struct sk_status (*reserve)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node_name);
	void (*unreserve)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			  const char *node_name);
	/* Wait: *timeout_ms set by the plugin (capped at 15 min by the framework). */
	struct sk_status (*permit)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node_name, int64_t *timeout_ms);
	struct sk_status (*pre_bind)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const char *node_name);
	struct sk_status (*bind)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const char *node_name);
	void (*post_bind)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			  const char *node_name);

	/* EnqueueExtensions: fills up to max registrations, returns how many. NULL = the plugin is
	 * interested in every event (upstream: plugins without EnqueueExtensions). */
	int (*events_to_register)(struct sk_plugin *self, struct sk_event_registration *out, int max);

	/* Appended in ABI 1.1. Score over a run of nodes in one call (a schedkit extension; upstream
	 * calls Score per node): scores[i] for nodes[i], i in [0, n). When set, the framework calls it
	 * instead of score for each chunk of nodes a worker takes, saving the per-node call, CycleState
	 * lookup and status of score (docs/plugins.md, "Batch scoring"). A plugin that sets it also
	 * sets score, with the same result per node. On failure, *failed is the index in nodes of the
	 * node it failed on. */
	struct sk_status (*score_batch)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed);

	/* Appended in ABI 1.3. Filter over a run of nodes in one call (a schedkit extension; upstream
	 * calls Filter per node): for each i in [0, n) with ok[i] set, the Filter of nodes[i]; a node
	 * that does not pass gets ok[i] cleared and st[i] set to the status filter returns for it (the
	 * framework names the plugin, as for filter). Nodes with ok[i] clear are not looked at and
	 * their st[i] is left alone. When set, the framework's plain Filter loop calls it for runs of
	 * up to 16 nodes (plugin by plugin over the run, so each node still sees the plugins in order
	 * and stops at the first that rejects it; docs/plugins.md, "Batch filtering"). A plugin that
	 * sets it also sets filter, with the same result per node; thread-safe as filter. */
	void (*filter_batch)(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st);
};

/* One instance of a plugin inside one profile's framework. */
struct sk_plugin {
	const struct sk_plugin_desc *desc;
	void *priv;                 /* the plugin's own instance data, set by init */
	int slot;                   /* this instance's CycleState slot */
	struct sk_handle *handle;   /* valid for the instance's life */
};

/* ---------- the handle: what a plugin may ask of the scheduler ---------- */
/* The snapshot of the current scheduling cycle (valid during the cycle only). */
const struct sk_snapshot *sk_handle_snapshot(struct sk_handle *h);
const char *sk_handle_profile_name(struct sk_handle *h);
int sk_handle_parallelism(struct sk_handle *h);
/* Runs fn(i, ctx) for i in [0, n) over the framework's worker pool; returns when all are done. */
void sk_handle_parallel_for(struct sk_handle *h, int n, void (*fn)(int i, void *ctx), void *ctx);
/* Posts pods/<name>/binding (API server) or records the binding (simulate). 0, or -1 and *err. */
int sk_handle_bind_pod(struct sk_handle *h, const struct sk_pod *pod, const char *node_name, char **err);
/* Nominated pods for a node (priority >= min_priority, excluding pod uid skip_uid). Caller frees the
 * array (not the pods; each element carries a reference the caller must sk_pod_unref). */
int sk_handle_nominated_pods(struct sk_handle *h, const char *node_name, struct sk_pod ***out);
/* Permit: allow or reject a waiting pod by uid (from other plugins' callbacks). */
int sk_handle_allow_waiting_pod(struct sk_handle *h, const char *pod_uid, const char *plugin_name);
int sk_handle_reject_waiting_pod(struct sk_handle *h, const char *pod_uid, const char *plugin_name, const char *msg);
/* Monotonic clock in ns (injectable in tests). */
int64_t sk_handle_now_ns(struct sk_handle *h);

/* ---------- preemption support (DefaultPreemption; additions) ---------- */
/* A PodDisruptionBudget as preemption reads it (policy/v1). */
struct sk_pdb {
	char *ns, *name;
	struct kube_label_selector *selector; /* spec.selector; NULL = matches nothing (absent/invalid) */
	int32_t disruptions_allowed;          /* status.disruptionsAllowed */
	int ndisrupted;
	char **disrupted_pods;                /* keys of status.disruptedPods (pod names) */
};
/* Decodes a policy/v1 PodDisruptionBudget (the core's, scheduler/api/pdb.c: the daemon and simulate
 * decode, DefaultPreemption reads). An invalid selector is kept as NULL (matches nothing, as
 * upstream). NULL and *err (caller frees) only when obj is not an object or on ENOMEM. */
struct sk_pdb *sk_pdb_decode(const cJSON *obj, char **err);
void sk_pdb_free(struct sk_pdb *p);                    /* NULL ok */
void sk_pdb_list_free(struct sk_pdb **list, int n);   /* frees each and the array; NULL ok */

/* Dry-run helpers: clone/free a CycleState (sk_cycle_state_clone semantics), and run the
 * PreFilter AddPod/RemovePod extensions and RunFilterPluginsWithNominatedPods of the plugin's own
 * framework. Thread-safe like their runtime.h counterparts. */
struct sk_cycle_state *sk_handle_cycle_state_clone(struct sk_handle *h, const struct sk_cycle_state *cs);
void sk_handle_cycle_state_free(struct sk_handle *h, struct sk_cycle_state *cs);
struct sk_status sk_handle_run_pre_filter_add_pod(struct sk_handle *h, struct sk_cycle_state *cs,
						  const struct sk_pod *pod, const struct sk_pod *to_add,
						  const struct sk_node_info *ni);
struct sk_status sk_handle_run_pre_filter_remove_pod(struct sk_handle *h, struct sk_cycle_state *cs,
						     const struct sk_pod *pod, const struct sk_pod *to_remove,
						     const struct sk_node_info *ni);
struct sk_status sk_handle_run_filter_with_nominated(struct sk_handle *h, struct sk_cycle_state *cs,
						     const struct sk_pod *pod, const struct sk_node_info *ni);
/* PodDisruptionBudgets of the cluster (env.list_pdbs). Returns the count (0 with *out NULL when the
 * env has no PDB source), -1 and *err on failure. Caller sk_pdb_list_free's. */
int sk_handle_list_pdbs(struct sk_handle *h, struct sk_pdb ***out, char **err);
/* The current copy of pod from the informer (env.get_pod; new reference), or NULL when it no
 * longer exists. Without a callback: a new reference to pod itself. */
struct sk_pod *sk_handle_get_pod(struct sk_handle *h, const struct sk_pod *pod);
/* status.startTime of pod in Unix ns (env.pod_start_time); -1 when the pod has none (upstream then
 * uses "now"). Without a callback: metadata.creationTimestamp, or -1 when unset. */
int64_t sk_handle_pod_start_time(struct sk_handle *h, const struct sk_pod *pod);
/* Wall clock in Unix ns ("now" for pods without a start time). */
int64_t sk_handle_wall_now_ns(struct sk_handle *h);
/* True when pod is terminating because of scheduler preemption (deletionTimestamp set and a
 * DisruptionTarget=True condition with reason PreemptionByScheduler; env.terminating_by_preemption).
 * Without a callback: deletionTimestamp set (the pre-DisruptionTarget rule). */
bool sk_handle_terminating_by_preemption(struct sk_handle *h, const struct sk_pod *pod);
/* Evicts a preemption victim: env.preempt_victim patches the DisruptionTarget condition (reason
 * PreemptionByScheduler, message "<profile>: preempting to accommodate a higher priority pod") and
 * deletes the pod. 0 done, 1 the victim was already gone, or -1 and *err (caller frees); -1 with an
 * explaining *err when the env has no such callback. */
int sk_handle_preempt_victim(struct sk_handle *h, const struct sk_pod *preemptor, const struct sk_pod *victim,
			     const char *node_name, char **err);
/* Clears pod's nominatedNodeName: in the nominator at once, and through env.clear_nominated (a status
 * patch) when set. 0, or -1 and *err. */
int sk_handle_clear_nominated(struct sk_handle *h, const struct sk_pod *pod, char **err);
/* True when pod uid waits at Permit in this framework. */
bool sk_handle_is_waiting_pod(struct sk_handle *h, const char *pod_uid);
/* Records an event on pod through env.event (no-op without one). */
void sk_handle_event(struct sk_handle *h, const struct sk_pod *pod, const char *type, const char *reason,
		     const char *action, const char *note);
/* Merge-patches metadata.annotations[key] = value on pod (env.patch_pod_annotation: a PATCH
 * through the API server in the daemon; recorded and printed with the attempt in simulate). Meant
 * for PreBind and later points; blocks on the API server, so not from Filter or Score. 0, or -1
 * and *err (caller frees); -1 with an explaining *err when the env has no such callback. */
int sk_handle_patch_pod_annotation(struct sk_handle *h, const struct sk_pod *pod, const char *key, const char *value,
				   char **err);
/* GETs an API path, e.g. "/apis/metrics.k8s.io/v1beta1/nodes" (a query after '?' is passed on),
 * through the scheduler's API client (env.api_get: the daemon's client; simulate answers
 * metrics.k8s.io paths from the NodeMetrics and PodMetrics objects of its cluster file and refuses
 * others with a 404-style error). Thread-safe; blocks on the network, so call it from a thread of
 * the plugin's own (a refresh loop), never from Filter or Score. 0 and *out (the response body;
 * caller cJSON_Delete's), or -1 and *err (caller frees; names the path and the server's message);
 * -1 with an explaining *err when the env has no API. */
int sk_handle_api_get(struct sk_handle *h, const char *path, cJSON **out, char **err);

/* ---------- listers: Services, controllers, Namespaces (additions) ---------- */
/* helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go), from the scheduler's
 * Service, ReplicationController, ReplicaSet and StatefulSet listers (env.listers: the daemon's
 * informers, simulate's cluster file): the merged selectors of the Services of pod's namespace that
 * select pod, with the selector of pod's controller (RC, ReplicaSet or StatefulSet) added. A new
 * selector (caller kube_label_selector_free's), or NULL when it would have no requirement (no
 * Service, no known controller) or on ENOMEM. Thread-safe; reads in-memory stores only. */
struct kube_label_selector *sk_handle_default_selector(struct sk_handle *h, const struct sk_pod *pod);
/* GetNamespaceLabelsSnapshot: the labels of namespace ns from the Namespace lister; an empty set
 * when it is unknown (as upstream). Caller sk_labels_free's; NULL on ENOMEM. Thread-safe. */
struct sk_labels *sk_handle_namespace_labels(struct sk_handle *h, const char *ns);
void sk_labels_free(struct sk_labels *l); /* NULL ok */
/* nsLister.List(sel): the names (interned) of the namespaces whose labels sel matches. Returns the
 * count with *out a malloc'd array the caller frees (NULL when 0), or -1 on ENOMEM. */
int sk_handle_namespaces_matching(struct sk_handle *h, const struct kube_label_selector *sel, const char ***out);
/* The listers themselves, for plugins of their own: kind is "Service", "ReplicationController",
 * "ReplicaSet", "StatefulSet" or "Namespace". sk_handle_list_objects calls fn for every object of
 * kind in namespace ns (NULL: every namespace; ignored for Namespaces); sk_handle_get_object calls
 * it for the object ns/name when present. obj is the object as served (cJSON), borrowed for the
 * call: read it, copy what you keep, and do not call the listers again from fn (the daemon holds
 * the store's read lock). Return the number of calls made, or -1 for an unknown kind. */
int sk_handle_list_objects(struct sk_handle *h, const char *kind, const char *ns,
			   void (*fn)(const cJSON *obj, void *u), void *u);
int sk_handle_get_object(struct sk_handle *h, const char *kind, const char *ns, const char *name,
			 void (*fn)(const cJSON *obj, void *u), void *u);

/* ---------- preemption through the HTTP extenders (ABI 1.1) ---------- */
/* The victims on one candidate node (extenderv1.Victims). */
struct sk_victims {
	const char *node;           /* interned */
	int npods;
	struct sk_pod **pods;       /* one reference each, most important first */
	int64_t num_pdb_violations;
};
/* Unrefs the pods and frees every entry's array and list itself (the list is malloc'd). NULL ok. */
void sk_victims_free(struct sk_victims *list, int n);
/* upstream callExtenders (pkg/scheduler/framework/preemption/preemption.go): the profile's
 * extenders that have a preemptVerb and are interested in pod are called in order with the
 * candidates; each one's answer (the nodes it keeps, their victims) replaces the list given to the
 * next, and the loop stops when no candidate is left. An ignorable extender's error is skipped.
 * The list and its count (malloc'd; caller sk_victims_free's) are replaced by the result. 0, or -1 and *err
 * (caller frees; the list then is unchanged). Blocks on the network. */
int sk_handle_preempt_extenders(struct sk_handle *h, const struct sk_pod *pod, struct sk_victims **list, int *n,
				char **err);

/* ABI 1.2: asynchronous preemption (upstream SchedulerAsyncPreemption, docs/framework.md). */
/* Whether the scheduler's feature gate `gate` (a kube-scheduler --feature-gates name) is on; the
 * v1.34 default when the scheduler was given none; false for a name it does not know. */
bool sk_handle_feature_enabled(struct sk_handle *h, const char *gate);
/* Handle.Activate: moves pod (by namespace/name) from the unschedulable pool or backoffQ to
 * activeQ, through PreEnqueue; a pod in flight is requeued when it comes back. Any thread. */
void sk_handle_activate_pod(struct sk_handle *h, const struct sk_pod *pod);
/* Whether the informer no longer holds pod (by uid) or holds it with a deletionTimestamp (any
 * scheduler's pod). Safe in PreEnqueue (quick, no queue call). */
bool sk_handle_pod_deleted(struct sk_handle *h, const struct sk_pod *pod);
/* Names victim in the attempt's decision record (docs/explain.md), when one is being made on
 * this thread. sk_handle_preempt_victim does so itself; a plugin that evicts later, off the
 * scheduling thread, calls this from PostFilter for each victim it is going to evict. */
void sk_handle_record_victim(struct sk_handle *h, const struct sk_pod *victim);

#endif
