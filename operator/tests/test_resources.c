/* Tests for operator/resources.c: every owned object against a golden file
 * (operator/tests/golden/resources_*.yaml; SK_UPDATE_GOLDEN=1 regenerates), the Deployment's
 * contract (replicas, rolling update, probes, securityContext, config mount; a config change
 * leaves the pod template alone; 0 replicas without profiles), least-privilege RBAC, and the
 * containment/overlay rules behind drift repair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/resources.h"
#include "operator/tests/golden.h"


static const struct op_resources_opts opts = { .namespace = "schedkit-system", .scheduler_image = "schedkit/schedkit:v1",
					       .replicas = 2, .scheduler_verbosity = 2 };

static struct op_plan plan_with(const char *config, const char *hash, int n)
{
	struct op_plan p = { 0 };
	p.config_yaml = config ? strdup(config) : NULL;
	snprintf(p.config_hash, sizeof p.config_hash, "%s", hash);
	p.nrendered = n;
	return p;
}

static void test_golden_objects(void **state)
{
	(void)state;
	static const char *const files[OP_OBJ_COUNT] = {
		[OP_OBJ_CONFIGMAP] = "resources_configmap.yaml",
		[OP_OBJ_SERVICE_ACCOUNT] = "resources_serviceaccount.yaml",
		[OP_OBJ_CLUSTER_ROLE] = "resources_clusterrole.yaml",
		[OP_OBJ_CLUSTER_ROLE_BINDING] = "resources_clusterrolebinding.yaml",
		[OP_OBJ_ROLE] = "resources_role.yaml",
		[OP_OBJ_ROLE_BINDING] = "resources_rolebinding.yaml",
		[OP_OBJ_SERVICE] = "resources_service.yaml",
		[OP_OBJ_DEPLOYMENT] = "resources_deployment.yaml",
	};
	struct op_plan p = plan_with("kind: KubeSchedulerConfiguration\n", "abc123", 1);
	for (int k = 0; k < OP_OBJ_COUNT; k++) {
		cJSON *o = op_desired_object(k, &opts, &p);
		assert_non_null(o);
		const struct op_kind_info *ki = op_kind_info(k);
		assert_string_equal(kube_meta_name(o), ki->name);
		assert_string_equal(kube_meta_label(o, OP_LABEL_MANAGED_BY), OP_MANAGED_BY);
		if (ki->namespaced)
			assert_string_equal(kube_meta_namespace(o), "schedkit-system");
		else
			assert_null(kube_meta_namespace(o));
		char *y = kube_yaml_emit(o);
		assert_golden(files[k], y);
		free(y);
		cJSON_Delete(o);
	}
	op_plan_free(&p);
}

static void test_deployment_contract(void **state)
{
	(void)state;
	struct op_plan p1 = plan_with("a: 1\n", "1111", 2), p2 = plan_with("b: 2\n", "2222", 1);
	cJSON *d1 = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p1);
	cJSON *d2 = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p2);
	/* a configuration change does not touch the Deployment at all */
	assert_true(cJSON_Compare(d1, d2, 1));
	int64_t v;
	assert_int_equal(kube_json_get_int64(kube_obj_get(d1, "spec.replicas"), &v), 0);
	assert_int_equal(v, 2);
	assert_string_equal(kube_obj_get_string(d1, "spec.strategy.type"), "RollingUpdate");
	assert_int_equal(kube_obj_get(d1, "spec.strategy.rollingUpdate.maxUnavailable")->valueint, 0);
	assert_int_equal(kube_obj_get(d1, "spec.strategy.rollingUpdate.maxSurge")->valueint, 1);
	const cJSON *c = cJSON_GetArrayItem(kube_obj_get(d1, "spec.template.spec.containers"), 0);
	assert_string_equal(kube_obj_get_string(c, "image"), "schedkit/schedkit:v1");
	assert_string_equal(kube_obj_get_string(c, "livenessProbe.httpGet.path"), "/healthz");
	assert_string_equal(kube_obj_get_string(c, "readinessProbe.httpGet.path"), "/readyz");
	assert_int_equal(kube_obj_get(c, "readinessProbe.httpGet.port")->valueint, OP_SCHEDULER_PORT);
	assert_true(cJSON_IsTrue(kube_obj_get(c, "securityContext.readOnlyRootFilesystem")));
	assert_true(cJSON_IsFalse(kube_obj_get(c, "securityContext.allowPrivilegeEscalation")));
	assert_true(cJSON_IsTrue(kube_obj_get(d1, "spec.template.spec.securityContext.runAsNonRoot")));
	assert_non_null(kube_obj_get_string(c, "resources.requests.cpu"));
	assert_non_null(kube_obj_get_string(c, "resources.requests.memory"));
	char *args = kube_json_print(kube_obj_get(c, "args"));
	assert_non_null(strstr(args, "\"--config=/etc/schedkit/config.yaml\""));
	assert_non_null(strstr(args, "\"--leader-elect=true\""));
	assert_non_null(strstr(args, "\"--leader-elect-resource-namespace=schedkit-system\""));
	free(args);
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(kube_obj_get(d1, "spec.template.spec.volumes"), 0),
						 "configMap.name"),
			    OP_CONFIGMAP_NAME);
	cJSON_Delete(d1);
	cJSON_Delete(d2);

	/* no profile in the configuration: nothing to run */
	struct op_plan none = plan_with(NULL, "", 0);
	cJSON *d0 = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &none);
	assert_int_equal(kube_json_get_int64(kube_obj_get(d0, "spec.replicas"), &v), 0);
	assert_int_equal(v, 0);
	cJSON_Delete(d0);
	cJSON *cm = op_desired_object(OP_OBJ_CONFIGMAP, &opts, &none);
	assert_null(kube_obj_get(cm, "data.config"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "data"), OP_CONFIG_KEY));
	cJSON_Delete(cm);
	cm = op_desired_object(OP_OBJ_CONFIGMAP, &opts, &p1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "data"), OP_CONFIG_KEY)->valuestring, "a: 1\n");
	assert_string_equal(kube_meta_annotation(cm, OP_CONFIG_HASH_ANNOTATION), "1111");
	cJSON_Delete(cm);
	op_plan_free(&p1);
	op_plan_free(&p2);
}

/* The scheduler may not write what it does not need: no secrets, no wildcard verbs or resources. */
static void test_rbac_least_privilege(void **state)
{
	(void)state;
	for (int k = OP_OBJ_CLUSTER_ROLE; k <= OP_OBJ_ROLE; k += 2) {
		cJSON *r = op_desired_object(k, &opts, NULL);
		char *s = kube_json_print(r);
		assert_null(strstr(s, "\"*\""));
		assert_null(strstr(s, "secrets"));
		free(s);
		const cJSON *rule;
		bool binding = false, lease_named = false;
		cJSON_ArrayForEach(rule, cJSON_GetObjectItem(r, "rules")) {
			char *res = kube_json_print(cJSON_GetObjectItem(rule, "resources"));
			char *verbs = kube_json_print(cJSON_GetObjectItem(rule, "verbs"));
			if (strstr(res, "pods/binding"))
				binding = strcmp(verbs, "[\"create\"]") == 0;
			if (strstr(res, "configmaps"))
				assert_string_equal(verbs, "[\"get\",\"list\",\"watch\"]");
			if (strstr(res, "leases") && cJSON_GetObjectItem(rule, "resourceNames"))
				lease_named = true;
			if (strstr(res, "nodes"))
				assert_string_equal(verbs, "[\"get\",\"list\",\"watch\"]");
			free(res);
			free(verbs);
		}
		assert_true(k == OP_OBJ_CLUSTER_ROLE ? binding : lease_named);
		cJSON_Delete(r);
	}
}

static cJSON *y(const char *text)
{
	return kube_yaml_parse_one(text, strlen(text), NULL);
}

static void test_contains_and_overlay(void **state)
{
	(void)state;
	static const struct {
		const char *live, *desired;
		bool want;
	} t[] = {
		{ "{a: 1, b: {c: x, d: y}}", "{b: {c: x}}", true },      /* extra live keys (server defaults) */
		{ "{a: 1}", "{a: 2}", false },
		{ "{a: [1, 2]}", "{a: [1, 2]}", true },
		{ "{a: [1, 2, 3]}", "{a: [1, 2]}", false },              /* a hand-added container counts */
		{ "{a: [{n: 1, p: TCP}]}", "{a: [{n: 1}]}", true },       /* defaulted field inside an element */
		{ "{a: 1.0}", "{a: 1}", true },
		{ "{a: '1'}", "{a: 1}", false },
		{ "{}", "{a: {}}", false },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *l = y(t[i].live), *d = y(t[i].desired);
		if (op_json_contains(l, d) != t[i].want)
			fail_msg("case %zu: contains(%s, %s) != %d", i, t[i].live, t[i].desired, t[i].want);
		cJSON_Delete(l);
		cJSON_Delete(d);
	}

	/* ConfigMap data is compared and replaced whole: a stale key must go */
	cJSON *live = y("{metadata: {name: c, resourceVersion: '7', labels: {extra: keep}}, data: {config.yaml: old, junk: x}}");
	cJSON *want = y("{metadata: {name: c}, data: {}}");
	assert_false(op_object_matches(OP_OBJ_CONFIGMAP, live, want));
	cJSON *body = op_object_overlay(OP_OBJ_CONFIGMAP, live, want);
	char *s = kube_json_print(body);
	assert_string_equal(s, "{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"7\",\"labels\":{\"extra\":\"keep\"}},\"data\":{}}");
	free(s);
	assert_true(op_object_matches(OP_OBJ_CONFIGMAP, body, want));
	cJSON_Delete(body);
	cJSON_Delete(live);
	cJSON_Delete(want);

	/* a Service keeps its server-assigned clusterIP; a hand-edited Deployment gets its replicas back */
	live = y("{metadata: {name: s, resourceVersion: '3'}, spec: {clusterIP: 10.0.0.9, replicas: 5, ports: [{port: 1}]}}");
	want = y("{metadata: {name: s}, spec: {replicas: 2, ports: [{port: 10259}]}}");
	assert_false(op_object_matches(OP_OBJ_DEPLOYMENT, live, want));
	body = op_object_overlay(OP_OBJ_DEPLOYMENT, live, want);
	s = kube_json_print(body);
	assert_string_equal(s, "{\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"3\"},\"spec\":{\"clusterIP\":\"10.0.0.9\","
			       "\"replicas\":2,\"ports\":[{\"port\":10259}]}}");
	free(s);
	assert_true(op_object_matches(OP_OBJ_DEPLOYMENT, body, want));
	cJSON_Delete(body);
	cJSON_Delete(live);
	cJSON_Delete(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_objects),
		cmocka_unit_test(test_deployment_contract),
		cmocka_unit_test(test_rbac_least_privilege),
		cmocka_unit_test(test_contains_and_overlay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
