/* Tests for kube/jsonspan.c: a top-level member's value bytes, found without a tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/jsonspan.h"

static void test_member_span(void **state)
{
	(void)state;
	static const struct { const char *json, *key, *want; } cases[] = {
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":1}}", "object", "{\"a\":1}" },
		{ "{\"object\":{\"a\":[1,{\"b\":\"}\"}]},\"type\":\"MODIFIED\"}", "object", "{\"a\":[1,{\"b\":\"}\"}]}" },
		{ " { \"type\" : \"X\" , \"object\" : {\"s\":\"q\\\"}\"} } ", "object", "{\"s\":\"q\\\"}\"}" },
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":1}}", "type", "\"ADDED\"" },
		{ "{\"n\":-1.5e3,\"t\":true,\"z\":null}", "t", "true" },
		{ "{\"n\":-1.5e3,\"t\":true,\"z\":null}", "n", "-1.5e3" },
		{ "{\"n\":-1.5e3,\"t\":true,\"z\":null}", "z", "null" },
		{ "{\"inner\":{\"object\":1},\"x\":2}", "object", NULL },   /* only top-level members */
		{ "{\"objects\":1}", "object", NULL },
		{ "{\"type\":\"ADDED\"}", "object", NULL },
		{ "[{\"object\":1}]", "object", NULL },
		{ "{\"object\":{\"a\":1}", "object", NULL },                  /* unterminated */
		{ "{\"object\":\"abc", "object", NULL },
		{ "{\"ob", "object", NULL },
		{ "", "object", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = 0;
		const char *got = kube_json_member_span(cases[i].json, strlen(cases[i].json), cases[i].key, &len);
		if (!cases[i].want) {
			if (got)
				fail_msg("case %zu: got \"%.*s\", want none", i, (int)len, got);
			continue;
		}
		if (!got)
			fail_msg("case %zu: got none, want %s", i, cases[i].want);
		assert_int_equal(len, strlen(cases[i].want));
		assert_memory_equal(got, cases[i].want, len);
	}
}


/* kube_json_valid: what it passes cJSON parses to the same text; what it refuses is either not
 * JSON (cJSON refuses it too) or JSON it leaves to cJSON (escaped keys, \u0000, surrogates,
 * deep nesting). */
static void test_valid(void **state)
{
	(void)state;
	static const struct { const char *json; int valid; int cjson; } cases[] = {
		{ "{}", 1, 1 },
		{ " {\"a\":[1,-0.5e+3,true,false,null,\"x\\n\\u00e9\"]} ", 1, 1 },
		{ "{\"a\":{\"b\":[[],{}]},\"c\":\"\\\"\\\\\\/\\b\\f\\r\\t\"}", 1, 1 },
		{ "[1,2]", 1, 1 },
		{ "\"s\"", 1, 1 },
		{ "0", 1, 1 },
		{ "{\"a\":1,}", 0, 0 },           /* trailing comma */
		{ "{\"a\" 1}", 0, 0 },
		{ "{\"a\":tru}", 0, 0 },
		{ "{\"a\":\"x}", 0, 0 },
		{ "{\"a\":\"\\x\"}", 0, 0 },      /* bad escape */
		{ "{\"a\":\"\\u12g4\"}", 0, 1 },    /* cJSON 1.7.15 takes a bad hex digit */
		{ "{\"a\":[1,2}", 0, 0 },
		{ "{\"a\":1}}", 0, 1 },           /* trailing bytes: cJSON_ParseWithLength ignores them */
		{ "{\"a\":01}", 0, 1 },           /* leading zero: cJSON (strtod) takes it */
		{ "{\"a\":+1}", 0, 0 },
		{ "{\"a\":1.}", 0, 1 },
		{ "{\"a\":.5}", 0, 0 },
		{ "{\"a\":\"tab\there\"}", 0, 1 },  /* a raw control character */
		{ "{\"k\\u0065y\":1}", 0, 1 },    /* an escaped key */
		{ "{\"a\":\"\\u0000\"}", 0, 1 },
		{ "{\"a\":\"\\ud83d\\ude00\"}", 0, 1 }, /* a surrogate pair */
		{ "{\"a\":\"\\udc00\"}", 0, 0 },   /* a lone low surrogate */
		{ "", 0, 0 },
		{ "   ", 0, 0 },
		{ "{\"a\":1} x", 0, 1 },
		{ "-", 0, 0 },
		{ "1e", 0, 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *j = cases[i].json;
		size_t n = strlen(j);
		bool v = kube_json_valid(j, n);
		cJSON *t = cJSON_ParseWithLength(j, n);
		if (v != (cases[i].valid == 1) || (t != NULL) != (cases[i].cjson == 1))
			fail_msg("case %zu (%s): valid %d cjson %d", i, j, v, t != NULL);
		cJSON_Delete(t);
	}
	/* nesting: 128 levels pass, 129 are left to cJSON */
	char deep[600];
	for (int levels = 127; levels <= 130; levels++) {
		int k = 0;
		for (int l = 0; l < levels; l++)
			deep[k++] = '[';
		for (int l = 0; l < levels; l++)
			deep[k++] = ']';
		assert_int_equal(kube_json_valid(deep, (size_t)k), levels <= 128);
	}
	/* every prefix of a valid object is refused (a cut line is never taken as an event) */
	const char *obj = "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"}},\"spec\":{\"n\":[1,2.5,\"z\"]}}";
	for (size_t k = 0; k < strlen(obj); k++)
		if (kube_json_valid(obj, k))
			fail_msg("prefix of %zu bytes passed", k);
	assert_true(kube_json_valid(obj, strlen(obj)));
}

static void test_plain_string_and_path(void **state)
{
	(void)state;
	const char *j = "{\"metadata\":{\"name\":\"web-1\",\"ns\":\"a\\\"b\",\"rv\":12,\"e\":\"\"},\"x\":1}";
	static const struct { const char *path[3]; const char *want; int plain; } cases[] = {
		{ { "metadata", "name", NULL }, "web-1", 1 },
		{ { "metadata", "ns", NULL }, NULL, 0 },    /* an escape: not plain */
		{ { "metadata", "rv", NULL }, NULL, 0 },    /* not a string */
		{ { "metadata", "e", NULL }, "", 1 },
		{ { "metadata", "missing", NULL }, NULL, 0 },
		{ { "x", "y", NULL }, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t vl = 0, sl = 0;
		const char *v = kube_json_path_span(j, strlen(j), cases[i].path, &vl);
		const char *p = kube_json_plain_string(v, vl, &sl);
		if ((p != NULL) != (cases[i].plain == 1))
			fail_msg("case %zu: plain %d", i, p != NULL);
		if (p) {
			assert_int_equal(sl, strlen(cases[i].want));
			assert_memory_equal(p, cases[i].want, sl);
		}
	}
}

/* b (the other) is searched for the members; a (base) may hold its own at the same places. */
static void test_equal_except(void **state)
{
	(void)state;
	static const char *const rv[] = { "metadata", "resourceVersion", NULL };
	static const char *const nn[] = { "spec", "nodeName", NULL };
	static const char *const cond[] = { "status", "conditions", NULL };
	static const char *const *const paths[] = { rv, nn, cond };
	const char *base = "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
			   "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}}";
	static const struct { const char *other; int equal; } cases[] = {
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}}", 1 },
		/* the binding's echo: rv, nodeName appended, conditions appended */
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"77\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"nodeName\":\"n1\"},"
		  "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}", 1 },
		/* nodeName first, rv last in metadata: members elsewhere than in a differ */
		{ "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"},\"resourceVersion\":\"6\"},"
		  "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}}", 0 },
		/* a duplicate of a searched key, an escaped key in a searched object */
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"nodeName\":\"a\",\"nodeName\":\"b\"},\"status\":{\"phase\":\"Pending\"}}", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"node\\u004eame\":\"a\"},\"status\":{\"phase\":\"Pending\"}}", 0 },
		/* another member moved: not the same bytes */
		{ "{\"metadata\":{\"labels\":{\"a\":\"b\"},\"name\":\"p\",\"resourceVersion\":\"5\"},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}}", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"6\",\"labels\":{\"a\":\"c\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\"}}", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"6\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"6\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\",\"nodeName\":\"n1\"}}", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}} ", 0 },
		{ "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"schedulerName\":\"s\"},\"status\":{\"phase\":\"Pending\"}", 0 },
		{ "", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool eq = kube_json_equal_except(base, strlen(base), cases[i].other, strlen(cases[i].other), paths, 3, NULL, NULL);
		if (eq != (cases[i].equal == 1))
			fail_msg("case %zu: equal %d", i, eq);
	}
	/* the cut members' values, on both sides */
	struct kube_json_span was[3], now[3];
	const char *echo = cases[1].other;
	assert_true(kube_json_equal_except(base, strlen(base), echo, strlen(echo), paths, 3, was, now));
	assert_int_equal(was[0].len, 3);
	assert_memory_equal(was[0].p, "\"5\"", 3);
	assert_null(was[1].p);
	assert_null(was[2].p);
	assert_int_equal(now[0].len, 4);
	assert_memory_equal(now[0].p, "\"77\"", 4);
	assert_int_equal(now[1].len, 4);
	assert_memory_equal(now[1].p, "\"n1\"", 4);
	assert_memory_equal(now[2].p, "[{\"type\":\"PodScheduled\"", 23);
	/* the only member of an object, and whitespace */
	static const char *const only[][2] = {
		{ "{\"spec\":{}}", "{\"spec\":{\"nodeName\":\"x\"}}" },
		{ "{\"spec\":{\"nodeName\":\"\"}}", "{\"spec\":{\"nodeName\":\"x\"}}" },
		{ "{\"spec\":{\"a\":1}}", "{\"spec\":{\"a\":1,\"nodeName\":\"x\"}}" },
		{ "{\"spec\":{\"a\":1}}", "{\"spec\":{\"nodeName\":\"x\",\"a\":1}}" },
	};
	for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++)
		assert_true(kube_json_equal_except(only[i][0], strlen(only[i][0]), only[i][1], strlen(only[i][1]), paths, 3,
						   NULL, NULL));
	const char *ws_a = "{ \"spec\" : { \"a\" : 1 , \"nodeName\" : \"\" } }";
	const char *ws_b = "{ \"spec\" : { \"a\" : 1 , \"nodeName\" : \"y\" } }";
	assert_true(kube_json_equal_except(ws_a, strlen(ws_a), ws_b, strlen(ws_b), paths, 3, NULL, NULL));
	/* members only a holds are not cut: b decides what is cut */
	assert_false(kube_json_equal_except(echo, strlen(echo), base, strlen(base), paths, 3, NULL, NULL));
	/* no paths: plain byte equality */
	assert_true(kube_json_equal_except("{\"a\":1}", 7, "{\"a\":1}", 7, paths, 0, NULL, NULL));
	assert_false(kube_json_equal_except("{\"a\":1}", 7, "{\"a\":2}", 7, paths, 0, NULL, NULL));
}

/* kube_json_find: values, cuts with their comma, duplicates; validation as kube_json_valid's. */
static void test_find(void **state)
{
	(void)state;
	static const char *const p_name[] = { "metadata", "name", NULL };
	static const char *const p_rv[] = { "metadata", "resourceVersion", NULL };
	static const char *const p_node[] = { "spec", "nodeName", NULL };
	static const char *const p_kind[] = { "kind", NULL };
	static const char *const p_deep[] = { "spec", "a", "b", NULL };
	static const char *const p_arr[] = { "spec", "list", "x", NULL };
	const char *j = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\"},"
			"\"spec\":{\"a\":{\"b\":[1]},\"list\":[{\"x\":1}],\"nodeName\":\"n\",\"nodeName\":\"m\"}}";
	struct kube_json_member m[6] = { { .path = p_name }, { .path = p_rv }, { .path = p_node },
					 { .path = p_kind }, { .path = p_deep }, { .path = p_arr } };
	assert_true(kube_json_find(j, strlen(j), m, 6));
	static const struct { const char *val, *cut; int comma; bool dup; } want[] = {
		{ "\"p\"", "\"name\":\"p\",", 1, false },
		{ "\"5\"", ",\"resourceVersion\":\"5\"", -1, false },
		{ "\"n\"", "\"nodeName\":\"n\",", 1, true },      /* the first, and it comes again */
		{ "\"Pod\"", "\"kind\":\"Pod\",", 1, false },
		{ "[1]", "\"b\":[1]", 0, false },
		{ NULL, NULL, 0, false },                         /* paths do not go through arrays */
	};
	for (int i = 0; i < 6; i++) {
		if (!want[i].val) {
			assert_null(m[i].val.p);
			continue;
		}
		assert_non_null(m[i].val.p);
		assert_int_equal(m[i].val.len, strlen(want[i].val));
		assert_memory_equal(m[i].val.p, want[i].val, m[i].val.len);
		assert_int_equal(m[i].cut.len, strlen(want[i].cut));
		assert_memory_equal(m[i].cut.p, want[i].cut, m[i].cut.len);
		assert_int_equal(m[i].comma, want[i].comma);
		assert_int_equal(m[i].dup, want[i].dup);
	}
	/* what kube_json_valid refuses, kube_json_find refuses; and it wants an object */
	static const char *const bad[] = { "{\"kind\":01}", "{\"k\\u0069nd\":1}", "[1]", "{\"kind\":\"x\"", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(kube_json_find(bad[i], strlen(bad[i]), m, 1));
	assert_true(kube_json_find("{}", 2, m, 0));
	assert_false(kube_json_find("{}", 2, m, KUBE_JSON_FIND_MAX + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_span),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_plain_string_and_path),
		cmocka_unit_test(test_equal_except),
		cmocka_unit_test(test_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
