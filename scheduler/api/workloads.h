/* The listers plugins read beside the snapshot: Services, ReplicationControllers, ReplicaSets and
 * StatefulSets (PodTopologySpread's default selector, upstream helper.DefaultSelector) and
 * Namespaces (InterPodAffinity's namespaceSelector). A source (the daemon's informers, simulate's
 * cluster file) implements struct sk_listers over whatever it holds; this module computes what
 * upstream computes from the objects. Facts: pkg/scheduler/framework/plugins/helper/spread.go,
 * pkg/scheduler/framework/plugins/interpodaffinity/plugin.go, docs/framework.md. */
#ifndef SK_API_WORKLOADS_H
#define SK_API_WORKLOADS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "schedkit/types.h"

enum sk_lister_kind {
	SK_LISTER_SERVICES = 0,
	SK_LISTER_REPLICATION_CONTROLLERS,
	SK_LISTER_REPLICA_SETS,
	SK_LISTER_STATEFUL_SETS,
	SK_LISTER_NAMESPACES,
	SK_LISTER_NKINDS
};

/* The API resource behind a lister kind (for informers and for reading a cluster file). */
struct sk_lister_resource {
	const char *group, *version, *resource; /* "" group: the core API */
	const char *api_version, *kind;         /* as objects carry them: "apps/v1", "ReplicaSet" */
	bool namespaced;
};
const struct sk_lister_resource *sk_lister_resource(enum sk_lister_kind k);
/* The kind whose objects are (apiVersion, kind), or -1. */
int sk_lister_kind_of(const char *api_version, const char *kind);
/* The kind named kind ("Service", ...: the kind field of its objects), or -1. */
int sk_lister_kind_named(const char *kind);

typedef void (*sk_lister_fn)(const cJSON *obj, void *u);
/* A lister source. Both callbacks are thread-safe and call fn with borrowed objects (valid for the
 * call only), never while holding a lock fn could need. Either may be NULL (nothing of any kind). */
struct sk_listers {
	void *ctx;
	/* Every object of kind in namespace ns (NULL: every namespace; ignored for Namespaces). */
	void (*list)(void *ctx, enum sk_lister_kind kind, const char *ns, sk_lister_fn fn, void *u);
	/* The object ns/name of kind (ns ignored for Namespaces), when present. */
	void (*get)(void *ctx, enum sk_lister_kind kind, const char *ns, const char *name, sk_lister_fn fn, void *u);
};

/* A lister source over a fixed set of objects of any kinds (simulate's cluster file, tests): the
 * objects are borrowed and must outlive ol; each is sorted to its kind by apiVersion and kind.
 * Read-only, so thread-safe. */
struct sk_object_listers {
	struct sk_listers listers; /* what to hand out: &ol->listers */
	int n;
	const cJSON *const *objs;
};
void sk_object_listers_init(struct sk_object_listers *ol, const cJSON *const *objs, int n);

/* helper.DefaultSelector: the merged spec.selector of every Service in pod's namespace that selects
 * pod (a Service without a selector selects nothing), then, when pod's controller ownerReference is
 * a v1 ReplicationController, an apps/v1 ReplicaSet or an apps/v1 StatefulSet the listers hold, that
 * controller's selector (an RC's map merged into the set; a ReplicaSet's or StatefulSet's
 * LabelSelector ANDed, skipped when nil or invalid). *out is NULL when the result has no
 * requirement (upstream then adds no default constraints). 0, or -1 on ENOMEM. Caller frees *out
 * (kube_label_selector_free). l may be NULL. */
int sk_default_selector(const struct sk_listers *l, const struct sk_pod *pod, struct kube_label_selector **out);

/* GetNamespaceLabelsSnapshot: the labels of namespace ns, an empty set when the lister does not
 * have it (as upstream). Keys and values interned; caller frees with sk_labels_free. NULL on ENOMEM. */
struct sk_labels *sk_namespace_labels(const struct sk_listers *l, const char *ns);
/* The names (interned) of the namespaces whose labels sel matches (nsLister.List(selector)); the
 * count, *out a malloc'd array (NULL when 0), or -1 on ENOMEM. */
int sk_namespaces_matching(const struct sk_listers *l, const struct kube_label_selector *sel, const char ***out);

#endif
