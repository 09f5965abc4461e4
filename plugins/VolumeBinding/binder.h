/* VolumeBinding's binder (pkg/scheduler/framework/plugins/volumebinding/binder.go) and assume cache
 * (assume_cache.go), private to the plugin's folder. */
#ifndef SK_PLUGIN_VOLUME_BINDING_BINDER_H
#define SK_PLUGIN_VOLUME_BINDING_BINDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedkit/plugin.h"
#include "schedkit/volume.h"

#define REASON_BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define REASON_NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity" /* v1.33+ wording */
#define REASON_NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define REASON_PV_NOT_EXIST "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define NOT_SUPPORTED_PROVISIONER "kubernetes.io/no-provisioner"

/* The assume cache: what Reserve assumed about a PV (bound to a claim) or a PVC (a selected node)
 * before the API has it. An entry applies while the store still holds the object at the
 * resourceVersion it was assumed on; a newer object from the informer supersedes it, as upstream's
 * assume cache replaces an assumed object with a newer informer one. */
struct assumed {
	enum sk_vobj_kind kind;
	char *key;                /* PV name, or "ns/name" of a PVC */
	char *base_rv;            /* the object's resourceVersion when assumed */
	char *claim_ns, *claim_name, *claim_uid, *claim_rv; /* PV: the claim it is assumed bound to */
	char *selected_node;      /* PVC: the node assumed selected */
};

struct vb_cache {
	pthread_mutex_t mu;
	int n, cap;
	struct assumed *items;
};

/* A claim's binding to a PV chosen at Filter (BindingInfo). */
struct binding {
	struct sk_pv *pv;         /* the PV as found (reference) */
	struct sk_pvc *pvc;       /* reference */
	char *api_rv;             /* the PV's resourceVersion the API returned to PreBind's patch */
};

/* PodVolumes: what Filter found for one node. */
struct pod_volumes {
	const char *node;         /* interned */
	int nstatic;
	struct binding *statics;
	int ndynamic;
	struct sk_pvc **dynamic;  /* claims to provision (references) */
	char **dynamic_api_rv;    /* their resourceVersions after PreBind's patch */
};

/* PodVolumeClaims: the pod's claims by kind, found at PreFilter. */
struct pod_claims {
	int nbound, ndelay;
	struct sk_pvc **bound;    /* fully bound (volumeName and bind-completed) */
	struct sk_pvc **delay;    /* unbound, WaitForFirstConsumer */
	int npvs;
	struct sk_pv **pvs;       /* every PV (for static matching), with assumed bindings applied */
};

void vb_cache_init(struct vb_cache *c);
void vb_cache_fini(struct vb_cache *c);
/* The claim a PV is (assumed) bound to: ns, name and uid are NULL when none. Strings stay valid while
 * pv is held (assumed ones are interned). */
void vb_pv_claim(struct vb_cache *c, const struct sk_pv *pv, const char **ns, const char **name, const char **uid);
/* The (assumed) selected node of a claim, or NULL. */
const char *vb_pvc_selected_node(struct vb_cache *c, const struct sk_pvc *pvc);
int vb_assume_pv(struct vb_cache *c, const struct sk_pv *pv, const struct sk_pvc *pvc);
int vb_assume_pvc(struct vb_cache *c, const struct sk_pvc *pvc, const char *node);
void vb_restore(struct vb_cache *c, enum sk_vobj_kind kind, const char *key);
/* Drops the entries the store has moved past (or whose object is gone), so the cache holds only
 * assumptions still in flight; Reserve calls it. */
void vb_cache_gc(struct vb_cache *c, struct sk_handle *h);

/* isPVCFullyBound */
static inline bool vb_pvc_fully_bound(const struct sk_pvc *pvc)
{
	return pvc->volume_name && pvc->bind_completed;
}

/* GetPodVolumeClaims: fills *out (vb_pod_claims_free). 0, or -1 and *err (an Error status text). */
int vb_get_pod_claims(struct sk_plugin *self, struct vb_cache *c, const struct sk_pod *pod, struct pod_claims *out,
		      int *nimmediate, char **err);
void vb_pod_claims_free(struct pod_claims *pc);
/* FindPodVolumes on one node: *pv gets the node's PodVolumes (vb_pod_volumes_free), reasons the
 * REASON_* that apply (up to 4). 0, or -1 and *err. */
int vb_find_pod_volumes(struct sk_plugin *self, struct vb_cache *c, const struct pod_claims *pc,
			const struct sk_node *node, struct pod_volumes **pv, const char **reasons, int *nreasons,
			char **err);
void vb_pod_volumes_free(struct pod_volumes *pv);
/* hasEnoughCapacity (capacity.c): *sufficient unless the claim's provisioner is a CSI driver with
 * spec.storageCapacity and no CSIStorageCapacity of class_name accessible from node holds the
 * requested size. 0, or -1 (out of memory). */
int vb_has_enough_capacity(struct sk_plugin *self, const char *provisioner, const struct sk_pvc *claim,
			   const char *class_name, const struct sk_node *node, bool *sufficient);
/* CheckNodeAffinity: labels only, as upstream builds a node without a name for the check. */
bool vb_check_node_affinity(const struct sk_pv *pv, const struct sk_node *node);

#endif
