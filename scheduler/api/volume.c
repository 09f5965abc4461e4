/* Storage objects -> the views of schedkit/volume.h: PersistentVolumeClaim, PersistentVolume,
 * StorageClass (storage.k8s.io/v1), CSINode and CSIDriver. Each view is one malloc'd struct with
 * a few owned arrays, reference counted through its struct sk_vobj header; every error names the
 * object and the field ("persistentvolumeclaim default/data: spec.accessModes[0]: Unsupported
 * value: \"Sometimes\""). Defaults the API server applies (volumeMode, attachRequired) are applied
 * again here so a hand-written simulate file reads as the server would serve it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/nodeselector.h"
#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/selector.h"
#include "kube/util.h"
#include "schedkit/volume.h"

struct vctx {
	const char *kind;   /* lower-case kind for messages */
	char objname[300];
	char **err;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void vfail(struct vctx *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = true;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	kube_errf(c->err, "%s %s: %s", c->kind, c->objname[0] ? c->objname : "<unnamed>", msg);
}

static const char *vstr(struct vctx *c, const cJSON *o, const char *field, const char *path)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
	if (!it || cJSON_IsNull(it))
		return NULL;
	if (!cJSON_IsString(it)) {
		vfail(c, "%s: must be a string", path);
		return NULL;
	}
	return it->valuestring;
}

static const char *vintern(struct vctx *c, const char *s)
{
	if (!s)
		return NULL;
	const char *r = sk_intern(s);
	if (!r)
		vfail(c, "out of memory");
	return r;
}

static const cJSON *vobj(struct vctx *c, const cJSON *o, const char *field, const char *path)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
	if (!it || cJSON_IsNull(it))
		return NULL;
	if (!cJSON_IsObject(it)) {
		vfail(c, "%s: must be an object", path);
		return NULL;
	}
	return it;
}

static const cJSON *varr(struct vctx *c, const cJSON *o, const char *field, const char *path)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
	if (!it || cJSON_IsNull(it))
		return NULL;
	if (!cJSON_IsArray(it)) {
		vfail(c, "%s: must be an array", path);
		return NULL;
	}
	return it;
}

static bool vbool(struct vctx *c, const cJSON *o, const char *field, const char *path, bool dflt)
{
	const cJSON *it = o ? cJSON_GetObjectItemCaseSensitive(o, field) : NULL;
	if (!it || cJSON_IsNull(it))
		return dflt;
	if (!cJSON_IsBool(it)) {
		vfail(c, "%s: must be a boolean", path);
		return dflt;
	}
	return cJSON_IsTrue(it);
}

static char *vdup(struct vctx *c, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		vfail(c, "out of memory");
	return d;
}

/* metadata: name (required), namespace (namespaced kinds), uid, resourceVersion, deletionTimestamp. */
static const cJSON *decode_meta(struct vctx *c, const cJSON *obj, struct sk_vobj *m, enum sk_vobj_kind kind,
				bool namespaced)
{
	m->refcount = 1;
	m->kind = kind;
	if (!cJSON_IsObject(obj)) {
		vfail(c, "must be a JSON object");
		return NULL;
	}
	const cJSON *meta = vobj(c, obj, "metadata", "metadata");
	const char *name = vstr(c, meta, "name", "metadata.name");
	const char *ns = namespaced ? vstr(c, meta, "namespace", "metadata.namespace") : NULL;
	if (c->failed)
		return NULL;
	if (namespaced)
		snprintf(c->objname, sizeof c->objname, "%s/%s", ns ? ns : "", name ? name : "");
	else
		snprintf(c->objname, sizeof c->objname, "%s", name ? name : "");
	if (!name || !*name) {
		vfail(c, "metadata.name: Required value");
		return NULL;
	}
	if (namespaced && (!ns || !*ns)) {
		vfail(c, "metadata.namespace: Required value");
		return NULL;
	}
	m->ns = vdup(c, ns);
	m->name = vdup(c, name);
	m->uid = vdup(c, vstr(c, meta, "uid", "metadata.uid"));
	m->resource_version = vdup(c, vstr(c, meta, "resourceVersion", "metadata.resourceVersion"));
	const cJSON *del = cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp");
	m->deleting = del && !cJSON_IsNull(del);
	return c->failed ? NULL : meta;
}

static const char *annotation(struct vctx *c, const cJSON *meta, const char *key)
{
	const cJSON *ann = vobj(c, meta, "annotations", "metadata.annotations");
	if (!ann)
		return NULL;
	char path[160];
	snprintf(path, sizeof path, "metadata.annotations[%s]", key);
	return vstr(c, ann, key, path);
}

static bool has_annotation(const cJSON *meta, const char *key)
{
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	return cJSON_IsObject(ann) && cJSON_GetObjectItemCaseSensitive(ann, key);
}

static uint32_t decode_access_modes(struct vctx *c, const cJSON *spec)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} modes[] = { { "ReadWriteOnce", SK_ACCESS_RWO },
		      { "ReadOnlyMany", SK_ACCESS_ROX },
		      { "ReadWriteMany", SK_ACCESS_RWX },
		      { "ReadWriteOncePod", SK_ACCESS_RWOP } };
	const cJSON *arr = varr(c, spec, "accessModes", "spec.accessModes");
	uint32_t bits = 0;
	int i = 0;
	for (const cJSON *m = arr ? arr->child : NULL; m && !c->failed; m = m->next, i++) {
		uint32_t b = 0;
		for (size_t k = 0; cJSON_IsString(m) && k < sizeof modes / sizeof modes[0]; k++)
			if (strcmp(m->valuestring, modes[k].name) == 0)
				b = modes[k].bit;
		if (!b)
			vfail(c, "spec.accessModes[%d]: Unsupported value: \"%s\": supported values: \"ReadOnlyMany\", "
				 "\"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
			      i, cJSON_IsString(m) ? m->valuestring : "(not a string)");
		bits |= b;
	}
	return bits;
}

/* A storage quantity in bytes (Value(), rounded up) or 0 when absent. */
static int64_t decode_storage(struct vctx *c, const cJSON *list, const char *path)
{
	const char *q = vstr(c, list, "storage", path);
	if (!q)
		return 0;
	struct kube_quantity qq;
	char *qerr = NULL;
	if (kube_quantity_parse(q, &qq, &qerr) != 0) {
		vfail(c, "%s: Invalid value: \"%s\": %s", path, q, qerr ? qerr : "not a quantity");
		free(qerr);
		return 0;
	}
	return kube_quantity_value(&qq);
}

static bool decode_block_mode(struct vctx *c, const cJSON *spec)
{
	const char *m = vstr(c, spec, "volumeMode", "spec.volumeMode");
	if (!m || strcmp(m, "Filesystem") == 0)
		return false;
	if (strcmp(m, "Block") == 0)
		return true;
	vfail(c, "spec.volumeMode: Unsupported value: \"%s\": supported values: \"Block\", \"Filesystem\"", m);
	return false;
}

/* GetPersistentVolumeClaimClass / GetPersistentVolumeClass: the beta annotation wins. */
static const char *decode_class(struct vctx *c, const cJSON *meta, const cJSON *spec, bool *set)
{
	const char *ann = annotation(c, meta, SK_ANN_BETA_STORAGE_CLASS);
	const char *sc = vstr(c, spec, "storageClassName", "spec.storageClassName");
	*set = has_annotation(meta, SK_ANN_BETA_STORAGE_CLASS) ||
	       (spec && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(spec, "storageClassName")));
	return vintern(c, ann ? ann : sc ? sc : "");
}

/* ---------- reference counting ---------- */

static void pvc_free(struct sk_pvc *p)
{
	kube_label_selector_free(p->selector);
}

static void pv_free(struct sk_pv *p)
{
	free(p->host_names);
	free(p->labels.items);
	kube_node_selector_free(p->node_affinity);
}

static void csi_node_free(struct sk_csi_node *n)
{
	for (int i = 0; n->drivers && i < n->ndrivers; i++)
		free(n->drivers[i].topology_keys);
	free(n->drivers);
}

static void vobj_free(struct sk_vobj *m)
{
	switch (m->kind) {
	case SK_VOBJ_PVC: pvc_free((struct sk_pvc *)m); break;
	case SK_VOBJ_PV: pv_free((struct sk_pv *)m); break;
	case SK_VOBJ_STORAGE_CLASS:
		kube_node_selector_free(((struct sk_storage_class *)m)->allowed_topologies);
		free(((struct sk_storage_class *)m)->allowed_topologies_json);
		break;
	case SK_VOBJ_CSI_NODE: csi_node_free((struct sk_csi_node *)m); break;
	case SK_VOBJ_CSI_DRIVER: break;
	case SK_VOBJ_CSI_STORAGE_CAPACITY:
		kube_label_selector_free(((struct sk_csi_storage_capacity *)m)->node_topology);
		break;
	case SK_VOBJ_VOLUME_ATTACHMENT: break;
	}
	free(m->ns);
	free(m->name);
	free(m->uid);
	free(m->resource_version);
	free(m);
}

void *sk_vobj_ref(const void *obj)
{
	struct sk_vobj *m = (struct sk_vobj *)obj;
	if (m)
		__atomic_add_fetch(&m->refcount, 1, __ATOMIC_RELAXED);
	return m;
}

void sk_vobj_unref(const void *obj)
{
	struct sk_vobj *m = (struct sk_vobj *)obj;
	if (m && __atomic_sub_fetch(&m->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		vobj_free(m);
}

void sk_vobj_list_free(void *list, int n)
{
	void **l = list;
	for (int i = 0; l && i < n; i++)
		sk_vobj_unref(l[i]);
	free(l);
}

/* A view that failed part-way: every field set so far is freed by vobj_free (all NULL-safe). */
static void *finish(struct vctx *c, struct sk_vobj *m)
{
	if (!c->failed)
		return m;
	vobj_free(m);
	return NULL;
}

/* ---------- PersistentVolumeClaim ---------- */

struct sk_pvc *sk_pvc_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "persistentvolumeclaim", .err = err };
	struct sk_pvc *p = calloc(1, sizeof *p);
	if (!p) {
		kube_errf(err, "persistentvolumeclaim: out of memory");
		return NULL;
	}
	const cJSON *meta = decode_meta(&c, obj, &p->meta, SK_VOBJ_PVC, true);
	if (!meta)
		return finish(&c, &p->meta);
	const cJSON *spec = vobj(&c, obj, "spec", "spec");
	const cJSON *status = vobj(&c, obj, "status", "status");
	p->access_modes = decode_access_modes(&c, spec);
	p->class_name = decode_class(&c, meta, spec, &p->class_set);
	const char *vn = vstr(&c, spec, "volumeName", "spec.volumeName");
	p->volume_name = vn && *vn ? vintern(&c, vn) : NULL;
	const cJSON *res = vobj(&c, spec, "resources", "spec.resources");
	const cJSON *req = vobj(&c, res, "requests", "spec.resources.requests");
	p->request_storage = decode_storage(&c, req, "spec.resources.requests[storage]");
	const cJSON *rs = req ? cJSON_GetObjectItemCaseSensitive(req, "storage") : NULL;
	p->has_request_storage = rs && !cJSON_IsNull(rs);
	p->block_mode = decode_block_mode(&c, spec);
	const cJSON *sel = vobj(&c, spec, "selector", "spec.selector");
	if (sel && !c.failed) {
		char *serr = NULL;
		if (kube_label_selector_from_json(sel, &p->selector, &serr) != 0)
			vfail(&c, "spec.selector: %s", serr ? serr : "invalid");
		free(serr);
	}
	p->bind_completed = has_annotation(meta, SK_ANN_BIND_COMPLETED);
	p->selected_node = vintern(&c, annotation(&c, meta, SK_ANN_SELECTED_NODE));
	const char *prov = annotation(&c, meta, SK_ANN_STORAGE_PROVISIONER);
	if (!prov)
		prov = annotation(&c, meta, SK_ANN_BETA_STORAGE_PROVISIONER);
	p->provisioner = vintern(&c, prov);
	const char *phase = vstr(&c, status, "phase", "status.phase");
	p->phase = vintern(&c, phase ? phase : "");
	const cJSON *owner = cJSON_IsObject(obj) ? kube_owner_ref_controller(obj) : NULL;
	p->controller_uid = owner ? vintern(&c, vstr(&c, owner, "uid", "metadata.ownerReferences.uid")) : NULL;
	return finish(&c, &p->meta);
}

/* ---------- PersistentVolume ---------- */

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sk_label *)a)->key, ((const struct sk_label *)b)->key);
}

static void decode_labels(struct vctx *c, const cJSON *meta, struct sk_labels *out)
{
	const cJSON *labels = vobj(c, meta, "labels", "metadata.labels");
	int n = labels ? cJSON_GetArraySize(labels) : 0;
	if (n == 0 || c->failed)
		return;
	if (!(out->items = calloc((size_t)n, sizeof *out->items))) {
		vfail(c, "out of memory");
		return;
	}
	for (const cJSON *l = labels->child; l && !c->failed; l = l->next) {
		char path[300];
		snprintf(path, sizeof path, "metadata.labels[%s]", l->string);
		if (!cJSON_IsString(l)) {
			vfail(c, "%s: must be a string", path);
			return;
		}
		out->items[out->n].key = vintern(c, l->string);
		out->items[out->n++].value = vintern(c, l->valuestring);
	}
	qsort(out->items, (size_t)out->n, sizeof *out->items, label_cmp);
}

/* The id field of the in-tree sources csi-translation-lib migrates (ABI 1.2, struct sk_pv.intree_id). */
static const char *decode_intree_id(struct vctx *c, const cJSON *spec, const char *source, const char *at)
{
	static const struct {
		const char *source, *field;
	} ids[] = { { "awsElasticBlockStore", "volumeID" }, { "gcePersistentDisk", "pdName" },
		    { "azureDisk", "diskURI" },		   { "azureFile", "shareName" },
		    { "cinder", "volumeID" },		   { "vsphereVolume", "volumePath" },
		    { "portworxVolume", "volumeID" } };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		if (strcmp(ids[i].source, source) != 0)
			continue;
		char path[160];
		snprintf(path, sizeof path, "%s.%s", at, source);
		const cJSON *src = vobj(c, spec, source, path);
		snprintf(path, sizeof path, "%s.%s.%s", at, source, ids[i].field);
		return vintern(c, vstr(c, src, ids[i].field, path));
	}
	return NULL;
}

/* spec.csi.driver and volumeHandle (both required); at is the path of spec. */
static void decode_csi_source(struct vctx *c, const cJSON *spec, const char *at, const char **driver,
			      const char **handle)
{
	char path[160];
	snprintf(path, sizeof path, "%s.csi", at);
	const cJSON *csi = vobj(c, spec, "csi", path);
	snprintf(path, sizeof path, "%s.csi.driver", at);
	const char *drv = vstr(c, csi, "driver", path);
	snprintf(path, sizeof path, "%s.csi.volumeHandle", at);
	const char *h = vstr(c, csi, "volumeHandle", path);
	if (c->failed)
		return;
	if (!drv || !*drv || !h || !*h) {
		vfail(c, "%s.csi.%s: Required value", at, !drv || !*drv ? "driver" : "volumeHandle");
		return;
	}
	*driver = vintern(c, drv);
	*handle = vintern(c, h);
}

/* The PV's volume source: the one field of spec that is a known source (csi read further). */
static void decode_pv_source(struct vctx *c, const cJSON *spec, struct sk_pv *p)
{
	static const char *const known[] = { "csi", "hostPath", "local", "nfs", "gcePersistentDisk",
					     "awsElasticBlockStore", "azureDisk", "azureFile", "cinder", "rbd",
					     "iscsi", "fc", "cephfs", "flexVolume", "vsphereVolume",
					     "portworxVolume", "glusterfs", "flocker", "quobyte",
					     "photonPersistentDisk", "scaleIO", "storageos", NULL };
	for (int i = 0; known[i]; i++) {
		if (!cJSON_GetObjectItemCaseSensitive(spec, known[i]))
			continue;
		p->source = known[i];
		break;
	}
	if (!p->source)
		p->source = "";
	if (strcmp(p->source, "csi") != 0) {
		p->intree_id = decode_intree_id(c, spec, p->source, "spec");
		return;
	}
	decode_csi_source(c, spec, "spec", &p->csi_driver, &p->csi_handle);
}

static void decode_pv_claim_ref(struct vctx *c, const cJSON *spec, struct sk_pv *p)
{
	const cJSON *ref = vobj(c, spec, "claimRef", "spec.claimRef");
	if (!ref)
		return;
	const char *ns = vstr(c, ref, "namespace", "spec.claimRef.namespace");
	const char *name = vstr(c, ref, "name", "spec.claimRef.name");
	const char *uid = vstr(c, ref, "uid", "spec.claimRef.uid");
	p->claim_ns = vintern(c, ns ? ns : "");
	p->claim_name = vintern(c, name ? name : "");
	p->claim_uid = uid && *uid ? vintern(c, uid) : NULL;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool has_str(const char **v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The hostname In values of one term, intersected; -1 when the term has none. */
static int term_hosts(const cJSON *term, const char **out, int max)
{
	int n = -1;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(term, "matchExpressions"))
	{
		const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "key"));
		const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "operator"));
		if (!key || !op || strcmp(key, "kubernetes.io/hostname") != 0 || strcmp(op, "In") != 0)
			continue;
		const char *vals[64];
		int nv = 0;
		const cJSON *v;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(e, "values"))
			if (cJSON_IsString(v) && nv < 64 && !has_str(vals, nv, v->valuestring))
				vals[nv++] = v->valuestring;
		if (n < 0) {
			n = 0;
			for (int i = 0; i < nv && n < max; i++)
				out[n++] = vals[i];
		} else {
			int k = 0;
			for (int i = 0; i < n; i++)
				if (has_str(vals, nv, out[i]))
					out[k++] = out[i];
			n = k;
		}
	}
	return n;
}

/* GetLocalPersistentVolumeNodeNames over spec.nodeAffinity.required (already validated). */
static void decode_host_names(struct vctx *c, const cJSON *required, struct sk_pv *p)
{
	const char *all[256];
	int n = 0;
	const cJSON *term;
	cJSON_ArrayForEach(term, cJSON_GetObjectItemCaseSensitive(required, "nodeSelectorTerms"))
	{
		const char *hosts[64];
		int nh = term_hosts(term, hosts, 64);
		for (int i = 0; i < nh && n < 256; i++)
			if (!has_str(all, n, hosts[i]))
				all[n++] = hosts[i];
	}
	if (n == 0)
		return;
	qsort(all, (size_t)n, sizeof all[0], str_cmp);
	if (!(p->host_names = calloc((size_t)n, sizeof(char *)))) {
		vfail(c, "out of memory");
		return;
	}
	for (int i = 0; i < n && !c->failed; i++)
		p->host_names[p->nhost_names++] = vintern(c, all[i]);
}

struct sk_pv *sk_pv_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "persistentvolume", .err = err };
	struct sk_pv *p = calloc(1, sizeof *p);
	if (!p) {
		kube_errf(err, "persistentvolume: out of memory");
		return NULL;
	}
	const cJSON *meta = decode_meta(&c, obj, &p->meta, SK_VOBJ_PV, false);
	if (!meta)
		return finish(&c, &p->meta);
	decode_labels(&c, meta, &p->labels);
	const cJSON *spec = vobj(&c, obj, "spec", "spec");
	const cJSON *status = vobj(&c, obj, "status", "status");
	bool set;
	p->class_name = decode_class(&c, meta, spec, &set);
	p->access_modes = decode_access_modes(&c, spec);
	p->capacity = decode_storage(&c, vobj(&c, spec, "capacity", "spec.capacity"), "spec.capacity[storage]");
	p->block_mode = decode_block_mode(&c, spec);
	const cJSON *aff = vobj(&c, spec, "nodeAffinity", "spec.nodeAffinity");
	const cJSON *req = vobj(&c, aff, "required", "spec.nodeAffinity.required");
	if (req && !c.failed) {
		char *nerr = NULL;
		if (kube_node_selector_compile_object(req, "spec.nodeAffinity.required", 0, &p->node_affinity, &nerr) != 0)
			vfail(&c, "%s", nerr ? nerr : "spec.nodeAffinity.required: invalid");
		free(nerr);
		if (!c.failed)
			decode_host_names(&c, req, p);
	}
	decode_pv_claim_ref(&c, spec, p);
	if (spec && !c.failed)
		decode_pv_source(&c, spec, p);
	else
		p->source = "";
	const char *phase = vstr(&c, status, "phase", "status.phase");
	p->phase = vintern(&c, phase ? phase : "");
	return finish(&c, &p->meta);
}

bool sk_pv_matches_node(const struct sk_pv *pv, const struct sk_node *node)
{
	if (!pv->node_affinity)
		return true;
	if (!node)
		return false;
	return kube_node_selector_matches(pv->node_affinity, node->name, sk_labels_get, &node->labels);
}

/* ---------- StorageClass ---------- */

/* allowedTopologies [{matchLabelExpressions: [{key, values}]}] as node selector terms. */
static void decode_allowed_topologies(struct vctx *c, const cJSON *obj, struct sk_storage_class *sc)
{
	const cJSON *terms = varr(c, obj, "allowedTopologies", "allowedTopologies");
	if (!terms || cJSON_GetArraySize(terms) == 0 || c->failed)
		return;
	cJSON *sel = cJSON_CreateObject(), *nst = cJSON_AddArrayToObject(sel, "nodeSelectorTerms");
	int i = 0;
	for (const cJSON *t = terms->child; t && nst && !c->failed; t = t->next, i++) {
		char path[64];
		snprintf(path, sizeof path, "allowedTopologies[%d].matchLabelExpressions", i);
		const cJSON *exprs = cJSON_IsObject(t) ? varr(c, t, "matchLabelExpressions", path) : NULL;
		cJSON *term = cJSON_CreateObject(), *me = cJSON_AddArrayToObject(term, "matchExpressions");
		cJSON_AddItemToArray(nst, term);
		for (const cJSON *e = exprs ? exprs->child : NULL; e && me; e = e->next) {
			cJSON *r = cJSON_CreateObject();
			const cJSON *key = cJSON_GetObjectItemCaseSensitive(e, "key");
			const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values");
			cJSON_AddStringToObject(r, "key", cJSON_IsString(key) ? key->valuestring : "");
			cJSON_AddStringToObject(r, "operator", "In");
			cJSON_AddItemToObject(r, "values", vals ? cJSON_Duplicate(vals, 1) : cJSON_CreateArray());
			cJSON_AddItemToArray(me, r);
		}
	}
	if (!c->failed) {
		char *nerr = NULL;
		if (!nst || kube_node_selector_compile_object(sel, "allowedTopologies", 0, &sc->allowed_topologies, &nerr) != 0)
			vfail(c, "%s", nerr ? nerr : "allowedTopologies: out of memory");
		free(nerr);
	}
	cJSON_Delete(sel);
}

struct sk_storage_class *sk_storage_class_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "storageclass", .err = err };
	struct sk_storage_class *sc = calloc(1, sizeof *sc);
	if (!sc) {
		kube_errf(err, "storageclass: out of memory");
		return NULL;
	}
	const cJSON *meta = decode_meta(&c, obj, &sc->meta, SK_VOBJ_STORAGE_CLASS, false);
	if (!meta)
		return finish(&c, &sc->meta);
	const char *prov = vstr(&c, obj, "provisioner", "provisioner");
	if (!c.failed && (!prov || !*prov))
		vfail(&c, "provisioner: Required value");
	sc->provisioner = vintern(&c, prov);
	const char *mode = vstr(&c, obj, "volumeBindingMode", "volumeBindingMode");
	sc->binding_mode_set = mode != NULL;
	if (mode && strcmp(mode, "WaitForFirstConsumer") == 0)
		sc->wait_for_first_consumer = true;
	else if (mode && strcmp(mode, "Immediate") != 0)
		vfail(&c, "volumeBindingMode: Unsupported value: \"%s\": supported values: \"Immediate\", "
			  "\"WaitForFirstConsumer\"", mode);
	decode_allowed_topologies(&c, obj, sc);
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(obj, "allowedTopologies");
	if (!c.failed && at && !cJSON_IsNull(at) && cJSON_GetArraySize(at) > 0) {
		if (!(sc->allowed_topologies_json = cJSON_PrintUnformatted(at)))
			vfail(&c, "out of memory");
	}
	const char *def = annotation(&c, meta, "storageclass.kubernetes.io/is-default-class");
	sc->is_default = def && strcmp(def, "true") == 0;
	return finish(&c, &sc->meta);
}

/* ---------- CSINode and CSIDriver ---------- */

static void decode_csi_driver_entry(struct vctx *c, const cJSON *d, const char *path, struct sk_csi_node_driver *out)
{
	char sub[96];
	if (!cJSON_IsObject(d)) {
		vfail(c, "%s: must be an object", path);
		return;
	}
	snprintf(sub, sizeof sub, "%s.name", path);
	const char *name = vstr(c, d, "name", sub);
	if (!c->failed && (!name || !*name))
		vfail(c, "%s: Required value", sub);
	out->name = vintern(c, name);
	snprintf(sub, sizeof sub, "%s.nodeID", path);
	out->node_id = vintern(c, vstr(c, d, "nodeID", sub));
	snprintf(sub, sizeof sub, "%s.allocatable", path);
	const cJSON *alloc = vobj(c, d, "allocatable", sub);
	const cJSON *count = alloc ? cJSON_GetObjectItemCaseSensitive(alloc, "count") : NULL;
	if (count && !cJSON_IsNull(count)) {
		int64_t v;
		if (kube_json_get_int64(count, &v) != 0 || v < 0 || v > INT32_MAX)
			vfail(c, "%s.count: Invalid value: must be a non-negative 32-bit integer", sub);
		out->has_count = true;
		out->count = (int32_t)(c->failed ? 0 : v);
	}
	snprintf(sub, sizeof sub, "%s.topologyKeys", path);
	const cJSON *keys = varr(c, d, "topologyKeys", sub);
	int nk = keys ? cJSON_GetArraySize(keys) : 0;
	if (nk > 0 && !c->failed) {
		if (!(out->topology_keys = calloc((size_t)nk, sizeof(char *)))) {
			vfail(c, "out of memory");
			return;
		}
		for (const cJSON *k = keys->child; k && !c->failed; k = k->next)
			if (cJSON_IsString(k))
				out->topology_keys[out->ntopology_keys++] = vintern(c, k->valuestring);
	}
}

struct sk_csi_node *sk_csi_node_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "csinode", .err = err };
	struct sk_csi_node *n = calloc(1, sizeof *n);
	if (!n) {
		kube_errf(err, "csinode: out of memory");
		return NULL;
	}
	const cJSON *meta = decode_meta(&c, obj, &n->meta, SK_VOBJ_CSI_NODE, false);
	if (!meta)
		return finish(&c, &n->meta);
	n->migrated_plugins = vintern(&c, annotation(&c, meta, SK_ANN_MIGRATED_PLUGINS));
	const cJSON *spec = vobj(&c, obj, "spec", "spec");
	const cJSON *drivers = varr(&c, spec, "drivers", "spec.drivers");
	int nd = drivers ? cJSON_GetArraySize(drivers) : 0;
	if (nd > 0 && !c.failed) {
		if (!(n->drivers = calloc((size_t)nd, sizeof *n->drivers))) {
			vfail(&c, "out of memory");
			return finish(&c, &n->meta);
		}
		for (const cJSON *d = drivers->child; d && !c.failed; d = d->next) {
			char path[48];
			snprintf(path, sizeof path, "spec.drivers[%d]", n->ndrivers);
			decode_csi_driver_entry(&c, d, path, &n->drivers[n->ndrivers++]);
		}
	}
	return finish(&c, &n->meta);
}

const struct sk_csi_node_driver *sk_csi_node_driver(const struct sk_csi_node *n, const char *driver)
{
	for (int i = 0; n && driver && i < n->ndrivers; i++)
		if (strcmp(n->drivers[i].name, driver) == 0)
			return &n->drivers[i];
	return NULL;
}

struct sk_csi_driver *sk_csi_driver_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "csidriver", .err = err };
	struct sk_csi_driver *d = calloc(1, sizeof *d);
	if (!d) {
		kube_errf(err, "csidriver: out of memory");
		return NULL;
	}
	if (!decode_meta(&c, obj, &d->meta, SK_VOBJ_CSI_DRIVER, false))
		return finish(&c, &d->meta);
	const cJSON *spec = vobj(&c, obj, "spec", "spec");
	d->attach_required = vbool(&c, spec, "attachRequired", "spec.attachRequired", true);
	d->storage_capacity = vbool(&c, spec, "storageCapacity", "spec.storageCapacity", false);
	return finish(&c, &d->meta);
}

/* ---------- CSIStorageCapacity and VolumeAttachment (ABI 1.2) ---------- */

/* A quantity field; *set false when absent. */
static int64_t decode_quantity(struct vctx *c, const cJSON *obj, const char *field, bool *set)
{
	const char *q = vstr(c, obj, field, field);
	*set = false;
	if (!q || c->failed)
		return 0;
	struct kube_quantity qq;
	char *qerr = NULL;
	int64_t v = 0;
	if (kube_quantity_parse(q, &qq, &qerr) != 0 || (v = kube_quantity_value(&qq)) < 0)
		vfail(c, "%s: Invalid value: \"%s\": %s", field, q, qerr ? qerr : "must be a non-negative quantity");
	free(qerr);
	*set = !c->failed;
	return v;
}

struct sk_csi_storage_capacity *sk_csi_storage_capacity_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "csistoragecapacity", .err = err };
	struct sk_csi_storage_capacity *cap = calloc(1, sizeof *cap);
	if (!cap) {
		kube_errf(err, "csistoragecapacity: out of memory");
		return NULL;
	}
	if (!decode_meta(&c, obj, &cap->meta, SK_VOBJ_CSI_STORAGE_CAPACITY, true))
		return finish(&c, &cap->meta);
	const char *cls = vstr(&c, obj, "storageClassName", "storageClassName");
	if (!c.failed && (!cls || !*cls))
		vfail(&c, "storageClassName: Required value");
	cap->class_name = vintern(&c, cls);
	cap->capacity = decode_quantity(&c, obj, "capacity", &cap->has_capacity);
	cap->maximum_volume_size = decode_quantity(&c, obj, "maximumVolumeSize", &cap->has_maximum_volume_size);
	const cJSON *topo = vobj(&c, obj, "nodeTopology", "nodeTopology");
	if (topo && !c.failed) {
		char *serr = NULL;
		if (kube_label_selector_from_json(topo, &cap->node_topology, &serr) != 0)
			vfail(&c, "nodeTopology: %s", serr ? serr : "invalid");
		free(serr);
	}
	return finish(&c, &cap->meta);
}

bool sk_csi_storage_capacity_limit(const struct sk_csi_storage_capacity *c, int64_t *limit)
{
	if (c->has_maximum_volume_size) {
		*limit = c->maximum_volume_size;
		return true;
	}
	*limit = c->capacity;
	return c->has_capacity;
}

/* spec.source: persistentVolumeName or inlineVolumeSpec (exactly one, as the API validates). */
static void decode_va_source(struct vctx *c, const cJSON *spec, struct sk_volume_attachment *va)
{
	const cJSON *src = vobj(c, spec, "source", "spec.source");
	const char *pv = vstr(c, src, "persistentVolumeName", "spec.source.persistentVolumeName");
	const cJSON *inl = vobj(c, src, "inlineVolumeSpec", "spec.source.inlineVolumeSpec");
	if (c->failed)
		return;
	if ((pv != NULL) == (inl != NULL)) {
		vfail(c, "spec.source: %s", pv ? "Forbidden: must specify exactly one of inlineVolumeSpec and "
						  "persistentVolumeName"
					       : "Required value: must specify exactly one of inlineVolumeSpec and "
						 "persistentVolumeName");
		return;
	}
	if (pv) {
		if (!*pv)
			vfail(c, "spec.source.persistentVolumeName: Required value");
		va->pv_name = vintern(c, pv);
		return;
	}
	static const char *const sources[] = { "csi", "awsElasticBlockStore", "gcePersistentDisk", "azureDisk",
						"azureFile", "cinder", "vsphereVolume", "portworxVolume", NULL };
	for (int i = 0; sources[i] && !va->inline_source; i++)
		if (cJSON_GetObjectItemCaseSensitive(inl, sources[i]))
			va->inline_source = sources[i];
	if (!va->inline_source)
		return; /* another source: not counted */
	if (strcmp(va->inline_source, "csi") == 0)
		decode_csi_source(c, inl, "spec.source.inlineVolumeSpec", &va->inline_csi_driver, &va->inline_csi_handle);
	else
		va->inline_intree_id = decode_intree_id(c, inl, va->inline_source, "spec.source.inlineVolumeSpec");
}

struct sk_volume_attachment *sk_volume_attachment_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct vctx c = { .kind = "volumeattachment", .err = err };
	struct sk_volume_attachment *va = calloc(1, sizeof *va);
	if (!va) {
		kube_errf(err, "volumeattachment: out of memory");
		return NULL;
	}
	if (!decode_meta(&c, obj, &va->meta, SK_VOBJ_VOLUME_ATTACHMENT, false))
		return finish(&c, &va->meta);
	const cJSON *spec = vobj(&c, obj, "spec", "spec");
	const char *attacher = vstr(&c, spec, "attacher", "spec.attacher");
	const char *node = vstr(&c, spec, "nodeName", "spec.nodeName");
	if (!c.failed && (!attacher || !*attacher))
		vfail(&c, "spec.attacher: Required value");
	if (!c.failed && (!node || !*node))
		vfail(&c, "spec.nodeName: Required value");
	va->attacher = vintern(&c, attacher);
	va->node_name = vintern(&c, node);
	decode_va_source(&c, spec, va);
	const cJSON *status = vobj(&c, obj, "status", "status");
	va->attached = vbool(&c, status, "attached", "status.attached", false);
	return finish(&c, &va->meta);
}

struct sk_vobj *sk_vobj_decode(const cJSON *obj, char **err)
{
	const char *kind = kube_obj_get_string(obj, "kind");
	if (kind && strcmp(kind, "PersistentVolumeClaim") == 0)
		return (struct sk_vobj *)sk_pvc_decode(obj, err);
	if (kind && strcmp(kind, "PersistentVolume") == 0)
		return (struct sk_vobj *)sk_pv_decode(obj, err);
	if (kind && strcmp(kind, "StorageClass") == 0)
		return (struct sk_vobj *)sk_storage_class_decode(obj, err);
	if (kind && strcmp(kind, "CSINode") == 0)
		return (struct sk_vobj *)sk_csi_node_decode(obj, err);
	if (kind && strcmp(kind, "CSIDriver") == 0)
		return (struct sk_vobj *)sk_csi_driver_decode(obj, err);
	if (kind && strcmp(kind, "CSIStorageCapacity") == 0)
		return (struct sk_vobj *)sk_csi_storage_capacity_decode(obj, err);
	if (kind && strcmp(kind, "VolumeAttachment") == 0)
		return (struct sk_vobj *)sk_volume_attachment_decode(obj, err);
	kube_errf(err, "kind %s is not a storage object", kind ? kind : "(none)");
	return NULL;
}
