/* libFuzzer target: scheduler extender responses (scheduler/framework/extender.h). The first byte
 * picks the verb (filter with or without nodeCacheCapable, prioritize, bind, preempt); the rest is
 * the HTTP body, parsed as sk_extender_post does and decoded against three known nodes (for
 * preempt: a snapshot of them, one pod each). Kept nodes must come from the input, the failed
 * list must have no duplicates, preempt victims must be pods of their node. For filter and
 * prioritize the answer is also read without cJSON (extender_fast.c): when that path decides, the
 * cJSON path must have succeeded with exactly the same result. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedkit/types.h"
#include "scheduler/backend/cache.h"
#include "scheduler/framework/extender.h"
#include "scheduler/framework/extender_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NNODES 3

static struct sk_extender *ext[2]; /* [1]: nodeCacheCapable */
static struct sk_node_info *nodes[NNODES];
static struct sk_snapshot *snap; /* the nodes again, with pod v<i> (uid u<i>) on n<i> */

static void setup(void)
{
	for (int c = 0; c < 2; c++) {
		cJSON *cfg = cJSON_Parse(c ? "{\"urlPrefix\":\"http://127.0.0.1:1/x\",\"filterVerb\":\"filter\","
					     "\"prioritizeVerb\":\"prioritize\",\"bindVerb\":\"bind\",\"weight\":3,"
					     "\"nodeCacheCapable\":true}"
					   : "{\"urlPrefix\":\"http://127.0.0.1:1/x\",\"filterVerb\":\"filter\","
					     "\"prioritizeVerb\":\"prioritize\",\"bindVerb\":\"bind\",\"weight\":2}");
		char *err = NULL;
		ext[c] = sk_extender_new(cfg, "extenders[0]", &err);
		if (!ext[c])
			abort();
		cJSON_Delete(cfg);
	}
	static const char *const names[NNODES] = { "n1", "n2", "n3" };
	for (int i = 0; i < NNODES; i++) {
		char text[128];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"}}", names[i]);
		cJSON *j = cJSON_Parse(text);
		struct sk_node *n = sk_node_decode(j, NULL);
		cJSON_Delete(j);
		nodes[i] = n ? sk_node_info_new(n) : NULL;
		if (!nodes[i])
			abort();
		sk_node_unref(n);
	}
	struct sk_node_info *sn[NNODES];
	for (int i = 0; i < NNODES; i++) {
		char text[256];
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"v%d\",\"namespace\":\"d\",\"uid\":\"u%d\"},"
			 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\"}]}}",
			 i + 1, i + 1, names[i]);
		cJSON *j = cJSON_Parse(text);
		struct sk_pod *p = sk_pod_decode(j, NULL);
		cJSON_Delete(j);
		sn[i] = sk_node_info_clone(nodes[i]);
		if (!p || !sn[i] || sk_node_info_add_pod(sn[i], p) != 0)
			abort();
		sk_pod_unref(p);
	}
	if (!(snap = sk_snapshot_from_node_infos(sn, NNODES)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ext[0])
		setup();
	if (size < 1 || size > 64 * 1024)
		return 0;
	unsigned verb = data[0] % 5;
	/* post() parses a NUL-terminated copy of the body */
	char *body = malloc(size);
	if (!body)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	const struct sk_node_info *const *in = (const struct sk_node_info *const *)nodes;
	struct sk_extender_filter_result fr = { 0 };
	int64_t fadd[NNODES] = { 0 };
	int fast = 0;
	if (verb < 2) {
		if (!(fr.nodes = malloc(NNODES * sizeof(*fr.nodes))))
			abort();
		fast = sk_extender_filter_fast(ext[verb], body, in, NNODES, &fr);
	} else if (verb == 2) {
		fast = sk_extender_prioritize_fast(ext[0], body, in, NNODES, fadd);
	}
	if (fast < 0)
		abort(); /* no ENOMEM here */
	const char *end = NULL;
	cJSON *res = cJSON_ParseWithOpts(body, &end, 0);
	free(body);
	if (!res) {
		if (fast)
			abort(); /* decided a body cJSON rejects */
		sk_extender_filter_result_free(&fr);
		return 0;
	}
	char *err = NULL;
	if (verb < 2) {
		struct sk_extender_filter_result r = { 0 };
		int rc = sk_extender_filter_decode(ext[verb], res, in, NNODES, &r, &err);
		if (fast && (rc != 0 || r.n != fr.n || r.nfailed != fr.nfailed))
			abort();
		for (int i = 0; fast && i < r.n; i++)
			if (r.nodes[i] != fr.nodes[i])
				abort();
		for (int i = 0; fast && i < r.nfailed; i++)
			if (strcmp(r.failed[i].node, fr.failed[i].node) || strcmp(r.failed[i].message, fr.failed[i].message) ||
			    r.failed[i].unresolvable != fr.failed[i].unresolvable)
				abort();
		sk_extender_filter_result_free(&fr);
		if (rc == 0) {
			if (r.n < 0 || r.n > NNODES)
				abort();
			for (int i = 0; i < r.n; i++) {
				int k = 0;
				while (k < NNODES && r.nodes[i] != nodes[k])
					k++;
				if (k == NNODES)
					abort(); /* a kept node is one of the input's */
			}
			for (int i = 0; i < r.nfailed; i++)
				for (int j = i + 1; j < r.nfailed; j++)
					if (strcmp(r.failed[i].node, r.failed[j].node) == 0)
						abort();
			sk_extender_filter_result_free(&r);
		} else if (!err || r.nodes || r.failed) {
			abort(); /* failure: a message, nothing left to free */
		}
	} else if (verb == 2) {
		int64_t add[NNODES] = { 0 };
		int rc = sk_extender_prioritize_decode(ext[0], res, in, NNODES, add, &err);
		if (rc != 0 && !err)
			abort();
		if (fast && (rc != 0 || memcmp(add, fadd, sizeof(add)) != 0))
			abort();
	} else if (verb == 3) {
		if (sk_extender_bind_decode(ext[0], res, &err) != 0 && !err)
			abort();
	} else {
		struct sk_victims *v = NULL;
		int n = 0;
		if (sk_extender_preempt_decode(ext[0], res, snap, &v, &n, &err) == 0) {
			if (n < 0 || n > NNODES)
				abort(); /* one entry per distinct node of the snapshot */
			for (int i = 0; i < n; i++) {
				const struct sk_node_info *ni = sk_snapshot_get(snap, v[i].node);
				for (int k = 0; k < v[i].npods; k++)
					if (!ni || ni->npods != 1 || v[i].pods[k] != ni->pods[0].pod)
						abort(); /* a victim is a pod of its node */
			}
			sk_victims_free(v, n);
		} else if (!err || v || n) {
			abort();
		}
	}
	free(err);
	cJSON_Delete(res);
	return 0;
}
