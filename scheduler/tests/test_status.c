/* Tests for scheduler/status.c: status construction, owned reasons, copy, message joining, the
 * code names, and the sk_errors collection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedkit/plugin.h"

static void test_code_strings(void **state)
{
	(void)state;
	const struct {
		enum sk_code c;
		const char *s;
	} t[] = { { SK_SUCCESS, "Success" },
		  { SK_ERROR, "Error" },
		  { SK_UNSCHEDULABLE, "Unschedulable" },
		  { SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable" },
		  { SK_WAIT, "Wait" },
		  { SK_SKIP, "Skip" },
		  { SK_PENDING, "Pending" } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(sk_code_string(t[i].c), t[i].s);
	assert_string_equal(sk_code_string((enum sk_code)99), "Unknown");
}

static void test_status_reasons(void **state)
{
	(void)state;
	struct sk_status s = sk_ok();
	assert_true(sk_is_success(&s));
	sk_status_reset(&s);

	s = sk_status(SK_UNSCHEDULABLE, "Too many pods");
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_true(sk_is_rejected(&s));
	sk_status_add(&s, "Insufficient cpu");
	sk_status_addf(&s, "Insufficient %s", "example.com/gpu");
	assert_int_equal(s.nreasons, 3);
	assert_int_equal(s.owned, 1 << 2);
	char *m = sk_status_message(&s);
	assert_string_equal(m, "Too many pods, Insufficient cpu, Insufficient example.com/gpu");
	free(m);

	struct sk_status c = sk_status_copy(&s);
	sk_status_reset(&s);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(s.nreasons, 0);
	m = sk_status_message(&c);
	assert_string_equal(m, "Too many pods, Insufficient cpu, Insufficient example.com/gpu");
	free(m);
	sk_status_reset(&c);

	s = sk_status(SK_SKIP, NULL);
	assert_int_equal(s.nreasons, 0);
	m = sk_status_message(&s);
	assert_string_equal(m, "");
	free(m);

	s = sk_statusf(SK_ERROR, "running %s plugin %d", "PreFilter", 7);
	assert_true(s.owned & 1);
	assert_string_equal(s.reasons[0], "running PreFilter plugin 7");
	/* reasons beyond the inline ones are kept in `more`, in order, formatted or static */
	for (int i = 0; i < 10; i++)
		sk_status_addf(&s, "r%d", i);
	sk_status_add(&s, "static past the inline ones");
	assert_int_equal(s.nreasons, SK_STATUS_MAX_REASONS);
	assert_int_equal(sk_status_reason_count(&s), 12);
	assert_string_equal(sk_status_reason(&s, 0), "running PreFilter plugin 7");
	assert_string_equal(sk_status_reason(&s, 5), "r4");
	assert_string_equal(sk_status_reason(&s, 6), "r5");
	assert_string_equal(sk_status_reason(&s, 10), "r9");
	assert_string_equal(sk_status_reason(&s, 11), "static past the inline ones");
	assert_null(sk_status_reason(&s, 12));
	assert_null(sk_status_reason(&s, -1));
	m = sk_status_message(&s);
	assert_string_equal(m, "running PreFilter plugin 7, r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, "
			       "static past the inline ones");
	free(m);
	/* a copy is independent of the original */
	struct sk_status cp = sk_status_copy(&s);
	sk_status_reset(&s);
	assert_int_equal(sk_status_reason_count(&cp), 12);
	assert_string_equal(sk_status_reason(&cp, 8), "r7");
	sk_status_reset(&cp);
	assert_int_equal(sk_status_reason_count(&cp), 0);
	sk_status_reset(NULL);
}

static void test_errors(void **state)
{
	(void)state;
	struct sk_errors e = { 0 };
	char *j = sk_errors_join(&e, "; ");
	assert_string_equal(j, "");
	free(j);
	for (int i = 0; i < 20; i++)
		sk_errors_addf(&e, "field[%d]: bad", i);
	assert_int_equal(e.n, 20);
	assert_string_equal(e.msgs[19], "field[19]: bad");
	sk_errors_free(&e);
	sk_errors_addf(&e, "a");
	sk_errors_addf(&e, "b");
	j = sk_errors_join(&e, "\n");
	assert_string_equal(j, "a\nb");
	free(j);
	sk_errors_free(&e);
	sk_errors_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_strings),
		cmocka_unit_test(test_status_reasons),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
