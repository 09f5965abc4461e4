/* CSI migration as staging/src/k8s.io/csi-translation-lib translates in-tree volumes, reduced to
 * what the volume plugins read (schedkit/volume.h): which CSI driver an in-tree plugin migrates to
 * (GetCSINameFromInTreeName), which plugin a volume source belongs to (GetInTreePluginNameFromSpec)
 * and the volume handle of the translated CSI source (plugins/aws_ebs.go, gce_pd.go, azure_disk.go,
 * azure_file.go, openstack_cinder.go, vsphere_volume.go, portworx.go), and whether a CSINode lists
 * a plugin in its migrated-plugins annotation. */
#include <stdio.h>
#include <string.h>

#include "schedkit/volume.h"

struct plugin {
	const char *source;  /* the volume source field */
	const char *intree;  /* the in-tree plugin name */
	const char *driver;  /* the CSI driver it migrates to */
};

static const struct plugin plugins[] = {
	{ "awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com" },
	{ "gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io" },
	{ "azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com" },
	{ "azureFile", "kubernetes.io/azure-file", "file.csi.azure.com" },
	{ "cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org" },
	{ "vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com" },
	{ "portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com" },
};
#define NPLUGINS (sizeof plugins / sizeof plugins[0])

static const struct plugin *by_source(const char *source)
{
	for (size_t i = 0; source && i < NPLUGINS; i++)
		if (strcmp(plugins[i].source, source) == 0)
			return &plugins[i];
	return NULL;
}

const char *sk_csi_migration_driver(const char *intree_plugin)
{
	for (size_t i = 0; intree_plugin && i < NPLUGINS; i++)
		if (strcmp(plugins[i].intree, intree_plugin) == 0)
			return plugins[i].driver;
	return NULL;
}

const char *sk_csi_migration_plugin_of_source(const char *source_field)
{
	const struct plugin *p = by_source(source_field);
	return p ? p->intree : NULL;
}

/* The source field of a pod volume's in-tree source, or NULL. */
static const char *volume_source_field(const struct sk_pod_volume *v)
{
	switch (v->source) {
	case SK_VOL_AWS_EBS: return "awsElasticBlockStore";
	case SK_VOL_GCE_PD: return "gcePersistentDisk";
	case SK_VOL_AZURE_DISK: return "azureDisk";
	case SK_VOL_AZURE_FILE: return "azureFile";
	case SK_VOL_CINDER: return "cinder";
	case SK_VOL_VSPHERE: return "vsphereVolume";
	case SK_VOL_PORTWORX: return "portworxVolume";
	default: return NULL;
	}
}

const char *sk_csi_migration_plugin_of_volume(const struct sk_pod_volume *v)
{
	return v ? sk_csi_migration_plugin_of_source(volume_source_field(v)) : NULL;
}

/* KubernetesVolumeIDToEBSVolumeID (aws_ebs.go): "aws://<zone>/vol-..." or "aws:///vol-..." to the
 * bare id; a bare id is kept. The result must look like vol-<no slash>. */
static int ebs_volume_id(const char *id, char *out, size_t n)
{
	const char *v = id;
	if (strncmp(id, "aws://", 6) == 0) {
		const char *path = strchr(id + 6, '/');
		if (!path)
			return -1;
		while (*path == '/')
			path++;
		v = path;
		size_t len = strlen(v);
		while (len > 0 && v[len - 1] == '/')
			len--;
		if (strncmp(v, "vol-", 4) != 0 || memchr(v, '/', len))
			return -1;
		return snprintf(out, n, "%.*s", (int)len, v) < (int)n ? 0 : -1;
	}
	return snprintf(out, n, "%s", v) < (int)n ? 0 : -1;
}

/* The zone label of a PV: topology.kubernetes.io/zone, else the beta failure-domain label. */
static const char *zone_label(const struct sk_labels *labels)
{
	if (!labels)
		return NULL;
	const char *z = sk_labels_get(labels, "topology.kubernetes.io/zone");
	if (!z || !*z)
		z = sk_labels_get(labels, "failure-domain.beta.kubernetes.io/zone");
	return z && *z ? z : NULL;
}

/* getRegionFromZones (gce_pd.go): every zone of "a__b" without its last "-x" part, all equal. */
static int gce_region(const char *zones, char *out, size_t n)
{
	out[0] = '\0';
	const char *z = zones;
	while (*z) {
		const char *end = strstr(z, "__");
		size_t len = end ? (size_t)(end - z) : strlen(z);
		const char *dash = NULL;
		for (const char *p = z; p < z + len; p++)
			if (*p == '-')
				dash = p;
		if (!dash)
			return -1;
		int rlen = (int)(dash - z);
		if (!out[0]) {
			if (snprintf(out, n, "%.*s", rlen, z) >= (int)n)
				return -1;
		} else if ((int)strlen(out) != rlen || strncmp(out, z, (size_t)rlen) != 0) {
			return -1;
		}
		if (!end)
			break;
		z = end + 2;
	}
	return out[0] ? 0 : -1;
}

/* The GCE PD volume handle: projects/UNSPECIFIED/zones/<zone>/disks/<pd> for one zone (UNSPECIFIED
 * when the PV has none, and always for inline volumes), .../regions/<region>/... for several. */
static int gce_handle(const char *pd, const struct sk_labels *labels, char *out, size_t n)
{
	const char *zones = zone_label(labels);
	int w;
	if (zones && strstr(zones, "__")) {
		char region[128];
		if (gce_region(zones, region, sizeof region) != 0)
			return -1;
		w = snprintf(out, n, "projects/UNSPECIFIED/regions/%s/disks/%s", region, pd);
	} else {
		w = snprintf(out, n, "projects/UNSPECIFIED/zones/%s/disks/%s", zones ? zones : "UNSPECIFIED", pd);
	}
	return w >= 0 && w < (int)n ? 0 : -1;
}

int sk_csi_migration_translate(const char *source_field, const char *id, const struct sk_labels *labels,
			       const char **driver, char *handle, size_t n)
{
	const struct plugin *p = by_source(source_field);
	if (!p || !id || !*id || n == 0)
		return -1;
	int rc;
	if (strcmp(p->source, "awsElasticBlockStore") == 0)
		rc = ebs_volume_id(id, handle, n);
	else if (strcmp(p->source, "gcePersistentDisk") == 0)
		rc = gce_handle(id, labels, handle, n);
	else
		rc = snprintf(handle, n, "%s", id) < (int)n ? 0 : -1;
	if (rc != 0)
		return -1;
	*driver = p->driver;
	return 0;
}

int sk_csi_migration_translate_volume(const struct sk_pod_volume *v, const char **driver, char *handle, size_t n)
{
	return v ? sk_csi_migration_translate(volume_source_field(v), v->id, NULL, driver, handle, n) : -1;
}

bool sk_csi_node_plugin_migrated(const struct sk_csi_node *n, const char *intree_plugin)
{
	if (!n || !n->migrated_plugins || !intree_plugin || !*intree_plugin)
		return false;
	size_t len = strlen(intree_plugin);
	for (const char *s = n->migrated_plugins; *s;) {
		const char *comma = strchr(s, ',');
		size_t tl = comma ? (size_t)(comma - s) : strlen(s);
		if (tl == len && strncmp(s, intree_plugin, len) == 0)
			return true;
		if (!comma)
			break;
		s = comma + 1;
	}
	return false;
}
