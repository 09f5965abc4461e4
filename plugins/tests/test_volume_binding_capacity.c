/* Tests for plugins/VolumeBinding's storage capacity check (capacity.c) and its v1.34 queueing
 * hints: upstream binder_test's TestCapacity scenarios by name (network-attached, local-storage,
 * multiple, no-storage, wrong-node, wrong-storage-class, insufficient-storage,
 * insufficient-volume-size, zero-storage, zero-volume-size, nil-storage), each run with the
 * CSIDriver opting in (CSIDriver.StorageCapacity=true) and not (=false: every scenario fits), plus
 * a claim without a storage request and a class whose provisioner has no CSIDriver; and the hints
 * isSchedulableAfterStorageClassChange, isSchedulableAfterCSINodeChange,
 * isSchedulableAfterCSIDriverChange and isSchedulableAfterCSIStorageCapacityChange of
 * pkg/scheduler/framework/plugins/volumebinding/volume_binding.go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "schedkit/volume.h"
#include "scheduler/tests/fixtures.h"

#define NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define PROVISIONER "test-provisioner"
#define NODE_KEY "nodeKey"

/* makeCapacity(name, class, node, capacity, maximumVolumeSize): node NULL = network attached
 * (nodeTopology {}), "" for a quantity = unset. */
static void put_capacity(struct ph *h, const char *name, const char *cls, const char *node, const char *cap,
			 const char *max)
{
	char buf[1024], topo[160], q[160] = "";
	if (node)
		snprintf(topo, sizeof topo, "{matchLabels: {" NODE_KEY ": %s}}", node);
	else
		snprintf(topo, sizeof topo, "{}");
	if (cap && *cap)
		snprintf(q, sizeof q, ", capacity: %s", cap);
	if (max && *max) {
		size_t l = strlen(q);
		snprintf(q + l, sizeof q - l, ", maximumVolumeSize: %s", max);
	}
	snprintf(buf, sizeof buf,
		 "{kind: CSIStorageCapacity, metadata: {name: %s, namespace: kube-system}, storageClassName: %s,"
		 " nodeTopology: %s%s}\n",
		 name, cls, topo, q);
	ph_put_storage(h, buf);
}

struct capacity {
	const char *name, *cls, *node, *cap, *max;
};

struct scenario {
	const char *name;
	struct capacity caps[3];
	bool not_enough; /* ErrReasonNotEnoughSpace when the driver opts in */
};

#define NET { "net", "wait-provisioner", NULL, "1Gi", "" }
#define NODE1 { "node1", "wait-provisioner", "node1", "1Gi", "" }
#define NODE2 { "node2", "wait-provisioner", "node2", "1Gi", "" }

static const struct scenario scenarios[] = {
	{ "network-attached", { NET }, false },
	{ "local-storage", { NODE1 }, false },
	{ "multiple", { NET, NODE2, NODE1 }, false },
	{ "no-storage", { { 0 } }, true },
	{ "wrong-node", { NODE2 }, true },
	{ "wrong-storage-class", { { "net", "wait", "node1", "1Gi", "" } }, true },
	{ "insufficient-storage", { { "net", "wait-provisioner", "node1", "1Mi", "" } }, true },
	{ "insufficient-volume-size", { { "net", "wait-provisioner", "node1", "1Gi", "1Mi" } }, true },
	{ "zero-storage", { { "net", "wait-provisioner", "node1", "0Mi", "" } }, true },
	{ "zero-volume-size", { { "net", "wait-provisioner", "node1", "", "0Mi" } }, true },
	{ "nil-storage", { { "net", "wait-provisioner", "node1", "", "" } }, true },
};

static struct ph *capacity_env(bool opt_in, const char *request)
{
	struct ph *h = ph_new(NULL);
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "{kind: StorageClass, metadata: {name: wait}, provisioner: kubernetes.io/no-provisioner,"
		 " volumeBindingMode: WaitForFirstConsumer}\n---\n"
		 "{kind: StorageClass, metadata: {name: wait-provisioner}, provisioner: " PROVISIONER ","
		 " volumeBindingMode: WaitForFirstConsumer}\n---\n"
		 "{kind: CSIDriver, metadata: {name: " PROVISIONER "}, spec: {storageCapacity: %s}}\n---\n"
		 "{kind: PersistentVolumeClaim, metadata: {name: provisioned-pvc, namespace: testns, uid: u1},"
		 " spec: {storageClassName: wait-provisioner%s%s%s}}\n",
		 opt_in ? "true" : "false", request ? ", resources: {requests: {storage: " : "", request ? request : "",
		 request ? "}}" : "");
	ph_put_storage(h, buf);
	return h;
}

static struct sk_pod *claim_pod(void)
{
	return fx_pod("{\"metadata\":{\"name\":\"test-pod\",\"namespace\":\"testns\",\"uid\":\"p1\"},\"spec\":"
		      "{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"provisioned-pvc\"}}]}}");
}

/* PreFilter then Filter on node1; the Filter status code and message. */
static enum sk_code run_filter(struct ph *h, char **msg)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	struct sk_pod *p = claim_pod();
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, p, &r);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_status_reset(&s);
	struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"node1\",\"labels\":{\"" NODE_KEY
						       "\":\"node1\"}}}"),
					       NULL);
	s = pl->desc->filter(pl, h->cs, p, ni);
	enum sk_code code = s.code;
	*msg = ph_message(&s);
	sk_node_info_free(ni);
	sk_pod_unref(p);
	return code;
}

static void test_capacity(void **state)
{
	(void)state;
	for (int opt_in = 1; opt_in >= 0; opt_in--)
		for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
			const struct scenario *sc = &scenarios[i];
			struct ph *h = capacity_env(opt_in, "1Gi");
			for (int k = 0; k < 3 && sc->caps[k].name; k++) {
				char name[64];
				snprintf(name, sizeof name, "%s-%d", sc->caps[k].name, k);
				put_capacity(h, name, sc->caps[k].cls, sc->caps[k].node, sc->caps[k].cap, sc->caps[k].max);
			}
			char *msg = NULL;
			enum sk_code code = run_filter(h, &msg);
			bool want_fail = opt_in && sc->not_enough;
			if (code != (want_fail ? SK_UNSCHEDULABLE_AND_UNRESOLVABLE : SK_SUCCESS) ||
			    strcmp(msg, want_fail ? NOT_ENOUGH_SPACE : "") != 0) {
				print_error("CSIDriver.StorageCapacity=%s/%s: Filter %s \"%s\"\n", opt_in ? "true" : "false",
					    sc->name, sk_code_string(code), msg);
				fail();
			}
			free(msg);
			ph_free(h);
		}
}

/* Not checked: a claim without spec.resources.requests.storage, and a provisioner that has no
 * CSIDriver object (either way hasEnoughCapacity answers true). */
static void test_capacity_not_checked(void **state)
{
	(void)state;
	struct ph *h = capacity_env(true, NULL);
	char *msg = NULL;
	assert_int_equal(run_filter(h, &msg), SK_SUCCESS);
	free(msg);
	ph_free(h);

	h = ph_new(NULL);
	ph_put_storage(h, "{kind: StorageClass, metadata: {name: wait-provisioner}, provisioner: other.example.com,"
			  " volumeBindingMode: WaitForFirstConsumer}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: provisioned-pvc, namespace: testns, uid: u1},"
			  " spec: {storageClassName: wait-provisioner, resources: {requests: {storage: 1Gi}}}}\n");
	assert_int_equal(run_filter(h, &msg), SK_SUCCESS);
	free(msg);
	ph_free(h);
}

static void *decode(const char *json)
{
	cJSON *j = fx_json(json);
	char *err = NULL;
	struct sk_vobj *v = sk_vobj_decode(j, &err);
	if (!v) {
		print_error("decode %s: %s\n", json, err ? err : "?");
		fail();
	}
	cJSON_Delete(j);
	return v;
}

struct hcase {
	const char *name;
	const char *pod; /* pod JSON; NULL: a pod with claim pvc-a */
	const char *old_obj, *new_obj; /* JSON; NULL: absent */
	enum sk_hint want;
};

static void run_hints(struct sk_plugin *pl, uint32_t resource, const struct hcase *cases, size_t n)
{
	sk_hint_fn fn = ph_find_hint(pl, resource, NULL);
	assert_non_null(fn);
	for (size_t i = 0; i < n; i++) {
		struct sk_pod *p = fx_pod(cases[i].pod ? cases[i].pod
						       : "{\"metadata\":{\"name\":\"pod-a\",\"namespace\":\"default\"},\"spec\":"
							 "{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"pvc-a\"}}]}}");
		void *o = cases[i].old_obj ? decode(cases[i].old_obj) : NULL;
		void *nw = cases[i].new_obj ? decode(cases[i].new_obj) : NULL;
		enum sk_hint got = fn(pl, p, o, nw);
		if (got != cases[i].want) {
			print_error("case %s: got %d\n", cases[i].name, got);
			fail();
		}
		sk_vobj_unref(o);
		sk_vobj_unref(nw);
		sk_pod_unref(p);
	}
}

#define SC(topo) "{\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"sc-a\"},\"provisioner\":\"p\"" topo "}"
#define TOPO_A ",\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"zone\",\"values\":[\"a\"]}]}]"
#define TOPO_B ",\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"zone\",\"values\":[\"b\"]}]}]"
#define CSINODE(ann) "{\"kind\":\"CSINode\",\"metadata\":{\"name\":\"node-a\"" ann "},\"spec\":{\"drivers\":[]}}"
#define MIGRATED(v) ",\"annotations\":{\"storage.alpha.kubernetes.io/migrated-plugins\":\"" v "\"}"
#define DRIVER(cap) "{\"kind\":\"CSIDriver\",\"metadata\":{\"name\":\"test-driver\"},\"spec\":{\"storageCapacity\":" cap "}}"
#define CSI_POD(drv)                                                                                                   \
	"{\"metadata\":{\"name\":\"pod-a\",\"namespace\":\"default\"},\"spec\":{\"volumes\":[{\"name\":\"v\",\"csi\":" \
	"{\"driver\":\"" drv "\"}}]}}"
#define CAP(q) "{\"kind\":\"CSIStorageCapacity\",\"metadata\":{\"name\":\"cap-a\",\"namespace\":\"ns\"},\"storageClassName\":\"sc-a\"" q "}"

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	const struct hcase sc[] = {
		{ "a new StorageClass", NULL, NULL, SC(""), SK_QUEUE },
		{ "allowedTopologies added", NULL, SC(""), SC(TOPO_A), SK_QUEUE },
		{ "allowedTopologies changed", NULL, SC(TOPO_A), SC(TOPO_B), SK_QUEUE },
		{ "an update without an allowedTopologies change", NULL, SC(TOPO_A), SC(TOPO_A), SK_QUEUE_SKIP },
		{ "an update of a class without allowedTopologies", NULL, SC(""), SC(""), SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_STORAGE_CLASS, sc, sizeof sc / sizeof sc[0]);
	const struct hcase cn[] = {
		{ "CSINode creation could make the pod schedulable", NULL, NULL, CSINODE(""), SK_QUEUE },
		{ "migrated plugins annotation added", NULL, CSINODE(""), CSINODE(MIGRATED("kubernetes.io/aws-ebs")),
		  SK_QUEUE },
		{ "migrated plugins annotation changed", NULL, CSINODE(MIGRATED("kubernetes.io/aws-ebs")),
		  CSINODE(MIGRATED("kubernetes.io/aws-ebs,kubernetes.io/gce-pd")), SK_QUEUE },
		{ "CSINode updated without an annotation change", NULL, CSINODE(MIGRATED("kubernetes.io/aws-ebs")),
		  CSINODE(MIGRATED("kubernetes.io/aws-ebs")), SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_CSI_NODE, cn, sizeof cn / sizeof cn[0]);
	const struct hcase drv[] = {
		{ "storage capacity disabled for the pod's inline CSI driver", CSI_POD("test-driver"), DRIVER("true"),
		  DRIVER("false"), SK_QUEUE },
		{ "storage capacity enabled", CSI_POD("test-driver"), DRIVER("false"), DRIVER("true"), SK_QUEUE_SKIP },
		{ "another driver's change", CSI_POD("other-driver"), DRIVER("true"), DRIVER("false"), SK_QUEUE_SKIP },
		{ "a pod without inline CSI volumes", NULL, DRIVER("true"), DRIVER("false"), SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_CSI_DRIVER, drv, sizeof drv / sizeof drv[0]);
	const struct hcase cap[] = {
		{ "A new CSIStorageCapacity was created", NULL, NULL, CAP(""), SK_QUEUE },
		{ "no CSIStorageCapacity changes", NULL, CAP(""), CAP(""), SK_QUEUE_SKIP },
		{ "changed CSIStorageCapacity.Capacity", NULL, CAP(",\"capacity\":\"1Gi\""), CAP(",\"capacity\":\"2Gi\""),
		  SK_QUEUE },
		{ "changed CSIStorageCapacity.MaximumVolumeSize", NULL, CAP(",\"maximumVolumeSize\":\"1Gi\""),
		  CAP(",\"maximumVolumeSize\":\"2Gi\""), SK_QUEUE },
		{ "capacity decreased", NULL, CAP(",\"capacity\":\"2Gi\""), CAP(",\"capacity\":\"1Gi\""), SK_QUEUE_SKIP },
		{ "a limit appeared", NULL, CAP(""), CAP(",\"capacity\":\"1Gi\""), SK_QUEUE },
		{ "capacity grew under a smaller maximumVolumeSize", NULL,
		  CAP(",\"capacity\":\"1Gi\",\"maximumVolumeSize\":\"1Gi\""),
		  CAP(",\"capacity\":\"5Gi\",\"maximumVolumeSize\":\"1Gi\""), SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_CSI_STORAGE_CAPACITY, cap, sizeof cap / sizeof cap[0]);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_capacity_not_checked),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
