/* The snapshot's node numbering (sk_node_info.index / index_serial, sk_snapshot.index_end /
 * index_version / nodes_version; plugin ABI 1.2, docs/plugins.md "Per-node plugin data"): a table
 * of cache events, each followed by a snapshot update, and what the numbering must be after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node *mk_node(const char *name, const char *cpu)
{
	char text[256];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"pods\":\"110\"}}}",
		 name, cpu);
	return fx_node(text);
}

static struct sk_pod *mk_pod(const char *name, const char *node)
{
	char text[256];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"nodeName\":\"%s\"}}", name,
		 name, node);
	return fx_pod(text);
}

enum op { ADD_NODE, UPDATE_NODE, REMOVE_NODE, ADD_POD, NOTHING };

struct step {
	enum op op;
	const char *node;
	/* after the update: */
	bool index_version_changes, nodes_version_changes;
	const char *same_index_as; /* this node now has the index `node` had before the step ("" = none) */
	const char *indexes;       /* "name=index ..." of every node */
	int index_end;
};

static const struct step steps[] = {
	{ ADD_NODE, "a", true, true, NULL, "a=1", 2 },
	{ ADD_NODE, "b", true, true, NULL, "a=1 b=2", 3 },
	{ ADD_NODE, "c", true, true, NULL, "a=1 b=2 c=3", 4 },
	/* pods come and go: no version changes, indexes stay */
	{ ADD_POD, "b", false, false, NULL, "a=1 b=2 c=3", 4 },
	{ NOTHING, NULL, false, false, NULL, "a=1 b=2 c=3", 4 },
	/* a new node object: only nodes_version */
	{ UPDATE_NODE, "a", false, true, NULL, "a=1 b=2 c=3", 4 },
	/* a removed node's index goes to the next node, with a new serial */
	{ REMOVE_NODE, "b", true, true, NULL, "a=1 c=3", 4 },
	{ ADD_NODE, "d", true, true, NULL, "a=1 c=3 d=2", 4 },
	{ ADD_NODE, "e", true, true, NULL, "a=1 c=3 d=2 e=4", 5 },
};

static int index_of(const struct sk_snapshot *s, const char *name)
{
	const struct sk_node_info *ni = sk_snapshot_get(s, name);
	return ni ? ni->index : -1;
}

static void check_indexes(const struct sk_snapshot *s, const char *want, int step)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", want);
	int n = 0;
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "), n++) {
		char *eq = strchr(tok, '=');
		*eq = '\0';
		if (index_of(s, tok) != atoi(eq + 1))
			fail_msg("step %d: node %s has index %d, want %s", step, tok, index_of(s, tok), eq + 1);
	}
	assert_int_equal(s->nnodes, n);
}

static void test_numbering(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *s = sk_snapshot_new();
	uint32_t serial_b = 0;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *t = &steps[i];
		uint64_t iv = s->index_version, nv = s->nodes_version;
		struct sk_node *n = NULL;
		struct sk_pod *p = NULL;
		switch (t->op) {
		case ADD_NODE:
			n = mk_node(t->node, "4");
			assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
			break;
		case UPDATE_NODE:
			n = mk_node(t->node, "8");
			assert_int_equal(sk_cache_update_node(c, n, NULL), 0);
			break;
		case REMOVE_NODE:
			assert_int_equal(sk_cache_remove_node(c, t->node, NULL), 0);
			break;
		case ADD_POD:
			p = mk_pod("p", t->node);
			assert_int_equal(sk_cache_add_pod(c, p, NULL), 0);
			break;
		case NOTHING:
			break;
		}
		sk_node_unref(n);
		sk_pod_unref(p);
		assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
		if ((s->index_version != iv) != t->index_version_changes)
			fail_msg("step %zu: index_version %s", i, t->index_version_changes ? "kept" : "changed");
		if ((s->nodes_version != nv) != t->nodes_version_changes)
			fail_msg("step %zu: nodes_version %s", i, t->nodes_version_changes ? "kept" : "changed");
		check_indexes(s, t->indexes, (int)i);
		assert_int_equal(s->index_end, t->index_end);
		for (int k = 0; k < s->nnodes; k++) {
			assert_int_not_equal(s->nodes[k]->index_serial, 0);
			assert_int_equal((uintptr_t)s->nodes[k] % 64, 0); /* index shares a line with requested */
			for (int j = 0; j < k; j++)
				assert_int_not_equal(s->nodes[k]->index_serial, s->nodes[j]->index_serial);
		}
		if (t->op == ADD_NODE && !strcmp(t->node, "b"))
			serial_b = sk_snapshot_get(s, "b")->index_serial;
		if (t->op == ADD_NODE && !strcmp(t->node, "d")) /* b's index, not b's serial */
			assert_int_not_equal(sk_snapshot_get(s, "d")->index_serial, serial_b);
		if (t->op == ADD_POD) /* the pod is there: the node info changed, its numbering did not */
			assert_int_equal(sk_snapshot_get(s, t->node)->npods, 1);
	}
	/* a clone is the same node of the same snapshot */
	struct sk_node_info *cl = sk_node_info_clone(sk_snapshot_get(s, "c"));
	assert_int_equal(cl->index, 3);
	assert_int_equal(cl->index_serial, sk_snapshot_get(s, "c")->index_serial);
	sk_node_info_free(cl);
	/* the cache's own node infos are not numbered */
	struct sk_node_info *own = sk_cache_node_info(c, "a");
	assert_int_equal(own->index, 0);
	assert_int_equal(own->index_serial, 0);
	sk_node_info_free(own);
	sk_snapshot_free(s);
	sk_cache_free(c);
}

/* A snapshot following another cache starts its numbering over (new serials); one made from node
 * infos numbers them in order. */
static void test_other_cache_and_from_node_infos(void **state)
{
	(void)state;
	struct sk_cache *c1 = sk_cache_new(0), *c2 = sk_cache_new(0);
	struct sk_node *n = mk_node("x", "4");
	assert_int_equal(sk_cache_add_node(c1, n, NULL), 0);
	assert_int_equal(sk_cache_add_node(c2, n, NULL), 0);
	sk_node_unref(n);
	struct sk_snapshot *s = sk_snapshot_new();
	assert_int_equal(sk_cache_update_snapshot(c1, s, NULL), 0);
	uint32_t serial = sk_snapshot_get(s, "x")->index_serial;
	uint64_t iv = s->index_version;
	assert_int_equal(sk_cache_update_snapshot(c2, s, NULL), 0);
	assert_int_equal(index_of(s, "x"), 1);
	assert_int_not_equal(sk_snapshot_get(s, "x")->index_serial, serial);
	assert_true(s->index_version != iv);
	sk_snapshot_free(s);
	sk_cache_free(c1);
	sk_cache_free(c2);

	struct sk_snapshot *f = fx_snapshot(fx_node_info(mk_node("p", "1"), NULL), fx_node_info(mk_node("q", "1"), NULL), NULL);
	assert_int_equal(index_of(f, "p"), 1);
	assert_int_equal(index_of(f, "q"), 2);
	assert_int_equal(f->index_end, 3);
	assert_true(f->index_version != 0);
	sk_snapshot_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbering),
		cmocka_unit_test(test_other_cache_and_from_node_infos),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
