/* Tests for scheduler/status.c: status construction, owned reasons, copy, message joining, the
 * code names, and the sk_errors collection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* Past six reasons, within ABI 1.0's struct layout (docs/plugins.md): reasons[5] stays the sixth
 * reason's text for code reading the array, the rest is reached through sk_status_reason; copies
 * are independent and reset frees everything (ASan in `make asan`). Table: how many reasons, the
 * mix of static and formatted ones. */
static void test_status_overflow(void **state)
{
	(void)state;
	/* the layout plugins of ABI 1.0 were built with */
	assert_int_equal(sizeof(struct sk_status), 8 + sizeof(void *) * (1 + SK_STATUS_MAX_REASONS));
	/* even reasons static (sk_status_add), odd ones formatted (sk_status_addf); a sixth reason of
	 * either kind moves into the overflow */
	static char names[40][32];
	for (int i = 0; i < 40; i++)
		snprintf(names[i], sizeof(names[i]), "Insufficient r%d", i);
	static const struct {
		int n;
		bool formatted_sixth;
	} cases[] = { { 6, false }, { 7, false }, { 7, true }, { 9, true }, { 40, false } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sk_status s = sk_status(SK_UNSCHEDULABLE, NULL);
		for (int i = 0; i < cases[c].n; i++) {
			if (i % 2 || (i == 5 && cases[c].formatted_sixth))
				sk_status_addf(&s, "Insufficient r%d", i);
			else if (i == 5)
				sk_status_add(&s, names[5]);
			else
				sk_status_add(&s, names[i]);
		}
		assert_int_equal(s.nreasons, 6);
		assert_int_equal(sk_status_reason_count(&s), cases[c].n);
		assert_string_equal(s.reasons[5], names[5]);
		for (int i = 0; i < cases[c].n; i++)
			assert_string_equal(sk_status_reason(&s, i), names[i]);
		assert_null(sk_status_reason(&s, cases[c].n));
		struct sk_status cp = sk_status_copy(&s);
		sk_status_reset(&s);
		assert_int_equal(sk_status_reason_count(&cp), cases[c].n);
		for (int i = 0; i < cases[c].n; i++)
			assert_string_equal(sk_status_reason(&cp, i), names[i]);
		char *m = sk_status_message(&cp);
		assert_non_null(strstr(m, names[cases[c].n - 1]));
		free(m);
		sk_status_reset(&cp);
		assert_int_equal(sk_status_reason_count(&cp), 0);
	}
}

/* sk_status_reset on every kind of status: static reasons only (the common failure statuses,
 * which take a shortcut), interned, formatted, a mix, and past the inline slots. Each ends all
 * zero, and under ASan nothing leaks or is freed twice. */
static void test_status_reset_kinds(void **state)
{
	(void)state;
	static const struct { const char *name; int nstatic, nformatted; bool interned; } rows[] = {
		{ "empty", 0, 0, false },
		{ "one static", 1, 0, false },
		{ "six static", 6, 0, false },
		{ "nine static (overflow)", 9, 0, false },
		{ "interned", 0, 0, true },
		{ "formatted", 0, 2, false },
		{ "static then formatted", 3, 2, false },
		{ "formatted past the inline slots", 4, 5, false },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		struct sk_status st = sk_ok();
		st.code = SK_UNSCHEDULABLE;
		st.plugin = "P";
		for (int i = 0; i < rows[r].nstatic; i++)
			sk_status_add(&st, "Insufficient cpu");
		if (rows[r].interned)
			sk_status_add(&st, sk_intern("Insufficient example.com/x"));
		for (int i = 0; i < rows[r].nformatted; i++)
			sk_status_addf(&st, "reason %d", i);
		int want = rows[r].nstatic + rows[r].nformatted + (rows[r].interned ? 1 : 0);
		if (sk_status_reason_count(&st) != want)
			fail_msg("%s: %d reasons, want %d", rows[r].name, sk_status_reason_count(&st), want);
		if ((st.owned == 0) != (rows[r].nformatted == 0 && want <= SK_STATUS_MAX_REASONS))
			fail_msg("%s: owned 0x%x", rows[r].name, st.owned);
		sk_status_reset(&st);
		static const struct sk_status zero;
		if (memcmp(&st, &zero, sizeof st) != 0)
			fail_msg("%s: not all zero after reset", rows[r].name);
		sk_status_reset(&st); /* again: a no-op */
	}
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
		cmocka_unit_test(test_status_overflow),
		cmocka_unit_test(test_status_reset_kinds),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
