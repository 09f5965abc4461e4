/* Tests for scheduler/simulate/simulate.c: golden JSON lines on small clusters (filter reasons, scores,
 * FitError messages, queue order by priority, in-memory binding, ignored pods, gated pods,
 * admission errors), the --explain table, and the subcommand's argument handling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scheduler/config/config.h"
#include "scheduler/simulate/simulate.h"

/* The default profile with its Score and PostFilter sets pinned, so the golden lines do not move
 * when more upstream default plugins (scoring, preemption) are built into the registry. */
static const char DEFAULT_CONFIG[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	"profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
	"    score:\n      disabled: [{name: '*'}]\n"
	"      enabled: [{name: TaintToleration, weight: 3}, {name: NodeAffinity, weight: 2},"
	" {name: NodeResourcesFit, weight: 1}, {name: NodeResourcesBalancedAllocation, weight: 1},"
	" {name: ImageLocality, weight: 1}]\n"
	"    postFilter:\n      disabled: [{name: '*'}]\n";

/* Runs simulate over cluster; returns the output (caller frees) and the rc in *rc. */
static char *run(const char *config, const char *cluster, bool explain, int *rc, char **err)
{
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(config, strlen(config), &errs);
	if (!cfg) {
		char *j = sk_errors_join(&errs, "; ");
		fail_msg("config: %s", j ? j : "?");
	}
	sk_errors_free(&errs);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	struct sk_simulate_opts opts = { .explain = explain, .seed = 1 };
	*rc = sk_simulate(cfg, cluster, strlen(cluster), &opts, out, err);
	fclose(out);
	sk_config_free(cfg);
	return buf;
}

static char *run_ok(const char *config, const char *cluster, bool explain)
{
	int rc;
	char *err = NULL;
	char *out = run(config, cluster, explain, &rc, &err);
	if (rc != 0)
		fail_msg("simulate failed: %s", err ? err : "?");
	free(err);
	return out;
}

#define NODE(name, cpu, mem, extra)                                                                                    \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" extra                                         \
	"status: {allocatable: {cpu: \"" cpu "\", memory: " mem ", pods: \"110\"}}\n"
#define POD(name, cpu, extra)                                                                                          \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n" extra                                   \
	"  containers: [{name: c, image: img, resources: {requests: {cpu: \"" cpu "\"}}}]\n"

/* One pod, three nodes: one tainted (filter reason), two scored with different free cpu. */
static void test_scheduled_with_filter_and_scores(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "4", "8Gi", "")
		NODE("node-b", "4", "8Gi", "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n")
		NODE("node-c", "2", "8Gi", "")
		POD("web-1", "1", "");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	/* node-a: LeastAllocated cpu 75, memory 97 (200Mi non-zero default of 8Gi) -> 86;
	 * BalancedAllocation |0.25 - 0| / 2 -> 87; TaintToleration 100 x weight 3. node-c: cpu 50 -> 73, 75. */
	assert_string_equal(out, "{\"pod\":\"default/web-1\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\","
				 "\"node\":\"node-a\",\"message\":\"\",\"filter\":{\"node-b\":{\"TaintToleration\":"
				 "\"node(s) had untolerated taint(s)\"}},\"score\":{\"node-a\":{\"TaintToleration\":100,"
				 "\"NodeResourcesFit\":86,\"NodeResourcesBalancedAllocation\":87,\"ImageLocality\":0,"
				 "\"total\":473},\"node-c\":{\"TaintToleration\":100,\"NodeResourcesFit\":73,"
				 "\"NodeResourcesBalancedAllocation\":75,\"ImageLocality\":0,\"total\":448}},"
				 "\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

static void test_exact_line_single_feasible(void **state)
{
	(void)state;
	/* Only node-a fits: chosen without scoring, so "score" is empty. */
	const char *cluster = NODE("node-a", "4", "8Gi", "")
		NODE("node-b", "1", "8Gi", "")
		POD("web-1", "2", "");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_string_equal(out, "{\"pod\":\"default/web-1\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\","
				 "\"node\":\"node-a\",\"message\":\"\",\"filter\":{\"node-b\":{\"NodeResourcesFit\":"
				 "\"Insufficient cpu\"}},\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

static void test_unschedulable_fit_error(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "2", "8Gi", "")
		NODE("node-b", "4", "8Gi", "spec: {taints: [{key: k, value: v, effect: NoSchedule}]}\n")
		NODE("node-c", "2", "8Gi", "")
		POD("big", "3", "");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_string_equal(out,
			    "{\"pod\":\"default/big\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\","
			    "\"node\":\"\",\"message\":\"0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 "
			    "Insufficient cpu.\",\"filter\":{\"node-a\":{\"NodeResourcesFit\":\"Insufficient cpu\"},"
			    "\"node-b\":{\"TaintToleration\":\"node(s) had untolerated taint(s)\"},\"node-c\":{"
			    "\"NodeResourcesFit\":\"Insufficient cpu\"}},\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

/* Binding is in memory: the second 3-cpu pod no longer fits on the 4-cpu node; the existing
 * bound pod counts; pods of another schedulerName and terminated pods are ignored. */
static void test_in_memory_binding_and_ignored_pods(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "4", "8Gi", "")
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: existing}\nspec: {nodeName: node-a, containers: "
		"[{name: c, image: i, resources: {requests: {cpu: 500m}}}]}\n"
		POD("first", "3", "")
		POD("second", "1", "")
		POD("theirs", "1", "  schedulerName: someone-else\n")
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: done}\nspec: {containers: [{name: c, image: i}]}\n"
		"status: {phase: Succeeded}\n";
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	const char *l1 = "{\"pod\":\"default/first\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\","
			 "\"node\":\"node-a\",\"message\":\"\",\"filter\":{},\"score\":{},\"nominatedNode\":\"\","
			 "\"victims\":[]}\n";
	const char *l2 = "{\"pod\":\"default/second\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\","
			 "\"node\":\"\",\"message\":\"0/1 nodes are available: 1 Insufficient cpu.\",\"filter\":{"
			 "\"node-a\":{\"NodeResourcesFit\":\"Insufficient cpu\"}},\"score\":{},\"nominatedNode\":\"\","
			 "\"victims\":[]}\n";
	char expect[2048];
	snprintf(expect, sizeof expect, "%s%s", l1, l2);
	assert_string_equal(out, expect);
	free(out);
}

/* Queue order: PrioritySort puts the high-priority pod (via its PriorityClass) first even though
 * it comes later in the file; the globalDefault class applies to pods without a class. */
static void test_priority_class_order(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "2", "8Gi", "")
		POD("low", "2", "")
		POD("high", "2", "  priorityClassName: important\n")
		"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: important}\nvalue: 1000\n"
		"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\nvalue: 10\n"
		"globalDefault: true\n";
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	char *high = strstr(out, "\"pod\":\"default/high\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\"");
	char *low = strstr(out, "\"pod\":\"default/low\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\"");
	assert_non_null(high);
	assert_non_null(low);
	assert_true(high < low);
	free(out);
}

static void test_unknown_priority_class_is_error(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "2", "8Gi", "") POD("p", "1", "  priorityClassName: nope\n");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_string_equal(out, "{\"pod\":\"default/p\",\"profile\":\"default-scheduler\",\"result\":\"Error\",\"node\":"
				 "\"\",\"message\":\"no PriorityClass with name nope was found\",\"filter\":{},\"score\":{},"
				 "\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

static void test_gated_pod_reported_once(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "2", "8Gi", "") POD("gated", "1", "  schedulingGates: [{name: wait}]\n");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_string_equal(out, "{\"pod\":\"default/gated\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\","
				 "\"node\":\"\",\"message\":\"Scheduling is blocked due to non-empty scheduling gates\","
				 "\"filter\":{},\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

/* Two profiles: each pod is attempted by its own profile; a profile without NodeResourcesFit
 * places the pod that the default profile cannot. */
static void test_two_profiles(void **state)
{
	(void)state;
	const char *config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			     "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    postFilter:\n"
			     "      disabled: [{name: '*'}]\n- schedulerName: loose\n"
			     "  plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n";
	const char *cluster = NODE("node-a", "1", "8Gi", "")
		POD("strict", "2", "")
		POD("relaxed", "2", "  schedulerName: loose\n");
	char *out = run_ok(config, cluster, false);
	assert_non_null(strstr(out, "{\"pod\":\"default/strict\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\""));
	assert_non_null(strstr(out, "{\"pod\":\"default/relaxed\",\"profile\":\"loose\",\"result\":\"Scheduled\",\"node\":\"node-a\""));
	free(out);
}

/* A pod whose attempt failed is retried after a later binding only if that event could help;
 * with resource failures it cannot, so the pod appears once. */
static void test_unschedulable_appears_once(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "2", "8Gi", "") POD("a", "3", "") POD("b", "1", "") POD("c", "1", "");
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	int na = 0, lines = 0;
	for (const char *p = out; (p = strstr(p, "\"pod\":\"default/a\"")); p++)
		na++;
	for (const char *p = out; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(na, 1);
	assert_int_equal(lines, 3);
	free(out);
}

/* A later binding that could help (InterPodAffinity registered for assigned-pod events) retries
 * the pod: the follower fails, the leader binds, the follower is attempted again and fits. */
static void test_retry_after_helpful_event(void **state)
{
	(void)state;
	const char *cluster =
		"apiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}\n"
		"status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: follower}\nspec:\n  priority: 100\n"
		"  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"      - labelSelector: {matchLabels: {app: leader}}\n        topologyKey: kubernetes.io/hostname\n"
		"  containers: [{name: c, image: img}]\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: leader, labels: {app: leader}}\n"
		"spec:\n  containers: [{name: c, image: img}]\n";
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_string_equal(out,
			    "{\"pod\":\"default/follower\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\","
			    "\"node\":\"\",\"message\":\"0/1 nodes are available: 1 node(s) didn't match pod affinity rules.\","
			    "\"filter\":{\"node-a\":{\"InterPodAffinity\":\"node(s) didn't match pod affinity rules\"}},"
			    "\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n"
			    "{\"pod\":\"default/leader\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":"
			    "\"node-a\",\"message\":\"\",\"filter\":{},\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n"
			    "{\"pod\":\"default/follower\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":"
			    "\"node-a\",\"message\":\"\",\"filter\":{},\"score\":{},\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

static void test_explain_table(void **state)
{
	(void)state;
	const char *cluster = NODE("node-a", "4", "8Gi", "")
		NODE("node-b", "4", "8Gi", "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n")
		NODE("node-c", "2", "8Gi", "")
		POD("web-1", "1", "")
		POD("huge", "9", "");
	char *out = run_ok(DEFAULT_CONFIG, cluster, true);
	assert_non_null(strstr(out, "Pod default/web-1 (profile default-scheduler): Scheduled on node-a\n"));
	assert_non_null(strstr(out, "  NODE    RESULT    TaintToleration(x3)"));
	assert_non_null(strstr(out, "  node-a  chosen    100"));
	assert_non_null(strstr(out, "  node-c  feasible  100"));
	assert_non_null(strstr(out, "  node-b  TaintToleration: node(s) had untolerated taint(s)\n"));
	assert_non_null(strstr(out, "Pod default/huge (profile default-scheduler): Unschedulable\n"
				    "  0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.\n"
				    "  NODE    REJECTED BY\n"));
	free(out);
}

static void test_bad_input(void **state)
{
	(void)state;
	int rc;
	char *err = NULL;
	char *out = run(DEFAULT_CONFIG, "a: [b\n", false, &rc, &err);
	assert_int_equal(rc, -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "cluster: line"));
	free(err);
	free(out);
	err = NULL;
	out = run(DEFAULT_CONFIG, NODE("nx", "1", "1Gi", "") NODE("nx", "2", "1Gi", ""), false, &rc, &err);
	assert_int_equal(rc, -1);
	assert_string_equal(err, "object 2 (Node nx): duplicate node");
	free(err);
	free(out);
	err = NULL;
	out = run(DEFAULT_CONFIG, "apiVersion: v1\nmetadata: {name: x}\n", false, &rc, &err);
	assert_int_equal(rc, -1);
	assert_string_equal(err, "object 1: kind: Required value");
	free(err);
	free(out);
}

static void test_list_wrapper(void **state)
{
	(void)state;
	const char *cluster = "apiVersion: v1\nkind: List\nitems:\n"
			      "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}}\n"
			      "- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns1}, spec: {containers: [{name: c, image: i}]}}\n";
	char *out = run_ok(DEFAULT_CONFIG, cluster, false);
	assert_non_null(strstr(out, "{\"pod\":\"ns1/p\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"n1\""));
	free(out);
}

static int main_rc(int argc, char **argv, char **errtext)
{
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *o = open_memstream(&ob, &ol), *e = open_memstream(&eb, &el);
	int rc = sk_simulate_main(argc, argv, o, e);
	fclose(o);
	fclose(e);
	free(ob);
	*errtext = eb;
	return rc;
}

/* ---------- preemption (DefaultPreemption in the default profile) ---------- */

static const char PREEMPT_CONFIG[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	"profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
	"    score:\n      disabled: [{name: '*'}]\n"
	"      enabled: [{name: NodeResourcesFit, weight: 1}]\n";

#define PREEMPT_CLUSTER(extra)                                                                                         \
	"kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: 1000\n---\n"             \
	"kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: low}\nvalue: 10\n---\n"               \
	"kind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n"      \
	"kind: Node\nmetadata: {name: node-b}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n"      \
	"kind: Pod\nmetadata: {name: low-a1}\nspec: {nodeName: node-a, priorityClassName: low, containers: [{name: c, " \
	"resources: {requests: {cpu: '2'}}}]}\n---\n"                                                                   \
	"kind: Pod\nmetadata: {name: low-a2}\nspec: {nodeName: node-a, priorityClassName: low, containers: [{name: c, " \
	"resources: {requests: {cpu: '2'}}}]}\n---\n"                                                                   \
	"kind: Pod\nmetadata: {name: low-b1, labels: {app: db}}\nspec: {nodeName: node-b, priorityClassName: low, "     \
	"containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n---\n"                                            \
	"kind: Pod\nmetadata: {name: mid-b2}\nspec: {nodeName: node-b, priority: 500, containers: [{name: c, "          \
	"resources: {requests: {cpu: '1'}}}]}\n---\n" extra                                                             \
	"kind: Pod\nmetadata: {name: important}\nspec: {priorityClassName: high, containers: [{name: c, resources: "    \
	"{requests: {cpu: '3'}}}]}\n"

static void test_preemption_golden(void **state)
{
	(void)state;
	/* node-a needs both of its low pods gone, node-b only low-b1 (mid-b2 is reprieved): node-b
	 * wins on the smallest sum of priorities; the pod is nominated, then scheduled there. */
	char *out = run_ok(PREEMPT_CONFIG, PREEMPT_CLUSTER(""), false);
	assert_string_equal(
		out,
		"{\"pod\":\"default/important\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\",\"node\":\"\","
		"\"message\":\"0/2 nodes are available: 2 Insufficient cpu.\",\"filter\":{\"node-a\":{\"NodeResourcesFit\":"
		"\"Insufficient cpu\"},\"node-b\":{\"NodeResourcesFit\":\"Insufficient cpu\"}},\"score\":{},"
		"\"nominatedNode\":\"node-b\",\"victims\":[\"default/low-b1\"]}\n"
		"{\"pod\":\"default/important\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-b\","
		"\"message\":\"\",\"filter\":{\"node-a\":{\"NodeResourcesFit\":\"Insufficient cpu\"}},\"score\":{},"
		"\"nominatedNode\":\"\",\"victims\":[]}\n");
	free(out);
}

static void test_preemption_respects_pdb(void **state)
{
	(void)state;
	/* a PDB allowing no disruption of app=db makes node-b a violating candidate: node-a wins */
	char *out = run_ok(PREEMPT_CONFIG,
			   PREEMPT_CLUSTER("kind: PodDisruptionBudget\napiVersion: policy/v1\nmetadata: {name: db, "
					   "namespace: default}\nspec: {selector: {matchLabels: {app: db}}}\n"
					   "status: {disruptionsAllowed: 0}\n---\n"),
			   false);
	assert_non_null(strstr(out, "\"nominatedNode\":\"node-a\",\"victims\":[\"default/low-a1\",\"default/low-a2\"]}\n"));
	assert_non_null(strstr(out, "\"result\":\"Scheduled\",\"node\":\"node-a\""));
	free(out);
}

static void test_preemption_messages(void **state)
{
	(void)state;
	/* equal priorities: no victims anywhere */
	char *out = run_ok(PREEMPT_CONFIG,
			   "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', pods: '110'}}\n---\n"
			   "kind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '2', pods: '110'}}\n"
			   "spec: {taints: [{key: k, value: v, effect: NoSchedule}]}\n---\n"
			   "kind: Pod\nmetadata: {name: e}\nspec: {nodeName: n1, containers: [{name: c, resources: "
			   "{requests: {cpu: '2'}}}]}\n---\n"
			   "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n---\n"
			   "kind: Pod\nmetadata: {name: never}\nspec: {priority: 100, preemptionPolicy: Never, containers: "
			   "[{name: c, resources: {requests: {cpu: '1'}}}]}\n",
			   false);
	assert_non_null(strstr(out, "\"message\":\"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated "
				    "taint(s). preemption: 0/2 nodes are available: 1 No preemption victims found for "
				    "incoming pod, 1 Preemption is not helpful for scheduling.\""));
	assert_non_null(strstr(out, "preemption: not eligible due to preemptionPolicy=Never.\""));
	free(out);
}


/* The storage kinds: a claim bound to a zone-b PV puts its pod in zone b; a WaitForFirstConsumer
 * claim is bound to the only local PV that matches (PreBind's patch, completed at once as the PV
 * controller would) and then that PV is taken for the next claim of the class; a claim of a
 * provisioning class is provisioned on the chosen node; a claim that does not exist is UU. */
static void test_volumes(void **state)
{
	(void)state;
	const char *cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
	const char *cluster =
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {topology.kubernetes.io/zone: zone-a, kubernetes.io/hostname: node-a}}\n"
		"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b, labels: {topology.kubernetes.io/zone: zone-b, kubernetes.io/hostname: node-b}}\n"
		"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
		"---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: manual}\nprovisioner: kubernetes.io/no-provisioner\n"
		"volumeBindingMode: Immediate\n"
		"---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: local}\nprovisioner: kubernetes.io/no-provisioner\n"
		"volumeBindingMode: WaitForFirstConsumer\n"
		"---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: csi}\nprovisioner: d.example.com\n"
		"volumeBindingMode: WaitForFirstConsumer\n"
		"---\nkind: PersistentVolume\napiVersion: v1\nmetadata: {name: pv-b, labels: {topology.kubernetes.io/zone: zone-b}}\n"
		"spec: {storageClassName: manual, claimRef: {namespace: default, name: zonal, uid: u-zonal}}\nstatus: {phase: Bound}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: zonal, uid: u-zonal,\n"
		"  annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {storageClassName: manual, volumeName: pv-b}\n"
		"---\nkind: PersistentVolume\napiVersion: v1\nmetadata: {name: pv-local-a}\n"
		"spec: {storageClassName: local, capacity: {storage: 1Gi}, nodeAffinity: {required: {nodeSelectorTerms:\n"
		"  [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-a]}]}]}}}\nstatus: {phase: Available}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: local-1}\nspec: {storageClassName: local}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: local-2}\nspec: {storageClassName: local}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: dyn}\nspec: {storageClassName: csi, resources: {requests: {storage: 1Gi}}}\n"
		POD("zonal-pod", "100m", "  volumes: [{name: v, persistentVolumeClaim: {claimName: zonal}}]\n")
		POD("local-pod-1", "100m", "  volumes: [{name: v, persistentVolumeClaim: {claimName: local-1}}]\n")
		POD("local-pod-2", "100m", "  volumes: [{name: v, persistentVolumeClaim: {claimName: local-2}}]\n")
		POD("dyn-pod", "100m", "  nodeSelector: {kubernetes.io/hostname: node-b}\n  volumes: [{name: v, persistentVolumeClaim: {claimName: dyn}}]\n")
		POD("lost-pod", "100m", "  volumes: [{name: v, persistentVolumeClaim: {claimName: nothing}}]\n");
	char *out = run_ok(cfg, cluster, false);
	const char *want[] = {
		"\"pod\":\"default/zonal-pod\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-b\"",
		"\"pod\":\"default/local-pod-1\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-a\"",
		"\"pod\":\"default/local-pod-2\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\",\"node\":\"\","
		"\"message\":\"0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.",
		"\"pod\":\"default/dyn-pod\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-b\"",
		"\"pod\":\"default/lost-pod\",\"profile\":\"default-scheduler\",\"result\":\"Unschedulable\",\"node\":\"\","
		"\"message\":\"0/2 nodes are available: persistentvolumeclaim \\\"nothing\\\" not found.",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(out, want[i]))
			fail_msg("missing %s in\n%s", want[i], out);
	free(out);
}

/* CSIStorageCapacity and VolumeAttachment in the cluster file: the claim of a capacity-tracking
 * driver goes to the zone with room; node-b's VolumeAttachment fills its attach limit, so the
 * next volume goes to node-a; a malformed CSIStorageCapacity is an error naming it. Each pod
 * prefers the other node, so only the filters move it. */
#define PREFER(zone)                                                                                                   \
	"  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference:\n"     \
	"    {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [" zone "]}]}}]}}\n"
static void test_volume_kinds(void **state)
{
	(void)state;
	const char *cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
	const char *cluster =
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {topology.kubernetes.io/zone: zone-a}}\n"
		"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b, labels: {topology.kubernetes.io/zone: zone-b}}\n"
		"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
		"---\nkind: CSIDriver\napiVersion: storage.k8s.io/v1\nmetadata: {name: cap.example.com}\nspec: {storageCapacity: true}\n"
		"---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: cap}\nprovisioner: cap.example.com\n"
		"volumeBindingMode: WaitForFirstConsumer\n"
		"---\nkind: CSIStorageCapacity\napiVersion: storage.k8s.io/v1\nmetadata: {name: b}\nstorageClassName: cap\n"
		"capacity: 10Gi\nnodeTopology: {matchLabels: {topology.kubernetes.io/zone: zone-b}}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: c1}\n"
		"spec: {storageClassName: cap, resources: {requests: {storage: 5Gi}}}\n"
		"---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: att}\nprovisioner: att.example.com\n"
		"volumeBindingMode: WaitForFirstConsumer\n"
		"---\nkind: CSINode\napiVersion: storage.k8s.io/v1\nmetadata: {name: node-b}\n"
		"spec: {drivers: [{name: att.example.com, nodeID: b, allocatable: {count: 1}}]}\n"
		"---\nkind: VolumeAttachment\napiVersion: storage.k8s.io/v1\nmetadata: {name: va-b}\n"
		"spec: {attacher: att.example.com, nodeName: node-b, source: {persistentVolumeName: pv-x}}\n"
		"---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: c2}\n"
		"spec: {storageClassName: att, resources: {requests: {storage: 1Gi}}}\n"
		POD("cap-pod", "100m", PREFER("zone-a") "  volumes: [{name: v, persistentVolumeClaim: {claimName: c1}}]\n")
		POD("att-pod", "100m", PREFER("zone-b") "  volumes: [{name: v, persistentVolumeClaim: {claimName: c2}}]\n");
	char *out = run_ok(cfg, cluster, false);
	const char *want[] = {
		"\"pod\":\"default/cap-pod\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-b\"",
		"\"pod\":\"default/att-pod\",\"profile\":\"default-scheduler\",\"result\":\"Scheduled\",\"node\":\"node-a\"",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(out, want[i]))
			fail_msg("missing %s in\n%s", want[i], out);
	free(out);
	int rc;
	char *err = NULL;
	out = run(cfg, "kind: CSIStorageCapacity\napiVersion: storage.k8s.io/v1\nmetadata: {name: bad}\ncapacity: 1Gi\n",
		  false, &rc, &err);
	assert_int_not_equal(rc, 0);
	assert_non_null(err);
	if (!strstr(err, "csistoragecapacity default/bad: storageClassName: Required value"))
		fail_msg("error: %s", err);
	free(err);
	free(out);
}

static void test_main_args(void **state)
{
	(void)state;
	char *e = NULL;
	char *a1[] = { "simulate", "--bogus" };
	assert_int_equal(main_rc(2, a1, &e), 2);
	assert_non_null(strstr(e, "unknown flag: --bogus"));
	free(e);
	char *a2[] = { "simulate", "--config=x.yaml" };
	assert_int_equal(main_rc(2, a2, &e), 2);
	assert_non_null(strstr(e, "--cluster is required"));
	free(e);
	char *a3[] = { "simulate", "--cluster", "/nonexistent/cluster.yaml" };
	assert_int_equal(main_rc(3, a3, &e), 1);
	assert_non_null(strstr(e, "/nonexistent/cluster.yaml"));
	free(e);
	char *a4[] = { "simulate", "--cluster" };
	assert_int_equal(main_rc(2, a4, &e), 2);
	assert_non_null(strstr(e, "flag needs an argument"));
	free(e);
	char *a5[] = { "simulate", "--seed=-1", "--cluster=x" };
	assert_int_equal(main_rc(3, a5, &e), 2);
	free(e);
	/* a bad config prints every error and exits 1 */
	char path[] = "/tmp/sk-sim-test-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *bad = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n";
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	char cfgflag[64];
	snprintf(cfgflag, sizeof cfgflag, "--config=%s", path);
	char *a6[] = { "simulate", cfgflag, "--cluster", path };
	assert_int_equal(main_rc(4, a6, &e), 1);
	assert_non_null(strstr(e, "error: "));
	assert_non_null(strstr(e, "parallelism"));
	free(e);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scheduled_with_filter_and_scores),
		cmocka_unit_test(test_exact_line_single_feasible),
		cmocka_unit_test(test_unschedulable_fit_error),
		cmocka_unit_test(test_in_memory_binding_and_ignored_pods),
		cmocka_unit_test(test_priority_class_order),
		cmocka_unit_test(test_unknown_priority_class_is_error),
		cmocka_unit_test(test_gated_pod_reported_once),
		cmocka_unit_test(test_two_profiles),
		cmocka_unit_test(test_unschedulable_appears_once),
		cmocka_unit_test(test_retry_after_helpful_event),
		cmocka_unit_test(test_explain_table),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_list_wrapper),
		cmocka_unit_test(test_volumes),
		cmocka_unit_test(test_volume_kinds),
		cmocka_unit_test(test_main_args),
		cmocka_unit_test(test_preemption_golden),
		cmocka_unit_test(test_preemption_respects_pdb),
		cmocka_unit_test(test_preemption_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
