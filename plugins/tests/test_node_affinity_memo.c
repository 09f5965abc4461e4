/* Tests for NodeAffinity's outcomes by node index (plugins/NodeAffinity/na_memo.h): the memo table
 * itself (a shape gets a table on its second sighting, an outcome is kept per node object, a new
 * object at the index misses and replaces it, shapes are evicted least recently seen first, a
 * bigger numbering gets a new table), and the plugin's Filter and filter_batch through it: over
 * cycles of several shapes, with nodes relabelled between cycles and scheduler-enforced affinity,
 * every outcome equals the one computed without a memo, and Filter does read the memo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/NodeAffinity/na_memo.h"
#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node *labeled(const char *name, const char *labels)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name, labels);
	return fx_node(buf);
}

static struct sk_pod *pod_spec(const char *name, const char *spec)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s}}", name, spec);
	return fx_pod(buf);
}

#define IN_ZONE(v) "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":" \
		   "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[" v "]}]}]}}}"

/* ---------- the table ---------- */

enum op { GET, RECORD, LOOKUP, RELABEL };

struct step {
	enum op op;
	int shape;          /* GET: index into shapes[] */
	int32_t index_end;  /* GET */
	bool want_memo;     /* GET: a table comes back */
	int node;           /* RECORD, LOOKUP, RELABEL: node k (index k + 1) */
	enum na_outcome outcome; /* RECORD: kept; LOOKUP: wanted */
};

static const char *const shapes[] = {
	IN_ZONE("\"a\""),
	IN_ZONE("\"b\""),
	"\"nodeSelector\":{\"disk\":\"ssd\"}",
	"\"nodeSelector\":{\"disk\":\"ssd\"}," IN_ZONE("\"a\""),
	IN_ZONE("\"a\",\"b\""),
	"",
};

static void test_memo_table(void **state)
{
	(void)state;
	static const struct step steps[] = {
		{ GET, 0, 3, false, 0, 0 },            /* first sighting: no table */
		{ GET, 0, 3, true, 0, 0 },             /* second: a table */
		{ RECORD, 0, 0, false, 0, NA_FITS },
		{ RECORD, 0, 0, false, 1, NA_POD },
		{ LOOKUP, 0, 0, false, 0, NA_FITS },
		{ LOOKUP, 0, 0, false, 1, NA_POD },
		{ LOOKUP, 0, 0, false, 2, NA_NONE },   /* never recorded */
		{ RELABEL, 0, 0, false, 1, 0 },        /* a new object at node 1's index misses */
		{ LOOKUP, 0, 0, false, 1, NA_NONE },
		{ RECORD, 0, 0, false, 1, NA_ENFORCED },
		{ LOOKUP, 0, 0, false, 1, NA_ENFORCED },
		{ GET, 0, 3, true, 0, 0 },             /* the same table: node 0 still known */
		{ LOOKUP, 0, 0, false, 0, NA_FITS },
		{ GET, 3, 3, false, 0, 0 },            /* a nodeSelector differs from the affinity alone */
		{ GET, 2, 3, false, 0, 0 },
		{ GET, 1, 3, false, 0, 0 },
		{ GET, 0, 3, true, 0, 0 },             /* 4 shapes fit: still there */
		{ LOOKUP, 0, 0, false, 0, NA_FITS },
		{ GET, 4, 3, false, 0, 0 },            /* a fifth evicts the least recently seen (3) */
		{ GET, 3, 3, false, 0, 0 },            /* seen "once" again; evicts 2 */
		{ GET, 3, 3, true, 0, 0 },
		{ GET, 0, 3, true, 0, 0 },             /* 0 was seen recently enough to stay */
		{ LOOKUP, 0, 0, false, 0, NA_FITS },
		{ GET, 0, 5000, true, 0, 0 },          /* a numbering beyond the table: a new, empty one */
		{ LOOKUP, 0, 0, false, 0, NA_NONE },
		{ GET, 5, 0, false, 0, 0 },            /* no nodes: no table */
	};
	struct na_memos ms;
	na_memos_init(&ms);
	struct sk_pod *pods[sizeof(shapes) / sizeof(shapes[0])];
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		pods[i] = pod_spec("p", shapes[i]); /* a fresh pod per use below would do as well */
	struct sk_node_info *nis[3];
	for (int k = 0; k < 3; k++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", k);
		nis[k] = fx_node_info(labeled(name, "\"zone\":\"a\""), NULL);
		nis[k]->index = k + 1;
	}
	struct na_memo *m = NULL;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		switch (st->op) {
		case GET: {
			/* an equal pod, not the same object: shapes compare by content */
			struct sk_pod *p = pod_spec("other", shapes[st->shape]);
			struct na_memo *got = na_memo_get(&ms, st->shape % 2 ? p : pods[st->shape], st->index_end);
			sk_pod_unref(p);
			if ((got != NULL) != st->want_memo)
				fail_msg("step %zu: table %s", i, got ? "returned" : "missing");
			if (got) {
				na_memo_unref(m);
				m = got;
			}
			break;
		}
		case RECORD:
			na_memo_record(m, nis[st->node], st->outcome);
			break;
		case LOOKUP: {
			enum na_outcome o = na_memo_lookup(m, nis[st->node]);
			if (o != st->outcome)
				fail_msg("step %zu: node %d outcome %d, want %d", i, st->node, o, st->outcome);
			break;
		}
		case RELABEL:
			sk_node_unref(nis[st->node]->node);
			nis[st->node]->node = labeled("n1", "\"zone\":\"b\"");
			break;
		}
	}
	/* index 0 (no numbering) and an index beyond the table keep nothing */
	struct sk_node_info *loose = fx_node_info(labeled("loose", ""), NULL);
	na_memo_record(m, loose, NA_FITS);
	assert_int_equal(na_memo_lookup(m, loose), NA_NONE);
	loose->index = 1 << 20;
	na_memo_record(m, loose, NA_FITS);
	assert_int_equal(na_memo_lookup(m, loose), NA_NONE);
	sk_node_info_free(loose);
	na_memo_unref(m);
	na_memos_fini(&ms);
	for (int k = 0; k < 3; k++)
		sk_node_info_free(nis[k]);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		sk_pod_unref(pods[i]);
}

static void test_same_shape(void **state)
{
	(void)state;
	static const struct { const char *a, *b; bool same; } cases[] = {
		{ IN_ZONE("\"a\""), IN_ZONE("\"a\""), true },
		{ IN_ZONE("\"a\""), IN_ZONE("\"b\""), false },
		{ IN_ZONE("\"a\""), IN_ZONE("\"a\",\"b\""), false },
		{ "\"nodeSelector\":{\"x\":\"1\"}", "\"nodeSelector\":{\"x\":\"1\"}", true },
		{ "\"nodeSelector\":{\"x\":\"1\"}", "\"nodeSelector\":{\"x\":\"2\"}", false },
		{ "\"nodeSelector\":{\"x\":\"1\"}", "", false },
		{ "", "", true },
		{ IN_ZONE("\"a\""), "", false },
		{ "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		  "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}}",
		  "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		  "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n2\"]}]}]}}}", false },
		{ "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		  "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}]}}}",
		  IN_ZONE("\"a\""), false },
		{ "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		  "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]},"
		  "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\"]}]}]}}}",
		  IN_ZONE("\"a\""), false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_pod *a = pod_spec("a", cases[i].a), *b = pod_spec("b", cases[i].b);
		if (na_same_shape(a, b) != cases[i].same || na_same_shape(b, a) != cases[i].same)
			fail_msg("case %zu: same shape %d, want %d", i, !cases[i].same, cases[i].same);
		sk_pod_unref(a);
		sk_pod_unref(b);
	}
}

/* ---------- through the plugin ---------- */

#define NNODES 12

static const char *const zone_of[] = { "a", "b", "c" };

/* Node k's labels in round r: zones rotate every round for odd k (relabelled: a new object). */
static void node_labels(int k, int r, char *buf, size_t n)
{
	int z = (k + (k % 2 ? r : 0)) % 3;
	snprintf(buf, n, "\"zone\":\"%s\"%s", zone_of[z], k % 4 == 0 ? ",\"disk\":\"ssd\"" : "");
}

static void check_rounds(const char *profile, const char *const *specs, int nspecs)
{
	struct ph *h = ph_new(profile);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	struct sk_node_info *nis[NNODES];
	for (int k = 0; k < NNODES; k++) {
		char name[16], labels[128];
		snprintf(name, sizeof(name), "n%d", k);
		node_labels(k, 0, labels, sizeof(labels));
		nis[k] = fx_node_info(labeled(name, labels), NULL);
	}
	ph_set_snapshot(h, fx_snapshot_of(nis, NNODES));
	for (int r = 0; r < 4; r++) {
		if (r > 0) /* relabel the odd nodes in place, as the cache replaces a node's object */
			for (int k = 0; k < NNODES; k++) {
				struct sk_node_info *ni = h->snap->nodes[k];
				char name[16], labels[128];
				snprintf(name, sizeof(name), "%s", ni->node->name);
				int idx = atoi(name + 1);
				if (idx % 2 == 0)
					continue;
				node_labels(idx, r, labels, sizeof(labels));
				sk_node_unref(ni->node);
				ni->node = labeled(name, labels);
			}
		for (int s = 0; s < nspecs; s++) {
			for (int rep = 0; rep < 3; rep++) {
				struct sk_pod *p = pod_spec("p", specs[s]);
				ph_reset_state(h);
				struct sk_prefilter_result res = { .all = true };
				struct sk_status ps = pl->desc->pre_filter(pl, h->cs, p, &res);
				free(res.names);
				if (ps.code == SK_SKIP) {
					sk_pod_unref(p);
					continue;
				}
				assert_int_equal(ps.code, SK_SUCCESS);
				/* Filter node by node, then filter_batch over all of them */
				const struct sk_node_info *run[NNODES];
				uint8_t ok[NNODES];
				struct sk_status bst[NNODES];
				for (int k = 0; k < NNODES; k++) {
					run[k] = h->snap->nodes[k];
					ok[k] = 1;
					bst[k] = sk_ok();
				}
				if (rep == 2)
					pl->desc->filter_batch(pl, h->cs, p, run, NNODES, ok, bst);
				for (int k = 0; k < NNODES; k++) {
					struct sk_status want = pl->desc->filter(pl, NULL, p, run[k]); /* no memo */
					struct sk_status got = rep == 2 ? bst[k] : pl->desc->filter(pl, h->cs, p, run[k]);
					if (rep == 2 && (ok[k] != 0) != (want.code == SK_SUCCESS))
						fail_msg("round %d shape %d node %d: batch ok %d", r, s, k, ok[k]);
					char *wm = ph_message(&want), *gm = ph_message(&got);
					if (strcmp(wm, gm) != 0)
						fail_msg("round %d shape %d rep %d node %d: \"%s\", want \"%s\"", r, s, rep, k, gm,
							 wm);
					free(wm);
					free(gm);
				}
				sk_pod_unref(p);
			}
		}
	}
	ph_free(h);
}

static void test_filter_through_memo(void **state)
{
	(void)state;
	static const char *const specs[] = {
		IN_ZONE("\"a\""),
		IN_ZONE("\"a\",\"b\""),
		"\"nodeSelector\":{\"disk\":\"ssd\"}",
		"\"nodeSelector\":{\"disk\":\"ssd\"}," IN_ZONE("\"a\""),
		("\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		 "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"c\"]}]}]}}}"),
		"",
	};
	/* at most NA_MEMO_SHAPES shapes a run, so each keeps its table from round to round and the
	 * relabelled nodes meet their old outcomes */
	static const char added[] = "- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
				    "        requiredDuringSchedulingIgnoredDuringExecution:\n"
				    "          nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a, c]}]}]\n";
	check_rounds(NULL, specs, 4);
	check_rounds(NULL, specs + 2, 4);
	/* scheduler-enforced affinity: its own reason, also for pods without constraints */
	check_rounds(added, specs, 4);
	check_rounds(added, specs + 2, 4);
}

/* Filter takes the memo's word for a node object it knows: a planted outcome comes back. */
static void test_filter_reads_memo(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeAffinity");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(labeled("n0", "\"zone\":\"a\""), NULL),
				       fx_node_info(labeled("n1", "\"zone\":\"a\""), NULL), NULL));
	struct sk_pod *p = pod_spec("p", IN_ZONE("\"a\""));
	struct sk_prefilter_result res = { .all = true };
	for (int i = 0; i < 2; i++) { /* the shape's second sighting puts a table in the state */
		ph_reset_state(h);
		assert_int_equal(pl->desc->pre_filter(pl, h->cs, p, &res).code, SK_SUCCESS);
	}
	struct na_memo *m = sk_cycle_state_get(h->cs, pl->slot);
	assert_non_null(m);
	const struct sk_node_info *n0 = h->snap->nodes[0], *n1 = h->snap->nodes[1];
	struct sk_status s = pl->desc->filter(pl, h->cs, p, n0);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(na_memo_lookup(m, n0), NA_FITS); /* Filter kept it */
	na_memo_record(m, n1, NA_POD); /* n1 fits, but the memo says otherwise */
	s = pl->desc->filter(pl, h->cs, p, n1);
	char *msg = ph_message(&s);
	assert_string_equal(msg, "node(s) didn't match Pod's node affinity/selector");
	free(msg);
	/* a clone of the state (preemption's dry runs) shares the table */
	struct sk_cycle_state *c = sk_handle_cycle_state_clone(pl->handle, h->cs);
	assert_ptr_equal(sk_cycle_state_get(c, pl->slot), m);
	s = pl->desc->filter(pl, c, p, n1);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	sk_status_reset(&s);
	sk_handle_cycle_state_free(pl->handle, c);
	/* without a state Filter computes: n1 fits */
	s = pl->desc->filter(pl, NULL, p, n1);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memo_table),
		cmocka_unit_test(test_same_shape),
		cmocka_unit_test(test_filter_through_memo),
		cmocka_unit_test(test_filter_reads_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
