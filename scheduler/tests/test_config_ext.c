/* Tests for scheduler/config/config_ext.c: --validate's note on per-profile extenders and the
 * redaction of extender TLS secrets in the configuration's JSON form (/configz). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/extender.h"

static const char CFG[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			  "extenders:\n- urlPrefix: https://top:8443\n  filterVerb: f\n"
			  "  tlsConfig: {keyData: c2VjcmV0LWtleQ==, certData: Y2VydA==, caData: Y2E=}\n"
			  "profiles:\n- schedulerName: plain\n- schedulerName: gpu\n  extenders:\n"
			  "  - urlPrefix: https://gpu:8443\n    filterVerb: f\n"
			  "    tlsConfig: {keyData: cHJvZmlsZS1rZXk=, keyFile: /k}\n";

static struct sk_config *load(const char *text)
{
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
	if (!cfg)
		fail_msg("config: %s", sk_errors_join(&e, "\n"));
	sk_errors_free(&e);
	return cfg;
}

static void test_validate_note(void **state)
{
	(void)state;
	struct sk_config *cfg = load(CFG);
	char buf[1024] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	sk_config_note_extensions(cfg, f);
	fclose(f);
	assert_string_equal(buf, "note: profiles[1].extenders (profile \"gpu\", 1 extender): a schedkit extension (the "
				 "extenders apply to this profile only); kube-scheduler cannot load this file\n");
	sk_config_free(cfg);
	/* a file without the extension: nothing said */
	cfg = load("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
		   "extenders: [{urlPrefix: 'http://x', filterVerb: f}]\nprofiles: [{schedulerName: a}]\n");
	buf[0] = '\0';
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	sk_config_note_extensions(cfg, f);
	fclose(f);
	assert_string_equal(buf, "");
	sk_config_free(cfg);
}

static void test_redact(void **state)
{
	(void)state;
	struct sk_config *cfg = load(CFG);
	cJSON *cc = sk_config_to_json(cfg);
	sk_config_redact_secrets(cc);
	char *s = cJSON_PrintUnformatted(cc);
	assert_null(strstr(s, "c2VjcmV0LWtleQ=="));
	assert_null(strstr(s, "Y2VydA=="));
	assert_null(strstr(s, "cHJvZmlsZS1rZXk="));
	assert_non_null(strstr(s, "\"caData\":\"Y2E=\"")); /* public */
	assert_non_null(strstr(s, "\"keyFile\":\"/k\""));
	free(s);
	const cJSON *tls = kube_obj_get(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cc, "extenders"), 0), "tlsConfig");
	assert_string_equal(kube_obj_get_string(tls, "keyData"), "--- REDACTED ---");
	assert_string_equal(kube_obj_get_string(tls, "certData"), "--- REDACTED ---");
	cJSON_Delete(cc);
	sk_config_redact_secrets(NULL);
	sk_config_free(cfg);
}

/* Errors about TLS material name the field, never the value (they reach logs and status). */
static void test_errors_do_not_print_secrets(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
		"{\"urlPrefix\":\"https://x\",\"tlsConfig\":{\"keyData\":\"@@top-secret-key@@\"}}",
		"{\"urlPrefix\":\"https://x\",\"tlsConfig\":{\"certData\":\"@@top-secret-key@@\"}}",
	};
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		cJSON *j = cJSON_Parse(cfgs[i]);
		char *err = NULL;
		struct sk_extender *e = sk_extender_new(j, "extenders[0]", &err);
		assert_null(e);
		assert_non_null(err);
		assert_non_null(strstr(err, "extenders[0].tlsConfig."));
		assert_null(strstr(err, "top-secret"));
		free(err);
		cJSON_Delete(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_note),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_errors_do_not_print_secrets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
