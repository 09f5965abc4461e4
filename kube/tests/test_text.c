/* Tests for kube/text.c: shared immutable text (copy, adopt, references). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kube/text.h"

static void test_new_and_adopt(void **state)
{
	(void)state;
	static const struct { const char *in; size_t len; const char *want; } cases[] = {
		{ "{\"a\":1}", 7, "{\"a\":1}" },
		{ "abcdef", 3, "abc" },   /* only len bytes, NUL-terminated */
		{ "", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_text *t = kube_text_new(cases[i].in, cases[i].len);
		assert_non_null(t);
		assert_int_equal(t->len, strlen(cases[i].want));
		assert_string_equal(t->s, cases[i].want);
		kube_text_unref(t);
		struct kube_text *a = kube_text_adopt(strdup(cases[i].want));
		assert_non_null(a);
		assert_string_equal(a->s, cases[i].want);
		assert_int_equal(a->len, strlen(cases[i].want));
		kube_text_unref(a);
	}
	assert_null(kube_text_adopt(NULL));
	kube_text_unref(NULL);
	assert_null(kube_text_ref(NULL));
}

static void test_references(void **state)
{
	(void)state;
	struct kube_text *t = kube_text_new("x", 1);
	assert_ptr_equal(kube_text_ref(t), t);
	assert_ptr_equal(kube_text_ref(t), t);
	assert_int_equal(atomic_load(&t->refs), 3);
	kube_text_unref(t);
	kube_text_unref(t);
	assert_int_equal(atomic_load(&t->refs), 1);
	assert_string_equal(t->s, "x");
	kube_text_unref(t); /* freed: the leak checkers (make asan) see it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_and_adopt),
		cmocka_unit_test(test_references),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
