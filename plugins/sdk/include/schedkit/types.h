/* The scheduler's compact view of the cluster: pods, nodes, resources and per-node aggregates.
 * Decoded once from API JSON (scheduler/api/decode.c), kept without JSON trees (docs/architecture.md). Plugins read these structs; only the cache (scheduler/backend/cache.c) mutates them.
 *
 * Strings: names that repeat across objects (label keys and values, taint keys, resource names,
 * node names, images) are interned with sk_intern() and live for the process; compare them with
 * strcmp (pointer equality is a valid fast path, never the only check). Pod-unique strings
 * (namespace/name/uid) are owned by the pod. */
#ifndef SK_TYPES_H
#define SK_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "schedkit/selector.h"

/* Returns a process-lifetime copy of s, the same pointer for equal strings. Thread-safe. */
const char *sk_intern(const char *s);
const char *sk_intern_n(const char *s, size_t n);

/* ---------- labels ---------- */
struct sk_label {
	const char *key;   /* interned */
	const char *value; /* interned */
};
struct sk_labels {         /* sorted by key (strcmp), unique keys */
	int n;
	struct sk_label *items;
};
/* NULL when absent. ctx is a const struct sk_labels *; usable as a kube_label_lookup_fn. */
const char *sk_labels_get(const void *labels, const char *key);
/* Same keys with the same values (both sorted, so element by element). */
bool sk_labels_equal(const struct sk_labels *a, const struct sk_labels *b);

/* ---------- resources ---------- */
#define SK_RESOURCE_CPU "cpu"
#define SK_RESOURCE_MEMORY "memory"
#define SK_RESOURCE_EPHEMERAL_STORAGE "ephemeral-storage"
#define SK_RESOURCE_PODS "pods"

struct sk_scalar {            /* extended resources, hugepages-*, attachable-volumes-* */
	const char *name;     /* interned */
	int64_t value;        /* Value() of the quantity (integers, rounded up) */
};
struct sk_resource {
	int64_t milli_cpu;          /* MilliValue() of cpu */
	int64_t memory;             /* bytes */
	int64_t ephemeral_storage;  /* bytes */
	int64_t allowed_pod_number; /* nodes only: allocatable "pods" */
	int nscalar;
	struct sk_scalar *scalar;   /* owned; sorted by name */
};
int64_t sk_resource_scalar(const struct sk_resource *r, const char *name); /* 0 if absent */
/* Adds (sign=+1) or subtracts (sign=-1) b into a, growing a's scalar list as needed. 0 or -1 (ENOMEM). */
int sk_resource_add(struct sk_resource *a, const struct sk_resource *b, int sign);
void sk_resource_clear(struct sk_resource *r); /* frees scalars, zeroes */
int sk_resource_copy(struct sk_resource *dst, const struct sk_resource *src);

/* ---------- taints and tolerations ---------- */
enum sk_taint_effect { SK_EFFECT_NONE = 0, SK_EFFECT_NO_SCHEDULE, SK_EFFECT_PREFER_NO_SCHEDULE, SK_EFFECT_NO_EXECUTE };
struct sk_taint {
	const char *key, *value; /* interned; value "" when absent */
	enum sk_taint_effect effect;
};
enum sk_toleration_op { SK_TOLERATION_EQUAL = 0, SK_TOLERATION_EXISTS };
struct sk_toleration {
	const char *key, *value; /* interned; "" when absent */
	enum sk_toleration_op op;
	enum sk_taint_effect effect; /* SK_EFFECT_NONE = all effects */
};
/* upstream v1.Toleration.ToleratesTaint */
bool sk_toleration_tolerates(const struct sk_toleration *t, const struct sk_taint *taint);
/* The same taints (key, value, effect) in the same order. */
bool sk_taints_equal(const struct sk_taint *a, int na, const struct sk_taint *b, int nb);

/* ---------- pods ---------- */
enum sk_protocol { SK_PROTO_TCP = 0, SK_PROTO_UDP, SK_PROTO_SCTP };
struct sk_host_port {
	const char *host_ip;      /* interned; "0.0.0.0" when empty */
	enum sk_protocol protocol;
	int32_t port;             /* hostPort > 0 only */
};

struct sk_affinity_term {           /* PodAffinityTerm */
	struct kube_label_selector *selector;      /* labelSelector (+ matchLabelKeys merged); NULL = nothing */
	struct kube_label_selector *ns_selector;   /* namespaceSelector, NULL when absent */
	int nnamespaces;
	const char **namespaces;    /* interned; empty + no ns_selector = the pod's own namespace */
	const char *topology_key;   /* interned */
	int32_t weight;             /* preferred terms only */
};

enum sk_unsatisfiable { SK_DO_NOT_SCHEDULE = 0, SK_SCHEDULE_ANYWAY };
struct sk_spread_constraint {       /* TopologySpreadConstraint */
	int32_t max_skew;
	const char *topology_key;
	enum sk_unsatisfiable when_unsatisfiable;
	struct kube_label_selector *selector;  /* with matchLabelKeys merged */
	int32_t min_domains;                   /* 1 when unset */
	bool node_affinity_policy_ignore;      /* default Honor (false) */
	bool node_taints_policy_honor;         /* default Ignore (false) */
};

/* One of spec.volumes, with what the volume plugins read of its source. */
enum sk_volume_source {
	SK_VOL_OTHER = 0,         /* configMap, emptyDir, hostPath, ... */
	SK_VOL_PVC,               /* persistentVolumeClaim: claim = claimName */
	SK_VOL_EPHEMERAL,         /* ephemeral: claim = "<pod name>-<volume name>" */
	SK_VOL_GCE_PD,            /* gcePersistentDisk: id = pdName */
	SK_VOL_AWS_EBS,           /* awsElasticBlockStore: id = volumeID */
	SK_VOL_RBD,               /* rbd: id = image, pool, monitors */
	SK_VOL_ISCSI,             /* iscsi: id = iqn */
	SK_VOL_CSI,               /* csi (inline): id = driver */
	SK_VOL_AZURE_DISK,        /* azureDisk: id = diskURI (ABI 1.2) */
	SK_VOL_CINDER,            /* cinder: id = volumeID (ABI 1.2) */
	SK_VOL_PORTWORX,          /* portworxVolume: id = volumeID (ABI 1.2) */
	SK_VOL_VSPHERE,           /* vsphereVolume: id = volumePath (ABI 1.2) */
	SK_VOL_AZURE_FILE,        /* azureFile: id = shareName (ABI 1.2) */
};
struct sk_pod_volume {
	const char *name;         /* interned */
	enum sk_volume_source source;
	const char *claim;        /* SK_VOL_PVC, SK_VOL_EPHEMERAL; interned */
	const char *id;           /* see enum sk_volume_source; interned */
	const char *pool;         /* rbd pool, interned */
	int nmonitors;
	const char **monitors;    /* rbd monitors, interned */
	bool read_only;
};

struct sk_pod {
	/* identity (owned) */
	char *ns, *name, *uid;
	char *resource_version;
	const char *scheduler_name;      /* interned */
	const char *node_name;           /* interned; NULL when unbound */
	const char *nominated_node_name; /* interned; NULL when none */
	const char *phase;               /* interned: Pending, Running, Succeeded, Failed, Unknown */
	int32_t priority;                /* spec.priority, 0 when nil */
	bool preempt_never;              /* preemptionPolicy: Never */
	bool terminating;                /* metadata.deletionTimestamp set */
	time_t creation_time;
	struct sk_labels labels;
	const char *owner_kind;          /* controller ownerReference kind, interned, or NULL */
	const char *owner_uid;

	/* requests (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)): real values, and the non-zero scoring variant */
	struct sk_resource requests;
	int64_t non_zero_milli_cpu, non_zero_memory;
	bool requests_nothing;           /* no cpu/memory/ephemeral/scalar requested */

	/* node constraints */
	struct sk_labels node_selector;               /* spec.nodeSelector */
	struct kube_node_selector *required_affinity;  /* requiredDuringScheduling...nodeSelectorTerms or NULL */
	struct kube_preferred_terms *preferred_affinity; /* or NULL */
	int ntolerations;
	struct sk_toleration *tolerations;
	int nhost_ports;
	struct sk_host_port *host_ports;

	/* pod (anti-)affinity and spread (used by the next issue's plugins; decoded already) */
	int naffinity, nanti_affinity, npreferred_affinity, npreferred_anti_affinity;
	struct sk_affinity_term *affinity, *anti_affinity, *preferred_affinity_terms, *preferred_anti_affinity_terms;
	int nspread;
	struct sk_spread_constraint *spread;

	int nimages;
	const char **images;             /* interned, normalized ("name:latest" when untagged), init + regular */
	int ncontainers;                 /* init + regular, for ImageLocality */

	int nscheduling_gates;
	const char **scheduling_gates;   /* interned */

	int npvcs;
	const char **pvc_names;          /* interned; persistentVolumeClaim volumes */

	int refcount;                    /* atomic; see sk_pod_ref/sk_pod_unref */

	/* Appended within ABI 1 (docs/plugins.md, "ABI and compatibility"). */
	bool host_network;               /* spec.hostNetwork: the pod uses the node's address, no pod IP */
	/* Appended in ABI 1.1. */
	int nvolumes;
	struct sk_pod_volume *volumes;   /* spec.volumes in order (owned by the pod) */
	const char *owner_name;          /* controller ownerReference name, interned, or NULL */
	const char *owner_api_version;   /* its apiVersion ("apps/v1"), interned, or NULL */
};

/* Decodes a v1.Pod (JSON as served by the API). Computes requests per staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)
 * Returns NULL and sets *err (caller frees) naming the field on malformed input. */
struct sk_pod *sk_pod_decode(const cJSON *obj, char **err);
struct sk_pod *sk_pod_ref(struct sk_pod *p);
void sk_pod_unref(struct sk_pod *p);        /* frees at zero; NULL ok */
/* "ns/name" into buf (size >= 512); returns buf. */
const char *sk_pod_key(const struct sk_pod *p, char *buf, size_t n);
/* A shallow copy with node_name set, used by assume. Caller unrefs. */
struct sk_pod *sk_pod_with_node(const struct sk_pod *p, const char *node_name);
/* The same tolerations (key, value, operator, effect) in the same order. */
bool sk_tolerations_equal(const struct sk_pod *a, const struct sk_pod *b);

/* ---------- nodes ---------- */
struct sk_image {
	const char *name;   /* interned, each of status.images[].names */
	int64_t size_bytes;
};
struct sk_node {
	const char *name;   /* interned */
	char *resource_version;
	struct sk_labels labels;
	int ntaints;
	struct sk_taint *taints;
	bool unschedulable;
	struct sk_resource allocatable;
	int nimages;
	struct sk_image *images;
	const char *zone_key;  /* region + ":\x01:" + zone (upstream uses ":\x00:", which a C string cannot hold), interned */
	int refcount;

	/* Appended within ABI 1 (docs/plugins.md, "ABI and compatibility"). */
	int npod_cidrs;
	const char **pod_cidrs; /* spec.podCIDRs (spec.podCIDR when the list is absent), interned, as written */

	/* Appended in ABI 1.1. The addresses of the smallest of pod_cidrs (2^(bits - prefix), clamped
	 * to 2^62; dual stack takes one address of each family per pod, so the smaller range bounds),
	 * or 0 when no entry parses as a CIDR. Computed once at decode: per-node Filters read it. */
	int64_t pod_cidr_addresses;
};
struct sk_node *sk_node_decode(const cJSON *obj, char **err);
struct sk_node *sk_node_ref(struct sk_node *n);
void sk_node_unref(struct sk_node *n);

/* ---------- per-node aggregate (upstream NodeInfo) ---------- */
struct sk_pod_info {                 /* a pod placed on a node (bound or assumed) */
	struct sk_pod *pod;              /* one reference held */
};
struct sk_used_port {
	const char *host_ip;
	enum sk_protocol protocol;
	int32_t port;
};
struct sk_image_state {              /* ImageLocality input, from the snapshot */
	int64_t size_bytes;
	int num_nodes;                   /* nodes in the snapshot that have this image */
};
struct sk_node_info {
	struct sk_node *node;            /* NULL if only pods are known (node not yet seen) */
	int npods;
	struct sk_pod_info *pods;
	int npods_with_affinity;         /* pods having any (anti-)affinity */
	int npods_with_required_anti_affinity;
	int nused_ports;
	struct sk_used_port *used_ports;
	struct sk_resource requested;     /* sum of pod requests */
	int64_t non_zero_milli_cpu, non_zero_memory; /* NonZeroRequested */
	int64_t generation;              /* bumped on every change */
};
/* Image state lookup for a node in the current snapshot (ImageLocality). NULL if the node lacks it. */
struct sk_snapshot;
const struct sk_image_state *sk_snapshot_image_state(const struct sk_snapshot *s, const struct sk_node_info *ni,
						     const char *image);

/* Clone for dry runs (nominated pods pass, preemption); the clone owns its arrays and pod refs. */
struct sk_node_info *sk_node_info_clone(const struct sk_node_info *ni);
int sk_node_info_add_pod(struct sk_node_info *ni, struct sk_pod *pod);     /* takes a new ref */
int sk_node_info_remove_pod(struct sk_node_info *ni, const struct sk_pod *pod); /* by uid; -1 if absent */
void sk_node_info_free(struct sk_node_info *ni);

/* ---------- snapshot (read-only during a scheduling cycle) ---------- */
struct sk_snapshot {
	int nnodes;
	struct sk_node_info **nodes;        /* node-tree order (pkg/scheduler/backend/cache/node_tree.go) */
	int nhave_affinity;
	struct sk_node_info **have_affinity; /* nodes with pods having (anti-)affinity */
	int nhave_required_anti_affinity;
	struct sk_node_info **have_required_anti_affinity;
	int64_t generation;
	void *priv;                          /* cache-private indexes (name -> node_info, images) */
};
const struct sk_node_info *sk_snapshot_get(const struct sk_snapshot *s, const char *node_name);

#endif
