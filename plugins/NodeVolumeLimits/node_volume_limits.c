/* NodeVolumeLimits (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go, v1.34): PreFilter,
 * Filter, EnqueueExtensions. A node's CSI attach limit per driver (CSINode
 * spec.drivers[].allocatable.count, else the node's allocatable attachable-volumes-csi-<driver>)
 * must hold the pod's new unique volumes plus those already attached: the volumes of its pods and
 * of the VolumeAttachments naming the node. A volume is "<driver>/<volumeHandle>" of the bound CSI
 * PV, or, for a claim not bound yet, the provisioner of its StorageClass with a handle unique to
 * the claim; a volume several pods share counts once. In-tree volumes (PVs, classes' in-tree
 * provisioners and inline volumes of AWS EBS, GCE PD, Azure Disk, Cinder, Portworx) count under
 * the CSI driver they migrate to (csi-translation-lib, schedkit/volume.h) when migration is on for
 * the node (utils.go isCSIMigrationOn: a CSINode exists; Portworx also needs the plugin in the
 * CSINode's migrated-plugins annotation). */
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

/* Adds an already formed unique name "<driver>/<handle>". */
static int vols_add_unique(struct vols *s, const char *unique, const char *driver)
{
	return vols_add(s, driver, unique + strlen(driver) + 1);
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

/* isCSIMigrationOn (utils.go, v1.34): AWS EBS, GCE PD, Azure Disk and Cinder are migrated
 * wherever a CSINode exists; Portworx (CSIMigrationPortworx, on by default) only where the CSINode
 * lists it in its migrated-plugins annotation; the others are not counted. */
static bool migration_on(const struct sk_csi_node *csi, const char *plugin)
{
	if (!csi || !plugin || !*plugin)
		return false;
	static const char *const always[] = { "kubernetes.io/aws-ebs", "kubernetes.io/gce-pd",
					      "kubernetes.io/azure-disk", "kubernetes.io/cinder" };
	for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
		if (strcmp(plugin, always[i]) == 0)
			return true;
	if (strcmp(plugin, "kubernetes.io/portworx-volume") == 0)
		return sk_csi_node_plugin_migrated(csi, plugin);
	return false;
}

/* getCSIDriverInfoFromSC: the provisioner (an in-tree one translated when migrated) and a handle
 * unique to the claim; NULL driver = uncounted. */
static const char *driver_from_class(struct sk_plugin *self, const struct sk_csi_node *csi, const struct sk_pvc *pvc,
				     char *handle, size_t n)
{
	if (!pvc->class_name || !*pvc->class_name)
		return NULL;
	struct sk_storage_class *sc = sk_handle_get_storage_class(self->handle, pvc->class_name);
	if (!sc)
		return NULL;
	const char *drv = sc->provisioner;
	sk_vobj_unref(sc); /* provisioner is interned */
	if (sk_csi_migration_driver(drv)) { /* IsMigratableIntreePluginByName */
		if (!migration_on(csi, drv))
			return NULL;
		drv = sk_csi_migration_driver(drv);
	}
	const struct nvl *p = self->priv;
	snprintf(handle, n, "%s-%s/%s", p->prefix, pvc->meta.ns, pvc->meta.name);
	return drv;
}

/* The CSI driver and handle of a PV: its csi source, or its in-tree source translated when
 * migration is on for the node; NULL = not counted. */
static const char *pv_driver(const struct sk_csi_node *csi, const struct sk_pv *pv, char *handle, size_t n)
{
	if (pv->csi_driver) {
		snprintf(handle, n, "%s", pv->csi_handle);
		return pv->csi_driver;
	}
	const char *plugin = sk_csi_migration_plugin_of_source(pv->source); /* IsPVMigratable */
	const char *drv = NULL;
	if (!plugin || !migration_on(csi, plugin) ||
	    sk_csi_migration_translate(pv->source, pv->intree_id, &pv->labels, &drv, handle, n) != 0)
		return NULL;
	return drv;
}

/* getCSIDriverInfo: driver and handle of the claim's volume; NULL driver = not counted. */
static const char *driver_info(struct sk_plugin *self, const struct sk_csi_node *csi, const struct sk_pvc *pvc,
			       char *handle, size_t n)
{
	if (!pvc->volume_name)
		return driver_from_class(self, csi, pvc, handle, n);
	struct sk_pv *pv = sk_handle_get_pv(self->handle, pvc->volume_name);
	if (!pv)
		return driver_from_class(self, csi, pvc, handle, n);
	const char *drv = pv_driver(csi, pv, handle, n);
	sk_vobj_unref(pv); /* driver and handle are interned or copied */
	return drv;
}

/* checkAttachableInlineVolume: an inline in-tree volume counts under its CSI driver when migrated. */
static int inline_volume(const struct sk_csi_node *csi, const struct sk_pod_volume *v, struct vols *out,
			 struct sk_status *st)
{
	const char *plugin = sk_csi_migration_plugin_of_volume(v); /* IsInlineMigratable */
	if (!plugin || !migration_on(csi, plugin))
		return 0;
	char handle[512];
	const char *drv = NULL;
	if (sk_csi_migration_translate_volume(v, &drv, handle, sizeof handle) != 0) {
		*st = sk_statusf(SK_ERROR, "converting volume(%s) from inline to csi: cannot translate %s",
				 v->name ? v->name : "", v->id ? v->id : "");
		return -1;
	}
	if (vols_add(out, drv, handle) != 0) {
		*st = sk_status(SK_ERROR, "out of memory");
		return -1;
	}
	return 0;
}

/* filterAttachableVolumes. For the new pod a missing claim is an error (*not_found set); for pods
 * already on the node it is skipped. 0, or -1 with *st set. */
static int attachable_volumes(struct sk_plugin *self, const struct sk_csi_node *csi, const struct sk_pod *pod,
			      bool new_pod, struct vols *out, struct sk_status *st)
{
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC && v->source != SK_VOL_EPHEMERAL) {
			if (inline_volume(csi, v, out, st) != 0)
				return -1;
			continue;
		}
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
		const char *drv = driver_info(self, csi, pvc, handle, sizeof handle);
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

/* IsInlineMigratable: an inline source csi-translation-lib translates. */
static bool inline_migratable(const struct sk_pod_volume *v)
{
	return sk_csi_migration_plugin_of_volume(v) != NULL;
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

/* The volume of a VolumeAttachment: the PV's (csi, or in-tree translated), an inline spec's, or,
 * when the PV is not known or not translated, "<attacher>/<PV name>" so it still counts. */
static int attachment_volume(struct sk_plugin *self, const struct sk_csi_node *csi,
			     const struct sk_volume_attachment *va, struct vols *out)
{
	char handle[512];
	const char *drv = NULL;
	if (va->pv_name) {
		struct sk_pv *pv = sk_handle_get_pv(self->handle, va->pv_name);
		drv = pv ? pv_driver(csi, pv, handle, sizeof handle) : NULL;
		sk_vobj_unref(pv);
		if (!drv) {
			drv = va->attacher;
			snprintf(handle, sizeof handle, "%s", va->pv_name);
		}
	} else if (va->inline_csi_driver) {
		drv = va->inline_csi_driver;
		snprintf(handle, sizeof handle, "%s", va->inline_csi_handle);
	} else if (va->inline_source && va->inline_intree_id) {
		if (sk_csi_migration_translate(va->inline_source, va->inline_intree_id, NULL, &drv, handle,
					       sizeof handle) != 0)
			return 0;
	} else {
		return 0;
	}
	return vols_add(out, drv, handle);
}

/* The node's VolumeAttachments not already counted through its pods (getNodeVolumeAttachmentInfo). */
static int attached_by_vas(struct sk_plugin *self, const struct sk_csi_node *csi, const char *node,
			   struct vols *attached, struct sk_status *st)
{
	struct sk_volume_attachment **vas = NULL;
	int n = sk_handle_list_volume_attachments(self->handle, node, &vas);
	struct vols from_vas = { 0 };
	int rc = n < 0 ? -1 : 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = attachment_volume(self, csi, vas[i], &from_vas);
	for (int i = 0; i < from_vas.n && rc == 0; i++)
		if (vols_find(attached, from_vas.v[i].unique) < 0)
			rc = vols_add_unique(attached, from_vas.v[i].unique, from_vas.v[i].driver);
	vols_free(&from_vas);
	sk_vobj_list_free(vas, n);
	if (rc != 0)
		*st = sk_status(SK_ERROR, "out of memory");
	return rc;
}

static struct sk_status check_limits(const struct sk_node *node, const struct sk_csi_node *csi, struct vols *newv,
				     const struct vols *attached, int nfrom_pods)
{
	/* A volume already attached for another pod is not new (the VolumeAttachments' are not
	 * subtracted: upstream counts them on top of the pod's new volumes). */
	for (int i = 0; i < nfrom_pods; i++) {
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
	if (attachable_volumes(self, csi, pod, true, &newv, &st) != 0 || newv.n == 0)
		goto out;
	for (int i = 0; i < ni->npods; i++)
		if (attachable_volumes(self, csi, ni->pods[i].pod, false, &attached, &st) != 0)
			goto out;
	int nfrom_pods = attached.n;
	if (attached_by_vas(self, csi, ni->node->name, &attached, &st) != 0)
		goto out;
	st = check_limits(ni->node, csi, &newv, &attached, nfrom_pods);
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

/* isSchedulableAfterVolumeAttachmentDeleted: the attachment was of the PV one of the pod's claims
 * is bound to, or of the CSI driver one of its inline migratable volumes translates to. */
static enum sk_hint nvl_hint_va_deleted(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					const void *new_obj)
{
	(void)new_obj;
	const struct sk_volume_attachment *va = old_obj;
	if (!va)
		return SK_QUEUE;
	const char *va_driver = va->inline_csi_driver ? va->inline_csi_driver : va->attacher;
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source == SK_VOL_PVC || v->source == SK_VOL_EPHEMERAL) {
			if (!va->pv_name || !v->claim)
				continue;
			struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
			bool match = pvc && pvc->volume_name && strcmp(pvc->volume_name, va->pv_name) == 0;
			sk_vobj_unref(pvc);
			if (match)
				return SK_QUEUE;
			continue;
		}
		const char *plugin = sk_csi_migration_plugin_of_volume(v);
		const char *drv = plugin ? sk_csi_migration_driver(plugin) : NULL;
		if (!va->pv_name && drv && strcmp(drv, va_driver) == 0)
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
		/* an attachment that went away frees a slot (attached_by_vas) */
		{ { SK_EV_VOLUME_ATTACHMENT, SK_ACT_DELETE, "VolumeAttachmentDelete" }, nvl_hint_va_deleted },
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
