/* Tests for plugins/DefaultBinder: binds through the handle; an API error is an Error status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static void test_bind(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "DefaultBinder");
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"ns\"}}");
	struct sk_status s = pl->desc->bind(pl, h->cs, p, "foohost.kubernetes.mydomain.com");
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(h->bind_calls, 1);
	assert_string_equal(h->bound, "ns/foo -> foohost.kubernetes.mydomain.com");

	h->bind_error = "pods \"foo\" not found";
	s = pl->desc->bind(pl, h->cs, p, "n1");
	assert_int_equal(s.code, SK_ERROR);
	char *m = ph_message(&s);
	assert_string_equal(m, "pods \"foo\" not found");
	free(m);
	assert_int_equal(h->bind_calls, 2);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_bind) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
