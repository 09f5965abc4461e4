/* Tests for plugins/VolumeRestrictions: upstream volume_restrictions_test's tables with their case
 * names (TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
 * TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted,
 * Test_isSchedulableAfterPersistentVolumeClaimChange), the preemption interplay (RemovePod of the
 * claim's holder lifts the ReadWriteOncePod rejection; AddPod brings it back) and the read-only
 * rules of the in-tree disks. */
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

#define DISK_CONFLICT "node(s) had no available disk"
#define RWOP_CONFLICT "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

/* A pod in namespace default with the given volumes JSON (without brackets) on node (NULL: none). */
static struct sk_pod *pod_vols(const char *name, const char *node, const char *vols)
{
	char buf[2048];
	snprintf(buf, sizeof buf,
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},\"spec\":{%s%s%s\"volumes\":[%s]}}",
		 name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "", vols ? vols : "");
	return fx_pod(buf);
}

static char *status_text(struct sk_status s, enum sk_code *code)
{
	*code = s.code;
	return ph_message(&s);
}

/* PreFilter then (when it succeeded) Filter on ni, as upstream's loop. */
static void check(struct ph *h, const char *name, struct sk_pod *pod, struct sk_node_info *ni, enum sk_code want_pre,
		  const char *want_pre_msg, enum sk_code want, const char *want_msg)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeRestrictions");
	ph_reset_state(h);
	struct sk_prefilter_result r = { .all = true };
	enum sk_code code;
	char *m = status_text(pl->desc->pre_filter(pl, h->cs, pod, &r), &code);
	if (code != want_pre || strcmp(m, want_pre_msg ? want_pre_msg : "") != 0) {
		print_error("case %s: PreFilter %s \"%s\"\n", name, sk_code_string(code), m);
		fail();
	}
	free(m);
	if (code == SK_SUCCESS) {
		m = status_text(pl->desc->filter(pl, h->cs, pod, ni), &code);
		if (code != want || strcmp(m, want_msg ? want_msg : "") != 0) {
			print_error("case %s: Filter %s \"%s\"\n", name, sk_code_string(code), m);
			fail();
		}
		free(m);
	}
}

struct disk_case {
	const char *vol, *vol2; /* the volume, and the one that does not conflict with it */
};

/* The four upstream disk tables share their shape: nothing, one state, same state, different state. */
static void disk_table(const char *kind, const char *vol, const char *vol2)
{
	struct ph *h = ph_new(NULL);
	struct sk_node *node = fx_node("{\"metadata\":{\"name\":\"n\"}}");
	struct {
		const char *name, *pod_vol, *existing_vol;
		enum sk_code pre, filter;
	} cases[] = {
		{ "nothing", NULL, NULL, SK_SKIP, SK_SUCCESS },
		{ "one state", NULL, vol, SK_SKIP, SK_SUCCESS },
		{ "same state", vol, vol, SK_SUCCESS, SK_UNSCHEDULABLE },
		{ "different state", vol2, vol, SK_SUCCESS, SK_SUCCESS },
		{ "pod with a volume that doesn't have restrictions", "{\"name\":\"volume with no restriction\"}", NULL,
		  SK_SKIP, SK_SUCCESS },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sk_pod *existing = pod_vols("existing", "n", cases[i].existing_vol);
		struct sk_node_info *ni = fx_node_info(sk_node_ref(node), existing, NULL);
		struct sk_pod *pod = pod_vols("p", NULL, cases[i].pod_vol);
		char name[128];
		snprintf(name, sizeof name, "%s: %s", kind, cases[i].name);
		check(h, name, pod, ni, cases[i].pre, NULL, cases[i].filter,
		      cases[i].filter == SK_SUCCESS ? NULL : DISK_CONFLICT);
		sk_pod_unref(pod);
		sk_node_info_free(ni);
	}
	sk_node_unref(node);
	ph_free(h);
}

#define GCE(pd, ro) "{\"name\":\"v\",\"gcePersistentDisk\":{\"pdName\":\"" pd "\"" ro "}}"
#define AWS(id) "{\"name\":\"v\",\"awsElasticBlockStore\":{\"volumeID\":\"" id "\"}}"
#define RBD(mons, ro) "{\"name\":\"v\",\"rbd\":{\"monitors\":[" mons "],\"pool\":\"foo\",\"image\":\"bar\",\"fsType\":\"ext4\"" ro "}}"
#define ISCSI(iqn, ro) "{\"name\":\"v\",\"iscsi\":{\"targetPortal\":\"127.0.0.1:3260\",\"iqn\":\"" iqn "\",\"fsType\":\"ext4\",\"lun\":0" ro "}}"
#define RO ",\"readOnly\":true"

static void test_gce_disk_conflicts(void **state)
{
	(void)state;
	disk_table("gce", GCE("foo", ""), GCE("bar", ""));
}

static void test_aws_disk_conflicts(void **state)
{
	(void)state;
	disk_table("aws", AWS("foo"), AWS("bar"));
}

static void test_rbd_disk_conflicts(void **state)
{
	(void)state;
	disk_table("rbd", RBD("\"a\",\"b\"", ""), RBD("\"c\",\"d\"", ""));
}

static void test_iscsi_disk_conflicts(void **state)
{
	(void)state;
	disk_table("iscsi", ISCSI("iqn.2016-12.server:storage.target01", ""), ISCSI("iqn.2017-12.server:storage.target01", ""));
}

/* isVolumeConflict's read-only rules: GCE PD, iSCSI and RBD may be shared read-only, AWS EBS never;
 * RBD needs one shared monitor. */
static void test_read_only_sharing(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct {
		const char *name, *want, *used;
		bool conflict;
	} cases[] = {
		{ "gce both read-only", GCE("foo", RO), GCE("foo", RO), false },
		{ "gce one read-only", GCE("foo", RO), GCE("foo", ""), true },
		{ "aws both read-only", "{\"name\":\"v\",\"awsElasticBlockStore\":{\"volumeID\":\"foo\",\"readOnly\":true}}",
		  "{\"name\":\"v\",\"awsElasticBlockStore\":{\"volumeID\":\"foo\",\"readOnly\":true}}", true },
		{ "iscsi both read-only", ISCSI("iqn.a", RO), ISCSI("iqn.a", RO), false },
		{ "iscsi one read-only", ISCSI("iqn.a", ""), ISCSI("iqn.a", RO), true },
		{ "rbd one shared monitor", RBD("\"a\",\"b\"", ""), RBD("\"b\",\"c\"", ""), true },
		{ "rbd both read-only", RBD("\"a\"", RO), RBD("\"a\"", RO), false },
		{ "gce against aws of the same id", GCE("foo", ""), AWS("foo"), false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"),
						       pod_vols("existing", "n", cases[i].used), NULL);
		struct sk_pod *pod = pod_vols("p", NULL, cases[i].want);
		check(h, cases[i].name, pod, ni, SK_SUCCESS, NULL, cases[i].conflict ? SK_UNSCHEDULABLE : SK_SUCCESS,
		      cases[i].conflict ? DISK_CONFLICT : NULL);
		sk_pod_unref(pod);
		sk_node_info_free(ni);
	}
	ph_free(h);
}

#define PVCVOL(c) "{\"name\":\"" c "\",\"persistentVolumeClaim\":{\"claimName\":\"" c "\"}}"
#define STORAGE                                                                                                       \
	"{kind: PersistentVolumeClaim, metadata: {name: claim-with-rwop-1, namespace: default}, spec: {accessModes: [ReadWriteOncePod]}}\n---\n" \
	"{kind: PersistentVolumeClaim, metadata: {name: claim-with-rwop-2, namespace: default}, spec: {accessModes: [ReadWriteOncePod]}}\n---\n" \
	"{kind: PersistentVolumeClaim, metadata: {name: claim-with-rwx, namespace: default}, spec: {accessModes: [ReadWriteMany]}}\n"

static void test_access_mode_conflicts(void **state)
{
	(void)state;
	struct sk_node *node = fx_node("{\"metadata\":{\"name\":\"node-1\"}}");
	struct {
		const char *name, *pod_vols, *existing; /* existing: volumes of the pods on node-1 */
		bool with_pvcs;
		enum sk_code pre;
		const char *pre_msg;
		enum sk_code filter;
		const char *filter_msg;
	} cases[] = {
		{ "nothing", NULL, NULL, false, SK_SKIP, NULL, SK_SUCCESS, NULL },
		{ "failed to get PVC", PVCVOL("claim-with-rwop-1"), NULL, false, SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
		  "persistentvolumeclaim \"claim-with-rwop-1\" not found", SK_SUCCESS, NULL },
		{ "no access mode conflict", PVCVOL("claim-with-rwop-1"), PVCVOL("claim-with-rwx"), true, SK_SKIP, NULL,
		  SK_SUCCESS, NULL },
		{ "access mode conflict, unschedulable", PVCVOL("claim-with-rwop-1"), PVCVOL("claim-with-rwop-1"), true,
		  SK_SUCCESS, NULL, SK_UNSCHEDULABLE, RWOP_CONFLICT },
		{ "two conflicts, unschedulable", PVCVOL("claim-with-rwop-1") "," PVCVOL("claim-with-rwop-2"),
		  PVCVOL("claim-with-rwop-1") "," PVCVOL("claim-with-rwop-2"), true, SK_SUCCESS, NULL, SK_UNSCHEDULABLE,
		  RWOP_CONFLICT },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ph *h = ph_new(NULL);
		if (cases[i].with_pvcs)
			ph_put_storage(h, STORAGE);
		struct sk_pod *holder = pod_vols("pod-with-pvcs", "node-1", cases[i].existing);
		struct sk_pod *rwx = pod_vols("pod-with-rwx", "node-1", PVCVOL("claim-with-rwx"));
		struct sk_node_info *ni = fx_node_info(sk_node_ref(node), holder, rwx, NULL);
		ph_set_snapshot(h, fx_snapshot(sk_node_info_clone(ni), NULL));
		struct sk_pod *pod = pod_vols("pod-with-conflict", NULL, cases[i].pod_vols);
		check(h, cases[i].name, pod, ni, cases[i].pre, cases[i].pre_msg, cases[i].filter, cases[i].filter_msg);
		sk_pod_unref(pod);
		sk_node_info_free(ni);
		ph_free(h);
	}
	sk_node_unref(node);
}

/* Preemption: the dry run removes the holder of the claim (RemovePod), after which the pod fits on
 * every node; adding it back (AddPod) restores the rejection. The rejection is Unschedulable, not
 * UU, so DefaultPreemption considers the nodes. */
static void test_rwop_preemption_interplay(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_put_storage(h, STORAGE);
	struct sk_pod *holder = pod_vols("holder", "node-1", PVCVOL("claim-with-rwop-1"));
	struct sk_node_info *n1 = fx_node_info(fx_node("{\"metadata\":{\"name\":\"node-1\"}}"), holder, NULL);
	struct sk_node_info *n2 = fx_node_info(fx_node("{\"metadata\":{\"name\":\"node-2\"}}"), NULL);
	ph_set_snapshot(h, fx_snapshot(sk_node_info_clone(n1), sk_node_info_clone(n2), NULL));
	struct sk_plugin *pl = ph_plugin(h, "VolumeRestrictions");
	struct sk_pod *pod = pod_vols("preemptor", NULL, PVCVOL("claim-with-rwop-1"));
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
	assert_int_equal(s.code, SK_SUCCESS);
	s = pl->desc->filter(pl, h->cs, pod, n2);
	assert_int_equal(s.code, SK_UNSCHEDULABLE); /* every node, not only the holder's */
	sk_status_reset(&s);
	struct sk_cycle_state *dry = sk_cycle_state_clone(h->cs);
	assert_non_null(dry);
	s = pl->desc->pre_filter_remove_pod(pl, dry, pod, holder, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	s = pl->desc->filter(pl, dry, pod, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	/* the original state is untouched by the dry run */
	s = pl->desc->filter(pl, h->cs, pod, n1);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	sk_status_reset(&s);
	s = pl->desc->pre_filter_add_pod(pl, dry, pod, holder, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	s = pl->desc->filter(pl, dry, pod, n1);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	sk_status_reset(&s);
	/* a pod of another namespace naming a claim of the same name does not count */
	struct sk_pod *other = fx_pod("{\"metadata\":{\"name\":\"o\",\"namespace\":\"other\"},\"spec\":{\"nodeName\":\"node-1\","
				      "\"volumes\":[" PVCVOL("claim-with-rwop-1") "]}}");
	s = pl->desc->pre_filter_add_pod(pl, dry, pod, other, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	s = pl->desc->pre_filter_remove_pod(pl, dry, pod, holder, n1);
	s = pl->desc->filter(pl, dry, pod, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_cycle_state_free(dry);
	sk_pod_unref(other);
	sk_pod_unref(pod);
	sk_node_info_free(n1);
	sk_node_info_free(n2);
	ph_free(h);
}

static void test_hint_pod_deleted(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeRestrictions");
	sk_hint_fn fn = ph_find_hint(pl, SK_EV_POD, NULL);
	struct {
		const char *name, *pod, *deleted;
		enum sk_hint want;
	} cases[] = {
		{ "queue-new-object-gcedisk-conflict", GCE("foo", ""), GCE("foo", ""), SK_QUEUE },
		{ "skip-new-object-gcedisk-no-conflict", GCE("foo", ""), GCE("bar", ""), SK_QUEUE_SKIP },
		{ "queue-new-object-awsdisk-conflict", AWS("foo"), AWS("foo"), SK_QUEUE },
		{ "skip-new-object-awsdisk-no-conflict", AWS("foo"), AWS("bar"), SK_QUEUE_SKIP },
		{ "queue-new-object-rbddisk-conflict", RBD("\"a\",\"b\"", ""), RBD("\"a\",\"b\"", ""), SK_QUEUE },
		{ "skip-new-object-rbddisk-no-conflict", RBD("\"a\",\"b\"", ""), RBD("\"c\",\"d\"", ""), SK_QUEUE_SKIP },
		{ "queue-new-object-iscsidisk-conflict", ISCSI("iqn.2016-12.server:storage.target01", ""),
		  ISCSI("iqn.2016-12.server:storage.target01", ""), SK_QUEUE },
		{ "skip-new-object-iscsidisk-no-conflict", ISCSI("iqn.2016-12.server:storage.target01", ""),
		  ISCSI("iqn.2017-12.server:storage.target01", ""), SK_QUEUE_SKIP },
		{ "queue-has-same-claim", PVCVOL("claim-rwop"), PVCVOL("claim-rwop"), SK_QUEUE },
		{ "skip-no-same-claim", PVCVOL("claim-1-rwop"), PVCVOL("claim-2-rwop"), SK_QUEUE_SKIP },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sk_pod *pod = pod_vols("pod1", NULL, cases[i].pod);
		struct sk_pod *del = pod_vols("pod2", "n", cases[i].deleted);
		enum sk_hint got = fn(pl, pod, del, NULL);
		if (got != cases[i].want) {
			print_error("case %s: got %d\n", cases[i].name, got);
			fail();
		}
		sk_pod_unref(pod);
		sk_pod_unref(del);
	}
	ph_free(h);
}

static void test_hint_pvc_added(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeRestrictions");
	sk_hint_fn fn = ph_find_hint(pl, SK_EV_PVC, NULL);
	char *err = NULL;
	cJSON *j1 = fx_json("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"claim-with-rwx-1\",\"namespace\":\"default\"},"
			    "\"spec\":{\"accessModes\":[\"ReadWriteMany\"]}}");
	cJSON *j2 = fx_json("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"claim-with-rwx-2\",\"namespace\":\"default\"},"
			    "\"spec\":{\"accessModes\":[\"ReadWriteMany\"]}}");
	struct sk_pvc *pvc1 = sk_pvc_decode(j1, &err), *pvc2 = sk_pvc_decode(j2, &err);
	assert_non_null(pvc1);
	assert_non_null(pvc2);
	struct sk_pod *one = pod_vols("pod-with-one-pvc", "node-1", PVCVOL("claim-with-rwx-1"));
	struct sk_pod *two = pod_vols("pod-with-two-pvcs", "node-1", PVCVOL("claim-with-rwx-1") "," PVCVOL("claim-with-rwx-2"));
	struct sk_pod *sys = fx_pod("{\"metadata\":{\"name\":\"pod-with-one-pvc\",\"namespace\":\"kube-system\"},\"spec\":{"
				    "\"volumes\":[" PVCVOL("claim-with-rwx-1") "]}}");
	assert_int_equal(fn(pl, two, NULL, pvc1), SK_QUEUE);      /* queue-new-object-pvc-belong-pod */
	assert_int_equal(fn(pl, one, NULL, pvc2), SK_QUEUE_SKIP); /* skip-new-object-unused */
	assert_int_equal(fn(pl, one, NULL, pvc2), SK_QUEUE_SKIP); /* skip-nil-old-object */
	assert_int_equal(fn(pl, one, NULL, pvc2), SK_QUEUE_SKIP); /* skip-new-object-not-belong-pod */
	assert_int_equal(fn(pl, sys, NULL, pvc1), SK_QUEUE_SKIP); /* skip-new-object-namespace-not-equal-pod */
	sk_pod_unref(one);
	sk_pod_unref(two);
	sk_pod_unref(sys);
	sk_vobj_unref(pvc1);
	sk_vobj_unref(pvc2);
	cJSON_Delete(j1);
	cJSON_Delete(j2);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gce_disk_conflicts),
		cmocka_unit_test(test_aws_disk_conflicts),
		cmocka_unit_test(test_rbd_disk_conflicts),
		cmocka_unit_test(test_iscsi_disk_conflicts),
		cmocka_unit_test(test_read_only_sharing),
		cmocka_unit_test(test_access_mode_conflicts),
		cmocka_unit_test(test_rwop_preemption_interplay),
		cmocka_unit_test(test_hint_pod_deleted),
		cmocka_unit_test(test_hint_pvc_added),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
