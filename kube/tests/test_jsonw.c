/* Tests for kube/jsonw.c: strings escape as cJSON prints them (the server reads the same
 * document the cJSON tree used to give), raw text and integers, and whole bodies that parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/jsonw.h"

static void test_strings_escape_as_cjson(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"", "plain", "web-0", "say \"hi\"", "back\\slash", "tab\there", "line\nbreak\r\n", "\b\f",
		"\x01\x1f control", "caf\xc3\xa9 \xe2\x9c\x93", "/slash/", "Successfully assigned a/b to node-1",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kube_jsonw w = {0};
		kube_jsonw_str(&w, cases[i]);
		char *got = kube_jsonw_finish(&w);
		cJSON *s = cJSON_CreateString(cases[i]);
		char *want = cJSON_PrintUnformatted(s);
		assert_string_equal(got, want);
		cJSON *back = cJSON_Parse(got);
		assert_string_equal(back->valuestring, cases[i]);
		cJSON_Delete(back);
		cJSON_Delete(s);
		free(want);
		free(got);
	}
}

static void test_body(void **state)
{
	(void)state;
	static const struct { long long n; const char *want; } ints[] = {
		{0, "0"}, {2, "2"}, {-7, "-7"}, {9007199254740993LL, "9007199254740993"},
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		struct kube_jsonw w = {0};
		kube_jsonw_int(&w, ints[i].n);
		char *got = kube_jsonw_finish(&w);
		assert_string_equal(got, ints[i].want);
		free(got);
	}
	struct kube_jsonw w = {0};
	kube_jsonw_raw(&w, "{\"a\":");
	kube_jsonw_str(&w, NULL);
	kube_jsonw_raw(&w, ",\"ref\":{\"kind\":\"Pod\"},\"n\":");
	kube_jsonw_int(&w, 3);
	kube_jsonw_raw(&w, "}");
	char *got = kube_jsonw_finish(&w);
	assert_string_equal(got, "{\"a\":null,\"ref\":{\"kind\":\"Pod\"},\"n\":3}");
	free(got);
	/* a writer nothing was added to gives "" */
	struct kube_jsonw empty = {0};
	got = kube_jsonw_finish(&empty);
	assert_string_equal(got, "");
	free(got);
	/* long strings grow the buffer */
	char *big = malloc(100001);
	memset(big, 'q', 100000);
	big[100000] = 0;
	struct kube_jsonw b = {0};
	kube_jsonw_str(&b, big);
	got = kube_jsonw_finish(&b);
	assert_int_equal(strlen(got), 100002);
	free(got);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings_escape_as_cjson),
		cmocka_unit_test(test_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
