/* Tests for kube/jsonspan.c: a top-level member's value bytes, found without a tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_span),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
