/* Decoding a pod's spec.volumes into struct sk_pod_volume (schedkit/types.h); used by decode.c. */
#ifndef SK_API_POD_VOLUMES_H
#define SK_API_POD_VOLUMES_H

#include <cjson/cJSON.h>

#include "schedkit/types.h"

/* vols is spec.volumes (NULL ok). *out is one allocation (free it), *n its length. 0, or -1 and
 * *err (caller frees; a field path such as "spec.volumes[2].rbd.monitors: must be an array"). */
int sk_pod_volumes_decode(const cJSON *vols, const char *pod_name, struct sk_pod_volume **out, int *n, char **err);

#endif
