/* simulate's storage objects (sim_volumes.h). */
#include <string.h>

#include "kube/util.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/simulate/sim_volumes.h"

bool sk_sim_is_storage_kind(const char *kind)
{
	static const char *const kinds[] = { "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
					     "CSIDriver", NULL };
	for (int i = 0; kind && kinds[i]; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

int sk_sim_volumes_patch(struct sk_volume_store *vs, const char *path, const cJSON *patch, cJSON **out,
			 bool *conflict, char **err)
{
	(void)vs;
	(void)patch;
	(void)out;
	*conflict = false;
	return kube_errf(err, "PATCH %s: simulate does not write storage objects", path);
}
