/* Tests of the operator's part of decision records (docs/explain.md): spec.decisionRecords
 * rendered into the profile (and checked by the scheduler's loader), SchedulerProfile
 * status.decisions copied from the scheduler leader's Lease annotation (status_decisions.c), and
 * when a Lease update means a reconcile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/render.h"
#include "operator/status_decisions.h"
#include "scheduler/config/config.h"

static cJSON *lease_with(const char *summary)
{
	cJSON *l = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(l, "metadata");
	cJSON_AddStringToObject(md, "name", "schedkit-scheduler");
	if (summary)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), OP_DECISION_SUMMARY_ANNOTATION, summary);
	return l;
}

static void test_add_decisions_table(void **state)
{
	(void)state;
	static const char good[] = "{\"bin-packing\":{\"windowSeconds\":600,\"scheduled\":7,\"unschedulable\":2,\"errors\":0,"
				   "\"topReasons\":[{\"reason\":\"Insufficient cpu\",\"count\":2}]},"
				   "\"spread\":{\"windowSeconds\":600,\"scheduled\":1,\"unschedulable\":0,\"errors\":0,\"topReasons\":[]}}";
	static const struct {
		const char *summary; /* NULL: no annotation */
		const char *profile;
		int want_unschedulable; /* -1: no decisions field */
	} cases[] = {
		{ good, "bin-packing", 2 },
		{ good, "spread", 0 },
		{ good, "other", -1 },
		{ NULL, "bin-packing", -1 },
		{ "not json", "bin-packing", -1 },
		{ "[1,2]", "bin-packing", -1 },
		{ "{\"bin-packing\": 3}", "bin-packing", -1 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		cJSON *lease = lease_with(cases[c].summary);
		cJSON *st = cJSON_CreateObject();
		assert_int_equal(op_status_add_decisions(st, lease, cases[c].profile), 0);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(st, "decisions");
		if (cases[c].want_unschedulable < 0) {
			if (d)
				fail_msg("case %zu: unexpected decisions", c);
		} else {
			assert_non_null(d);
			assert_int_equal(cJSON_GetObjectItemCaseSensitive(d, "unschedulable")->valueint, cases[c].want_unschedulable);
			assert_int_equal(cJSON_GetObjectItemCaseSensitive(d, "windowSeconds")->valueint, 600);
		}
		cJSON_Delete(st);
		cJSON_Delete(lease);
	}
	/* no Lease at all */
	cJSON *st = cJSON_CreateObject();
	assert_int_equal(op_status_add_decisions(st, NULL, "x"), 0);
	assert_null(st->child);
	cJSON_Delete(st);
}

static void test_lease_change(void **state)
{
	(void)state;
	cJSON *a = lease_with("{\"p\":{}}"), *b = lease_with("{\"p\":{}}"), *c = lease_with("{\"p\":{\"scheduled\":1}}"),
	      *none = lease_with(NULL);
	assert_false(op_lease_decisions_changed(a, b));
	assert_true(op_lease_decisions_changed(a, c));
	assert_true(op_lease_decisions_changed(none, a));
	assert_false(op_lease_decisions_changed(none, none));
	assert_false(op_lease_decisions_changed(NULL, none));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	cJSON_Delete(none);
}

static void test_render_decision_records(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		const char *err; /* NULL: renders and loads */
		bool enabled, annotations;
	} cases[] = {
		{ "{}", NULL, false, false },
		{ "{\"decisionRecords\":{\"enabled\":true}}", NULL, true, false },
		{ "{\"decisionRecords\":{\"enabled\":true,\"annotations\":true}}", NULL, true, true },
		{ "{\"decisionRecords\":true}", "spec.decisionRecords", false, false },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		cJSON *spec = cJSON_Parse(cases[c].spec), *prof = NULL;
		char *err = NULL;
		int rc = op_render_profile(spec, "p", &prof, &err);
		if (cases[c].err) {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err, cases[c].err));
		} else {
			assert_int_equal(rc, 0);
			/* the rendered profile, in a configuration, loads with the scheduler's loader */
			cJSON *cfgj = cJSON_CreateObject();
			cJSON_AddStringToObject(cfgj, "apiVersion", "kubescheduler.config.k8s.io/v1");
			cJSON_AddStringToObject(cfgj, "kind", "KubeSchedulerConfiguration");
			cJSON_AddItemToArray(cJSON_AddArrayToObject(cfgj, "profiles"), prof);
			prof = NULL;
			char *text = cJSON_PrintUnformatted(cfgj);
			struct sk_errors e = { 0 };
			struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
			assert_non_null(cfg);
			assert_int_equal(cfg->profiles[0].records.enabled, cases[c].enabled);
			assert_int_equal(cfg->profiles[0].records.annotations, cases[c].annotations);
			sk_config_free(cfg);
			sk_errors_free(&e);
			free(text);
			cJSON_Delete(cfgj);
		}
		cJSON_Delete(prof);
		cJSON_Delete(spec);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_decisions_table),
		cmocka_unit_test(test_lease_change),
		cmocka_unit_test(test_render_decision_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
