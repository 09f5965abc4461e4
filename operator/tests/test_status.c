/* Tests for operator/status.c: Accepted/Applied conditions and hashes for each plan outcome, the
 * applied hash read from the scheduler's Lease, and stability (same situation -> identical status,
 * lastTransitionTime kept when only a message changes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/history.h"
#include "operator/status.h"

#define HASH "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define OTHER "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define PHASH "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc" /* the profile's own */
#define PHASH_OLD "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"

static struct op_plan plan(void)
{
	struct op_plan p = { 0 };
	p.config_yaml = strdup("x: 1\n");
	memcpy(p.config_hash, HASH, 65);
	p.nrendered = 1;
	return p;
}

static struct op_profile_result result(bool accepted, const char *reason, enum op_source src)
{
	struct op_profile_result r = { .name = "p", .generation = 4, .scheduler_name = "p", .accepted = accepted,
				       .reason = reason, .message = accepted ? "valid" : "bad thing", .source = src,
				       .rendered_generation = src == OP_SOURCE_LAST_ACCEPTED ? 2 : 4,
				       .rendered_scheduler_name = src != OP_SOURCE_NONE ? "p" : NULL };
	if (src != OP_SOURCE_NONE)
		memcpy(r.rendered_hash, PHASH, 65);
	return r;
}

static const cJSON *cond(const cJSON *st, const char *type)
{
	const cJSON *c = kube_condition_find(cJSON_GetObjectItem(st, "conditions"), type);
	assert_non_null(c);
	return c;
}

static void assert_cond(const cJSON *st, const char *type, const char *status, const char *reason)
{
	const cJSON *c = cond(st, type);
	assert_string_equal(kube_obj_get_string(c, "status"), status);
	assert_string_equal(kube_obj_get_string(c, "reason"), reason);
	int64_t g;
	assert_int_equal(kube_json_get_int64(cJSON_GetObjectItem(c, "observedGeneration"), &g), 0);
	assert_int_equal(g, 4);
}

static cJSON *obj_with_status(cJSON *status)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "status", status);
	return o;
}

static void test_outcomes(void **state)
{
	(void)state;
	struct op_plan p = plan();
	static const struct {
		bool accepted;
		const char *reason;
		enum op_source src;
		const char *applied;
		const char *want_applied_status, *want_applied_reason;
		bool want_rendered_hash;
	} t[] = {
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, HASH, "True", OP_APPLIED_APPLIED, true },
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, OTHER, "False", OP_APPLIED_PENDING, true },
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, NULL, "False", OP_APPLIED_PENDING, true },
		{ false, OP_REASON_INVALID, OP_SOURCE_LAST_ACCEPTED, HASH, "True", OP_APPLIED_LAST_ACCEPTED, true },
		{ false, OP_REASON_INVALID, OP_SOURCE_NONE, HASH, "False", OP_APPLIED_NOT_IN_CONFIG, false },
		{ false, OP_REASON_CONFLICT, OP_SOURCE_NONE, HASH, "False", OP_APPLIED_NOT_IN_CONFIG, false },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct op_profile_result r = result(t[i].accepted, t[i].reason, t[i].src);
		cJSON *st = op_status_desired(NULL, &r, &p, t[i].applied, NULL, "schedkit-system/schedkit-scheduler",
					      "2025-01-01T00:00:00Z");
		assert_non_null(st);
		assert_cond(st, "Accepted", t[i].accepted ? "True" : "False", t[i].reason);
		assert_string_equal(kube_obj_get_string(cond(st, "Accepted"), "message"), r.message);
		assert_cond(st, "Applied", t[i].want_applied_status, t[i].want_applied_reason);
		assert_string_equal(kube_obj_get_string(st, "schedulerName"), "p");
		if (t[i].want_rendered_hash) {
			assert_string_equal(kube_obj_get_string(st, "renderedHash"), PHASH);
			/* the leader runs the configuration rendered now: this very version */
			if (t[i].applied && !strcmp(t[i].applied, HASH))
				assert_string_equal(kube_obj_get_string(st, "appliedHash"), PHASH);
			else
				assert_null(cJSON_GetObjectItem(st, "appliedHash"));
		} else {
			assert_null(cJSON_GetObjectItem(st, "renderedHash"));
			assert_null(cJSON_GetObjectItem(st, "appliedHash"));
		}
		cJSON_Delete(st);
	}
	op_plan_free(&p);
}

static void test_stable_and_transitions(void **state)
{
	(void)state;
	struct op_plan p = plan();
	struct op_profile_result r = result(true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT);
	cJSON *s1 = op_status_desired(NULL, &r, &p, NULL, NULL, "ns/l", "2025-01-01T00:00:00Z");
	cJSON *o1 = obj_with_status(s1);
	/* same inputs later: identical, so nothing is written */
	cJSON *s2 = op_status_desired(o1, &r, &p, NULL, NULL, "ns/l", "2025-01-01T09:00:00Z");
	assert_true(op_status_equal(s1, s2));
	/* the scheduler reports the hash: Applied flips, its time moves, Accepted's does not */
	cJSON *s3 = op_status_desired(o1, &r, &p, HASH, NULL, "ns/l", "2025-01-01T10:00:00Z");
	assert_false(op_status_equal(s1, s3));
	assert_string_equal(kube_obj_get_string(cond(s3, "Applied"), "lastTransitionTime"), "2025-01-01T10:00:00Z");
	assert_string_equal(kube_obj_get_string(cond(s3, "Accepted"), "lastTransitionTime"), "2025-01-01T00:00:00Z");
	/* another message with the same status keeps the transition time */
	cJSON *o3 = obj_with_status(s3);
	r.message = "valid, differently";
	cJSON *s4 = op_status_desired(o3, &r, &p, HASH, NULL, "ns/l", "2025-01-01T11:00:00Z");
	assert_string_equal(kube_obj_get_string(cond(s4, "Accepted"), "message"), "valid, differently");
	assert_string_equal(kube_obj_get_string(cond(s4, "Accepted"), "lastTransitionTime"), "2025-01-01T00:00:00Z");
	cJSON_Delete(s2);
	cJSON_Delete(s4);
	cJSON_Delete(o1);
	cJSON_Delete(o3);
	op_plan_free(&p);
}

static void test_lease_hash(void **state)
{
	(void)state;
	const char *held = "{\"metadata\":{\"annotations\":{\"schedkit.io/config-hash\":\"" HASH "\"}},"
			   "\"spec\":{\"holderIdentity\":\"host_1\"}}";
	const char *released = "{\"metadata\":{\"annotations\":{\"schedkit.io/config-hash\":\"" HASH "\"}},"
			       "\"spec\":{\"holderIdentity\":\"\"}}";
	const char *nohash = "{\"metadata\":{},\"spec\":{\"holderIdentity\":\"host_1\"}}";
	cJSON *a = kube_json_parse(held, strlen(held), NULL), *b = kube_json_parse(released, strlen(released), NULL),
	      *c = kube_json_parse(nohash, strlen(nohash), NULL);
	assert_string_equal(op_lease_applied_hash(a), HASH);
	assert_null(op_lease_applied_hash(b));
	assert_null(op_lease_applied_hash(c));
	assert_null(op_lease_applied_hash(NULL));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* A reload the scheduler refused: its Lease names the rejected hash and the loader's message.
 * When that is the configuration rendered now, every profile in it reports it (Applied=False,
 * ConfigRejected, the scheduler's words), even when the leader reports that same hash as running
 * (same config.yaml, changed plugin files); a rejection of another hash and a profile left out of
 * the configuration are not affected. */
static void test_config_rejected(void **state)
{
	(void)state;
	const char *lease_json =
		"{\"metadata\":{\"annotations\":{\"schedkit.io/config-hash\":\"" OTHER "\","
		"\"schedkit.io/rejected-config-hash\":\"" HASH "\","
		"\"schedkit.io/rejected-config-error\":\"plugin file \\\"/p/broken.so\\\": not a schedkit plugin\"}},"
		"\"spec\":{\"holderIdentity\":\"host_1\"}}";
	cJSON *lease = kube_json_parse(lease_json, strlen(lease_json), NULL);
	assert_non_null(lease);
	assert_string_equal(op_lease_rejected_error(lease, HASH), "plugin file \"/p/broken.so\": not a schedkit plugin");
	assert_null(op_lease_rejected_error(lease, OTHER));
	assert_null(op_lease_rejected_error(lease, ""));
	assert_null(op_lease_rejected_error(NULL, HASH));
	/* a rejection without a message still says who rejected it */
	cJSON *nomsg = kube_json_parse("{\"metadata\":{\"annotations\":{\"schedkit.io/rejected-config-hash\":\"" HASH "\"}}}",
				       strlen("{\"metadata\":{\"annotations\":{\"schedkit.io/rejected-config-hash\":\"" HASH "\"}}}"),
				       NULL);
	assert_non_null(strstr(op_lease_rejected_error(nomsg, HASH), "rejected"));
	cJSON_Delete(nomsg);

	struct op_plan p = plan();
	const char *rej = op_lease_rejected_error(lease, p.config_hash);
	static const struct {
		bool accepted;
		const char *reason;
		enum op_source src;
		const char *applied;
		const char *want_status, *want_reason;
	} t[] = {
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, OTHER, "False", OP_APPLIED_CONFIG_REJECTED },
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, NULL, "False", OP_APPLIED_CONFIG_REJECTED },
		{ false, OP_REASON_INVALID, OP_SOURCE_LAST_ACCEPTED, OTHER, "False", OP_APPLIED_CONFIG_REJECTED },
		{ false, OP_REASON_INVALID, OP_SOURCE_NONE, OTHER, "False", OP_APPLIED_NOT_IN_CONFIG },
		/* the leader still runs this config.yaml, but refused it with the plugin files that
		 * changed under it: the rejection wins */
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, HASH, "False", OP_APPLIED_CONFIG_REJECTED },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct op_profile_result r = result(t[i].accepted, t[i].reason, t[i].src);
		cJSON *st = op_status_desired(NULL, &r, &p, t[i].applied, rej, "ns/l", "2025-01-01T00:00:00Z");
		assert_non_null(st);
		assert_cond(st, "Applied", t[i].want_status, t[i].want_reason);
		if (!strcmp(t[i].want_reason, OP_APPLIED_CONFIG_REJECTED))
			assert_string_equal(kube_obj_get_string(cond(st, "Applied"), "message"),
					    "plugin file \"/p/broken.so\": not a schedkit plugin");
		/* Accepted is the operator's own verdict and does not change */
		assert_cond(st, "Accepted", t[i].accepted ? "True" : "False", t[i].reason);
		cJSON_Delete(st);
	}
	/* a stale rejection of another configuration: back to Pending */
	struct op_profile_result r = result(true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT);
	cJSON *st = op_status_desired(NULL, &r, &p, OTHER, op_lease_rejected_error(lease, OTHER), "ns/l",
				      "2025-01-01T00:00:00Z");
	assert_cond(st, "Applied", "False", OP_APPLIED_PENDING);
	cJSON_Delete(st);
	cJSON_Delete(lease);
	op_plan_free(&p);
}

static void test_status_equal(void **state)
{
	(void)state;
	cJSON *e = cJSON_CreateObject(), *n = cJSON_CreateNull();
	assert_true(op_status_equal(NULL, e));
	assert_true(op_status_equal(n, NULL));
	cJSON *x = kube_json_parse("{\"a\":1,\"b\":2}", 13, NULL), *y = kube_json_parse("{\"b\":2,\"a\":1}", 13, NULL);
	assert_true(op_status_equal(x, y));
	assert_false(op_status_equal(x, e));
	cJSON_Delete(e);
	cJSON_Delete(n);
	cJSON_Delete(x);
	cJSON_Delete(y);
}

/* Applied judged per profile: the leader runs an older configuration (OTHER); the history says
 * which version of this profile it held, so a profile unchanged since then stays Applied and
 * one that changed (or is new) is Pending. A rejection of the configuration rendered now does
 * not take Applied from a profile whose version the leader still runs. */
static void test_applied_per_profile(void **state)
{
	(void)state;
	static const struct {
		const char *history;  /* the ConfigMap's annotation value */
		const char *rejected; /* rejection of the configuration rendered now */
		const char *want_status, *want_reason, *want_applied_hash, *want_msg;
	} t[] = {
		{ "{\"" OTHER "\":{\"p\":\"" PHASH "\"}}", NULL, "True", OP_APPLIED_APPLIED, PHASH, "runs this profile" },
		{ "{\"" OTHER "\":{\"p\":\"" PHASH_OLD "\"}}", NULL, "False", OP_APPLIED_PENDING, PHASH_OLD,
		  "runs an earlier version (dddddddddddd); waiting for it to load cccccccccccc" },
		{ "{\"" OTHER "\":{\"q\":\"" PHASH "\"}}", NULL, "False", OP_APPLIED_PENDING, NULL,
		  "waiting for schedkit-scheduler to load this profile" },
		{ "{}", NULL, "False", OP_APPLIED_PENDING, NULL, "waiting for schedkit-scheduler to load" },
		{ "not json", NULL, "False", OP_APPLIED_PENDING, NULL, "waiting" },
		{ "{\"" OTHER "\":{\"p\":\"" PHASH "\"}}", "refused", "True", OP_APPLIED_APPLIED, PHASH, "runs this profile" },
		{ "{\"" OTHER "\":{\"p\":\"" PHASH_OLD "\"}}", "refused", "False", OP_APPLIED_CONFIG_REJECTED, PHASH_OLD,
		  "refused" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct op_plan p = plan();
		p.history = op_history_update(t[i].history, &p); /* the plan's own config first, then the old ones */
		assert_non_null(p.history);
		struct op_profile_result r = result(true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT);
		cJSON *st = op_status_desired(NULL, &r, &p, OTHER, t[i].rejected, "ns/l", "2025-01-01T00:00:00Z");
		assert_non_null(st);
		assert_cond(st, "Applied", t[i].want_status, t[i].want_reason);
		if (!strstr(kube_obj_get_string(cond(st, "Applied"), "message"), t[i].want_msg))
			fail_msg("case %zu: message %s", i, kube_obj_get_string(cond(st, "Applied"), "message"));
		if (t[i].want_applied_hash)
			assert_string_equal(kube_obj_get_string(st, "appliedHash"), t[i].want_applied_hash);
		else
			assert_null(cJSON_GetObjectItem(st, "appliedHash"));
		cJSON_Delete(st);
		op_plan_free(&p);
	}
}

/* Another profile changed: the configuration hash moves, this profile's status does not. */
static void test_other_profile_change_keeps_status(void **state)
{
	(void)state;
	struct op_profile_result r = result(true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT);
	struct op_plan a = plan();
	a.profiles = &r;
	a.n = 1;
	a.history = op_history_update(NULL, &a);
	cJSON *s1 = op_status_desired(NULL, &r, &a, HASH, NULL, "ns/l", "2025-01-01T00:00:00Z");
	cJSON *o1 = obj_with_status(s1);
	char *hist = kube_json_print(a.history);
	struct op_plan b = plan();
	memcpy(b.config_hash, OTHER, 65); /* a new configuration; the leader still runs HASH */
	b.profiles = &r;
	b.n = 1;
	b.history = op_history_update(hist, &b);
	cJSON *s2 = op_status_desired(o1, &r, &b, HASH, NULL, "ns/l", "2025-01-01T01:00:00Z");
	assert_true(op_status_equal(s1, s2));
	/* ... and once the leader loads it */
	cJSON *s3 = op_status_desired(o1, &r, &b, OTHER, NULL, "ns/l", "2025-01-01T02:00:00Z");
	assert_true(op_status_equal(s1, s3));
	free(hist);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
	cJSON_Delete(o1);
	a.profiles = b.profiles = NULL;
	a.n = b.n = 0;
	op_plan_free(&a);
	op_plan_free(&b);
}

/* Ready: True only for the current spec, accepted and run; else why not. */
static void test_ready(void **state)
{
	(void)state;
	struct op_plan p = plan();
	static const struct {
		bool accepted;
		const char *reason;
		enum op_source src;
		const char *applied;
		const char *want_status, *want_reason;
	} t[] = {
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, HASH, "True", OP_READY_READY },
		{ true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT, NULL, "False", OP_APPLIED_PENDING },
		{ false, OP_REASON_INVALID, OP_SOURCE_LAST_ACCEPTED, HASH, "False", OP_REASON_INVALID },
		{ false, OP_REASON_CONFLICT, OP_SOURCE_NONE, HASH, "False", OP_REASON_CONFLICT },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct op_profile_result r = result(t[i].accepted, t[i].reason, t[i].src);
		cJSON *st = op_status_desired(NULL, &r, &p, t[i].applied, NULL, "ns/l", "2025-01-01T00:00:00Z");
		assert_cond(st, "Ready", t[i].want_status, t[i].want_reason);
		assert_non_null(kube_obj_get_string(cond(st, "Ready"), "message"));
		cJSON_Delete(st);
	}
	op_plan_free(&p);
}

/* The history: the plan's configuration first, older ones after in their order, bounded, bad
 * entries dropped, and stable when nothing changed. */
static void test_history(void **state)
{
	(void)state;
	struct op_plan p = plan();
	struct op_profile_result prof = result(true, OP_REASON_ACCEPTED, OP_SOURCE_CURRENT);
	p.profiles = &prof;
	p.n = 1;
	cJSON *h = op_history_update("{\"" OTHER "\":{\"q\":\"x\"},\"bad\":7}", &p);
	char *text = kube_json_print(h);
	assert_string_equal(text, "{\"" HASH "\":{\"p\":\"" PHASH "\"},\"" OTHER "\":{\"q\":\"x\"}}");
	cJSON *again = op_history_update(text, &p);
	assert_true(cJSON_Compare(h, again, 1));
	const char *got = NULL;
	assert_int_equal(op_history_lookup(h, OTHER, "q", &got), 1);
	assert_string_equal(got, "x");
	assert_int_equal(op_history_lookup(h, OTHER, "p", &got), 0);
	assert_int_equal(op_history_lookup(h, "nope", "p", &got), -1);
	/* bounded */
	char old[4096] = "{";
	for (int i = 0; i < OP_HISTORY_MAX + 3; i++)
		snprintf(old + strlen(old), sizeof old - strlen(old), "%s\"h%d\":{}", i ? "," : "", i);
	strcat(old, "}");
	cJSON *many = op_history_update(old, &p);
	assert_int_equal(cJSON_GetArraySize(many), OP_HISTORY_MAX);
	assert_string_equal(many->child->string, HASH);
	/* and bounded in bytes: two old configurations of ~40 KiB each, only the newer one fits */
	size_t big = 40000;
	char *huge = malloc(2 * big + 256), *w = huge;
	w += sprintf(w, "{");
	for (int k = 0; k < 2; k++) {
		w += sprintf(w, "%s\"old%d\":{\"n\":\"", k ? "," : "", k);
		memset(w, 'x', big);
		w += big;
		w += sprintf(w, "\"}");
	}
	sprintf(w, "}");
	cJSON *sized = op_history_update(huge, &p);
	assert_int_equal(cJSON_GetArraySize(sized), 2);
	assert_non_null(cJSON_GetObjectItem(sized, "old0"));
	assert_null(cJSON_GetObjectItem(sized, "old1"));
	free(huge);
	cJSON_Delete(sized);
	free(text);
	cJSON_Delete(h);
	cJSON_Delete(again);
	cJSON_Delete(many);
	p.profiles = NULL;
	p.n = 0;
	op_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_stable_and_transitions),
		cmocka_unit_test(test_lease_hash),
		cmocka_unit_test(test_config_rejected),
		cmocka_unit_test(test_status_equal),
		cmocka_unit_test(test_applied_per_profile),
		cmocka_unit_test(test_other_profile_change_keeps_status),
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_history),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
