/* The volume store: the storage objects of schedkit/volume.h (PVCs, PVs, StorageClasses, CSINodes,
 * CSIDrivers, CSIStorageCapacities, VolumeAttachments) by name, as upstream's informer listers hold them. The daemon's informers
 * (scheduler/daemon/volumes.c) and simulate's cluster file fill it; plugins read it through the
 * handle (sk_handle_get_pvc, ...), which returns new references, so an object replaced or deleted
 * meanwhile stays valid for whoever holds it. One rwlock guards the maps; no callback runs under it. */
#ifndef SK_BACKEND_VOLUME_STORE_H
#define SK_BACKEND_VOLUME_STORE_H

#include <cjson/cJSON.h>

#include "schedkit/volume.h"

struct sk_volume_store;

struct sk_volume_store *sk_volume_store_new(void); /* NULL on ENOMEM */
void sk_volume_store_free(struct sk_volume_store *s); /* NULL ok */
/* Adds or replaces obj (takes the caller's reference). 0, or -1 on ENOMEM (obj unref'd). */
int sk_volume_store_put(struct sk_volume_store *s, struct sk_vobj *obj);
/* Decodes obj (sk_vobj_decode when kind is 0, else that kind's decoder) and puts it. On success
 * *out (may be NULL) gets a new reference to the stored view and *old (may be NULL) the one it
 * replaced (caller unrefs both). 0, or -1 and *err naming the object and field. */
int sk_volume_store_put_json(struct sk_volume_store *s, enum sk_vobj_kind kind, const cJSON *obj,
			     struct sk_vobj **out, struct sk_vobj **old, char **err);
/* Removes the object; returns the removed view (caller unrefs) or NULL when absent. */
struct sk_vobj *sk_volume_store_delete(struct sk_volume_store *s, enum sk_vobj_kind kind, const char *ns,
				       const char *name);
/* A new reference, or NULL. ns is ignored for cluster-scoped kinds (pass NULL or ""). */
struct sk_vobj *sk_volume_store_get(struct sk_volume_store *s, enum sk_vobj_kind kind, const char *ns,
				    const char *name);
/* Every object of kind, sorted by ns/name (new references; sk_vobj_list_free). Count, or -1. */
int sk_volume_store_list(struct sk_volume_store *s, enum sk_vobj_kind kind, struct sk_vobj ***out);
int sk_volume_store_count(struct sk_volume_store *s, enum sk_vobj_kind kind);
/* The VolumeAttachments whose spec.nodeName is node (an index kept on put/delete), sorted by name
 * (new references). Count, or -1 (ENOMEM). */
int sk_volume_store_list_volume_attachments(struct sk_volume_store *s, const char *node,
					    struct sk_vobj ***out);

#endif
