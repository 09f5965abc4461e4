/* pvcontroller.c — what kube-controller-manager's PV controller
 * (pkg/controller/volume/persistentvolume/pv_controller.go) and a CSI external-provisioner do,
 * reduced to what scheduling tests need, run on the controllers' thread after any change to a
 * claim, volume or class:
 * - a new PV without a phase becomes Available;
 * - a claim whose PV points back at it (spec.claimRef: the scheduler's static binding, or a user's
 *   prebinding) or that names a free PV (spec.volumeName) is bound: the PV gets claimRef (uid
 *   filled) and phase Bound, the claim volumeName, pv.kubernetes.io/bind-completed,
 *   capacity and access modes, and phase Bound;
 * - an unbound claim of an Immediate class (or without a class) is bound to the smallest
 *   Available PV that matches (class, capacity, access modes, volume mode, selector), else
 *   provisioned when its class has a provisioner;
 * - a WaitForFirstConsumer claim is provisioned once volume.kubernetes.io/selected-node is set:
 *   a CSI PV "pvc-<claim uid>" of the requested size whose node affinity is the selected node's
 *   zone (topology.kubernetes.io/zone) or, without one, its hostname; a class with the
 *   kubernetes.io/no-provisioner provisioner never provisions.
 * Not done: reclaiming (Released, Delete/Retain), resizing, deletion protection finalizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"
#include "kube/selector.h"
#include "e2e/apiserver/internal.h"

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_PROVISIONER "volume.kubernetes.io/storage-provisioner"
#define ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
#define NO_PROVISIONER "kubernetes.io/no-provisioner"

static const char *gs(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static cJSON *child(cJSON *o, const char *k)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsObject(c)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		c = cJSON_AddObjectToObject(o, k);
	}
	return c;
}

static void set_str(cJSON *o, const char *k, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, cJSON_CreateString(v));
	else
		cJSON_AddStringToObject(o, k, v);
}

static void set_item(cJSON *o, const char *k, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
	else
		cJSON_AddItemToObject(o, k, v);
}

static const char *annotation(const cJSON *o, const char *k)
{
	return gs(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "annotations"), k);
}

/* GetPersistentVolume(Claim)Class */
static const char *class_of(const cJSON *o)
{
	const char *a = annotation(o, "volume.beta.kubernetes.io/storage-class");
	if (a)
		return a;
	const char *c = gs(cJSON_GetObjectItemCaseSensitive(o, "spec"), "storageClassName");
	return c ? c : "";
}

static int64_t storage(const cJSON *list)
{
	const char *q = gs(list, "storage");
	struct kube_quantity qq;
	char *err = NULL;
	if (!q || kube_quantity_parse(q, &qq, &err) != 0) {
		free(err);
		return 0;
	}
	return kube_quantity_value(&qq);
}

struct objs {
	size_t n, cap;
	struct apis_obj **v;
};

static void collect(void *u, struct apis_obj *o)
{
	struct objs *l = u;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 32;
		struct apis_obj **nv = realloc(l->v, nc * sizeof *nv);
		if (!nv)
			return;
		l->v = nv;
		l->cap = nc;
	}
	apis_obj_ref(o);
	l->v[l->n++] = o;
}

static void objs_clear(struct objs *l)
{
	for (size_t i = 0; i < l->n; i++)
		apis_obj_unref(l->v[i]);
	l->n = 0;
}

struct pvc_state {
	struct apis_server *s;
	struct objs pvs;
};

static struct apis_obj *current(struct apis_rdef *rd, const struct apis_obj *o)
{
	return apis_store_get(rd, o->ns, o->name);
}

/* Binds claim (parsed, consumed) and PV: both objects updated, the PV first. */
static void bind(struct apis_server *s, struct apis_obj *claim_o, cJSON *claim, struct apis_obj *pv_o)
{
	cJSON *pv = apis_obj_parse(pv_o);
	if (!pv) {
		cJSON_Delete(claim);
		return;
	}
	cJSON *pspec = child(pv, "spec"), *ref = cJSON_GetObjectItemCaseSensitive(pspec, "claimRef");
	if (!cJSON_IsObject(ref)) {
		set_str(child(child(pv, "metadata"), "annotations"), ANN_BOUND_BY_CONTROLLER, "yes");
		ref = child(pspec, "claimRef");
	}
	set_str(ref, "kind", "PersistentVolumeClaim");
	set_str(ref, "apiVersion", "v1");
	set_str(ref, "namespace", claim_o->ns);
	set_str(ref, "name", claim_o->name);
	set_str(ref, "uid", claim_o->uid);
	set_str(child(pv, "status"), "phase", "Bound");
	struct apis_obj *npv = apis_update_internal(s, s->rd_pvs, pv_o, pv);
	if (!npv) {
		cJSON_Delete(claim);
		return;
	}
	cJSON *cspec = child(claim, "spec"), *cmeta = child(claim, "metadata"), *ann = child(cmeta, "annotations");
	if (!gs(cspec, "volumeName") || !*gs(cspec, "volumeName")) {
		set_str(cspec, "volumeName", npv->name);
		set_str(ann, ANN_BOUND_BY_CONTROLLER, "yes");
	}
	set_str(ann, ANN_BIND_COMPLETED, "yes");
	cJSON *nst = apis_obj_parse(npv), *st = child(claim, "status");
	set_str(st, "phase", "Bound");
	const cJSON *modes = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nst, "spec"), "accessModes");
	const cJSON *cap = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nst, "spec"), "capacity");
	if (modes)
		set_item(st, "accessModes", cJSON_Duplicate(modes, 1));
	if (cap)
		set_item(st, "capacity", cJSON_Duplicate(cap, 1));
	cJSON_Delete(nst);
	apis_update_internal(s, s->rd_pvcs, claim_o, claim);
}

static bool modes_offered(const cJSON *claim_spec, const cJSON *pv_spec)
{
	const cJSON *want = cJSON_GetObjectItemCaseSensitive(claim_spec, "accessModes"), *m;
	const cJSON *have = cJSON_GetObjectItemCaseSensitive(pv_spec, "accessModes");
	cJSON_ArrayForEach(m, want)
	{
		bool found = false;
		const cJSON *h;
		cJSON_ArrayForEach(h, have) found |= cJSON_IsString(h) && cJSON_IsString(m) && !strcmp(h->valuestring, m->valuestring);
		if (!found)
			return false;
	}
	return true;
}

static bool same_mode(const cJSON *a, const cJSON *b)
{
	const char *x = gs(a, "volumeMode"), *y = gs(b, "volumeMode");
	return strcmp(x ? x : "Filesystem", y ? y : "Filesystem") == 0;
}

/* The PV pointing at the claim (claimRef namespace/name, uid empty or the claim's), or the one it
 * names in volumeName when that one is free; NULL otherwise. */
static struct apis_obj *prebound_pv(struct pvc_state *st, const struct apis_obj *claim_o, const cJSON *claim)
{
	const char *vn = gs(cJSON_GetObjectItemCaseSensitive(claim, "spec"), "volumeName");
	for (size_t i = 0; i < st->pvs.n; i++) {
		cJSON *pv = apis_obj_parse(st->pvs.v[i]);
		const cJSON *ref = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef");
		bool named = vn && !strcmp(vn, st->pvs.v[i]->name);
		bool points = ref && gs(ref, "name") && !strcmp(gs(ref, "name"), claim_o->name) && gs(ref, "namespace") &&
			      !strcmp(gs(ref, "namespace"), claim_o->ns) && (!gs(ref, "uid") || !*gs(ref, "uid") ||
									   !strcmp(gs(ref, "uid"), claim_o->uid));
		cJSON_Delete(pv);
		if (points || (named && !ref))
			return st->pvs.v[i];
	}
	return NULL;
}

/* findBestMatchForClaim: the smallest Available, unclaimed PV that fits. */
static struct apis_obj *best_match(struct pvc_state *st, const cJSON *claim)
{
	const cJSON *cspec = cJSON_GetObjectItemCaseSensitive(claim, "spec");
	int64_t want = storage(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cspec, "resources"), "requests"));
	struct kube_label_selector *sel = NULL;
	const cJSON *sj = cJSON_GetObjectItemCaseSensitive(cspec, "selector");
	char *err = NULL;
	if (sj && kube_label_selector_from_json(sj, &sel, &err) != 0) {
		free(err);
		return NULL;
	}
	struct apis_obj *best = NULL;
	int64_t best_size = 0;
	for (size_t i = 0; i < st->pvs.n; i++) {
		cJSON *pv = apis_obj_parse(st->pvs.v[i]);
		const cJSON *pspec = cJSON_GetObjectItemCaseSensitive(pv, "spec");
		const char *phase = gs(cJSON_GetObjectItemCaseSensitive(pv, "status"), "phase");
		int64_t size = storage(cJSON_GetObjectItemCaseSensitive(pspec, "capacity"));
		bool ok = !cJSON_GetObjectItemCaseSensitive(pspec, "claimRef") && phase && !strcmp(phase, "Available") &&
			  !st->pvs.v[i]->deleting && !strcmp(class_of(pv), class_of(claim)) && size >= want &&
			  modes_offered(cspec, pspec) && same_mode(cspec, pspec) &&
			  (!sel || kube_label_selector_matches_json(sel, cJSON_GetObjectItemCaseSensitive(
									    cJSON_GetObjectItemCaseSensitive(pv, "metadata"), "labels")));
		cJSON_Delete(pv);
		if (ok && (!best || size < best_size)) {
			best = st->pvs.v[i];
			best_size = size;
		}
	}
	kube_label_selector_free(sel);
	return best;
}

/* The node affinity of a volume provisioned for node: its zone, else its hostname. */
static cJSON *affinity_for(struct apis_server *s, const char *node)
{
	struct apis_obj *n = apis_store_get(s->rd_nodes, NULL, node);
	cJSON *no = n ? apis_obj_parse(n) : NULL;
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(no, "metadata"), "labels");
	const char *zone = gs(labels, "topology.kubernetes.io/zone"), *host = gs(labels, "kubernetes.io/hostname");
	const char *key = zone ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
	const char *val = zone ? zone : host ? host : node;
	cJSON *aff = cJSON_CreateObject();
	cJSON *terms = cJSON_AddArrayToObject(cJSON_AddObjectToObject(aff, "required"), "nodeSelectorTerms");
	cJSON *term = cJSON_CreateObject(), *exprs = cJSON_AddArrayToObject(term, "matchExpressions");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "key", key);
	cJSON_AddStringToObject(e, "operator", "In");
	cJSON_AddItemToObject(e, "values", cJSON_CreateStringArray(&val, 1));
	cJSON_AddItemToArray(exprs, e);
	cJSON_AddItemToArray(terms, term);
	cJSON_Delete(no);
	return aff;
}

/* Provisions a PV for the claim (consumed) and binds them. node may be NULL (Immediate). */
static void provision(struct pvc_state *st, struct apis_obj *claim_o, cJSON *claim, const char *provisioner,
		      const cJSON *sc, const char *node)
{
	struct apis_server *s = st->s;
	char name[128];
	snprintf(name, sizeof name, "pvc-%s", claim_o->uid);
	struct apis_obj *pv_o = apis_store_get(s->rd_pvs, NULL, name);
	if (!pv_o) {
		const cJSON *cspec = cJSON_GetObjectItemCaseSensitive(claim, "spec");
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cspec, "resources"), "requests");
		cJSON *pv = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(pv, "metadata");
		cJSON_AddStringToObject(pv, "apiVersion", "v1");
		cJSON_AddStringToObject(pv, "kind", "PersistentVolume");
		cJSON_AddStringToObject(md, "name", name);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), ANN_PROVISIONED_BY, provisioner);
		cJSON *spec = cJSON_AddObjectToObject(pv, "spec");
		cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "capacity"), "storage",
					gs(req, "storage") ? gs(req, "storage") : "1Gi");
		const cJSON *modes = cJSON_GetObjectItemCaseSensitive(cspec, "accessModes");
		cJSON_AddItemToObject(spec, "accessModes", modes ? cJSON_Duplicate(modes, 1) : cJSON_CreateArray());
		cJSON_AddStringToObject(spec, "storageClassName", class_of(claim));
		cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", gs(sc, "reclaimPolicy") ? gs(sc, "reclaimPolicy") : "Delete");
		cJSON_AddStringToObject(spec, "volumeMode", gs(cspec, "volumeMode") ? gs(cspec, "volumeMode") : "Filesystem");
		cJSON *csi = cJSON_AddObjectToObject(spec, "csi");
		cJSON_AddStringToObject(csi, "driver", provisioner);
		cJSON_AddStringToObject(csi, "volumeHandle", name);
		cJSON *ref = cJSON_AddObjectToObject(spec, "claimRef");
		cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
		cJSON_AddStringToObject(ref, "apiVersion", "v1");
		cJSON_AddStringToObject(ref, "namespace", claim_o->ns);
		cJSON_AddStringToObject(ref, "name", claim_o->name);
		cJSON_AddStringToObject(ref, "uid", claim_o->uid);
		if (node)
			cJSON_AddItemToObject(spec, "nodeAffinity", affinity_for(s, node));
		cJSON_AddStringToObject(cJSON_AddObjectToObject(pv, "status"), "phase", "Pending");
		pv_o = apis_create_internal(s, s->rd_pvs, "", pv);
	}
	if (!pv_o) {
		cJSON_Delete(claim);
		return;
	}
	set_str(child(child(claim, "metadata"), "annotations"), ANN_PROVISIONER, provisioner);
	bind(s, claim_o, claim, pv_o);
}

static void sync_claim(struct pvc_state *st, struct apis_obj *claim_o)
{
	struct apis_server *s = st->s;
	cJSON *claim = apis_obj_parse(claim_o);
	if (!claim)
		return;
	const cJSON *cspec = cJSON_GetObjectItemCaseSensitive(claim, "spec");
	const char *phase = gs(cJSON_GetObjectItemCaseSensitive(claim, "status"), "phase");
	bool completed = annotation(claim, ANN_BIND_COMPLETED) && gs(cspec, "volumeName");
	if (completed && phase && !strcmp(phase, "Bound")) {
		cJSON_Delete(claim);
		return;
	}
	struct apis_obj *pv = prebound_pv(st, claim_o, claim);
	if (pv) {
		bind(s, claim_o, claim, pv);
		return;
	}
	if (gs(cspec, "volumeName") && *gs(cspec, "volumeName")) { /* its PV is not there (yet) */
		cJSON_Delete(claim);
		return;
	}
	const char *cls = class_of(claim);
	struct apis_obj *sc_o = *cls ? apis_store_get(s->rd_scs, NULL, cls) : NULL;
	cJSON *sc = sc_o ? apis_obj_parse(sc_o) : NULL;
	const char *mode = gs(sc, "volumeBindingMode"), *prov = gs(sc, "provisioner");
	bool wffc = mode && !strcmp(mode, "WaitForFirstConsumer");
	bool can_provision = prov && *prov && strcmp(prov, NO_PROVISIONER) != 0;
	const char *node = annotation(claim, ANN_SELECTED_NODE);
	char prov_copy[256] = "", node_copy[256] = "";
	snprintf(prov_copy, sizeof prov_copy, "%s", prov ? prov : "");
	snprintf(node_copy, sizeof node_copy, "%s", node ? node : "");
	if (wffc) {
		if (node && can_provision)
			provision(st, claim_o, claim, prov_copy, sc, node_copy);
		else
			cJSON_Delete(claim); /* the scheduler decides */
	} else {
		struct apis_obj *match = best_match(st, claim);
		if (match)
			bind(s, claim_o, claim, match);
		else if (can_provision)
			provision(st, claim_o, claim, prov_copy, sc, NULL);
		else
			cJSON_Delete(claim);
	}
	cJSON_Delete(sc);
}

void apis_pv_controller_run(struct apis_server *s)
{
	if (!s->rd_pvcs || !s->rd_pvs || !s->rd_scs)
		return;
	pthread_rwlock_wrlock(&s->lock);
	struct pvc_state st = { .s = s };
	/* New volumes become Available. */
	apis_store_each(s->rd_pvs, NULL, collect, &st.pvs);
	for (size_t i = 0; i < st.pvs.n; i++) {
		cJSON *pv = apis_obj_parse(st.pvs.v[i]);
		const char *phase = gs(cJSON_GetObjectItemCaseSensitive(pv, "status"), "phase");
		bool claimed = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef") != NULL;
		if (pv && !phase && !claimed) {
			set_str(child(pv, "status"), "phase", "Available");
			apis_update_internal(s, s->rd_pvs, st.pvs.v[i], pv);
		} else {
			cJSON_Delete(pv);
		}
	}
	objs_clear(&st.pvs);
	apis_store_each(s->rd_pvs, NULL, collect, &st.pvs);
	struct objs claims = { 0 };
	apis_store_each(s->rd_pvcs, NULL, collect, &claims);
	for (size_t i = 0; i < claims.n; i++) {
		struct apis_obj *c = current(s->rd_pvcs, claims.v[i]);
		if (!c || c->deleting)
			continue;
		sync_claim(&st, c);
		/* bindings change the PVs: look again for the next claim */
		objs_clear(&st.pvs);
		apis_store_each(s->rd_pvs, NULL, collect, &st.pvs);
	}
	objs_clear(&claims);
	objs_clear(&st.pvs);
	free(claims.v);
	free(st.pvs.v);
	pthread_rwlock_unlock(&s->lock);
}
