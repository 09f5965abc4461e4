/* Tests for the storage kinds of ABI 1.2 (scheduler/api/volume.c, schedkit/volume.h):
 * CSIStorageCapacity and VolumeAttachment decoding (defaults, and errors naming the object and
 * the field), the volume store's VolumeAttachment node index (put, a replacement moving to another
 * node, delete), the in-tree fields the CSI migration reads (PV intree_id, CSINode migrated
 * plugins, StorageClass allowedTopologies as served, PVC storage request presence), and the
 * csi-translation-lib table (scheduler/api/csi_translation.c): driver names, plugin names, the
 * volume handles of AWS EBS, GCE PD (zonal, regional, unspecified, inline), Azure Disk and Cinder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/volume_store.h"
#include "scheduler/tests/fixtures.h"
#include "schedkit/volume.h"

static struct sk_vobj *dec(const char *json, char **err)
{
	cJSON *j = fx_json(json);
	*err = NULL;
	struct sk_vobj *v = sk_vobj_decode(j, err);
	cJSON_Delete(j);
	return v;
}

struct bad {
	const char *json, *err; /* the error's expected beginning */
};

static void expect_errors(const struct bad *bad, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		struct sk_vobj *v = dec(bad[i].json, &err);
		if (v || !err || strncmp(err, bad[i].err, strlen(bad[i].err)) != 0) {
			print_error("case %zu: got %s\n", i, err ? err : "(no error)");
			fail();
		}
		free(err);
	}
}

static void test_capacity_decode(void **state)
{
	(void)state;
	char *err = NULL;
	struct sk_csi_storage_capacity *c = (struct sk_csi_storage_capacity *)dec(
		"{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c1\",\"namespace\":\"kube-system\"},"
		"\"storageClassName\":\"fast\",\"capacity\":\"10Gi\",\"maximumVolumeSize\":\"2Gi\","
		"\"nodeTopology\":{\"matchLabels\":{\"zone\":\"a\"}}}",
		&err);
	assert_non_null(c);
	assert_int_equal(c->meta.kind, SK_VOBJ_CSI_STORAGE_CAPACITY);
	assert_string_equal(c->meta.ns, "kube-system");
	assert_string_equal(c->class_name, "fast");
	assert_true(c->has_capacity);
	assert_true(c->capacity == 10LL << 30);
	int64_t limit = 0;
	assert_true(sk_csi_storage_capacity_limit(c, &limit));
	assert_true(limit == 2LL << 30); /* maximumVolumeSize wins */
	assert_non_null(c->node_topology);
	sk_vobj_unref(c);

	c = (struct sk_csi_storage_capacity *)dec("{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c2\","
						  "\"namespace\":\"ns\"},\"storageClassName\":\"fast\"}",
						  &err);
	assert_non_null(c);
	assert_false(sk_csi_storage_capacity_limit(c, &limit)); /* neither set */
	assert_null(c->node_topology);                          /* available nowhere */
	sk_vobj_unref(c);

	const struct bad bad[] = {
		{ "{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"}}",
		  "csistoragecapacity ns/c: storageClassName: Required value" },
		{ "{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"storageClassName\":\"s\","
		  "\"capacity\":\"lots\"}",
		  "csistoragecapacity ns/c: capacity: Invalid value: \"lots\"" },
		{ "{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c\"},\"storageClassName\":\"s\"}",
		  "csistoragecapacity /c: metadata.namespace: Required value" },
		{ "{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"storageClassName\":\"s\","
		  "\"nodeTopology\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Sometimes\"}]}}",
		  "csistoragecapacity ns/c: nodeTopology: " },
	};
	expect_errors(bad, sizeof bad / sizeof bad[0]);
}

static void test_attachment_decode(void **state)
{
	(void)state;
	char *err = NULL;
	struct sk_volume_attachment *va = (struct sk_volume_attachment *)dec(
		"{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"va1\"},\"spec\":{\"attacher\":\"ebs.csi.aws.com\","
		"\"nodeName\":\"n1\",\"source\":{\"persistentVolumeName\":\"pv1\"}},\"status\":{\"attached\":true}}",
		&err);
	assert_non_null(va);
	assert_string_equal(va->attacher, "ebs.csi.aws.com");
	assert_string_equal(va->node_name, "n1");
	assert_string_equal(va->pv_name, "pv1");
	assert_true(va->attached);
	assert_null(va->inline_source);
	sk_vobj_unref(va);

	va = (struct sk_volume_attachment *)dec(
		"{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"va2\"},\"spec\":{\"attacher\":\"ebs.csi.aws.com\","
		"\"nodeName\":\"n1\",\"source\":{\"inlineVolumeSpec\":{\"awsElasticBlockStore\":{\"volumeID\":\"vol-1\"}}}}}",
		&err);
	assert_non_null(va);
	assert_null(va->pv_name);
	assert_string_equal(va->inline_source, "awsElasticBlockStore");
	assert_string_equal(va->inline_intree_id, "vol-1");
	assert_false(va->attached);
	sk_vobj_unref(va);

	const struct bad bad[] = {
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"nodeName\":\"n\","
		  "\"source\":{\"persistentVolumeName\":\"p\"}}}",
		  "volumeattachment v: spec.attacher: Required value" },
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"attacher\":\"a\","
		  "\"source\":{\"persistentVolumeName\":\"p\"}}}",
		  "volumeattachment v: spec.nodeName: Required value" },
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"attacher\":\"a\",\"nodeName\":\"n\","
		  "\"source\":{}}}",
		  "volumeattachment v: spec.source: Required value" },
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"attacher\":\"a\",\"nodeName\":\"n\","
		  "\"source\":{\"persistentVolumeName\":\"p\",\"inlineVolumeSpec\":{}}}}",
		  "volumeattachment v: spec.source: Forbidden" },
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"attacher\":\"a\",\"nodeName\":\"n\","
		  "\"source\":{\"inlineVolumeSpec\":{\"csi\":{\"driver\":\"d\"}}}}}",
		  "volumeattachment v: spec.source.inlineVolumeSpec.csi.volumeHandle: Required value" },
		{ "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"v\"},\"spec\":{\"attacher\":\"a\",\"nodeName\":\"n\","
		  "\"source\":{\"persistentVolumeName\":\"p\"}},\"status\":{\"attached\":\"yes\"}}",
		  "volumeattachment v: status.attached: must be a boolean" },
	};
	expect_errors(bad, sizeof bad / sizeof bad[0]);
}

static int count_on(struct sk_volume_store *s, const char *node, const char *first)
{
	struct sk_vobj **l = NULL;
	int n = sk_volume_store_list_volume_attachments(s, node, &l);
	if (first && n > 0)
		assert_string_equal(l[0]->name, first);
	sk_vobj_list_free(l, n);
	return n;
}

static void put(struct sk_volume_store *s, const char *name, const char *node)
{
	char buf[512];
	snprintf(buf, sizeof buf,
		 "{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"attacher\":\"d\",\"nodeName\":\"%s\","
		 "\"source\":{\"persistentVolumeName\":\"pv-%s\"}}}",
		 name, node, name);
	cJSON *j = fx_json(buf);
	char *err = NULL;
	assert_int_equal(sk_volume_store_put_json(s, 0, j, NULL, NULL, &err), 0);
	cJSON_Delete(j);
}

static void test_attachment_index(void **state)
{
	(void)state;
	struct sk_volume_store *s = sk_volume_store_new();
	put(s, "vb", "n1");
	put(s, "va", "n1");
	put(s, "vc", "n2");
	assert_int_equal(count_on(s, "n1", "va"), 2); /* sorted by name */
	assert_int_equal(count_on(s, "n2", "vc"), 1);
	assert_int_equal(count_on(s, "n3", NULL), 0);
	put(s, "va", "n2"); /* the replacement names another node */
	assert_int_equal(count_on(s, "n1", "vb"), 1);
	assert_int_equal(count_on(s, "n2", "va"), 2);
	sk_vobj_unref(sk_volume_store_delete(s, SK_VOBJ_VOLUME_ATTACHMENT, NULL, "vb"));
	assert_int_equal(count_on(s, "n1", NULL), 0);
	assert_int_equal(sk_volume_store_count(s, SK_VOBJ_VOLUME_ATTACHMENT), 2);
	sk_volume_store_free(s);
}

static void test_migration_fields(void **state)
{
	(void)state;
	char *err = NULL;
	struct sk_pv *pv = (struct sk_pv *)dec("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"p\"},\"spec\":"
					       "{\"gcePersistentDisk\":{\"pdName\":\"disk-1\"}}}",
					       &err);
	assert_non_null(pv);
	assert_string_equal(pv->source, "gcePersistentDisk");
	assert_string_equal(pv->intree_id, "disk-1");
	sk_vobj_unref(pv);
	struct sk_csi_node *cn = (struct sk_csi_node *)dec(
		"{\"kind\":\"CSINode\",\"metadata\":{\"name\":\"n\",\"annotations\":{\"storage.alpha.kubernetes.io/"
		"migrated-plugins\":\"kubernetes.io/aws-ebs,kubernetes.io/gce-pd\"}},\"spec\":{\"drivers\":[]}}",
		&err);
	assert_non_null(cn);
	assert_true(sk_csi_node_plugin_migrated(cn, "kubernetes.io/gce-pd"));
	assert_true(sk_csi_node_plugin_migrated(cn, "kubernetes.io/aws-ebs"));
	assert_false(sk_csi_node_plugin_migrated(cn, "kubernetes.io/gce"));
	assert_false(sk_csi_node_plugin_migrated(cn, "kubernetes.io/portworx-volume"));
	assert_false(sk_csi_node_plugin_migrated(NULL, "kubernetes.io/aws-ebs"));
	sk_vobj_unref(cn);
	struct sk_storage_class *sc = (struct sk_storage_class *)dec(
		"{\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"s\"},\"provisioner\":\"p\",\"allowedTopologies\":"
		"[{\"matchLabelExpressions\":[{\"key\":\"z\",\"values\":[\"a\"]}]}]}",
		&err);
	assert_non_null(sc);
	assert_string_equal(sc->allowed_topologies_json, "[{\"matchLabelExpressions\":[{\"key\":\"z\",\"values\":[\"a\"]}]}]");
	sk_vobj_unref(sc);
	struct sk_pvc *with = (struct sk_pvc *)dec("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c\","
						   "\"namespace\":\"d\"},\"spec\":{\"resources\":{\"requests\":{\"storage\":\"0\"}}}}",
						   &err);
	struct sk_pvc *without = (struct sk_pvc *)dec("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c\","
						      "\"namespace\":\"d\"}}",
						      &err);
	assert_true(with->has_request_storage);
	assert_false(without->has_request_storage);
	sk_vobj_unref(with);
	sk_vobj_unref(without);
}

static void test_translation(void **state)
{
	(void)state;
	assert_string_equal(sk_csi_migration_driver("kubernetes.io/aws-ebs"), "ebs.csi.aws.com");
	assert_string_equal(sk_csi_migration_driver("kubernetes.io/gce-pd"), "pd.csi.storage.gke.io");
	assert_string_equal(sk_csi_migration_driver("kubernetes.io/azure-disk"), "disk.csi.azure.com");
	assert_string_equal(sk_csi_migration_driver("kubernetes.io/cinder"), "cinder.csi.openstack.org");
	assert_string_equal(sk_csi_migration_driver("kubernetes.io/portworx-volume"), "pxd.portworx.com");
	assert_null(sk_csi_migration_driver("kubernetes.io/hostpath"));
	assert_string_equal(sk_csi_migration_plugin_of_source("azureFile"), "kubernetes.io/azure-file");
	assert_null(sk_csi_migration_plugin_of_source("hostPath"));
	struct sk_labels zonal = { 0 }, regional = { 0 }, bad_region = { 0 };
	struct sk_label z1[] = { { "topology.kubernetes.io/zone", "us-central1-a" } };
	struct sk_label z2[] = { { "failure-domain.beta.kubernetes.io/zone", "us-central1-a__us-central1-b" } };
	struct sk_label z3[] = { { "topology.kubernetes.io/zone", "us-central1-a__europe-west1-b" } };
	zonal.items = z1;
	zonal.n = 1;
	regional.items = z2;
	regional.n = 1;
	bad_region.items = z3;
	bad_region.n = 1;
	const struct {
		const char *source, *id;
		const struct sk_labels *labels;
		const char *driver, *handle; /* NULL handle: does not translate */
	} cases[] = {
		{ "awsElasticBlockStore", "vol-123", NULL, "ebs.csi.aws.com", "vol-123" },
		{ "awsElasticBlockStore", "aws://us-east-1a/vol-456", NULL, "ebs.csi.aws.com", "vol-456" },
		{ "awsElasticBlockStore", "aws:///vol-789", NULL, "ebs.csi.aws.com", "vol-789" },
		{ "awsElasticBlockStore", "aws://us-east-1a/disk-1", NULL, NULL, NULL },
		{ "gcePersistentDisk", "pd-1", NULL, "pd.csi.storage.gke.io",
		  "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-1" },
		{ "gcePersistentDisk", "pd-1", &zonal, "pd.csi.storage.gke.io",
		  "projects/UNSPECIFIED/zones/us-central1-a/disks/pd-1" },
		{ "gcePersistentDisk", "pd-1", &regional, "pd.csi.storage.gke.io",
		  "projects/UNSPECIFIED/regions/us-central1/disks/pd-1" },
		{ "gcePersistentDisk", "pd-1", &bad_region, NULL, NULL },
		{ "azureDisk", "/subscriptions/s/disks/d", NULL, "disk.csi.azure.com", "/subscriptions/s/disks/d" },
		{ "cinder", "c-1", NULL, "cinder.csi.openstack.org", "c-1" },
		{ "hostPath", "x", NULL, NULL, NULL },
		{ "cinder", "", NULL, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *drv = NULL;
		char handle[256] = "";
		int rc = sk_csi_migration_translate(cases[i].source, cases[i].id, cases[i].labels, &drv, handle,
						    sizeof handle);
		if (cases[i].handle ? (rc != 0 || strcmp(drv, cases[i].driver) != 0 || strcmp(handle, cases[i].handle) != 0)
				    : rc == 0) {
			print_error("case %zu (%s %s): rc %d driver %s handle %s\n", i, cases[i].source, cases[i].id, rc,
				    drv ? drv : "-", handle);
			fail();
		}
	}
	/* a pod's inline volume */
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"volumes\":["
				  "{\"name\":\"a\",\"azureDisk\":{\"diskName\":\"n\",\"diskURI\":\"uri\"}},"
				  "{\"name\":\"g\",\"gcePersistentDisk\":{\"pdName\":\"pd\"}}]}}");
	const char *drv = NULL;
	char handle[256];
	assert_string_equal(sk_csi_migration_plugin_of_volume(&p->volumes[0]), "kubernetes.io/azure-disk");
	assert_int_equal(sk_csi_migration_translate_volume(&p->volumes[0], &drv, handle, sizeof handle), 0);
	assert_string_equal(handle, "uri");
	assert_int_equal(sk_csi_migration_translate_volume(&p->volumes[1], &drv, handle, sizeof handle), 0);
	assert_string_equal(handle, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd");
	sk_pod_unref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity_decode),
		cmocka_unit_test(test_attachment_decode),
		cmocka_unit_test(test_attachment_index),
		cmocka_unit_test(test_migration_fields),
		cmocka_unit_test(test_translation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
