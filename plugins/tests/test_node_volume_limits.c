/* Tests for plugins/NodeVolumeLimits: upstream csi_test's TestCSILimits cases that do not need CSI
 * migration or VolumeAttachments (case names kept), TestCSILimitsQHint and
 * TestCSILimitsAddedPVCQHint, with upstream's fixtures: for each driver, claims and CSI PVs
 * "csi-<driver>-0..3"; "csi-4" unbound with class csi-sc (provisioner: the first driver), "csi-5"
 * without a class, "csi-6" bound to a missing PV with class csi-sc. The node's CSINode gives each
 * driver the case's limit ("csinode"), no limit ("csinode-with-no-limit"), or does not exist. */
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

#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"
#define MAX_COUNT "node(s) exceed max volume count"
#define NODE "node-for-max-pd-test-1"

static void put_fixtures(struct ph *h, const char *const *drivers, const char *limit_source, int max)
{
	char buf[1024];
	for (int d = 0; drivers[d]; d++)
		for (int j = 0; j < 4; j++) {
			snprintf(buf, sizeof buf,
				 "{kind: PersistentVolume, metadata: {name: csi-%s-%d}, spec: {csi: {driver: %s, volumeHandle: csi-%s-%d}}}\n---\n"
				 "{kind: PersistentVolumeClaim, metadata: {name: csi-%s-%d, namespace: default}, spec: {volumeName: csi-%s-%d}}\n",
				 drivers[d], j, drivers[d], drivers[d], j, drivers[d], j, drivers[d], j);
			ph_put_storage(h, buf);
		}
	snprintf(buf, sizeof buf,
		 "{kind: StorageClass, metadata: {name: csi-sc}, provisioner: %s}\n---\n"
		 "{kind: PersistentVolumeClaim, metadata: {name: csi-4, namespace: default}, spec: {storageClassName: csi-sc}}\n---\n"
		 "{kind: PersistentVolumeClaim, metadata: {name: csi-5, namespace: default}}\n---\n"
		 "{kind: PersistentVolumeClaim, metadata: {name: csi-6, namespace: default}, spec: {storageClassName: csi-sc, volumeName: missing-in-action}}\n",
		 drivers[0] ? drivers[0] : "");
	ph_put_storage(h, buf);
	if (!limit_source)
		return;
	char list[512] = "";
	for (int d = 0; drivers[d]; d++) {
		char one[160];
		if (strcmp(limit_source, "csinode") == 0)
			snprintf(one, sizeof one, "%s{name: %s, nodeID: " NODE ", allocatable: {count: %d}}", d ? ", " : "",
				 drivers[d], max);
		else
			snprintf(one, sizeof one, "%s{name: %s, nodeID: " NODE "}", d ? ", " : "", drivers[d]);
		strcat(list, one);
	}
	snprintf(buf, sizeof buf, "{kind: CSINode, metadata: {name: " NODE "}, spec: {drivers: [%s]}}\n", list);
	ph_put_storage(h, buf);
}

/* A pod in default (uid "uid-<name>") with claims c1, c2 (NULL: none) and extra volumes JSON. */
static struct sk_pod *pod(const char *name, const char *node, const char *c1, const char *c2, const char *extra)
{
	char buf[2048], vols[1024] = "";
	if (c1)
		snprintf(vols, sizeof vols, "{\"name\":\"a\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}", c1);
	if (c2) {
		size_t l = strlen(vols);
		snprintf(vols + l, sizeof vols - l, ",{\"name\":\"b\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}", c2);
	}
	if (extra) {
		size_t l = strlen(vols);
		snprintf(vols + l, sizeof vols - l, "%s%s", vols[0] ? "," : "", extra);
	}
	snprintf(buf, sizeof buf,
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},\"spec\":{%s%s%s\"volumes\":[%s]}}",
		 name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "", vols);
	return fx_pod(buf);
}

enum podk { NONE, RUNNING, PENDING, UNBOUND2, MISSING_PV, NO_SC, GCE_TWO, EBS_ONE, EBS_TWO, EPH, EPH_TWO, CM_SECRET, PVC_CM };

static struct sk_pod *make(enum podk k, const char *node)
{
	const char *cm = "{\"name\":\"cm\",\"configMap\":{\"name\":\"x\"}},{\"name\":\"s\",\"secret\":{\"secretName\":\"y\"}}";
	switch (k) {
	case RUNNING: return pod("running", node, "csi-" EBS "-3", NULL, NULL);
	case PENDING: return pod("pending", node, "csi-4", NULL, NULL);
	case UNBOUND2: return pod("unbound2", node, "csi-4", NULL, NULL);
	case MISSING_PV: return pod("missingpv", node, "csi-6", NULL, NULL);
	case NO_SC: return pod("nosc", node, "csi-5", NULL, NULL);
	case GCE_TWO: return pod("gcetwo", node, "csi-" GCE "-1", "csi-" GCE "-2", NULL);
	case EBS_ONE: return pod("ebsone", node, "csi-" EBS "-0", NULL, NULL);
	case EBS_TWO: return pod("ebstwo", node, "csi-" EBS "-1", "csi-" EBS "-2", NULL);
	case EPH: return pod("abc", node, NULL, NULL, "{\"name\":\"xyz\",\"ephemeral\":{}}");
	case EPH_TWO: return pod("abc2", node, NULL, NULL, "{\"name\":\"x\",\"ephemeral\":{}},{\"name\":\"y\",\"ephemeral\":{}}");
	case CM_SECRET: return pod("cm", node, NULL, NULL, cm);
	case PVC_CM: return pod("pvccm", node, "csi-" EBS "-0", NULL, cm);
	case NONE: break;
	}
	return NULL;
}

/* The ephemeral claims, owned (controller) by their pods unless not_owned. */
static void put_ephemeral(struct ph *h, const char *pod_name, const char *vol, bool owned)
{
	char buf[512];
	snprintf(buf, sizeof buf,
		 "{kind: PersistentVolumeClaim, metadata: {name: %s-%s, namespace: default%s%s%s}, spec: {storageClassName: csi-sc}}\n",
		 pod_name, vol, owned ? ", ownerReferences: [{apiVersion: v1, kind: Pod, name: " : "", owned ? pod_name : "",
		 owned ? ", uid: uid-PLACEHOLDER, controller: true}]" : "");
	/* the uid is "uid-<pod name>" */
	char *p = strstr(buf, "PLACEHOLDER");
	if (p) {
		char tail[512];
		snprintf(tail, sizeof tail, "%s%s", pod_name, p + strlen("PLACEHOLDER"));
		snprintf(p, sizeof buf - (size_t)(p - buf), "%s", tail);
	}
	ph_put_storage(h, buf);
}

struct lcase {
	const char *name;
	enum podk newpod;
	enum podk existing[3];
	const char *drivers[3];
	const char *limit_source;
	int max;
	int eph; /* 1: abc-xyz owned; 2: abc-xyz not owned; 3: abc2-x, abc2-y owned */
	enum sk_code pre, want;
	const char *msg;
};

static void test_csi_limits(void **state)
{
	(void)state;
	const char *missing = "looking up PVC default/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found";
	const struct lcase cases[] = {
		{ "fits when node volume limit >= new pods CSI volume", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, "csinode", 4,
		  0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "doesn't when node volume limit <= pods CSI volume", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, "csinode", 2, 0,
		  SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "should when driver does not support volume limits", EBS_ONE, { RUNNING, EBS_TWO }, { EBS },
		  "csinode-with-no-limit", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, { PENDING, EBS_TWO }, { EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE,
		  { PENDING, UNBOUND2, EBS_TWO }, { EBS }, "csinode", 4, 0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "should count PVCs with invalid PV name but valid SC", EBS_ONE, { MISSING_PV, EBS_TWO }, { EBS }, "csinode",
		  2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "don't count pvcs with missing SC towards volume limit", EBS_ONE, { RUNNING, NO_SC }, { EBS }, "csinode", 2,
		  0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "count pvcs with the same type towards volume limit", EBS_ONE, { GCE_TWO, EBS_TWO }, { EBS, GCE },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "don't count pvcs with different type towards volume limit", GCE_TWO, { EBS_TWO, RUNNING }, { EBS, GCE },
		  "csinode", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "ephemeral volume missing", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 0, SK_SUCCESS,
		  SK_UNSCHEDULABLE_AND_UNRESOLVABLE, missing },
		{ "ephemeral volume not owned", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 2, SK_SUCCESS, SK_ERROR,
		  "PVC default/abc-xyz was not created for pod default/abc (pod is not owner)" },
		{ "ephemeral volume unbound", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 1, SK_SUCCESS, SK_SUCCESS,
		  NULL },
		{ "ephemeral doesn't when node volume limit <= pods CSI volume", EPH, { RUNNING, EBS_TWO }, { EBS },
		  "csinode", 2, 1, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE, { RUNNING, EPH_TWO },
		  { EBS }, "csinode", 2, 3, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
		  { RUNNING, EPH, EBS_TWO }, { EBS }, "csinode", 3, 1, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT },
		{ "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
		  { RUNNING, EPH, EBS_TWO }, { EBS }, "csinode", 5, 1, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "skip Filter when the pod only uses secrets and configmaps", CM_SECRET, { NONE }, { EBS }, "csinode", 2, 0,
		  SK_SKIP, SK_SUCCESS, NULL },
		{ "don't skip Filter when the pod has pvcs", PVC_CM, { NONE }, { EBS }, "csinode", 2, 0, SK_SUCCESS,
		  SK_SUCCESS, NULL },
		/* additions: no CSINode at all means no limit; a shared volume counts once */
		{ "no csinode", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, NULL, 0, 0, SK_SUCCESS, SK_SUCCESS, NULL },
		{ "a volume already attached for another pod is not new", EBS_TWO, { EBS_TWO, RUNNING }, { EBS }, "csinode", 3,
		  0, SK_SUCCESS, SK_SUCCESS, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct lcase *c = &cases[i];
		struct ph *h = ph_new(NULL);
		struct sk_plugin *pl = ph_plugin(h, "NodeVolumeLimits");
		const char *drivers[4] = { c->drivers[0], c->drivers[1], c->drivers[2], NULL };
		put_fixtures(h, drivers, c->limit_source, c->max);
		if (c->eph == 1 || c->eph == 2)
			put_ephemeral(h, "abc", "xyz", c->eph == 1);
		if (c->eph == 3) {
			put_ephemeral(h, "abc2", "x", true);
			put_ephemeral(h, "abc2", "y", true);
		}
		struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"" NODE "\"}}"), NULL);
		for (int k = 0; k < 3 && c->existing[k] != NONE; k++) {
			struct sk_pod *e = make(c->existing[k], NODE);
			assert_int_equal(sk_node_info_add_pod(ni, e), 0);
			sk_pod_unref(e);
		}
		struct sk_pod *p = make(c->newpod, NULL);
		struct sk_prefilter_result r = { .all = true };
		struct sk_status s = pl->desc->pre_filter(pl, h->cs, p, &r);
		if (s.code != c->pre) {
			print_error("case %s: PreFilter %s\n", c->name, sk_code_string(s.code));
			fail();
		}
		sk_status_reset(&s);
		if (c->pre != SK_SKIP) {
			s = pl->desc->filter(pl, h->cs, p, ni);
			enum sk_code code = s.code;
			char *m = ph_message(&s);
			if (code != c->want || strcmp(m, c->msg ? c->msg : "") != 0) {
				print_error("case %s: Filter %s \"%s\"\n", c->name, sk_code_string(code), m);
				fail();
			}
			free(m);
		}
		sk_pod_unref(p);
		sk_node_info_free(ni);
		ph_free(h);
	}
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeVolumeLimits");
	sk_hint_fn del = ph_find_hint(pl, SK_EV_POD, NULL);
	struct sk_pod *ebs = pod("new", NULL, "csi-" EBS "-2", NULL, NULL);
	struct {
		const char *name;
		struct sk_pod *deleted;
		enum sk_hint want;
	} dcases[] = {
		{ "return a Queue when a deleted pod has a PVC", pod("d1", NODE, "placeholder", NULL, NULL), SK_QUEUE },
		{ "return a Queue when a deleted pod has a inline migratable volume",
		  pod("d2", NODE, NULL, NULL, "{\"name\":\"e\",\"awsElasticBlockStore\":{\"volumeID\":\"\"}}"), SK_QUEUE },
		{ "return a QueueSkip when a deleted pod doesn't have any volume", pod("d3", NODE, NULL, NULL, NULL),
		  SK_QUEUE_SKIP },
		{ "return a QueueSkip when a deleted pod is not scheduled.", pod("d4", NULL, "csi-" EBS "-0", NULL, NULL),
		  SK_QUEUE_SKIP },
	};
	for (size_t i = 0; i < sizeof dcases / sizeof dcases[0]; i++) {
		if (del(pl, ebs, dcases[i].deleted, NULL) != dcases[i].want) {
			print_error("case %s\n", dcases[i].name);
			fail();
		}
		sk_pod_unref(dcases[i].deleted);
	}
	sk_pod_unref(ebs);

	sk_hint_fn add = ph_find_hint(pl, SK_EV_PVC, NULL);
	struct {
		const char *name, *pod_json, *pvc_ns, *pvc_name;
		enum sk_hint want;
	} acases[] = {
		{ "a pod isn't in the same namespace as an added PVC", "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\"}}",
		  "ns2", "x", SK_QUEUE_SKIP },
		{ "a pod is in the same namespace as an added PVC",
		  "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\"},\"spec\":{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"pvc1\"}}]}}",
		  "ns1", "pvc1", SK_QUEUE },
		{ "a pod has an ephemeral volume related to an added PVC",
		  "{\"metadata\":{\"name\":\"pod1\",\"namespace\":\"ns1\"},\"spec\":{\"volumes\":[{\"name\":\"ephemeral\",\"ephemeral\":{}}]}}",
		  "ns1", "pod1-ephemeral", SK_QUEUE },
		{ "a pod doesn't have the same PVC as an added PVC",
		  "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\"},\"spec\":{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"pvc1\"}}]}}",
		  "ns1", "pvc2", SK_QUEUE_SKIP },
		{ "a pod doesn't have any PVC attached", "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\"}}", "ns1", "pvc2",
		  SK_QUEUE_SKIP },
	};
	for (size_t i = 0; i < sizeof acases / sizeof acases[0]; i++) {
		char buf[256];
		snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"}}", acases[i].pvc_name,
			 acases[i].pvc_ns);
		cJSON *j = fx_json(buf);
		char *err = NULL;
		struct sk_pvc *pvc = sk_pvc_decode(j, &err);
		assert_non_null(pvc);
		struct sk_pod *p = fx_pod(acases[i].pod_json);
		if (add(pl, p, NULL, pvc) != acases[i].want) {
			print_error("case %s\n", acases[i].name);
			fail();
		}
		sk_pod_unref(p);
		sk_vobj_unref(pvc);
		cJSON_Delete(j);
	}
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csi_limits),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
