/* Tests for plugins/VolumeZone: upstream volume_zone_test's tables (TestSingleZone, TestMultiZone,
 * TestWithBinding, the three queueing-hint tests) with their case names. Each case runs PreFilter
 * on a fresh CycleState, then Filter on the same state (upstream runs Filter even after a Skip or a
 * rejection: it then computes the topologies itself). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "plugins/tests/harness.h"
#include "schedkit/volume.h"
#include "scheduler/tests/fixtures.h"

#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define ZONE "topology.kubernetes.io/zone"
#define REGION "topology.kubernetes.io/region"
#define CONFLICT "node(s) had no available volume zone"

struct zcase {
	const char *name;
	const char *pvc;          /* the pod's claim, NULL = a pod without volumes */
	const char *node_labels;  /* JSON object body */
	enum sk_code pre_code;    /* SK_SUCCESS, SK_SKIP or UU */
	const char *pre_msg;
	enum sk_code filter_code;
	const char *filter_msg;
};

static struct sk_pod *pod_with_claim(const char *claim)
{
	char buf[512];
	if (!claim)
		snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"pod_1\",\"namespace\":\"default\"}}");
	else
		snprintf(buf, sizeof buf,
			 "{\"metadata\":{\"name\":\"pod_1\",\"namespace\":\"default\"},\"spec\":{\"volumes\":[{\"name\":\"v\","
			 "\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]}}",
			 claim);
	return fx_pod(buf);
}

static void run_cases(struct ph *h, const struct zcase *cases, size_t n)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeZone");
	for (size_t i = 0; i < n; i++) {
		const struct zcase *c = &cases[i];
		char nb[512];
		snprintf(nb, sizeof nb, "{\"metadata\":{\"name\":\"host1\",\"labels\":{%s}}}", c->node_labels);
		struct sk_node_info *ni = fx_node_info(fx_node(nb), NULL);
		struct sk_pod *pod = pod_with_claim(c->pvc);
		ph_reset_state(h);
		struct sk_prefilter_result r = { .all = true };
		struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
		enum sk_code pre = s.code;
		char *m = ph_message(&s);
		if (pre != c->pre_code || strcmp(m, c->pre_msg ? c->pre_msg : "") != 0) {
			print_error("case %s: PreFilter %s \"%s\"\n", c->name, sk_code_string(pre), m);
			fail();
		}
		free(m);
		s = pl->desc->filter(pl, h->cs, pod, ni);
		enum sk_code code = s.code;
		m = ph_message(&s);
		if (code != c->filter_code || strcmp(m, c->filter_msg ? c->filter_msg : "") != 0) {
			print_error("case %s: Filter %s \"%s\"\n", c->name, sk_code_string(code), m);
			fail();
		}
		free(m);
		sk_pod_unref(pod);
		sk_node_info_free(ni);
	}
}

#define UU SK_UNSCHEDULABLE_AND_UNRESOLVABLE

static void test_single_zone(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_put_storage(h, "{kind: PersistentVolume, metadata: {name: Vol_1, labels: {" BETA_ZONE ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_2, labels: {" BETA_REGION ": us-west1, uselessLabel: none}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_3, labels: {" BETA_REGION ": us-west1}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_Stable_1, labels: {" ZONE ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_Stable_2, labels: {" REGION ": us-west1, uselessLabel: none}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_Stable_3, labels: {" ZONE ": us-west1-a, " REGION ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_1, namespace: default}, spec: {volumeName: Vol_1}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_2, namespace: default}, spec: {volumeName: Vol_2}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_3, namespace: default}, spec: {volumeName: Vol_3}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_4, namespace: default}, spec: {volumeName: Vol_not_exist}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_Stable_1, namespace: default}, spec: {volumeName: Vol_Stable_1}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_Stable_2, namespace: default}, spec: {volumeName: Vol_Stable_2}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_Stable_3, namespace: default}, spec: {volumeName: Vol_Stable_3}}\n");
	const struct zcase cases[] = {
		{ "pod without volume", NULL, "\"" BETA_ZONE "\":\"us-west1-a\"", SK_SKIP, NULL, SK_SUCCESS, NULL },
		{ "node without labels", "PVC_1", "", SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "beta zone label matched", "PVC_1", "\"" BETA_ZONE "\":\"us-west1-a\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "beta region label matched", "PVC_2", "\"" BETA_REGION "\":\"us-west1\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "beta region label doesn't match", "PVC_2", "\"" BETA_REGION "\":\"no_us-west1\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
		{ "beta zone label doesn't match", "PVC_1", "\"" BETA_ZONE "\":\"no_us-west1-a\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
		{ "zone label matched", "PVC_Stable_1", "\"" ZONE "\":\"us-west1-a\",\"uselessLabel\":\"none\"", SK_SUCCESS,
		  NULL, SK_SUCCESS, NULL },
		{ "region label matched", "PVC_Stable_2", "\"" REGION "\":\"us-west1\",\"uselessLabel\":\"none\"", SK_SUCCESS,
		  NULL, SK_SUCCESS, NULL },
		{ "region label doesn't match", "PVC_Stable_2", "\"" REGION "\":\"no_us-west1\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
		{ "zone label doesn't match", "PVC_Stable_1", "\"" ZONE "\":\"no_us-west1-a\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
		{ "pv with zone and region, node with only zone", "PVC_Stable_3", "\"" ZONE "\":\"us-west1-a\"", SK_SUCCESS,
		  NULL, UU, CONFLICT },
		{ "pv with zone,node with beta zone", "PVC_Stable_1", "\"" BETA_ZONE "\":\"us-west1-a\"", SK_SUCCESS, NULL,
		  UU, CONFLICT },
		{ "pv with beta label,node with ga label, matched", "PVC_1", "\"" ZONE "\":\"us-west1-a\"", SK_SUCCESS, NULL,
		  SK_SUCCESS, NULL },
		{ "pv with beta label,node with ga label, don't match", "PVC_1", "\"" ZONE "\":\"us-west1-b\"", SK_SUCCESS,
		  NULL, UU, CONFLICT },
		/* addition: a claim bound to a PV that does not exist (upstream's lister lists PVC_4 too) */
		{ "bound to a missing pv", "PVC_4", "\"" ZONE "\":\"us-west1-a\"", UU,
		  "persistentvolume \"Vol_not_exist\" not found", UU, "persistentvolume \"Vol_not_exist\" not found" },
		{ "missing claim", "PVC_none", "\"" ZONE "\":\"us-west1-a\"", UU,
		  "persistentvolumeclaim \"PVC_none\" not found", UU, "persistentvolumeclaim \"PVC_none\" not found" },
	};
	run_cases(h, cases, sizeof cases / sizeof cases[0]);
	ph_free(h);
}

static void test_multi_zone(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_put_storage(h, "{kind: PersistentVolume, metadata: {name: Vol_1, labels: {" BETA_ZONE ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_2, labels: {" BETA_ZONE ": us-west1-b, uselessLabel: none}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_3, labels: {" BETA_ZONE ": us-west1-c__us-west1-a}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_Stable_1, labels: {" ZONE ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_Stable_2, labels: {" ZONE ": us-west1-c__us-west1-a}}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_1, namespace: default}, spec: {volumeName: Vol_1}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_3, namespace: default}, spec: {volumeName: Vol_3}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_Stable_1, namespace: default}, spec: {volumeName: Vol_Stable_1}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_Stable_2, namespace: default}, spec: {volumeName: Vol_Stable_2}}\n");
	const struct zcase cases[] = {
		{ "node without labels", "PVC_3", "", SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "beta zone label matched", "PVC_3", "\"" BETA_ZONE "\":\"us-west1-a\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "beta zone label doesn't match", "PVC_1", "\"" BETA_ZONE "\":\"us-west1-b\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
		{ "zone label matched", "PVC_Stable_2", "\"" ZONE "\":\"us-west1-a\",\"uselessLabel\":\"none\"", SK_SUCCESS,
		  NULL, SK_SUCCESS, NULL },
		{ "zone label doesn't match", "PVC_Stable_1", "\"" ZONE "\":\"us-west1-b\",\"uselessLabel\":\"none\"",
		  SK_SUCCESS, NULL, UU, CONFLICT },
	};
	run_cases(h, cases, sizeof cases / sizeof cases[0]);
	ph_free(h);
}

static void test_with_binding(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	/* Class_Immediate has no volumeBindingMode, as upstream's object (the API server would default it). */
	ph_put_storage(h, "{kind: StorageClass, metadata: {name: Class_Immediate}, provisioner: p}\n---\n"
			  "{kind: StorageClass, metadata: {name: Class_Wait}, provisioner: p, volumeBindingMode: WaitForFirstConsumer}\n---\n"
			  "{kind: PersistentVolume, metadata: {name: Vol_1, labels: {" BETA_ZONE ": us-west1-a}}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_1, namespace: default}, spec: {volumeName: Vol_1}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_NoSC, namespace: default}, spec: {storageClassName: Class_0}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_EmptySC, namespace: default}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_WaitSC, namespace: default}, spec: {storageClassName: Class_Wait}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: PVC_ImmediateSC, namespace: default}, spec: {storageClassName: Class_Immediate}}\n");
	const char *node = "\"" BETA_ZONE "\":\"us-west1-a\",\"uselessLabel\":\"none\"";
	const char *empty = "PersistentVolumeClaim had no pv name and storageClass name";
	/* The real lister's NotFound names the resource in the singular ("storageclass"); upstream's
	 * fake lister of this test prints "storageclasses". */
	const char *nosc = "storageclass.storage.k8s.io \"Class_0\" not found";
	const char *unset = "VolumeBindingMode not set for StorageClass \"Class_Immediate\"";
	const struct zcase cases[] = {
		{ "label zone failure domain matched", "PVC_1", node, SK_SUCCESS, NULL, SK_SUCCESS, NULL },
		{ "unbound volume empty storage class", "PVC_EmptySC", node, UU, empty, UU, empty },
		{ "unbound volume no storage class", "PVC_NoSC", node, UU, nosc, UU, nosc },
		{ "unbound volume immediate binding mode", "PVC_ImmediateSC", node, UU, unset, UU, unset },
		{ "unbound volume wait binding mode", "PVC_WaitSC", node, SK_SKIP, NULL, SK_SUCCESS, NULL },
	};
	run_cases(h, cases, sizeof cases / sizeof cases[0]);
	ph_free(h);
}

static struct sk_vobj *vobj(const char *yaml)
{
	char *err = NULL;
	cJSON *j = kube_yaml_parse_one(yaml, strlen(yaml), &err);
	assert_non_null(j);
	struct sk_vobj *v = sk_vobj_decode(j, &err);
	if (!v)
		print_error("%s\n", err);
	assert_non_null(v);
	cJSON_Delete(j);
	return v;
}

struct hcase {
	const char *name;
	const char *pvc;    /* the pod's claim or NULL */
	const char *old_yaml, *new_yaml;
	enum sk_hint want;
};

static void run_hints(struct sk_plugin *pl, uint32_t resource, const struct hcase *cases, size_t n)
{
	sk_hint_fn fn = ph_find_hint(pl, resource, NULL);
	assert_non_null(fn);
	for (size_t i = 0; i < n; i++) {
		const struct hcase *c = &cases[i];
		struct sk_pod *pod = pod_with_claim(c->pvc);
		struct sk_vobj *o = c->old_yaml ? vobj(c->old_yaml) : NULL, *nw = c->new_yaml ? vobj(c->new_yaml) : NULL;
		enum sk_hint got = fn(pl, pod, o, nw);
		if (got != c->want) {
			print_error("case %s: got %d want %d\n", c->name, got, c->want);
			fail();
		}
		sk_vobj_unref(o);
		sk_vobj_unref(nw);
		sk_pod_unref(pod);
	}
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeZone");
#define PVC(ns, vol) "{kind: PersistentVolumeClaim, metadata: {name: PVC_1, namespace: " ns "}, spec: {volumeName: '" vol "'}}"
	const struct hcase pvc_cases[] = {
		{ "pvc-was-added-but-pod-refers-no-pvc", NULL, NULL, PVC("default", "Vol_1"), SK_QUEUE_SKIP },
		{ "pvc-was-added-and-pod-was-bound-to-different-pvc", "PVC_2", NULL, PVC("default", "Vol_1"), SK_QUEUE_SKIP },
		{ "pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", "PVC_1", NULL, PVC("ns1", "Vol_1"),
		  SK_QUEUE_SKIP },
		{ "pvc-was-added-and-pod-was-bound-to-the-pvc", "PVC_1", NULL, PVC("default", "Vol_1"), SK_QUEUE },
		{ "pvc-was-updated-and-pod-was-bound-to-the-pvc", "PVC_1", PVC("default", ""), PVC("default", "Vol_1"),
		  SK_QUEUE },
		{ "pvc-was-updated-but-pod-refers-no-pvc", NULL, PVC("default", ""), PVC("default", "Vol_1"),
		  SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_PVC, pvc_cases, sizeof pvc_cases / sizeof pvc_cases[0]);
	const struct hcase sc_cases[] = {
		{ "sc-doesn't-have-volume-binding-mode", "PVC_1", NULL,
		  "{kind: StorageClass, metadata: {name: SC_1}, provisioner: p}", SK_QUEUE_SKIP },
		{ "new-sc-is-wait-for-first-consumer-mode", "PVC_1", NULL,
		  "{kind: StorageClass, metadata: {name: SC_1}, provisioner: p, volumeBindingMode: WaitForFirstConsumer}",
		  SK_QUEUE },
	};
	run_hints(pl, SK_EV_STORAGE_CLASS, sc_cases, sizeof sc_cases / sizeof sc_cases[0]);
#define PV(labels) "{kind: PersistentVolume, metadata: {name: Vol_1, labels: {" labels "}}}"
	const struct hcase pv_cases[] = {
		{ "new-pv-was-added", "PVC_1", NULL, PV(BETA_ZONE ": us-west1-b"), SK_QUEUE },
		{ "pv-was-updated-and-changed-topology", "PVC_1", PV(BETA_ZONE ": us-west1-a"), PV(BETA_ZONE ": us-west1-b"),
		  SK_QUEUE },
		{ "pv-was-updated-and-added-topology-label", "PVC_1", PV(BETA_ZONE ": us-west1-a"),
		  PV(BETA_ZONE ": us-west1-a, " ZONE ": zone"), SK_QUEUE },
		{ "pv-was-updated-but-no-topology-is-changed", "PVC_1", PV(BETA_ZONE ": us-west1-a, " ZONE ": zone"),
		  PV(BETA_ZONE ": us-west1-a, " ZONE ": zone"), SK_QUEUE_SKIP },
	};
	run_hints(pl, SK_EV_PV, pv_cases, sizeof pv_cases / sizeof pv_cases[0]);
	/* no objects (an event replayed for an in-flight pod without them): Queue */
	sk_hint_fn fn = ph_find_hint(pl, SK_EV_PVC, NULL);
	struct sk_pod *pod = pod_with_claim("PVC_1");
	assert_int_equal(fn(pl, pod, NULL, NULL), SK_QUEUE);
	sk_pod_unref(pod);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_zone),
		cmocka_unit_test(test_multi_zone),
		cmocka_unit_test(test_with_binding),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
