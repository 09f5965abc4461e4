/* Tests for kube/log: line shape, verbosity gating, key/value formatting, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kube/log.h"

static char *capture(void (*fn)(void))
{
	static char out[8192];
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	kube_log_set_fd(fds[1]);
	fn();
	kube_log_set_fd(2);
	close(fds[1]);
	ssize_t n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	out[n < 0 ? 0 : n] = 0;
	return out;
}

static void emit_levels(void)
{
	kube_log_set_verbosity(2);
	klog_info(2, "shown", " pod=%s", "ns/a");
	klog_info(3, "hidden", " pod=%s", "ns/b");
	klog_warning("warned");
	klog_error("failed", " code=%d", 409);
	kube_log_set_verbosity(0);
}

static void test_levels_and_format(void **state)
{
	(void)state;
	char *out = capture(emit_levels);
	assert_non_null(strstr(out, "\"shown\" pod=ns/a\n"));
	assert_null(strstr(out, "hidden"));
	assert_non_null(strstr(out, "\"warned\"\n"));
	assert_non_null(strstr(out, "\"failed\" code=409\n"));
	assert_true(out[0] == 'I');
	assert_non_null(strstr(out, "test_log.c:"));
	assert_non_null(strstr(out, "\nW"));
	assert_non_null(strstr(out, "\nE"));
}

static void emit_long(void)
{
	char big[10000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	klog_error("long", " v=%s", big);
}

static void test_truncation_keeps_newline(void **state)
{
	(void)state;
	char *out = capture(emit_long);
	size_t n = strlen(out);
	assert_true(n > 1000 && n <= 4096);
	assert_int_equal(out[n - 1], '\n');
}

static void test_negative_verbosity_clamped(void **state)
{
	(void)state;
	kube_log_set_verbosity(-5);
	assert_int_equal(kube_log_verbosity, 0);
	assert_true(kube_log_enabled(0));
	assert_false(kube_log_enabled(1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_and_format),
		cmocka_unit_test(test_truncation_keeps_newline),
		cmocka_unit_test(test_negative_verbosity_clamped),
	};
	return cmocka_run_group_tests_name("kube_log", tests, NULL, NULL);
}
