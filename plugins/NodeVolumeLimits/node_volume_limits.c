/* NodeVolumeLimits (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go, v1.34): PreFilter,
 * Filter, EnqueueExtensions. A node's CSI attach limit per driver (CSINode
 * spec.drivers[].allocatable.count, else the node's allocatable attachable-volumes-csi-<driver>)
 * must hold the pod's new unique volumes plus those its pods already use. A volume is
 * "<driver>/<volumeHandle>" of the bound CSI PV, or, for a claim not bound yet, the provisioner of
 * its StorageClass with a handle unique to the claim; a volume several pods share counts once.
 * Not reproduced: in-tree volumes migrated to CSI (the csi-translation library) are not counted
 * (they only keep PreFilter from skipping and requeue on deletion), nor VolumeAttachments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"
#include "schedkit/volume.h"

#define REASON_MAX_VOLUME_COUNT "node(s) exceed max volume count"
#define CSI_LIMIT_PREFIX "attachable-volumes-csi-"
#define RESOURCE_NAME_LIMIT 63

struct nvl {
	char prefix[40]; /* randomVolumeIDPrefix: handles of unbound claims never equal a real one */
};

/* One attachable volume: its unique name and its driver. */
struct vol {
	char *unique;
	const char *driver;
};
struct vols {
	int n, cap;
	struct vol *v;
};

static void vols_free(struct vols *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i].unique);
	free(s->v);
	s->n = s->cap = 0;
	s->v = NULL;
}

static int vols_find(const struct vols *s, const char *unique)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i].unique, unique) == 0)
			return i;
	return -1;
}

/* Adds driver/handle once (a map keyed by the unique name). */
static int vols_add(struct vols *s, const char *driver, const char *handle)
{
	char *u = NULL;
	if (asprintf(&u, "%s/%s", driver, handle) < 0)
		return -1;
	if (vols_find(s, u) >= 0) {
		free(u);
		return 0;
	}
	if (s->n == s->cap) {
		int nc = s->cap ? s->cap * 2 : 8;
		struct vol *nv = realloc(s->v, sizeof *nv * (size_t)nc);
		if (!nv) {
			free(u);
			return -1;
		}
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = (struct vol){ u, driver };
	return 0;
}

static int nvl_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)args;
	(void)err;
	struct nvl *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	snprintf(p->prefix, sizeof p->prefix, "%016llx%08llx", (unsigned long long)sk_handle_now_ns(self->handle),
		 (unsigned long long)(uintptr_t)p & 0xffffffffull);
	self->priv = p;
	return 0;
}

static void nvl_fini(struct sk_plugin *self)
{
	free(self->priv);
}

/* getCSIDriverInfoFromSC: the provisioner and a handle unique to the claim; NULL driver = uncounted. */
static const char *driver_from_class(struct sk_plugin *self, const struct sk_pvc *pvc, char *handle, size_t n)
{
	if (!pvc->class_name || !*pvc->class_name)
		return NULL;
	struct sk_storage_class *sc = sk_handle_get_storage_class(self->handle, pvc->class_name);
	if (!sc)
		return NULL;
	const char *drv = sc->provisioner;
	sk_vobj_unref(sc); /* provisioner is interned */
	const struct nvl *p = self->priv;
	snprintf(handle, n, "%s-%s/%s", p->prefix, pvc->meta.ns, pvc->meta.name);
	return drv;
}

/* getCSIDriverInfo: driver and handle of the claim's volume; NULL driver = not counted. */
static const char *driver_info(struct sk_plugin *self, const struct sk_pvc *pvc, char *handle, size_t n)
{
	if (!pvc->volume_name)
		return driver_from_class(self, pvc, handle, n);
	struct sk_pv *pv = sk_handle_get_pv(self->handle, pvc->volume_name);
	if (!pv)
		return driver_from_class(self, pvc, handle, n);
	const char *drv = pv->csi_driver;
	if (drv)
		snprintf(handle, n, "%s", pv->csi_handle);
	sk_vobj_unref(pv); /* driver and handle are interned */
	return drv;
}

/* filterAttachableVolumes. For the new pod a missing claim is an error (*not_found set); for pods
 * already on the node it is skipped. 0, or -1 with *st set. */
static int attachable_volumes(struct sk_plugin *self, const struct sk_pod *pod, bool new_pod, struct vols *out,
			      struct sk_status *st)
{
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC && v->source != SK_VOL_EPHEMERAL)
			continue; /* inline volumes: counted only when migrated to CSI (not reproduced) */
		if (!v->claim || !*v->claim) {
			*st = sk_status(SK_ERROR, "PersistentVolumeClaim had no name");
			return -1;
		}
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		if (!pvc) {
			if (!new_pod)
				continue;
			*st = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
					 "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found", pod->ns, v->claim,
					 v->claim);
			return -1;
		}
		if (v->source == SK_VOL_EPHEMERAL && (!pvc->controller_uid || strcmp(pvc->controller_uid, pod->uid) != 0)) {
			*st = sk_statusf(SK_ERROR, "PVC %s/%s was not created for pod %s/%s (pod is not owner)", pod->ns,
					 v->claim, pod->ns, pod->name);
			sk_vobj_unref(pvc);
			return -1;
		}
		char handle[512];
		const char *drv = driver_info(self, pvc, handle, sizeof handle);
		sk_vobj_unref(pvc);
		if (!drv || !*drv || !handle[0])
			continue;
		if (vols_add(out, drv, handle) != 0) {
			*st = sk_status(SK_ERROR, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* IsInlineMigratable, for the in-tree sources the pod view names (GCE PD, AWS EBS). */
static bool inline_migratable(const struct sk_pod_volume *v)
{
	return v->source == SK_VOL_GCE_PD || v->source == SK_VOL_AWS_EBS;
}

static bool counts_for_limits(const struct sk_pod_volume *v)
{
	return v->source == SK_VOL_PVC || v->source == SK_VOL_EPHEMERAL || inline_migratable(v);
}

static struct sk_status nvl_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result)
{
	(void)self;
	(void)cs;
	(void)result;
	for (int i = 0; i < pod->nvolumes; i++)
		if (counts_for_limits(&pod->volumes[i]))
			return sk_ok();
	return sk_status(SK_SKIP, NULL);
}

/* getVolumeLimits: the limit of driver on the node, or -1 when it has none. CSINode wins over the
 * node's allocatable attachable-volumes-csi-<driver> (read only when the key needs no hashing). */
static int64_t volume_limit(const struct sk_node *node, const struct sk_csi_node *csi, const char *driver)
{
	const struct sk_csi_node_driver *d = sk_csi_node_driver(csi, driver);
	if (d && d->has_count)
		return d->count;
	if (strlen(CSI_LIMIT_PREFIX) + strlen(driver) >= RESOURCE_NAME_LIMIT)
		return -1;
	char key[RESOURCE_NAME_LIMIT + 1];
	snprintf(key, sizeof key, CSI_LIMIT_PREFIX "%s", driver);
	for (int i = 0; i < node->allocatable.nscalar; i++)
		if (strcmp(node->allocatable.scalar[i].name, key) == 0)
			return node->allocatable.scalar[i].value;
	return -1;
}

static int count_driver(const struct vols *s, const char *driver)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i].driver, driver) == 0)
			n++;
	return n;
}

static struct sk_status check_limits(const struct sk_node *node, const struct sk_csi_node *csi, struct vols *newv,
				     const struct vols *attached)
{
	/* A volume already attached for another pod is not new. */
	for (int i = 0; i < attached->n; i++) {
		int k = vols_find(newv, attached->v[i].unique);
		if (k >= 0) {
			free(newv->v[k].unique);
			newv->v[k] = newv->v[--newv->n];
		}
	}
	for (int i = 0; i < newv->n; i++) {
		const char *drv = newv->v[i].driver;
		bool seen = false;
		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(newv->v[j].driver, drv) == 0;
		if (seen)
			continue;
		int64_t limit = volume_limit(node, csi, drv);
		if (limit >= 0 && (int64_t)count_driver(attached, drv) + count_driver(newv, drv) > limit)
			return sk_status(SK_UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT);
	}
	return sk_ok();
}

static struct sk_status nvl_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni)
{
	(void)cs;
	if (pod->nvolumes == 0)
		return sk_ok();
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	struct sk_csi_node *csi = sk_handle_get_csi_node(self->handle, ni->node->name); /* may be absent */
	struct vols newv = { 0 }, attached = { 0 };
	struct sk_status st = sk_ok();
	if (attachable_volumes(self, pod, true, &newv, &st) != 0 || newv.n == 0)
		goto out;
	for (int i = 0; i < ni->npods; i++)
		if (attachable_volumes(self, ni->pods[i].pod, false, &attached, &st) != 0)
			goto out;
	st = check_limits(ni->node, csi, &newv, &attached);
out:
	vols_free(&newv);
	vols_free(&attached);
	sk_vobj_unref(csi);
	return st;
}

/* isSchedulableAfterPodDeleted: a bound pod with claim volumes went away. */
static enum sk_hint nvl_hint_pod_deleted(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					 const void *new_obj)
{
	(void)self;
	(void)pod;
	(void)new_obj;
	const struct sk_pod *deleted = old_obj;
	if (!deleted)
		return SK_QUEUE;
	if (deleted->nvolumes == 0 || !deleted->node_name || !*deleted->node_name)
		return SK_QUEUE_SKIP;
	for (int i = 0; i < deleted->nvolumes; i++)
		if (counts_for_limits(&deleted->volumes[i]))
			return SK_QUEUE;
	return SK_QUEUE_SKIP;
}

/* isSchedulableAfterPVCAdded: the claim is one of the pod's (persistentVolumeClaim or ephemeral). */
static enum sk_hint nvl_hint_pvc_added(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
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

static int nvl_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	const struct sk_event_registration regs[] = {
		/* any new CSINode may make the pod schedulable: no hint, as upstream */
		{ { SK_EV_CSI_NODE, SK_ACT_ADD, "CSINodeAdd" }, NULL },
		{ { SK_EV_POD, SK_ACT_DELETE, "PodDelete" }, nvl_hint_pod_deleted },
		{ { SK_EV_PVC, SK_ACT_ADD, "PersistentVolumeClaimAdd" }, nvl_hint_pvc_added },
	};
	int n = 0;
	for (size_t i = 0; i < sizeof regs / sizeof regs[0] && n < max; i++)
		out[n++] = regs[i];
	return n;
}

const struct sk_plugin_desc sk_plugin_node_volume_limits = {
	SK_PLUGIN_HEADER,
	.name = "NodeVolumeLimits",
	.init = nvl_init,
	.fini = nvl_fini,
	.pre_filter = nvl_pre_filter,
	.filter = nvl_filter,
	.events_to_register = nvl_events,
};
