/* Golden-file comparison for the operator's cmocka tests (see golden.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operator/tests/golden.h"

char *golden_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

void assert_golden(const char *name, const char *text)
{
	char path[512];
	const char *root = getenv("SK_ROOT");
	snprintf(path, sizeof path, "%s/operator/tests/golden/%s", root ? root : ".", name);
	if (getenv("SK_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		return;
	}
	char *want = golden_read_file(path);
	if (!want)
		fail_msg("golden file %s missing (SK_UPDATE_GOLDEN=1 creates it)", path);
	if (strcmp(want, text))
		print_error("%s differs; got:\n%s\n", path, text);
	assert_string_equal(want, text);
	free(want);
}
