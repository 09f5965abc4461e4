/* Tests for operator/extender_tls.c: SchedulerProfile extenders rendered with TLS files from
 * mounted Secrets (no secret in the ConfigMap), the refusals, and the Deployment's volumes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/extender_tls.h"
#include "operator/plan.h"
#include "operator/render.h"
#include "operator/resources.h"

static void test_render_table(void **state)
{
	(void)state;
	static const struct {
		const char *tls; /* the tlsConfig of extenders[0] (JSON), or "" for none */
		const char *want; /* rendered tlsConfig, or "!" + error substring */
	} cases[] = {
		{ "", "null" },
		{ "{\"insecure\":true,\"caData\":\"Y2E=\"}", "{\"insecure\":true,\"caData\":\"Y2E=\"}" },
		{ "{\"secretName\":\"ext-tls\"}",
		  "{\"certFile\":\"" OP_EXT_TLS_DIR "/ext-tls/tls.crt\",\"keyFile\":\"" OP_EXT_TLS_DIR "/ext-tls/tls.key\"}" },
		{ "{\"secretName\":\"ext-tls\",\"caKey\":\"ca.crt\",\"serverName\":\"x\"}",
		  "{\"serverName\":\"x\",\"caFile\":\"" OP_EXT_TLS_DIR "/ext-tls/ca.crt\"}" },
		{ "{\"secretName\":\"a.b\",\"certKey\":\"c\",\"keyKey\":\"k\",\"caKey\":\"ca\"}",
		  "{\"certFile\":\"" OP_EXT_TLS_DIR "/a.b/c\",\"keyFile\":\"" OP_EXT_TLS_DIR "/a.b/k\",\"caFile\":\"" OP_EXT_TLS_DIR
		  "/a.b/ca\"}" },
		{ "{\"keyData\":\"c2VjcmV0\"}", "!spec.extenders[0].tlsConfig.keyData: Forbidden: secret material" },
		{ "{\"certData\":\"Y2VydA==\"}", "!spec.extenders[0].tlsConfig.certData: Forbidden" },
		{ "{\"secretName\":\"Bad_Name\"}", "!spec.extenders[0].tlsConfig.secretName: Invalid value" },
		{ "{\"secretName\":7}", "!spec.extenders[0].tlsConfig.secretName: Invalid value" },
		{ "{\"secretName\":\"s\",\"certKey\":\"../x\"}", "!spec.extenders[0].tlsConfig.certKey: Invalid value" },
		{ "{\"secretName\":\"s\",\"certFile\":\"/x\"}", "!spec.extenders[0].tlsConfig.certFile: Forbidden" },
		{ "{\"caKey\":\"ca.crt\"}", "!spec.extenders[0].tlsConfig.caKey: Forbidden: only with tlsConfig.secretName" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text), "{\"extenders\":[{\"urlPrefix\":\"https://e:8443\",\"filterVerb\":\"f\"%s%s}]}",
			 *cases[i].tls ? ",\"tlsConfig\":" : "", cases[i].tls);
		cJSON *spec = cJSON_Parse(text);
		assert_non_null(spec);
		cJSON *out = NULL;
		char *err = NULL;
		int rc = op_render_profile(spec, "p", &out, &err);
		if (cases[i].want[0] == '!') {
			if (rc == 0 || !err || !strstr(err, cases[i].want + 1))
				fail_msg("case %zu: want error \"%s\", got rc %d \"%s\"", i, cases[i].want + 1, rc, err ? err : "");
		} else {
			if (rc != 0)
				fail_msg("case %zu: %s", i, err);
			const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(out, "extenders"), 0);
			assert_string_equal(kube_obj_get_string(e, "urlPrefix"), "https://e:8443");
			char *got = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(e, "tlsConfig"));
			if (strcmp(got ? got : "null", cases[i].want) != 0)
				fail_msg("case %zu:\n got %s\nwant %s", i, got ? got : "null", cases[i].want);
			free(got);
		}
		free(err);
		cJSON_Delete(out);
		cJSON_Delete(spec);
	}
}

/* A profile built from an upstream provider goes through the legacy translation
 * (operator/legacy.c); its own extenders are rendered the same way. */
static void test_provider_profile_extenders(void **state)
{
	(void)state;
	static const struct {
		const char *tls, *want;
	} cases[] = {
		{ "{\"secretName\":\"s1\"}", "\"keyFile\":\"" OP_EXT_TLS_DIR "/s1/tls.key\"" },
		{ "{\"keyData\":\"c2VjcmV0\"}", "!spec.extenders[0].tlsConfig.keyData: Forbidden" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"provider\":\"DefaultProvider\",\"extenders\":[{\"urlPrefix\":\"https://e\",\"filterVerb\":\"f\","
			 "\"tlsConfig\":%s}]}",
			 cases[i].tls);
		cJSON *spec = cJSON_Parse(text);
		cJSON *out = NULL;
		char *err = NULL;
		int rc = op_render_profile(spec, "p", &out, &err);
		if (cases[i].want[0] == '!') {
			if (rc == 0 || !err || !strstr(err, cases[i].want + 1))
				fail_msg("case %zu: want \"%s\", got rc %d \"%s\"", i, cases[i].want + 1, rc, err ? err : "");
		} else {
			if (rc != 0)
				fail_msg("case %zu: %s", i, err);
			char *got = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(out, "extenders"));
			if (!strstr(got, cases[i].want) || strstr(got, "secretName"))
				fail_msg("case %zu: %s", i, got);
			free(got);
		}
		free(err);
		cJSON_Delete(out);
		cJSON_Delete(spec);
	}
}

static void test_deployment_mounts(void **state)
{
	(void)state;
	struct op_plan plan = { 0 };
	plan.config_yaml = (char *)"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
				   "profiles:\n- schedulerName: a\n  extenders:\n"
				   "  - {urlPrefix: 'https://x', tlsConfig: {certFile: " OP_EXT_TLS_DIR "/zeta/tls.crt, keyFile: "
				   OP_EXT_TLS_DIR "/zeta/tls.key}}\n"
				   "- schedulerName: b\n  extenders:\n"
				   "  - {urlPrefix: 'https://y', tlsConfig: {caFile: " OP_EXT_TLS_DIR "/alpha/ca.crt}}\n"
				   "  - {urlPrefix: 'https://z', tlsConfig: {caFile: /etc/ssl/other.pem}}\n";
	plan.nrendered = 2;
	struct op_resources_opts opts = { 0 };
	cJSON *d = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &plan);
	assert_non_null(d);
	const cJSON *tspec = kube_obj_get(d, "spec.template.spec");
	const cJSON *vols = cJSON_GetObjectItemCaseSensitive(tspec, "volumes");
	const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(tspec, "containers"), 0),
							       "volumeMounts");
	char *v = cJSON_PrintUnformatted(vols), *m = cJSON_PrintUnformatted(mounts);
	assert_string_equal(v, "[{\"name\":\"config\",\"configMap\":{\"name\":\"schedkit-scheduler-config\"}},"
			       "{\"name\":\"extender-tls-0\",\"secret\":{\"secretName\":\"alpha\"}},"
			       "{\"name\":\"extender-tls-1\",\"secret\":{\"secretName\":\"zeta\"}}]");
	assert_string_equal(m, "[{\"name\":\"config\",\"mountPath\":\"/etc/schedkit\",\"readOnly\":true},"
			       "{\"name\":\"extender-tls-0\",\"mountPath\":\"" OP_EXT_TLS_DIR "/alpha\",\"readOnly\":true},"
			       "{\"name\":\"extender-tls-1\",\"mountPath\":\"" OP_EXT_TLS_DIR "/zeta\",\"readOnly\":true}]");
	free(v);
	free(m);
	cJSON_Delete(d);
	/* no Secret named: the template is as before */
	plan.config_yaml = (char *)"profiles:\n- schedulerName: a\n";
	d = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &plan);
	assert_int_equal(cJSON_GetArraySize(kube_obj_get(d, "spec.template.spec.volumes")), 1);
	cJSON_Delete(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_table),
		cmocka_unit_test(test_provider_profile_extenders),
		cmocka_unit_test(test_deployment_mounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
