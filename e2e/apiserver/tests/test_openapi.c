/* Tests for e2e/apiserver/openapi: the index lists every group-version with a content hash; each
 * document has, for every kind, a PATCH operation carrying x-kubernetes-group-version-kind (a
 * single map), x-kubernetes-action: patch and the fieldValidation query parameter (what kubectl's
 * QueryParamVerifierV3 looks for), no strategic-merge-patch body (so kubectl's patcher falls back
 * to compiled-in types), and CRD schemas as components. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/openapi.h"

static const char *resources_json =
	"["
	"{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\",\"resource\":\"configmaps\",\"namespaced\":true,\"schema\":null},"
	"{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\",\"resource\":\"pods\",\"namespaced\":true,\"schema\":null},"
	"{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\",\"resource\":\"pods/status\",\"namespaced\":true,\"schema\":null},"
	"{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Node\",\"resource\":\"nodes\",\"namespaced\":false,\"schema\":null},"
	"{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Namespace\",\"resource\":\"namespaces\",\"namespaced\":false},"
	"{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\",\"resource\":\"deployments\",\"namespaced\":true,\"schema\":null},"
	"{\"group\":\"apiextensions.k8s.io\",\"version\":\"v1\",\"kind\":\"CustomResourceDefinition\",\"resource\":\"customresourcedefinitions\",\"namespaced\":false,\"schema\":null},"
	"{\"group\":\"coordination.k8s.io\",\"version\":\"v1\",\"kind\":\"Lease\",\"resource\":\"leases\",\"namespaced\":true,\"schema\":null},"
	"{\"group\":\"example.com\",\"version\":\"v1\",\"kind\":\"Widget\",\"resource\":\"widgets\",\"namespaced\":true,"
	"\"schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"}}}}}},"
	"{\"group\":\"example.com\",\"version\":\"v1\",\"kind\":\"Gadget\",\"resource\":\"gadgets\",\"namespaced\":false,"
	"\"schema\":{\"type\":\"object\"}}"
	"]";

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The kubectl check: a PATCH op for gvk with a fieldValidation query parameter. */
static int supports_field_validation(const cJSON *doc, const char *g, const char *v, const char *k)
{
	for (const cJSON *p = get(doc, "paths")->child; p; p = p->next) {
		const cJSON *op = get(p, "patch");
		if (!op)
			continue;
		const cJSON *gvk = get(op, "x-kubernetes-group-version-kind");
		if (!cJSON_IsObject(gvk))
			continue;
		if (strcmp(get(gvk, "group")->valuestring, g) || strcmp(get(gvk, "version")->valuestring, v) ||
		    strcmp(get(gvk, "kind")->valuestring, k))
			continue;
		assert_string_equal(get(op, "x-kubernetes-action")->valuestring, "patch");
		const cJSON *content = get(get(op, "requestBody"), "content");
		assert_non_null(get(content, "application/merge-patch+json"));
		assert_non_null(get(content, "application/json-patch+json"));
		assert_null(get(content, "application/strategic-merge-patch+json"));
		for (const cJSON *prm = get(op, "parameters")->child; prm; prm = prm->next)
			if (strcmp(get(prm, "name")->valuestring, "fieldValidation") == 0 &&
			    strcmp(get(prm, "in")->valuestring, "query") == 0)
				return 1;
		return 0;
	}
	return -1; /* no path for this GVK */
}

static cJSON *fetch(const cJSON *res, const char *gv)
{
	char *text = apis_openapi_v3_doc(res, gv);
	if (!text)
		return NULL;
	cJSON *doc = cJSON_Parse(text);
	free(text);
	assert_non_null(doc);
	return doc;
}

static void test_index_and_docs(void **state)
{
	(void)state;
	cJSON *res = cJSON_Parse(resources_json);
	assert_non_null(res);
	char *text = apis_openapi_v3_index(res);
	assert_non_null(text);
	cJSON *idx = cJSON_Parse(text);
	free(text);
	const cJSON *paths = get(idx, "paths");
	assert_int_equal(cJSON_GetArraySize(paths), 5);
	const char *url = get(get(paths, "api/v1"), "serverRelativeURL")->valuestring;
	assert_true(strncmp(url, "/openapi/v3/api/v1?hash=", 24) == 0);
	assert_non_null(get(paths, "apis/apps/v1"));
	assert_non_null(get(paths, "apis/example.com/v1"));
	assert_non_null(get(paths, "apis/apiextensions.k8s.io/v1"));

	static const char *checks[][4] = {
		{"api/v1", "", "v1", "ConfigMap"}, {"api/v1", "", "v1", "Pod"},
		{"api/v1", "", "v1", "Node"}, {"api/v1", "", "v1", "Namespace"},
		{"apis/apps/v1", "apps", "v1", "Deployment"},
		{"apis/apiextensions.k8s.io/v1", "apiextensions.k8s.io", "v1", "CustomResourceDefinition"},
		{"apis/coordination.k8s.io/v1", "coordination.k8s.io", "v1", "Lease"},
		{"apis/example.com/v1", "example.com", "v1", "Widget"},
		{"apis/example.com/v1", "example.com", "v1", "Gadget"},
	};
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		cJSON *doc = fetch(res, checks[i][0]);
		assert_non_null(doc);
		assert_string_equal(get(doc, "openapi")->valuestring, "3.0.0");
		if (supports_field_validation(doc, checks[i][1], checks[i][2], checks[i][3]) != 1)
			fail_msg("%s %s: no PATCH with fieldValidation", checks[i][0], checks[i][3]);
		cJSON_Delete(doc);
	}
	/* a kind from another group-version is not in the document */
	cJSON *doc = fetch(res, "api/v1");
	assert_int_equal(supports_field_validation(doc, "apps", "v1", "Deployment"), -1);
	/* paths: namespaced item path, cluster-scoped item path, subresources skipped */
	assert_non_null(get(get(doc, "paths"), "/api/v1/namespaces/{namespace}/configmaps/{name}"));
	assert_non_null(get(get(doc, "paths"), "/api/v1/nodes/{name}"));
	assert_null(get(get(doc, "paths"), "/api/v1/namespaces/{namespace}/pods/status/{name}"));
	const cJSON *schemas = get(get(doc, "components"), "schemas");
	assert_non_null(get(schemas, "io.k8s.api.core.v1.ConfigMap"));
	assert_non_null(get(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"));
	cJSON_Delete(doc);

	doc = fetch(res, "/openapi/v3/apis/example.com/v1?hash=123"); /* leading slash, query ignored */
	assert_null(doc);
	doc = fetch(res, "/apis/example.com/v1?hash=123");
	assert_non_null(doc);
	const cJSON *w = get(get(get(doc, "components"), "schemas"), "com.example.v1.Widget");
	assert_non_null(w);
	assert_string_equal(get(get(get(get(w, "properties"), "spec"), "properties"), "size")->child->valuestring,
			    "integer");
	const cJSON *gvk = get(w, "x-kubernetes-group-version-kind");
	assert_true(cJSON_IsArray(gvk));
	assert_string_equal(get(gvk->child, "kind")->valuestring, "Widget");
	cJSON_Delete(doc);

	doc = fetch(res, "apis/apps/v1");
	assert_non_null(get(get(get(doc, "components"), "schemas"), "io.k8s.api.apps.v1.Deployment"));
	cJSON_Delete(doc);
	doc = fetch(res, "apis/apiextensions.k8s.io/v1");
	assert_non_null(get(get(get(doc, "components"), "schemas"),
			    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"));
	cJSON_Delete(doc);

	assert_null(apis_openapi_v3_doc(res, "apis/nope/v1"));
	assert_null(apis_openapi_v3_doc(res, NULL));

	/* the hash follows the content: changing a CRD schema changes it */
	char *before = apis_openapi_v3_index(res);
	cJSON *widget = cJSON_GetArrayItem(res, 8);
	cJSON_ReplaceItemInObject(widget, "schema", cJSON_Parse("{\"type\":\"object\",\"required\":[\"spec\"]}"));
	char *after = apis_openapi_v3_index(res);
	cJSON *bi = cJSON_Parse(before), *ai = cJSON_Parse(after);
	assert_string_not_equal(get(get(get(bi, "paths"), "apis/example.com/v1"), "serverRelativeURL")->valuestring,
				get(get(get(ai, "paths"), "apis/example.com/v1"), "serverRelativeURL")->valuestring);
	assert_string_equal(get(get(get(bi, "paths"), "api/v1"), "serverRelativeURL")->valuestring,
			    get(get(get(ai, "paths"), "api/v1"), "serverRelativeURL")->valuestring);
	cJSON_Delete(bi);
	cJSON_Delete(ai);
	free(before);
	free(after);
	cJSON_Delete(idx);
	cJSON_Delete(res);
}

static void test_hostile(void **state)
{
	(void)state;
	const char *inputs[] = {
		"null", "[]", "{}", "[1,null,\"x\",{}]",
		"[{\"group\":5,\"version\":\"v1\",\"kind\":\"A\",\"resource\":\"as\"}]",
		"[{\"version\":\"v1\",\"kind\":\"A\",\"resource\":\"as\",\"schema\":[1]}]",
		"[{\"group\":\"g\",\"version\":\"\",\"kind\":\"A\",\"resource\":\"as\"}]",
		"[{\"group\":\"g\",\"version\":\"v1\",\"kind\":\"A\",\"resource\":\"as\",\"schema\":"
		"{\"x-kubernetes-group-version-kind\":7}},{\"group\":\"g\",\"version\":\"v1\",\"kind\":\"A\","
		"\"resource\":\"as\"}]",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		cJSON *r = cJSON_Parse(inputs[i]);
		char *idx = apis_openapi_v3_index(r);
		assert_non_null(idx);
		free(idx);
		free(apis_openapi_v3_doc(r, "api/v1"));
		free(apis_openapi_v3_doc(r, "apis/g/v1"));
		cJSON_Delete(r);
	}
	char *idx = apis_openapi_v3_index(NULL);
	assert_string_equal(idx, "{\"paths\":{}}");
	free(idx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_and_docs),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
