/* Tests for plugins/ImageLocality against upstream's image_locality_test examples (pkg/scheduler/framework/plugins/imagelocality/image_locality.go). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

#define MB "1048576"

static void test_spread_images(void **state)
{
	(void)state;
	/* "two images spread on two nodes, prefer the larger image one": 0 and 5 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(
				   fx_node_info(fx_node("{\"metadata\":{\"name\":\"node1\"},\"status\":{\"images\":["
							"{\"names\":[\"gcr.io/40:latest\"],\"sizeBytes\":41943040}]}}"),
						NULL),
				   fx_node_info(fx_node("{\"metadata\":{\"name\":\"node2\"},\"status\":{\"images\":["
							"{\"names\":[\"gcr.io/250:latest\"],\"sizeBytes\":262144000}]}}"),
						NULL),
				   NULL));
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"image\":\"gcr.io/40\"},"
				  "{\"image\":\"gcr.io/250\"}]}}");
	int64_t got[2];
	ph_scores(h, ph_plugin(h, "ImageLocality"), p, got);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 5);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_two_images_one_node(void **state)
{
	(void)state;
	/* "two images on one node": (40+300)/2 MiB -> 7; node2 has none -> 0 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(
				   fx_node_info(fx_node("{\"metadata\":{\"name\":\"node1\"},\"status\":{\"images\":["
							"{\"names\":[\"gcr.io/40:latest\"],\"sizeBytes\":41943040},"
							"{\"names\":[\"gcr.io/300:latest\"],\"sizeBytes\":314572800}]}}"),
						NULL),
				   fx_node_info(fx_node("{\"metadata\":{\"name\":\"node2\"}}"), NULL), NULL));
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"image\":\"gcr.io/40\"},"
				  "{\"image\":\"gcr.io/300\"}]}}");
	int64_t got[2];
	ph_scores(h, ph_plugin(h, "ImageLocality"), p, got);
	assert_int_equal(got[0], 7);
	assert_int_equal(got[1], 0);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_no_containers(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(fx_node("{\"metadata\":{\"name\":\"node1\"}}"), NULL), NULL));
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
	int64_t got[1] = { -1 };
	ph_scores(h, ph_plugin(h, "ImageLocality"), p, got);
	assert_int_equal(got[0], 0);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_images),
		cmocka_unit_test(test_two_images_one_node),
		cmocka_unit_test(test_no_containers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
