/* Tests for kube/util.c: the error helpers, the monotonic clock, Go durations (the tables that
 * the config loader's and the framework's duration tests had), ParseBool and bounded ints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/util.h"

static void test_errf(void **state)
{
	(void)state;
	char *err = NULL;
	assert_int_equal(kube_errf(&err, "x %d %s", 1, "y"), -1);
	assert_string_equal(err, "x 1 y");
	/* the earlier message is freed and replaced (ASan checks the free) */
	assert_int_equal(kube_errf(&err, "second"), -1);
	assert_string_equal(err, "second");
	/* first error wins */
	assert_int_equal(kube_errf_first(&err, "third"), -1);
	assert_string_equal(err, "second");
	free(err);
	err = NULL;
	assert_int_equal(kube_errf_first(&err, "first %s", "one"), -1);
	assert_string_equal(err, "first one");
	free(err);
	/* err may be NULL */
	assert_int_equal(kube_errf(NULL, "nobody %s", "reads this"), -1);
	assert_int_equal(kube_errf_first(NULL, "nor this"), -1);
}

static void test_mono_ns(void **state)
{
	(void)state;
	int64_t a = kube_mono_ns();
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	int64_t b = kube_mono_ns();
	assert_true(a > 0);
	assert_true(b - a >= 2000000);
}

static void test_duration_parse_format(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t ms;
		const char *canon;
	} d[] = {
		{ "15s", 15000, "15s" },     { "1m30s", 90000, "1m30s" },        { "500ms", 500, "500ms" },
		{ "1.5s", 1500, "1.5s" },    { "2h", 7200000, "2h0m0s" },        { "0", 0, "0s" },
		{ "-1s", -1000, "-1s" },     { "1h2m3.25s", 3723250, "1h2m3.25s" }, { "+2s", 2000, "2s" },
		{ "1500us", 1, "1ms" },      { "2000000ns", 2, "2ms" },          { "3000\xc2\xb5s", 3, "3ms" },
		{ "-1.5m", -90000, "-1m30s" }, { ".5s", 500, "500ms" },
	};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		int64_t ms = -42;
		char buf[KUBE_DURATION_BUF];
		if (kube_duration_parse_ms(d[i].text, &ms) != 0 || ms != d[i].ms)
			fail_msg("parse %s: %lld", d[i].text, (long long)ms);
		kube_duration_format_ms(ms, buf, sizeof buf);
		assert_string_equal(buf, d[i].canon);
	}
	static const char *const bad[] = { "", "10", "10x", "-", "s", "1s2", "1.5", "1 s", "ms" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int64_t ms = 7;
		if (kube_duration_parse_ms(bad[i], &ms) != -1 || ms != 7)
			fail_msg("\"%s\" accepted (%lld)", bad[i], (long long)ms);
	}
	int64_t ms = 7;
	assert_int_equal(kube_duration_parse_ms(NULL, &ms), -1);
	assert_int_equal(kube_duration_parse_ms("3000000h", &ms), -1); /* beyond int64 ns */
}

static void test_duration_format(void **state)
{
	(void)state;
	static const struct {
		int64_t ms;
		const char *want;
	} cases[] = {
		{ 0, "0s" },          { 10, "10ms" },       { 999, "999ms" },      { 1000, "1s" },
		{ 1500, "1.5s" },     { 61250, "1m1.25s" }, { 900000, "15m0s" },   { 3600000, "1h0m0s" },
		{ 3723004, "1h2m3.004s" }, { -500, "-500ms" }, { -3723004, "-1h2m3.004s" },
		{ INT64_MIN, "-2562047788015h12m55.808s" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[KUBE_DURATION_BUF];
		kube_duration_format_ms(cases[i].ms, buf, sizeof buf);
		assert_string_equal(buf, cases[i].want);
	}
	char small[4];
	kube_duration_format_ms(3723004, small, sizeof small); /* truncated, still terminated */
	assert_string_equal(small, "1h2");
}

static void test_parse_bool(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc;
		bool v;
	} cases[] = {
		{ "1", 0, true },  { "t", 0, true },   { "T", 0, true },     { "TRUE", 0, true },  { "true", 0, true },
		{ "True", 0, true }, { "0", 0, false }, { "f", 0, false },   { "F", 0, false },    { "FALSE", 0, false },
		{ "false", 0, false }, { "False", 0, false }, { "yes", -1, false }, { "", -1, false }, { "tRUE", -1, false },
		{ "2", -1, false }, { " true", -1, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool v = !cases[i].v;
		bool before = v;
		int rc = kube_parse_bool(cases[i].s, &v);
		if (rc != cases[i].rc || v != (rc == 0 ? cases[i].v : before))
			fail_msg("case %zu (\"%s\"): rc %d v %d", i, cases[i].s, rc, v);
	}
	bool v = true;
	assert_int_equal(kube_parse_bool(NULL, &v), -1);
}

static void test_parse_int(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t lo, hi;
		int rc;
		int64_t v;
	} cases[] = {
		{ "0", 0, 10, 0, 0 },         { "10", 0, 10, 0, 10 },     { "11", 0, 10, -1, 0 },
		{ "-1", 0, 10, -1, 0 },       { "-5", -10, 10, 0, -5 },    { "65535", 0, 65535, 0, 65535 },
		{ "70000", 0, 65535, -1, 0 }, { "", 0, 10, -1, 0 },        { "1x", 0, 10, -1, 0 },
		{ " 1", 0, 10, 0, 1 },        { "abc", 0, 10, -1, 0 },     { "99999999999999999999", 0, INT64_MAX, -1, 0 },
		{ "9223372036854775807", 0, INT64_MAX, 0, INT64_MAX },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t v = 12345;
		int rc = kube_parse_int(cases[i].s, cases[i].lo, cases[i].hi, &v);
		if (rc != cases[i].rc || v != (rc == 0 ? cases[i].v : 12345))
			fail_msg("case %zu (\"%s\"): rc %d v %lld", i, cases[i].s, rc, (long long)v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errf),
		cmocka_unit_test(test_mono_ns),
		cmocka_unit_test(test_duration_parse_format),
		cmocka_unit_test(test_duration_format),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_parse_int),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
