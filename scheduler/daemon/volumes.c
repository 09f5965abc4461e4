/* The storage informers of the daemon: PersistentVolumeClaims, PersistentVolumes, StorageClasses,
 * CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments feed the volume store (scheduler/backend/volume_store.h) the volume
 * plugins read, and each change is a cluster event for the queue (PersistentVolumeClaimAdd, ...,
 * as upstream's eventhandlers.go registers them), with the decoded views as the hints' objects.
 * Also the merge-patch call of the frameworks (VolumeBinding's PreBind). */
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/backend/queue.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/daemon/internal.h"

struct vkind {
	enum sk_vobj_kind kind;
	uint32_t resource;
	const char *group, *version, *resource_name;
	const char *add_label, *update_label, *delete_label;
};

static const struct vkind kinds[SK_DM_NVOLUME_INFORMERS] = {
	{ SK_VOBJ_PVC, SK_EV_PVC, NULL, "v1", "persistentvolumeclaims", "PersistentVolumeClaimAdd",
	  "PersistentVolumeClaimUpdate", "PersistentVolumeClaimDelete" },
	{ SK_VOBJ_PV, SK_EV_PV, NULL, "v1", "persistentvolumes", "PersistentVolumeAdd", "PersistentVolumeUpdate",
	  "PersistentVolumeDelete" },
	{ SK_VOBJ_STORAGE_CLASS, SK_EV_STORAGE_CLASS, "storage.k8s.io", "v1", "storageclasses", "StorageClassAdd",
	  "StorageClassUpdate", "StorageClassDelete" },
	{ SK_VOBJ_CSI_NODE, SK_EV_CSI_NODE, "storage.k8s.io", "v1", "csinodes", "CSINodeAdd", "CSINodeUpdate",
	  "CSINodeDelete" },
	{ SK_VOBJ_CSI_DRIVER, SK_EV_CSI_DRIVER, "storage.k8s.io", "v1", "csidrivers", "CSIDriverAdd",
	  "CSIDriverUpdate", "CSIDriverDelete" },
	/* VolumeBinding's capacity check and NodeVolumeLimits' attachments (v1.34) */
	{ SK_VOBJ_CSI_STORAGE_CAPACITY, SK_EV_CSI_STORAGE_CAPACITY, "storage.k8s.io", "v1", "csistoragecapacities",
	  "CSIStorageCapacityAdd", "CSIStorageCapacityUpdate", "CSIStorageCapacityDelete" },
	{ SK_VOBJ_VOLUME_ATTACHMENT, SK_EV_VOLUME_ATTACHMENT, "storage.k8s.io", "v1", "volumeattachments",
	  "VolumeAttachmentAdd", "VolumeAttachmentUpdate", "VolumeAttachmentDelete" },
};

struct vhandler {
	struct sk_daemon *d;
	const struct vkind *k;
};
static struct vhandler *handlers_of(struct sk_daemon *d)
{
	return d->vol_handlers;
}

static void requeue(struct sk_daemon *d, const struct vkind *k, uint32_t action, const char *label,
		    const struct sk_vobj *old, const struct sk_vobj *cur)
{
	if (!d->sched)
		return;
	struct sk_cluster_event ev = { .resource = k->resource, .action = action, .label = label };
	sk_queue_move_all(sk_scheduler_queue(d->sched), &ev, old, cur);
}

static void on_upsert(struct vhandler *h, const cJSON *obj, bool is_add)
{
	struct sk_vobj *cur = NULL, *old = NULL;
	char *err = NULL;
	if (sk_volume_store_put_json(h->d->volumes, h->k->kind, obj, &cur, &old, &err) != 0) {
		klog_error("Cannot decode storage object", " resource=%s name=%s err=\"%s\"", h->k->resource_name,
			   kube_meta_name(obj) ? kube_meta_name(obj) : "", err ? err : "");
		free(err);
		return;
	}
	/* An add the store already held (a relist) is an update, as the informer reports it. */
	if (is_add)
		requeue(h->d, h->k, SK_ACT_ADD, h->k->add_label, NULL, cur);
	else
		requeue(h->d, h->k, SK_ACT_UPDATE, h->k->update_label, old, cur);
	sk_vobj_unref(cur);
	sk_vobj_unref(old);
}

static void on_add(void *ctx, const cJSON *obj)
{
	on_upsert(ctx, obj, true);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	(void)old_obj;
	on_upsert(ctx, new_obj, false);
}

static void on_delete(void *ctx, const cJSON *obj)
{
	struct vhandler *h = ctx;
	struct sk_vobj *gone = sk_volume_store_delete(h->d->volumes, h->k->kind, kube_meta_namespace(obj),
						      kube_meta_name(obj));
	if (gone)
		requeue(h->d, h->k, SK_ACT_DELETE, h->k->delete_label, gone, NULL);
	sk_vobj_unref(gone);
}

int sk_dm_volume_store_new(struct sk_daemon *d, char **err)
{
	if (!(d->volumes = sk_volume_store_new()))
		return kube_errf(err, "volume store: out of memory");
	return 0;
}

int sk_dm_volumes_new(struct sk_daemon *d, char **err)
{
	if (!d->volumes || !(d->vol_handlers = calloc(SK_DM_NVOLUME_INFORMERS, sizeof(struct vhandler))))
		return kube_errf(err, "storage informers: out of memory");
	struct vhandler *hs = handlers_of(d);
	for (int i = 0; i < SK_DM_NVOLUME_INFORMERS; i++) {
		struct kube_informer_opts o = { .group = kinds[i].group, .version = kinds[i].version,
						.resource = kinds[i].resource_name };
		if (kube_informer_new(d->client, &o, &d->vol_informers[i]) != 0)
			return kube_errf(err, "storage informers: out of memory");
		hs[i] = (struct vhandler){ d, &kinds[i] };
		kube_informer_add_handlers(d->vol_informers[i],
					   &(struct kube_informer_handlers){ on_add, on_update, on_delete, &hs[i] });
	}
	return 0;
}

int sk_dm_volumes_start(struct sk_daemon *d)
{
	for (int i = 0; i < SK_DM_NVOLUME_INFORMERS; i++)
		if (d->vol_informers[i] && kube_informer_start(d->vol_informers[i]) != 0)
			return -1;
	return 0;
}

bool sk_dm_volumes_synced(struct sk_daemon *d)
{
	for (int i = 0; i < SK_DM_NVOLUME_INFORMERS; i++)
		if (d->vol_informers[i] && !kube_informer_has_synced(d->vol_informers[i]))
			return false;
	return true;
}

void sk_dm_volumes_stop(struct sk_daemon *d)
{
	for (int i = 0; i < SK_DM_NVOLUME_INFORMERS; i++)
		if (d->vol_informers[i])
			kube_informer_stop(d->vol_informers[i]);
}

void sk_dm_volumes_free(struct sk_daemon *d)
{
	for (int i = 0; i < SK_DM_NVOLUME_INFORMERS; i++) {
		kube_informer_free(d->vol_informers[i]);
		d->vol_informers[i] = NULL;
	}
	free(d->vol_handlers);
	d->vol_handlers = NULL;
	sk_volume_store_free(d->volumes);
	d->volumes = NULL;
}

/* env.api_patch: a JSON merge patch through the daemon's client. */
int sk_dm_api_patch(void *ctx, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err)
{
	struct profile_ctx *pc = ctx;
	struct kube_error ke = { 0 };
	cJSON *resp = NULL;
	*conflict = false;
	if (kube_patch(pc->d->client, path, KUBE_PATCH_MERGE, patch, &resp, &ke) != 0) {
		*conflict = kube_error_is_conflict(&ke);
		cJSON_Delete(resp);
		return kube_errf(err, "PATCH %s: %s", path, ke.message[0] ? ke.message : "request failed");
	}
	if (out)
		*out = resp;
	else
		cJSON_Delete(resp);
	return 0;
}
