/* Tests for operator/settings_watch.c: the --scheduler-settings file re-read while the operator
 * runs. A table of file states in order: each change of a valid file is reported once with its
 * settings, an unchanged file is not, an invalid or unreadable file keeps the current settings
 * (nothing reported, one error line naming the file and field), and a later valid file is
 * reported again. Then the watcher's own thread picks a change up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/log.h"
#include "operator/settings_watch.h"

static int changes;
static char last_priority[64];

static void on_change(void *ctx, struct op_settings *s)
{
	(void)ctx;
	__atomic_add_fetch(&changes, 1, __ATOMIC_SEQ_CST);
	snprintf(last_priority, sizeof last_priority, "%s", s->priority_class ? s->priority_class : "(unset)");
	op_settings_free(s);
}

static void write_file(const char *path, const char *text)
{
	if (!text) {
		unlink(path);
		return;
	}
	/* as kubelet does: a new file renamed over the old one */
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

static void test_changes_table(void **state)
{
	(void)state;
	char dir[] = "/tmp/sk-settings-watch-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[300], logpath[300];
	snprintf(path, sizeof path, "%s/settings.yaml", dir);
	snprintf(logpath, sizeof logpath, "%s/log", dir);
	write_file(path, "priorityClassName: a\n");
	changes = 0;
	struct op_settings_watch *w = NULL;
	char *err = NULL;
	assert_int_equal(op_settings_watch_start(path, 3600, on_change, NULL, &w, &err), 0); /* the thread sleeps */
	static const struct {
		const char *text; /* NULL: the file is removed */
		int rc, changes;
		const char *priority; /* after the step */
		const char *logged;   /* a substring of the error line, NULL: nothing logged */
	} steps[] = {
		{"priorityClassName: a\n", 0, 0, "", NULL},          /* the baseline: no change */
		{"priorityClassName: b\n", 1, 1, "b", NULL},
		{"priorityClassName: b\n", 0, 1, "b", NULL},
		{"priorityClassName: b\nreplicas: 0\n", -1, 1, "b",
		 "settings.yaml: replicas: Invalid value: must be an integer from 1 to 100"},
		{"priorityClassName: b\nreplicas: 0\n", 0, 1, "b", NULL}, /* the same bad bytes: not again */
		{"priorityClassName: [x\n", -1, 1, "b", "settings.yaml"},
		{NULL, -1, 1, "b", "Cannot read the scheduler settings; keeping the current ones"},
		{"priorityClassName: c\nreplicas: 3\n", 1, 2, "c", NULL},
		{"", 1, 3, "(unset)", NULL}, /* emptied: the defaults again */
	};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		write_file(path, steps[i].text);
		FILE *log = fopen(logpath, "w+");
		assert_non_null(log);
		kube_log_set_fd(fileno(log));
		int rc = op_settings_watch_check(w);
		kube_log_set_fd(2);
		char buf[2048] = "";
		rewind(log);
		size_t n = fread(buf, 1, sizeof buf - 1, log);
		buf[n] = 0;
		fclose(log);
		const char *err_line = strstr(buf, "\nE") || buf[0] == 'E' ? buf : NULL;
		if (rc != steps[i].rc || changes != steps[i].changes ||
		    (steps[i].changes && strcmp(last_priority, steps[i].priority)) ||
		    (steps[i].logged ? !err_line || !strstr(buf, steps[i].logged) : err_line != NULL))
			fail_msg("step %zu: rc %d changes %d priority %s log \"%s\"", i, rc, changes, last_priority, buf);
	}
	op_settings_watch_stop(w);
	unlink(path);
	unlink(logpath);
	rmdir(dir);
}

static void test_thread_picks_up_a_change(void **state)
{
	(void)state;
	char dir[] = "/tmp/sk-settings-watch-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[300];
	snprintf(path, sizeof path, "%s/settings.yaml", dir);
	write_file(path, "priorityClassName: a\n");
	changes = 0;
	struct op_settings_watch *w = NULL;
	assert_int_equal(op_settings_watch_start(path, 0.02, on_change, NULL, &w, NULL), 0);
	write_file(path, "priorityClassName: z\n");
	for (int i = 0; i < 500 && !__atomic_load_n(&changes, __ATOMIC_SEQ_CST); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	op_settings_watch_stop(w); /* joins: last_priority is settled */
	assert_int_equal(changes, 1);
	assert_string_equal(last_priority, "z");
	op_settings_watch_stop(NULL);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changes_table),
		cmocka_unit_test(test_thread_picks_up_a_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
