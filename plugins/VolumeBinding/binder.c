/* VolumeBinding's binder: the pod's claims by binding state (GetPodVolumeClaims), the per-node
 * search (FindPodVolumes: bound PVs' node affinity, static matching of WaitForFirstConsumer claims
 * to available PVs, dynamic provisioning checks) and the assume cache, after upstream's
 * pkg/scheduler/framework/plugins/volumebinding/binder.go, assume_cache.go and
 * pkg/controller/volume/persistentvolume/util (FindMatchingVolume, CheckNodeAffinity).
 * Not reproduced: CSI migration of in-tree PVs (tryTranslatePVToCSI), CSIStorageCapacity
 * (a driver with storageCapacity is taken to have room), VolumeAttributesClass matching. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binder.h"

/* ---------- assume cache ---------- */

void vb_cache_init(struct vb_cache *c)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
}

static void assumed_clear(struct assumed *a)
{
	free(a->key);
	free(a->base_rv);
	free(a->claim_ns);
	free(a->claim_name);
	free(a->claim_uid);
	free(a->claim_rv);
	free(a->selected_node);
	memset(a, 0, sizeof *a);
}

void vb_cache_fini(struct vb_cache *c)
{
	for (int i = 0; i < c->n; i++)
		assumed_clear(&c->items[i]);
	free(c->items);
	pthread_mutex_destroy(&c->mu);
}

static void remove_at(struct vb_cache *c, int i)
{
	assumed_clear(&c->items[i]);
	c->items[i] = c->items[--c->n];
}

/* The live entry for key, or -1; entries the store has moved past are dropped. Lock held. */
static int find_live(struct vb_cache *c, enum sk_vobj_kind kind, const char *key, const char *rv)
{
	for (int i = 0; i < c->n; i++) {
		struct assumed *a = &c->items[i];
		if (a->kind != kind || strcmp(a->key, key) != 0)
			continue;
		if (rv && strcmp(a->base_rv, rv) != 0) {
			remove_at(c, i);
			return -1;
		}
		return i;
	}
	return -1;
}

static void pvc_key(const struct sk_pvc *pvc, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", pvc->meta.ns, pvc->meta.name);
}

void vb_pv_claim(struct vb_cache *c, const struct sk_pv *pv, const char **ns, const char **name, const char **uid)
{
	*ns = pv->claim_ns;
	*name = pv->claim_name;
	*uid = pv->claim_uid;
	pthread_mutex_lock(&c->mu);
	int i = find_live(c, SK_VOBJ_PV, pv->meta.name, pv->meta.resource_version);
	if (i >= 0) {
		*ns = sk_intern(c->items[i].claim_ns);
		*name = sk_intern(c->items[i].claim_name);
		*uid = c->items[i].claim_uid[0] ? sk_intern(c->items[i].claim_uid) : NULL;
	}
	pthread_mutex_unlock(&c->mu);
}

const char *vb_pvc_selected_node(struct vb_cache *c, const struct sk_pvc *pvc)
{
	char key[512];
	pvc_key(pvc, key, sizeof key);
	const char *r = pvc->selected_node;
	pthread_mutex_lock(&c->mu);
	int i = find_live(c, SK_VOBJ_PVC, key, pvc->meta.resource_version);
	if (i >= 0)
		r = sk_intern(c->items[i].selected_node);
	pthread_mutex_unlock(&c->mu);
	return r;
}

static struct assumed *slot(struct vb_cache *c, enum sk_vobj_kind kind, const char *key)
{
	int i = find_live(c, kind, key, NULL);
	if (i >= 0) {
		assumed_clear(&c->items[i]);
		c->items[i].kind = kind;
		return &c->items[i];
	}
	if (c->n == c->cap) {
		int nc = c->cap ? c->cap * 2 : 16;
		struct assumed *ni = realloc(c->items, sizeof *ni * (size_t)nc);
		if (!ni)
			return NULL;
		c->items = ni;
		c->cap = nc;
	}
	struct assumed *a = &c->items[c->n++];
	memset(a, 0, sizeof *a);
	a->kind = kind;
	return a;
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

int vb_assume_pv(struct vb_cache *c, const struct sk_pv *pv, const struct sk_pvc *pvc)
{
	pthread_mutex_lock(&c->mu);
	struct assumed *a = slot(c, SK_VOBJ_PV, pv->meta.name);
	int rc = -1;
	if (a) {
		a->key = dup0(pv->meta.name);
		a->base_rv = dup0(pv->meta.resource_version);
		a->claim_ns = dup0(pvc->meta.ns);
		a->claim_name = dup0(pvc->meta.name);
		a->claim_uid = dup0(pvc->meta.uid);
		a->claim_rv = dup0(pvc->meta.resource_version);
		rc = a->key && a->base_rv && a->claim_ns && a->claim_name && a->claim_uid && a->claim_rv ? 0 : -1;
		if (rc != 0)
			remove_at(c, (int)(a - c->items));
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int vb_assume_pvc(struct vb_cache *c, const struct sk_pvc *pvc, const char *node)
{
	char key[512];
	pvc_key(pvc, key, sizeof key);
	pthread_mutex_lock(&c->mu);
	struct assumed *a = slot(c, SK_VOBJ_PVC, key);
	int rc = -1;
	if (a) {
		a->key = dup0(key);
		a->base_rv = dup0(pvc->meta.resource_version);
		a->selected_node = dup0(node);
		rc = a->key && a->base_rv && a->selected_node ? 0 : -1;
		if (rc != 0)
			remove_at(c, (int)(a - c->items));
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void vb_cache_gc(struct vb_cache *c, struct sk_handle *h)
{
	pthread_mutex_lock(&c->mu);
	for (int i = 0; i < c->n;) {
		struct assumed *a = &c->items[i];
		const struct sk_vobj *cur = NULL;
		if (a->kind == SK_VOBJ_PV) {
			cur = (const struct sk_vobj *)sk_handle_get_pv(h, a->key);
		} else {
			char ns[256], name[256];
			if (sscanf(a->key, "%255[^/]/%255s", ns, name) == 2)
				cur = (const struct sk_vobj *)sk_handle_get_pvc(h, ns, name);
		}
		bool stale = !cur || strcmp(cur->resource_version, a->base_rv) != 0;
		sk_vobj_unref(cur);
		if (stale)
			remove_at(c, i); /* the last entry moved to i: look at it next */
		else
			i++;
	}
	pthread_mutex_unlock(&c->mu);
}

void vb_restore(struct vb_cache *c, enum sk_vobj_kind kind, const char *key)
{
	pthread_mutex_lock(&c->mu);
	int i = find_live(c, kind, key, NULL);
	if (i >= 0)
		remove_at(c, i);
	pthread_mutex_unlock(&c->mu);
}

/* ---------- the pod's claims ---------- */

/* IsDelayBindingMode: 1 WaitForFirstConsumer, 0 not (no class, or a class that does not exist),
 * -1 and *err when the class has no binding mode. */
static int is_delay_binding(struct sk_plugin *self, const struct sk_pvc *pvc, char **err)
{
	if (!pvc->class_name || !*pvc->class_name)
		return 0;
	struct sk_storage_class *sc = sk_handle_get_storage_class(self->handle, pvc->class_name);
	if (!sc)
		return 0;
	int r = sc->wait_for_first_consumer ? 1 : 0;
	if (!sc->binding_mode_set) {
		if (asprintf(err, "VolumeBindingMode not set for StorageClass \"%s\"", pvc->class_name) < 0)
			*err = NULL;
		r = -1;
	}
	sk_vobj_unref(sc);
	return r;
}

static int push_pvc(struct sk_pvc ***list, int *n, struct sk_pvc *p)
{
	struct sk_pvc **nl = realloc(*list, sizeof *nl * (size_t)(*n + 1));
	if (!nl)
		return -1;
	nl[(*n)++] = p;
	*list = nl;
	return 0;
}

void vb_pod_claims_free(struct pod_claims *pc)
{
	sk_vobj_list_free(pc->bound, pc->nbound);
	sk_vobj_list_free(pc->delay, pc->ndelay);
	sk_vobj_list_free(pc->pvs, pc->npvs);
	memset(pc, 0, sizeof *pc);
}

int vb_get_pod_claims(struct sk_plugin *self, struct vb_cache *c, const struct sk_pod *pod, struct pod_claims *out,
		      int *nimmediate, char **err)
{
	(void)c;
	memset(out, 0, sizeof *out);
	*nimmediate = 0;
	*err = NULL;
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC && v->source != SK_VOL_EPHEMERAL)
			continue;
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		if (!pvc) {
			if (asprintf(err, "error getting PVC \"%s/%s\": could not find v1.PersistentVolumeClaim \"%s/%s\"",
				     pod->ns, v->claim, pod->ns, v->claim) < 0)
				*err = NULL;
			vb_pod_claims_free(out);
			return -1;
		}
		if (vb_pvc_fully_bound(pvc)) {
			if (push_pvc(&out->bound, &out->nbound, pvc) != 0) {
				sk_vobj_unref(pvc);
				goto oom;
			}
			continue;
		}
		int delay = is_delay_binding(self, pvc, err);
		if (delay < 0) {
			sk_vobj_unref(pvc);
			vb_pod_claims_free(out);
			return -1;
		}
		/* Prebound claims (volumeName set, binding not complete) count as immediate ones. */
		if (delay && !pvc->volume_name) {
			if (push_pvc(&out->delay, &out->ndelay, pvc) != 0) {
				sk_vobj_unref(pvc);
				goto oom;
			}
		} else {
			(*nimmediate)++;
			sk_vobj_unref(pvc);
		}
	}
	if (out->ndelay > 0 && (out->npvs = sk_handle_list_pvs(self->handle, &out->pvs)) < 0) {
		out->npvs = 0;
		goto oom;
	}
	return 0;
oom:
	vb_pod_claims_free(out);
	*err = strdup("out of memory");
	return -1;
}

/* ---------- FindPodVolumes ---------- */

bool vb_check_node_affinity(const struct sk_pv *pv, const struct sk_node *node)
{
	if (!pv->node_affinity)
		return true;
	return kube_node_selector_matches(pv->node_affinity, "", sk_labels_get, &node->labels);
}

/* checkBoundClaims: *satisfied (node affinity), *found (every PV exists). */
static void check_bound_claims(struct sk_plugin *self, const struct pod_claims *pc, const struct sk_node *node,
			       bool *satisfied, bool *found)
{
	*satisfied = *found = true;
	for (int i = 0; i < pc->nbound; i++) {
		struct sk_pv *pv = sk_handle_get_pv(self->handle, pc->bound[i]->volume_name);
		if (!pv) {
			*found = false;
			return;
		}
		bool ok = vb_check_node_affinity(pv, node);
		sk_vobj_unref(pv);
		if (!ok) {
			*satisfied = false;
			return;
		}
	}
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* IsVolumeBoundToClaim, with the assume cache's view of the PV's claimRef. */
static bool bound_to_claim(const char *cns, const char *cname, const char *cuid, const struct sk_pvc *claim)
{
	if (!cname)
		return false;
	if (!str_eq(cname, claim->meta.name) || !str_eq(cns, claim->meta.ns))
		return false;
	return !cuid || !*cuid || str_eq(cuid, claim->meta.uid);
}

static int by_request(const void *a, const void *b)
{
	int64_t x = (*(struct sk_pvc *const *)a)->request_storage, y = (*(struct sk_pvc *const *)b)->request_storage;
	return x < y ? -1 : x > y;
}

static bool excluded(struct sk_pv *const *chosen, int n, const struct sk_pv *pv)
{
	for (int i = 0; i < n; i++)
		if (chosen[i] == pv)
			return true;
	return false;
}

/* FindMatchingVolume (scheduler path: node set, delayBinding true). */
static struct sk_pv *find_matching_volume(struct vb_cache *c, const struct sk_pvc *claim, const struct pod_claims *pc,
					  const struct sk_node *node, struct sk_pv *const *chosen, int nchosen)
{
	struct sk_pv *smallest = NULL;
	for (int i = 0; i < pc->npvs; i++) {
		struct sk_pv *pv = pc->pvs[i];
		if (strcmp(pv->class_name, claim->class_name ? claim->class_name : "") != 0)
			continue; /* ListPVs(storageClassName) */
		if (excluded(chosen, nchosen, pv))
			continue;
		const char *cns, *cname, *cuid;
		vb_pv_claim(c, pv, &cns, &cname, &cuid);
		bool to_claim = bound_to_claim(cns, cname, cuid, claim);
		if (cname && !to_claim)
			continue;
		if (pv->capacity < claim->request_storage)
			continue;
		if (pv->block_mode != claim->block_mode)
			continue;
		if (pv->meta.deleting)
			continue;
		bool affinity_ok = vb_check_node_affinity(pv, node);
		if (to_claim)
			return affinity_ok ? pv : NULL; /* a PV prebound to the claim, or nothing */
		if (strcmp(pv->phase, "Available") != 0)
			continue;
		if (claim->selector && !kube_label_selector_matches(claim->selector, sk_labels_get, &pv->labels))
			continue;
		if (!affinity_ok)
			continue;
		if ((claim->access_modes & pv->access_modes) != claim->access_modes)
			continue; /* CheckAccessModes */
		if (!smallest || smallest->capacity > pv->capacity)
			smallest = pv;
	}
	return smallest;
}

static int add_binding(struct pod_volumes *out, struct sk_pv *pv, struct sk_pvc *pvc)
{
	struct binding *nb = realloc(out->statics, sizeof *nb * (size_t)(out->nstatic + 1));
	if (!nb)
		return -1;
	out->statics = nb;
	nb[out->nstatic++] = (struct binding){ sk_vobj_ref(pv), sk_vobj_ref(pvc), NULL };
	return 0;
}

static int add_dynamic(struct pod_volumes *out, struct sk_pvc *pvc)
{
	struct sk_pvc **nd = realloc(out->dynamic, sizeof *nd * (size_t)(out->ndynamic + 1));
	if (!nd)
		return -1;
	out->dynamic = nd;
	nd[out->ndynamic++] = sk_vobj_ref(pvc);
	return 0;
}

/* checkVolumeProvisions: *satisfied, *sufficient; the claims are added to out->dynamic. */
static int check_provisions(struct sk_plugin *self, struct sk_pvc **claims, int n, const struct sk_node *node,
			    struct pod_volumes *out, bool *satisfied, bool *sufficient, char **err)
{
	*satisfied = *sufficient = true;
	for (int i = 0; i < n; i++) {
		const struct sk_pvc *claim = claims[i];
		if (!claim->class_name || !*claim->class_name) {
			if (asprintf(err, "no class for claim \"%s/%s\"", claim->meta.ns, claim->meta.name) < 0)
				*err = NULL;
			return -1;
		}
		struct sk_storage_class *sc = sk_handle_get_storage_class(self->handle, claim->class_name);
		if (!sc) {
			if (asprintf(err, "failed to find storage class \"%s\"", claim->class_name) < 0)
				*err = NULL;
			return -1;
		}
		bool can_provision = sc->provisioner && *sc->provisioner && strcmp(sc->provisioner, NOT_SUPPORTED_PROVISIONER) != 0;
		bool topology_ok = !sc->allowed_topologies ||
				   kube_node_selector_matches(sc->allowed_topologies, "", sk_labels_get, &node->labels);
		bool enough = true;
		int rc = can_provision && topology_ok
				 ? vb_has_enough_capacity(self, sc->provisioner, claim, sc->meta.name, node, &enough)
				 : 0;
		sk_vobj_unref(sc);
		if (rc != 0) {
			*err = strdup("out of memory");
			return -1;
		}
		if (!can_provision || !topology_ok) {
			*satisfied = false;
			return 0;
		}
		if (!enough) {
			*sufficient = false; /* hasEnoughCapacity logged why */
			return 0;
		}
		if (add_dynamic(out, claims[i]) != 0) {
			*err = strdup("out of memory");
			return -1;
		}
	}
	return 0;
}

void vb_pod_volumes_free(struct pod_volumes *pv)
{
	if (!pv)
		return;
	for (int i = 0; i < pv->nstatic; i++) {
		sk_vobj_unref(pv->statics[i].pv);
		sk_vobj_unref(pv->statics[i].pvc);
		free(pv->statics[i].api_rv);
	}
	free(pv->statics);
	for (int i = 0; i < pv->ndynamic; i++) {
		sk_vobj_unref(pv->dynamic[i]);
		if (pv->dynamic_api_rv)
			free(pv->dynamic_api_rv[i]);
	}
	free(pv->dynamic);
	free(pv->dynamic_api_rv);
	free(pv);
}

/* The unbound WaitForFirstConsumer claims on one node: static matches, then provisioning. */
static int find_unbound(struct sk_plugin *self, struct vb_cache *c, const struct pod_claims *pc,
			const struct sk_node *node, struct pod_volumes *out, bool *unbound_ok, bool *sufficient,
			char **err)
{
	int n = pc->ndelay, nmatch = 0, nprov = 0, nchosen = 0;
	struct sk_pvc **match = calloc((size_t)n + 1, sizeof *match), **prov = calloc((size_t)n + 1, sizeof *prov);
	struct sk_pv **chosen = calloc((size_t)n + 1, sizeof *chosen);
	int rc = -1;
	if (!match || !prov || !chosen) {
		*err = strdup("out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *sel = vb_pvc_selected_node(c, pc->delay[i]);
		if (sel) {
			if (strcmp(sel, node->name) != 0) { /* fast path: provisioning started for another node */
				*unbound_ok = false;
				rc = 0;
				goto out;
			}
			prov[nprov++] = pc->delay[i];
		} else {
			match[nmatch++] = pc->delay[i];
		}
	}
	if (nmatch > 0) {
		/* findMatchingVolumes: smallest requests first, each PV chosen once */
		qsort(match, (size_t)nmatch, sizeof *match, by_request);
		*unbound_ok = true;
		for (int i = 0; i < nmatch; i++) {
			struct sk_pv *pv = find_matching_volume(c, match[i], pc, node, chosen, nchosen);
			if (!pv) {
				prov[nprov++] = match[i];
				*unbound_ok = false;
				continue;
			}
			chosen[nchosen++] = pv;
			if (add_binding(out, pv, match[i]) != 0) {
				*err = strdup("out of memory");
				goto out;
			}
		}
	}
	if (nprov > 0 && check_provisions(self, prov, nprov, node, out, unbound_ok, sufficient, err) != 0)
		goto out;
	rc = 0;
out:
	free(match);
	free(prov);
	free(chosen);
	return rc;
}

int vb_find_pod_volumes(struct sk_plugin *self, struct vb_cache *c, const struct pod_claims *pc,
			const struct sk_node *node, struct pod_volumes **pvout, const char **reasons, int *nreasons,
			char **err)
{
	*nreasons = 0;
	*err = NULL;
	struct pod_volumes *out = calloc(1, sizeof *out);
	if (!out) {
		*err = strdup("out of memory");
		return -1;
	}
	out->node = node->name;
	bool bound_ok = true, bound_found = true, unbound_ok = true, sufficient = true;
	if (pc->nbound > 0)
		check_bound_claims(self, pc, node, &bound_ok, &bound_found);
	if (pc->ndelay > 0 && find_unbound(self, c, pc, node, out, &unbound_ok, &sufficient, err) != 0) {
		vb_pod_volumes_free(out);
		return -1;
	}
	if (!bound_ok)
		reasons[(*nreasons)++] = REASON_NODE_CONFLICT;
	if (!unbound_ok)
		reasons[(*nreasons)++] = REASON_BIND_CONFLICT;
	if (!sufficient)
		reasons[(*nreasons)++] = REASON_NOT_ENOUGH_SPACE;
	if (!bound_found)
		reasons[(*nreasons)++] = REASON_PV_NOT_EXIST;
	*pvout = out;
	return 0;
}
