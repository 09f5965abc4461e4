/* Tests for scheduler/backend/cache.c: node tree order, assume/forget/confirm/expire, informer events,
 * pods on unknown nodes, incremental snapshots by generation, affinity lists, image states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node *node_z(const char *name, const char *zone)
{
	char text[512];
	if (zone)
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"topology.kubernetes.io/zone\":\"%s\"}},"
			 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
			 name, zone);
	else
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"}}}", name);
	return fx_node(text);
}

static struct sk_pod *pod_on(const char *name, const char *node, const char *cpu)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{%s%s%s\"containers\":[{\"resources\":"
		 "{\"requests\":{\"cpu\":\"%s\"}}}]}}",
		 name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "", cpu);
	return fx_pod(text);
}

static void add_node(struct sk_cache *c, struct sk_node *n)
{
	char *err = NULL;
	assert_int_equal(sk_cache_add_node(c, n, &err), 0);
	sk_node_unref(n);
}

static void expect_order(struct sk_cache *c, const char *want)
{
	const char **names = NULL;
	int n = sk_cache_node_tree_list(c, &names);
	assert_true(n >= 0);
	char got[1024] = "";
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(got, ",");
		strcat(got, names[i]);
	}
	free(names);
	assert_string_equal(got, want);
}

/* ---------- node tree (pkg/scheduler/backend/cache/node_tree.go; upstream node_tree_test) ---------- */

static void test_node_tree_order(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	add_node(c, node_z("a1", "A"));
	add_node(c, node_z("a2", "A"));
	add_node(c, node_z("b1", "B"));
	add_node(c, node_z("a3", "A"));
	expect_order(c, "a1,b1,a2,a3");
	assert_int_equal(sk_cache_node_count(c), 4);

	add_node(c, node_z("a2", "A")); /* re-add: no duplicate, no move */
	expect_order(c, "a1,b1,a2,a3");
	add_node(c, node_z("x1", NULL)); /* no zone labels: the "" zone, last in zone order */
	expect_order(c, "a1,b1,x1,a2,a3");
	char *err = NULL;
	assert_int_equal(sk_cache_remove_node(c, "a2", &err), 0);
	expect_order(c, "a1,b1,x1,a3");
	assert_int_equal(sk_cache_remove_node(c, "b1", &err), 0); /* zone B emptied and dropped */
	expect_order(c, "a1,x1,a3");
	/* a zone change moves the node to the end of its new zone */
	struct sk_node *moved = node_z("a1", "C");
	assert_int_equal(sk_cache_update_node(c, moved, &err), 0);
	sk_node_unref(moved);
	expect_order(c, "a3,x1,a1");
	add_node(c, node_z("b2", "B"));
	expect_order(c, "a3,x1,a1,b2");
	assert_int_equal(sk_cache_remove_node(c, "nope", &err), -1);
	assert_string_equal(err, "node nope is not found");
	free(err);
	assert_int_equal(sk_cache_node_count(c), 4);
	sk_cache_free(c);
	sk_cache_free(NULL);
}

/* upstream node_tree_test.go allNodes: region/zone via the beta labels, node-9 with both */
static struct sk_node *tree_node(int i)
{
	static const char *const labels[] = {
		"{}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-1\"}",
		"{\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-1\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-1\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-1\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-3\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-2\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-2\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-2\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}",
		("{\"topology.kubernetes.io/region\":\"region-2\",\"topology.kubernetes.io/zone\":\"zone-2\","
		 "\"failure-domain.beta.kubernetes.io/region\":\"region-2\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}"),
		"{\"failure-domain.beta.kubernetes.io/region\":\"region-2\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-3\"}",
	};
	char text[512];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"node-%d\",\"labels\":%s}}", i, labels[i]);
	return fx_node(text);
}

/* upstream TestNodeTree_List and TestNodeTreeMultiOperations: "+N" adds node-N, "-N" removes it */
static void test_node_tree_table(void **state)
{
	(void)state;
	struct {
		const char *name;
		const char *ops;
		const char *want;
	} cases[] = {
		{ "empty tree", "", "" },
		{ "one node", "+0", "node-0" },
		{ "four nodes", "+0 +1 +2 +3", "node-0,node-1,node-2,node-3" },
		{ "all nodes", "+0 +1 +2 +3 +4 +5 +6 +7 +8",
		  "node-0,node-1,node-2,node-3,node-5,node-6,node-4,node-7,node-8" },
		{ "deprecated and stable labels share a zone", "+9 +10 +6", "node-9,node-10,node-6" },
		{ "add and remove all nodes", "+2 +3 +4 -2 -3 -4", "" },
		{ "add and remove some nodes", "+2 +3 +4 -2", "node-3,node-4" },
		{ "remove three nodes", "+2 +3 +4 -2 -3 -4 +5", "node-5" },
		{ "add more nodes to an exhausted zone", "+4 +5 +6 +7 +8 +3", "node-4,node-5,node-6,node-3,node-7,node-8" },
		{ "remove zone and add new", "+3 +4 -3 +6 +7 -4", "node-6,node-7" },
		/* TestNodeTree_UpdateNode "update a node without label": node-0 moves to region-1/zone-2 */
		{ "update a node without label", "+0 +1 +2 +3 +4 +5 +6 =0",
		  "node-1,node-2,node-3,node-5,node-6,node-4,node-0" },
		{ "update the only existing node", "+0 =0", "node-0" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		print_message("case: %s\n", cases[k].name);
		struct sk_cache *c = sk_cache_new(0);
		for (const char *op = cases[k].ops; *op;) {
			char kind = op[0];
			int idx = atoi(op + 1);
			if (kind == '+') {
				add_node(c, tree_node(idx));
			} else if (kind == '-') {
				char name[16];
				snprintf(name, sizeof(name), "node-%d", idx);
				assert_int_equal(sk_cache_remove_node(c, name, NULL), 0);
			} else { /* '=': update node-idx to region-1/zone-2 */
				char text[256];
				snprintf(text, sizeof(text),
					 "{\"metadata\":{\"name\":\"node-%d\",\"labels\":{\"failure-domain.beta.kubernetes.io/region\":"
					 "\"region-1\",\"failure-domain.beta.kubernetes.io/zone\":\"zone-2\"}}}",
					 idx);
				struct sk_node *n = fx_node(text);
				assert_int_equal(sk_cache_update_node(c, n, NULL), 0);
				sk_node_unref(n);
			}
			while (*op && *op != ' ')
				op++;
			while (*op == ' ')
				op++;
		}
		expect_order(c, cases[k].want);
		sk_cache_free(c);
	}
}

/* update_node takes its own reference; the helper above unrefs for add_node only */
static void test_update_node_refs(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_node *n1 = node_z("n1", "A");
	struct sk_node *n1b = node_z("n1", "A");
	assert_int_equal(sk_cache_add_node(c, n1, NULL), 0);
	assert_int_equal(sk_cache_update_node(c, n1b, NULL), 0);
	assert_int_equal(n1->refcount, 1); /* the old object was released */
	assert_int_equal(n1b->refcount, 2);
	sk_node_unref(n1);
	sk_node_unref(n1b);
	sk_cache_free(c);
}

/* ---------- pods ---------- */

static void test_assume_forget(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	add_node(c, node_z("n1", "A"));
	struct sk_pod *p = pod_on("p", NULL, "1");
	struct sk_pod *ap = sk_pod_with_node(p, "n1");
	char *err = NULL;
	assert_int_equal(sk_cache_assume_pod(c, p, &err), -1); /* no node name */
	free(err);
	err = NULL;
	assert_int_equal(sk_cache_assume_pod(c, ap, &err), 0);
	assert_int_equal(sk_cache_pod_state(c, "uid-p"), SK_POD_ASSUMED);
	assert_true(sk_cache_is_assumed(c, "uid-p"));
	assert_int_equal(sk_cache_assumed_count(c), 1);
	struct sk_node_info *ni = sk_cache_node_info(c, "n1");
	assert_int_equal(ni->npods, 1);
	assert_int_equal(ni->requested.milli_cpu, 1000);
	sk_node_info_free(ni);

	assert_int_equal(sk_cache_assume_pod(c, ap, &err), -1);
	assert_string_equal(err, "pod default/p(uid-p) is in the cache, so can't be assumed");
	free(err);
	err = NULL;

	struct sk_pod *got = sk_cache_get_pod(c, "uid-p");
	assert_ptr_equal(got, ap);
	sk_pod_unref(got);
	got = sk_cache_get_pod_by_key(c, "default", "p");
	assert_ptr_equal(got, ap);
	sk_pod_unref(got);

	/* forget on another node is refused */
	struct sk_pod *other = sk_pod_with_node(p, "n2");
	assert_int_equal(sk_cache_forget_pod(c, other, &err), -1);
	assert_string_equal(err, "pod default/p(uid-p) was assumed on n2 but assigned to n1");
	free(err);
	err = NULL;
	sk_pod_unref(other);

	assert_int_equal(sk_cache_forget_pod(c, ap, &err), 0);
	assert_int_equal(sk_cache_pod_state(c, "uid-p"), SK_POD_NOT_CACHED);
	assert_int_equal(sk_cache_assumed_count(c), 0);
	assert_null(sk_cache_get_pod(c, "uid-p"));
	assert_null(sk_cache_get_pod_by_key(c, "default", "p"));
	ni = sk_cache_node_info(c, "n1");
	assert_int_equal(ni->npods, 0);
	assert_int_equal(ni->requested.milli_cpu, 0);
	sk_node_info_free(ni);
	assert_int_equal(sk_cache_forget_pod(c, ap, &err), -1);
	assert_string_equal(err, "pod default/p(uid-p) wasn't assumed so cannot be forgotten");
	free(err);
	sk_pod_unref(ap);
	sk_pod_unref(p);
	sk_cache_free(c);
}

static void test_confirm(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	add_node(c, node_z("n1", "A"));
	add_node(c, node_z("n2", "A"));
	struct sk_pod *p = pod_on("p", NULL, "1");
	struct sk_pod *ap = sk_pod_with_node(p, "n1");
	assert_int_equal(sk_cache_assume_pod(c, ap, NULL), 0);
	assert_int_equal(sk_cache_finish_binding(c, ap, NULL), 0);
	/* the informer delivers the bound pod: confirmed */
	struct sk_pod *bound = pod_on("p", "n1", "1");
	char *err = NULL;
	assert_int_equal(sk_cache_add_pod(c, bound, &err), 0);
	assert_int_equal(sk_cache_pod_state(c, "uid-p"), SK_POD_BOUND);
	assert_int_equal(sk_cache_assumed_count(c), 0);
	assert_int_equal(sk_cache_pod_count(c), 1);
	struct sk_pod *got = sk_cache_get_pod(c, "uid-p");
	assert_ptr_equal(got, bound); /* the informer's object replaces the assumed one */
	sk_pod_unref(got);
	struct sk_node_info *ni = sk_cache_node_info(c, "n1");
	assert_int_equal(ni->npods, 1);
	assert_int_equal(ni->requested.milli_cpu, 1000);
	sk_node_info_free(ni);
	/* adding again is an error */
	assert_int_equal(sk_cache_add_pod(c, bound, &err), -1);
	assert_string_equal(err, "pod default/p(uid-p) was already in added state");
	free(err);
	err = NULL;
	/* forgetting a bound pod is refused */
	assert_int_equal(sk_cache_forget_pod(c, bound, &err), -1);
	free(err);
	err = NULL;

	/* assumed on n1, bound on n2 by the informer: moved */
	struct sk_pod *q = pod_on("q", NULL, "2");
	struct sk_pod *aq = sk_pod_with_node(q, "n1");
	assert_int_equal(sk_cache_assume_pod(c, aq, NULL), 0);
	struct sk_pod *bq = pod_on("q", "n2", "2");
	assert_int_equal(sk_cache_add_pod(c, bq, NULL), 0);
	ni = sk_cache_node_info(c, "n1");
	assert_int_equal(ni->npods, 1);
	assert_int_equal(ni->requested.milli_cpu, 1000);
	sk_node_info_free(ni);
	ni = sk_cache_node_info(c, "n2");
	assert_int_equal(ni->npods, 1);
	assert_int_equal(ni->requested.milli_cpu, 2000);
	sk_node_info_free(ni);

	/* update of a bound pod replaces it; of an assumed pod is refused */
	struct sk_pod *bq2 = pod_on("q", "n2", "3");
	assert_int_equal(sk_cache_update_pod(c, bq2, NULL), 0);
	ni = sk_cache_node_info(c, "n2");
	assert_int_equal(ni->requested.milli_cpu, 3000);
	sk_node_info_free(ni);
	struct sk_pod *r = pod_on("r", NULL, "1");
	struct sk_pod *ar = sk_pod_with_node(r, "n1");
	assert_int_equal(sk_cache_assume_pod(c, ar, NULL), 0);
	struct sk_pod *br = pod_on("r", "n1", "1");
	assert_int_equal(sk_cache_update_pod(c, br, &err), -1);
	assert_string_equal(err, "assumed pod default/r(uid-r) should not be updated");
	free(err);
	err = NULL;
	struct sk_pod *s = pod_on("s", "n1", "1");
	assert_int_equal(sk_cache_update_pod(c, s, &err), -1);
	free(err);
	err = NULL;

	/* remove: assumed or bound */
	assert_int_equal(sk_cache_remove_pod(c, ar, NULL), 0);
	assert_int_equal(sk_cache_remove_pod(c, bq2, NULL), 0);
	assert_int_equal(sk_cache_remove_pod(c, bq2, &err), -1);
	assert_string_equal(err, "pod default/q(uid-q) is not found in scheduler cache, so cannot be removed from it");
	free(err);
	assert_int_equal(sk_cache_pod_count(c), 1);
	assert_int_equal(sk_cache_assumed_count(c), 0);
	ni = sk_cache_node_info(c, "n2");
	assert_int_equal(ni->npods, 0);
	sk_node_info_free(ni);

	sk_pod_unref(p);
	sk_pod_unref(ap);
	sk_pod_unref(bound);
	sk_pod_unref(q);
	sk_pod_unref(aq);
	sk_pod_unref(bq);
	sk_pod_unref(bq2);
	sk_pod_unref(r);
	sk_pod_unref(ar);
	sk_pod_unref(br);
	sk_pod_unref(s);
	sk_cache_free(c);
}

static int64_t fake_now;
static int64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void test_expiry(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(1000);
	sk_cache_set_clock(c, fake_clock, NULL);
	fake_now = 5000;
	add_node(c, node_z("n1", "A"));
	struct sk_pod *p = pod_on("p", "n1", "1");
	struct sk_pod *q = pod_on("q", "n1", "1");
	assert_int_equal(sk_cache_assume_pod(c, p, NULL), 0);
	assert_int_equal(sk_cache_assume_pod(c, q, NULL), 0);
	fake_now = 100000;
	assert_int_equal(sk_cache_cleanup_expired(c), 0); /* binding not finished: never expires */
	assert_int_equal(sk_cache_finish_binding(c, p, NULL), 0);
	fake_now = 100999;
	assert_int_equal(sk_cache_cleanup_expired(c), 0);
	fake_now = 101000;
	assert_int_equal(sk_cache_cleanup_expired(c), 1);
	assert_int_equal(sk_cache_pod_state(c, "uid-p"), SK_POD_NOT_CACHED);
	assert_int_equal(sk_cache_pod_state(c, "uid-q"), SK_POD_ASSUMED);
	struct sk_node_info *ni = sk_cache_node_info(c, "n1");
	assert_int_equal(ni->npods, 1);
	sk_node_info_free(ni);
	/* the informer's add after expiry adds it back as bound */
	assert_int_equal(sk_cache_add_pod(c, p, NULL), 0);
	assert_int_equal(sk_cache_pod_state(c, "uid-p"), SK_POD_BOUND);
	sk_pod_unref(p);
	sk_pod_unref(q);
	sk_cache_free(c);

	/* TTL 0: never expires */
	c = sk_cache_new(0);
	sk_cache_set_clock(c, fake_clock, NULL);
	p = pod_on("p", "n1", "1");
	assert_int_equal(sk_cache_assume_pod(c, p, NULL), 0);
	assert_int_equal(sk_cache_finish_binding(c, p, NULL), 0);
	fake_now = INT64_MAX / 2;
	assert_int_equal(sk_cache_cleanup_expired(c), 0);
	assert_true(sk_cache_is_assumed(c, "uid-p"));
	sk_pod_unref(p);
	sk_cache_free(c);
}

static void test_pods_on_unknown_and_removed_nodes(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	struct sk_pod *p = pod_on("p", "late", "1");
	assert_int_equal(sk_cache_add_pod(c, p, NULL), 0);
	assert_int_equal(sk_cache_node_count(c), 0);
	struct sk_node_info *ni = sk_cache_node_info(c, "late");
	assert_non_null(ni);
	assert_null(ni->node);
	assert_int_equal(ni->npods, 1);
	sk_node_info_free(ni);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nnodes, 0);
	assert_null(sk_snapshot_get(s, "late"));

	add_node(c, node_z("late", "A"));
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nnodes, 1);
	const struct sk_node_info *sni = sk_snapshot_get(s, "late");
	assert_non_null(sni);
	assert_int_equal(sni->npods, 1);
	assert_int_equal(sni->requested.milli_cpu, 1000);

	/* removing the node keeps its pods; the snapshot drops the node */
	assert_int_equal(sk_cache_remove_node(c, "late", NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nnodes, 0);
	assert_null(sk_snapshot_get(s, "late"));
	ni = sk_cache_node_info(c, "late");
	assert_non_null(ni);
	assert_int_equal(ni->npods, 1);
	sk_node_info_free(ni);
	assert_int_equal(sk_cache_remove_pod(c, p, NULL), 0);
	assert_null(sk_cache_node_info(c, "late")); /* no node, no pods: gone */
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	sk_pod_unref(p);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

/* ---------- snapshot ---------- */

static void test_incremental_snapshot(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	const char *names[] = { "n0", "n1", "n2", "n3", "n4" };
	for (int i = 0; i < 5; i++)
		add_node(c, node_z(names[i], i % 2 ? "B" : "A"));
	struct sk_pod *p0 = pod_on("p0", "n0", "1");
	assert_int_equal(sk_cache_add_pod(c, p0, NULL), 0);
	char *err = NULL;
	assert_int_equal(sk_cache_update_snapshot(c, s, &err), 0);
	assert_int_equal(s->nnodes, 5);
	/* zones A=[n0,n2,n4], B=[n1,n3] */
	const char *order[] = { "n0", "n1", "n2", "n3", "n4" };
	for (int i = 0; i < 5; i++)
		assert_string_equal(s->nodes[i]->node->name, order[i]);
	int64_t gen0 = s->generation;
	struct sk_node_info *ptr[5];
	int64_t gens[5];
	void *pods_arrays[5];
	for (int i = 0; i < 5; i++) {
		ptr[i] = (struct sk_node_info *)sk_snapshot_get(s, names[i]);
		gens[i] = ptr[i]->generation;
		pods_arrays[i] = ptr[i]->pods;
	}
	assert_non_null(pods_arrays[0]);

	/* Nothing changed: nothing copied, generation kept. */
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->generation, gen0);
	assert_ptr_equal(ptr[0]->pods, pods_arrays[0]);

	/* Tamper with the list order: an update without added/removed nodes must not rebuild it. */
	struct sk_node_info *t = s->nodes[0];
	s->nodes[0] = s->nodes[1];
	s->nodes[1] = t;

	/* One assume on n3: only n3 is re-copied, in place. */
	struct sk_pod *p = pod_on("p", NULL, "2");
	struct sk_pod *ap = sk_pod_with_node(p, "n3");
	assert_int_equal(sk_cache_assume_pod(c, ap, NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_true(s->generation > gen0);
	for (int i = 0; i < 5; i++) {
		assert_ptr_equal(sk_snapshot_get(s, names[i]), ptr[i]);
		if (i == 3) {
			assert_true(ptr[i]->generation > gens[i]);
			assert_int_equal(ptr[i]->npods, 1);
			assert_int_equal(ptr[i]->requested.milli_cpu, 2000);
		} else {
			assert_int_equal(ptr[i]->generation, gens[i]);
		}
	}
	assert_ptr_equal(ptr[0]->pods, pods_arrays[0]); /* n0 not re-copied */
	assert_string_equal(s->nodes[0]->node->name, "n1"); /* list not rebuilt */

	/* A node added: list rebuilt in tree order. */
	add_node(c, node_z("n5", "B"));
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nnodes, 6);
	const char *order2[] = { "n0", "n1", "n2", "n3", "n4", "n5" };
	for (int i = 0; i < 6; i++)
		assert_string_equal(s->nodes[i]->node->name, order2[i]);
	assert_int_equal(ptr[0]->generation, gens[0]);
	assert_ptr_equal(ptr[0]->pods, pods_arrays[0]); /* still not re-copied */

	/* A node removed: gone from the list and the index. */
	assert_int_equal(sk_cache_remove_node(c, "n2", NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nnodes, 5);
	assert_null(sk_snapshot_get(s, "n2"));
	const char *order3[] = { "n0", "n1", "n4", "n3", "n5" };
	for (int i = 0; i < 5; i++)
		assert_string_equal(s->nodes[i]->node->name, order3[i]);

	/* The snapshot is a copy: cache changes do not show until the next update. */
	assert_int_equal(sk_cache_forget_pod(c, ap, NULL), 0);
	assert_int_equal(sk_snapshot_get(s, "n3")->npods, 1);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(sk_snapshot_get(s, "n3")->npods, 0);

	sk_pod_unref(p);
	sk_pod_unref(ap);
	sk_pod_unref(p0);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

static void test_affinity_lists(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	add_node(c, node_z("n1", "A"));
	add_node(c, node_z("n2", "A"));
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nhave_affinity, 0);
	struct sk_pod *aff = fx_pod("{\"metadata\":{\"name\":\"aff\"},\"spec\":{\"nodeName\":\"n2\",\"affinity\":{\"podAntiAffinity\":{"
				    "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"z\",\"labelSelector\":{}}]}}}}");
	struct sk_pod *pref = fx_pod("{\"metadata\":{\"name\":\"pref\"},\"spec\":{\"nodeName\":\"n1\",\"affinity\":{\"podAffinity\":{"
				     "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"podAffinityTerm\":"
				     "{\"topologyKey\":\"z\",\"labelSelector\":{}}}]}}}}");
	assert_int_equal(sk_cache_add_pod(c, aff, NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nhave_affinity, 1);
	assert_string_equal(s->have_affinity[0]->node->name, "n2");
	assert_int_equal(s->nhave_required_anti_affinity, 1);
	assert_int_equal(sk_cache_add_pod(c, pref, NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nhave_affinity, 2);
	assert_int_equal(s->nhave_required_anti_affinity, 1);
	assert_int_equal(sk_cache_remove_pod(c, aff, NULL), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	assert_int_equal(s->nhave_affinity, 1);
	assert_string_equal(s->have_affinity[0]->node->name, "n1");
	assert_int_equal(s->nhave_required_anti_affinity, 0);
	sk_pod_unref(aff);
	sk_pod_unref(pref);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

static struct sk_node *node_images(const char *name, const char *images_json)
{
	char text[1024];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"images\":%s}}", name, images_json);
	return fx_node(text);
}

static void test_image_states(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	add_node(c, node_images("n1", "[{\"names\":[\"a:1\",\"a@sha256:x\"],\"sizeBytes\":100},{\"names\":[\"b:1\"],\"sizeBytes\":50}]"));
	add_node(c, node_images("n2", "[{\"names\":[\"a:1\"],\"sizeBytes\":100}]"));
	add_node(c, node_images("n3", "[]"));
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	const struct sk_node_info *n1 = sk_snapshot_get(s, "n1"), *n2 = sk_snapshot_get(s, "n2"),
				  *n3 = sk_snapshot_get(s, "n3");
	const struct sk_image_state *st = sk_snapshot_image_state(s, n1, "a:1");
	assert_non_null(st);
	assert_int_equal(st->size_bytes, 100);
	assert_int_equal(st->num_nodes, 2);
	st = sk_snapshot_image_state(s, n1, "b:1");
	assert_int_equal(st->num_nodes, 1);
	assert_int_equal(st->size_bytes, 50);
	assert_null(sk_snapshot_image_state(s, n2, "b:1"));
	assert_null(sk_snapshot_image_state(s, n3, "a:1"));
	assert_int_equal(sk_snapshot_image_state(s, n2, "a:1")->num_nodes, 2);
	assert_int_equal(sk_snapshot_image_num_nodes(s, "a@sha256:x"), 1);

	/* n2 gains b, n1 goes away */
	char *err = NULL;
	struct sk_node *n2b = node_images("n2", "[{\"names\":[\"a:1\"],\"sizeBytes\":100},{\"names\":[\"b:1\"],\"sizeBytes\":50}]");
	assert_int_equal(sk_cache_update_node(c, n2b, &err), 0);
	sk_node_unref(n2b);
	assert_int_equal(sk_cache_remove_node(c, "n1", &err), 0);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	n2 = sk_snapshot_get(s, "n2");
	assert_int_equal(sk_snapshot_image_state(s, n2, "a:1")->num_nodes, 1);
	assert_int_equal(sk_snapshot_image_state(s, n2, "b:1")->num_nodes, 1);
	assert_int_equal(sk_snapshot_image_num_nodes(s, "a@sha256:x"), 0);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

/* Random operations; after each batch the incremental snapshot equals a fresh full one. */
static void compare_snapshots(const struct sk_snapshot *a, const struct sk_snapshot *b)
{
	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->nhave_affinity, b->nhave_affinity);
	for (int i = 0; i < a->nnodes; i++) {
		const struct sk_node_info *x = a->nodes[i], *y = b->nodes[i];
		assert_ptr_equal(x->node, y->node);
		assert_int_equal(x->npods, y->npods);
		assert_int_equal(x->generation, y->generation);
		assert_int_equal(x->requested.milli_cpu, y->requested.milli_cpu);
		assert_int_equal(x->non_zero_memory, y->non_zero_memory);
		assert_int_equal(x->nused_ports, y->nused_ports);
		assert_ptr_equal(sk_snapshot_get(a, x->node->name), x);
	}
}

static void test_snapshot_random(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	struct sk_pod *pods[64] = { 0 };
	unsigned seed = 12345;
	for (int round = 0; round < 300; round++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = (seed >> 8) % 100;
		char name[32];
		if (r < 15) {
			snprintf(name, sizeof(name), "n%u", (seed >> 16) % 12);
			add_node(c, node_z(name, ((seed >> 20) % 3) == 0 ? "A" : ((seed >> 20) % 3) == 1 ? "B" : "C"));
		} else if (r < 22) {
			snprintf(name, sizeof(name), "n%u", (seed >> 16) % 12);
			(void)sk_cache_remove_node(c, name, NULL);
		} else if (r < 70) {
			unsigned k = (seed >> 16) % 64;
			if (!pods[k]) {
				char pn[16], nn[16];
				snprintf(pn, sizeof(pn), "p%u", k);
				snprintf(nn, sizeof(nn), "n%u", (seed >> 22) % 12);
				struct sk_pod *p = pod_on(pn, NULL, "100m");
				pods[k] = sk_pod_with_node(p, nn);
				sk_pod_unref(p);
				assert_int_equal(sk_cache_assume_pod(c, pods[k], NULL), 0);
			} else {
				assert_int_equal(sk_cache_remove_pod(c, pods[k], NULL), 0);
				sk_pod_unref(pods[k]);
				pods[k] = NULL;
			}
		}
		if (round % 7 == 0) {
			assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
			struct sk_snapshot *fresh = sk_snapshot_new();
			assert_int_equal(sk_cache_update_snapshot(c, fresh, NULL), 0);
			compare_snapshots(s, fresh);
			sk_snapshot_free(fresh);
		}
	}
	for (int k = 0; k < 64; k++)
		sk_pod_unref(pods[k]);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

static void test_fixture_snapshot(void **state)
{
	(void)state;
	struct sk_snapshot *s = fx_snapshot(
		fx_node_info(node_images("b", "[{\"names\":[\"x\"],\"sizeBytes\":7}]"), pod_on("p1", "b", "1"), NULL),
		fx_node_info(node_images("a", "[{\"names\":[\"x\"],\"sizeBytes\":7}]"), NULL),
		fx_node_info(NULL, pod_on("orphan", "zz", "1"), NULL), NULL);
	assert_int_equal(s->nnodes, 2);
	assert_string_equal(s->nodes[0]->node->name, "b"); /* argument order */
	assert_string_equal(s->nodes[1]->node->name, "a");
	assert_int_equal(sk_snapshot_get(s, "b")->npods, 1);
	assert_null(sk_snapshot_get(s, "zz"));
	assert_int_equal(sk_snapshot_image_state(s, s->nodes[1], "x")->num_nodes, 2);
	sk_snapshot_free(s);
}

/* Informer-style writer and scheduler-style reader/assumer on one cache at the same time. */
struct conc {
	struct sk_cache *c;
	struct sk_pod *pods[200];
};

static void *informer_thread(void *arg)
{
	struct conc *x = arg;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 100; i++)
			if (sk_cache_add_pod(x->c, x->pods[i], NULL) != 0)
				return (void *)1;
		for (int i = 0; i < 100; i++)
			if (sk_cache_remove_pod(x->c, x->pods[i], NULL) != 0)
				return (void *)1;
	}
	return NULL;
}

static void *scheduler_thread(void *arg)
{
	struct conc *x = arg;
	struct sk_snapshot *s = sk_snapshot_new();
	for (int round = 0; round < 20; round++) {
		for (int i = 100; i < 200; i++) {
			if (sk_cache_assume_pod(x->c, x->pods[i], NULL) != 0)
				return (void *)1;
			if (sk_cache_update_snapshot(x->c, s, NULL) != 0)
				return (void *)1;
			int64_t total = 0;
			for (int k = 0; k < s->nnodes; k++)
				total += s->nodes[k]->npods;
			if (total < 1)
				return (void *)1;
		}
		for (int i = 100; i < 200; i++)
			if (sk_cache_forget_pod(x->c, x->pods[i], NULL) != 0)
				return (void *)1;
	}
	sk_snapshot_free(s);
	return NULL;
}

static void test_concurrent(void **state)
{
	(void)state;
	struct conc x;
	x.c = sk_cache_new(0);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		add_node(x.c, node_z(name, i % 2 ? "A" : "B"));
	}
	for (int i = 0; i < 200; i++) {
		char pn[16], nn[16];
		snprintf(pn, sizeof(pn), "c%d", i);
		snprintf(nn, sizeof(nn), "n%d", i % 4);
		x.pods[i] = pod_on(pn, nn, "10m");
	}
	pthread_t a, b;
	assert_int_equal(pthread_create(&a, NULL, informer_thread, &x), 0);
	assert_int_equal(pthread_create(&b, NULL, scheduler_thread, &x), 0);
	void *ra = NULL, *rb = NULL;
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	assert_null(ra);
	assert_null(rb);
	assert_int_equal(sk_cache_pod_count(x.c), 0);
	for (int i = 0; i < 200; i++)
		sk_pod_unref(x.pods[i]);
	sk_cache_free(x.c);
}

/* The cache's pod keys ("<namespace>/<name>", cut to 599 bytes as snprintf cuts them): a pod is
 * found by namespace and name and the errors name it by its key, short or cut anywhere (in the
 * name, at the slash, in the namespace). */
static void test_pod_keys_table(void **state)
{
	(void)state;
	static const struct {
		int ns_len, name_len; /* 0 namespace: absent (default) */
	} cases[] = { { 0, 1 }, { 11, 3 }, { 253, 253 }, { 100, 600 }, { 598, 5 }, { 599, 3 }, { 700, 2 } };
	struct sk_cache *c = sk_cache_new(0);
	add_node(c, node_z("n1", "A"));
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char ns[800], name[800], text[2048];
		memset(ns, 'a' + (int)k, (size_t)cases[k].ns_len);
		ns[cases[k].ns_len] = '\0';
		memset(name, 'p', (size_t)cases[k].name_len);
		name[cases[k].name_len] = '\0';
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"%s\",%s%s%s\"uid\":\"uid-%zu\"},\"spec\":{\"nodeName\":\"n1\","
			 "\"containers\":[{\"name\":\"c\"}]}}",
			 name, cases[k].ns_len ? "\"namespace\":\"" : "", ns, cases[k].ns_len ? "\"," : "", k);
		struct sk_pod *p = fx_pod(text);
		char *err = NULL;
		assert_int_equal(sk_cache_assume_pod(c, p, &err), 0);
		const char *want_ns = cases[k].ns_len ? ns : "default";
		struct sk_pod *got = sk_cache_get_pod_by_key(c, want_ns, name);
		if (got != p)
			fail_msg("case %zu: not found by namespace and name", k);
		sk_pod_unref(got);
		char key[600], want[800];
		assert_true(snprintf(key, sizeof(key), "%s/%s", want_ns, name) > 0); /* cut at 599 */
		assert_true(snprintf(want, sizeof(want), "pod %s(uid-%zu) is in the cache, so can't be assumed", key, k) > 0);
		assert_int_equal(sk_cache_assume_pod(c, p, &err), -1);
		assert_string_equal(err, want);
		free(err);
		err = NULL;
		assert_int_equal(sk_cache_forget_pod(c, p, &err), 0);
		assert_null(sk_cache_get_pod_by_key(c, want_ns, name));
		sk_pod_unref(p);
	}
	sk_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_tree_order),
		cmocka_unit_test(test_pod_keys_table),
		cmocka_unit_test(test_node_tree_table),
		cmocka_unit_test(test_update_node_refs),
		cmocka_unit_test(test_assume_forget),
		cmocka_unit_test(test_confirm),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_pods_on_unknown_and_removed_nodes),
		cmocka_unit_test(test_incremental_snapshot),
		cmocka_unit_test(test_affinity_lists),
		cmocka_unit_test(test_image_states),
		cmocka_unit_test(test_snapshot_random),
		cmocka_unit_test(test_fixture_snapshot),
		cmocka_unit_test(test_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
