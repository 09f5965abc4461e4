/* Tests for --logging-format=json in kube/log.c: one JSON object per line with ts, caller, msg,
 * "v" on info lines, the key/value pairs as members (quoted values unquoted, integers as numbers,
 * other bare values as strings), and escapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kube/log.h"

static cJSON *one_line(void (*fn)(void))
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	kube_log_set_format(KUBE_LOG_JSON);
	kube_log_set_fd(fds[1]);
	fn();
	kube_log_set_fd(2);
	kube_log_set_format(KUBE_LOG_TEXT);
	close(fds[1]);
	static char buf[8192];
	ssize_t n = read(fds[0], buf, sizeof buf - 1);
	close(fds[0]);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strchr(buf, '\n'));
	assert_ptr_equal(strchr(buf, '\n'), buf + n - 1); /* one line */
	cJSON *j = cJSON_Parse(buf);
	if (!j)
		fail_msg("not JSON: %s", buf);
	return j;
}

static void info_line(void) { klog_info(0, "Successfully bound pod", " pod=\"default/p \\\"q\\\"\" node=n1 attempts=3 neg=-2"); }
static void error_line(void) { klog_error("Watch failed", " resource=pods err=\"a\\tb\""); }
static void bare_line(void) { klog_warning("Plain \"quoted\" message"); }

static void test_json_lines(void **state)
{
	(void)state;
	cJSON *j = one_line(info_line);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "ts")));
	assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "ts")) > 1.5e9);
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "caller")), "test_log_json.c:"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "Successfully bound pod");
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "v")), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "pod")), "default/p \"q\"");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "node")), "n1");
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "attempts")), 3);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "neg")), -2);
	cJSON_Delete(j);
	j = one_line(error_line);
	assert_null(cJSON_GetObjectItem(j, "v"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "err")), "a\tb"); /* klog quoting undone */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "resource")), "pods");
	cJSON_Delete(j);
	j = one_line(bare_line);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "Plain \"quoted\" message");
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
