/* Tests for e2e/apiserver/pod_defaults.c: requests defaulted from limits as upstream API
 * defaulting does (pkg/apis/core/v1/defaults.go, SetDefaults_Pod), table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e/apiserver/internal.h"

static void test_requests_from_limits(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *want;
	} cases[] = {
		/* limits only: requests become the limits */
		{ "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"example.com/gpu\":\"2\"}}}]}",
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"example.com/gpu\":\"2\"},"
		  "\"requests\":{\"cpu\":\"1\",\"example.com/gpu\":\"2\"}}}]}" },
		/* a request that is set wins; only the missing ones are copied */
		{ "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},"
		  "\"requests\":{\"cpu\":\"500m\"}}}]}",
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},"
		  "\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]}" },
		/* init containers too */
		{ "{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"example.com/fpga\":\"1\"}}}],"
		  "\"containers\":[{\"name\":\"c\"}]}",
		  "{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"example.com/fpga\":\"1\"},"
		  "\"requests\":{\"example.com/fpga\":\"1\"}}}],\"containers\":[{\"name\":\"c\"}]}" },
		/* nothing to do: no limits, empty limits, requests only */
		{ "{\"containers\":[{\"name\":\"c\"}]}", "{\"containers\":[{\"name\":\"c\"}]}" },
		{ "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{}}}]}",
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{}}}]}" },
		{ "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}",
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}" },
		/* a requests value that is not an object is replaced */
		{ "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\"},\"requests\":null}}]}",
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\"},\"requests\":{\"cpu\":\"1\"}}}]}" },
		/* hostile shapes: left alone, no crash */
		{ "{\"containers\":\"x\"}", "{\"containers\":\"x\"}" },
		{ "{\"containers\":[1,{\"resources\":7}]}", "{\"containers\":[1,{\"resources\":7}]}" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *spec = cJSON_Parse(cases[i].spec);
		assert_non_null(spec);
		apis_default_pod_requests(spec);
		char *got = cJSON_PrintUnformatted(spec);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu:\n got %s\nwant %s", i, got, cases[i].want);
		free(got);
		cJSON_Delete(spec);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_from_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
