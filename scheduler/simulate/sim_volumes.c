/* simulate's storage objects (sim_volumes.h): the documents of the cluster file kept as JSON
 * beside their decoded views, and the merge patches of VolumeBinding's PreBind applied to both,
 * followed at once by what the PV controller would do (docs/simulate.md): a PV given a claimRef
 * is bound to that claim; a claim given volume.kubernetes.io/selected-node is provisioned (a CSI
 * PV "pvc-<claim uid>" of its class's provisioner and the requested size) and bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/simulate/sim_volumes.h"

struct doc {
	enum sk_vobj_kind kind;
	char *ns, *name;
	cJSON *obj;
};

struct sk_sim_volumes {
	struct sk_volume_store *store;
	int n, cap;
	struct doc *docs;
	unsigned long long rv; /* the next resourceVersion */
};

bool sk_sim_is_storage_kind(const char *kind)
{
	static const char *const kinds[] = { "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
					     "CSIDriver", "CSIStorageCapacity", "VolumeAttachment", NULL };
	for (int i = 0; kind && kinds[i]; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

struct sk_sim_volumes *sk_sim_volumes_new(void)
{
	struct sk_sim_volumes *v = calloc(1, sizeof *v);
	if (!v || !(v->store = sk_volume_store_new())) {
		free(v);
		return NULL;
	}
	v->rv = 1000;
	return v;
}

void sk_sim_volumes_free(struct sk_sim_volumes *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		free(v->docs[i].ns);
		free(v->docs[i].name);
		cJSON_Delete(v->docs[i].obj);
	}
	free(v->docs);
	sk_volume_store_free(v->store);
	free(v);
}

struct sk_volume_store *sk_sim_volumes_store(struct sk_sim_volumes *v)
{
	return v->store;
}

static struct doc *find(struct sk_sim_volumes *v, enum sk_vobj_kind kind, const char *ns, const char *name)
{
	for (int i = 0; i < v->n; i++)
		if (v->docs[i].kind == kind && strcmp(v->docs[i].name, name) == 0 &&
		    ((kind != SK_VOBJ_PVC && kind != SK_VOBJ_CSI_STORAGE_CAPACITY) ||
		     strcmp(v->docs[i].ns, ns ? ns : "") == 0))
			return &v->docs[i];
	return NULL;
}

static cJSON *meta(cJSON *o)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	return cJSON_IsObject(m) ? m : cJSON_AddObjectToObject(o, "metadata");
}

static cJSON *sub(cJSON *o, const char *k)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsObject(c)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		c = cJSON_AddObjectToObject(o, k);
	}
	return c;
}

static void set(cJSON *o, const char *k, const char *val)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddStringToObject(o, k, val);
}

/* Re-decodes d->obj into the store at a new resourceVersion. */
static int commit(struct sk_sim_volumes *v, struct doc *d, char **err)
{
	char rv[32];
	snprintf(rv, sizeof rv, "%llu", v->rv++);
	set(meta(d->obj), "resourceVersion", rv);
	return sk_volume_store_put_json(v->store, d->kind, d->obj, NULL, NULL, err);
}

static struct doc *add_doc(struct sk_sim_volumes *v, enum sk_vobj_kind kind, cJSON *obj)
{
	if (v->n == v->cap) {
		int nc = v->cap ? v->cap * 2 : 16;
		struct doc *nd = realloc(v->docs, sizeof *nd * (size_t)nc);
		if (!nd)
			return NULL;
		v->docs = nd;
		v->cap = nc;
	}
	const char *ns = kube_meta_namespace(obj), *name = kube_meta_name(obj);
	struct doc *d = &v->docs[v->n];
	d->kind = kind;
	d->ns = strdup(ns ? ns : "");
	d->name = strdup(name ? name : "");
	d->obj = obj;
	if (!d->ns || !d->name) {
		free(d->ns);
		free(d->name);
		return NULL;
	}
	v->n++;
	return d;
}

int sk_sim_volumes_add(struct sk_sim_volumes *v, const cJSON *obj, char **err)
{
	cJSON *copy = cJSON_Duplicate(obj, 1);
	if (!copy)
		return kube_errf(err, "out of memory");
	/* what the API server would have given it: a namespace (claims), a uid */
	cJSON *m = meta(copy);
	const char *kind = kube_obj_get_string(copy, "kind");
	if (kind && (strcmp(kind, "PersistentVolumeClaim") == 0 || strcmp(kind, "CSIStorageCapacity") == 0) &&
	    !kube_meta_namespace(copy))
		set(m, "namespace", "default");
	if (!kube_meta_uid(copy)) {
		char uid[300];
		snprintf(uid, sizeof uid, "sim-%s-%s", kube_meta_namespace(copy) ? kube_meta_namespace(copy) : "",
			 kube_meta_name(copy) ? kube_meta_name(copy) : "");
		set(m, "uid", uid);
	}
	struct sk_vobj *view = NULL;
	if (sk_volume_store_put_json(v->store, 0, copy, &view, NULL, err) != 0) {
		cJSON_Delete(copy);
		return -1;
	}
	enum sk_vobj_kind k = view->kind;
	sk_vobj_unref(view);
	struct doc *d = add_doc(v, k, copy);
	if (!d) {
		cJSON_Delete(copy);
		return kube_errf(err, "out of memory");
	}
	return commit(v, d, err);
}

/* RFC 7386 */
static void merge_patch(cJSON *target, const cJSON *patch)
{
	for (const cJSON *p = patch->child; p; p = p->next) {
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
		} else if (cJSON_IsObject(p)) {
			cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
			if (!cJSON_IsObject(t)) {
				cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
				t = cJSON_AddObjectToObject(target, p->string);
			}
			merge_patch(t, p);
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
			cJSON_AddItemToObject(target, p->string, cJSON_Duplicate(p, 1));
		}
	}
}

/* Binds claim and pv (both documents) as the PV controller does. */
static int bind(struct sk_sim_volumes *v, struct doc *claim, struct doc *pv, char **err)
{
	cJSON *ref = sub(sub(pv->obj, "spec"), "claimRef");
	set(ref, "namespace", claim->ns);
	set(ref, "name", claim->name);
	set(ref, "uid", kube_meta_uid(claim->obj) ? kube_meta_uid(claim->obj) : "");
	set(sub(pv->obj, "status"), "phase", "Bound");
	cJSON *cspec = sub(claim->obj, "spec");
	set(cspec, "volumeName", pv->name);
	set(sub(meta(claim->obj), "annotations"), "pv.kubernetes.io/bind-completed", "yes");
	set(sub(claim->obj, "status"), "phase", "Bound");
	if (commit(v, pv, err) != 0)
		return -1;
	return commit(v, claim, err);
}

static int provision(struct sk_sim_volumes *v, struct doc *claim, char **err)
{
	const char *cls = kube_obj_get_string(claim->obj, "spec.storageClassName");
	struct doc *sc = cls ? find(v, SK_VOBJ_STORAGE_CLASS, NULL, cls) : NULL;
	const char *prov = sc ? kube_obj_get_string(sc->obj, "provisioner") : NULL;
	if (!prov || strcmp(prov, "kubernetes.io/no-provisioner") == 0)
		return kube_errf(err, "simulate: storage class \"%s\" of claim %s/%s cannot provision", cls ? cls : "",
				 claim->ns, claim->name);
	const char *size = kube_obj_get_string(claim->obj, "spec.resources.requests.storage");
	char name[320];
	snprintf(name, sizeof name, "pvc-%s", kube_meta_uid(claim->obj) ? kube_meta_uid(claim->obj) : claim->name);
	cJSON *pv = cJSON_CreateObject();
	cJSON_AddStringToObject(pv, "kind", "PersistentVolume");
	cJSON_AddStringToObject(meta(pv), "name", name);
	cJSON *spec = sub(pv, "spec");
	cJSON_AddStringToObject(spec, "storageClassName", cls);
	cJSON_AddStringToObject(sub(spec, "capacity"), "storage", size ? size : "0");
	const cJSON *modes = kube_obj_get(claim->obj, "spec.accessModes");
	if (modes)
		cJSON_AddItemToObject(spec, "accessModes", cJSON_Duplicate(modes, 1));
	cJSON *csi = sub(spec, "csi");
	cJSON_AddStringToObject(csi, "driver", prov);
	cJSON_AddStringToObject(csi, "volumeHandle", name);
	long ci = claim - v->docs; /* add_doc may move the array */
	struct doc *d = add_doc(v, SK_VOBJ_PV, pv);
	if (!d) {
		cJSON_Delete(pv);
		return kube_errf(err, "out of memory");
	}
	claim = &v->docs[ci];
	set(sub(meta(claim->obj), "annotations"), "volume.kubernetes.io/storage-provisioner", prov);
	return bind(v, claim, d, err);
}

/* "/api/v1/persistentvolumes/<name>" or "/api/v1/namespaces/<ns>/persistentvolumeclaims/<name>". */
static struct doc *doc_of_path(struct sk_sim_volumes *v, const char *path)
{
	char ns[256], name[256];
	if (sscanf(path, "/api/v1/persistentvolumes/%255[^/?]", name) == 1)
		return find(v, SK_VOBJ_PV, NULL, name);
	if (sscanf(path, "/api/v1/namespaces/%255[^/]/persistentvolumeclaims/%255[^/?]", ns, name) == 2)
		return find(v, SK_VOBJ_PVC, ns, name);
	return NULL;
}

int sk_sim_volumes_patch(struct sk_sim_volumes *v, const char *path, const cJSON *patch, cJSON **out,
			 bool *conflict, char **err)
{
	*conflict = false;
	struct doc *d = doc_of_path(v, path);
	if (!d)
		return kube_errf(err, "PATCH %s: not found in the cluster file", path);
	const char *want_rv = kube_obj_get_string(patch, "metadata.resourceVersion");
	const char *have_rv = kube_meta_resource_version(d->obj);
	if (want_rv && have_rv && strcmp(want_rv, have_rv) != 0) {
		*conflict = true;
		return kube_errf(err, "PATCH %s: Operation cannot be fulfilled: the object has been modified", path);
	}
	long di = d - v->docs; /* provisioning may move the array */
	cJSON *before = cJSON_Duplicate(d->obj, 1);
	merge_patch(d->obj, patch);
	int rc = 0;
	if (d->kind == SK_VOBJ_PV) {
		const char *cns = kube_obj_get_string(d->obj, "spec.claimRef.namespace");
		const char *cname = kube_obj_get_string(d->obj, "spec.claimRef.name");
		struct doc *claim = cname ? find(v, SK_VOBJ_PVC, cns, cname) : NULL;
		rc = claim ? bind(v, claim, d, err) : commit(v, d, err);
	} else if (d->kind == SK_VOBJ_PVC && kube_meta_annotation(d->obj, "volume.kubernetes.io/selected-node") &&
		   !kube_obj_get_string(d->obj, "spec.volumeName")) {
		rc = provision(v, d, err);
	} else {
		rc = commit(v, d, err);
	}
	d = &v->docs[di];
	if (rc != 0) { /* a patch that does not decode leaves the object as it was */
		cJSON_Delete(d->obj);
		d->obj = before;
		return -1;
	}
	cJSON_Delete(before);
	if (out)
		*out = cJSON_Duplicate(d->obj, 1);
	return 0;
}
