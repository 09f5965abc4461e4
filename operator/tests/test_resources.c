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
#include "operator/plugins.h"
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
		[OP_OBJ_PDB] = "resources_pdb.yaml",
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
			if (strstr(res, "configmaps")) {
				/* its own ConfigMap only, watched (cmwatch.c) */
				assert_string_equal(verbs, "[\"list\",\"watch\"]");
				char *names = kube_json_print(cJSON_GetObjectItem(rule, "resourceNames"));
				assert_string_equal(names, "[\"" OP_CONFIGMAP_NAME "\"]");
				free(names);
			}
			if (strstr(res, "leases") && cJSON_GetObjectItem(rule, "resourceNames"))
				lease_named = true;
			if (strstr(res, "nodes"))
				assert_string_equal(verbs, "[\"list\",\"watch\"]");
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

static struct op_plugin_set plugin_set(const char *json)
{
	cJSON *arr = kube_json_parse(json, strlen(json), NULL);
	assert_non_null(arr);
	struct op_plugin_set s;
	char *err = NULL;
	if (op_plugin_set_build(arr, &s, &err) != 0)
		fail_msg("build: %s", err ? err : "?");
	cJSON_Delete(arr);
	return s;
}

#define SP(name, created, spec)                                                                                     \
	"{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":\"SchedulerPlugin\",\"metadata\":{\"name\":\"" name   \
	"\",\"creationTimestamp\":\"" created "\",\"generation\":1},\"spec\":" spec "}"

/* Accepted SchedulerPlugins: an emptyDir, one init container each (sorted by name) copying its
 * files there, --plugin-dir and a read-only mount in the scheduler, the plugins-hash on the pod
 * template; rejected ones add nothing; none at all leaves the Deployment as it was. */
static void test_deployment_plugins(void **state)
{
	(void)state;
	struct op_plugin_set ps = plugin_set(
		"[" SP("zeta", "2025-01-01T00:00:00Z",
		       "{\"image\":\"example/zeta:1\",\"imagePullPolicy\":\"Always\",\"files\":[\"/z/zeta.so\","
		       "\"/z/zeta-extra.so\"],\"plugins\":[\"Zeta\",\"ZetaScore\"]}") ","
		SP("sample", "2025-01-02T00:00:00Z",
		   "{\"image\":\"schedkit/sample-plugin:0.2.0\",\"files\":[\"/plugins/sample.so\"],\"plugins\":[\"Sample\"]}") ","
		SP("shadow", "2025-01-03T00:00:00Z",
		   "{\"image\":\"evil:1\",\"files\":[\"/e/evil.so\"],\"plugins\":[\"NodeName\"]}") "]");
	assert_int_equal(ps.naccepted, 2);
	struct op_plan p = plan_with("kind: KubeSchedulerConfiguration\n", "abc123", 1);
	cJSON *plain = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p);
	p.plugins = &ps;
	cJSON *d = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p);
	assert_non_null(d);
	char *yaml = kube_yaml_emit(d);
	assert_golden("resources_deployment_plugins.yaml", yaml);
	free(yaml);

	const cJSON *inits = kube_obj_get(d, "spec.template.spec.initContainers");
	assert_int_equal(cJSON_GetArraySize(inits), 2);
	const cJSON *i0 = cJSON_GetArrayItem(inits, 0), *i1 = cJSON_GetArrayItem(inits, 1);
	assert_string_equal(kube_obj_get_string(i0, "name"), "plugin-sample");
	assert_string_equal(kube_obj_get_string(i1, "name"), "plugin-zeta");
	assert_string_equal(kube_obj_get_string(i1, "imagePullPolicy"), "Always");
	assert_null(kube_obj_get(i0, "imagePullPolicy"));
	char *cmd = kube_json_print(cJSON_GetObjectItem(i1, "command"));
	assert_string_equal(cmd, "[\"cp\",\"-f\",\"/z/zeta.so\",\"/z/zeta-extra.so\",\"/var/lib/schedkit/plugins/\"]");
	free(cmd);
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(cJSON_GetObjectItem(i0, "volumeMounts"), 0), "mountPath"),
			    OP_PLUGIN_DIR);
	const cJSON *c = cJSON_GetArrayItem(kube_obj_get(d, "spec.template.spec.containers"), 0);
	char *args = kube_json_print(cJSON_GetObjectItem(c, "args"));
	assert_non_null(strstr(args, "\"--plugin-dir=/var/lib/schedkit/plugins\""));
	free(args);
	const cJSON *vols = kube_obj_get(d, "spec.template.spec.volumes");
	assert_int_equal(cJSON_GetArraySize(vols), 2);
	assert_non_null(kube_obj_get(cJSON_GetArrayItem(vols, 1), "emptyDir"));
	const cJSON *ann = kube_obj_get(d, "spec.template.metadata.annotations");
	assert_string_equal(cJSON_GetObjectItem(ann, OP_PLUGINS_HASH_ANNOTATION)->valuestring, ps.hash);

	/* a configuration change still leaves the Deployment alone */
	struct op_plan p2 = plan_with("b: 2\n", "2222", 1);
	p2.plugins = &ps;
	cJSON *d2 = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p2);
	assert_true(cJSON_Compare(d, d2, 1));
	cJSON_Delete(d2);
	op_plan_free(&p2);

	/* only rejected SchedulerPlugins: exactly the plain Deployment */
	struct op_plugin_set bad = plugin_set(
		"[" SP("shadow", "2025-01-03T00:00:00Z", "{\"image\":\"evil:1\",\"files\":[\"/e/evil.so\"],\"plugins\":[\"NodeName\"]}") "]");
	p.plugins = &bad;
	cJSON *d3 = op_desired_object(OP_OBJ_DEPLOYMENT, &opts, &p);
	assert_true(cJSON_Compare(plain, d3, 1));
	cJSON_Delete(d3);

	/* the last SchedulerPlugin deleted: the live Deployment still has the init containers and the
	 * hash, which "contained in" alone would accept; they must be repaired away */
	assert_false(op_object_matches(OP_OBJ_DEPLOYMENT, d, plain));
	cJSON *body = op_object_overlay(OP_OBJ_DEPLOYMENT, d, plain);
	assert_null(kube_obj_get(body, "spec.template.spec.initContainers"));
	assert_null(cJSON_GetObjectItem(kube_obj_get(body, "spec.template.metadata.annotations"), OP_PLUGINS_HASH_ANNOTATION));
	assert_true(op_object_matches(OP_OBJ_DEPLOYMENT, body, plain));
	cJSON_Delete(body);
	/* ... while the plugin Deployment matches itself, and a server-defaulted copy of it */
	assert_true(op_object_matches(OP_OBJ_DEPLOYMENT, d, d));
	cJSON_Delete(d);
	cJSON_Delete(plain);
	op_plugin_set_free(&bad);
	op_plugin_set_free(&ps);
	op_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_objects),
		cmocka_unit_test(test_deployment_contract),
		cmocka_unit_test(test_rbac_least_privilege),
		cmocka_unit_test(test_contains_and_overlay),
		cmocka_unit_test(test_deployment_plugins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
