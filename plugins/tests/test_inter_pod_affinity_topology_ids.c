/* InterPodAffinity's topology pair ids (plugins/InterPodAffinity/topology_ids.h): a table of cache
 * events, each followed by a snapshot update as a scheduling cycle sees it, then the pair-id table
 * and a count mirror kept across the steps are checked: every node's id names its current
 * (key, value) or says it lacks the key, ids stay the same across cycles while a node's value
 * does, a relabelled node gets its new value's id, a reused node index never shows the old
 * node's ids, and the mirror equals the memo's sums after every step (recounted nodes updated
 * alone, a removed node's counts gone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/InterPodAffinity/topology_ids.h"
#include "test_pts_util.h"

#define ZONE "zone"

/* A node with the zone label (none when zone is NULL) and another label. */
static struct sk_node *mk_node(const char *name, const char *zone)
{
	char desc[128];
	snprintf(desc, sizeof(desc), "%s %s%s%sother=x", name, zone ? ZONE "=" : "", zone ? zone : "", zone ? "," : "");
	return tu_node(desc);
}

static struct sk_pod *mk_pod(const char *name, const char *node)
{
	return tu_pod(name, NULL, node, "", NULL, false, "");
}

enum op { ADD_NODE, UPDATE_NODE, REMOVE_NODE, ADD_POD };

struct step {
	enum op op;
	const char *node, *zone;
	const char *want; /* after the step: "name=zone" of every node, "name=-" for one without the key */
	bool full;        /* the mirror must be rebuilt in full (a node left, or the table changed) */
};

static const struct step steps[] = {
	{ ADD_NODE, "a", "z1", "a=z1", true },
	{ ADD_NODE, "b", "z1", "a=z1 b=z1", true },
	{ ADD_NODE, "c", "z2", "a=z1 b=z1 c=z2", true },
	{ ADD_NODE, "n", NULL, "a=z1 b=z1 c=z2 n=-", true },   /* a node without the key */
	{ ADD_POD, "a", NULL, "a=z1 b=z1 c=z2 n=-", false },   /* pods only: ids kept, counts moved */
	{ ADD_POD, "c", NULL, "a=z1 b=z1 c=z2 n=-", false },
	{ ADD_POD, "n", NULL, "a=z1 b=z1 c=z2 n=-", false },   /* counted nowhere */
	{ UPDATE_NODE, "b", "z2", "a=z1 b=z2 c=z2 n=-", true }, /* relabelled: the new value's id */
	{ ADD_POD, "b", NULL, "a=z1 b=z2 c=z2 n=-", false },
	{ REMOVE_NODE, "a", NULL, "b=z2 c=z2 n=-", true },     /* its counts leave */
	{ ADD_NODE, "d", "z3", "b=z2 c=z2 d=z3 n=-", true },    /* takes a's index */
	{ UPDATE_NODE, "n", "z1", "b=z2 c=z2 d=z3 n=z1", true }, /* gains the key */
	{ ADD_POD, "d", NULL, "b=z2 c=z2 d=z3 n=z1", false },
};

/* The contribution the mirror follows: maps[0] the node's pods, maps[1] one per node, both at
 * (zone, the node's zone); nodes recounted are noted. */
struct recorder {
	const struct sk_node_info *touched[16];
	int ntouched;
};

static int contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	struct recorder *r = ctx;
	if (r->ntouched < 16)
		r->touched[r->ntouched] = ni;
	r->ntouched++;
	const char *v = sk_labels_get(&ni->node->labels, ZONE);
	if (!v)
		return 0;
	if (ni->npods && sk_node_contribs_add(out, 0, ZONE, v, ni->npods) < 0)
		return -1;
	return sk_node_contribs_add(out, 1, ZONE, v, 1);
}

static void check_table(const struct topo_ids *ids, const struct topo_nodes *t, const struct sk_snapshot *s,
			const char *want, int kid, int step, uint32_t prev_pid[256], const char *prev_zone[256])
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", want);
	int n = 0;
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "), n++) {
		char *eq = strchr(tok, '=');
		*eq = '\0';
		const char *zone = eq + 1;
		const struct sk_node_info *ni = sk_snapshot_get(s, tok);
		assert_non_null(ni);
		const uint32_t *row = topo_row(t, ni);
		if (!row)
			fail_msg("step %d: node %s has no row", step, tok);
		uint32_t pid = row[kid];
		unsigned char c = (unsigned char)tok[0];
		if (!strcmp(zone, "-")) {
			if (pid != UINT32_MAX)
				fail_msg("step %d: node %s without the key has pair %u", step, tok, pid);
		} else {
			assert_true(pid < (uint32_t)ids->npairs);
			assert_string_equal(ids->pair_key[pid], ZONE);
			if (strcmp(ids->pair_value[pid], zone) != 0)
				fail_msg("step %d: node %s's pair is %s, want %s", step, tok, ids->pair_value[pid], zone);
			/* the same value keeps its id from one cycle to the next, and across nodes */
			if (prev_zone[c] && !strcmp(prev_zone[c], zone) && prev_pid[c] != pid)
				fail_msg("step %d: node %s's id moved from %u to %u", step, tok, prev_pid[c], pid);
			if (prev_zone[c] && strcmp(prev_zone[c], zone) != 0 && prev_zone[c][0] != '-' && prev_pid[c] == pid)
				fail_msg("step %d: relabelled node %s kept id %u", step, tok, pid);
		}
		prev_pid[c] = pid;
		prev_zone[c] = strcmp(zone, "-") ? ids->pair_value[pid] : "-";
	}
	assert_int_equal(s->nnodes, n);
}

/* The mirror equals the sums at every pair. */
static void check_mirror(const struct topo_ids *ids, const struct topo_dense *d, const struct sk_node_sums *sums, int step)
{
	int nonzero = 0;
	for (int m = 0; m < SK_NODE_SUMS_MAPS; m++) {
		for (int pid = 0; pid < d->npairs; pid++) {
			const int64_t *c = sk_tpmap_find(&sums->maps[m], ids->pair_key[pid], ids->pair_value[pid]);
			if (d->count[m][pid] != (c ? *c : 0))
				fail_msg("step %d: map %d pair %s=%s: mirror %lld, sums %lld", step, m, ids->pair_key[pid],
					 ids->pair_value[pid], (long long)d->count[m][pid], (long long)(c ? *c : 0));
			nonzero += c != NULL;
		}
	}
	/* every entry of the sums has a pair id */
	assert_int_equal(nonzero, sums->maps[0].n + sums->maps[1].n);
}

/* What a sequence of cycles keeps: the cache and its snapshot, a memo, the pair ids and a mirror. */
struct world {
	struct sk_cache *c;
	struct sk_snapshot *s;
	struct sk_node_memo *memo;
	struct topo_ids ids;
	struct topo_mirror mirror;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->c = sk_cache_new(0);
	w->s = sk_snapshot_new();
	w->memo = sk_node_memo_new();
	assert_int_equal(topo_ids_init(&w->ids), 0);
}

static void world_free(struct world *w)
{
	topo_mirror_clear(&w->mirror);
	topo_ids_destroy(&w->ids);
	sk_node_memo_free(w->memo);
	sk_snapshot_free(w->s);
	sk_cache_free(w->c);
}

static void test_pair_ids_and_mirror(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	struct sk_cache *c = w.c;
	struct sk_snapshot *s = w.s;
	struct sk_node_memo *memo = w.memo;
	assert_true(pthread_mutex_lock(&w.ids.mu) == 0);
	int kid = topo_key_id(&w.ids, ZONE);
	assert_int_equal(kid, 0);
	assert_int_equal(topo_key_id(&w.ids, ZONE), 0);
	uint32_t prev_pid[256] = { 0 };
	const char *prev_zone[256] = { 0 };
	struct sk_node_info *gone = NULL; /* a clone of the removed node: its index and serial */
	int gone_index = 0, npods = 0;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		struct sk_node *n = NULL;
		struct sk_pod *p = NULL;
		char pname[16];
		switch (st->op) {
		case ADD_NODE:
			assert_int_equal(sk_cache_add_node(c, n = mk_node(st->node, st->zone), NULL), 0);
			break;
		case UPDATE_NODE:
			assert_int_equal(sk_cache_update_node(c, n = mk_node(st->node, st->zone), NULL), 0);
			break;
		case REMOVE_NODE:
			gone = sk_node_info_clone(sk_snapshot_get(s, st->node));
			gone_index = gone->index;
			assert_int_equal(sk_cache_remove_node(c, st->node, NULL), 0);
			break;
		case ADD_POD:
			snprintf(pname, sizeof(pname), "p%d", npods++);
			assert_int_equal(sk_cache_add_pod(c, p = mk_pod(pname, st->node), NULL), 0);
			break;
		}
		sk_node_unref(n);
		sk_pod_unref(p);
		assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);

		uint64_t epoch = w.ids.epoch;
		struct topo_nodes *t = topo_nodes_get(&w.ids, s);
		assert_non_null(t);
		assert_int_equal(w.ids.epoch != epoch, st->full); /* a new table only when the nodes changed */
		check_table(&w.ids, t, s, st->want, kid, (int)i, prev_pid, prev_zone);
		if (st->op == ADD_NODE && gone) {
			/* the new node has the removed one's index; the removed one's row is gone */
			assert_int_equal(sk_snapshot_get(s, st->node)->index, gone_index);
			assert_null(topo_row(t, gone));
		}

		struct recorder r = { .ntouched = 0 };
		struct sk_node_sums *sums = sk_node_memo_update(memo, NULL, s->nodes, s->nnodes, contrib, &r);
		assert_non_null(sums);
		int recounted, dropped;
		sk_node_memo_last(memo, &recounted, &dropped);
		assert_int_equal(dropped > 0, st->op == REMOVE_NODE);
		if (!st->full) /* only the node that gained a pod was recounted */
			assert_int_equal(r.ntouched, 1);
		struct topo_dense *d = topo_mirror_update(&w.ids, &w.mirror, t, sums, r.touched, r.ntouched < 16 ? r.ntouched : 0,
							  dropped > 0 || r.ntouched >= 16);
		assert_non_null(d);
		check_mirror(&w.ids, d, sums, (int)i);
		/* a cycle still holding the mirror keeps what it read: the next update copies */
		topo_dense_unref(d);
		sk_node_sums_unref(sums);
		topo_nodes_unref(t);
	}
	/* z1 lost a (removed) and b (relabelled) and gained n: 1 node, 0 pods there now */
	struct topo_nodes *t = topo_nodes_get(&w.ids, s);
	const uint32_t *row = topo_row(t, sk_snapshot_get(s, "n"));
	assert_non_null(row);
	assert_int_equal(w.mirror.d->count[1][row[kid]], 1);
	assert_int_equal(w.mirror.d->count[0][row[kid]], 1); /* n's own pod, counted since it has the key */
	topo_nodes_unref(t);
	sk_node_info_free(gone);
	pthread_mutex_unlock(&w.ids.mu);
	world_free(&w);
}

/* A mirror shared with a cycle is never written: the next update works on a copy. */
static void test_shared_mirror_is_copied(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	struct sk_cache *c = w.c;
	struct sk_snapshot *s = w.s;
	struct sk_node_memo *memo = w.memo;
	topo_key_id(&w.ids, ZONE);
	struct sk_node *n = mk_node("a", "z1");
	assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
	sk_node_unref(n);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	struct topo_nodes *t = topo_nodes_get(&w.ids, s);
	struct recorder r = { .ntouched = 0 };
	struct sk_node_sums *sums = sk_node_memo_update(memo, NULL, s->nodes, s->nnodes, contrib, &r);
	struct topo_dense *held = topo_mirror_update(&w.ids, &w.mirror, t, sums, r.touched, r.ntouched, true);
	sk_node_sums_unref(sums);
	const uint32_t *row = topo_row(t, sk_snapshot_get(s, "a"));
	assert_int_equal(held->count[0][row[0]], 0);

	struct sk_pod *p = mk_pod("p", "a");
	assert_int_equal(sk_cache_add_pod(c, p, NULL), 0);
	sk_pod_unref(p);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	r.ntouched = 0;
	sums = sk_node_memo_update(memo, NULL, s->nodes, s->nnodes, contrib, &r);
	struct topo_dense *next = topo_mirror_update(&w.ids, &w.mirror, t, sums, r.touched, r.ntouched, false);
	assert_ptr_not_equal(next, held);
	assert_int_equal(held->count[0][row[0]], 0); /* what the old cycle reads did not move */
	assert_int_equal(next->count[0][row[0]], 1);
	topo_dense_unref(next);
	topo_dense_unref(held);
	sk_node_sums_unref(sums);
	topo_nodes_unref(t);
	world_free(&w);
}

/* At most TOPO_MAX_KEYS keys get ids; a snapshot without numbering gets no table. */
static void test_limits(void **state)
{
	(void)state;
	struct topo_ids ids;
	assert_int_equal(topo_ids_init(&ids), 0);
	static const char *const keys[TOPO_MAX_KEYS + 1] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8" };
	for (int i = 0; i < TOPO_MAX_KEYS; i++)
		assert_int_equal(topo_key_id(&ids, keys[i]), i);
	assert_int_equal(topo_key_id(&ids, keys[TOPO_MAX_KEYS]), -1);
	char copy[8];
	snprintf(copy, sizeof(copy), "%s", "k3"); /* another pointer to an equal key */
	assert_int_equal(topo_key_id(&ids, copy), 3);
	struct sk_snapshot *s = sk_snapshot_new();
	assert_null(topo_nodes_get(&ids, s)); /* empty: index_end 0 */
	sk_snapshot_free(s);
	topo_ids_destroy(&ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_ids_and_mirror),
		cmocka_unit_test(test_shared_mirror_is_copied),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
