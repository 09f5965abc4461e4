/* A pod's spec.volumes as the volume plugins read them (struct sk_pod_volume, schedkit/types.h):
 * the claim of persistentVolumeClaim and generic ephemeral volumes, and the identity of the in-tree
 * disks VolumeRestrictions compares (pkg/scheduler/framework/plugins/volumerestrictions). Called
 * by the pod decoder (decode.c); the whole list is one allocation freed with the pod. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/util.h"
#include "scheduler/api/pod_volumes.h"

struct vsrc {
	const char *field;
	enum sk_volume_source source;
	const char *id_field; /* NULL: no identity read */
};

static const struct vsrc sources[] = {
	{ "persistentVolumeClaim", SK_VOL_PVC, NULL },
	{ "ephemeral", SK_VOL_EPHEMERAL, NULL },
	{ "gcePersistentDisk", SK_VOL_GCE_PD, "pdName" },
	{ "awsElasticBlockStore", SK_VOL_AWS_EBS, "volumeID" },
	{ "rbd", SK_VOL_RBD, "image" },
	{ "iscsi", SK_VOL_ISCSI, "iqn" },
	{ "csi", SK_VOL_CSI, "driver" },
	/* the other in-tree sources csi-translation-lib migrates (NodeVolumeLimits counts them) */
	{ "azureDisk", SK_VOL_AZURE_DISK, "diskURI" },
	{ "cinder", SK_VOL_CINDER, "volumeID" },
	{ "portworxVolume", SK_VOL_PORTWORX, "volumeID" },
	{ "vsphereVolume", SK_VOL_VSPHERE, "volumePath" },
	{ "azureFile", SK_VOL_AZURE_FILE, "shareName" },
};

static int string_field(const cJSON *o, const char *field, const char *path, const char **out, char **err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, field);
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it))
		return kube_errf(err, "%s.%s: must be a string", path, field);
	if (!(*out = sk_intern(it->valuestring)))
		return kube_errf(err, "out of memory");
	return 0;
}

static int bool_field(const cJSON *o, const char *field, const char *path, bool *out, char **err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, field);
	*out = false;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsBool(it))
		return kube_errf(err, "%s.%s: must be a boolean", path, field);
	*out = cJSON_IsTrue(it);
	return 0;
}

/* rbd.monitors into mons (room for the array's size). */
static int decode_monitors(const cJSON *src, const char *path, const char **mons, int *n, char **err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(src, "monitors");
	*n = 0;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return kube_errf(err, "%s.monitors: must be an array", path);
	int i = 0;
	for (const cJSON *m = arr->child; m; m = m->next, i++) {
		if (!cJSON_IsString(m))
			return kube_errf(err, "%s.monitors[%d]: must be a string", path, i);
		if (!(mons[(*n)++] = sk_intern(m->valuestring)))
			return kube_errf(err, "out of memory");
	}
	return 0;
}

static int count_monitors(const cJSON *vols)
{
	int n = 0;
	for (const cJSON *v = vols->child; v; v = v->next) {
		const cJSON *rbd = cJSON_GetObjectItemCaseSensitive(v, "rbd");
		const cJSON *m = rbd ? cJSON_GetObjectItemCaseSensitive(rbd, "monitors") : NULL;
		if (cJSON_IsArray(m))
			n += cJSON_GetArraySize(m);
	}
	return n;
}

static int decode_one(const cJSON *v, const char *path, const char *pod_name, struct sk_pod_volume *out,
		      const char **mons, char **err)
{
	if (!cJSON_IsObject(v))
		return kube_errf(err, "%s: must be an object", path);
	if (string_field(v, "name", path, &out->name, err) != 0)
		return -1;
	for (size_t k = 0; k < sizeof sources / sizeof sources[0]; k++) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(v, sources[k].field);
		if (!src || cJSON_IsNull(src))
			continue;
		char sub[160];
		snprintf(sub, sizeof sub, "%s.%s", path, sources[k].field);
		if (!cJSON_IsObject(src))
			return kube_errf(err, "%s: must be an object", sub);
		out->source = sources[k].source;
		if (sources[k].id_field && string_field(src, sources[k].id_field, sub, &out->id, err) != 0)
			return -1;
		if (bool_field(src, "readOnly", sub, &out->read_only, err) != 0)
			return -1;
		if (out->source == SK_VOL_PVC) {
			if (string_field(src, "claimName", sub, &out->claim, err) != 0)
				return -1;
		} else if (out->source == SK_VOL_EPHEMERAL) {
			if (!out->name)
				return kube_errf(err, "%s.name: Required value", path);
			char *cn = NULL;
			if (asprintf(&cn, "%s-%s", pod_name ? pod_name : "", out->name) < 0)
				return kube_errf(err, "out of memory");
			out->claim = sk_intern(cn);
			free(cn);
			if (!out->claim)
				return kube_errf(err, "out of memory");
		} else if (out->source == SK_VOL_RBD) {
			if (string_field(src, "pool", sub, &out->pool, err) != 0)
				return -1;
			if (!out->pool)
				out->pool = sk_intern("rbd"); /* the API server's default for rbd.pool */
			out->monitors = mons;
			if (decode_monitors(src, sub, mons, &out->nmonitors, err) != 0)
				return -1;
		}
		return 0;
	}
	return 0;
}

int sk_pod_volumes_decode(const cJSON *vols, const char *pod_name, struct sk_pod_volume **out, int *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (!vols || cJSON_IsNull(vols))
		return 0;
	if (!cJSON_IsArray(vols))
		return kube_errf(err, "spec.volumes: must be an array");
	int nv = cJSON_GetArraySize(vols);
	if (nv == 0)
		return 0;
	int nm = count_monitors(vols);
	size_t size = sizeof(struct sk_pod_volume) * (size_t)nv + sizeof(char *) * (size_t)nm;
	struct sk_pod_volume *list = calloc(1, size);
	if (!list)
		return kube_errf(err, "out of memory");
	const char **mons = (const char **)(list + nv);
	int i = 0;
	for (const cJSON *v = vols->child; v && i < nv; v = v->next, i++) {
		char path[48];
		snprintf(path, sizeof path, "spec.volumes[%d]", i);
		if (decode_one(v, path, pod_name, &list[i], mons, err) != 0) {
			free(list);
			return -1;
		}
		mons += list[i].nmonitors;
	}
	*out = list;
	*n = nv;
	return 0;
}
