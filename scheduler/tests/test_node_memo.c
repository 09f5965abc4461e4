/* Per-node sums across cycles (schedkit/node_memo.h, scheduler/framework/node_memo.c): a table of cache
 * events (pod add, remove, assume, forget, update; node add, remove, relabel), each followed by a
 * snapshot update. After each step the test checks that the snapshot's have-affinity lists are
 * the nodes whose pods have (required anti-)affinity, in node order; that the memo's sums over
 * those lists equal a recount from scratch (every entry, both maps); that only the nodes the step
 * changed were recounted and the nodes that left a list dropped; and that sums handed out by the
 * previous step did not change under their holder (copy on write). The table runs twice: the memo
 * walking the lists, and the memo given the snapshot, which follows the update's change log where
 * the log covers the step (sk_node_memo_update_in) and must reach the same sums and counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedkit/node_memo.h"
#include "scheduler/backend/cache.h"
#include "scheduler/framework/node_memo_host.h"
#include "scheduler/tests/fixtures.h"

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"

static struct sk_node *mk_node(const char *name, const char *zone)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"" ZONE "\":\"%s\",\"" HOST "\":\"%s\"}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
		 name, zone, name);
	return fx_node(text);
}

/* kind: 'a' required anti-affinity on the hostname, 'p' preferred affinity on the zone, '-' none. */
static struct sk_pod *mk_pod(const char *name, const char *node, char kind)
{
	char text[1024];
	const char *aff = kind == 'a' ? ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
					"[{\"topologyKey\":\"" HOST "\",\"labelSelector\":{}}]}}"
			: kind == 'p' ? ",\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
					"[{\"weight\":3,\"podAffinityTerm\":{\"topologyKey\":\"" ZONE "\",\"labelSelector\":{}}}]}}"
				      : "";
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"x\"}},\"spec\":{\"nodeName\":\"%s\"%s}}",
		 name, node, aff);
	return fx_pod(text);
}

/* The counted contribution: per pod, +1 for (each anti term's key, the node's value) in map 0 and
 * +1 for (zone, the node's zone) in map 1. */
static int contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	int *calls = ctx;
	__atomic_add_fetch(calls, 1, __ATOMIC_RELAXED);
	const char *zone = sk_labels_get(&ni->node->labels, ZONE);
	for (int k = 0; k < ni->npods; k++) {
		const struct sk_pod *p = ni->pods[k].pod;
		for (int t = 0; t < p->nanti_affinity; t++) {
			const char *v = sk_labels_get(&ni->node->labels, p->anti_affinity[t].topology_key);
			if (v && sk_node_contribs_add(out, 0, p->anti_affinity[t].topology_key, v, 1) < 0)
				return -1;
		}
		if (zone && sk_node_contribs_add(out, 1, sk_intern(ZONE), zone, 1) < 0)
			return -1;
	}
	return 0;
}

/* a and b hold the same entries with the same counts, in both maps; a's keys cover b's map 0. */
static void assert_same_sums(const struct sk_node_sums *a, const struct sk_node_sums *b)
{
	for (int m = 0; m < SK_NODE_SUMS_MAPS; m++) {
		assert_int_equal(a->maps[m].n, b->maps[m].n);
		for (int i = 0; i < b->maps[m].cap; i++) {
			const struct sk_tpmap_entry *e = &b->maps[m].e[i];
			if (!e->key)
				continue;
			const int64_t *c = sk_tpmap_find(&a->maps[m], e->key, e->value);
			if (!c || *c != e->count) {
				print_error("map %d (%s, %s): have %lld, want %lld\n", m, e->key, e->value,
					    c ? (long long)*c : -1LL, (long long)e->count);
				fail();
			}
			bool key_known = m != 0;
			for (int k = 0; !key_known && k < a->nkeys; k++)
				key_known = strcmp(a->keys[k], e->key) == 0;
			assert_true(key_known);
		}
	}
}

/* The have-affinity lists are the snapshot's nodes with such pods, in node order. */
static void assert_lists(const struct sk_snapshot *s)
{
	int na = 0, nr = 0;
	for (int i = 0; i < s->nnodes; i++) {
		const struct sk_node_info *ni = s->nodes[i];
		int aff = 0, anti = 0;
		for (int k = 0; k < ni->npods; k++) {
			const struct sk_pod *p = ni->pods[k].pod;
			aff += p->naffinity || p->nanti_affinity || p->npreferred_affinity || p->npreferred_anti_affinity;
			anti += p->nanti_affinity > 0;
		}
		assert_int_equal(ni->npods_with_affinity, aff);
		assert_int_equal(ni->npods_with_required_anti_affinity, anti);
		if (aff) {
			assert_true(na < s->nhave_affinity);
			assert_ptr_equal(s->have_affinity[na++], ni);
		}
		if (anti) {
			assert_true(nr < s->nhave_required_anti_affinity);
			assert_ptr_equal(s->have_required_anti_affinity[nr++], ni);
		}
	}
	assert_int_equal(na, s->nhave_affinity);
	assert_int_equal(nr, s->nhave_required_anti_affinity);
}

struct step {
	const char *name;
	const char *op;    /* add, remove, assume, forget, update, node-add, node-remove, relabel, reset, none */
	const char *pod;   /* pod name (pod ops) or node name (node ops) */
	const char *node;  /* the pod's node, or a relabelled node's new zone */
	char kind;         /* the pod's affinity, see mk_pod */
	/* after the step, over have_required_anti_affinity ("anti") and over every node ("all"):
	 * nodes recounted and nodes dropped */
	int anti_recounted, anti_dropped, all_recounted, all_dropped;
	/* given the snapshot: 1 when the step's update is followed from its change log (no walk), 0
	 * when the memo must walk (nodes added or removed, a new signature, a missed update) */
	int followed;
	bool skip; /* the memos are not updated after this step (a cycle that did not count) */
};

static const struct step steps[] = {
	{ "first update counts every node of the list", "none", NULL, NULL, 0, 2, 0, 4, 0, 0, false },
	{ "nothing changed: nothing recounted", "none", NULL, NULL, 0, 0, 0, 0, 0, 1, false },
	{ "a pod without affinity added to n3: only n3 recounted", "add", "q1", "n3", '-', 0, 0, 1, 0, 1, false },
	{ "an anti-affinity pod on n3 joins the anti list", "add", "q2", "n3", 'a', 1, 0, 1, 0, 1, false },
	{ "an assumed anti-affinity pod on n4", "assume", "q3", "n4", 'a', 1, 0, 1, 0, 1, false },
	{ "forgetting it takes n4 out of the anti list", "forget", "q3", "n4", 'a', 0, 1, 1, 0, 1, false },
	{ "a preferred-affinity pod on n4: not in the anti list", "add", "q4", "n4", 'p', 0, 0, 1, 0, 1, false },
	{ "removing n1's anti-affinity pod drops n1", "remove", "p1", "n1", 'a', 0, 1, 1, 0, 1, false },
	{ "updating q1 into an anti-affinity pod", "update", "q1", "n3", 'a', 1, 0, 1, 0, 1, false },
	{ "n3's object replaced, same zone: n3 recounted", "relabel", "n3", "B", 0, 1, 0, 1, 0, 1, false },
	{ "a new node n5 (no pods)", "node-add", "n5", "B", 0, 0, 0, 1, 0, 0, false },
	{ "an anti-affinity pod on n5", "add", "q5", "n5", 'a', 1, 0, 1, 0, 1, false },
	{ "n2 relabelled to zone B: its pods count there", "relabel", "n2", "B", 0, 1, 0, 1, 0, 0, false },
	{ "an anti-affinity pod on n4, not counted this cycle", "add", "q6", "n4", 'a', 0, 0, 0, 0, 0, true },
	{ "and one on n1: two updates since, n1 and n4 recounted by a walk", "add", "q7", "n1", 'a', 2, 0, 2, 0, 0, false },
	{ "removing node n5 drops it from both lists", "node-remove", "n5", NULL, 0, 0, 1, 0, 1, 0, false },
	{ "a new signature recounts everything", "reset", NULL, NULL, 0, 4, 0, 4, 0, 0, false },
	{ "and is then kept", "none", NULL, NULL, 0, 0, 0, 0, 0, 1, false },
	{ "q7 removed: n1, without pods now, leaves the anti list", "remove", "q7", "n1", 'a', 0, 1, 1, 0, 1, false },
};

static void apply_step(struct sk_cache *c, const struct step *st)
{
	char *err = NULL;
	int rc = 0;
	if (!strcmp(st->op, "add") || !strcmp(st->op, "assume") || !strcmp(st->op, "update")) {
		struct sk_pod *p = mk_pod(st->pod, st->node, st->kind);
		rc = !strcmp(st->op, "add")	 ? sk_cache_add_pod(c, p, &err)
		     : !strcmp(st->op, "assume") ? sk_cache_assume_pod(c, p, &err)
						 : sk_cache_update_pod(c, p, &err);
		sk_pod_unref(p);
	} else if (!strcmp(st->op, "remove") || !strcmp(st->op, "forget")) {
		struct sk_pod *p = mk_pod(st->pod, st->node, st->kind);
		rc = !strcmp(st->op, "remove") ? sk_cache_remove_pod(c, p, &err) : sk_cache_forget_pod(c, p, &err);
		sk_pod_unref(p);
	} else if (!strcmp(st->op, "node-add") || !strcmp(st->op, "relabel")) {
		struct sk_node *n = mk_node(st->pod, st->node);
		rc = sk_cache_add_node(c, n, &err);
		sk_node_unref(n);
	} else if (!strcmp(st->op, "node-remove")) {
		rc = sk_cache_remove_node(c, st->pod, &err);
	}
	if (rc != 0)
		print_error("%s: %s\n", st->name, err ? err : "?");
	free(err);
	assert_int_equal(rc, 0);
}

static void check_memo(struct sk_node_memo *m, const struct sk_snapshot *snap, struct sk_node_info *const *list, int n,
		       const struct step *st, bool anti, struct sk_node_sums **held, struct sk_node_sums **held_copy)
{
	int want_recounted = anti ? st->anti_recounted : st->all_recounted;
	int want_dropped = anti ? st->anti_dropped : st->all_dropped;
	int calls = 0, fresh_calls = 0;
	struct sk_node_sums *a = snap ? sk_node_memo_update_in(m, NULL, snap, list, n, contrib, &calls)
				      : sk_node_memo_update(m, NULL, list, n, contrib, &calls);
	if (sk_node_memo_last_followed(m) != (snap && st->followed)) {
		print_error("%s (%s list, %s): followed the log %d\n", st->name, anti ? "anti" : "all",
			    snap ? "snapshot given" : "walk", sk_node_memo_last_followed(m));
		fail();
	}
	assert_non_null(a);
	struct sk_node_sums *f = sk_node_sums_count(NULL, list, n, contrib, &fresh_calls);
	assert_non_null(f);
	assert_same_sums(a, f);
	int recounted, dropped;
	sk_node_memo_last(m, &recounted, &dropped);
	if (recounted != want_recounted || calls != want_recounted || dropped != want_dropped) {
		print_error("%s (%s list, %s): recounted %d (calls %d) dropped %d, want %d and %d\n", st->name,
			    anti ? "anti" : "all", snap ? "snapshot given" : "walk", recounted, calls, dropped,
			    want_recounted, want_dropped);
		fail();
	}
	/* what the last step handed out is unchanged (its holder reads it while we count) */
	if (*held) {
		assert_same_sums(*held, *held_copy);
		sk_node_sums_unref(*held);
		sk_node_sums_unref(*held_copy);
	}
	*held = a;
	*held_copy = f;
}

static void run_steps(bool follow)
{
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	const char *zones[] = { "A", "A", "B", "B" };
	char *err = NULL;
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i + 1);
		struct sk_node *n = mk_node(name, zones[i]);
		assert_int_equal(sk_cache_add_node(c, n, &err), 0);
		sk_node_unref(n);
	}
	struct sk_pod *p1 = mk_pod("p1", "n1", 'a'), *p2 = mk_pod("p2", "n2", 'a'), *p3 = mk_pod("p3", "n2", '-');
	assert_int_equal(sk_cache_add_pod(c, p1, &err), 0);
	assert_int_equal(sk_cache_add_pod(c, p2, &err), 0);
	assert_int_equal(sk_cache_add_pod(c, p3, &err), 0);
	sk_pod_unref(p1);
	sk_pod_unref(p2);
	sk_pod_unref(p3);

	struct sk_node_memo *anti = sk_node_memo_new(), *all = sk_node_memo_new();
	assert_non_null(anti);
	assert_non_null(all);
	struct sk_node_sums *held[2] = { NULL, NULL }, *copy[2] = { NULL, NULL };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		apply_step(c, st);
		if (!strcmp(st->op, "reset")) {
			sk_node_memo_reset(anti, NULL, NULL);
			sk_node_memo_reset(all, NULL, NULL);
		}
		assert_int_equal(sk_cache_update_snapshot(c, s, &err), 0);
		assert_lists(s);
		if (st->skip)
			continue;
		const struct sk_snapshot *given = follow ? s : NULL;
		check_memo(anti, given, s->have_required_anti_affinity, s->nhave_required_anti_affinity, st, true, &held[0],
			   &copy[0]);
		check_memo(all, given, s->nodes, s->nnodes, st, false, &held[1], &copy[1]);
	}
	for (int i = 0; i < 2; i++) {
		sk_node_sums_unref(held[i]);
		sk_node_sums_unref(copy[i]);
	}
	sk_node_memo_free(anti);
	sk_node_memo_free(all);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

static void test_steps(void **state)
{
	(void)state;
	run_steps(false);
}

static void test_steps_following_the_log(void **state)
{
	(void)state;
	run_steps(true);
}

/* A list that is not one of the snapshot's (a copy of its nodes) is walked even with the snapshot
 * given; a snapshot built from node infos has no log (walked every time); a snapshot's own list is
 * followed, and stops being followed once another list was counted in between. */
static void test_follow_only_the_snapshot_lists(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	char *err = NULL;
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "m%d", i);
		struct sk_node *n = mk_node(name, "A");
		assert_int_equal(sk_cache_add_node(c, n, &err), 0);
		sk_node_unref(n);
	}
	assert_int_equal(sk_cache_update_snapshot(c, s, &err), 0);
	struct sk_node_info *copy[3];
	memcpy(copy, s->nodes, sizeof(copy));
	struct sk_node_memo *m = sk_node_memo_new();
	int calls = 0;
	struct {
		const char *name;
		struct sk_node_info *const *list;
		bool followed;
	} cases[] = {
		{ "the snapshot's nodes, first: walked", s->nodes, false },
		{ "the snapshot's nodes again: followed", s->nodes, true },
		{ "a copy of the list: walked", copy, false },
		{ "the snapshot's nodes after the copy: walked", s->nodes, false },
		{ "and then followed", s->nodes, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sk_cache_update_snapshot(c, s, &err), 0);
		struct sk_node_sums *a = sk_node_memo_update_in(m, NULL, s, cases[i].list, 3, contrib, &calls);
		assert_non_null(a);
		if (sk_node_memo_last_followed(m) != cases[i].followed) {
			print_error("%s: followed %d\n", cases[i].name, sk_node_memo_last_followed(m));
			fail();
		}
		sk_node_sums_unref(a);
	}
	struct sk_node_info *nis[2] = { fx_node_info(mk_node("x", "A"), mk_pod("px", "x", 'a'), NULL),
					fx_node_info(mk_node("y", "B"), NULL) };
	struct sk_snapshot *made = sk_snapshot_from_node_infos(nis, 2);
	assert_non_null(made);
	sk_node_memo_reset(m, NULL, NULL);
	for (int i = 0; i < 2; i++) {
		struct sk_node_sums *a = sk_node_memo_update_in(m, NULL, made, made->nodes, made->nnodes, contrib, &calls);
		assert_non_null(a);
		assert_false(sk_node_memo_last_followed(m));
		sk_node_sums_unref(a);
	}
	sk_snapshot_free(made);
	sk_node_memo_free(m);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

/* Node infos built by hand keep generation 0: never trusted, always recounted. Order changes
 * and a shorter list are followed. */
static void test_generation_zero_and_order(void **state)
{
	(void)state;
	struct sk_node_info *a = fx_node_info(mk_node("a", "A"), mk_pod("x", "a", 'a'), NULL);
	struct sk_node_info *b = fx_node_info(mk_node("b", "B"), mk_pod("y", "b", 'a'), NULL);
	struct sk_node_info *c = fx_node_info(mk_node("c", "B"), NULL);
	c->generation = 0;
	struct {
		const char *name;
		struct sk_node_info *list[3];
		int n, recounted, dropped;
	} cases[] = {
		{ "first", { a, b, c }, 3, 3, 0 },
		{ "same: only the generation-0 node", { a, b, c }, 3, 1, 0 },
		{ "reversed: nothing new", { c, b, a }, 3, 1, 0 },
		{ "b left", { c, a, NULL }, 2, 1, 1 },
		{ "b back", { a, b, c }, 3, 2, 0 },
	};
	struct sk_node_memo *m = sk_node_memo_new();
	assert_non_null(m);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int calls = 0;
		struct sk_node_sums *got = sk_node_memo_update(m, NULL, cases[i].list, cases[i].n, contrib, &calls);
		struct sk_node_sums *want = sk_node_sums_count(NULL, cases[i].list, cases[i].n, contrib, &calls);
		assert_non_null(got);
		assert_non_null(want);
		assert_same_sums(got, want);
		int recounted, dropped;
		sk_node_memo_last(m, &recounted, &dropped);
		if (recounted != cases[i].recounted || dropped != cases[i].dropped) {
			print_error("%s: recounted %d dropped %d\n", cases[i].name, recounted, dropped);
			fail();
		}
		sk_node_sums_unref(got);
		sk_node_sums_unref(want);
	}
	sk_node_memo_free(m);
	sk_node_info_free(a);
	sk_node_info_free(b);
	sk_node_info_free(c);
}

/* sk_node_sums_own copies a shared aggregate and keeps a private one. */
static void test_agg_own(void **state)
{
	(void)state;
	const char *k = sk_intern("k"), *v = sk_intern("v");
	struct sk_node_sums *a = sk_node_sums_new();
	assert_int_equal(sk_node_sums_add(a, 0, k, v, 2), 0);
	struct sk_node_sums *mine = a;
	assert_int_equal(sk_node_sums_own(&mine), 0);
	assert_ptr_equal(mine, a); /* private: kept */
	struct sk_node_sums *shared = sk_node_sums_ref(a);
	assert_int_equal(sk_node_sums_own(&shared), 0);
	assert_true(shared != a);
	assert_int_equal(sk_node_sums_add(shared, 0, k, v, -2), 0);
	assert_int_equal(shared->maps[0].n, 0);  /* down to 0: removed */
	assert_int_equal(*sk_tpmap_find(&a->maps[0], k, v), 2); /* the original is untouched */
	assert_int_equal(a->nkeys, 1);
	sk_node_sums_unref(shared);
	sk_node_sums_unref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_steps_following_the_log),
		cmocka_unit_test(test_follow_only_the_snapshot_lists),
		cmocka_unit_test(test_generation_zero_and_order),
		cmocka_unit_test(test_agg_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
