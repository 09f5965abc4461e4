/* Tests for kube/flags.c: every accepted form, each kind's conversion and errors (pflag
 * wording), copied strings, and the usage printer's layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/flags.h"

struct opts {
	char *name;
	bool on;
	int tri;
	int n;
	int64_t wait_ms;
};

#define OFF(f) offsetof(struct opts, f)
static const struct kube_flag table[] = {
	{ "name", 0, KUBE_FLAG_STRING, OFF(name), .help = "A name." },
	{ "on", 0, KUBE_FLAG_BOOL, OFF(on), .help = "Switch it on." },
	{ "tri", 0, KUBE_FLAG_TRIBOOL, OFF(tri), .help = NULL },
	{ "n", 'n', KUBE_FLAG_INT, OFF(n), 0, 10, .arg = "N", .help = "How many;\nat most 10." },
	{ "port", 0, KUBE_FLAG_INT, OFF(n), 0, 65535, .note = "must be a port number" },
	{ "wait", 0, KUBE_FLAG_DURATION, OFF(wait_ms), .min = 1 },
	{ "legacy", 0, KUBE_FLAG_IGNORED, 0, .note = "nobody reads it" },
};

static struct kube_flag_set set(bool copy)
{
	return (struct kube_flag_set){ .prog = "prog", .head = "Usage: prog [flags]\n", .flags = table,
				       .nflags = sizeof table / sizeof table[0], .column = 16, .copy_strings = copy };
}

/* Runs the parser on args (argv[0] added); *out and *err get what it printed (caller frees). */
static int run(bool copy, const char *const *args, int n, struct opts *o, char **out, char **err)
{
	char *argv[16] = { "prog" };
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	size_t ol = 0, el = 0;
	FILE *fo = open_memstream(out, &ol), *fe = open_memstream(err, &el);
	struct kube_flag_set s = set(copy);
	int rc = kube_flags_parse(&s, n + 1, argv, o, fo, fe);
	fclose(fo);
	fclose(fe);
	return rc;
}

static void test_forms(void **state)
{
	(void)state;
	static const char *const args[] = { "--name=a", "--name", "b", "--on", "--tri=false", "-n", "3",
					    "--wait", "1m30s", "--legacy=x" };
	struct opts o = { .tri = -1 };
	char *out, *err;
	assert_int_equal(run(true, args, 10, &o, &out, &err), 0);
	assert_string_equal(o.name, "b"); /* copied; the first copy was freed (ASan) */
	assert_true(o.on);
	assert_int_equal(o.tri, 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.wait_ms, 90000);
	assert_string_equal(out, "");
	assert_string_equal(err, "W: flags accepted and ignored: --legacy\n");
	free(o.name);
	free(out);
	free(err);

	static const char *const args2[] = { "-n=4", "--on=false", "--tri", "--name", "argv's" };
	o = (struct opts){ .on = true, .tri = -1 };
	assert_int_equal(run(false, args2, 5, &o, &out, &err), 0);
	assert_int_equal(o.n, 4);
	assert_false(o.on);
	assert_int_equal(o.tri, 1);
	assert_ptr_equal(o.name, args2[4]); /* borrowed without copy_strings */
	free(out);
	free(err);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *args[2];
		int n;
		int rc;
		const char *msg;
	} cases[] = {
		{ { "--nope" }, 1, 2, "Error: unknown flag: --nope\nRun 'prog --help' for usage.\n" },
		{ { "--nope=1" }, 1, 2, "Error: unknown flag: --nope\nRun 'prog --help' for usage.\n" },
		{ { "-x" }, 1, 2, "Error: unknown shorthand flag: 'x' in -x\nRun 'prog --help' for usage.\n" },
		{ { "-n3" }, 1, 2, "Error: unknown shorthand flag: 'n' in -n3\nRun 'prog --help' for usage.\n" },
		{ { "stray" }, 1, 2, "Error: \"prog\" does not take any arguments, got [\"stray\"]\nRun 'prog --help' for usage.\n" },
		{ { "--name" }, 1, 2, "Error: flag needs an argument: --name\n" },
		{ { "-n" }, 1, 2, "Error: flag needs an argument: --n\n" },
		{ { "--on=maybe" }, 1, 2,
		  "Error: invalid argument \"maybe\" for \"--on\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n" },
		{ { "--n=x" }, 1, 2, "Error: invalid argument \"x\" for \"--n\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\n" },
		{ { "--n=11" }, 1, 2, "Error: invalid argument \"11\" for \"--n\" flag: must be between 0 and 10\n" },
		{ { "--port", "70000" }, 2, 2, "Error: invalid argument \"70000\" for \"--port\" flag: must be a port number\n" },
		{ { "--wait=soon" }, 1, 2, "Error: invalid argument \"soon\" for \"--wait\" flag: time: invalid duration \"soon\"\n" },
		{ { "--wait=0s" }, 1, 2, "Error: invalid argument \"0s\" for \"--wait\" flag: time: invalid duration \"0s\"\n" },
		{ { "--help" }, 1, 1, "" },
		{ { "-h", "--nope" }, 2, 1, "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct opts o = { 0 };
		char *out, *err;
		int rc = run(true, cases[i].args, cases[i].n, &o, &out, &err);
		if (rc != cases[i].rc || strcmp(err, cases[i].msg))
			fail_msg("case %zu (%s): rc %d, stderr \"%s\"", i, cases[i].args[0], rc, err);
		if (rc == 1 && !strstr(out, "Usage: prog [flags]\n"))
			fail_msg("case %zu: no usage on stdout: \"%s\"", i, out);
		free(o.name);
		free(out);
		free(err);
	}
}

static void test_usage(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kube_flag_set s = set(false);
	kube_flags_usage(&s, f);
	fclose(f);
	assert_string_equal(buf, "Usage: prog [flags]\n"
				 "  --name string A name.\n"
				 "  --on          Switch it on.\n"
				 "  --tri\n"
				 "  -n, --n N     How many;\n"
				 "                at most 10.\n"
				 "  --port int\n"
				 "  --wait duration\n"
				 "  --legacy string\n"
				 "  -h, --help    Help for prog.\n");
	free(buf);
}

/* KUBE_FLAG_STRINGS: every occurrence appended in order, in both forms, copied. */
static void test_strings(void **state)
{
	(void)state;
	struct lopts {
		char **dirs;
		char *name;
	} o = { 0 };
	static const struct kube_flag lt[] = {
		{ "dir", 0, KUBE_FLAG_STRINGS, offsetof(struct lopts, dirs), .help = "A directory (repeatable)." },
		{ "name", 0, KUBE_FLAG_STRING, offsetof(struct lopts, name), .help = "A name." },
	};
	struct kube_flag_set ls = { .prog = "prog", .head = "", .flags = lt, .nflags = 2, .column = 16 };
	char a1[] = "--dir=/a", a3[] = "/b";
	char *argv[] = { "prog", a1, "--name", "x", "--dir", a3, "--dir=", NULL };
	char *out = NULL, *err = NULL;
	size_t ol = 0, el = 0;
	FILE *fo = open_memstream(&out, &ol), *fe = open_memstream(&err, &el);
	assert_int_equal(kube_flags_parse(&ls, 7, argv, &o, fo, fe), 0);
	fclose(fo);
	fclose(fe);
	assert_int_equal(kube_flag_strings_len(o.dirs), 3);
	assert_string_equal(o.dirs[0], "/a");
	assert_string_equal(o.dirs[1], "/b");
	assert_string_equal(o.dirs[2], "");
	assert_null(o.dirs[3]);
	assert_ptr_not_equal(o.dirs[1], a3); /* a copy even without copy_strings */
	assert_string_equal(o.name, "x");
	free(out);
	free(err);
	/* a missing value is an error, as for any flag with a value */
	char *argv2[] = { "prog", "--dir", NULL };
	fo = open_memstream(&out, &ol);
	fe = open_memstream(&err, &el);
	assert_int_equal(kube_flags_parse(&ls, 2, argv2, &o, fo, fe), 2);
	fclose(fo);
	fclose(fe);
	assert_string_equal(err, "Error: flag needs an argument: --dir\n");
	free(out);
	free(err);
	assert_int_equal(kube_flag_strings_len(o.dirs), 3);
	kube_flag_strings_free(o.dirs);
	assert_int_equal(kube_flag_strings_len(NULL), 0);
	/* the usage line names the kind */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kube_flags_usage(&ls, f);
	fclose(f);
	assert_non_null(strstr(buf, "  --dir strings A directory (repeatable).\n"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
