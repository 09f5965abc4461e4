/* The objects the operator owns, as pure desired-state builders: the ConfigMap holding the
 * rendered configuration, the scheduler's ServiceAccount, least-privilege RBAC, the metrics
 * Service and the Deployment; plus the comparison (desired is contained in live) and overlay
 * (live with desired applied) used for drift repair. What is ours is marked by the
 * OP_LABEL_MANAGED_BY label on every object. */
#ifndef OP_RESOURCES_H
#define OP_RESOURCES_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "operator/plan.h"
#include "operator/settings.h"
#include "schedkit/version.h"

#define OP_SCHEDULER_NAME "schedkit-scheduler"          /* SA, RBAC, Service, Deployment, Lease */
#define OP_CONFIGMAP_NAME "schedkit-scheduler-config"
#define OP_CONFIG_KEY "config.yaml"
#define OP_CONFIG_DIR "/etc/schedkit"
#define OP_CONFIG_HASH_ANNOTATION "schedkit.io/config-hash"
#define OP_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define OP_MANAGED_BY "schedkit-operator"
#define OP_MANAGED_SELECTOR OP_LABEL_MANAGED_BY "=" OP_MANAGED_BY
#define OP_SCHEDULER_PORT 10259
#define OP_DEFAULT_NAMESPACE "schedkit-system"
/* The scheduler image `make image` builds (images/), tagged with the release. */
#define OP_DEFAULT_IMAGE "schedkit/schedkit-scheduler:" SK_VERSION

enum op_kind {
	OP_OBJ_CONFIGMAP = 0,
	OP_OBJ_SERVICE_ACCOUNT,
	OP_OBJ_CLUSTER_ROLE,
	OP_OBJ_CLUSTER_ROLE_BINDING,
	OP_OBJ_ROLE,
	OP_OBJ_ROLE_BINDING,
	OP_OBJ_SERVICE,
	OP_OBJ_DEPLOYMENT,
	OP_OBJ_PDB, /* PodDisruptionBudget: a drain or eviction leaves a replica running */
	OP_OBJ_COUNT
};

struct op_kind_info {
	const char *group;       /* "" for the core group */
	const char *version;
	const char *resource;    /* plural, for URLs */
	const char *kind;
	bool namespaced;
	const char *name;        /* the object's metadata.name */
	const char *exact;       /* top-level field compared and replaced as a whole, or NULL
				    (ConfigMap data: a key that should go must go) */
};
const struct op_kind_info *op_kind_info(enum op_kind k);

struct op_resources_opts {
	const char *namespace;       /* NULL: OP_DEFAULT_NAMESPACE */
	const char *scheduler_image; /* NULL: OP_DEFAULT_IMAGE */
	int replicas;                /* 0: 2; the Deployment runs 0 while no profile is in the config */
	int scheduler_verbosity;     /* --v passed to the scheduler */
	const char *cpu_request;     /* NULL: "100m" */
	const char *memory_request;  /* NULL: "128Mi" */
	const struct op_settings *settings; /* the installation's settings (settings.h); NULL = none.
					       Its image and replicas are not read here: the
					       caller resolves them into scheduler_image/replicas */
};

/* The desired object of kind k. plan is read for the ConfigMap (config.yaml and its hash; the key
 * is left out when no profile is in the configuration) and the Deployment (replicas 0 when no
 * profile is in it) and for the Secrets its extenders' TLS files come from (one read-only volume
 * each, operator/extender_tls.h); nothing else depends on it, so a configuration change touches
 * the pod template only when that set of Secrets changes (the scheduler reloads the mounted file). Caller frees; NULL on OOM. */
cJSON *op_desired_object(enum op_kind k, const struct op_resources_opts *opts, const struct op_plan *plan);

/* True when every field of desired is present in live with the same value: objects are compared
 * key by key (extra keys in live, such as server defaults, are fine), arrays element by element
 * with equal lengths, scalars by value. The kind's `exact` field must be equal as a whole. */
bool op_object_matches(enum op_kind k, const cJSON *live, const cJSON *desired);

/* live with desired applied: objects merged key by key, arrays and scalars replaced, the kind's
 * `exact` field replaced as a whole; metadata.resourceVersion and fields the server set (e.g. a
 * Service's clusterIP) are kept. The body for an update. Caller frees; NULL on OOM. */
cJSON *op_object_overlay(enum op_kind k, const cJSON *live, const cJSON *desired);

/* Subset test used by op_object_matches (exposed for tests). */
bool op_json_contains(const cJSON *live, const cJSON *desired);

#endif
