/* VolumeBinding (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go, v1.34):
 * PreFilter, Filter, PreScore/Score, Reserve, Unreserve, PreBind, EnqueueExtensions.
 *
 * - PreFilter: Skip for a pod without claims; a missing, lost or deleting claim is UU with
 *   upstream's text; an unbound claim of an Immediate class (or a prebound one) is UU
 *   "pod has unbound immediate PersistentVolumeClaims": the PV controller binds it first.
 * - Filter (binder.c): bound claims' PVs must admit the node; unbound WaitForFirstConsumer claims
 *   need an available PV that matches here, or a class that can provision here (for a CSI driver
 *   with spec.storageCapacity, a CSIStorageCapacity accessible from the node must hold the size,
 *   capacity.c); UU with every reason that applies.
 * - Reserve assumes the chosen bindings (the assume cache, binder.c); PreBind merge-patches the
 *   PVs' claimRef and the provisioned claims' volume.kubernetes.io/selected-node, then waits up to
 *   bindTimeoutSeconds for the PV controller to complete them; Unreserve reverts the assumptions.
 * - Score: only with StorageCapacityScoring, off in v1.34: PreScore skips. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binder.h"

#define REASON_UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"
#define DEFAULT_BIND_TIMEOUT_SECONDS 600

struct vb_args {
	int64_t bind_timeout_seconds;
};

struct vb {
	int64_t bind_timeout_seconds;
	struct vb_cache cache;
};

/* ---------- args (VolumeBindingArgs) ---------- */

static void vb_args_free(void *p)
{
	free(p);
}

static int vb_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "bindTimeoutSeconds", "shape", NULL };
	int64_t timeout = DEFAULT_BIND_TIMEOUT_SECONDS;
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "VolumeBindingArgs", path, e) < 0 ||
	    sk_json_int(json, "bindTimeoutSeconds", path, INT64_MIN, INT64_MAX, &timeout, NULL, e) < 0)
		return -1;
	if (timeout < 0) {
		char *p = sk_path_child(path, "bindTimeoutSeconds");
		sk_err_invalid_int(e, p, timeout, "invalid BindTimeoutSeconds, should not be a negative value");
		free(p);
		rc = -1;
	}
	/* StorageCapacityScoring is off by default in v1.34: a shape is an error (validation.go). */
	const cJSON *shape = json ? cJSON_GetObjectItemCaseSensitive(json, "shape") : NULL;
	if (shape && !cJSON_IsNull(shape)) {
		char *p = sk_path_child(path, "shape"), *printed = cJSON_PrintUnformatted(shape);
		sk_err_invalid_raw(e, p, printed ? printed : "[...]",
				   "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring");
		free(printed);
		free(p);
		rc = -1;
	}
	if (rc < 0)
		return -1;
	struct vb_args *a = calloc(1, sizeof *a);
	if (!a)
		return -1;
	a->bind_timeout_seconds = timeout;
	*out = a;
	return 0;
}

static cJSON *vb_args_encode(const void *p)
{
	const struct vb_args *a = p;
	cJSON *o = sk_args_json_new("VolumeBindingArgs");
	cJSON *t = o ? sk_json_create_int64(a ? a->bind_timeout_seconds : DEFAULT_BIND_TIMEOUT_SECONDS) : NULL;
	if (!t || !cJSON_AddItemToObject(o, "bindTimeoutSeconds", t)) {
		cJSON_Delete(t);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int vb_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)err;
	const struct vb_args *a = args;
	struct vb *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	p->bind_timeout_seconds = a ? a->bind_timeout_seconds : DEFAULT_BIND_TIMEOUT_SECONDS;
	vb_cache_init(&p->cache);
	self->priv = p;
	return 0;
}

static void vb_fini(struct sk_plugin *self)
{
	struct vb *p = self->priv;
	if (!p)
		return;
	vb_cache_fini(&p->cache);
	free(p);
}

/* ---------- cycle state ---------- */

/* stateData. Filter runs on many nodes at once: mu guards by_node and has_static. */
struct vb_state {
	bool skip;                 /* the pod has no claims */
	struct pod_claims claims;
	pthread_mutex_t mu;
	int nnodes, capnodes;
	struct pod_volumes **by_node;
	bool has_static;
	bool all_bound;            /* set by Reserve */
	struct sk_node *node;      /* the reserved node (labels for PreBind's checks) */
};

static void vb_state_free(void *d)
{
	struct vb_state *s = d;
	if (!s)
		return;
	vb_pod_claims_free(&s->claims);
	for (int i = 0; i < s->nnodes; i++)
		vb_pod_volumes_free(s->by_node[i]);
	free(s->by_node);
	sk_node_unref(s->node);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Clone returns the same data, as upstream's stateData.Clone. */
static const struct sk_state_ops vb_ops = { vb_state_free, NULL };

static struct vb_state *vb_state_new(void)
{
	struct vb_state *s = calloc(1, sizeof *s);
	if (s)
		pthread_mutex_init(&s->mu, NULL);
	return s;
}

static struct pod_volumes *volumes_of(struct vb_state *s, const char *node)
{
	struct pod_volumes *r = NULL;
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->nnodes && !r; i++)
		if (strcmp(s->by_node[i]->node, node) == 0)
			r = s->by_node[i];
	pthread_mutex_unlock(&s->mu);
	return r;
}

#define STATE_MISSING "error reading \"VolumeBinding\" from cycleState: not found"

/* ---------- PreFilter ---------- */

/* podHasPVCs: 1 yes, 0 no, -1 and *msg (the UU text). */
static int pod_has_pvcs(struct sk_plugin *self, const struct sk_pod *pod, char **msg)
{
	int has = 0;
	*msg = NULL;
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		bool eph = v->source == SK_VOL_EPHEMERAL;
		if (v->source != SK_VOL_PVC && !eph)
			continue;
		has = 1;
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		int r = 0;
		if (!pvc)
			r = eph ? asprintf(msg, "waiting for ephemeral volume controller to create the persistentvolumeclaim \"%s\"", v->claim)
				: asprintf(msg, "persistentvolumeclaim \"%s\" not found", v->claim);
		else if (strcmp(pvc->phase, "Lost") == 0)
			r = asprintf(msg, "persistentvolumeclaim \"%s\" bound to non-existent persistentvolume \"%s\"",
				     pvc->meta.name, pvc->volume_name ? pvc->volume_name : "");
		else if (pvc->meta.deleting)
			r = asprintf(msg, "persistentvolumeclaim \"%s\" is being deleted", pvc->meta.name);
		else if (eph && (!pvc->controller_uid || strcmp(pvc->controller_uid, pod->uid) != 0))
			r = asprintf(msg, "PVC %s/%s was not created for pod %s/%s (pod is not owner)", pod->ns, v->claim,
				     pod->ns, pod->name);
		sk_vobj_unref(pvc);
		if (r < 0)
			*msg = NULL;
		if (*msg || r < 0)
			return -1;
	}
	return has;
}

/* GetEligibleNodes: the nodes the bound claims' local PVs are pinned to by hostname (intersected
 * over the claims), as a PreFilterResult; no narrowing when none is pinned or a PV is missing. */
static int eligible_nodes(struct sk_plugin *self, const struct pod_claims *pc, struct sk_prefilter_result *result)
{
	const char **set = NULL;
	int n = -1; /* -1: no PV pinned yet */
	for (int i = 0; i < pc->nbound; i++) {
		struct sk_pv *pv = sk_handle_get_pv(self->handle, pc->bound[i]->volume_name);
		if (!pv) {
			free(set);
			return 0;
		}
		if (pv->nhost_names > 0) {
			if (n < 0) {
				if (!(set = malloc(sizeof(char *) * (size_t)pv->nhost_names))) {
					sk_vobj_unref(pv);
					return -1;
				}
				memcpy(set, pv->host_names, sizeof(char *) * (size_t)pv->nhost_names);
				n = pv->nhost_names;
			} else {
				int k = 0;
				for (int j = 0; j < n; j++) {
					bool in = false;
					for (int m = 0; m < pv->nhost_names && !in; m++)
						in = strcmp(set[j], pv->host_names[m]) == 0;
					if (in)
						set[k++] = set[j];
				}
				n = k;
			}
		}
		sk_vobj_unref(pv);
	}
	int rc = 0;
	if (n >= 0 && result) {
		result->all = false; /* an empty set rejects every node */
		for (int j = 0; j < n && rc == 0; j++)
			rc = sk_prefilter_result_add(result, set[j]);
	}
	free(set);
	return rc;
}

static struct sk_status vb_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	struct vb *p = self->priv;
	struct vb_state *s = vb_state_new();
	if (!s)
		return sk_status(SK_ERROR, "out of memory");
	char *msg = NULL;
	int has = pod_has_pvcs(self, pod, &msg);
	if (has < 0) {
		vb_state_free(s);
		struct sk_status st = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", msg ? msg : "out of memory");
		free(msg);
		return st;
	}
	if (has == 0) {
		s->skip = true;
		sk_cycle_state_put(cs, self->slot, s, &vb_ops);
		return sk_status(SK_SKIP, NULL);
	}
	int nimmediate = 0;
	if (vb_get_pod_claims(self, &p->cache, pod, &s->claims, &nimmediate, &msg) != 0) {
		vb_state_free(s);
		struct sk_status st = sk_statusf(SK_ERROR, "%s", msg ? msg : "out of memory");
		free(msg);
		return st;
	}
	if (nimmediate > 0) {
		vb_state_free(s);
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_UNBOUND_IMMEDIATE);
	}
	int rc = eligible_nodes(self, &s->claims, result);
	sk_cycle_state_put(cs, self->slot, s, &vb_ops);
	return rc == 0 ? sk_ok() : sk_status(SK_ERROR, "out of memory");
}

/* ---------- Filter ---------- */

static struct sk_status vb_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	(void)pod;
	struct vb *p = self->priv;
	struct vb_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, STATE_MISSING);
	if (s->skip)
		return sk_ok();
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	struct pod_volumes *pv = NULL;
	const char *reasons[4];
	int nreasons = 0;
	char *err = NULL;
	if (vb_find_pod_volumes(self, &p->cache, &s->claims, ni->node, &pv, reasons, &nreasons, &err) != 0) {
		struct sk_status st = sk_statusf(SK_ERROR, "%s", err ? err : "out of memory");
		free(err);
		return st;
	}
	if (nreasons > 0) {
		vb_pod_volumes_free(pv);
		struct sk_status st = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, reasons[0]);
		for (int i = 1; i < nreasons; i++)
			sk_status_add(&st, reasons[i]);
		return st;
	}
	pthread_mutex_lock(&s->mu);
	int rc = 0;
	if (s->nnodes == s->capnodes) {
		int nc = s->capnodes ? s->capnodes * 2 : 16;
		struct pod_volumes **nb = realloc(s->by_node, sizeof *nb * (size_t)nc);
		if (nb) {
			s->by_node = nb;
			s->capnodes = nc;
		} else {
			rc = -1;
		}
	}
	if (rc == 0) {
		s->by_node[s->nnodes++] = pv;
		s->has_static = s->has_static || pv->nstatic > 0;
	}
	pthread_mutex_unlock(&s->mu);
	if (rc != 0) {
		vb_pod_volumes_free(pv);
		return sk_status(SK_ERROR, "out of memory");
	}
	return sk_ok();
}

/* ---------- PreScore / Score (StorageCapacityScoring is off in v1.34) ---------- */

static struct sk_status vb_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	(void)self;
	(void)cs;
	(void)pod;
	(void)nodes;
	(void)nnodes;
	return sk_status(SK_SKIP, NULL); /* no scorer without the feature gate */
}

static struct sk_status vb_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	(void)self;
	(void)cs;
	(void)pod;
	(void)ni;
	*score = 0;
	return sk_ok();
}

/* ---------- Reserve / Unreserve ---------- */

/* arePodVolumesBound: every claim of the pod fully bound in the store. */
static bool pod_volumes_bound(struct sk_plugin *self, const struct sk_pod *pod)
{
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC && v->source != SK_VOL_EPHEMERAL)
			continue;
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		bool bound = pvc && vb_pvc_fully_bound(pvc);
		sk_vobj_unref(pvc);
		if (!bound)
			return false;
	}
	return true;
}

static void revert(struct vb *p, const struct pod_volumes *pv)
{
	for (int i = 0; i < pv->nstatic; i++)
		vb_restore(&p->cache, SK_VOBJ_PV, pv->statics[i].pv->meta.name);
	for (int i = 0; i < pv->ndynamic; i++) {
		char key[512];
		snprintf(key, sizeof key, "%s/%s", pv->dynamic[i]->meta.ns, pv->dynamic[i]->meta.name);
		vb_restore(&p->cache, SK_VOBJ_PVC, key);
	}
}

static struct sk_status vb_reserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node_name)
{
	struct vb *p = self->priv;
	struct vb_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, STATE_MISSING);
	const struct sk_node_info *ni = sk_snapshot_get(sk_handle_snapshot(self->handle), node_name);
	if (ni && ni->node) {
		sk_node_unref(s->node);
		s->node = sk_node_ref(ni->node);
	}
	vb_cache_gc(&p->cache, self->handle);
	struct pod_volumes *pv = volumes_of(s, node_name);
	if (!pv || pod_volumes_bound(self, pod)) {
		s->all_bound = true; /* no claims, or every one already bound */
		return sk_ok();
	}
	for (int i = 0; i < pv->nstatic; i++)
		if (vb_assume_pv(&p->cache, pv->statics[i].pv, pv->statics[i].pvc) != 0)
			goto oom;
	for (int i = 0; i < pv->ndynamic; i++)
		if (vb_assume_pvc(&p->cache, pv->dynamic[i], node_name) != 0)
			goto oom;
	s->all_bound = false;
	return sk_ok();
oom:
	revert(p, pv);
	return sk_status(SK_ERROR, "out of memory");
}

static void vb_unreserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node_name)
{
	(void)pod;
	struct vb_state *s = sk_cycle_state_get(cs, self->slot);
	struct pod_volumes *pv = s ? volumes_of(s, node_name) : NULL;
	if (pv)
		revert(self->priv, pv);
}

/* ---------- PreBind ---------- */

/* The resourceVersion of an API response, copied (NULL when absent). */
static char *response_rv(const cJSON *obj)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = meta ? cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion") : NULL;
	return cJSON_IsString(rv) ? strdup(rv->valuestring) : NULL;
}

/* The patches of bindAPIUpdate: a PV's claimRef (GetBindVolumeToClaim), a claim's selected node. */
static cJSON *pv_patch(const struct sk_pv *pv, const struct sk_pvc *pvc)
{
	cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(meta, "resourceVersion", pv->meta.resource_version);
	if (!(pv->claim_name && strcmp(pv->claim_name, pvc->meta.name) == 0 && pv->claim_ns &&
	      strcmp(pv->claim_ns, pvc->meta.ns) == 0))
		cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), SK_ANN_BOUND_BY_CONTROLLER, "yes");
	cJSON *ref = cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "spec"), "claimRef");
	cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
	cJSON_AddStringToObject(ref, "namespace", pvc->meta.ns);
	cJSON_AddStringToObject(ref, "name", pvc->meta.name);
	cJSON_AddStringToObject(ref, "uid", pvc->meta.uid);
	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "resourceVersion", pvc->meta.resource_version);
	return o;
}

static cJSON *pvc_patch(const struct sk_pvc *pvc, const char *node)
{
	cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(meta, "resourceVersion", pvc->meta.resource_version);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), SK_ANN_SELECTED_NODE, node);
	return o;
}

static int patch(struct sk_plugin *self, const char *path, cJSON *body, char **rv, char **err)
{
	cJSON *out = NULL;
	int rc = body ? sk_handle_api_patch(self->handle, path, body, &out, NULL, err) : -1;
	if (!body)
		*err = strdup("out of memory");
	cJSON_Delete(body);
	if (rc == 0) {
		free(*rv);
		*rv = response_rv(out);
	}
	cJSON_Delete(out);
	return rc;
}

/* bindAPIUpdate */
static int bind_api_update(struct sk_plugin *self, struct pod_volumes *pv, const char *node, char **err)
{
	char path[600];
	for (int i = 0; i < pv->nstatic; i++) {
		snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", pv->statics[i].pv->meta.name);
		if (patch(self, path, pv_patch(pv->statics[i].pv, pv->statics[i].pvc), &pv->statics[i].api_rv, err) != 0)
			return -1;
	}
	if (pv->ndynamic && !pv->dynamic_api_rv && !(pv->dynamic_api_rv = calloc((size_t)pv->ndynamic, sizeof(char *)))) {
		*err = strdup("out of memory");
		return -1;
	}
	for (int i = 0; i < pv->ndynamic; i++) {
		const struct sk_pvc *c = pv->dynamic[i];
		snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", c->meta.ns, c->meta.name);
		if (patch(self, path, pvc_patch(c, node), &pv->dynamic_api_rv[i], err) != 0)
			return -1;
	}
	return 0;
}

/* CompareResourceVersion(a, b) > 0: the store still has an object older than what the API returned. */
static bool store_older(const char *api_rv, const char *store_rv)
{
	if (!api_rv || !store_rv)
		return false;
	char *e1, *e2;
	unsigned long long a = strtoull(api_rv, &e1, 10), b = strtoull(store_rv, &e2, 10);
	if (*e1 || *e2)
		return false;
	return a > b;
}

/* *err = the formatted message (NULL on ENOMEM); returns -1. */
__attribute__((format(printf, 2, 3))) static int failf(char **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return -1;
}

/* checkBindings: 1 all bound, 0 not yet, -1 and *err. */
static int check_bindings(struct sk_plugin *self, const struct sk_pod *pod, const struct pod_volumes *pv,
			  const struct sk_node *node, char **err)
{
	struct sk_pod *cur = sk_handle_get_pod(self->handle, pod);
	if (!cur) {
		if (asprintf(err, "pod does not exist any more: pods \"%s\" not found", pod->name) < 0)
			*err = NULL;
		return -1;
	}
	sk_pod_unref(cur);
	int r = 1;
	for (int i = 0; i < pv->nstatic && r == 1; i++) {
		struct sk_pv *v = sk_handle_get_pv(self->handle, pv->statics[i].pv->meta.name);
		struct sk_pvc *c = sk_handle_get_pvc(self->handle, pv->statics[i].pvc->meta.ns, pv->statics[i].pvc->meta.name);
		if (!v || !c)
			r = failf(err, "failed to check binding: %s \"%s\" not found", !v ? "persistentvolume" : "persistentvolumeclaim",
				     !v ? pv->statics[i].pv->meta.name : pv->statics[i].pvc->meta.name);
		else if (store_older(pv->statics[i].api_rv, v->meta.resource_version))
			r = 0;
		else if (node && !vb_check_node_affinity(v, node))
			r = failf(err, "pv \"%s\" node affinity doesn't match node \"%s\": no matching NodeSelectorTerms",
				     v->meta.name, node->name);
		else if (!v->claim_name || !v->claim_uid)
			r = failf(err, "ClaimRef got reset for pv \"%s\"", v->meta.name);
		else if (!vb_pvc_fully_bound(c))
			r = 0;
		sk_vobj_unref(v);
		sk_vobj_unref(c);
	}
	for (int i = 0; i < pv->ndynamic && r == 1; i++) {
		const struct sk_pvc *want = pv->dynamic[i];
		struct sk_pvc *c = sk_handle_get_pvc(self->handle, want->meta.ns, want->meta.name);
		if (!c) {
			r = failf(err, "failed to check provisioning pvc: persistentvolumeclaim \"%s\" not found",
				     want->meta.name);
		} else if (store_older(pv->dynamic_api_rv ? pv->dynamic_api_rv[i] : NULL, c->meta.resource_version)) {
			r = 0;
		} else if (!c->selected_node || !pod->node_name || strcmp(c->selected_node, pod->node_name) != 0) {
			/* a provisioner that failed removes the annotation to have the scheduler retry */
			r = failf(err, "provisioning failed for PVC \"%s\"", c->meta.name);
		} else if (c->volume_name) {
			struct sk_pv *v = sk_handle_get_pv(self->handle, c->volume_name);
			if (!v)
				r = 0; /* not seen yet */
			else if (node && !vb_check_node_affinity(v, node))
				r = failf(err, "pv \"%s\" node affinity doesn't match node \"%s\": no matching NodeSelectorTerms",
					     v->meta.name, node->name);
			sk_vobj_unref(v);
		}
		if (r == 1 && c && !vb_pvc_fully_bound(c))
			r = 0;
		sk_vobj_unref(c);
	}
	return r;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct sk_status vb_pre_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node_name)
{
	struct vb *p = self->priv;
	struct vb_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, STATE_MISSING);
	if (s->skip || s->all_bound)
		return sk_ok();
	struct pod_volumes *pv = volumes_of(s, node_name);
	if (!pv)
		return sk_statusf(SK_ERROR, "no pod volumes found for node \"%s\"", node_name);
	char *err = NULL;
	if (bind_api_update(self, pv, node_name, &err) != 0) {
		struct sk_status st = sk_statusf(SK_ERROR, "%s", err ? err : "binding volumes failed");
		free(err);
		return st;
	}
	/* The assumed pod carries the node (checkBindings compares the selected node with it). */
	struct sk_pod *assumed = sk_pod_with_node(pod, node_name);
	int64_t deadline = mono_ns() + p->bind_timeout_seconds * 1000000000LL;
	int r;
	/* Polled each second, as upstream; the first check is immediate. */
	while ((r = check_bindings(self, assumed ? assumed : pod, pv, s->node, &err)) == 0 && mono_ns() < deadline) {
		struct timespec one = { 1, 0 };
		nanosleep(&one, NULL);
	}
	sk_pod_unref(assumed);
	if (r == 1)
		return sk_ok();
	struct sk_status st = r < 0 ? sk_statusf(SK_ERROR, "binding volumes: %s", err ? err : "out of memory")
				    : sk_status(SK_ERROR, "binding volumes: context deadline exceeded");
	free(err);
	return st;
}

/* ---------- EnqueueExtensions ---------- */

static enum sk_hint vb_hint_pvc(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_pvc *pvc = new_obj;
	if (!pvc)
		return SK_QUEUE;
	if (strcmp(pvc->meta.ns, pod->ns) != 0)
		return SK_QUEUE_SKIP;
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if ((v->source == SK_VOL_PVC || v->source == SK_VOL_EPHEMERAL) && v->claim &&
		    strcmp(v->claim, pvc->meta.name) == 0)
			return SK_QUEUE;
	}
	return SK_QUEUE_SKIP;
}

/* isSchedulableAfterStorageClassChange: any new class; an update only through allowedTopologies
 * (volumeBindingMode is immutable). */
static enum sk_hint vb_hint_storage_class(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					  const void *new_obj)
{
	(void)self;
	(void)pod;
	const struct sk_storage_class *o = old_obj, *n = new_obj;
	if (!o || !n)
		return SK_QUEUE;
	const char *a = o->allowed_topologies_json ? o->allowed_topologies_json : "";
	const char *b = n->allowed_topologies_json ? n->allowed_topologies_json : "";
	return strcmp(a, b) != 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

/* isSchedulableAfterCSINodeChange: a new CSINode, or a change of its migrated-plugins annotation
 * (the in-tree PVs translated to CSI). */
static enum sk_hint vb_hint_csi_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				     const void *new_obj)
{
	(void)self;
	(void)pod;
	const struct sk_csi_node *o = old_obj, *n = new_obj;
	if (!o || !n)
		return SK_QUEUE;
	const char *a = o->migrated_plugins ? o->migrated_plugins : "";
	const char *b = n->migrated_plugins ? n->migrated_plugins : "";
	return strcmp(a, b) != 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

/* isSchedulableAfterCSIDriverChange: a pod's inline CSI volume of the driver, whose capacity
 * tracking got turned off. */
static enum sk_hint vb_hint_csi_driver(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				       const void *new_obj)
{
	(void)self;
	const struct sk_csi_driver *o = old_obj, *n = new_obj;
	if (!o || !n)
		return SK_QUEUE;
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_CSI || !v->id || strcmp(v->id, n->meta.name) != 0)
			continue;
		if (o->storage_capacity && !n->storage_capacity)
			return SK_QUEUE;
	}
	return SK_QUEUE_SKIP;
}

/* isSchedulableAfterCSIStorageCapacityChange: a new capacity, or a volume limit (maximumVolumeSize,
 * else capacity) that appeared or grew; nodeTopology and storageClassName are immutable. */
static enum sk_hint vb_hint_capacity(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				     const void *new_obj)
{
	(void)self;
	(void)pod;
	const struct sk_csi_storage_capacity *o = old_obj, *n = new_obj;
	if (!o || !n)
		return SK_QUEUE;
	int64_t ol = 0, nl = 0;
	bool has_old = sk_csi_storage_capacity_limit(o, &ol), has_new = sk_csi_storage_capacity_limit(n, &nl);
	return has_new && (!has_old || nl > ol) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int vb_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	const struct sk_event_registration regs[] = {
		{ { SK_EV_STORAGE_CLASS, SK_ACT_ADD | SK_ACT_UPDATE, "StorageClassAdd|Update" }, vb_hint_storage_class },
		{ { SK_EV_PVC, SK_ACT_ADD | SK_ACT_UPDATE, "PersistentVolumeClaimAdd|Update" }, vb_hint_pvc },
		{ { SK_EV_PV, SK_ACT_ADD | SK_ACT_UPDATE, "PersistentVolumeAdd|Update" }, NULL },
		{ { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL, "NodeAdd|UpdateNodeLabel" }, NULL },
		/* in-tree PVs are translated to CSI per the CSINode's migrated-plugins annotation */
		{ { SK_EV_CSI_NODE, SK_ACT_ADD | SK_ACT_UPDATE, "CSINodeAdd|Update" }, vb_hint_csi_node },
		/* storage capacity tracking (hasEnoughCapacity) */
		{ { SK_EV_CSI_DRIVER, SK_ACT_UPDATE, "CSIDriverUpdate" }, vb_hint_csi_driver },
		{ { SK_EV_CSI_STORAGE_CAPACITY, SK_ACT_ADD | SK_ACT_UPDATE, "CSIStorageCapacityAdd|Update" },
		  vb_hint_capacity },
	};
	int n = 0;
	for (size_t i = 0; i < sizeof regs / sizeof regs[0] && n < max; i++)
		out[n++] = regs[i];
	return n;
}

const struct sk_plugin_desc sk_plugin_volume_binding = {
	SK_PLUGIN_HEADER,
	.name = "VolumeBinding",
	.args_kind = "VolumeBindingArgs",
	.args_decode = vb_args_decode,
	.args_encode = vb_args_encode,
	.args_free = vb_args_free,
	.init = vb_init,
	.fini = vb_fini,
	.pre_filter = vb_pre_filter,
	.filter = vb_filter,
	.pre_score = vb_pre_score,
	.score = vb_score,
	.reserve = vb_reserve,
	.unreserve = vb_unreserve,
	.pre_bind = vb_pre_bind,
	.events_to_register = vb_events,
};
