/* Tests for the shared raw JSON of decoded objects (scheduler/api/raw.c, sk_obj_raw_offer): a
 * decode of the offered object keeps a reference to the offered text instead of printing a copy;
 * any other decode prints its own, with the same bytes when the text is the stripped print. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "scheduler/api/raw.h"

#define POD_JSON \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\"," \
	"\"managedFields\":[{\"manager\":\"kubectl\"}]},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"," \
	"\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}"
#define NODE_JSON \
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"managedFields\":[{\"manager\":\"k\"}]}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}"

enum offer { OFFER_THIS, OFFER_OTHER, OFFER_NONE };

/* The informer's text of obj: its print with managedFields stripped (the scheduler's transform). */
static struct kube_text *stored_text(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	kube_transform_strip_managed_fields(o, NULL);
	struct kube_text *t = kube_text_adopt(cJSON_PrintUnformatted(o));
	cJSON_Delete(o);
	return t;
}

static void test_decode_shares_offered_text(void **state)
{
	(void)state;
	static const struct { const char *name, *json; bool pod; enum offer offer; bool shared; } cases[] = {
		{ "pod, offered", POD_JSON, true, OFFER_THIS, true },
		{ "pod, another object offered", POD_JSON, true, OFFER_OTHER, false },
		{ "pod, nothing offered", POD_JSON, true, OFFER_NONE, false },
		{ "node, offered", NODE_JSON, false, OFFER_THIS, true },
		{ "node, nothing offered", NODE_JSON, false, OFFER_NONE, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = cJSON_Parse(cases[i].json), *other = cJSON_Parse(cases[i].json);
		struct kube_text *t = stored_text(cases[i].json);
		if (cases[i].offer != OFFER_NONE)
			sk_obj_raw_offer(cases[i].offer == OFFER_THIS ? obj : other, t);
		char *err = NULL;
		struct sk_pod *p = cases[i].pod ? sk_pod_decode(obj, &err) : NULL;
		struct sk_node *n = cases[i].pod ? NULL : sk_node_decode(obj, &err);
		sk_obj_raw_offer(NULL, NULL);
		if (!p && !n)
			fail_msg("case %s: %s", cases[i].name, err ? err : "decode failed");
		const struct sk_obj_raw *r = p ? sk_pod_raw(p) : sk_node_raw(n);
		if ((r->shared != NULL) != cases[i].shared)
			fail_msg("case %s: shared %d, want %d", cases[i].name, r->shared != NULL, cases[i].shared);
		/* the same bytes either way: the extender wire cannot tell */
		assert_string_equal(r->json, t->s);
		assert_int_equal(r->len, t->len);
		assert_null(strstr(r->json, "managedFields"));
		assert_int_equal(atomic_load(&t->refs), cases[i].shared ? 2 : 1);
		if (cases[i].shared)
			assert_ptr_equal(r->json, t->s);
		if (p) {
			assert_true(sk_pod_limits_name(p, "cpu"));
			char *wire = sk_pod_raw_json(p);
			assert_string_equal(wire, t->s);
			free(wire);
		}
		sk_pod_unref(p);
		sk_node_unref(n);
		assert_int_equal(atomic_load(&t->refs), 1); /* the decoded view's reference is gone */
		kube_text_unref(t);
		cJSON_Delete(obj);
		cJSON_Delete(other);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_shares_offered_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
