/* Tests for plugins/VolumeBinding: upstream volume_binding_test's TestVolumeBinding cases (names
 * kept; the scores of the capacity cases need StorageCapacityScoring, off in v1.34, so only their
 * Filter results are checked), the binder's static matching rules (FindMatchingVolume: class,
 * capacity, smallest fit, access modes, selector, phase, prebound PVs), provisioning checks
 * (no-provisioner, allowedTopologies, selected-node of another node), the assume cache across
 * pods (Reserve hides a PV from the next pod, Unreserve gives it back), PreBind's patches, its wait
 * for the PV controller and its failures (timeout, provisioning failed), the args, and the hints. */
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
#include "scheduler/framework/registry.h"
#include "scheduler/tests/fixtures.h"

#define BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define PV_NOT_EXIST "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define UU SK_UNSCHEDULABLE_AND_UNRESOLVABLE

#define CLASSES                                                                                                        \
	"{kind: StorageClass, metadata: {name: immediate-sc}, provisioner: p, volumeBindingMode: Immediate}\n---\n"    \
	"{kind: StorageClass, metadata: {name: wait-sc}, provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}\n---\n" \
	"{kind: StorageClass, metadata: {name: wait-hdd-sc}, provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}\n---\n" \
	"{kind: StorageClass, metadata: {name: dyn-sc}, provisioner: d.example.com, volumeBindingMode: WaitForFirstConsumer,\n" \
	"  allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [zone-a]}]}]}\n"

/* makePod(name).withPVCVolume(c1).withPVCVolume(c2) */
static struct sk_pod *pod(const char *name, const char *c1, const char *c2)
{
	char buf[1024], vols[512] = "";
	if (c1)
		snprintf(vols, sizeof vols, "{\"name\":\"v1\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}", c1);
	if (c2) {
		size_t l = strlen(vols);
		snprintf(vols + l, sizeof vols - l, ",{\"name\":\"v2\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}", c2);
	}
	snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},\"spec\":{\"volumes\":[%s]}}",
		 name, name, vols);
	return fx_pod(buf);
}

static struct sk_node_info *node(const char *name, const char *labels)
{
	char buf[512];
	snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name, labels ? labels : "");
	return fx_node_info(fx_node(buf), NULL);
}

/* A PVC "makePVC(name, class)" (+ bound to pv when non-NULL, + extra spec fields). */
static void put_pvc(struct ph *h, const char *name, const char *cls, const char *pv, const char *extra)
{
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "{kind: PersistentVolumeClaim, metadata: {name: %s, namespace: default, uid: uid-%s, resourceVersion: '5'%s},\n"
		 " spec: {storageClassName: %s%s%s%s%s}}\n",
		 name, name, pv ? ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}" : "", cls, pv ? ", volumeName: " : "",
		 pv ? pv : "", extra ? ", " : "", extra ? extra : "");
	ph_put_storage(h, buf);
}

/* makePV(name, class).withPhase(Available) (+ extra spec fields) */
static void put_pv(struct ph *h, const char *name, const char *cls, const char *extra)
{
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "{kind: PersistentVolume, metadata: {name: %s, resourceVersion: '3'}, spec: {storageClassName: %s%s%s},\n"
		 " status: {phase: Available}}\n",
		 name, cls, extra ? ", " : "", extra ? extra : "");
	ph_put_storage(h, buf);
}

#define AFFINITY(key, val) "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: " key ", operator: In, values: [" val "]}]}]}}"

static char *status_msg(struct sk_status s, enum sk_code *code)
{
	*code = s.code;
	return ph_message(&s);
}

static void expect(const char *name, const char *what, struct sk_status s, enum sk_code want, const char *want_msg)
{
	enum sk_code code;
	char *m = status_msg(s, &code);
	if (code != want || strcmp(m, want_msg ? want_msg : "") != 0) {
		print_error("case %s: %s %s \"%s\", want %s \"%s\"\n", name, what, sk_code_string(code), m,
			    sk_code_string(want), want_msg ? want_msg : "");
		fail();
	}
	free(m);
}

static struct sk_status pre_filter(struct ph *h, const struct sk_pod *p)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	struct sk_prefilter_result r = { .all = true };
	return pl->desc->pre_filter(pl, h->cs, p, &r);
}

static struct sk_status filter(struct ph *h, const struct sk_pod *p, const struct sk_node_info *ni)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	return pl->desc->filter(pl, h->cs, p, ni);
}

enum { PV_A = 1, PV_FOO = 2, PV_LOCAL = 4 };

static void test_volume_binding_table(void **state)
{
	(void)state;
	struct {
		const char *name;
		void (*setup)(struct ph *h);
		const char *c1, *c2;
		enum sk_code pre;
		const char *pre_msg;
		int nnodes;
		const char *nodes[3];
		const char *filter_msg[3]; /* NULL: success; else UU with this text */
		unsigned pvs;              /* the case's PVs: PV_A, PV_FOO, PV_LOCAL */
	} cases[] = {
		{ "pod has not pvcs", NULL, NULL, NULL, SK_SKIP, NULL, 1, { "node-a" }, { NULL } , 0 },
		{ "all bound", NULL, "pvc-a", NULL, SK_SUCCESS, NULL, 1, { "node-a" }, { NULL } , PV_A },
		{ "PVC does not exist", NULL, "pvc-x", NULL, UU, "persistentvolumeclaim \"pvc-x\" not found", 0, { NULL },
		  { NULL } , 0 },
		{ "Part of PVCs do not exist", NULL, "pvc-a", "pvc-x", UU, "persistentvolumeclaim \"pvc-x\" not found", 0,
		  { NULL }, { NULL } , PV_A },
		{ "immediate claims not bound", NULL, "pvc-imm", NULL, UU, "pod has unbound immediate PersistentVolumeClaims",
		  0, { NULL }, { NULL } , 0 },
		{ "unbound claims no matches", NULL, "pvc-b", NULL, SK_SUCCESS, NULL, 1, { "node-a" }, { BIND_CONFLICT } , 0 },
		{ "bound and unbound unsatisfied", NULL, "pvc-foo", "pvc-b", SK_SUCCESS, NULL, 1, { "node-foo" },
		  { NODE_CONFLICT ", " BIND_CONFLICT } , PV_FOO },
		{ "pv not found", NULL, "pvc-nopv", NULL, SK_SUCCESS, NULL, 1, { "node-a" }, { PV_NOT_EXIST } , 0 },
		{ "pv not found claim lost", NULL, "pvc-lost", NULL, UU,
		  "persistentvolumeclaim \"pvc-lost\" bound to non-existent persistentvolume \"pv-a\"", 0, { NULL }, { NULL } , 0 },
		{ "local volumes with close capacity are preferred", NULL, "pvc-50", NULL, SK_SUCCESS, NULL, 3,
		  { "node-a", "node-b", "node-c" }, { NULL, NULL, BIND_CONFLICT } , PV_LOCAL },
		{ "local volumes with close capacity are preferred (multiple pvcs)", NULL, "pvc-50", "pvc-hdd-100", SK_SUCCESS,
		  NULL, 3, { "node-a", "node-b", "node-c" }, { NULL, NULL, BIND_CONFLICT } , PV_LOCAL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ph *h = ph_new(NULL);
		ph_put_storage(h, CLASSES);
		put_pvc(h, "pvc-a", "wait-sc", "pv-a", NULL);
		if (cases[i].pvs & PV_A)
			put_pv(h, "pv-a", "wait-sc", NULL);
		put_pvc(h, "pvc-imm", "immediate-sc", NULL, NULL);
		put_pvc(h, "pvc-b", "wait-sc", NULL, NULL);
		put_pvc(h, "pvc-foo", "wait-sc", "pv-foo", NULL);
		if (cases[i].pvs & PV_FOO)
			put_pv(h, "pv-foo", "wait-sc", AFFINITY("foo", "bar"));
		put_pvc(h, "pvc-nopv", "wait-sc", "pv-none", NULL);
		ph_put_storage(h, "{kind: PersistentVolumeClaim, metadata: {name: pvc-lost, namespace: default,"
				  " annotations: {pv.kubernetes.io/bind-completed: 'yes'}}, spec: {storageClassName: wait-sc, volumeName: pv-a},"
				  " status: {phase: Lost}}\n");
		put_pvc(h, "pvc-50", "wait-sc", NULL, "resources: {requests: {storage: 50Gi}}");
		put_pvc(h, "pvc-hdd-100", "wait-hdd-sc", NULL, "resources: {requests: {storage: 100Gi}}");
		if (cases[i].pvs & PV_LOCAL) {
			put_pv(h, "pv-a-0", "wait-sc", "capacity: {storage: 200Gi}, " AFFINITY("kubernetes.io/hostname", "node-a"));
			put_pv(h, "pv-a-1", "wait-sc", "capacity: {storage: 200Gi}, " AFFINITY("kubernetes.io/hostname", "node-a"));
			put_pv(h, "pv-a-2", "wait-hdd-sc", "capacity: {storage: 200Gi}, " AFFINITY("kubernetes.io/hostname", "node-a"));
			put_pv(h, "pv-b-0", "wait-sc", "capacity: {storage: 100Gi}, " AFFINITY("kubernetes.io/hostname", "node-b"));
			put_pv(h, "pv-b-2", "wait-hdd-sc", "capacity: {storage: 100Gi}, " AFFINITY("kubernetes.io/hostname", "node-b"));
		}
		struct sk_pod *p = pod("pod-a", cases[i].c1, cases[i].c2);
		expect(cases[i].name, "PreFilter", pre_filter(h, p), cases[i].pre, cases[i].pre_msg);
		for (int k = 0; k < cases[i].nnodes; k++) {
			char labels[128];
			if (strcmp(cases[i].nodes[k], "node-foo") == 0)
				snprintf(labels, sizeof labels, "\"foo\":\"barbar\"");
			else
				snprintf(labels, sizeof labels, "\"kubernetes.io/hostname\":\"%s\"", cases[i].nodes[k]);
			struct sk_node_info *ni = node(cases[i].nodes[k], labels);
			expect(cases[i].name, cases[i].nodes[k], filter(h, p, ni), cases[i].filter_msg[k] ? UU : SK_SUCCESS,
			       cases[i].filter_msg[k]);
			sk_node_info_free(ni);
		}
		sk_pod_unref(p);
		ph_free(h);
	}
}

/* FindMatchingVolume's rules, one PV against one claim on one node. */
static void test_static_matching(void **state)
{
	(void)state;
	struct {
		const char *name, *pvc_extra, *pv_yaml;
		bool match;
	} cases[] = {
		{ "same class and enough capacity", "resources: {requests: {storage: 1Gi}}",
		  "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}}, status: {phase: Available}", true },
		{ "too small", "resources: {requests: {storage: 2Gi}}",
		  "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}}, status: {phase: Available}", false },
		{ "other class", NULL, "spec: {storageClassName: wait-hdd-sc}, status: {phase: Available}", false },
		{ "not available", NULL, "spec: {storageClassName: wait-sc}, status: {phase: Released}", false },
		{ "bound to another claim", NULL,
		  "spec: {storageClassName: wait-sc, claimRef: {namespace: default, name: other}}, status: {phase: Available}",
		  false },
		{ "prebound to this claim, any phase", NULL,
		  "spec: {storageClassName: wait-sc, claimRef: {namespace: default, name: pvc}}, status: {phase: Pending}", true },
		{ "prebound to this claim with another uid", NULL,
		  "spec: {storageClassName: wait-sc, claimRef: {namespace: default, name: pvc, uid: other}}, status: {phase: Available}",
		  false },
		{ "access modes not offered", "accessModes: [ReadWriteMany]",
		  "spec: {storageClassName: wait-sc, accessModes: [ReadWriteOnce]}, status: {phase: Available}", false },
		{ "access modes offered", "accessModes: [ReadWriteOnce]",
		  "spec: {storageClassName: wait-sc, accessModes: [ReadWriteOnce, ReadOnlyMany]}, status: {phase: Available}", true },
		{ "selector matches", "selector: {matchLabels: {tier: gold}}",
		  "metadata: {labels: {tier: gold}}, spec: {storageClassName: wait-sc}, status: {phase: Available}", true },
		{ "selector does not match", "selector: {matchLabels: {tier: gold}}",
		  "metadata: {labels: {tier: iron}}, spec: {storageClassName: wait-sc}, status: {phase: Available}", false },
		{ "volume mode mismatch", "volumeMode: Block", "spec: {storageClassName: wait-sc}, status: {phase: Available}",
		  false },
		{ "node affinity of another node", NULL,
		  "spec: {storageClassName: wait-sc, " AFFINITY("kubernetes.io/hostname", "other") "}, status: {phase: Available}",
		  false },
		{ "being deleted", NULL,
		  "metadata: {deletionTimestamp: '2026-01-01T00:00:00Z'}, spec: {storageClassName: wait-sc}, status: {phase: Available}",
		  false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ph *h = ph_new(NULL);
		ph_put_storage(h, CLASSES);
		put_pvc(h, "pvc", "wait-sc", NULL, cases[i].pvc_extra);
		char buf[1024];
		/* merge the PV's metadata name in */
		const char *meta = strstr(cases[i].pv_yaml, "metadata: {");
		if (meta)
			snprintf(buf, sizeof buf, "{kind: PersistentVolume, metadata: {name: pv, %s}", meta + strlen("metadata: {"));
		else
			snprintf(buf, sizeof buf, "{kind: PersistentVolume, metadata: {name: pv}, %s}", cases[i].pv_yaml);
		ph_put_storage(h, buf);
		struct sk_pod *p = pod("pod-a", "pvc", NULL);
		expect(cases[i].name, "PreFilter", pre_filter(h, p), SK_SUCCESS, NULL);
		struct sk_node_info *ni = node("node-a", "\"kubernetes.io/hostname\":\"node-a\"");
		expect(cases[i].name, "Filter", filter(h, p, ni), cases[i].match ? SK_SUCCESS : UU,
		       cases[i].match ? NULL : BIND_CONFLICT);
		sk_node_info_free(ni);
		sk_pod_unref(p);
		ph_free(h);
	}
}

static void test_provisioning_checks(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_put_storage(h, CLASSES);
	put_pvc(h, "dyn", "dyn-sc", NULL, NULL);
	ph_put_storage(h, "{kind: PersistentVolumeClaim, metadata: {name: started, namespace: default,"
			  " annotations: {volume.kubernetes.io/selected-node: node-b}}, spec: {storageClassName: dyn-sc}}\n");
	struct sk_pod *p = pod("pod-a", "dyn", NULL);
	expect("provision", "PreFilter", pre_filter(h, p), SK_SUCCESS, NULL);
	struct sk_node_info *a = node("node-a", "\"topology.kubernetes.io/zone\":\"zone-a\"");
	struct sk_node_info *b = node("node-b", "\"topology.kubernetes.io/zone\":\"zone-b\"");
	expect("allowed topology", "Filter", filter(h, p, a), SK_SUCCESS, NULL);
	expect("outside the allowed topologies", "Filter", filter(h, p, b), UU, BIND_CONFLICT);
	sk_pod_unref(p);
	/* provisioning already started for another node: only that node */
	ph_reset_state(h);
	p = pod("pod-b", "started", NULL);
	expect("selected node", "PreFilter", pre_filter(h, p), SK_SUCCESS, NULL);
	expect("selected node elsewhere", "Filter", filter(h, p, a), UU, BIND_CONFLICT);
	sk_pod_unref(p);
	sk_node_info_free(a);
	sk_node_info_free(b);
	ph_free(h);
}

/* Reserve assumes; a second pod no longer sees the PV; Unreserve gives it back. */
static void test_assume_cache(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	ph_put_storage(h, CLASSES);
	put_pvc(h, "pvc-1", "wait-sc", NULL, NULL);
	put_pvc(h, "pvc-2", "wait-sc", NULL, NULL);
	put_pv(h, "pv-only", "wait-sc", NULL);
	struct sk_node_info *ni = node("node-a", NULL);
	ph_set_snapshot(h, fx_snapshot(sk_node_info_clone(ni), NULL));
	struct sk_pod *p1 = pod("pod-1", "pvc-1", NULL), *p2 = pod("pod-2", "pvc-2", NULL);
	expect("first", "PreFilter", pre_filter(h, p1), SK_SUCCESS, NULL);
	expect("first", "Filter", filter(h, p1, ni), SK_SUCCESS, NULL);
	struct sk_status s = pl->desc->reserve(pl, h->cs, p1, "node-a");
	assert_int_equal(s.code, SK_SUCCESS);
	struct sk_cycle_state *first = h->cs;
	h->cs = sk_cycle_state_new(h->fw, false);
	expect("second while assumed", "PreFilter", pre_filter(h, p2), SK_SUCCESS, NULL);
	expect("second while assumed", "Filter", filter(h, p2, ni), UU, BIND_CONFLICT);
	pl->desc->unreserve(pl, first, p1, "node-a");
	ph_reset_state(h);
	expect("second after unreserve", "PreFilter", pre_filter(h, p2), SK_SUCCESS, NULL);
	expect("second after unreserve", "Filter", filter(h, p2, ni), SK_SUCCESS, NULL);
	sk_cycle_state_free(first);
	sk_pod_unref(p1);
	sk_pod_unref(p2);
	sk_node_info_free(ni);
	ph_free(h);
}

static void run_to_reserve(struct ph *h, struct sk_pod *p, struct sk_node_info *ni)
{
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	ph_set_snapshot(h, fx_snapshot(sk_node_info_clone(ni), NULL));
	expect("bind", "PreFilter", pre_filter(h, p), SK_SUCCESS, NULL);
	expect("bind", "Filter", filter(h, p, ni), SK_SUCCESS, NULL);
	struct sk_status s = pl->desc->reserve(pl, h->cs, p, ni->node->name);
	assert_int_equal(s.code, SK_SUCCESS);
}

static void test_pre_bind_static(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	ph_put_storage(h, CLASSES);
	put_pvc(h, "pvc-1", "wait-sc", NULL, NULL);
	put_pv(h, "pv-1", "wait-sc", NULL);
	struct sk_node_info *ni = node("node-a", NULL);
	struct sk_pod *p = pod("pod-1", "pvc-1", NULL);
	run_to_reserve(h, p, ni);
	/* what the PV controller does after the PV's claimRef is set */
	ph_put_storage(h, "{kind: PersistentVolume, metadata: {name: pv-1, resourceVersion: '2000'}, spec: {storageClassName: wait-sc,"
			  " claimRef: {namespace: default, name: pvc-1, uid: uid-pvc-1}}, status: {phase: Bound}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: pvc-1, namespace: default, uid: uid-pvc-1, resourceVersion: '2001',"
			  " annotations: {pv.kubernetes.io/bind-completed: 'yes'}}, spec: {storageClassName: wait-sc, volumeName: pv-1},"
			  " status: {phase: Bound}}\n");
	struct sk_status s = pl->desc->pre_bind(pl, h->cs, p, "node-a");
	expect("static", "PreBind", s, SK_SUCCESS, NULL);
	assert_int_equal(h->npatches, 1);
	assert_string_equal(h->patched[0], "/api/v1/persistentvolumes/pv-1");
	char *body = cJSON_PrintUnformatted(cJSON_GetArrayItem(h->patches, 0));
	assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"3\",\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":\"yes\"}},"
				  "\"spec\":{\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"default\",\"name\":\"pvc-1\","
				  "\"uid\":\"uid-pvc-1\",\"apiVersion\":\"v1\",\"resourceVersion\":\"5\"}}}");
	free(body);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_pre_bind_provision(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	ph_put_storage(h, CLASSES);
	put_pvc(h, "dyn", "dyn-sc", NULL, NULL);
	struct sk_node_info *ni = node("node-a", "\"topology.kubernetes.io/zone\":\"zone-a\"");
	struct sk_pod *p = pod("pod-1", "dyn", NULL);
	run_to_reserve(h, p, ni);
	ph_put_storage(h, "{kind: PersistentVolume, metadata: {name: pvc-uid-dyn, resourceVersion: '2000'}, spec: {storageClassName: dyn-sc,"
			  " claimRef: {namespace: default, name: dyn, uid: uid-dyn}}, status: {phase: Bound}}\n---\n"
			  "{kind: PersistentVolumeClaim, metadata: {name: dyn, namespace: default, uid: uid-dyn, resourceVersion: '2001',"
			  " annotations: {pv.kubernetes.io/bind-completed: 'yes', volume.kubernetes.io/selected-node: node-a}},"
			  " spec: {storageClassName: dyn-sc, volumeName: pvc-uid-dyn}, status: {phase: Bound}}\n");
	expect("provision", "PreBind", pl->desc->pre_bind(pl, h->cs, p, "node-a"), SK_SUCCESS, NULL);
	assert_int_equal(h->npatches, 1);
	assert_string_equal(h->patched[0], "/api/v1/namespaces/default/persistentvolumeclaims/dyn");
	char *body = cJSON_PrintUnformatted(cJSON_GetArrayItem(h->patches, 0));
	assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"5\",\"annotations\":{\"volume.kubernetes.io/selected-node\":\"node-a\"}}}");
	free(body);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_pre_bind_failures(void **state)
{
	(void)state;
	/* bindTimeoutSeconds 0: the claim is not bound at the first check */
	struct ph *h = ph_new("- pluginConfig: [{name: VolumeBinding, args: {bindTimeoutSeconds: 0}}]\n");
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	ph_put_storage(h, CLASSES);
	put_pvc(h, "pvc-1", "wait-sc", NULL, NULL);
	put_pv(h, "pv-1", "wait-sc", NULL);
	struct sk_node_info *ni = node("node-a", "\"topology.kubernetes.io/zone\":\"zone-a\"");
	struct sk_pod *p = pod("pod-1", "pvc-1", NULL);
	run_to_reserve(h, p, ni);
	expect("timeout", "PreBind", pl->desc->pre_bind(pl, h->cs, p, "node-a"), SK_ERROR,
	       "binding volumes: context deadline exceeded");
	sk_pod_unref(p);
	/* the provisioner gave up: it removed the selected-node annotation */
	ph_reset_state(h);
	put_pvc(h, "dyn", "dyn-sc", NULL, NULL);
	p = pod("pod-2", "dyn", NULL);
	run_to_reserve(h, p, ni);
	ph_put_storage(h, "{kind: PersistentVolumeClaim, metadata: {name: dyn, namespace: default, uid: uid-dyn, resourceVersion: '2002'},"
			  " spec: {storageClassName: dyn-sc}}\n");
	expect("provisioning failed", "PreBind", pl->desc->pre_bind(pl, h->cs, p, "node-a"), SK_ERROR,
	       "binding volumes: provisioning failed for PVC \"dyn\"");
	sk_pod_unref(p);
	/* the API refuses the patch */
	ph_reset_state(h);
	put_pvc(h, "dyn", "dyn-sc", NULL, NULL);
	p = pod("pod-3", "dyn", NULL);
	run_to_reserve(h, p, ni);
	h->patch_error = "PATCH /api/v1/namespaces/default/persistentvolumeclaims/dyn: the object has been modified";
	expect("conflict", "PreBind", pl->desc->pre_bind(pl, h->cs, p, "node-a"), SK_ERROR, h->patch_error);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_args(void **state)
{
	(void)state;
	struct sk_errors e = { 0 };
	const char *bad = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			  "profiles: [{pluginConfig: [{name: VolumeBinding, args: {bindTimeoutSeconds: -1}}]}]\n";
	struct sk_config *cfg = sk_config_load(bad, strlen(bad), &e);
	assert_null(cfg);
	char *all = sk_errors_join(&e, "\n");
	assert_non_null(strstr(all, "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"));
	free(all);
	sk_errors_free(&e);
	/* the default is 600 s, written back by args_encode */
	const struct sk_plugin_desc *d = sk_registry_lookup("VolumeBinding");
	assert_non_null(d);
	void *args = NULL;
	assert_int_equal(d->args_decode(NULL, &args, &e, "args"), 0);
	cJSON *j = d->args_encode(args);
	assert_int_equal(cJSON_GetObjectItem(j, "bindTimeoutSeconds")->valuedouble, 600);
	cJSON_Delete(j);
	d->args_free(args);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "VolumeBinding");
	sk_hint_fn fn = ph_find_hint(pl, SK_EV_PVC, NULL);
	char *err = NULL;
	cJSON *j1 = fx_json("{\"metadata\":{\"name\":\"pvc-a\",\"namespace\":\"default\"}}");
	cJSON *j2 = fx_json("{\"metadata\":{\"name\":\"pvc-a\",\"namespace\":\"other\"}}");
	cJSON *j3 = fx_json("{\"metadata\":{\"name\":\"pod-e-eph\",\"namespace\":\"default\"}}");
	struct sk_pvc *mine = sk_pvc_decode(j1, &err), *elsewhere = sk_pvc_decode(j2, &err), *eph = sk_pvc_decode(j3, &err);
	struct sk_pod *p = pod("pod-a", "pvc-a", NULL), *q = pod("pod-b", "pvc-b", NULL);
	struct sk_pod *e = fx_pod("{\"metadata\":{\"name\":\"pod-e\",\"namespace\":\"default\"},\"spec\":{\"volumes\":[{\"name\":\"eph\",\"ephemeral\":{}}]}}");
	assert_int_equal(fn(pl, p, NULL, mine), SK_QUEUE);
	assert_int_equal(fn(pl, p, NULL, elsewhere), SK_QUEUE_SKIP);
	assert_int_equal(fn(pl, q, NULL, mine), SK_QUEUE_SKIP);
	assert_int_equal(fn(pl, e, NULL, eph), SK_QUEUE);
	assert_int_equal(fn(pl, p, NULL, NULL), SK_QUEUE);
	sk_pod_unref(p);
	sk_pod_unref(q);
	sk_pod_unref(e);
	sk_vobj_unref(mine);
	sk_vobj_unref(elsewhere);
	sk_vobj_unref(eph);
	cJSON_Delete(j1);
	cJSON_Delete(j2);
	cJSON_Delete(j3);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_volume_binding_table),
		cmocka_unit_test(test_static_matching),
		cmocka_unit_test(test_provisioning_checks),
		cmocka_unit_test(test_assume_cache),
		cmocka_unit_test(test_pre_bind_static),
		cmocka_unit_test(test_pre_bind_provision),
		cmocka_unit_test(test_pre_bind_failures),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
