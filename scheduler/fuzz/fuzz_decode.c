/* libFuzzer target: API objects into the scheduler's views. The input is parsed by cJSON and
 * decoded both as a v1.Pod (sk_pod_decode) and as a v1.Node (sk_node_decode); what decodes is then
 * placed in a NodeInfo (requests, ports, images) and removed again, so the aggregation runs on
 * every accepted shape. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedkit/types.h"
#include "scheduler/backend/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	if (!obj)
		return 0;
	char *err = NULL;
	struct sk_pod *pod = sk_pod_decode(obj, &err);
	if (!pod && !err)
		abort(); /* a rejection always names its field */
	free(err);
	err = NULL;
	struct sk_node *node = sk_node_decode(obj, &err);
	if (!node && !err)
		abort();
	free(err);
	cJSON_Delete(obj); /* the views must not borrow from the JSON */

	if (pod) {
		char key[512];
		sk_pod_key(pod, key, sizeof(key));
		struct sk_pod *bound = sk_pod_with_node(pod, "fuzz-node");
		struct sk_node_info *ni = sk_node_info_new(node); /* takes its own reference */
		if (ni && bound && sk_node_info_add_pod(ni, bound) == 0) {
			struct sk_node_info *c = sk_node_info_clone(ni);
			if (sk_node_info_remove_pod(ni, bound) != 0)
				abort(); /* just added */
			if (ni->npods != 0)
				abort();
			sk_node_info_free(c);
		}
		sk_node_info_free(ni);
		sk_pod_unref(bound);
		sk_pod_unref(pod);
	}
	sk_node_unref(node);
	return 0;
}
