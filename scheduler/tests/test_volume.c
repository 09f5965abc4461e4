/* Tests for scheduler/api/volume.c (the storage views), scheduler/api/pod_volumes.c (a pod's
 * volumes) and scheduler/backend/volume_store.c (the listers' store): decoded fields and defaults,
 * errors that name the object and the field, replacement, deletion, listing order, and that a
 * reference outlives its removal from the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "schedkit/volume.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/tests/fixtures.h"

static struct sk_vobj *decode_yaml(const char *yaml, char **err)
{
	char *perr = NULL;
	cJSON *j = kube_yaml_parse_one(yaml, strlen(yaml), &perr);
	assert_non_null(j);
	struct sk_vobj *v = sk_vobj_decode(j, err);
	cJSON_Delete(j);
	return v;
}

static void test_pvc_fields(void **state)
{
	(void)state;
	char *err = NULL;
	struct sk_pvc *p = (struct sk_pvc *)decode_yaml(
		"kind: PersistentVolumeClaim\n"
		"metadata: {name: data, namespace: ns, uid: u1, resourceVersion: '7',\n"
		"  annotations: {pv.kubernetes.io/bind-completed: 'yes', volume.kubernetes.io/selected-node: n1,\n"
		"    volume.beta.kubernetes.io/storage-provisioner: p.example.com},\n"
		"  ownerReferences: [{apiVersion: v1, kind: Pod, name: x, uid: pod-uid, controller: true}]}\n"
		"spec: {accessModes: [ReadWriteOnce, ReadWriteOncePod], storageClassName: fast, volumeName: pv1,\n"
		"  volumeMode: Block, resources: {requests: {storage: 1Gi}}, selector: {matchLabels: {a: b}}}\n"
		"status: {phase: Bound}\n",
		&err);
	assert_non_null(p);
	assert_int_equal(p->meta.kind, SK_VOBJ_PVC);
	assert_string_equal(p->meta.ns, "ns");
	assert_string_equal(p->meta.resource_version, "7");
	assert_int_equal(p->access_modes, SK_ACCESS_RWO | SK_ACCESS_RWOP);
	assert_string_equal(p->class_name, "fast");
	assert_true(p->class_set);
	assert_string_equal(p->volume_name, "pv1");
	assert_int_equal(p->request_storage, 1073741824);
	assert_true(p->block_mode);
	assert_true(p->bind_completed);
	assert_string_equal(p->selected_node, "n1");
	assert_string_equal(p->provisioner, "p.example.com");
	assert_string_equal(p->phase, "Bound");
	assert_string_equal(p->controller_uid, "pod-uid");
	assert_non_null(p->selector);
	sk_vobj_unref(p);

	/* the beta annotation wins over spec.storageClassName; no class at all is "" and unset */
	p = (struct sk_pvc *)decode_yaml("kind: PersistentVolumeClaim\nmetadata: {name: a, namespace: ns,\n"
					 "  annotations: {volume.beta.kubernetes.io/storage-class: old}}\n"
					 "spec: {storageClassName: new}\n",
					 &err);
	assert_string_equal(p->class_name, "old");
	sk_vobj_unref(p);
	p = (struct sk_pvc *)decode_yaml("kind: PersistentVolumeClaim\nmetadata: {name: a, namespace: ns}\n", &err);
	assert_string_equal(p->class_name, "");
	assert_false(p->class_set);
	assert_null(p->volume_name);
	assert_false(p->bind_completed);
	sk_vobj_unref(p);
}

static void test_pv_and_others(void **state)
{
	(void)state;
	char *err = NULL;
	struct sk_pv *pv = (struct sk_pv *)decode_yaml(
		"kind: PersistentVolume\nmetadata: {name: pv1, labels: {topology.kubernetes.io/zone: b, a: x}}\n"
		"spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteMany], storageClassName: slow,\n"
		"  claimRef: {namespace: ns, name: data, uid: u1}, csi: {driver: d.example.com, volumeHandle: h1},\n"
		"  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b]}]}]}}}\n"
		"status: {phase: Bound}\n",
		&err);
	assert_non_null(pv);
	assert_int_equal(pv->capacity, 10737418240LL);
	assert_int_equal(pv->access_modes, SK_ACCESS_RWX);
	assert_string_equal(pv->class_name, "slow");
	assert_string_equal(pv->claim_ns, "ns");
	assert_string_equal(pv->claim_name, "data");
	assert_string_equal(pv->claim_uid, "u1");
	assert_string_equal(pv->source, "csi");
	assert_string_equal(pv->csi_driver, "d.example.com");
	assert_string_equal(pv->csi_handle, "h1");
	assert_string_equal(pv->labels.items[0].key, "a"); /* sorted */
	struct sk_node *in_b = fx_node("{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":\"b\"}}}");
	struct sk_node *in_a = fx_node("{\"metadata\":{\"name\":\"m\",\"labels\":{\"topology.kubernetes.io/zone\":\"a\"}}}");
	assert_true(sk_pv_matches_node(pv, in_b));
	assert_false(sk_pv_matches_node(pv, in_a));
	sk_node_unref(in_b);
	sk_node_unref(in_a);
	sk_vobj_unref(pv);

	struct sk_storage_class *sc = (struct sk_storage_class *)decode_yaml(
		"kind: StorageClass\nmetadata: {name: wffc, annotations: {storageclass.kubernetes.io/is-default-class: 'true'}}\n"
		"provisioner: p.example.com\nvolumeBindingMode: WaitForFirstConsumer\n"
		"allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]}]\n",
		&err);
	assert_non_null(sc);
	assert_true(sc->binding_mode_set);
	assert_true(sc->wait_for_first_consumer);
	assert_true(sc->is_default);
	assert_non_null(sc->allowed_topologies);
	sk_vobj_unref(sc);

	struct sk_csi_node *cn = (struct sk_csi_node *)decode_yaml(
		"kind: CSINode\nmetadata: {name: n1}\n"
		"spec: {drivers: [{name: a.example.com, nodeID: n1, allocatable: {count: 3}, topologyKeys: [zone]},\n"
		"  {name: b.example.com, nodeID: n1}]}\n",
		&err);
	assert_non_null(cn);
	const struct sk_csi_node_driver *d = sk_csi_node_driver(cn, "a.example.com");
	assert_non_null(d);
	assert_true(d->has_count);
	assert_int_equal(d->count, 3);
	assert_int_equal(d->ntopology_keys, 1);
	assert_false(sk_csi_node_driver(cn, "b.example.com")->has_count);
	assert_null(sk_csi_node_driver(cn, "c.example.com"));
	sk_vobj_unref(cn);

	struct sk_csi_driver *drv = (struct sk_csi_driver *)decode_yaml("kind: CSIDriver\nmetadata: {name: a.example.com}\n", &err);
	assert_true(drv->attach_required); /* the API's default */
	assert_false(drv->storage_capacity);
	sk_vobj_unref(drv);
}

static void test_errors(void **state)
{
	(void)state;
	const struct {
		const char *yaml, *want;
	} cases[] = {
		{ "kind: PersistentVolumeClaim\nmetadata: {name: a}\n",
		  "persistentvolumeclaim /a: metadata.namespace: Required value" },
		{ "kind: PersistentVolumeClaim\nmetadata: {name: a, namespace: ns}\nspec: {accessModes: [Sometimes]}\n",
		  "persistentvolumeclaim ns/a: spec.accessModes[0]: Unsupported value: \"Sometimes\": supported values: "
		  "\"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"" },
		{ "kind: PersistentVolumeClaim\nmetadata: {name: a, namespace: ns}\nspec: {resources: {requests: {storage: lots}}}\n",
		  "persistentvolumeclaim ns/a: spec.resources.requests[storage]: Invalid value: \"lots\": " },
		{ "kind: PersistentVolume\nmetadata: {name: pv}\nspec: {volumeMode: Raw}\n",
		  "persistentvolume pv: spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"" },
		{ "kind: PersistentVolume\nmetadata: {name: pv}\nspec: {csi: {driver: d}}\n",
		  "persistentvolume pv: spec.csi.volumeHandle: Required value" },
		{ "kind: StorageClass\nmetadata: {name: sc}\n", "storageclass sc: provisioner: Required value" },
		{ "kind: StorageClass\nmetadata: {name: sc}\nprovisioner: p\nvolumeBindingMode: Later\n",
		  "storageclass sc: volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", "
		  "\"WaitForFirstConsumer\"" },
		{ "kind: CSINode\nmetadata: {name: node1}\nspec: {drivers: [{name: d, allocatable: {count: -1}}]}\n",
		  "csinode node1: spec.drivers[0].allocatable.count: Invalid value: must be a non-negative 32-bit integer" },
		{ "kind: CSIDriver\nmetadata: {name: d}\nspec: {attachRequired: maybe}\n",
		  "csidriver d: spec.attachRequired: must be a boolean" },
		{ "kind: CSINode\nmetadata: {}\n", "csinode <unnamed>: metadata.name: Required value" },
		{ "kind: Secret\nmetadata: {name: s}\n", "kind Secret is not a storage object" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *err = NULL;
		struct sk_vobj *v = decode_yaml(cases[i].yaml, &err);
		if (v || !err || strncmp(err, cases[i].want, strlen(cases[i].want)) != 0) {
			print_error("case %zu: got \"%s\"\n", i, err ? err : "(no error)");
			fail();
		}
		free(err);
	}
}

static void test_pod_volumes(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod(
		"{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\"},\"spec\":{\"volumes\":["
		"{\"name\":\"a\",\"persistentVolumeClaim\":{\"claimName\":\"data\",\"readOnly\":true}},"
		"{\"name\":\"b\",\"ephemeral\":{\"volumeClaimTemplate\":{}}},"
		"{\"name\":\"c\",\"rbd\":{\"monitors\":[\"m1\",\"m2\"],\"image\":\"img\"}},"
		"{\"name\":\"d\",\"iscsi\":{\"iqn\":\"iqn.x\",\"targetPortal\":\"p\",\"lun\":0}},"
		"{\"name\":\"e\",\"configMap\":{\"name\":\"cm\"}}]}}");
	assert_int_equal(p->nvolumes, 5);
	assert_int_equal(p->volumes[0].source, SK_VOL_PVC);
	assert_string_equal(p->volumes[0].claim, "data");
	assert_true(p->volumes[0].read_only);
	assert_int_equal(p->volumes[1].source, SK_VOL_EPHEMERAL);
	assert_string_equal(p->volumes[1].claim, "web-b");
	assert_int_equal(p->volumes[2].source, SK_VOL_RBD);
	assert_string_equal(p->volumes[2].pool, "rbd"); /* the API's default pool */
	assert_int_equal(p->volumes[2].nmonitors, 2);
	assert_string_equal(p->volumes[2].monitors[1], "m2");
	assert_int_equal(p->volumes[3].source, SK_VOL_ISCSI);
	assert_string_equal(p->volumes[3].id, "iqn.x");
	assert_int_equal(p->volumes[4].source, SK_VOL_OTHER);
	/* the shallow copy of assume shares the list */
	struct sk_pod *c = sk_pod_with_node(p, "n1");
	assert_ptr_equal(c->volumes, p->volumes);
	sk_pod_unref(c);
	sk_pod_unref(p);
	char *err = fx_pod_error("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"},\"spec\":{\"volumes\":[{\"name\":\"c\","
				 "\"rbd\":{\"monitors\":\"m1\"}}]}}");
	assert_string_equal(err, "pod ns/x: spec.volumes[0].rbd.monitors: must be an array");
	free(err);
}

static void test_store(void **state)
{
	(void)state;
	struct sk_volume_store *s = sk_volume_store_new();
	char *err = NULL;
	struct sk_vobj *cur = NULL, *old = NULL;
	cJSON *a = fx_json("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"1\"}}");
	cJSON *a2 = fx_json("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"2\"}}");
	cJSON *b = fx_json("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"a\"}}");
	cJSON *c = fx_json("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"}}");
	assert_int_equal(sk_volume_store_put_json(s, 0, a, &cur, &old, &err), 0);
	assert_null(old);
	sk_vobj_unref(cur);
	assert_int_equal(sk_volume_store_put_json(s, SK_VOBJ_PV, a2, &cur, &old, &err), 0);
	assert_string_equal(old->resource_version, "1");
	assert_string_equal(cur->resource_version, "2");
	sk_vobj_unref(cur);
	sk_vobj_unref(old);
	assert_int_equal(sk_volume_store_put_json(s, 0, b, NULL, NULL, &err), 0);
	assert_int_equal(sk_volume_store_put_json(s, 0, c, NULL, NULL, &err), 0);
	/* a claim is found in its namespace only */
	assert_null(sk_volume_store_get(s, SK_VOBJ_PVC, "other", "a"));
	struct sk_vobj *got = sk_volume_store_get(s, SK_VOBJ_PVC, "ns", "a");
	assert_non_null(got);
	sk_vobj_unref(got);
	struct sk_vobj **list = NULL;
	assert_int_equal(sk_volume_store_list(s, SK_VOBJ_PV, &list), 2);
	assert_string_equal(list[0]->name, "a");
	assert_string_equal(list[1]->name, "b");
	sk_vobj_list_free(list, 2);
	/* a held reference outlives the deletion */
	got = sk_volume_store_get(s, SK_VOBJ_PV, NULL, "b");
	struct sk_vobj *gone = sk_volume_store_delete(s, SK_VOBJ_PV, NULL, "b");
	assert_ptr_equal(gone, got);
	sk_vobj_unref(gone);
	assert_string_equal(got->name, "b");
	sk_vobj_unref(got);
	assert_null(sk_volume_store_get(s, SK_VOBJ_PV, NULL, "b"));
	assert_int_equal(sk_volume_store_count(s, SK_VOBJ_PV), 1);
	assert_null(sk_volume_store_delete(s, SK_VOBJ_PV, NULL, "b"));
	/* many objects grow the map */
	for (int i = 0; i < 300; i++) {
		char buf[128];
		snprintf(buf, sizeof buf, "{\"kind\":\"CSINode\",\"metadata\":{\"name\":\"n%d\"}}", i);
		cJSON *j = fx_json(buf);
		assert_int_equal(sk_volume_store_put_json(s, 0, j, NULL, NULL, &err), 0);
		cJSON_Delete(j);
	}
	assert_int_equal(sk_volume_store_count(s, SK_VOBJ_CSI_NODE), 300);
	got = sk_volume_store_get(s, SK_VOBJ_CSI_NODE, NULL, "n299");
	assert_non_null(got);
	sk_vobj_unref(got);
	/* a bad object is refused and leaves the store as it was */
	cJSON *bad = fx_json("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"volumeMode\":\"x\"}}");
	assert_int_equal(sk_volume_store_put_json(s, 0, bad, NULL, NULL, &err), -1);
	assert_non_null(strstr(err, "persistentvolume a: spec.volumeMode"));
	free(err);
	got = sk_volume_store_get(s, SK_VOBJ_PV, NULL, "a");
	assert_non_null(got);
	sk_vobj_unref(got);
	cJSON_Delete(bad);
	cJSON_Delete(a);
	cJSON_Delete(a2);
	cJSON_Delete(b);
	cJSON_Delete(c);
	sk_volume_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pvc_fields),
		cmocka_unit_test(test_pv_and_others),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_pod_volumes),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
