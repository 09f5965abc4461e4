/* Tests for scheduler/backend/nominator.c: nominations by node in nomination order, override and
 * no-op modes, replacement, deletion, update keeping an in-memory nomination, lookups by a name that
 * is not interned, and enough nodes to grow the node index (and to exercise its bit filter); the
 * name-pointer cache of the bit filter agrees with hashing the bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/nominator.h"
#include "scheduler/tests/fixtures.h"

static struct sk_pod *mkpod(const char *name, const char *nominated, const char *node)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},\"spec\":{%s%s%s"
		 "\"containers\":[{\"name\":\"c\"}]},\"status\":{%s%s%s}}",
		 name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "",
		 nominated ? "\"nominatedNodeName\":\"" : "", nominated ? nominated : "", nominated ? "\"" : "");
	return fx_pod(buf);
}

/* "a,b" for the pods nominated to node (a name built in a fresh buffer: never the interned one). */
static void pods_on(struct sk_nominator *n, const char *node, char *out, size_t len)
{
	char *copy = strdup(node);
	struct sk_pod **pods = NULL;
	int k = sk_nominator_pods_for_node(n, copy, &pods);
	assert_true(k >= 0);
	out[0] = '\0';
	for (int i = 0; i < k; i++) {
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "", pods[i]->name);
		sk_pod_unref(pods[i]);
	}
	free(pods);
	free(copy);
}

static void test_nominations_by_node(void **state)
{
	(void)state;
	struct sk_nominator *n = sk_nominator_new();
	struct sk_pod *a = mkpod("a", "n1", NULL), *b = mkpod("b", NULL, NULL), *c = mkpod("c", "n2", NULL);
	struct sk_pod *bound = mkpod("d", "n1", "n1");
	sk_nominator_add(n, a, NULL);          /* ModeNoop: status.nominatedNodeName */
	sk_nominator_add(n, b, "n1");          /* ModeOverride */
	sk_nominator_add(n, c, NULL);
	sk_nominator_add(n, bound, NULL);      /* bound: not nominated */
	struct sk_pod *none = mkpod("e", NULL, NULL);
	sk_nominator_add(n, none, NULL); /* nothing to nominate */
	sk_pod_unref(none);
	char got[256];
	const struct {
		const char *node, *want;
	} before[] = { { "n1", "a,b" }, { "n2", "c" }, { "n3", "" } };
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		pods_on(n, before[i].node, got, sizeof(got));
		if (strcmp(got, before[i].want))
			fail_msg("%s: got %s want %s", before[i].node, got, before[i].want);
	}
	assert_int_equal(sk_nominator_count(n), 3);
	/* a moves to n2 (after c), b is cleared by an override with "" */
	sk_nominator_add(n, a, "n2");
	sk_nominator_add(n, b, "");
	pods_on(n, "n1", got, sizeof(got));
	assert_string_equal(got, "");
	pods_on(n, "n2", got, sizeof(got));
	assert_string_equal(got, "c,a");
	assert_string_equal(sk_nominator_node_of(n, "a"), "n2");
	assert_null(sk_nominator_node_of(n, "b"));
	/* an update carrying no nominatedNodeName keeps the in-memory one */
	struct sk_pod *c2 = mkpod("c", NULL, NULL), *c0 = mkpod("c", NULL, NULL);
	sk_nominator_add(n, c, "n3");
	sk_nominator_update(n, c0, c2);
	assert_string_equal(sk_nominator_node_of(n, "c"), "n3");
	/* deleting everything empties every node; a new nomination is found again */
	sk_nominator_delete(n, "a");
	sk_nominator_delete(n, "c");
	assert_int_equal(sk_nominator_count(n), 0);
	pods_on(n, "n3", got, sizeof(got));
	assert_string_equal(got, "");
	sk_nominator_add(n, b, "n3");
	pods_on(n, "n3", got, sizeof(got));
	assert_string_equal(got, "b");
	sk_pod_unref(a);
	sk_pod_unref(b);
	sk_pod_unref(c);
	sk_pod_unref(c2);
	sk_pod_unref(c0);
	sk_pod_unref(bound);
	sk_nominator_free(n);
}

/* 3,000 pods over 1,000 nodes (the node index grows several times): every node answers its three
 * pods, in order; the other 4,000 names answer none. */
static void test_many_nodes(void **state)
{
	(void)state;
	struct sk_nominator *n = sk_nominator_new();
	char name[64], node[64], want[256], got[256];
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "p%04d", i);
		snprintf(node, sizeof(node), "node-%05d", i % 1000);
		struct sk_pod *p = mkpod(name, node, NULL);
		sk_nominator_add(n, p, NULL);
		sk_pod_unref(p);
	}
	assert_int_equal(sk_nominator_count(n), 3000);
	for (int k = 0; k < 5000; k++) {
		snprintf(node, sizeof(node), "node-%05d", k);
		want[0] = '\0';
		if (k < 1000)
			snprintf(want, sizeof(want), "p%04d,p%04d,p%04d", k, k + 1000, k + 2000);
		pods_on(n, node, got, sizeof(got));
		if (strcmp(got, want))
			fail_msg("%s: got %s want %s", node, got, want);
	}
	sk_nominator_free(n);
}

/* Names around the bit filter's 8-byte windows (shorter than, exactly, longer than 8 and 16 bytes,
 * and names that differ only where the windows do not look): each node answers its own pod only. */
static void test_name_lengths(void **state)
{
	(void)state;
	static const char *const nodes[] = { "a", "n1", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh12345678",
					     "abcdefgh-X-12345678", "abcdefgh-Y-12345678", "" };
	struct sk_nominator *n = sk_nominator_new();
	char name[16], got[64];
	int count = (int)(sizeof(nodes) / sizeof(nodes[0])) - 1; /* "" is never nominated to */
	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		struct sk_pod *p = mkpod(name, nodes[i], NULL);
		sk_nominator_add(n, p, NULL);
		sk_pod_unref(p);
	}
	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		pods_on(n, nodes[i], got, sizeof(got));
		if (strcmp(got, name))
			fail_msg("%s: got %s want %s", nodes[i], got, name);
	}
	static const char *const absent[] = { "b", "abcdefgi", "abcdefgh-Z-12345678", "abcdefgh12345679", "" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		pods_on(n, absent[i], got, sizeof(got));
		if (*got)
			fail_msg("%s: got %s want none", absent[i], got);
	}
	sk_nominator_free(n);
}

/* A node's pods are found from its first nomination on (kept per node until a removal moves the
 * list): a table of adds, overrides, moves and deletions over four nodes and eight pods, and after
 * every step each node's pods, in nomination order, against a model of the list. */
static void test_first_nomination_model(void **state)
{
	(void)state;
	static const char *const nodes[] = { "fa", "fb", "fc", "fd" };
	static const struct {
		char op;  /* 'a': nominate pod to node, 'd': delete pod */
		int pod, node;
	} steps[] = {
		{ 'a', 0, 0 }, { 'a', 1, 1 }, { 'a', 2, 0 }, { 'a', 3, 2 }, { 'a', 4, 0 }, { 'd', 0, 0 }, { 'a', 5, 0 },
		{ 'a', 2, 1 }, /* pod 2 moves from fa to fb: a removal, then an append */
		{ 'a', 6, 3 }, { 'd', 4, 0 }, { 'd', 5, 0 }, { 'a', 0, 0 }, { 'a', 7, 1 }, { 'd', 1, 0 }, { 'a', 1, 0 },
		{ 'd', 6, 0 }, { 'a', 6, 3 }, { 'a', 3, 3 }, { 'd', 2, 0 }, { 'd', 7, 0 }, { 'a', 4, 1 },
	};
	int model[64][2], nmodel = 0; /* (pod, node) in nomination order */
	struct sk_nominator *n = sk_nominator_new();
	char name[16], got[256], want[256];
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		snprintf(name, sizeof(name), "m%d", steps[s].pod);
		for (int i = 0; i < nmodel; i++) /* either op drops the pod's previous nomination */
			if (model[i][0] == steps[s].pod) {
				memmove(&model[i], &model[i + 1], (size_t)(nmodel - i - 1) * sizeof(model[0]));
				nmodel--;
				break;
			}
		if (steps[s].op == 'a') {
			struct sk_pod *p = mkpod(name, NULL, NULL);
			sk_nominator_add(n, p, nodes[steps[s].node]);
			sk_pod_unref(p);
			model[nmodel][0] = steps[s].pod;
			model[nmodel][1] = steps[s].node;
			nmodel++;
		} else {
			sk_nominator_delete(n, name);
		}
		for (int k = 0; k < 4; k++) {
			for (int round = 0; round < 2; round++) { /* the second read starts at the kept first */
				want[0] = '\0';
				for (int i = 0; i < nmodel; i++)
					if (model[i][1] == k)
						snprintf(want + strlen(want), sizeof(want) - strlen(want), "%sm%d", *want ? "," : "",
							 model[i][0]);
				pods_on(n, nodes[k], got, sizeof(got));
				if (strcmp(got, want))
					fail_msg("step %zu, %s: got %s want %s", s, nodes[k], got, want);
			}
		}
	}
	sk_nominator_free(n);
}

/* The pointer cache of sk_nominator_maybe_on against the bytes' hash, table-driven over rounds: for
 * 40,000 interned names (more than the cache's probe windows hold, so some are hashed every time)
 * and for copies of them (never cached), cold and warm, with a set of nominations, after the last
 * nomination went, and with another set: the answer is exactly whether the name's bit (from its
 * bytes) is set by a nominated name. A wrong cached hash would miss a nominated node. */
#define NNAMES 40000
static void test_pointer_cache_agrees(void **state)
{
	(void)state;
	static const struct {
		int every, offset; /* nominate names i with i % every == offset; every 0: none */
		bool copies;       /* ask with a strdup'd copy instead of the interned pointer */
	} rounds[] = {
		{ 7, 0, false }, { 7, 0, false }, { 7, 0, true }, { 0, 0, false }, { 0, 0, true },
		{ 13, 5, false }, { 13, 5, true }, { 13, 5, false },
	};
	const char **names = calloc(NNAMES, sizeof(*names));
	uint64_t *want = calloc(65536 / 64, sizeof(*want));
	assert_non_null(names);
	assert_non_null(want);
	char buf[64];
	for (int i = 0; i < NNAMES; i++) {
		snprintf(buf, sizeof(buf), "cache-node-%06d", i);
		names[i] = sk_intern(buf);
		assert_non_null(names[i]);
	}
	struct sk_nominator *n = sk_nominator_new();
	int cur_every = -1, cur_offset = -1;
	for (size_t r = 0; r < sizeof(rounds) / sizeof(rounds[0]); r++) {
		if (rounds[r].every != cur_every || rounds[r].offset != cur_offset) {
			for (int i = 0; i < NNAMES / 10; i++) { /* the previous set goes */
				snprintf(buf, sizeof(buf), "cp%06d", i);
				sk_nominator_delete(n, buf);
			}
			assert_int_equal(sk_nominator_count(n), 0);
			memset(want, 0, 65536 / 8);
			int k = 0;
			for (int i = 0; rounds[r].every && i < NNAMES && k < NNAMES / 10; i++) {
				if (i % rounds[r].every != rounds[r].offset)
					continue;
				snprintf(buf, sizeof(buf), "cp%06d", k++);
				struct sk_pod *p = mkpod(buf, names[i], NULL);
				sk_nominator_add(n, p, NULL);
				sk_pod_unref(p);
				uint32_t b = sk_nominator_name_bit_slow(names[i]);
				want[b / 64] |= 1ULL << (b % 64);
			}
			cur_every = rounds[r].every;
			cur_offset = rounds[r].offset;
		}
		int nominated = sk_nominator_count(n);
		for (int i = 0; i < NNAMES; i++) {
			char *copy = rounds[r].copies ? strdup(names[i]) : NULL;
			const char *q = copy ? copy : names[i];
			uint32_t b = sk_nominator_name_bit_slow(q);
			bool expect = nominated > 0 && (want[b / 64] >> (b % 64) & 1);
			bool got = sk_nominator_maybe_on(n, q);
			free(copy);
			if (got != expect)
				fail_msg("round %zu, %s: maybe_on %d, want %d", r, names[i], got, expect);
			if (rounds[r].every && i % rounds[r].every == rounds[r].offset && i / rounds[r].every < NNAMES / 10)
				assert_true(got); /* nominated: never a false "nobody" */
		}
	}
	sk_nominator_free(n);
	free(want);
	free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nominations_by_node),
		cmocka_unit_test(test_many_nodes),
		cmocka_unit_test(test_name_lengths),
		cmocka_unit_test(test_first_nomination_model),
		cmocka_unit_test(test_pointer_cache_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
