/* Tests for plugins/NodeVolumeLimits: upstream csi_test's TestCSILimits (with its CSI migration and
 * VolumeAttachment cases; case names kept), TestCSILimitsQHint, TestCSILimitsAddedPVCQHint and
 * TestCSILimitsDeletedVolumeAttachmentQHint, with upstream's fixtures: for each driver, claims and
 * PVs "csi-<driver>-0..3" (CSI PVs; awsElasticBlockStore ones for kubernetes.io/aws-ebs, hostPath
 * ones for kubernetes.io/hostpath); "csi-4" unbound with class csi-sc (provisioner: the first
 * driver), "csi-5" without a class, "csi-6" bound to a missing PV with class csi-sc; per driver
 * `va` VolumeAttachments "va-<driver>-j" of PV csi-<driver>-j on the node. The node's CSINode
 * (which lists kubernetes.io/aws-ebs as migrated) gives each driver the case's limit ("csinode"),
 * no limit ("csinode-with-no-limit"), or does not exist. */
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

#define AWS_INTREE "kubernetes.io/aws-ebs"
#define HOSTPATH_INTREE "kubernetes.io/hostpath"

static void put_fixtures(struct ph *h, const char *const *drivers, const char *limit_source, int max, int va)
{
	char buf[1024];
	for (int d = 0; drivers[d]; d++)
		for (int j = 0; j < 4; j++) {
			char src[256];
			if (strcmp(drivers[d], AWS_INTREE) == 0)
				snprintf(src, sizeof src, "awsElasticBlockStore: {volumeID: csi-%s-%d}", drivers[d], j);
			else if (strcmp(drivers[d], HOSTPATH_INTREE) == 0)
				snprintf(src, sizeof src, "hostPath: {path: /tmp}");
			else
				snprintf(src, sizeof src, "csi: {driver: %s, volumeHandle: csi-%s-%d}", drivers[d], drivers[d], j);
			snprintf(buf, sizeof buf,
				 "{kind: PersistentVolume, metadata: {name: csi-%s-%d}, spec: {%s}}\n---\n"
				 "{kind: PersistentVolumeClaim, metadata: {name: csi-%s-%d, namespace: default}, spec: {volumeName: csi-%s-%d}}\n",
				 drivers[d], j, src, drivers[d], j, drivers[d], j);
			ph_put_storage(h, buf);
		}
	for (int d = 0; drivers[d]; d++)
		for (int j = 0; j < va; j++) {
			snprintf(buf, sizeof buf,
				 "{kind: VolumeAttachment, metadata: {name: va-%s-%d}, spec: {nodeName: " NODE
				 ", attacher: %s, source: {persistentVolumeName: csi-%s-%d}}}\n",
				 drivers[d], j, drivers[d], drivers[d], j);
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
	snprintf(buf, sizeof buf,
		 "{kind: CSINode, metadata: {name: " NODE ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: "
		 AWS_INTREE "}}, spec: {drivers: [%s]}}\n",
		 list);
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

enum podk { NONE, RUNNING, PENDING, UNBOUND2, MISSING_PV, NO_SC, GCE_TWO, EBS_ONE, EBS_TWO, EPH, EPH_TWO, CM_SECRET, PVC_CM,
	     INTREE_ONE, INTREE_TWO, INTREE_INLINE, INTREE_INLINE_SAME_ID, HOSTPATH_ONE, INLINE_CM };

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
	case INTREE_ONE: return pod("intreeone", node, "csi-" AWS_INTREE "-0", NULL, NULL);
	case INTREE_TWO: return pod("intreetwo", node, "csi-" AWS_INTREE "-1", "csi-" AWS_INTREE "-2", NULL);
	case INTREE_INLINE:
		return pod("inline", node, NULL, NULL, "{\"name\":\"i\",\"awsElasticBlockStore\":{\"volumeID\":\"aws-inline1\"}}");
	case INTREE_INLINE_SAME_ID:
		return pod("inlinesame", node, NULL, NULL,
			   "{\"name\":\"i\",\"awsElasticBlockStore\":{\"volumeID\":\"csi-" EBS "-1\"}}");
	case HOSTPATH_ONE: return pod("hostpath", node, "csi-" HOSTPATH_INTREE "-0", NULL, NULL);
	case INLINE_CM: {
		char extra[512];
		snprintf(extra, sizeof extra, "%s,{\"name\":\"i\",\"awsElasticBlockStore\":{\"volumeID\":\"aws-inline1\"}}", cm);
		return pod("inlinecm", node, NULL, NULL, extra);
	}
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
	int va; /* VolumeAttachments per driver */
};

static void test_csi_limits(void **state)
{
	(void)state;
	const char *missing = "looking up PVC default/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found";
	const struct lcase cases[] = {
		{ "should count VolumeAttachments towards volume limit when no pods exist", EBS_ONE, { NONE }, { EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 2 },
		{ "should schedule pod when VolumeAttachments count does not exceed limit", EBS_ONE, { NONE }, { EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL, 1 },
		{ "fits when node volume limit >= new pods CSI volume", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, "csinode", 4,
		  0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "doesn't when node volume limit <= pods CSI volume", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, "csinode", 2, 0,
		  SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "should when driver does not support volume limits", EBS_ONE, { RUNNING, EBS_TWO }, { EBS },
		  "csinode-with-no-limit", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, { PENDING, EBS_TWO }, { EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE,
		  { PENDING, UNBOUND2, EBS_TWO }, { EBS }, "csinode", 4, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "should count PVCs with invalid PV name but valid SC", EBS_ONE, { MISSING_PV, EBS_TWO }, { EBS }, "csinode",
		  2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "don't count pvcs with missing SC towards volume limit", EBS_ONE, { RUNNING, NO_SC }, { EBS }, "csinode", 2,
		  0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "count pvcs with the same type towards volume limit", EBS_ONE, { GCE_TWO, EBS_TWO }, { EBS, GCE },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "don't count pvcs with different type towards volume limit", GCE_TWO, { EBS_TWO, RUNNING }, { EBS, GCE },
		  "csinode", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "ephemeral volume missing", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 0, SK_SUCCESS,
		  SK_UNSCHEDULABLE_AND_UNRESOLVABLE, missing, 0 },
		{ "ephemeral volume not owned", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 2, SK_SUCCESS, SK_ERROR,
		  "PVC default/abc-xyz was not created for pod default/abc (pod is not owner)", 0 },
		{ "ephemeral volume unbound", EPH, { NONE }, { EBS }, "csinode-with-no-limit", 0, 1, SK_SUCCESS, SK_SUCCESS,
		  NULL, 0 },
		{ "ephemeral doesn't when node volume limit <= pods CSI volume", EPH, { RUNNING, EBS_TWO }, { EBS },
		  "csinode", 2, 1, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE, { RUNNING, EPH_TWO },
		  { EBS }, "csinode", 2, 3, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
		  { RUNNING, EPH, EBS_TWO }, { EBS }, "csinode", 3, 1, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
		  { RUNNING, EPH, EBS_TWO }, { EBS }, "csinode", 5, 1, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "skip Filter when the pod only uses secrets and configmaps", CM_SECRET, { NONE }, { EBS }, "csinode", 2, 0,
		  SK_SKIP, SK_SUCCESS, NULL, 0 },
		{ "don't skip Filter when the pod has pvcs", PVC_CM, { NONE }, { EBS }, "csinode", 2, 0, SK_SUCCESS,
		  SK_SUCCESS, NULL, 0 },
		/* Tests for in-tree volume migration */
		{ "should count in-tree volumes if migration is enabled", INTREE_ONE, { INTREE_TWO }, { AWS_INTREE, EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "nil csi node", INTREE_INLINE, { INTREE_TWO }, { AWS_INTREE, EBS }, NULL, 0, 0, SK_SUCCESS, SK_SUCCESS,
		  NULL, 0 },
		{ "should count unbound in-tree volumes if migration is enabled", PENDING, { INTREE_TWO }, { AWS_INTREE, EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "should not limit pod if volume used does not report limits", INTREE_ONE, { INTREE_TWO },
		  { AWS_INTREE, EBS }, "csinode-with-no-limit", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "should not count non-migratable in-tree volumes", HOSTPATH_ONE, { EBS_TWO }, { HOSTPATH_INTREE, EBS },
		  "csinode", 2, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "should count in-tree inline volumes if migration is enabled", INTREE_INLINE, { INTREE_TWO },
		  { AWS_INTREE, EBS }, "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		/* mixed volumes */
		{ "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
		  INTREE_ONE, { EBS_TWO }, { AWS_INTREE, EBS }, "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
		  INTREE_INLINE, { EBS_TWO, INTREE_ONE }, { AWS_INTREE, EBS }, "csinode", 3, 0, SK_SUCCESS,
		  SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
		  INTREE_INLINE_SAME_ID, { EBS_TWO, INTREE_ONE }, { AWS_INTREE, EBS }, "csinode", 3, 0, SK_SUCCESS,
		  SK_SUCCESS, NULL, 0 },
		{ "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", EBS_ONE,
		  { INTREE_TWO }, { AWS_INTREE, EBS }, "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		{ "don't skip Filter when the pod has inline migratable volumes", INLINE_CM, { INTREE_TWO },
		  { AWS_INTREE, EBS }, "csinode", 2, 0, SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 0 },
		/* additions: no CSINode at all means no limit; a shared volume counts once; an attachment
		 * of a volume a pod on the node already uses counts once */
		{ "no csinode", EBS_ONE, { RUNNING, EBS_TWO }, { EBS }, NULL, 0, 0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "a volume already attached for another pod is not new", EBS_TWO, { EBS_TWO, RUNNING }, { EBS }, "csinode", 3,
		  0, SK_SUCCESS, SK_SUCCESS, NULL, 0 },
		{ "an attachment of a pod's volume is not counted twice", EBS_ONE, { EBS_TWO }, { EBS }, "csinode", 4, 0,
		  SK_SUCCESS, SK_SUCCESS, NULL, 3 },
		{ "attachments of other volumes count on top of the pods'", EBS_ONE, { RUNNING }, { EBS }, "csinode", 3, 0,
		  SK_SUCCESS, SK_UNSCHEDULABLE, MAX_COUNT, 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct lcase *c = &cases[i];
		struct ph *h = ph_new(NULL);
		struct sk_plugin *pl = ph_plugin(h, "NodeVolumeLimits");
		const char *drivers[4] = { c->drivers[0], c->drivers[1], c->drivers[2], NULL };
		put_fixtures(h, drivers, c->limit_source, c->max, c->va);
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

#define VA_PV(pv, attacher)                                                                                            \
	"{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"volumeattachment1\"},\"spec\":{\"nodeName\":"        \
	"\"fake-node\",\"attacher\":\"" attacher "\",\"source\":{\"persistentVolumeName\":\"" pv "\"}}}"
#define VA_INLINE(drv)                                                                                                 \
	"{\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"volumeattachment1\"},\"spec\":{\"nodeName\":"        \
	"\"fake-node\",\"attacher\":\"" drv "\",\"source\":{\"inlineVolumeSpec\":{\"csi\":{\"driver\":\"" drv         \
	"\",\"volumeHandle\":\"h\"}}}}}"
#define NS1_POD(vols) "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\"},\"spec\":{\"volumes\":[" vols "]}}"
#define V_PVC1 "{\"name\":\"c\",\"persistentVolumeClaim\":{\"claimName\":\"pvc1\"}}"
#define V_EBS "{\"name\":\"e\",\"awsElasticBlockStore\":{\"volumeID\":\"test\"}}"
#define V_GCE "{\"name\":\"g\",\"gcePersistentDisk\":{\"pdName\":\"test\"}}"

/* TestCSILimitsDeletedVolumeAttachmentQHint (the claim pvc1 is bound to pv1). */
static void test_va_hint(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeVolumeLimits");
	ph_put_storage(h, "{kind: PersistentVolumeClaim, metadata: {name: pvc1, namespace: ns1}, spec: {volumeName: pv1}}\n");
	sk_hint_fn fn = ph_find_hint(pl, SK_EV_VOLUME_ATTACHMENT, NULL);
	assert_non_null(fn);
	const struct {
		const char *name, *pod, *va;
		enum sk_hint want;
	} cases[] = {
		{ "a pod has PVC when VolumeAttachment is deleting", NS1_POD(V_PVC1), VA_PV("pv1", "test.storage.gke.io"),
		  SK_QUEUE },
		{ "a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)",
		  NS1_POD(V_EBS), VA_INLINE(EBS), SK_QUEUE },
		{ "a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)",
		  NS1_POD(V_GCE), VA_INLINE(EBS), SK_QUEUE_SKIP },
		{ "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting",
		  NS1_POD(V_EBS "," V_PVC1), VA_INLINE(EBS), SK_QUEUE },
		{ "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting",
		  NS1_POD(V_EBS "," V_PVC1), VA_PV("pv1", "test.storage.gke.io"), SK_QUEUE },
		{ "a pod has no PVC when VolumeAttachment is deleting", NS1_POD(""), VA_PV("pv1", "test.storage.gke.io"),
		  SK_QUEUE_SKIP },
		/* addition: the attachment of another PV */
		{ "a pod's claim is bound to another PV", NS1_POD(V_PVC1), VA_PV("pv2", "test.storage.gke.io"),
		  SK_QUEUE_SKIP },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *j = fx_json(cases[i].va);
		char *err = NULL;
		struct sk_volume_attachment *va = sk_volume_attachment_decode(j, &err);
		assert_non_null(va);
		struct sk_pod *p = fx_pod(cases[i].pod);
		if (fn(pl, p, va, NULL) != cases[i].want) {
			print_error("case %s\n", cases[i].name);
			fail();
		}
		sk_pod_unref(p);
		sk_vobj_unref(va);
		cJSON_Delete(j);
	}
	ph_free(h);
}

/* isCSIMigrationOn (utils.go, v1.34): Portworx is migrated only where the CSINode lists it; the
 * always-migrated plugins need a CSINode but not the annotation. */
static void test_migration_on(void **state)
{
	(void)state;
	const struct {
		const char *name, *annotation, *volume, *driver;
		enum sk_code want;
	} cases[] = {
		{ "portworx listed in migrated-plugins counts", "kubernetes.io/portworx-volume",
		  "{\"name\":\"px\",\"portworxVolume\":{\"volumeID\":\"px-2\"}}", "pxd.portworx.com", SK_UNSCHEDULABLE },
		{ "portworx not listed is not counted", "kubernetes.io/aws-ebs",
		  "{\"name\":\"px\",\"portworxVolume\":{\"volumeID\":\"px-2\"}}", "pxd.portworx.com", SK_SUCCESS },
		{ "azure disk counts without the annotation", "",
		  "{\"name\":\"ad\",\"azureDisk\":{\"diskName\":\"d\",\"diskURI\":\"uri-2\"}}", "disk.csi.azure.com",
		  SK_UNSCHEDULABLE },
		{ "cinder counts without the annotation", "",
		  "{\"name\":\"ci\",\"cinder\":{\"volumeID\":\"c-2\"}}", "cinder.csi.openstack.org", SK_UNSCHEDULABLE },
		{ "vsphere is not counted", "kubernetes.io/vsphere-volume",
		  "{\"name\":\"vs\",\"vsphereVolume\":{\"volumePath\":\"p-2\"}}", "csi.vsphere.vmware.com", SK_SUCCESS },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ph *h = ph_new(NULL);
		struct sk_plugin *pl = ph_plugin(h, "NodeVolumeLimits");
		char buf[1024];
		/* one volume of the driver already attached (a VolumeAttachment), a limit of 1 */
		snprintf(buf, sizeof buf,
			 "{kind: CSINode, metadata: {name: " NODE ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: '%s'}},"
			 " spec: {drivers: [{name: %s, nodeID: id1, allocatable: {count: 1}}]}}\n---\n"
			 "{kind: PersistentVolume, metadata: {name: pv-1}, spec: {csi: {driver: %s, volumeHandle: h-1}}}\n---\n"
			 "{kind: VolumeAttachment, metadata: {name: va-1}, spec: {nodeName: " NODE ", attacher: %s,"
			 " source: {persistentVolumeName: pv-1}}}\n",
			 cases[i].annotation, cases[i].driver, cases[i].driver, cases[i].driver);
		ph_put_storage(h, buf);
		struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"" NODE "\"}}"), NULL);
		struct sk_pod *p = pod("inline", NULL, NULL, NULL, cases[i].volume);
		struct sk_status s = pl->desc->filter(pl, h->cs, p, ni);
		if (s.code != cases[i].want) {
			print_error("case %s: %s\n", cases[i].name, sk_code_string(s.code));
			fail();
		}
		sk_status_reset(&s);
		sk_pod_unref(p);
		sk_node_info_free(ni);
		ph_free(h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csi_limits),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_va_hint),
		cmocka_unit_test(test_migration_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
