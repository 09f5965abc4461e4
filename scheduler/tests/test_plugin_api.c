/* Tests for the core side of the plugin API headers that wrap kube/: plugin logging
 * (schedkit/log.h -> scheduler/framework/plugin_log.c) and exact int64 JSON numbers for args_encode
 * (schedkit/args.h -> scheduler/config/config_decode.c). */
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schedkit/args.h"
#include "schedkit/log.h"

/* The test also drives kube/log.h directly (fd, level): drop the SDK's klog_* spellings first. */
#undef klog_info
#undef klog_warning
#undef klog_error
#include "kube/log.h"
#include "kube/object.h"

static int pipe_fd[2];

static int setup(void **state)
{
	(void)state;
	if (pipe(pipe_fd) < 0)
		return -1;
	fcntl(pipe_fd[0], F_SETFL, O_NONBLOCK);
	kube_log_set_fd(pipe_fd[1]);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kube_log_set_fd(2);
	kube_log_set_verbosity(0);
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	return 0;
}

/* What was logged since the last call ("" when nothing). */
static const char *drain(void)
{
	static char buf[8192];
	ssize_t n = read(pipe_fd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	if (ls < lx || strcmp(s + ls - lx, suffix) != 0) {
		print_error("line %s does not end with %s\n", s, suffix);
		fail();
	}
}

static void test_log_levels_and_format(void **state)
{
	(void)state;
	drain();
	kube_log_set_verbosity(2);
	assert_true(sk_log_enabled(2));
	assert_false(sk_log_enabled(3));

	sk_log_info(3, "too verbose", " pod=%s", "x");
	assert_string_equal(drain(), "");

	int line = __LINE__ + 1;
	sk_log_info(2, "Pod is not eligible for preemption", " pod=%s/%s reason=\"%s\"", "ns1", "p1", "why");
	const char *out = drain();
	assert_int_equal(out[0], 'I');
	char where[64];
	snprintf(where, sizeof(where), " test_plugin_api.c:%d] ", line);
	assert_non_null(strstr(out, where));
	ends_with(out, "] \"Pod is not eligible for preemption\" pod=ns1/p1 reason=\"why\"\n");
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */

	/* no pairs, and the kube/log.h spellings plugins may use */
	sk_log_error("boom");
	out = drain();
	assert_int_equal(out[0], 'E');
	ends_with(out, "] \"boom\"\n");
	kube_log_emit('W', __FILE__, __LINE__, "same line", " k=%d", 7);
	char direct[512];
	snprintf(direct, sizeof(direct), "%s", strstr(drain(), "] "));
	sk_log_warning("same line", " k=%d", 7);
	out = drain();
	assert_int_equal(out[0], 'W');
	assert_string_equal(strstr(out, "] "), direct);
}

static void test_log_long_pairs_truncate_like_kube(void **state)
{
	(void)state;
	drain();
	char big[6000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sk_log_info(0, "long", " v=%s", big);
	const char *out = drain();
	size_t n = strlen(out);
	assert_true(n <= 4096);
	assert_int_equal(out[n - 1], '\n');
	assert_non_null(strstr(out, "] \"long\" v=aaaa"));
}

static void test_json_create_int64_exact(void **state)
{
	(void)state;
	const int64_t vs[] = { 0, -1, 100, (INT64_C(1) << 53) + 1, INT64_MAX, INT64_MIN };
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		cJSON *o = cJSON_CreateObject();
		assert_non_null(o);
		assert_true(cJSON_AddItemToObject(o, "v", sk_json_create_int64(vs[i])));
		int64_t got = 0;
		assert_int_equal(kube_json_get_int64(cJSON_GetObjectItemCaseSensitive(o, "v"), &got), 0);
		assert_true(got == vs[i]);
		char *printed = kube_json_print(o), want[64];
		snprintf(want, sizeof(want), "{\"v\":%" PRId64 "}", vs[i]);
		assert_string_equal(printed, want);
		free(printed);
		cJSON_Delete(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_levels_and_format),
		cmocka_unit_test(test_log_long_pairs_truncate_like_kube),
		cmocka_unit_test(test_json_create_int64_exact),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
