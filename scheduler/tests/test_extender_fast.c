/* Tests for the extender answers read without cJSON (scheduler/framework/extender_fast.c): a
 * table of filter and prioritize bodies, each with whether the fast path must decide it (so a
 * fast path that always gave up would fail) and the same result as the cJSON path
 * (sk_extender_filter_decode / sk_extender_prioritize_decode); then every body of the table
 * mutated thousands of times (bytes replaced, dropped, doubled, with a fixed seed): whenever the
 * fast path decides, the cJSON path must agree exactly, and must have succeeded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/framework/extender_priv.h"
#include "scheduler/tests/fixtures.h"

#define NN 3

static struct sk_extender *ext[2]; /* [1]: nodeCacheCapable */
static struct sk_node_info *nodes[NN];

static int setup(void **state)
{
	(void)state;
	static const char *const cfg[2] = {
		"{\"urlPrefix\":\"http://127.0.0.1:1/x\",\"filterVerb\":\"filter\",\"prioritizeVerb\":\"p\",\"weight\":2}",
		"{\"urlPrefix\":\"http://127.0.0.1:1/x\",\"filterVerb\":\"filter\",\"prioritizeVerb\":\"p\",\"weight\":3,"
		"\"nodeCacheCapable\":true}",
	};
	for (int c = 0; c < 2; c++) {
		cJSON *j = cJSON_Parse(cfg[c]);
		char *err = NULL;
		ext[c] = sk_extender_new(j, "extenders[0]", &err);
		cJSON_Delete(j);
		assert_non_null(ext[c]);
	}
	static const char *const names[NN] = { "n1", "n2", "n3" };
	for (int i = 0; i < NN; i++) {
		char text[128];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"}}", names[i]);
		struct sk_node *n = fx_node(text);
		assert_non_null(n);
		nodes[i] = sk_node_info_new(n);
		sk_node_unref(n);
		assert_non_null(nodes[i]);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++)
		sk_extender_free(ext[c]);
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nodes[i]);
	return 0;
}

static const struct sk_node_info *const *NODES(void) { return (const struct sk_node_info *const *)nodes; }

/* The cJSON path's filter result: rc 0 decoded, -1 error, -2 not JSON. */
static int slow_filter(const struct sk_extender *e, const char *body, struct sk_extender_filter_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *end = NULL;
	cJSON *res = cJSON_ParseWithOpts(body, &end, 0);
	if (!res)
		return -2;
	char *err = NULL;
	int rc = sk_extender_filter_decode(e, res, NODES(), NN, r, &err);
	free(err);
	cJSON_Delete(res);
	return rc;
}

static int fast_filter(const struct sk_extender *e, const char *body, struct sk_extender_filter_result *r)
{
	memset(r, 0, sizeof(*r));
	r->nodes = malloc(NN * sizeof(*r->nodes));
	assert_non_null(r->nodes);
	int rc = sk_extender_filter_fast(e, body, NODES(), NN, r);
	assert_true(rc == 0 || rc == 1);
	if (rc == 0)
		assert_int_equal(r->nfailed, 0);
	return rc;
}

/* When the fast path decided, the cJSON path succeeded with the same nodes and failures. */
static int check_filter(const struct sk_extender *e, const char *body)
{
	struct sk_extender_filter_result f, s;
	int fr = fast_filter(e, body, &f), sr = slow_filter(e, body, &s);
	if (fr == 1) {
		if (sr != 0)
			fail_msg("fast path decided a body the cJSON path rejects (%d): %s", sr, body);
		assert_int_equal(f.n, s.n);
		for (int i = 0; i < f.n; i++)
			assert_ptr_equal(f.nodes[i], s.nodes[i]);
		assert_int_equal(f.nfailed, s.nfailed);
		for (int i = 0; i < f.nfailed; i++) {
			assert_string_equal(f.failed[i].node, s.failed[i].node);
			assert_string_equal(f.failed[i].message, s.failed[i].message);
			assert_int_equal(f.failed[i].unresolvable, s.failed[i].unresolvable);
		}
	}
	sk_extender_filter_result_free(&f);
	sk_extender_filter_result_free(&s);
	return fr;
}

static int check_prioritize(const struct sk_extender *e, const char *body)
{
	int64_t f[NN] = { 5, 6, 7 }, s[NN] = { 5, 6, 7 };
	int fr = sk_extender_prioritize_fast(e, body, NODES(), NN, f);
	assert_true(fr == 0 || fr == 1);
	if (fr == 0) {
		assert_int_equal(f[0], 5); /* untouched when it gives up */
		assert_int_equal(f[1], 6);
		assert_int_equal(f[2], 7);
		return 0;
	}
	const char *end = NULL;
	cJSON *res = cJSON_ParseWithOpts(body, &end, 0);
	if (!res)
		fail_msg("fast path decided a body that is not JSON for cJSON: %s", body);
	char *err = NULL;
	int sr = sk_extender_prioritize_decode(e, res, NODES(), NN, s, &err);
	free(err);
	cJSON_Delete(res);
	if (sr != 0)
		fail_msg("fast path decided a body the cJSON path rejects: %s", body);
	for (int i = 0; i < NN; i++)
		assert_int_equal(f[i], s[i]);
	return 1;
}

struct fcase {
	int cache;      /* ext[cache] */
	bool fast;      /* the fast path must decide it */
	const char *body;
	const char *kept; /* fast cases: the kept node names, comma-separated */
	int nfailed;
};

static const struct fcase FILTER[] = {
	{ 1, true, "{\"NodeNames\":[\"n1\",\"n3\"],\"FailedNodes\":{\"n2\":\"no\"},\"Error\":\"\"}", "n1,n3", 1 },
	{ 1, true, " {\"NodeNames\" : [ \"n1\" , \"n2\" ] }\r\n", "n1,n2", 0 },
	{ 1, true, "{\"nodenames\":[\"n2\"]}", "n2", 0 },
	{ 1, true, "{\"NodeNames\":[\"n1\"],\"nodenames\":[\"n2\"]}", "n1", 0 },
	{ 1, true, "{\"nodenames\":[\"n2\"],\"NodeNames\":[\"n1\"]}", "n1", 0 },
	{ 1, true, "{\"NodeNames\":[\"n3\",\"n1\",\"n2\"]}", "n3,n1,n2", 0 },
	{ 1, true, "{\"NodeNames\":[\"n1\"]} trailing text", "n1", 0 },
	{ 1, true, "{\"FailedAndUnresolvableNodes\":{\"n1\":\"x\"},\"FailedNodes\":{\"n1\":\"y\",\"n2\":3}}", "", 2 },
	{ 1, true, "{}", "", 0 },
	{ 1, true, "{\"NodeNames\":null,\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n2\"}}]}}", "n2", 0 },
	{ 1, true, "{\"NodeNames\":[\"n1\"],\"Error\":null,\"x\":[1,-2.5e3,true,false,null,{\"a\":\"\\u00e9\\ud83d\\ude00\"}]}",
	  "n1", 0 },
	{ 0, true, "{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n2\",\"x\":[1,{\"a\":null}]}}]}}", "n2", 0 },
	{ 0, true, "{\"Nodes\":{\"Items\":[{\"Metadata\":{\"Name\":\"n1\"}}]},\"NodeNames\":[\"n2\"]}", "n1", 0 },
	{ 0, true, "{\"NodeNames\":[\"n2\"]}", "", 0 },
	{ 0, true, "{\"Nodes\":{\"items\":5}}", "", 0 },
	/* left to cJSON */
	{ 1, false, "{\"Error\":\"boom\"}", NULL, 0 },
	{ 1, false, "{\"NodeNames\":[\"zz\"]}", NULL, 0 },
	{ 1, false, "{\"NodeNames\":[\"n\\u0031\"]}", NULL, 0 },
	{ 1, false, "{\"FailedNodes\":{\"n1\":\"a\\\"b\"}}", NULL, 0 },
	{ 1, false, "{\"Failed\\u004eodes\":{\"n1\":\"a\"}}", NULL, 0 },
	{ 1, false, "[]", NULL, 0 },
	{ 1, false, "{\"NodeNames\":[01]}", NULL, 0 },
	{ 1, false, "{\"NodeNames\":[\"n1\"],\"x\":\"\\ud800\"}", NULL, 0 },
	{ 1, false, "{\"NodeNames\":[\"n1\",]}", NULL, 0 },
	{ 1, false, "", NULL, 0 },
	{ 0, false, "{\"Nodes\":{\"items\":[{\"metadata\":{}}]}}", NULL, 0 },
	{ 0, false, "{\"Nodes\":{\"items\":[\"n1\"]}}", NULL, 0 },
};

struct pcase {
	bool fast;
	const char *body;
	int64_t want[NN]; /* fast cases, weight 2 x 10, from 5, 6, 7 */
};

static const struct pcase PRIO[] = {
	{ true, "[{\"Host\":\"n1\",\"Score\":7},{\"Host\":\"n3\",\"Score\":-2}]", { 5 + 140, 6, 7 - 40 } },
	{ true, "null", { 5, 6, 7 } },
	{ true, "[]", { 5, 6, 7 } },
	{ true, "[{\"host\":\"n2\",\"score\":3},5,{\"Score\":4},{\"Host\":\"zz\",\"Score\":1},{\"Host\":\"n1\",\"Score\":\"x\"}]",
	  { 5, 6 + 60, 7 } },
	{ true, "[{\"Host\":\"n1\",\"Score\":2},{\"Host\":\"n1\",\"Score\":3},{\"Host\":\"n2\"}]", { 5 + 100, 6, 7 } },
	{ true, "[{\"Host\":\"n2\",\"Score\":null},{\"Host\":7,\"Score\":1},{\"Host\":\"n3\",\"Score\":1,\"x\":\"\\ud83d\\ude00\"}]",
	  { 5, 6, 7 + 20 } },
	{ true, "[{\"Host\":\"n1\",\"Score\":999999999999999}]", { 5 + 999999999999999 * 20, 6, 7 } },
	{ false, "[{\"Host\":\"n1\",\"Score\":7.0}]", { 0 } },
	{ false, "[{\"Host\":\"n1\",\"Score\":1234567890123456}]", { 0 } },
	{ false, "[{\"Host\":\"n1\",\"Score\":1e2}]", { 0 } },
	{ false, "{\"Host\":\"n1\"}", { 0 } },
	{ false, "[{\"Host\":\"n\\u0031\",\"Score\":1}]", { 0 } },
	{ false, "[{\"Host\":\"n1\",\"Score\":1,\"x\":\"\\ud800\"}]", { 0 } },
	{ false, "[{\"Host\":\"n1\",\"Score\":+1}]", { 0 } },
	{ false, "[{\"Host\":\"n1\" \"Score\":1}]", { 0 } },
};

static void test_filter_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(FILTER) / sizeof(FILTER[0]); i++) {
		const struct fcase *c = &FILTER[i];
		int fr = check_filter(ext[c->cache], c->body);
		if (fr != (c->fast ? 1 : 0))
			fail_msg("case %zu: fast path %s: %s", i, fr ? "decided" : "gave up", c->body);
		if (!c->fast)
			continue;
		struct sk_extender_filter_result f;
		fast_filter(ext[c->cache], c->body, &f);
		char kept[64] = "";
		for (int k = 0; k < f.n; k++)
			snprintf(kept + strlen(kept), sizeof(kept) - strlen(kept), "%s%s", k ? "," : "", f.nodes[k]->node->name);
		assert_string_equal(kept, c->kept);
		assert_int_equal(f.nfailed, c->nfailed);
		sk_extender_filter_result_free(&f);
	}
}

static void test_prioritize_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(PRIO) / sizeof(PRIO[0]); i++) {
		const struct pcase *c = &PRIO[i];
		int fr = check_prioritize(ext[0], c->body);
		if (fr != (c->fast ? 1 : 0))
			fail_msg("case %zu: fast path %s: %s", i, fr ? "decided" : "gave up", c->body);
		if (!c->fast)
			continue;
		int64_t add[NN] = { 5, 6, 7 };
		assert_int_equal(sk_extender_prioritize_fast(ext[0], c->body, NODES(), NN, add), 1);
		for (int k = 0; k < NN; k++)
			assert_int_equal(add[k], c->want[k]);
	}
}

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

/* body with a few random edits from an alphabet of JSON's own characters */
static void mutate(const char *in, char *out, size_t cap)
{
	static const char alpha[] = "{}[]\",:\\ 0123456789-+.eEuntrfalsd\x01n1n2n3HostScoreNodeNamesFailed";
	size_t n = strlen(in);
	if (n + 8 > cap)
		n = cap - 8;
	memcpy(out, in, n);
	out[n] = '\0';
	int edits = 1 + (int)(next_rand() % 3);
	for (int e = 0; e < edits && n > 0; e++) {
		size_t at = next_rand() % n;
		switch (next_rand() % 3) {
		case 0: /* replace */
			out[at] = alpha[next_rand() % (sizeof(alpha) - 1)];
			break;
		case 1: /* drop */
			memmove(out + at, out + at + 1, n - at);
			n--;
			break;
		default: /* double */
			memmove(out + at + 1, out + at, n - at + 1);
			n++;
			break;
		}
	}
}

static void test_mutations_agree(void **state)
{
	(void)state;
	char buf[512];
	int decided = 0, total = 0;
	for (int round = 0; round < 400; round++) {
		for (size_t i = 0; i < sizeof(FILTER) / sizeof(FILTER[0]); i++) {
			mutate(FILTER[i].body, buf, sizeof(buf));
			decided += check_filter(ext[FILTER[i].cache], buf);
			decided += check_filter(ext[1 - FILTER[i].cache], buf);
			total += 2;
		}
		for (size_t i = 0; i < sizeof(PRIO) / sizeof(PRIO[0]); i++) {
			mutate(PRIO[i].body, buf, sizeof(buf));
			decided += check_prioritize(ext[0], buf);
			total++;
		}
	}
	print_message("fast path decided %d of %d mutated bodies\n", decided, total);
	/* the mutations keep many bodies valid: the comparison covered the fast path */
	assert_true(decided > total / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_table),
		cmocka_unit_test(test_prioritize_table),
		cmocka_unit_test(test_mutations_agree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
