/* Tests for plugins/PodTopologySpread: Filter cases ported from upstream filtering_test
 * (TestSingleConstraint, TestMultipleConstraints, minDomains, node inclusion policies),
 * AddPod/RemovePod on a cloned state (TestPreFilterStateAddPod/RemovePod), the scoring examples of
 * pkg/scheduler/framework/plugins/podtopologyspread/ and upstream scoring_test (TestPodTopologySpreadScore), default constraints
 * (System and List; the selector of upstream helper.DefaultSelector from Services and ReplicaSets,
 * upstream cases "system defaulting, nodes don't have zone, pods match service" and "default
 * constraints and a service"), queueing hints and
 * PodTopologySpreadArgs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "plugins/tests/test_pts_util.h"
#include "scheduler/tests/fixtures.h"

#define EXISTS(k) "{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"Exists\"}]}"
#define SPREAD(skew, key, when, sel)                                                                          \
	"{\"maxSkew\":" #skew ",\"topologyKey\":\"" key "\",\"whenUnsatisfiable\":\"" when "\",\"labelSelector\":" sel \
	"}"
#define SPREAD_X(skew, key, when, sel, extra)                                                                 \
	"{\"maxSkew\":" #skew ",\"topologyKey\":\"" key "\",\"whenUnsatisfiable\":\"" when "\",\"labelSelector\":" sel \
	"," extra "}"
#define CONSTRAINTS(...) "\"topologySpreadConstraints\":[" __VA_ARGS__ "]"
#define DNS "DoNotSchedule"
#define SA "ScheduleAnyway"
#define HOST "kubernetes.io/hostname"

#define R_NOT_MATCH "node(s) didn't match pod topology spread constraints"
#define R_MISSING "node(s) didn't match pod topology spread constraints (missing required label)"

#define N4 "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b; " \
	   "node-x zone=zone2,node=node-x; node-y zone=zone2,node=node-y"
#define P2103 "node-a foo; node-a foo; node-b foo; node-y foo; node-y foo; node-y foo"

struct filter_case {
	const char *name;
	const char *labels, *spec;  /* incoming pod */
	const char *nodes, *pods;
	const char *want;           /* one code letter per node (see tu_filter_all) */
};

static const struct filter_case filter_cases[] = {
	{ "no existing pods", "foo", CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))), N4, "", "SSSS" },
	{ "no existing pods, incoming pod doesn't match itself", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("bar"))), N4, "", "SSSS" },
	{ "existing pods in a different namespace do not count", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))), N4,
	  "node-a foo @ns1; node-a foo @ns2; node-x foo; node-y foo", "SSUU" },
	{ "pods spread across zones as 3/3, all nodes fit", "foo", CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))), N4,
	  P2103, "SSSS" },
	{ "pods spread across zones as 1/2 due to absence of label 'zone' on node-b", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))),
	  "node-a zone=zone1,node=node-a; node-b zon=zone1,node=node-b; node-x zone=zone2,node=node-x; "
	  "node-y zone=zone2,node=node-y",
	  "node-a foo; node-b foo; node-x foo; node-y foo", "SXUU" },
	{ "pod cannot be scheduled as all nodes don't have label 'rack'", "foo",
	  CONSTRAINTS(SPREAD(1, "rack", DNS, EXISTS("foo"))), "node-a zone=zone1,node=node-a; node-x zone=zone2,node=node-x",
	  "", "XX" },
	{ "pods spread across nodes as 2/1/0/3, only node-x fits", "foo",
	  CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))), N4, P2103, "UUSU" },
	{ "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit", "foo",
	  CONSTRAINTS(SPREAD(2, "node", DNS, EXISTS("foo"))), N4, P2103, "USSU" },
	{ "pods spread across nodes as 2/1/0/3, but pod doesn't match itself", "bar",
	  CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))), N4, P2103, "USSU" },
	{ "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits", "foo",
	  "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
	  "[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":\"In\",\"values\":[\"node-a\",\"node-y\"]}]}]}}},"
	  CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))),
	  N4, P2103, "SSSU" },
	{ "nodeAffinityPolicy Ignore counts every node, 2/1/0/3", "foo",
	  "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
	  "[{\"matchExpressions\":[{\"key\":\"node\",\"operator\":\"In\",\"values\":[\"node-a\",\"node-y\"]}]}]}}},"
	  CONSTRAINTS(SPREAD_X(1, "node", DNS, EXISTS("foo"), "\"nodeAffinityPolicy\":\"Ignore\"")),
	  N4, P2103, "UUSU" },
	{ "terminating Pods should be excluded", "foo", CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))),
	  "node-a node=node-a; node-b node=node-b", "node-a foo !; node-b foo", "SU" },
	{ "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo")) "," SPREAD(1, "node", DNS, EXISTS("foo"))), N4, P2103, "UUSU" },
	{ "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo")) "," SPREAD(1, "node", DNS, EXISTS("foo"))), N4,
	  P2103 "; node-y foo", "UUUU" },
	{ "constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", "foo,bar",
	  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo")) "," SPREAD(1, "node", DNS, EXISTS("bar"))), N4,
	  "node-a foo; node-y bar", "UUSU" },
	{ "minDomains 3 with 2 domains: the global minimum is 0", "foo",
	  CONSTRAINTS(SPREAD_X(1, "zone", DNS, EXISTS("foo"), "\"minDomains\":3")), N4, "node-a foo; node-x foo",
	  "UUUU" },
	{ "minDomains 2 with 2 domains: the real minimum", "foo",
	  CONSTRAINTS(SPREAD_X(1, "zone", DNS, EXISTS("foo"), "\"minDomains\":2")), N4, "node-a foo; node-x foo",
	  "SSSS" },
	{ "nodeTaintsPolicy Honor leaves the tainted node out of the domains", "foo",
	  CONSTRAINTS(SPREAD_X(1, "node", DNS, EXISTS("foo"), "\"nodeTaintsPolicy\":\"Honor\"")),
	  "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b; "
	  "node-x zone=zone2,node=node-x taint=t:NoSchedule; node-y zone=zone2,node=node-y",
	  P2103, "USSU" },
	{ "nodeTaintsPolicy Ignore (default) counts the tainted node", "foo",
	  CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))),
	  "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b; "
	  "node-x zone=zone2,node=node-x taint=t:NoSchedule; node-y zone=zone2,node=node-y",
	  P2103, "UUSU" },
	{ "matchLabelKeys ANDs the pod's own value into the selector", "foo,rev=2",
	  CONSTRAINTS(SPREAD_X(1, "node", DNS, EXISTS("foo"), "\"matchLabelKeys\":[\"rev\"]")), N4,
	  "node-a foo,rev=1; node-a foo,rev=1; node-b foo,rev=2; node-x foo,rev=1", "SUSS" },
	{ "an empty selector counts no pod but matches the pod itself", "foo",
	  CONSTRAINTS(SPREAD(1, "node", DNS, "{}")), N4, P2103, "SSSS" },
	{ "a null selector matches nothing, not even the pod", "foo", CONSTRAINTS(SPREAD(1, "node", DNS, "null")), N4,
	  P2103, "SSSS" },
	{ "only ScheduleAnyway constraints: PreFilter skips", "foo", CONSTRAINTS(SPREAD(1, "zone", SA, EXISTS("foo"))), N4,
	  P2103, "KKKK" },
	{ "no constraints and no owner: PreFilter skips", "foo", "", N4, P2103, "KKKK" },
};

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
		const struct filter_case *c = &filter_cases[i];
		tu_cluster(h, c->nodes, c->pods);
		struct sk_pod *p = tu_pod("p", NULL, NULL, c->labels, NULL, false, c->spec);
		char codes[TU_MAX + 1];
		tu_filter_all(h, pl, p, codes, NULL);
		if (strcmp(codes, c->want)) {
			print_error("case %s: got %s want %s\n", c->name, codes, c->want);
			fail();
		}
		sk_pod_unref(p);
	}
	ph_free(h);
}

static void test_filter_reasons(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	tu_cluster(h, "node-a zone=zone1; node-b zon=zone1; node-x zone=zone2", "node-a foo; node-a foo");
	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo", NULL, false, CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))));
	char codes[8], *reasons[3];
	tu_filter_all(h, pl, p, codes, reasons);
	assert_string_equal(codes, "UXS");
	assert_string_equal(reasons[0], R_NOT_MATCH);
	assert_string_equal(reasons[1], R_MISSING);
	assert_string_equal(reasons[2], "");
	for (int i = 0; i < 3; i++)
		free(reasons[i]);
	sk_pod_unref(p);
	ph_free(h);
}

/* PreFilter, then AddPod/RemovePod `other` on node `node_idx` of a clone; the clone's Filter codes
 * go to after, the original's to before. */
static void add_remove(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, const struct sk_pod *other,
		       int node_idx, bool add, char *before, char *after)
{
	ph_reset_state(h);
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
	free(r.names);
	assert_int_equal(s.code, SK_SUCCESS);
	struct sk_cycle_state *clone = sk_cycle_state_clone(h->cs);
	assert_non_null(clone);
	const struct sk_node_info *ni = h->snap->nodes[node_idx];
	s = add ? pl->desc->pre_filter_add_pod(pl, clone, pod, other, ni)
		: pl->desc->pre_filter_remove_pod(pl, clone, pod, other, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	int n = h->snap->nnodes;
	for (int i = 0; i < n; i++) {
		struct sk_status a = pl->desc->filter(pl, clone, pod, h->snap->nodes[i]);
		struct sk_status b = pl->desc->filter(pl, h->cs, pod, h->snap->nodes[i]);
		after[i] = a.code == SK_SUCCESS ? 'S' : a.code == SK_UNSCHEDULABLE ? 'U' : 'X';
		before[i] = b.code == SK_SUCCESS ? 'S' : b.code == SK_UNSCHEDULABLE ? 'U' : 'X';
		sk_status_reset(&a);
		sk_status_reset(&b);
	}
	after[n] = before[n] = '\0';
	sk_cycle_state_free(clone);
}

static void test_add_remove_pod(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo", NULL, false, CONSTRAINTS(SPREAD(1, "node", DNS, EXISTS("foo"))));
	struct sk_pod *pz = tu_pod("p", NULL, NULL, "foo", NULL, false,
				   CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo")) "," SPREAD(1, "node", DNS, EXISTS("foo"))));
	struct sk_pod *added = tu_pod("p-a1", NULL, "node-a", "foo", NULL, false, "");
	struct sk_pod *other_ns = tu_pod("p-a1", "ns1", "node-a", "foo", NULL, false, "");
	struct sk_pod *unmatched = tu_pod("p-a1", NULL, "node-a", "bar", NULL, false, "");
	char before[8], after[8];

	/* "node a and b both impact current min match": empty cluster, add on node-a -> {a:1, b:0} */
	tu_cluster(h, "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b", "");
	add_remove(h, pl, p, added, 0, true, before, after);
	assert_string_equal(before, "SS");
	assert_string_equal(after, "US");

	/* "only node a impacts current min match": {a:0, b:1} + a -> {1, 1} */
	tu_cluster(h, "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b", "node-b foo");
	add_remove(h, pl, p, added, 0, true, before, after);
	assert_string_equal(before, "SU");
	assert_string_equal(after, "SS");

	/* a pod in a different namespace or not matching the selector changes nothing */
	add_remove(h, pl, p, other_ns, 0, true, before, after);
	assert_string_equal(after, "SU");
	add_remove(h, pl, p, unmatched, 0, true, before, after);
	assert_string_equal(after, "SU");

	/* "node a and x both impact ... on zone and node": zone {1, 0}, node {a:1, x:0} */
	tu_cluster(h, "node-a zone=zone1,node=node-a; node-x zone=zone2,node=node-x", "");
	add_remove(h, pl, pz, added, 0, true, before, after);
	assert_string_equal(before, "SS");
	assert_string_equal(after, "US");

	/* RemovePod: 2/1 on nodes -> removing one from node-a gives 1/1 */
	tu_cluster(h, "node-a zone=zone1,node=node-a; node-b zone=zone1,node=node-b", "node-a foo; node-a foo; node-b foo");
	struct sk_pod *victim = h->snap->nodes[0]->pods[0].pod;
	add_remove(h, pl, p, victim, 0, false, before, after);
	assert_string_equal(before, "US");
	assert_string_equal(after, "SS");

	sk_pod_unref(p);
	sk_pod_unref(pz);
	sk_pod_unref(added);
	sk_pod_unref(other_ns);
	sk_pod_unref(unmatched);
	ph_free(h);
}

struct score_case {
	const char *name;
	const char *labels, *spec, *owner; /* incoming pod */
	const char *nodes, *pods;
	const char *candidates;            /* NULL = every node */
	int64_t want[8];
	const char *objects;               /* what the listers hold (JSON array), NULL = nothing */
};

#define SERVICE(ns, name, sel) "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"},\"spec\":{\"selector\":" sel "}}"
#define REPLICA_SET(name, sel) "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"namespace\":\"default\",\"name\":\"" name "\"},\"spec\":{\"selector\":" sel "}}"


#define HN(n) n " " HOST "=" n
static const struct score_case score_cases[] = {
	{ "one constraint on node, no existing pods", "foo", CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))), NULL,
	  HN("node-a") ";" HN("node-b"), "", NULL, { 100, 100 }, NULL },
	{ "one constraint on node, only one node is candidate", "foo", CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))),
	  NULL, HN("node-a") ";" HN("node-b"), "node-a foo; node-a foo; node-b foo", "node-a", { 100 }, NULL },
	{ "one constraint on node, all nodes have the same number of matching pods", "foo",
	  CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))), NULL, HN("node-a") ";" HN("node-b"), "node-a foo; node-b foo",
	  NULL, { 100, 100 }, NULL },
	{ "one constraint on node, all 4 nodes are candidates (pkg/scheduler/framework/plugins/podtopologyspread/)", "foo",
	  CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))), NULL,
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a foo; node-a foo; node-b foo; node-d foo; node-d foo; node-d foo", NULL, { 20, 60, 100, 0 }, NULL },
	{ "same, with a non-hostname per-node key (counted in PreScore)", "foo",
	  CONSTRAINTS(SPREAD(1, "node", SA, EXISTS("foo"))), NULL,
	  "node-a node=node-a; node-b node=node-b; node-c node=node-c; node-d node=node-d",
	  "node-a foo; node-a foo; node-b foo; node-d foo; node-d foo; node-d foo", NULL, { 20, 60, 100, 0 }, NULL },
	{ "one constraint on node, null selector", "foo", CONSTRAINTS(SPREAD(1, HOST, SA, "null")), NULL,
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a foo; node-a foo; node-b foo; node-d foo; node-d foo; node-d foo", NULL, { 100, 100, 100, 100 }, NULL },
	{ "one constraint on node, all 4 nodes are candidates, maxSkew=2 (pkg/scheduler/framework/plugins/podtopologyspread/)", "foo",
	  CONSTRAINTS(SPREAD(2, HOST, SA, EXISTS("foo"))), NULL,
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a foo; node-a foo; node-b foo; node-d foo; node-d foo; node-d foo", NULL, { 33, 66, 100, 16 }, NULL },
	{ "one constraint on node, all 4 nodes are candidates, maxSkew=3", "foo",
	  CONSTRAINTS(SPREAD(3, HOST, SA, EXISTS("foo"))), NULL,
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a foo; node-a foo; node-a foo; node-a foo; node-b foo; node-b foo; node-b foo; node-c foo; node-c foo; "
	  "node-d foo",
	  NULL, { 44, 66, 77, 100 }, NULL },
	/* upstream TestPodTopologySpreadScore: the Service's selector is the default constraints' */
	{ "system defaulting, nodes don't have zone, pods match service", "foo", "", NULL,
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a foo; node-a foo; node-a foo; node-a foo; node-b foo; node-b foo; node-b foo; node-c foo; node-c foo; "
	  "node-d foo",
	  NULL, { 44, 66, 77, 100 }, "[" SERVICE("default", "svc", "{\"foo\":\"\"}") "]" },
	/* the ReplicaSet's selector, not its uid: pods of another owner or of none count when they match */
	{ "system defaulting, nodes don't have zone, pods match the ReplicaSet's selector", "foo,app=a", "", "rs1",
	  HN("node-a") ";" HN("node-b") ";" HN("node-c") ";" HN("node-d"),
	  "node-a app=a ^rs1; node-a app=a ^rs1; node-a app=a ^rs2; node-a app=a; node-b app=a ^rs1; node-b app=a; "
	  "node-b app=a ^rs1; node-c app=a ^rs1; node-c app=a ^rs1; node-d app=a ^rs1; node-d app=b ^rs1; node-d foo",
	  NULL, { 44, 66, 77, 100 }, "[" REPLICA_SET("rs1", "{\"matchLabels\":{\"app\":\"a\"}}") "]" },
	{ "system defaulting, a Service in another namespace does not select: PreScore skips", "foo", "", NULL,
	  HN("node-a") ";" HN("node-b"), "node-a foo", NULL, { 0, 0 }, "[" SERVICE("other", "svc", "{\"foo\":\"\"}") "]" },
	{ "system defaulting, a Service without selector selects nothing: PreScore skips", "foo", "", NULL,
	  HN("node-a") ";" HN("node-b"), "node-a foo", NULL, { 0, 0 }, "[" SERVICE("default", "svc", "null") "]" },
	{ "system defaulting, owner ReplicaSet unknown to the lister: PreScore skips", "foo", "", "rs9",
	  HN("node-a") ";" HN("node-b"), "node-a foo ^rs9", NULL, { 0, 0 }, "[" REPLICA_SET("rs1", "{}") "]" },
	{ "one constraint on node, 3 out of 4 nodes are candidates", "foo", CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))),
	  NULL, HN("node-a") ";" HN("node-b") ";" HN("node-x") ";" HN("node-y"),
	  "node-a foo; node-a foo; node-a foo; node-a foo; node-b foo; node-b foo; node-x foo; node-y foo; node-y foo; "
	  "node-y foo",
	  "node-a node-b node-x", { 33, 83, 100 }, NULL },
	{ "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key", "foo",
	  CONSTRAINTS(SPREAD(1, HOST, SA, EXISTS("foo"))), NULL,
	  HN("node-a") "; node-b n=node-b;" HN("node-x") ";" HN("node-y"),
	  "node-a foo; node-a foo; node-a foo; node-a foo; node-b foo; node-b foo; node-x foo; node-y foo; node-y foo; "
	  "node-y foo",
	  "node-a node-b node-x", { 16, 0, 100 }, NULL },
	{ "one constraint on zone, 3 out of 4 nodes are candidates (pkg/scheduler/framework/plugins/podtopologyspread/)", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", SA, EXISTS("foo"))), NULL,
	  "node-a zone=zone1," HOST "=node-a; node-b zone=zone1," HOST "=node-b; node-x zone=zone2," HOST
	  "=node-x; node-y zone=zone2," HOST "=node-y",
	  "node-a foo; node-a foo; node-a foo; node-a foo; node-b foo; node-b foo; node-x foo; node-y foo; node-y foo; "
	  "node-y foo",
	  "node-a node-b node-x", { 75, 75, 100 }, NULL },
	{ "two Constraints on zone and node, 2 out of 4 nodes are candidates", "foo",
	  CONSTRAINTS(SPREAD(1, "zone", SA, EXISTS("foo")) "," SPREAD(1, HOST, SA, EXISTS("foo"))), NULL,
	  "node-a zone=zone1," HOST "=node-a; node-b zone=zone1," HOST "=node-b; node-x zone=zone2," HOST
	  "=node-x; node-y zone=zone2," HOST "=node-y",
	  "node-a foo; node-a foo; node-b foo; node-x foo; node-x foo; node-y foo; node-y foo; node-y foo; node-y foo",
	  "node-a node-x", { 100, 63 }, NULL },
	{ "DoNotSchedule constraints do not score: PreScore skips", "foo", CONSTRAINTS(SPREAD(1, HOST, DNS, EXISTS("foo"))),
	  NULL, HN("node-a") ";" HN("node-b"), "node-a foo", NULL, { 0, 0 }, NULL },
	{ "no constraints, no owner: PreScore skips", "foo", "", NULL, HN("node-a") ";" HN("node-b"), "node-a foo", NULL,
	  { 0, 0 }, NULL },
};

static void test_score(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++) {
		const struct score_case *c = &score_cases[i];
		tu_cluster(h, c->nodes, c->pods);
		ph_set_objects(h, c->objects);
		struct sk_pod *p = tu_pod("p", NULL, NULL, c->labels, c->owner, false, c->spec);
		int64_t got[TU_MAX];
		int n = 0;
		enum sk_code code = tu_scores(h, pl, p, c->candidates, got, &n);
		bool skip_expected = strstr(c->name, "skips") != NULL;
		bool ok = (code == SK_SKIP) == skip_expected;
		for (int k = 0; k < n; k++)
			ok = ok && got[k] == c->want[k];
		if (!ok) {
			print_error("case %s: code %d, got", c->name, code);
			for (int k = 0; k < n; k++)
				print_error(" %lld", (long long)got[k]);
			print_error("\n");
			fail();
		}
		sk_pod_unref(p);
	}
	ph_free(h);
}

/* upstream TestPreFilterState "default constraints and a service": the pod gets the DoNotSchedule
 * defaults (node maxSkew 3, rack maxSkew 5) with the Service's selector foo=bar (not its own
 * labels: baz=kar pods do not count), the ScheduleAnyway one only in scoring. */
static void test_default_constraints_and_a_service(void **state)
{
	(void)state;
	struct ph *h = ph_new("- schedulerName: default-scheduler\n"
			      "  pluginConfig:\n"
			      "  - name: PodTopologySpread\n"
			      "    args:\n"
			      "      defaultingType: List\n"
			      "      defaultConstraints:\n"
			      "      - {maxSkew: 3, topologyKey: node, whenUnsatisfiable: DoNotSchedule}\n"
			      "      - {maxSkew: 2, topologyKey: node, whenUnsatisfiable: ScheduleAnyway}\n"
			      "      - {maxSkew: 5, topologyKey: rack, whenUnsatisfiable: DoNotSchedule}\n");
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	ph_set_objects(h, "[" SERVICE("default", "svc", "{\"foo\":\"bar\"}") "]");
	/* node-a holds 4 foo=bar pods, node-b 3 baz=kar pods (not selected), node-c none */
	tu_cluster(h, "node-a node=node-a,rack=r1; node-b node=node-b,rack=r1; node-c node=node-c,rack=r2",
		   "node-a foo=bar; node-a foo=bar; node-a foo=bar; node-a foo=bar; "
		   "node-b baz=kar; node-b baz=kar; node-b baz=kar");
	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo=bar,baz=kar", NULL, false, "");
	char codes[8];
	/* node: a 4+1-0 > 3 fails; rack: r1 4+1-0 <= 5 passes */
	tu_filter_all(h, pl, p, codes, NULL);
	assert_string_equal(codes, "USS");
	/* without the Service the pod has no default constraints */
	ph_set_objects(h, NULL);
	tu_filter_all(h, pl, p, codes, NULL);
	assert_string_equal(codes, "KKK");
	sk_pod_unref(p);
	ph_free(h);
}

static void test_list_defaults(void **state)
{
	(void)state;
	struct ph *h = ph_new("- schedulerName: default-scheduler\n"
			      "  pluginConfig:\n"
			      "  - name: PodTopologySpread\n"
			      "    args:\n"
			      "      defaultingType: List\n"
			      "      defaultConstraints:\n"
			      "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
			      "      - {maxSkew: 1, topologyKey: " HOST ", whenUnsatisfiable: ScheduleAnyway}\n");
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	tu_cluster(h,
		   "node-a zone=zone1," HOST "=node-a; node-b zone=zone1," HOST "=node-b; node-x zone=zone2," HOST
		   "=node-x; node-y " HOST "=node-y",
		   "node-a app=a ^rs1; node-b app=a; node-x app=b ^rs2; node-x app=b ^rs2; node-x app=b ^rs2");
	ph_set_objects(h, "[" REPLICA_SET("rs1", "{\"matchLabels\":{\"app\":\"a\"}}") "," REPLICA_SET("rs2", "{\"matchLabels\":{\"app\":\"b\"}}") "]");
	/* the hard default applies to a pod controlled by rs1 with rs1's selector: zone1 holds 2 of
	 * the pods it selects (one of them unowned), zone2 none */
	struct sk_pod *owned = tu_pod("p", NULL, NULL, "app=a", "rs1", false, "");
	char codes[8];
	tu_filter_all(h, pl, owned, codes, NULL);
	assert_string_equal(codes, "UUSX");
	/* neither a controller nor a Service: no default constraint */
	struct sk_pod *lone = tu_pod("p", NULL, NULL, "app=a", NULL, false, "");
	tu_filter_all(h, pl, lone, codes, NULL);
	assert_string_equal(codes, "KKKK");
	/* the soft default on the hostname: rs1 counts 1/1/0/0, w = ln(4+2), raw 2/2/0/0 -> 0/0/100/100 */
	int64_t got[TU_MAX];
	int n = 0;
	assert_int_equal(tu_scores(h, pl, owned, NULL, got, &n), SK_SUCCESS);
	assert_int_equal(n, 4);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 100);
	assert_int_equal(got[3], 100);
	assert_int_equal(tu_scores(h, pl, lone, NULL, got, &n), SK_SKIP);
	/* a Service selecting the unowned pod gives it the defaults (upstream "default constraints and a
	 * service"): its selector app=a counts 2 in zone1 */
	ph_set_objects(h, "[" SERVICE("default", "web", "{\"app\":\"a\"}") "]");
	tu_filter_all(h, pl, lone, codes, NULL);
	assert_string_equal(codes, "UUSX");
	/* Service and ReplicaSet selectors are ANDed: app=a and tier=web selects nothing on the nodes,
	 * so every zone holds 0: the constraint applies (node-y lacks the zone key) and no node fails the skew */
	ph_set_objects(h, "[" SERVICE("default", "web", "{\"app\":\"a\"}") "," REPLICA_SET("rs1", "{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"web\"]}]}") "]");
	struct sk_pod *tiered = tu_pod("p", NULL, NULL, "app=a,tier=web", "rs1", false, "");
	tu_filter_all(h, pl, tiered, codes, NULL);
	assert_string_equal(codes, "SSSX");
	sk_pod_unref(tiered);
	sk_pod_unref(owned);
	sk_pod_unref(lone);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	uint32_t pod_actions = 0, node_actions = 0;
	sk_hint_fn pod_hint = ph_find_hint(pl, SK_EV_POD, &pod_actions);
	sk_hint_fn node_hint = ph_find_hint(pl, SK_EV_NODE, &node_actions);
	assert_int_equal(pod_actions, SK_ACT_ADD | SK_ACT_UPDATE_POD_LABEL | SK_ACT_UPDATE_POD_TOLERATIONS | SK_ACT_DELETE);
	assert_int_equal(node_actions,
			 SK_ACT_ADD | SK_ACT_DELETE | SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_TAINT);

	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo", NULL, false,
				  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo")) ","
					      SPREAD_X(1, "node", DNS, EXISTS("bar"), "\"nodeTaintsPolicy\":\"Honor\"")));
	struct sk_pod *assigned_foo = tu_pod("a", NULL, "node-a", "foo", NULL, false, "");
	struct sk_pod *assigned_baz = tu_pod("a", NULL, "node-a", "baz", NULL, false, "");
	struct sk_pod *assigned_foo2 = tu_pod("a", NULL, "node-a", "foo,x=1", NULL, false, "");
	struct sk_pod *unassigned = tu_pod("u", NULL, NULL, "foo", NULL, false, "");
	struct sk_pod *other_ns = tu_pod("a", "ns1", "node-a", "foo", NULL, false, "");
	struct sk_pod *self_tol = tu_pod("p", NULL, NULL, "foo", NULL, false,
					 "\"tolerations\":[{\"key\":\"t\",\"operator\":\"Exists\"}],"
					 CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("foo"))));
	/* added: Queue only for a matching assigned pod of the same namespace */
	assert_int_equal(pod_hint(pl, p, NULL, assigned_foo), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, NULL, assigned_baz), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, NULL, unassigned), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, NULL, other_ns), SK_QUEUE_SKIP);
	/* deleted */
	assert_int_equal(pod_hint(pl, p, assigned_foo, NULL), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, assigned_baz, NULL), SK_QUEUE_SKIP);
	/* label update: only when a selector's match flips */
	assert_int_equal(pod_hint(pl, p, assigned_baz, assigned_foo), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, assigned_foo, assigned_foo2), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, assigned_foo, assigned_foo), SK_QUEUE_SKIP);
	/* the pod itself got a toleration and a constraint honors taints */
	assert_int_equal(pod_hint(pl, p, p, self_tol), SK_QUEUE);

	struct sk_node *full = tu_node("n zone=z1,node=n");
	struct sk_node *full2 = tu_node("n zone=z2,node=n");
	struct sk_node *partial = tu_node("n zone=z1");
	struct sk_node *tainted = tu_node("n zone=z1,node=n taint=k:NoSchedule");
	assert_int_equal(node_hint(pl, p, NULL, full), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, NULL, partial), SK_QUEUE_SKIP);
	assert_int_equal(node_hint(pl, p, full, NULL), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, partial, NULL), SK_QUEUE_SKIP);
	assert_int_equal(node_hint(pl, p, partial, full), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, full, full2), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, full, full), SK_QUEUE_SKIP);
	assert_int_equal(node_hint(pl, p, full, tainted), SK_QUEUE);

	sk_node_unref(full);
	sk_node_unref(full2);
	sk_node_unref(partial);
	sk_node_unref(tainted);
	sk_pod_unref(p);
	sk_pod_unref(assigned_foo);
	sk_pod_unref(assigned_baz);
	sk_pod_unref(assigned_foo2);
	sk_pod_unref(unassigned);
	sk_pod_unref(other_ns);
	sk_pod_unref(self_tol);
	ph_free(h);
}

static void test_args(void **state)
{
	(void)state;
	const struct sk_plugin_desc *d = sk_registry_lookup("PodTopologySpread");
	assert_non_null(d);
	assert_string_equal(d->args_kind, "PodTopologySpreadArgs");
	struct sk_errors e = { 0 };
	void *args = NULL;
	/* absent: System defaulting */
	assert_int_equal(d->args_decode(NULL, &args, &e, "args"), 0);
	cJSON *j = d->args_encode(args);
	char *s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"kind\":\"PodTopologySpreadArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			       "\"defaultingType\":\"System\"}");
	free(s);
	cJSON_Delete(j);
	d->args_free(args);

	/* List with constraints: kept as given */
	cJSON *in = fx_json("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":2,\"topologyKey\":\"zone\","
			    "\"whenUnsatisfiable\":\"ScheduleAnyway\",\"minDomains\":2}]}");
	assert_int_equal(d->args_decode(in, &args, &e, "args"), 0);
	j = d->args_encode(args);
	s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"kind\":\"PodTopologySpreadArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			       "\"defaultConstraints\":[{\"maxSkew\":2,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
			       "\"ScheduleAnyway\",\"minDomains\":2}],\"defaultingType\":\"List\"}");
	free(s);
	cJSON_Delete(j);
	cJSON_Delete(in);
	d->args_free(args);

	/* validation messages (upstream ValidatePodTopologySpreadArgs) */
	struct {
		const char *json, *want;
	} bad[] = {
		{ "{\"defaultingType\":\"Auto\"}",
		  "args.defaultingType: Unsupported value: \"Auto\": supported values: \"System\", \"List\"" },
		{ "{\"defaultConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		  "args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty" },
		{ "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":0,\"topologyKey\":\"zone\","
		  "\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		  "args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)" },
		{ "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
		  "\"whenUnsatisfiable\":\"Maybe\"}]}",
		  "args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: "
		  "\"DoNotSchedule\", \"ScheduleAnyway\"" },
		{ "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
		  "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{}}]}",
		  "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
		  "deduced for each pod" },
		{ "{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"\","
		  "\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		  "args.defaultConstraints[0].topologyKey: Required value: can not be empty" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in = fx_json(bad[i].json);
		args = NULL;
		assert_int_equal(d->args_decode(in, &args, &e, "args"), -1);
		assert_null(args);
		assert_true(e.n >= 1);
		if (strcmp(e.msgs[0], bad[i].want)) {
			print_error("got  %s\nwant %s\n", e.msgs[0], bad[i].want);
			fail();
		}
		sk_errors_free(&e);
		cJSON_Delete(in);
	}
}

static void test_parallel_matches_serial(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	tu_big_cluster(h, 240);
	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo", NULL, false,
				  CONSTRAINTS(SPREAD(1, "zone", DNS, EXISTS("bar")) "," SPREAD(2, HOST, DNS, EXISTS("foo")) ","
					      SPREAD(1, "zone", SA, EXISTS("foo")) "," SPREAD(2, HOST, SA, EXISTS("bar"))));
	tu_compare_parallel(h, "PodTopologySpread", p);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),    cmocka_unit_test(test_filter_reasons), cmocka_unit_test(test_add_remove_pod),
		cmocka_unit_test(test_score),     cmocka_unit_test(test_list_defaults), cmocka_unit_test(test_default_constraints_and_a_service),  cmocka_unit_test(test_hints),
		cmocka_unit_test(test_args),      cmocka_unit_test(test_parallel_matches_serial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
