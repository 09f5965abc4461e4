/* Tests for the live web view's messages (scheduler/decisions/dashboard.c): per-profile queue
 * counts pod by pod (a table of where a pod is), the state JSON (profiles and nodes sorted, zero
 * profiles kept, totals, the time, the store, recent taken), and the feed of decisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/decisions/dashboard.h"
#include "scheduler/tests/fixtures.h"

static int num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsNumber(v));
	return v->valueint;
}

static const char *text(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

struct count_case {
	const char *profile;
	enum sk_queue_where where;
};

static void test_queue_counts(void **state)
{
	(void)state;
	static const struct count_case pods[] = {
		{ "a", SK_Q_ACTIVE },        { "a", SK_Q_ACTIVE },   { "a", SK_Q_BACKOFF },
		{ "a", SK_Q_ERROR_BACKOFF }, /* counted as backoff */  { "a", SK_Q_UNSCHEDULABLE },
		{ "b", SK_Q_GATED },         { "b", SK_Q_IN_FLIGHT }, /* not pending */
		{ "b", SK_Q_NONE },          { NULL, SK_Q_ACTIVE },  /* no schedulerName: "" */
	};
	static const struct {
		const char *profile;
		int active, backoff, unschedulable, gated;
	} want[] = { { "a", 2, 2, 1, 0 }, { "b", 0, 0, 0, 1 }, { "", 1, 0, 0, 0 } };
	struct sk_dash_queues q = { 0 };
	for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++)
		assert_int_equal(sk_dash_queues_count(&q, pods[i].profile, pods[i].where), 0);
	assert_int_equal(q.n, 3);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct sk_dash_queue *e = sk_dash_queues_profile(&q, want[i].profile);
		assert_non_null(e);
		assert_int_equal(e->active, want[i].active);
		assert_int_equal(e->backoff, want[i].backoff);
		assert_int_equal(e->unschedulable, want[i].unschedulable);
		assert_int_equal(e->gated, want[i].gated);
	}
	assert_int_equal(q.n, 3); /* looking a profile up does not add it twice */
	sk_dash_queues_free(&q);
	assert_int_equal(q.n, 0);
}

static void test_state_json(void **state)
{
	(void)state;
	struct sk_dash_queues q = { 0 };
	sk_dash_queues_profile(&q, "zeta")->records = true;
	sk_dash_queues_profile(&q, "alpha"); /* configured, nothing pending: still listed */
	assert_int_equal(sk_dash_queues_count(&q, "zeta", SK_Q_UNSCHEDULABLE), 0);
	struct sk_dash_node nodes[] = {
		{ "n2", 500, 2000, 1 << 30, 4LL << 30, 3, 110, true },
		{ "n1", 3000, 4000, 3LL << 30, 8LL << 30, 5, 110, false },
	};
	cJSON *recent = cJSON_CreateArray();
	cJSON_AddItemToArray(recent, cJSON_CreateString("r"));
	struct sk_decisions_stats st = { .records = 7, .pods = 3, .bytes = 1234, .per_pod = 4, .max_records = 2000 };
	int64_t t = 1764633600LL * 1000000000LL + 123456000LL;
	cJSON *j = sk_dash_state_json(&q, nodes, 2, recent, &st, true, t);
	assert_non_null(j);
	assert_string_equal(text(j, "type"), "state");
	assert_string_equal(text(j, "time"), "2025-12-02T00:00:00.123456Z");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "leading")));

	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(j, "profiles");
	assert_int_equal(cJSON_GetArraySize(profiles), 2);
	const cJSON *p0 = cJSON_GetArrayItem(profiles, 0), *p1 = cJSON_GetArrayItem(profiles, 1);
	assert_string_equal(text(p0, "name"), "alpha");
	assert_int_equal(num(p0, "unschedulable"), 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p0, "records")));
	assert_string_equal(text(p1, "name"), "zeta");
	assert_int_equal(num(p1, "unschedulable"), 1);
	assert_int_equal(num(p1, "active") + num(p1, "backoff") + num(p1, "gated"), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p1, "records")));

	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "nodes");
	assert_int_equal(cJSON_GetArraySize(ns), 2);
	const cJSON *n1 = cJSON_GetArrayItem(ns, 0), *n2 = cJSON_GetArrayItem(ns, 1);
	assert_string_equal(text(n1, "name"), "n1");
	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(n1, "cpu"), "requested"), 3000);
	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(n1, "cpu"), "allocatable"), 4000);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(n1, "memory"), "allocatable")->valuedouble,
			 (double)(8LL << 30));
	assert_int_equal(num(n1, "pods"), 5);
	assert_int_equal(num(n1, "maxPods"), 110);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(n1, "unschedulable")));
	assert_string_equal(text(n2, "name"), "n2");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(n2, "unschedulable")));

	const cJSON *tot = cJSON_GetObjectItemCaseSensitive(j, "totals");
	assert_int_equal(num(tot, "nodes"), 2);
	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(tot, "cpu"), "requested"), 3500);
	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(tot, "cpu"), "allocatable"), 6000);
	assert_true(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tot, "memory"), "requested")->valuedouble ==
		    (double)(4LL << 30));
	assert_int_equal(num(tot, "pods"), 8);
	assert_int_equal(num(tot, "maxPods"), 220);

	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(j, "store"), "records"), 7);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "recent");
	assert_int_equal(cJSON_GetArraySize(r), 1);
	assert_string_equal(cJSON_GetArrayItem(r, 0)->valuestring, "r");
	cJSON_Delete(j);

	/* nothing at all: empty arrays, zero totals, no store; recent NULL gives [] */
	struct sk_dash_queues none = { 0 };
	j = sk_dash_state_json(&none, NULL, 0, NULL, NULL, false, 0);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "profiles")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "nodes")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "recent")), 0);
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "store"));
	assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "totals"), "cpu"), "allocatable"), 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "leading")));
	cJSON_Delete(j);
	sk_dash_queues_free(&q);
}

static void test_decisions_json(void **state)
{
	(void)state;
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"web\",\"uid\":\"u1\"},"
				    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_outcome o1 = { .pod = pod, .profile = "p", .result = SK_RESULT_SCHEDULED, .node = "n1", .attempts = 1,
				 .record = true, .num_all_nodes = 2, .prefilter_nodes = -1 };
	struct sk_outcome o2 = { .pod = pod, .profile = "p", .result = SK_RESULT_UNSCHEDULABLE,
				 .message = "0/2 nodes are available", .attempts = 2, .record = true, .num_all_nodes = 2,
				 .prefilter_nodes = -1 };
	struct sk_decision *v[2] = { sk_decision_build(&o2, 9, 2000000000LL), sk_decision_build(&o1, 8, 1000000000LL) };
	assert_non_null(v[0]);
	assert_non_null(v[1]);
	cJSON *j = sk_dash_decisions_json(v, 2);
	assert_string_equal(text(j, "type"), "decisions");
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
	assert_int_equal(cJSON_GetArraySize(items), 2);
	const cJSON *a = cJSON_GetArrayItem(items, 0), *b = cJSON_GetArrayItem(items, 1);
	assert_int_equal(num(a, "seq"), 9); /* order kept: newest first */
	assert_string_equal(text(a, "result"), "Unschedulable");
	assert_string_equal(text(cJSON_GetObjectItemCaseSensitive(a, "pod"), "name"), "web");
	assert_int_equal(num(b, "seq"), 8);
	assert_string_equal(text(b, "node"), "n1");
	assert_null(cJSON_GetObjectItemCaseSensitive(a, "score")); /* summaries, not the tables */
	cJSON_Delete(j);
	j = sk_dash_decisions_json(v, 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "items")), 0);
	cJSON_Delete(j);
	sk_decision_unref(v[0]);
	sk_decision_unref(v[1]);
	sk_pod_unref(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_counts),
		cmocka_unit_test(test_state_json),
		cmocka_unit_test(test_decisions_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
