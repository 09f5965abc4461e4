/* Storage objects as the volume plugins read them: PersistentVolumeClaims, PersistentVolumes,
 * StorageClasses, CSINodes, CSIDrivers and (ABI 1.2) CSIStorageCapacities and VolumeAttachments,
 * decoded once from API JSON (scheduler/api/volume.c) and kept by the core's volume store
 * (scheduler/backend/volume_store.c), which the daemon's informers and simulate's cluster file
 * fill. Plugins look objects up through the handle (the listers of upstream's
 * SharedInformerFactory); every view is immutable and reference counted, so a plugin may keep one
 * past the call (sk_vobj_unref when done). Strings that repeat (class names, drivers, node names,
 * label keys and values) are interned; the identity strings of the header are owned. */
#ifndef SK_SCHEDKIT_VOLUME_H
#define SK_SCHEDKIT_VOLUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "schedkit/selector.h"
#include "schedkit/types.h"

enum sk_vobj_kind {
	SK_VOBJ_PVC = 1,
	SK_VOBJ_PV,
	SK_VOBJ_STORAGE_CLASS,
	SK_VOBJ_CSI_NODE,
	SK_VOBJ_CSI_DRIVER,
	SK_VOBJ_CSI_STORAGE_CAPACITY, /* ABI 1.2 */
	SK_VOBJ_VOLUME_ATTACHMENT,    /* ABI 1.2 */
};

/* The first member of every storage view. ns is "" for cluster-scoped kinds. */
struct sk_vobj {
	int refcount;                 /* atomic; sk_vobj_ref / sk_vobj_unref */
	enum sk_vobj_kind kind;
	char *ns, *name, *uid, *resource_version;
	bool deleting;                /* metadata.deletionTimestamp set */
};
/* Takes a reference (NULL ok) and returns obj; drops one (frees at zero; NULL ok). Any kind. */
void *sk_vobj_ref(const void *obj);
void sk_vobj_unref(const void *obj);
/* Unrefs each of list[0..n) and frees the array (NULL ok). */
void sk_vobj_list_free(void *list, int n);

/* PersistentVolumeAccessMode bits. */
#define SK_ACCESS_RWO 0x1u  /* ReadWriteOnce */
#define SK_ACCESS_ROX 0x2u  /* ReadOnlyMany */
#define SK_ACCESS_RWX 0x4u  /* ReadWriteMany */
#define SK_ACCESS_RWOP 0x8u /* ReadWriteOncePod */

/* Annotations of the PV controller and the scheduler (pkg/controller/volume/persistentvolume/util). */
#define SK_ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define SK_ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define SK_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define SK_ANN_STORAGE_PROVISIONER "volume.kubernetes.io/storage-provisioner"
#define SK_ANN_BETA_STORAGE_PROVISIONER "volume.beta.kubernetes.io/storage-provisioner"
#define SK_ANN_BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"
#define SK_ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"

struct sk_pvc {
	struct sk_vobj meta;
	uint32_t access_modes;        /* SK_ACCESS_* of spec.accessModes */
	/* GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "". */
	const char *class_name;
	bool class_set;               /* spec.storageClassName or the annotation present (even "") */
	const char *volume_name;      /* spec.volumeName, NULL when unset or "" */
	int64_t request_storage;      /* spec.resources.requests.storage in bytes, 0 when absent */
	struct kube_label_selector *selector; /* spec.selector, NULL when absent */
	bool block_mode;              /* spec.volumeMode Block (default Filesystem) */
	bool bind_completed;          /* annotation pv.kubernetes.io/bind-completed present */
	const char *selected_node;    /* annotation volume.kubernetes.io/selected-node, or NULL */
	const char *provisioner;      /* annotation volume(.beta).kubernetes.io/storage-provisioner, or NULL */
	const char *phase;            /* status.phase: Pending, Bound, Lost ("" when absent) */
	const char *controller_uid;   /* uid of the controller ownerReference, or NULL */
	bool has_request_storage;     /* ABI 1.2: spec.resources.requests.storage present */
};

struct sk_pv {
	struct sk_vobj meta;
	struct sk_labels labels;
	const char *class_name;       /* the beta annotation, else spec.storageClassName, else "" */
	uint32_t access_modes;
	int64_t capacity;             /* spec.capacity.storage in bytes */
	struct kube_node_selector *node_affinity; /* spec.nodeAffinity.required, NULL when absent */
	const char *claim_ns, *claim_name, *claim_uid; /* spec.claimRef, NULL when unset */
	const char *phase;            /* status.phase: Available, Bound, Released, Failed, Pending */
	bool block_mode;
	const char *source;           /* the volume source's field name: "csi", "hostPath", "local", ... */
	const char *csi_driver, *csi_handle; /* spec.csi.driver / volumeHandle, NULL unless csi */
	/* GetLocalPersistentVolumeNodeNames: the values of kubernetes.io/hostname In expressions of
	 * the required node affinity (intersected within a term, united across terms), sorted, interned. */
	int nhost_names;
	const char **host_names;
	/* ABI 1.2: the in-tree source's volume id (awsElasticBlockStore.volumeID, gcePersistentDisk.pdName,
	 * azureDisk.diskURI, cinder.volumeID, portworxVolume.volumeID, vsphereVolume.volumePath,
	 * azureFile.shareName), interned; NULL for csi and other sources. */
	const char *intree_id;
};

struct sk_storage_class {
	struct sk_vobj meta;
	const char *provisioner;
	bool binding_mode_set;        /* volumeBindingMode present (the API server defaults it) */
	bool wait_for_first_consumer; /* volumeBindingMode WaitForFirstConsumer */
	/* allowedTopologies as node selector terms (matchLabelExpressions -> key In values); NULL = any. */
	struct kube_node_selector *allowed_topologies;
	bool is_default;              /* annotation storageclass.kubernetes.io/is-default-class "true" */
	/* ABI 1.2: allowedTopologies as served, printed unformatted ("" when absent), so an update can
	 * be compared (isSchedulableAfterStorageClassChange); owned. */
	char *allowed_topologies_json;
};

struct sk_csi_node_driver {
	const char *name;             /* interned */
	const char *node_id;
	bool has_count;               /* allocatable.count set */
	int32_t count;
	int ntopology_keys;
	const char **topology_keys;
};
struct sk_csi_node {
	struct sk_vobj meta;          /* name = the node's name */
	int ndrivers;
	struct sk_csi_node_driver *drivers;
	/* ABI 1.2: annotation storage.alpha.kubernetes.io/migrated-plugins (comma separated in-tree
	 * plugin names, "kubernetes.io/aws-ebs,..."), interned; NULL when absent. */
	const char *migrated_plugins;
};

struct sk_csi_driver {
	struct sk_vobj meta;
	bool attach_required;         /* spec.attachRequired (default true) */
	bool storage_capacity;        /* spec.storageCapacity (default false) */
};

/* Decoders (the core's; the daemon, simulate and tests use them). obj is the object as the API
 * serves it. NULL and *err (caller frees), naming the object and the field, on malformed input. */
struct sk_pvc *sk_pvc_decode(const cJSON *obj, char **err);
struct sk_pv *sk_pv_decode(const cJSON *obj, char **err);
struct sk_storage_class *sk_storage_class_decode(const cJSON *obj, char **err);
struct sk_csi_node *sk_csi_node_decode(const cJSON *obj, char **err);
struct sk_csi_driver *sk_csi_driver_decode(const cJSON *obj, char **err);
/* Decodes any of the five by obj's "kind"; NULL and *err for another kind. */
struct sk_vobj *sk_vobj_decode(const cJSON *obj, char **err);

/* The CSINode entry of driver, or NULL. */
const struct sk_csi_node_driver *sk_csi_node_driver(const struct sk_csi_node *n, const char *driver);
/* True when the PV's node affinity admits the node (no affinity: true). Node labels and name. */
bool sk_pv_matches_node(const struct sk_pv *pv, const struct sk_node *node);

/* ---------- listers (through the handle) ---------- */
/* Each returns a new reference, or NULL when the object does not exist (or the env has no store). */
struct sk_handle;
struct sk_pvc *sk_handle_get_pvc(struct sk_handle *h, const char *ns, const char *name);
struct sk_pv *sk_handle_get_pv(struct sk_handle *h, const char *name);
struct sk_storage_class *sk_handle_get_storage_class(struct sk_handle *h, const char *name);
struct sk_csi_node *sk_handle_get_csi_node(struct sk_handle *h, const char *node_name);
struct sk_csi_driver *sk_handle_get_csi_driver(struct sk_handle *h, const char *name);
/* All PersistentVolumes, sorted by name (new references; sk_vobj_list_free). Count, or -1 (ENOMEM). */
int sk_handle_list_pvs(struct sk_handle *h, struct sk_pv ***out);
/* Sends a JSON merge patch (application/merge-patch+json) to an API path, e.g.
 * "/api/v1/persistentvolumes/pv1", through the scheduler's client (env.api_patch: the daemon's
 * client; simulate applies it to its own store). Put metadata.resourceVersion in the patch for an
 * optimistic-concurrency update as upstream's Update. Blocks on the network: PreBind and later only.
 * 0 and *out (the updated object; caller cJSON_Delete's; out may be NULL), or -1 and *err (caller
 * frees) naming the path; *conflict (may be NULL) is set on 409. -1 with an explaining *err
 * when the env has no API. */
int sk_handle_api_patch(struct sk_handle *h, const char *path, const cJSON *patch, cJSON **out, bool *conflict,
			char **err);

/* ---------- ABI 1.2: CSIStorageCapacity, VolumeAttachment, CSI migration ---------- */

#define SK_ANN_MIGRATED_PLUGINS "storage.alpha.kubernetes.io/migrated-plugins"

/* storage.k8s.io/v1 CSIStorageCapacity (namespaced): the capacity a driver reports for one class
 * in one topology segment. */
struct sk_csi_storage_capacity {
	struct sk_vobj meta;
	const char *class_name;       /* storageClassName (required), interned */
	bool has_capacity;            /* capacity set */
	int64_t capacity;             /* bytes */
	bool has_maximum_volume_size; /* maximumVolumeSize set */
	int64_t maximum_volume_size;  /* bytes */
	/* nodeTopology; NULL when absent (no node has access, upstream nodeHasAccess) */
	struct kube_label_selector *node_topology;
};

/* storage.k8s.io/v1 VolumeAttachment (cluster-scoped). */
struct sk_volume_attachment {
	struct sk_vobj meta;
	const char *attacher;         /* spec.attacher (the CSI driver), interned */
	const char *node_name;        /* spec.nodeName, interned */
	const char *pv_name;          /* spec.source.persistentVolumeName, interned, or NULL */
	/* spec.source.inlineVolumeSpec (a migrated inline volume): its source field name ("csi",
	 * "awsElasticBlockStore", ...), csi driver and handle, or in-tree id; all NULL without one */
	const char *inline_source, *inline_csi_driver, *inline_csi_handle, *inline_intree_id;
	bool attached;                /* status.attached */
};

struct sk_csi_storage_capacity *sk_csi_storage_capacity_decode(const cJSON *obj, char **err);
struct sk_volume_attachment *sk_volume_attachment_decode(const cJSON *obj, char **err);
/* volumeLimit of volumebinding/binder.go: maximumVolumeSize when set, else capacity; false when
 * neither is set. */
bool sk_csi_storage_capacity_limit(const struct sk_csi_storage_capacity *c, int64_t *limit);

/* Every CSIStorageCapacity, sorted by namespace/name (new references; sk_vobj_list_free). Count or -1. */
int sk_handle_list_csi_storage_capacities(struct sk_handle *h, struct sk_csi_storage_capacity ***out);
/* The VolumeAttachments whose spec.nodeName is node_name (the store indexes them by node, as
 * upstream's va.spec.nodename indexer), sorted by name. Count or -1. */
int sk_handle_list_volume_attachments(struct sk_handle *h, const char *node_name,
				      struct sk_volume_attachment ***out);

/* CSI migration (staging/src/k8s.io/csi-translation-lib). In-tree plugin names are
 * "kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
 * "kubernetes.io/azure-file", "kubernetes.io/cinder", "kubernetes.io/vsphere-volume",
 * "kubernetes.io/portworx-volume". */
/* GetCSINameFromInTreeName: the CSI driver an in-tree plugin migrates to, or NULL. */
const char *sk_csi_migration_driver(const char *intree_plugin);
/* GetInTreePluginNameFromSpec: the in-tree plugin of a volume source field name
 * ("awsElasticBlockStore") or of a pod volume, or NULL when not migratable. */
const char *sk_csi_migration_plugin_of_source(const char *source_field);
const char *sk_csi_migration_plugin_of_volume(const struct sk_pod_volume *v);
/* TranslateInTreePVToCSI / TranslateInTreeInlineVolumeToCSI, reduced to what the plugins read:
 * the CSI driver (interned) and the volume handle (written to handle, n bytes). source_field and
 * id as in struct sk_pv (intree_id), labels the PV's (GCE PD zones; NULL for inline volumes).
 * 0, or -1 when the source is not migratable or its id does not translate. */
int sk_csi_migration_translate(const char *source_field, const char *id, const struct sk_labels *labels,
			       const char **driver, char *handle, size_t n);
/* The same for an inline pod volume (TranslateInTreeInlineVolumeToCSI). */
int sk_csi_migration_translate_volume(const struct sk_pod_volume *v, const char **driver, char *handle, size_t n);
/* The in-tree plugin is listed in the CSINode's migrated-plugins annotation (NULL node: false). */
bool sk_csi_node_plugin_migrated(const struct sk_csi_node *n, const char *intree_plugin);

#endif
