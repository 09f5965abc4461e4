/* Tests for operator/settings.c (the --scheduler-settings file: every field, strictness, errors
 * naming the field) and for their effect on the desired Deployment in operator/resources.c
 * (applied, kept by drift repair, the defaults without a file). */
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
#include "operator/settings.h"

static const char full[] =
	"image: registry.example/schedkit:1.2.3\n"
	"replicas: 3\n"
	"priorityClassName: high\n"
	"resources:\n"
	"  requests: {cpu: 200m, memory: 256Mi}\n"
	"  limits: {cpu: '1', memory: 1Gi}\n"
	"nodeSelector: {node-role.kubernetes.io/control-plane: ''}\n"
	"tolerations:\n"
	"- {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}\n"
	"volumes:\n"
	"- name: extra-plugins\n"
	"  hostPath: {path: /opt/plugins}\n"
	"volumeMounts:\n"
	"- {name: extra-plugins, mountPath: /opt/plugins, readOnly: true}\n";

static void test_parse_full(void **state)
{
	(void)state;
	struct op_settings s;
	char *err = NULL;
	assert_int_equal(op_settings_parse(full, strlen(full), "s.yaml", &s, &err), 0);
	assert_null(err);
	assert_string_equal(s.image, "registry.example/schedkit:1.2.3");
	assert_int_equal(s.replicas, 3);
	assert_string_equal(s.priority_class, "high");
	assert_string_equal(kube_obj_get_string(s.resources, "limits.memory"), "1Gi");
	assert_int_equal(cJSON_GetArraySize(s.tolerations), 1);
	assert_int_equal(cJSON_GetArraySize(s.volumes), 1);
	assert_int_equal(cJSON_GetArraySize(s.volume_mounts), 1);
	op_settings_free(&s);
	/* comments only (the shipped ConfigMap) set nothing */
	const char *comments = "# settings\n---\n  # image: x\n\n";
	assert_int_equal(op_settings_parse(comments, strlen(comments), "c.yaml", &s, &err), 0);
	assert_null(s.image);
	assert_int_equal(s.replicas, -1);
	op_settings_free(&s);
		/* an empty file sets nothing */
	assert_int_equal(op_settings_parse("", 0, "e.yaml", &s, &err), 0);
	assert_null(s.image);
	assert_int_equal(s.replicas, -1);
	assert_null(s.resources);
	op_settings_free(&s);
}

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *want;
	} t[] = {
		{ "imgae: x\n", "s.yaml: imgae: unknown field" },
		{ "- a\n", "s.yaml: must be a mapping" },
		{ "image: ''\n", "s.yaml: image: must be a non-empty string" },
		{ "replicas: 0\n", "s.yaml: replicas: Invalid value: must be an integer from 1 to 100" },
		{ "replicas: two\n", "s.yaml: replicas: Invalid value" },
		{ "priorityClassName: [a]\n", "s.yaml: priorityClassName: must be a string" },
		{ "resources: {request: {cpu: 1}}\n", "s.yaml: resources.request: unknown field" },
		{ "resources: {requests: {cpu: lots}}\n", "s.yaml: resources.requests.cpu: Invalid value" },
		{ "resources: {requests: {memory: 1Gi}, limits: {memory: 512Mi}}\n",
		  "s.yaml: resources.limits.memory: Invalid value: \"512Mi\": must be greater than or equal to the request (1Gi)" },
		{ "nodeSelector: {a: 1}\n", "s.yaml: nodeSelector: must be a mapping of label names to string values" },
		{ "tolerations: {key: a}\n", "s.yaml: tolerations: must be a list" },
		{ "tolerations: [x]\n", "s.yaml: tolerations[0]: must be a toleration object" },
		{ "volumes: [{emptyDir: {}}]\n", "s.yaml: volumes[0].name: Required value" },
		{ "volumes: [{name: config, emptyDir: {}}]\n", "s.yaml: volumes[0].name: Invalid value: \"config\": used by the scheduler Deployment itself" },
		{ "volumes: [{name: a, emptyDir: {}}, {name: a, emptyDir: {}}]\n", "s.yaml: volumes[1].name: Duplicate value: \"a\"" },
		{ "volumeMounts: [{name: a}]\n", "s.yaml: volumeMounts[0].mountPath: Required value" },
		{ "volumeMounts: [{name: a, mountPath: /a}]\n", "s.yaml: volumeMounts[0].name: Not found: \"a\" is not in volumes" },
		{ "a: [\n", "s.yaml: " },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct op_settings s;
		char *err = NULL;
		assert_int_equal(op_settings_parse(t[i].yaml, strlen(t[i].yaml), "s.yaml", &s, &err), -1);
		assert_non_null(err);
		if (strncmp(err, t[i].want, strlen(t[i].want)))
			fail_msg("case %zu: got \"%s\", want prefix \"%s\"", i, err, t[i].want);
		assert_null(s.image);
		assert_null(s.resources);
		free(err);
	}
	struct op_settings s;
	char *err = NULL;
	assert_int_equal(op_settings_load("/nonexistent/settings.yaml", &s, &err), -1);
	assert_non_null(strstr(err, "/nonexistent/settings.yaml: cannot open"));
	free(err);
}

static cJSON *deployment(const struct op_settings *st)
{
	struct op_resources_opts o = { .namespace = "ns", .scheduler_image = "img:1", .replicas = 3, .settings = st };
	struct op_plan p = { 0 };
	p.config_yaml = strdup("a: 1\n");
	p.nrendered = 1;
	cJSON *d = op_desired_object(OP_OBJ_DEPLOYMENT, &o, &p);
	op_plan_free(&p);
	assert_non_null(d);
	return d;
}

static void test_deployment_settings(void **state)
{
	(void)state;
	/* defaults: priority class, requests and a memory limit, spread across nodes and zones */
	cJSON *d = deployment(NULL);
	const cJSON *pod = kube_obj_get(d, "spec.template.spec");
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(pod, "containers"), 0);
	assert_string_equal(kube_obj_get_string(pod, "priorityClassName"), OP_DEFAULT_PRIORITY_CLASS);
	assert_string_equal(kube_obj_get_string(c, "resources.limits.memory"), OP_DEFAULT_MEMORY_LIMIT);
	assert_string_equal(kube_obj_get_string(c, "resources.requests.cpu"), "100m");
	const cJSON *tsc = cJSON_GetObjectItem(pod, "topologySpreadConstraints");
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(tsc, 0), "topologyKey"), "kubernetes.io/hostname");
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(tsc, 1), "topologyKey"), "topology.kubernetes.io/zone");
	assert_null(cJSON_GetObjectItem(pod, "nodeSelector"));
	assert_null(cJSON_GetObjectItem(pod, "tolerations"));
	cJSON_Delete(d);

	struct op_settings s;
	char *err = NULL;
	assert_int_equal(op_settings_parse(full, strlen(full), "s.yaml", &s, &err), 0);
	d = deployment(&s);
	pod = kube_obj_get(d, "spec.template.spec");
	c = cJSON_GetArrayItem(cJSON_GetObjectItem(pod, "containers"), 0);
	assert_string_equal(kube_obj_get_string(pod, "priorityClassName"), "high");
	assert_string_equal(kube_obj_get_string(c, "resources.requests.cpu"), "200m");
	assert_string_equal(kube_obj_get_string(c, "resources.limits.memory"), "1Gi");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "nodeSelector"), "node-role.kubernetes.io/control-plane"));
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(cJSON_GetObjectItem(pod, "tolerations"), 0), "operator"), "Exists");
	/* extra volumes and mounts come after the Deployment's own */
	const cJSON *vols = cJSON_GetObjectItem(pod, "volumes");
	assert_int_equal(cJSON_GetArraySize(vols), 2);
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(vols, 0), "name"), "config");
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(vols, 1), "name"), "extra-plugins");
	const cJSON *mounts = cJSON_GetObjectItem(c, "volumeMounts");
	assert_int_equal(cJSON_GetArraySize(mounts), 2);
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(mounts, 1), "mountPath"), "/opt/plugins");
	/* drift repair keeps them: the desired object is what is live */
	cJSON *live = cJSON_Duplicate(d, 1);
	assert_true(op_object_matches(OP_OBJ_DEPLOYMENT, live, d));
	/* and a hand edit of a configured field is put back */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(kube_obj_get(live, "spec.template"), "spec"), "priorityClassName",
				  cJSON_CreateString("low"));
	assert_false(op_object_matches(OP_OBJ_DEPLOYMENT, live, d));
	cJSON *fixed = op_object_overlay(OP_OBJ_DEPLOYMENT, live, d);
	assert_string_equal(kube_obj_get_string(fixed, "spec.template.spec.priorityClassName"), "high");
	cJSON_Delete(fixed);
	cJSON_Delete(live);
	cJSON_Delete(d);
	op_settings_free(&s);

	/* priorityClassName "" drops it */
	assert_int_equal(op_settings_parse("priorityClassName: ''\n", 22, "s.yaml", &s, &err), 0);
	d = deployment(&s);
	assert_null(kube_obj_get(d, "spec.template.spec.priorityClassName"));
	cJSON_Delete(d);
	op_settings_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_full),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_deployment_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
