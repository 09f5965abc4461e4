/* Strict JSON decoding helpers shared by the config loader and every plugin's args decoder:
 * upstream field.Error wording, field paths, typed readers that reject unknown fields and wrong
 * types, and the [{name, weight}] resource lists of the NodeResources* args (Go durations are
 * kube/util.h's). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/selector.h"
#include "kube/util.h"
#include "scheduler/config/config.h"

#define SK_API_VERSION "kubescheduler.config.k8s.io/v1"

/* ---------- errors ---------- */

void sk_err_invalid_int(struct sk_errors *e, const char *path, int64_t v, const char *detail)
{
	sk_errors_addf(e, "%s: Invalid value: %" PRId64 ": %s", path, v, detail);
}

/* Go %q of a string: quotes, and escapes for quotes, backslashes and control bytes. */
static char *go_quote(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n * 4 + 3), *p = out;
	if (!out)
		return NULL;
	*p++ = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"': *p++ = '\\'; *p++ = '"'; break;
		case '\\': *p++ = '\\'; *p++ = '\\'; break;
		case '\n': *p++ = '\\'; *p++ = 'n'; break;
		case '\t': *p++ = '\\'; *p++ = 't'; break;
		case '\r': *p++ = '\\'; *p++ = 'r'; break;
		default:
			if (*c < 0x20 || *c == 0x7f)
				p += sprintf(p, "\\x%02x", *c);
			else
				*p++ = (char)*c;
		}
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

void sk_err_invalid_str(struct sk_errors *e, const char *path, const char *v, const char *detail)
{
	char *q = go_quote(v ? v : "");
	sk_errors_addf(e, "%s: Invalid value: %s: %s", path, q ? q : "\"\"", detail);
	free(q);
}

void sk_err_invalid_raw(struct sk_errors *e, const char *path, const char *printed, const char *detail)
{
	sk_errors_addf(e, "%s: Invalid value: %s: %s", path, printed, detail);
}

void sk_err_required(struct sk_errors *e, const char *path, const char *detail)
{
	if (detail && *detail)
		sk_errors_addf(e, "%s: Required value: %s", path, detail);
	else
		sk_errors_addf(e, "%s: Required value", path);
}

void sk_err_forbidden(struct sk_errors *e, const char *path, const char *detail)
{
	sk_errors_addf(e, "%s: Forbidden: %s", path, detail);
}

void sk_err_duplicate(struct sk_errors *e, const char *path, const char *v)
{
	char *q = go_quote(v ? v : "");
	sk_errors_addf(e, "%s: Duplicate value: %s", path, q ? q : "\"\"");
	free(q);
}

void sk_err_unsupported(struct sk_errors *e, const char *path, const char *v, const char *const *supported)
{
	size_t len = 1;
	for (int i = 0; supported[i]; i++)
		len += strlen(supported[i]) * 4 + 4;
	char *list = malloc(len), *p = list;
	char *q = go_quote(v ? v : "");
	if (!list || !q) {
		free(list);
		free(q);
		sk_errors_addf(e, "%s: Unsupported value", path);
		return;
	}
	*p = '\0';
	for (int i = 0; supported[i]; i++) {
		char *sq = go_quote(supported[i]);
		if (!sq)
			break;
		p += sprintf(p, "%s%s", i ? ", " : "", sq);
		free(sq);
	}
	sk_errors_addf(e, "%s: Unsupported value: %s: supported values: %s", path, q, list);
	free(list);
	free(q);
}

/* ---------- paths ---------- */

char *sk_path_child(const char *base, const char *child)
{
	char *out = NULL;
	int r = (!base || !*base) ? asprintf(&out, "%s", child) : asprintf(&out, "%s.%s", base, child);
	return r < 0 ? NULL : out;
}

char *sk_path_index(const char *base, int i)
{
	char *out = NULL;
	return asprintf(&out, "%s[%d]", base ? base : "", i) < 0 ? NULL : out;
}

static const char *json_type_name(const cJSON *v)
{
	if (cJSON_IsString(v)) return "string";
	if (cJSON_IsNumber(v)) return "number";
	if (cJSON_IsBool(v)) return "bool";
	if (cJSON_IsArray(v)) return "array";
	if (cJSON_IsObject(v)) return "object";
	if (cJSON_IsNull(v)) return "null";
	return "unknown";
}

static void err_type(struct sk_errors *e, const char *path, const cJSON *v, const char *expected)
{
	sk_errors_addf(e, "%s: Invalid type: expected %s, got %s", path, expected, json_type_name(v));
}

int sk_json_check_object(const cJSON *obj, const char *path, const char *const *allowed, bool allow_type_meta,
			 struct sk_errors *e)
{
	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj)) {
		err_type(e, (path && *path) ? path : "<root>", obj, "object");
		return -1;
	}
	int rc = 0;
	for (const cJSON *c = obj->child; c; c = c->next) {
		bool ok = allow_type_meta && (!strcmp(c->string, "apiVersion") || !strcmp(c->string, "kind"));
		for (int i = 0; !ok && allowed && allowed[i]; i++)
			ok = !strcmp(c->string, allowed[i]);
		if (!ok) {
			char *full = sk_path_child(path, c->string);
			sk_errors_addf(e, "unknown field \"%s\"", full ? full : c->string);
			free(full);
			rc = -1;
		}
	}
	return rc;
}

static const cJSON *field_of(const cJSON *obj, const char *field)
{
	if (!obj || !cJSON_IsObject(obj))
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
	return (v && !cJSON_IsNull(v)) ? v : NULL;
}

int sk_json_int(const cJSON *obj, const char *field, const char *path, int64_t min, int64_t max, int64_t *out,
		bool *present, struct sk_errors *e)
{
	const cJSON *v = field_of(obj, field);
	if (present)
		*present = false;
	if (!v)
		return 0;
	char *p = sk_path_child(path, field);
	int64_t x;
	if (!cJSON_IsNumber(v) || kube_json_get_int64(v, &x) != 0) {
		err_type(e, p ? p : field, v, "integer");
		free(p);
		return -1;
	}
	if (x < min || x > max) {
		sk_errors_addf(e, "%s: Invalid value: %s: out of range for %s", p ? p : field,
			       v->valuestring ? v->valuestring : "number", max <= INT32_MAX ? "int32" : "int64");
		free(p);
		return -1;
	}
	free(p);
	*out = x;
	if (present)
		*present = true;
	return 0;
}

int sk_json_bool(const cJSON *obj, const char *field, const char *path, bool *out, bool *present,
		 struct sk_errors *e)
{
	const cJSON *v = field_of(obj, field);
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!cJSON_IsBool(v)) {
		char *p = sk_path_child(path, field);
		err_type(e, p ? p : field, v, "bool");
		free(p);
		return -1;
	}
	*out = cJSON_IsTrue(v);
	if (present)
		*present = true;
	return 0;
}

int sk_json_string(const cJSON *obj, const char *field, const char *path, char **out, bool *present,
		   struct sk_errors *e)
{
	const cJSON *v = field_of(obj, field);
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!cJSON_IsString(v)) {
		char *p = sk_path_child(path, field);
		err_type(e, p ? p : field, v, "string");
		free(p);
		return -1;
	}
	char *d = strdup(v->valuestring);
	if (!d) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	free(*out);
	*out = d;
	if (present)
		*present = true;
	return 0;
}

int sk_args_check_type_meta(const cJSON *args, const char *kind_expected, const char *path, struct sk_errors *e)
{
	if (!args || !cJSON_IsObject(args))
		return 0;
	int rc = 0;
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(args, "kind");
	const cJSON *av = cJSON_GetObjectItemCaseSensitive(args, "apiVersion");
	if (k && (!cJSON_IsString(k) || strcmp(k->valuestring, kind_expected))) {
		sk_errors_addf(e, "%s: args were not of type %s, got %s", path, kind_expected,
			       cJSON_IsString(k) ? k->valuestring : json_type_name(k));
		rc = -1;
	}
	if (av && (!cJSON_IsString(av) || strcmp(av->valuestring, SK_API_VERSION))) {
		const char *const supported[] = { SK_API_VERSION, NULL };
		char *p = sk_path_child(path, "apiVersion");
		sk_err_unsupported(e, p ? p : path, cJSON_IsString(av) ? av->valuestring : json_type_name(av), supported);
		free(p);
		rc = -1;
	}
	return rc;
}

cJSON *sk_args_json_new(const char *kind)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "kind", kind) || !cJSON_AddStringToObject(o, "apiVersion", SK_API_VERSION)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* For plugins' args_encode, which cannot reach kube/object.h (the same exact-int64 node). */
cJSON *sk_json_create_int64(int64_t v)
{
	return kube_json_create_int64(v);
}

/* The plugin API's spelling of the Go duration helpers (schedkit/args.h): plugins cannot reach
 * kube/util.h, which implements them. */
int sk_duration_parse_ms(const char *s, int64_t *ms)
{
	return kube_duration_parse_ms(s, ms);
}

void sk_duration_format_ms(int64_t ms, char buf[48])
{
	kube_duration_format_ms(ms, buf, 48);
}

/* ---------- [{name, weight}] ---------- */

void sk_resource_specs_free(struct sk_resource_spec *specs, int n)
{
	for (int i = 0; specs && i < n; i++)
		free(specs[i].name);
	free(specs);
}

int sk_resource_specs_decode(const cJSON *arr, const char *path, struct sk_resource_spec **out, int *n,
			     struct sk_errors *e)
{
	static const char *const fields[] = { "name", "weight", NULL };
	*out = NULL;
	*n = 0;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr)) {
		err_type(e, path, arr, "array");
		return -1;
	}
	int cnt = cJSON_GetArraySize(arr), rc = 0, i = 0;
	struct sk_resource_spec *specs = calloc(cnt ? (size_t)cnt : 1, sizeof(*specs));
	if (!specs) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *p = sk_path_index(path, i);
		const char *pp = p ? p : path;
		if (sk_json_check_object(it, pp, fields, false, e) < 0 || !cJSON_IsObject(it)) {
			if (cJSON_IsNull(it))
				sk_errors_addf(e, "%s: Invalid type: expected object, got null", pp);
			rc = -1;
			free(p);
			continue;
		}
		if (sk_json_string(it, "name", pp, &specs[i].name, NULL, e) < 0 ||
		    sk_json_int(it, "weight", pp, INT64_MIN, INT64_MAX, &specs[i].weight, NULL, e) < 0)
			rc = -1;
		if (!specs[i].name && !(specs[i].name = strdup("")))
			rc = -1;
		free(p);
	}
	if (rc < 0) {
		sk_resource_specs_free(specs, cnt);
		return -1;
	}
	*out = specs;
	*n = cnt;
	return 0;
}

cJSON *sk_resource_specs_encode(const struct sk_resource_spec *specs, int n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; arr && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddStringToObject(o, "name", specs[i].name) ||
		    (specs[i].weight && !cJSON_AddItemToObject(o, "weight", kube_json_create_int64(specs[i].weight)))) {
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return NULL;
		}
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

int sk_validate_label_name(struct sk_errors *e, const char *path, const char *v)
{
	char *err = NULL;
	if (kube_validate_qualified_name(v, &err) == 0)
		return 0;
	/* kube_validate_qualified_name joins upstream's separate messages with "; ". */
	char *msg = err;
	while (msg && *msg) {
		char *sep = strstr(msg, "; ");
		if (sep)
			*sep = '\0';
		sk_err_invalid_str(e, path, v, msg);
		msg = sep ? sep + 2 : NULL;
	}
	if (!err)
		sk_err_invalid_str(e, path, v, "invalid label name");
	free(err);
	return -1;
}
