/* openapi.c — the /openapi/v3 documents kubectl reads before `kubectl apply`.
 *
 * What kubectl v1.32 needs (staging/src/k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go
 * and kubectl/pkg/cmd/apply/patcher.go):
 *   - an index {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=..."},...}};
 *   - per group-version, a PATCH operation for every kind, whose x-kubernetes-group-version-kind
 *     is a single {group,version,kind} map and whose parameters include the query parameter
 *     fieldValidation: then kubectl leaves validation to the server (fieldValidation=Strict);
 *     a kind without a PATCH path makes kubectl fail validation ("Path not found for GVK").
 *   - the PATCH requestBody deliberately does not list application/strategic-merge-patch+json:
 *     kubectl would then compute client-side-apply patches from these (minimal) schemas instead
 *     of its compiled-in types, losing merge keys. Without it kubectl falls back to the
 *     compiled-in types, exactly what a real cluster's schemas would give.
 * Component schemas are minimal objects for built-ins and the CRD's own openAPIV3Schema for
 * custom resources. The hash in the index is a content hash, so a cached document is refetched
 * whenever a CRD (or any resource of that group-version) changes. No global state. */
#include "e2e/apiserver/openapi.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Add item to an object/array; on failure the item is freed. NULL item fails. */
static bool obj_add(cJSON *o, const char *k, cJSON *item)
{
	if (item && o && cJSON_AddItemToObject(o, k, item))
		return true;
	cJSON_Delete(item);
	return false;
}

static bool arr_add(cJSON *a, cJSON *item)
{
	if (item && a && cJSON_AddItemToArray(a, item))
		return true;
	cJSON_Delete(item);
	return false;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "api/v1" or "apis/<group>/<version>" for a resource entry; buf must hold 512 bytes. */
static bool gv_path_of(const cJSON *r, char *buf, size_t len)
{
	const char *g = jstr(r, "group"), *v = jstr(r, "version");
	const char *res = jstr(r, "resource"), *kind = jstr(r, "kind");
	if (!v || !*v || !res || !*res || !kind || !*kind || strchr(res, '/'))
		return false;
	int n = g && *g ? snprintf(buf, len, "apis/%s/%s", g, v) : snprintf(buf, len, "api/%s", v);
	return n > 0 && (size_t)n < len;
}

/* Component schema name: io.k8s.api.core.v1.Pod, io.k8s.api.apps.v1.Deployment,
 * io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition,
 * com.example.v1.Widget (reversed group) for custom resources. */
static void component_name(char *buf, size_t len, const char *group, const char *version,
			   const char *kind, bool custom)
{
	if (!group || !*group) {
		snprintf(buf, len, "io.k8s.api.core.%s.%s", version, kind);
		return;
	}
	if (strcmp(group, "apiextensions.k8s.io") == 0) {
		snprintf(buf, len, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.%s.%s", version,
			 kind);
		return;
	}
	size_t gl = strlen(group);
	if (!custom && (strchr(group, '.') == NULL ||
			(gl > 7 && strcmp(group + gl - 7, ".k8s.io") == 0))) {
		size_t first = strcspn(group, ".");
		snprintf(buf, len, "io.k8s.api.%.*s.%s.%s", (int)first, group, version, kind);
		return;
	}
	/* reversed DNS */
	size_t n = 0;
	const char *end = group + gl;
	while (end > group && n + 1 < len) {
		const char *dot = end;
		while (dot > group && dot[-1] != '.')
			dot--;
		int w = snprintf(buf + n, len - n, "%s%.*s", n ? "." : "", (int)(end - dot), dot);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
		end = dot > group ? dot - 1 : group;
	}
	snprintf(buf + n, len > n ? len - n : 0, ".%s.%s", version, kind);
}

static cJSON *gvk_object(const char *g, const char *v, const char *k)
{
	cJSON *o = cJSON_CreateObject();
	if (o && cJSON_AddStringToObject(o, "group", g ? g : "") &&
	    cJSON_AddStringToObject(o, "version", v) && cJSON_AddStringToObject(o, "kind", k))
		return o;
	cJSON_Delete(o);
	return NULL;
}

static cJSON *param(const char *name, const char *in, bool required, const char *desc)
{
	cJSON *p = cJSON_CreateObject();
	if (!p)
		return NULL;
	cJSON *sc = cJSON_CreateObject();
	if (!obj_add(p, "schema", sc) || !cJSON_AddStringToObject(p, "name", name) ||
	    !cJSON_AddStringToObject(p, "in", in) || !cJSON_AddStringToObject(p, "description", desc) ||
	    (required && !cJSON_AddBoolToObject(p, "required", true)) ||
	    !cJSON_AddStringToObject(sc, "type", "string") ||
	    (strcmp(in, "query") == 0 && !cJSON_AddBoolToObject(sc, "uniqueItems", true))) {
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

static bool add_params(cJSON *arr, const char *const *names, size_t n)
{
	static const struct {
		const char *name, *desc;
	} known[] = {
		{"dryRun", "When present, indicates that modifications should not be persisted."},
		{"fieldManager", "Name associated with the actor or entity that is making these changes."},
		{"fieldValidation",
		 "How the server handles unknown or duplicate fields: Ignore, Warn or Strict."},
		{"force", "Force is going to \"force\" Apply requests."},
		{"pretty", "If 'true', then the output is pretty printed."},
		{"labelSelector", "A selector to restrict the list of returned objects by their labels."},
		{"fieldSelector", "A selector to restrict the list of returned objects by their fields."},
		{"limit", "Maximum number of responses to return for a list call."},
		{"continue", "Continue token from a previous list call."},
		{"resourceVersion", "Resource version constraint for list and watch."},
		{"watch", "Watch for changes to the described resources."},
		{"timeoutSeconds", "Timeout for the list/watch call."},
		{"gracePeriodSeconds", "The duration in seconds before the object should be deleted."},
		{"propagationPolicy", "Whether and how garbage collection will be performed."},
	};
	for (size_t i = 0; i < n; i++) {
		const char *desc = "";
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strcmp(known[k].name, names[i]) == 0)
				desc = known[k].desc;
		if (!arr_add(arr, param(names[i], "query", false, desc)))
			return false;
	}
	return true;
}

static cJSON *json_ref(const char *component)
{
	char ref[600];
	snprintf(ref, sizeof(ref), "#/components/schemas/%s", component);
	cJSON *o = cJSON_CreateObject();
	if (o && cJSON_AddStringToObject(o, "$ref", ref))
		return o;
	cJSON_Delete(o);
	return NULL;
}

/* {"<content-type>":{"schema":{"$ref":...}}, ...} */
static cJSON *content(const char *const *types, size_t n, const char *component)
{
	cJSON *c = cJSON_CreateObject();
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		cJSON *mt = cJSON_CreateObject();
		if (!obj_add(c, types[i], mt) || !obj_add(mt, "schema", json_ref(component))) {
			cJSON_Delete(c);
			return NULL;
		}
	}
	return c;
}

static const char *const read_types[] = {"application/json", "application/yaml"};
static const char *const patch_types[] = {"application/json-patch+json",
					  "application/merge-patch+json",
					  "application/apply-patch+yaml"};

/* One operation object. action: get, list, create, update, patch, delete. */
static cJSON *operation(const char *method_desc, const char *op_id, const char *action,
			const char *g, const char *v, const char *k, const char *component,
			const char *body_component, bool patch_body)
{
	cJSON *op = cJSON_CreateObject();
	if (!op)
		return NULL;
	bool ok = cJSON_AddStringToObject(op, "description", method_desc) &&
		  cJSON_AddStringToObject(op, "operationId", op_id);
	cJSON *params = ok ? cJSON_AddArrayToObject(op, "parameters") : NULL;
	ok = ok && params;
	if (ok && strcmp(action, "patch") == 0) {
		static const char *const names[] = {"dryRun", "fieldManager", "fieldValidation", "force"};
		ok = add_params(params, names, 4);
	} else if (ok && (strcmp(action, "post") == 0 || strcmp(action, "put") == 0)) {
		static const char *const names[] = {"dryRun", "fieldManager", "fieldValidation"};
		ok = add_params(params, names, 3);
	} else if (ok && strcmp(action, "list") == 0) {
		static const char *const names[] = {"labelSelector", "fieldSelector", "limit", "continue",
						    "resourceVersion", "watch", "timeoutSeconds"};
		ok = add_params(params, names, 7);
	} else if (ok && strcmp(action, "delete") == 0) {
		static const char *const names[] = {"dryRun", "gracePeriodSeconds", "propagationPolicy"};
		ok = add_params(params, names, 3);
	}
	if (ok && body_component) {
		cJSON *rb = cJSON_AddObjectToObject(op, "requestBody");
		ok = rb && obj_add(rb, "content",
				   patch_body ? content(patch_types, 3, body_component)
					      : content(read_types, 1, body_component)) &&
		     cJSON_AddBoolToObject(rb, "required", true);
	}
	if (ok) {
		cJSON *resp = cJSON_AddObjectToObject(op, "responses");
		cJSON *r200 = resp ? cJSON_AddObjectToObject(resp, "200") : NULL;
		ok = r200 && cJSON_AddStringToObject(r200, "description", "OK") &&
		     obj_add(r200, "content", content(read_types, 2, component));
		cJSON *r401 = ok ? cJSON_AddObjectToObject(resp, "401") : NULL;
		ok = ok && r401 && cJSON_AddStringToObject(r401, "description", "Unauthorized");
	}
	ok = ok && cJSON_AddStringToObject(op, "x-kubernetes-action", action) &&
	     obj_add(op, "x-kubernetes-group-version-kind", gvk_object(g, v, k));
	if (!ok) {
		cJSON_Delete(op);
		return NULL;
	}
	return op;
}

/* Adds the item and collection paths of one resource to paths. */
static bool add_resource_paths(cJSON *paths, const cJSON *r, const char *component)
{
	const char *g = jstr(r, "group"), *v = jstr(r, "version"), *k = jstr(r, "kind");
	const char *res = jstr(r, "resource");
	bool namespaced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "namespaced"));
	char prefix[512], coll[1024], item[1100], opid[600], desc[600];
	if (g && *g)
		snprintf(prefix, sizeof(prefix), "/apis/%s/%s", g, v);
	else
		snprintf(prefix, sizeof(prefix), "/api/%s", v);
	snprintf(coll, sizeof(coll), "%s/%s%s", prefix, namespaced ? "namespaces/{namespace}/" : "",
		 res);
	snprintf(item, sizeof(item), "%s/{name}", coll);

	cJSON *ipath = cJSON_CreateObject();
	cJSON *cpath = cJSON_CreateObject();
	if (!ipath || !cpath) {
		cJSON_Delete(ipath);
		cJSON_Delete(cpath);
		return false;
	}
	static const struct {
		const char *method, *action, *verb;
		bool collection, body, patch;
	} ops[] = {
		{"get", "get", "read", false, false, false},
		{"put", "put", "replace", false, true, false},
		{"patch", "patch", "patch", false, true, true},
		{"delete", "delete", "delete", false, false, false},
		{"get", "list", "list", true, false, false},
		{"post", "post", "create", true, true, false},
	};
	bool ok = true;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && ok; i++) {
		snprintf(opid, sizeof(opid), "%s%s%s", ops[i].verb, namespaced ? "Namespaced" : "", k);
		snprintf(desc, sizeof(desc), "%s %s %s", ops[i].verb,
			 ops[i].collection ? "objects of kind" : "the specified", k);
		cJSON *op = operation(desc, opid, ops[i].action, g, v, k, component,
				      ops[i].body ? (ops[i].patch ? "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
								  : component)
						  : NULL,
				      ops[i].patch);
		ok = obj_add(ops[i].collection ? cpath : ipath, ops[i].method, op);
	}
	/* path-level parameters */
	cJSON *ip = ok ? cJSON_AddArrayToObject(ipath, "parameters") : NULL;
	cJSON *cp = ok ? cJSON_AddArrayToObject(cpath, "parameters") : NULL;
	ok = ok && ip && cp;
	ok = ok && arr_add(ip, param("name", "path", true, "name of the resource"));
	if (ok && namespaced)
		ok = arr_add(ip, param("namespace", "path", true, "object name and auth scope")) &&
		     arr_add(cp, param("namespace", "path", true, "object name and auth scope"));
	static const char *const pretty[] = {"pretty"};
	ok = ok && add_params(ip, pretty, 1) && add_params(cp, pretty, 1);
	if (!ok) {
		cJSON_Delete(ipath);
		cJSON_Delete(cpath);
		return false;
	}
	if (!obj_add(paths, item, ipath)) {
		cJSON_Delete(cpath);
		return false;
	}
	return obj_add(paths, coll, cpath);
}

/* Component schema for one resource (consumes nothing). */
static cJSON *component_schema(const cJSON *r)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
	cJSON *s = cJSON_IsObject(schema) ? cJSON_Duplicate(schema, 1) : cJSON_CreateObject();
	if (!s)
		return NULL;
	if (!cJSON_IsObject(schema)) {
		char desc[256];
		snprintf(desc, sizeof(desc), "%s (schema not published by this test server)",
			 jstr(r, "kind"));
		if (!cJSON_AddStringToObject(s, "description", desc) ||
		    !cJSON_AddStringToObject(s, "type", "object") ||
		    !cJSON_AddBoolToObject(s, "x-kubernetes-preserve-unknown-fields", true)) {
			cJSON_Delete(s);
			return NULL;
		}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(s, "x-kubernetes-group-version-kind");
	cJSON *list = cJSON_CreateArray();
	if (!obj_add(s, "x-kubernetes-group-version-kind", list) ||
	    !arr_add(list, gvk_object(jstr(r, "group"), jstr(r, "version"), jstr(r, "kind")))) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

static cJSON *build_doc(const cJSON *resources, const char *gv_path)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	cJSON *info = cJSON_AddObjectToObject(doc, "info");
	bool ok = cJSON_AddStringToObject(doc, "openapi", "3.0.0") && info &&
		  cJSON_AddStringToObject(info, "title", "Kubernetes") &&
		  cJSON_AddStringToObject(info, "version", "v1.32.0");
	cJSON *paths = ok ? cJSON_AddObjectToObject(doc, "paths") : NULL;
	cJSON *comps = paths ? cJSON_AddObjectToObject(doc, "components") : NULL;
	cJSON *schemas = comps ? cJSON_AddObjectToObject(comps, "schemas") : NULL;
	if (!schemas) {
		cJSON_Delete(doc);
		return NULL;
	}
	/* shared components */
	cJSON *patch = cJSON_CreateObject();
	if (!obj_add(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", patch) ||
	    !cJSON_AddStringToObject(patch, "type", "object") ||
	    !cJSON_AddStringToObject(patch, "description",
				     "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.")) {
		cJSON_Delete(doc);
		return NULL;
	}
	int found = 0;
	for (const cJSON *r = cJSON_IsArray(resources) ? resources->child : NULL; r; r = r->next) {
		char gp[512];
		if (!gv_path_of(r, gp, sizeof(gp)) || strcmp(gp, gv_path) != 0)
			continue;
		const char *g = jstr(r, "group"), *v = jstr(r, "version"), *k = jstr(r, "kind");
		char comp[600];
		bool custom = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "schema"));
		component_name(comp, sizeof(comp), g, v, k, custom);
		char item[1100];
		bool namespaced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "namespaced"));
		snprintf(item, sizeof(item), "/%s/%s%s/{name}", gv_path,
			 namespaced ? "namespaces/{namespace}/" : "", jstr(r, "resource"));
		if (cJSON_GetObjectItemCaseSensitive(paths, item))
			continue; /* duplicate entry */
		found++;
		if (!cJSON_GetObjectItemCaseSensitive(schemas, comp)) {
			if (!obj_add(schemas, comp, component_schema(r))) {
				cJSON_Delete(doc);
				return NULL;
			}
		}
		if (!add_resource_paths(paths, r, comp)) {
			cJSON_Delete(doc);
			return NULL;
		}
	}
	if (!found) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

char *apis_openapi_v3_doc(const cJSON *resources, const char *gv_path)
{
	if (!gv_path)
		return NULL;
	while (*gv_path == '/')
		gv_path++;
	char clean[512];
	size_t n = strcspn(gv_path, "?");
	if (n >= sizeof(clean))
		return NULL;
	memcpy(clean, gv_path, n);
	clean[n] = 0;
	cJSON *doc = build_doc(resources, clean);
	if (!doc)
		return NULL;
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	return text;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

char *apis_openapi_v3_index(const cJSON *resources)
{
	cJSON *idx = cJSON_CreateObject();
	cJSON *paths = idx ? cJSON_AddObjectToObject(idx, "paths") : NULL;
	if (!paths) {
		cJSON_Delete(idx);
		return NULL;
	}
	for (const cJSON *r = cJSON_IsArray(resources) ? resources->child : NULL; r; r = r->next) {
		char gp[512];
		if (!gv_path_of(r, gp, sizeof(gp)) || cJSON_GetObjectItemCaseSensitive(paths, gp))
			continue;
		char *doc = apis_openapi_v3_doc(resources, gp);
		if (!doc) {
			cJSON_Delete(idx);
			return NULL;
		}
		char url[700];
		snprintf(url, sizeof(url), "/openapi/v3/%s?hash=%016llX", gp,
			 (unsigned long long)fnv1a(doc));
		free(doc);
		cJSON *e = cJSON_CreateObject();
		if (!obj_add(paths, gp, e) || !cJSON_AddStringToObject(e, "serverRelativeURL", url)) {
			cJSON_Delete(idx);
			return NULL;
		}
	}
	char *text = cJSON_PrintUnformatted(idx);
	cJSON_Delete(idx);
	return text;
}
