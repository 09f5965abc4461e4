/* Tests for plugins/NodeAffinity: Filter cases from upstream node_affinity_test (nodeSelector,
 * required terms, matchFields, addedAffinity), PreFilter/PreScore Skip, the score example
 * (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go), NodeAffinityArgs round trip, and the node hint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node *labeled(const char *name, const char *labels)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name, labels);
	return fx_node(buf);
}

static struct sk_pod *pod_spec(const char *spec)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"p\"},\"spec\":{%s}}", spec);
	return fx_pod(buf);
}

#define REQUIRED(terms) "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[" terms "]}}}"

struct filter_case {
	const char *name, *spec, *node_labels, *node_name;
	const char *want; /* NULL = fits */
};

#define POD_REASON "node(s) didn't match Pod's node affinity/selector"

static const struct filter_case filter_cases[] = {
	{ "no selector", "", "\"foo\":\"bar\"", "n", NULL },
	{ "nodeSelector missing label", "\"nodeSelector\":{\"foo\":\"bar\"}", "", "n", POD_REASON },
	{ "nodeSelector matches", "\"nodeSelector\":{\"foo\":\"bar\"}", "\"foo\":\"bar\"", "n", NULL },
	{ "nodeSelector value differs", "\"nodeSelector\":{\"foo\":\"bar\"}", "\"foo\":\"baz\"", "n", POD_REASON },
	{ "In matches", REQUIRED("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\",\"value2\"]}]}"),
	  "\"foo\":\"bar\"", "n", NULL },
	{ "Gt", REQUIRED("{\"matchExpressions\":[{\"key\":\"kernel-version\",\"operator\":\"Gt\",\"values\":[\"0204\"]}]}"),
	  "\"kernel-version\":\"0206\"", "n", NULL },
	{ "NotIn", REQUIRED("{\"matchExpressions\":[{\"key\":\"mem-type\",\"operator\":\"NotIn\",\"values\":[\"DDR\",\"DDR2\"]}]}"),
	  "\"mem-type\":\"DDR3\"", "n", NULL },
	{ "DoesNotExist fails", REQUIRED("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"DoesNotExist\"}]}"),
	  "\"foo\":\"bar\"", "n", POD_REASON },
	{ "empty terms match nothing", REQUIRED(""), "\"foo\":\"bar\"", "n", POD_REASON },
	{ "terms are ORed",
	  REQUIRED("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"x\"]}]},"
		   "{\"matchExpressions\":[{\"key\":\"diffkey\",\"operator\":\"In\",\"values\":[\"wrong\",\"value2\"]}]}"),
	  "\"diffkey\":\"value2\"", "n", NULL },
	{ "nodeSelector and affinity both needed",
	  "\"nodeSelector\":{\"foo\":\"bar\"}," REQUIRED("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"Exists\"}]}"),
	  "\"foo\":\"baz\"", "n", POD_REASON },
	{ "matchFields metadata.name", REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node1\"]}]}"),
	  "", "node1", NULL },
	{ "matchFields other node", REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node1\"]}]}"),
	  "", "node2", POD_REASON },
};

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
		const struct filter_case *c = &filter_cases[i];
		struct sk_node_info *ni = fx_node_info(labeled(c->node_name, c->node_labels), NULL);
		struct sk_pod *p = pod_spec(c->spec);
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		char *m = ph_message(&s);
		bool ok = c->want ? (code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE && !strcmp(m, c->want))
				  : (code == SK_SUCCESS || code == SK_SKIP);
		if (!ok) {
			print_error("case %s: got %s \"%s\"\n", c->name, sk_code_string(code), m);
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
	}
	ph_free(h);
}

static void test_prefilter_skip(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	struct sk_prefilter_result r = { .all = true };
	struct sk_pod *p = pod_spec("");
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, p, &r);
	assert_int_equal(s.code, SK_SKIP);
	sk_pod_unref(p);
	p = pod_spec("\"nodeSelector\":{\"a\":\"b\"}");
	s = pl->desc->pre_filter(pl, h->cs, p, &r);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_true(r.all);
	sk_pod_unref(p);
	ph_free(h);
}

/* PreFilterResult narrowing by matchFields metadata.name In (upstream TestNodeAffinityPreFilter). */
struct prefilter_case {
	const char *name, *spec;
	enum sk_code code;
	const char *want; /* expected narrowed names joined by ",", NULL = no narrowing, "" = conflict */
};

static void test_prefilter_narrowing(void **state)
{
	(void)state;
	static const struct prefilter_case cases[] = {
		{ "no matchFields", REQUIRED("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}"),
		  SK_SUCCESS, NULL },
		{ "one term one name", REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}"),
		  SK_SUCCESS, "n1" },
		{ "two terms union", REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]},"
					      "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n2\"]}]}"),
		  SK_SUCCESS, "n1,n2" },
		{ "a term without names disables narrowing",
		  REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]},"
			   "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}"),
		  SK_SUCCESS, NULL },
		{ "NotIn does not narrow", REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\",\"values\":[\"n1\"]}]}"),
		  SK_SUCCESS, NULL },
		{ "intersection within a term conflicts",
		  REQUIRED("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]},"
			   "{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n2\"]}]}"),
		  SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "" },
	};
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct prefilter_case *c = &cases[i];
		struct sk_prefilter_result r = { .all = true };
		struct sk_pod *p = pod_spec(c->spec);
		assert_non_null(p);
		struct sk_status s = pl->desc->pre_filter(pl, h->cs, p, &r);
		if (s.code != c->code)
			fail_msg("%s: code %d, want %d", c->name, s.code, c->code);
		if (c->code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE) {
			char *m = ph_message(&s);
			assert_string_equal(m, "pod affinity terms conflict");
			free(m);
		} else if (!c->want) {
			if (!r.all || r.n != 0)
				fail_msg("%s: narrowed unexpectedly", c->name);
		} else {
			char got[256] = "";
			for (int k = 0; k < r.n; k++)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? "," : "", r.names[k]);
			if (r.all || strcmp(got, c->want) != 0)
				fail_msg("%s: narrowed to \"%s\" (all=%d), want \"%s\"", c->name, got, r.all, c->want);
		}
		sk_status_reset(&s);
		free(r.names);
		sk_pod_unref(p);
	}
	ph_free(h);
}

static void test_added_affinity(void **state)
{
	(void)state;
	struct ph *h = ph_new("- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
			      "        requiredDuringSchedulingIgnoredDuringExecution:\n"
			      "          nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [foo]}]}]\n"
			      "        preferredDuringSchedulingIgnoredDuringExecution:\n"
			      "        - {weight: 5, preference: {matchExpressions: [{key: zone, operator: In, values: [foo]}]}}\n");
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	/* the enforced affinity is checked first, even for pods without their own constraints */
	struct sk_node_info *ni = fx_node_info(labeled("n", "\"zone\":\"bar\""), NULL);
	struct sk_pod *p = pod_spec("");
	struct sk_status s = ph_filter(h, pl, p, ni);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	char *m = ph_message(&s);
	assert_string_equal(m, "node(s) didn't match scheduler-enforced node affinity");
	free(m);
	sk_node_info_free(ni);
	ni = fx_node_info(labeled("n", "\"zone\":\"foo\""), NULL);
	s = ph_filter(h, pl, p, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_node_info_free(ni);
	/* the pod's own selector still applies */
	sk_pod_unref(p);
	p = pod_spec("\"nodeSelector\":{\"disk\":\"ssd\"}");
	ni = fx_node_info(labeled("n", "\"zone\":\"foo\""), NULL);
	s = ph_filter(h, pl, p, ni);
	m = ph_message(&s);
	assert_string_equal(m, POD_REASON);
	free(m);
	sk_node_info_free(ni);
	sk_pod_unref(p);

	/* added preferred terms score every pod: 5 -> 100, 0 -> 0 */
	ph_set_snapshot(h, fx_snapshot(fx_node_info(labeled("n1", "\"zone\":\"foo\""), NULL),
				       fx_node_info(labeled("n2", "\"zone\":\"bar\""), NULL), NULL));
	p = pod_spec("");
	int64_t got[2];
	assert_int_equal(ph_scores(h, pl, p, got), SK_SUCCESS);
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 0);
	sk_pod_unref(p);

	/* args are encoded back as given */
	const struct sk_profile_config *prof = &h->cfg->profiles[0];
	cJSON *enc = pl->desc->args_encode(sk_profile_args(prof, "NodeAffinity"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(enc, "addedAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"));
	assert_string_equal(cJSON_GetObjectItem(enc, "kind")->valuestring, "NodeAffinityArgs");
	cJSON_Delete(enc);
	ph_free(h);
}

static void test_score(void **state)
{
	(void)state;
	/* "all nodes match the preferred scheduling requirements of pod but with different priorities": 18, 36, 100 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(labeled("node1", "\"foo\":\"bar\""), NULL),
				       fx_node_info(labeled("node2", "\"key\":\"value\""), NULL),
				       fx_node_info(labeled("node5", "\"foo\":\"bar\",\"key\":\"value\",\"az\":\"az1\""), NULL),
				       NULL));
	struct sk_pod *p = pod_spec(
		"\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
		"{\"weight\":2,\"preference\":{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}},"
		"{\"weight\":4,\"preference\":{\"matchExpressions\":[{\"key\":\"key\",\"operator\":\"In\",\"values\":[\"value\"]}]}},"
		"{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]},"
		"{\"key\":\"key\",\"operator\":\"In\",\"values\":[\"value\"]},{\"key\":\"az\",\"operator\":\"In\",\"values\":[\"az1\"]}]}}]}}");
	int64_t got[3];
	assert_int_equal(ph_scores(h, ph_plugin(h, "NodeAffinity"), p, got), SK_SUCCESS);
	assert_int_equal(got[0], 18);
	assert_int_equal(got[1], 36);
	assert_int_equal(got[2], 100);
	sk_pod_unref(p);
	/* no preferred terms: PreScore skips */
	p = pod_spec("");
	assert_int_equal(ph_scores(h, ph_plugin(h, "NodeAffinity"), p, got), SK_SKIP);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_hint(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	struct sk_event_registration regs[2];
	assert_int_equal(pl->desc->events_to_register(pl, regs, 2), 1);
	assert_int_equal(regs[0].event.action, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL);
	struct sk_pod *p = pod_spec("\"nodeSelector\":{\"foo\":\"bar\"}");
	struct sk_node *yes = labeled("n", "\"foo\":\"bar\""), *no = labeled("n", "\"foo\":\"x\"");
	assert_int_equal(regs[0].hint(pl, p, NULL, yes), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, p, NULL, no), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, p, no, yes), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, p, yes, yes), SK_QUEUE_SKIP);
	sk_node_unref(yes);
	sk_node_unref(no);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),       cmocka_unit_test(test_prefilter_skip), cmocka_unit_test(test_prefilter_narrowing),
		cmocka_unit_test(test_added_affinity), cmocka_unit_test(test_score),
		cmocka_unit_test(test_hint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
