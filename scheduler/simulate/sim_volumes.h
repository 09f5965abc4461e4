/* simulate's storage objects: which kinds of the cluster file go to the volume store, and the
 * merge patches VolumeBinding's PreBind sends, applied to that store as the API server and the
 * PV controller would (see docs/simulate.md). */
#ifndef SK_SIMULATE_SIM_VOLUMES_H
#define SK_SIMULATE_SIM_VOLUMES_H

#include <stdbool.h>

#include <cjson/cJSON.h>

struct sk_volume_store;
struct sk_sim_volumes;

/* PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver. */
bool sk_sim_is_storage_kind(const char *kind);
struct sk_sim_volumes *sk_sim_volumes_new(void); /* NULL on ENOMEM */
void sk_sim_volumes_free(struct sk_sim_volumes *v);
/* The store the frameworks' listers read (env.volumes). */
struct sk_volume_store *sk_sim_volumes_store(struct sk_sim_volumes *v);
/* Adds a document of the cluster file (a uid is made up when it has none). 0, or -1 and *err
 * naming the object and the field. */
int sk_sim_volumes_add(struct sk_sim_volumes *v, const cJSON *obj, char **err);
/* env.api_patch: a JSON merge patch of a PV or PVC, then the PV controller's reaction. 0 and *out
 * (the object after the patch; may be NULL), or -1, *err and *conflict (resourceVersion differs). */
int sk_sim_volumes_patch(struct sk_sim_volumes *v, const char *path, const cJSON *patch, cJSON **out,
			 bool *conflict, char **err);

#endif
