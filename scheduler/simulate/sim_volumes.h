/* simulate's storage objects: which kinds of the cluster file go to the volume store, and the
 * merge patches VolumeBinding's PreBind sends, applied to that store as the API server and the
 * PV controller would (see docs/simulate.md). */
#ifndef SK_SIMULATE_SIM_VOLUMES_H
#define SK_SIMULATE_SIM_VOLUMES_H

#include <stdbool.h>

#include <cjson/cJSON.h>

struct sk_volume_store;

/* PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver. */
bool sk_sim_is_storage_kind(const char *kind);
/* env.api_patch over the store. 0 and *out (may be NULL), or -1 and *err. */
int sk_sim_volumes_patch(struct sk_volume_store *vs, const char *path, const cJSON *patch, cJSON **out,
			 bool *conflict, char **err);

#endif
