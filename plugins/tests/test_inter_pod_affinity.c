/* Tests for plugins/InterPodAffinity: Filter cases ported from upstream filtering_test
 * (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes), AddPod/RemovePod on a cloned
 * state, the scoring examples of pkg/scheduler/framework/plugins/interpodaffinity/ and cases from upstream scoring_test
 * (TestPreferredAffinity, hardPodAffinityWeight, ignorePreferredTermsOfExistingPods), namespace
 * selectors (upstream's namespaceSelector cases with its namespaces, existing pods' terms against the
 * incoming pod's namespace labels, preferred terms), queueing hints and InterPodAffinityArgs. */
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

#define EXPR(k, op, vals) "{\"key\":\"" k "\",\"operator\":\"" op "\",\"values\":[" vals "]}"
#define EXPR0(k, op) "{\"key\":\"" k "\",\"operator\":\"" op "\"}"
#define SEL(exprs) "{\"matchExpressions\":[" exprs "]}"
#define TERM(sel, key) "{\"labelSelector\":" sel ",\"topologyKey\":\"" key "\"}"
#define TERM_X(sel, key, extra) "{\"labelSelector\":" sel ",\"topologyKey\":\"" key "\"," extra "}"
#define WTERM(w, term) "{\"weight\":" #w ",\"podAffinityTerm\":" term "}"
#define REQ "\"requiredDuringSchedulingIgnoredDuringExecution\":["
#define PREF "\"preferredDuringSchedulingIgnoredDuringExecution\":["
#define AFF(terms) "\"affinity\":{\"podAffinity\":{" REQ terms "]}}"
#define ANTI(terms) "\"affinity\":{\"podAntiAffinity\":{" REQ terms "]}}"
#define AFF_ANTI(a, b) "\"affinity\":{\"podAffinity\":{" REQ a "]},\"podAntiAffinity\":{" REQ b "]}}"
#define PAFF(terms) "\"affinity\":{\"podAffinity\":{" PREF terms "]}}"
#define PANTI(terms) "\"affinity\":{\"podAntiAffinity\":{" PREF terms "]}}"

#define R_AFF "node(s) didn't match pod affinity rules"
#define R_ANTI "node(s) didn't match pod anti-affinity rules"
#define R_EXISTING "node(s) didn't satisfy existing pods anti-affinity rules"

#define SCAN SEL(EXPR("service", "In", "\"securityscan\",\"value2\""))
#define VIRUS SEL(EXPR("service", "In", "\"antivirusscan\",\"value2\""))
#define NODE1 "machine1 region=r1,zone=z11"
#define PL_SCAN "service=securityscan" /* podLabel */
#define PL_S1 "security=S1"            /* podLabel2 */
#define S1_SEL SEL(EXPR("security", "In", "\"S1\""))

struct filter_case {
	const char *name;
	const char *labels, *spec; /* incoming pod */
	const char *nodes, *pods;
	const char *want;          /* codes per node (tu_filter_all); K = PreFilter skipped (fits) */
	const char *reason;        /* message on the first rejected node, or NULL */
};

static const struct filter_case filter_cases[] = {
	{ "no required pod affinity rules, no existing pods", "", "", NODE1, "", "K", NULL },
	{ "affinity In matches the existing pod", PL_S1, AFF(TERM(SCAN, "region")), NODE1, "machine1 " PL_SCAN, "S",
	  NULL },
	{ "affinity NotIn matches the existing pod", PL_S1,
	  AFF(TERM(SEL(EXPR("service", "NotIn", "\"securityscan3\",\"value3\"")), "region")), NODE1, "machine1 " PL_SCAN,
	  "S", NULL },
	{ "affinity does not match because of a different namespace", PL_S1,
	  AFF(TERM_X(SCAN, "region", "\"namespaces\":[\"DiffNameSpace\"]")), NODE1, "machine1 " PL_SCAN " @ns", "X",
	  R_AFF },
	{ "affinity labelSelector does not match the existing pod", PL_SCAN, AFF(TERM(VIRUS, "region")), NODE1,
	  "machine1 " PL_SCAN, "X", R_AFF },
	{ "different operators in several required terms, all match", PL_S1,
	  AFF(TERM(SEL(EXPR0("service", "Exists") "," EXPR0("wrongkey", "DoesNotExist")), "region") ","
	      TERM(SEL(EXPR("service", "In", "\"securityscan\"") "," EXPR("service", "NotIn", "\"WrongValue\"")), "region")),
	  NODE1, "machine1 " PL_SCAN, "S", NULL },
	{ "matchExpressions are ANDed: one requirement fails", PL_S1,
	  AFF(TERM(SEL(EXPR0("service", "Exists") "," EXPR0("wrongkey", "DoesNotExist")), "region") ","
	      TERM(SEL(EXPR("service", "In", "\"securityscan2\"") "," EXPR("service", "NotIn", "\"WrongValue\"")), "region")),
	  NODE1, "machine1 " PL_SCAN, "X", R_AFF },
	{ "satisfies affinity and anti-affinity with the existing pod", PL_S1,
	  AFF_ANTI(TERM(SCAN, "region"), TERM(VIRUS, "node")), NODE1, "machine1 " PL_SCAN, "S", NULL },
	{ "satisfies affinity, anti-affinity and the existing pod's anti-affinity", PL_S1,
	  AFF_ANTI(TERM(SCAN, "region"), TERM(VIRUS, "node")), NODE1, "machine1 " PL_SCAN " {" ANTI(TERM(VIRUS, "node")) "}",
	  "S", NULL },
	{ "satisfies affinity but not anti-affinity", PL_S1, AFF_ANTI(TERM(SCAN, "region"), TERM(SCAN, "zone")), NODE1,
	  "machine1 " PL_SCAN, "U", R_ANTI },
	{ "satisfies both but not the existing pod's anti-affinity (symmetry)", PL_SCAN,
	  AFF_ANTI(TERM(SCAN, "region"), TERM(VIRUS, "node")), NODE1, "machine1 " PL_SCAN " {" ANTI(TERM(SCAN, "zone")) "}",
	  "U", R_EXISTING },
	{ "the pod does not match its own affinity and nothing else does", PL_SCAN,
	  AFF(TERM(SEL(EXPR("service", "NotIn", "\"securityscan\",\"value2\"")), "region")), NODE1, "", "X", R_AFF },
	{ "existing anti-affinity is respected when the pod has none", PL_SCAN, "", NODE1,
	  "machine1 " PL_SCAN " {" ANTI(TERM(SCAN, "zone")) "}", "U", R_EXISTING },
	{ "existing anti-affinity that does not match the pod", PL_SCAN, "", NODE1,
	  "machine1 " PL_SCAN " {" ANTI(TERM(SEL(EXPR("service", "NotIn", "\"securityscan\",\"value2\"")), "zone")) "}",
	  "K", NULL },
	{ "satisfies the existing pod's anti-affinity but not the incoming pod's", PL_SCAN,
	  ANTI(TERM(SEL(EXPR0("service", "Exists")), "region") "," TERM(SEL(EXPR0("security", "Exists")), "region")), NODE1,
	  "machine1 " PL_S1 " {" ANTI(TERM(SEL(EXPR0("security", "Exists")), "zone")) "}", "U", R_ANTI },
	/* several nodes */
	{ "every node of the matching pod's region fits", "foo=bar", AFF(TERM(SEL(EXPR("foo", "In", "\"bar\"")), "region")),
	  "machine1 region=China,zone=z1; machine2 region=China,zone=z2; machine3 region=India", "machine1 foo=bar",
	  "SSX", R_AFF },
	{ "the first pod of a series fits where the topology key exists", "foo=bar",
	  AFF(TERM(SEL(EXPR("foo", "In", "\"bar\"")), "region")),
	  "machine1 region=China; machine2 zone=z2; machine3 region=India", "machine1 other", "SXS", R_AFF },
	{ "a matching pod elsewhere disables the first-pod exception", "foo=bar",
	  AFF(TERM(SEL(EXPR("foo", "In", "\"bar\"")), "region")), "machine1 region=China; machine2 region=India",
	  "machine1 foo=bar", "SX", NULL },
	{ "anti-affinity rejects the whole region of a matching pod", "foo=bar",
	  ANTI(TERM(SEL(EXPR("foo", "In", "\"bar\"")), "region")),
	  "machine1 region=China; machine2 region=China; machine3 region=India", "machine1 foo=bar", "UUS", R_ANTI },
	{ "existing hostname anti-affinity rejects only its node", "foo=bar", "",
	  "machine1 kubernetes.io/hostname=machine1; machine2 kubernetes.io/hostname=machine2",
	  "machine1 app {" ANTI(TERM(SEL(EXPR("foo", "In", "\"bar\"")), "kubernetes.io/hostname")) "}", "US", R_EXISTING },
	{ "namespaceSelector {} selects every namespace", "foo=bar",
	  ANTI(TERM_X(SEL(EXPR("foo", "In", "\"bar\"")), "region", "\"namespaceSelector\":{}")),
	  "machine1 region=China; machine2 region=India", "machine1 foo=bar @other", "US", R_ANTI },
	{ "a non-empty namespaceSelector adds no namespace without namespace labels", "foo=bar",
	  ANTI(TERM_X(SEL(EXPR("foo", "In", "\"bar\"")), "region",
		      "\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}},\"namespaces\":[\"listed\"]")),
	  "machine1 region=China; machine2 region=India", "machine1 foo=bar @other; machine2 foo=bar @listed", "SU",
	  R_ANTI },
};

/* upstream filtering_test's namespaces (TestRequiredAffinitySingleNode's namespaceSelector cases) */
#define NAMESPACE(name, team) "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"team\":\"" team "\"}}}"
#define NAMESPACES "[" NAMESPACE("subteam1.team1", "team1") "," NAMESPACE("subteam2.team1", "team1") "," \
	NAMESPACE("subteam1.team2", "team2") "," NAMESPACE("subteam2.team2", "team2") "]"
#define NS_TEAM1 "\"namespaceSelector\":" SEL(EXPR("team", "In", "\"team1\""))
#define NODE_1 "node1 region=r1,zone=z11"

struct ns_case {
	const char *name;
	const char *ns, *labels, *spec; /* incoming pod */
	const char *pods;               /* on NODE_1 */
	const char *want, *reason;
};

static const struct ns_case ns_cases[] = {
	/* upstream TestRequiredAffinitySingleNode */
	{ "affinity with NamespaceSelector", NULL, PL_S1, AFF(TERM_X(SCAN, "region", NS_TEAM1)),
	  "node1 " PL_SCAN " @subteam1.team1", "S", NULL },
	{ "affinity with non-matching NamespaceSelector", NULL, PL_S1, AFF(TERM_X(SCAN, "region", NS_TEAM1)),
	  "node1 " PL_SCAN " @subteam1.team2", "X", R_AFF },
	{ "anti-affinity with matching NamespaceSelector", "subteam1.team1", PL_S1, ANTI(TERM_X(SCAN, "zone", NS_TEAM1)),
	  "node1 " PL_SCAN " @subteam2.team1", "U", R_ANTI },
	{ "anti-affinity with matching all NamespaceSelector", "subteam1.team1", PL_S1,
	  ANTI(TERM_X(SCAN, "zone", "\"namespaceSelector\":{}")), "node1 " PL_SCAN " @subteam2.team1", "U", R_ANTI },
	{ "anti-affinity with non-matching NamespaceSelector", "subteam1.team1", PL_S1, ANTI(TERM_X(SCAN, "zone", NS_TEAM1)),
	  "node1 " PL_SCAN " @subteam1.team2", "S", NULL },
	/* existing pods' terms see the incoming pod's namespace labels (GetNamespaceLabelsSnapshot) */
	{ "existing pod's anti-affinity namespaceSelector matches the incoming pod's namespace", "subteam1.team1", PL_S1, "",
	  "node1 app @subteam2.team2 {" ANTI(TERM_X(S1_SEL, "zone", NS_TEAM1)) "}", "U", R_EXISTING },
	{ "existing pod's anti-affinity namespaceSelector does not match the incoming pod's namespace", "subteam1.team2",
	  PL_S1, "", "node1 app @subteam2.team2 {" ANTI(TERM_X(S1_SEL, "zone", NS_TEAM1)) "}", "K", NULL },
	{ "an unknown namespace has no labels: NotIn matches it", "ghost", PL_S1, "",
	  "node1 app @subteam2.team2 {" ANTI(TERM_X(S1_SEL, "zone", "\"namespaceSelector\":" SEL(EXPR("team", "NotIn", "\"team1\"")))) "}",
	  "U", R_EXISTING },
	/* the incoming pod's own terms: only namespaces the lister has are added */
	{ "the incoming pod's NotIn namespaceSelector does not select an unknown namespace", NULL, PL_S1,
	  ANTI(TERM_X(SCAN, "zone", "\"namespaceSelector\":" SEL(EXPR("team", "NotIn", "\"team1\"")))),
	  "node1 " PL_SCAN " @ghost", "S", NULL },
	{ "namespaces and namespaceSelector are ORed", NULL, PL_S1,
	  ANTI(TERM_X(SCAN, "zone", NS_TEAM1 ",\"namespaces\":[\"ghost\"]")), "node1 " PL_SCAN " @ghost", "U", R_ANTI },
};

static void test_namespace_selector(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "InterPodAffinity");
	ph_set_objects(h, NAMESPACES);
	for (size_t i = 0; i < sizeof(ns_cases) / sizeof(ns_cases[0]); i++) {
		const struct ns_case *c = &ns_cases[i];
		tu_cluster(h, NODE_1, c->pods);
		struct sk_pod *p = tu_pod("p", c->ns, NULL, c->labels, NULL, false, c->spec);
		char codes[TU_MAX + 1], *reasons[TU_MAX];
		tu_filter_all(h, pl, p, codes, reasons);
		const char *first = codes[0] == 'U' || codes[0] == 'X' ? reasons[0] : NULL;
		if (strcmp(codes, c->want) || (c->reason && (!first || strcmp(first, c->reason))))
			fail_msg("case %s: got %s (%s) want %s (%s)", c->name, codes, first ? first : "-", c->want,
				 c->reason ? c->reason : "-");
		for (int k = 0; codes[k]; k++)
			free(reasons[k]);
		sk_pod_unref(p);
	}
	/* preferred terms: the incoming pod's selector resolves through the lister; an existing pod's
	 * preferred anti-affinity matches the incoming pod's namespace labels */
	tu_cluster(h, "m1 region=China; m2 region=India; m3 region=Japan",
		   "m1 security=S1 @subteam1.team1; m2 security=S1 @subteam1.team2; "
		   "m3 app @subteam2.team2 {" PANTI(WTERM(5, TERM_X(S1_SEL, "region", NS_TEAM1))) "}");
	struct sk_pod *p = tu_pod("p", "subteam2.team1", NULL, PL_S1, NULL, false,
				  PAFF(WTERM(4, TERM_X(S1_SEL, "region", NS_TEAM1))));
	int64_t got[TU_MAX];
	int n = 0;
	assert_int_equal(tu_scores(h, pl, p, NULL, got, &n), SK_SUCCESS);
	assert_int_equal(n, 3);
	/* raw: m1 +4 (team1 pod), m2 0 (team2 pod), m3 -5 (its anti-affinity selects team1) -> 100, 55, 0 */
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 55);
	assert_int_equal(got[2], 0);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "InterPodAffinity");
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
		const struct filter_case *c = &filter_cases[i];
		tu_cluster(h, c->nodes, c->pods);
		struct sk_pod *p = tu_pod("p", NULL, NULL, c->labels, NULL, false, c->spec);
		char codes[TU_MAX + 1], *reasons[TU_MAX];
		tu_filter_all(h, pl, p, codes, reasons);
		bool ok = strcmp(codes, c->want) == 0;
		const char *first = NULL;
		for (int k = 0; codes[k]; k++)
			if (!first && (codes[k] == 'U' || codes[k] == 'X'))
				first = reasons[k];
		if (c->reason && (!first || strcmp(first, c->reason)))
			ok = false;
		if (!ok) {
			print_error("case %s: got %s (%s) want %s (%s)\n", c->name, codes, first ? first : "-", c->want,
				    c->reason ? c->reason : "-");
			fail();
		}
		for (int k = 0; codes[k]; k++)
			free(reasons[k]);
		sk_pod_unref(p);
	}
	ph_free(h);
}

static void clone_filter(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, const struct sk_pod *other,
			 int node_idx, bool add, char *before, char *after)
{
	ph_reset_state(h);
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
	free(r.names);
	assert_int_equal(s.code, SK_SUCCESS);
	struct sk_cycle_state *clone = sk_cycle_state_clone(h->cs);
	assert_non_null(clone);
	s = add ? pl->desc->pre_filter_add_pod(pl, clone, pod, other, h->snap->nodes[node_idx])
		: pl->desc->pre_filter_remove_pod(pl, clone, pod, other, h->snap->nodes[node_idx]);
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
	struct sk_plugin *pl = ph_plugin(h, "InterPodAffinity");
	const char *nodes = "machine1 region=r1,zone=z1; machine2 region=r1,zone=z2; machine3 region=r2,zone=z3";
	struct sk_pod *anti = tu_pod("p", NULL, NULL, "foo", NULL, false,
				     AFF_ANTI(TERM(SEL(EXPR0("bar", "Exists")), "region"), TERM(SEL(EXPR0("foo", "Exists")), "zone")));
	struct sk_pod *bar = tu_pod("b", NULL, "machine1", "bar", NULL, false, "");
	struct sk_pod *foo = tu_pod("f", NULL, "machine2", "foo", NULL, false, "");
	struct sk_pod *hater = tu_pod("h", NULL, "machine3", "x", NULL, false, ANTI(TERM(SEL(EXPR0("foo", "Exists")), "region")));
	char before[8], after[8];

	/* the pod needs a "bar" pod in its region; one exists on machine3 (r2) */
	tu_cluster(h, nodes, "machine3 bar");
	clone_filter(h, pl, anti, bar, 0, true, before, after);
	assert_string_equal(before, "XXS");
	assert_string_equal(after, "SSS"); /* a nominated "bar" pod on machine1 makes r1 fit */
	/* adding a "foo" pod on machine2 trips the pod's anti-affinity in zone z2 only */
	clone_filter(h, pl, anti, foo, 1, true, before, after);
	assert_string_equal(after, "XXS");
	tu_cluster(h, nodes, "machine1 bar; machine3 bar");
	clone_filter(h, pl, anti, foo, 1, true, before, after);
	assert_string_equal(before, "SSS");
	assert_string_equal(after, "SUS");
	/* an added pod whose anti-affinity matches the incoming pod rejects its region */
	clone_filter(h, pl, anti, hater, 2, true, before, after);
	assert_string_equal(after, "SSU");
	/* RemovePod of the only "bar" pod in r1 */
	tu_cluster(h, nodes, "machine1 bar; machine3 bar");
	clone_filter(h, pl, anti, h->snap->nodes[0]->pods[0].pod, 0, false, before, after);
	assert_string_equal(before, "SSS");
	assert_string_equal(after, "XXS");

	sk_pod_unref(anti);
	sk_pod_unref(bar);
	sk_pod_unref(foo);
	sk_pod_unref(hater);
	ph_free(h);
}

struct score_case {
	const char *name;
	const char *labels, *spec; /* incoming pod */
	const char *nodes, *pods;
	int64_t want[8];           /* all zero with skip: PreScore must Skip */
	bool skip;
};

#define S1 S1_SEL
#define S2 SEL(EXPR("security", "In", "\"S2\""))

static const struct score_case score_cases[] = {
	{ "Affinity: different Label operators and values (pkg/scheduler/framework/plugins/interpodaffinity/)", PL_S1,
	  PAFF(WTERM(8, TERM(SEL(EXPR("security", "NotIn", "\"S1\"") "," EXPR("security", "In", "\"S2\"")), "region")) ","
	       WTERM(2, TERM(SEL(EXPR0("security", "Exists") "," EXPR0("wrongkey", "DoesNotExist")), "region"))),
	  "node1 region=China; node2 region=India; node3 az=az1",
	  "node1 security=S1; node2 security=S2; node3 security=S1", { 20, 100, 0 }, false },
	{ "Affinity: nodes in one region have more matching pods (pkg/scheduler/framework/plugins/interpodaffinity/)", PL_S1,
	  PAFF(WTERM(6, TERM(S2, "region"))),
	  "m1 region=China; m2 region=China; m3 region=India; m4 region=China; m5 region=India",
	  "m1 security=S2; m2 security=S2; m4 security=S2; m4 security=S2; m3 security=S2; m5 security=S2",
	  { 100, 100, 0, 100, 0 }, false },
	{ "Affinity: no existing pod matches", PL_S1, PAFF(WTERM(5, TERM(S2, "region"))), "m1 region=China; m2 region=India",
	  "m1 security=S1", { 0, 0 }, true },
	{ "Anti-affinity: the node with the matching pod gets the lowest score", PL_S1,
	  PANTI(WTERM(5, TERM(S1, "region"))), "m1 region=China; m2 region=India", "m1 security=S1", { 0, 100 }, false },
	{ "Affinity and anti-affinity together", PL_S1,
	  "\"affinity\":{\"podAffinity\":{" PREF WTERM(5, TERM(S1, "region")) "]},\"podAntiAffinity\":{" PREF
	  WTERM(5, TERM(S1, "zone")) "]}}",
	  "m1 region=China,zone=z1; m2 region=China,zone=z2; m3 region=India,zone=z3", "m1 security=S1",
	  { 0, 100, 0 }, false },
	{ "hardPodAffinityWeight: an existing pod's required affinity to the pod", PL_S1, "",
	  "m1 region=China; m2 region=India", "m1 app {" AFF(TERM(S1, "region")) "}", { 100, 0 }, false },
	{ "existing pod's preferred anti-affinity to the pod", PL_S1, "", "m1 region=China; m2 region=India; m3 region=Japan",
	  "m1 app {" PANTI(WTERM(7, TERM(S1, "region"))) "}; m3 app {" PAFF(WTERM(3, TERM(S1, "region"))) "}",
	  { 0, 70, 100 }, false },
	{ "an existing pod on a node without labels contributes nothing", PL_S1, "", "m1 -; m2 region=India",
	  "m1 app {" AFF(TERM(S1, "region")) "}", { 0, 0 }, true },
	{ "no affinity anywhere", PL_S1, "", "m1 region=China; m2 region=India", "m1 security=S1", { 0, 0 }, true },
	{ "namespaceSelector {} in a preferred term counts pods of every namespace", PL_S1,
	  PAFF(WTERM(4, TERM_X(S1, "region", "\"namespaceSelector\":{}"))), "m1 region=China; m2 region=India",
	  "m1 security=S1 @other", { 100, 0 }, false },
	{ "the term's default namespace is the pod's own", PL_S1, PAFF(WTERM(4, TERM(S1, "region"))),
	  "m1 region=China; m2 region=India", "m1 security=S1 @other; m2 security=S1", { 0, 100 }, false },
};

static void run_score_cases(struct ph *h, const struct score_case *cases, size_t n)
{
	struct sk_plugin *pl = ph_plugin(h, "InterPodAffinity");
	for (size_t i = 0; i < n; i++) {
		const struct score_case *c = &cases[i];
		tu_cluster(h, c->nodes, c->pods);
		struct sk_pod *p = tu_pod("p", NULL, NULL, c->labels, NULL, false, c->spec);
		int64_t got[TU_MAX];
		int nn = 0;
		enum sk_code code = tu_scores(h, pl, p, NULL, got, &nn);
		bool ok = (code == SK_SKIP) == c->skip;
		for (int k = 0; k < nn; k++)
			ok = ok && got[k] == c->want[k];
		if (!ok) {
			print_error("case %s: code %d, got", c->name, code);
			for (int k = 0; k < nn; k++)
				print_error(" %lld", (long long)got[k]);
			print_error("\n");
			fail();
		}
		sk_pod_unref(p);
	}
}

static void test_score(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	run_score_cases(h, score_cases, sizeof(score_cases) / sizeof(score_cases[0]));
	ph_free(h);
}

static void test_score_args(void **state)
{
	(void)state;
	/* hardPodAffinityWeight 0: an existing pod's required affinity adds nothing */
	static const struct score_case zero_weight[] = {
		{ "hardPodAffinityWeight 0", PL_S1, "", "m1 region=China; m2 region=India",
		  "m1 app {" AFF(TERM(S1, "region")) "}", { 0, 0 }, true },
	};
	struct ph *h = ph_new("- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 0}\n");
	run_score_cases(h, zero_weight, 1);
	ph_free(h);

	/* hardPodAffinityWeight 5 scales the required-term contribution (still normalized to 100) */
	static const struct score_case five[] = {
		{ "hardPodAffinityWeight 5 against a preferred anti-affinity of 3", PL_S1, "",
		  "m1 region=China; m2 region=India; m3 region=Japan",
		  "m1 app {" AFF(TERM(S1, "region")) "}; m2 app {" PANTI(WTERM(3, TERM(S1, "region"))) "}",
		  { 100, 0, 37 }, false },
	};
	h = ph_new("- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5}\n");
	run_score_cases(h, five, 1);
	ph_free(h);

	/* ignorePreferredTermsOfExistingPods: skipped unless the pod has preferred terms of its own */
	static const struct score_case ignore[] = {
		{ "ignored existing terms", PL_S1, "", "m1 region=China; m2 region=India",
		  "m1 app {" PANTI(WTERM(7, TERM(S1, "region"))) "}", { 0, 0 }, true },
		{ "own preferred terms still count existing terms", PL_S1, PAFF(WTERM(2, TERM(S1, "region"))),
		  "m1 region=China; m2 region=India", "m1 app {" PANTI(WTERM(7, TERM(S1, "region"))) "}; m2 security=S1",
		  { 0, 100 }, false },
	};
	h = ph_new("- pluginConfig:\n  - name: InterPodAffinity\n    args: {ignorePreferredTermsOfExistingPods: true}\n");
	run_score_cases(h, ignore, 2);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "InterPodAffinity");
	uint32_t pa = 0, na = 0;
	sk_hint_fn pod_hint = ph_find_hint(pl, SK_EV_POD, &pa);
	sk_hint_fn node_hint = ph_find_hint(pl, SK_EV_NODE, &na);
	assert_int_equal(pa, SK_ACT_ADD | SK_ACT_UPDATE_POD_LABEL | SK_ACT_DELETE);
	assert_int_equal(na, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_TAINT);

	struct sk_pod *p = tu_pod("p", NULL, NULL, "x", NULL, false,
				  AFF_ANTI(TERM(SEL(EXPR0("aff", "Exists")), "region"), TERM(SEL(EXPR0("anti", "Exists")), "zone")));
	struct sk_pod *with_aff = tu_pod("a", NULL, "n", "aff", NULL, false, "");
	struct sk_pod *with_anti = tu_pod("a", NULL, "n", "anti", NULL, false, "");
	struct sk_pod *plain = tu_pod("a", NULL, "n", "other", NULL, false, "");
	struct sk_pod *unbound = tu_pod("u", NULL, NULL, "aff", NULL, false, "");
	assert_int_equal(pod_hint(pl, p, NULL, with_aff), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, NULL, plain), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, NULL, unbound), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, with_anti, NULL), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, plain, NULL), SK_QUEUE_SKIP);
	assert_int_equal(pod_hint(pl, p, plain, with_aff), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, with_anti, plain), SK_QUEUE);
	assert_int_equal(pod_hint(pl, p, plain, with_anti), SK_QUEUE_SKIP);

	struct sk_node *region = tu_node("n region=r1");
	struct sk_node *zone = tu_node("n zone=z1");
	struct sk_node *neither = tu_node("n rack=1");
	assert_int_equal(node_hint(pl, p, NULL, region), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, neither, zone), SK_QUEUE);
	assert_int_equal(node_hint(pl, p, NULL, neither), SK_QUEUE_SKIP);

	sk_node_unref(region);
	sk_node_unref(zone);
	sk_node_unref(neither);
	sk_pod_unref(p);
	sk_pod_unref(with_aff);
	sk_pod_unref(with_anti);
	sk_pod_unref(plain);
	sk_pod_unref(unbound);
	ph_free(h);
}

static void test_args(void **state)
{
	(void)state;
	const struct sk_plugin_desc *d = sk_registry_lookup("InterPodAffinity");
	assert_non_null(d);
	assert_string_equal(d->args_kind, "InterPodAffinityArgs");
	struct sk_errors e = { 0 };
	void *args = NULL;
	assert_int_equal(d->args_decode(NULL, &args, &e, "args"), 0);
	cJSON *j = d->args_encode(args);
	char *s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"kind\":\"InterPodAffinityArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			       "\"hardPodAffinityWeight\":1,\"ignorePreferredTermsOfExistingPods\":false}");
	free(s);
	cJSON_Delete(j);
	d->args_free(args);

	cJSON *in = fx_json("{\"hardPodAffinityWeight\":100,\"ignorePreferredTermsOfExistingPods\":true}");
	assert_int_equal(d->args_decode(in, &args, &e, "args"), 0);
	j = d->args_encode(args);
	s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"kind\":\"InterPodAffinityArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			       "\"hardPodAffinityWeight\":100,\"ignorePreferredTermsOfExistingPods\":true}");
	free(s);
	cJSON_Delete(j);
	cJSON_Delete(in);
	d->args_free(args);

	const char *bad[][2] = {
		{ "{\"hardPodAffinityWeight\":101}", "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]" },
		{ "{\"hardPodAffinityWeight\":-1}", "args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]" },
		{ "{\"hardPodAffinityWeight\":1,\"foo\":1}", "unknown field \"args.foo\"" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in = fx_json(bad[i][0]);
		args = NULL;
		assert_int_equal(d->args_decode(in, &args, &e, "args"), -1);
		assert_null(args);
		assert_true(e.n >= 1);
		if (strcmp(e.msgs[0], bad[i][1])) {
			print_error("got  %s\nwant %s\n", e.msgs[0], bad[i][1]);
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
	/* required: a "foo" pod in the zone, no "bar" pod on the node; preferred both ways */
	struct sk_pod *p = tu_pod("p", NULL, NULL, "bar", NULL, false,
				  "\"affinity\":{\"podAffinity\":{" REQ TERM(SEL(EXPR0("foo", "Exists")), "zone") "],"
				  PREF WTERM(5, TERM(SEL(EXPR0("bar", "Exists")), "zone")) "]},"
				  "\"podAntiAffinity\":{" REQ TERM(SEL(EXPR0("bar", "Exists")), "kubernetes.io/hostname") "],"
				  PREF WTERM(2, TERM(SEL(EXPR0("foo", "Exists")), "kubernetes.io/hostname")) "]}}");
	tu_compare_parallel(h, "InterPodAffinity", p);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_namespace_selector), cmocka_unit_test(test_add_remove_pod), cmocka_unit_test(test_score),
		cmocka_unit_test(test_score_args), cmocka_unit_test(test_hints),  cmocka_unit_test(test_args),
		cmocka_unit_test(test_parallel_matches_serial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
