/* Tests for e2e/apiserver/schema: defaulting, pruning (with unknown-field reporting), validation
 * messages worded like upstream's field errors, schema checks, the built-in known-field table
 * for fieldValidation=Strict, and fuzz-style hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/schema.h"

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fail_msg("bad test JSON: %s", s);
	return j;
}

static const char *widget_schema =
	"{\"type\":\"object\",\"properties\":{"
	"\"spec\":{\"type\":\"object\",\"required\":[\"size\"],\"properties\":{"
	"  \"size\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
	"  \"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"],\"default\":\"fast\"},"
	"  \"name\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":5,\"pattern\":\"^[a-z]+\\\\d*$\"},"
	"  \"code\":{\"type\":\"string\",\"pattern\":\"^(?:[a-z]+-)\\\\d$\"},"
	"  \"ratio\":{\"type\":\"number\",\"exclusiveMinimum\":true,\"minimum\":0},"
	"  \"tags\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":2,\"items\":{\"type\":\"string\"}},"
	"  \"ports\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"port\"],\"properties\":{"
	"     \"port\":{\"type\":\"integer\",\"format\":\"int32\"},\"proto\":{\"type\":\"string\",\"default\":\"TCP\"}}}},"
	"  \"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
	"  \"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
	"  \"port\":{\"x-kubernetes-int-or-string\":true},"
	"  \"opt\":{\"type\":\"string\",\"nullable\":true},"
	"  \"nested\":{\"type\":\"object\",\"default\":{},\"properties\":{\"a\":{\"type\":\"integer\",\"default\":7}}},"
	"  \"template\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
	"     \"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}}}}}"
	"}},"
	"\"status\":{\"type\":\"object\",\"properties\":{\"ready\":{\"type\":\"boolean\"}}}}}";

struct case_t {
	const char *name, *obj;
	const char *want_obj;    /* object after defaulting/pruning, NULL: not checked */
	const char *want_causes; /* JSON array of causes, NULL: valid */
	const char *want_unknown;
};

static const struct case_t cases[] = {
	{"valid with defaults", "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},"
				"\"spec\":{\"size\":3,\"ports\":[{\"port\":80}]}}",
	 "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},"
	 "\"spec\":{\"size\":3,\"mode\":\"fast\",\"ports\":[{\"port\":80,\"proto\":\"TCP\"}],\"nested\":{\"a\":7}}}",
	 NULL, "[]"},
	{"type error (upstream wording)", "{\"spec\":{\"size\":\"string\"}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"string\\\": spec.size in body must be of type integer: \\\"string\\\"\",\"field\":\"spec.size\"}]",
	 "[]"},
	{"required", "{\"spec\":{}}", NULL,
	 "[{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\",\"field\":\"spec.size\"}]", "[]"},
	{"min/max", "{\"spec\":{\"size\":0}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 0: spec.size in body should be greater than or equal to 1\",\"field\":\"spec.size\"}]",
	 "[]"},
	{"max", "{\"spec\":{\"size\":11}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 11: spec.size in body should be less than or equal to 10\",\"field\":\"spec.size\"}]",
	 "[]"},
	{"exclusive minimum", "{\"spec\":{\"size\":1,\"ratio\":0}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 0: spec.ratio in body should be greater than 0\",\"field\":\"spec.ratio\"}]",
	 "[]"},
	{"enum", "{\"spec\":{\"size\":1,\"mode\":\"medium\"}}", NULL,
	 "[{\"reason\":\"FieldValueNotSupported\",\"message\":\"Unsupported value: \\\"medium\\\": supported values: \\\"fast\\\", \\\"slow\\\"\",\"field\":\"spec.mode\"}]",
	 "[]"},
	{"string limits and pattern", "{\"spec\":{\"size\":1,\"name\":\"ABCDEF\"}}", NULL,
	 "[{\"reason\":\"FieldValueTooLong\",\"message\":\"Too long: may not be more than 5 bytes\",\"field\":\"spec.name\"},"
	 "{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"ABCDEF\\\": spec.name in body should match '^[a-z]+\\\\d*$'\",\"field\":\"spec.name\"}]",
	 "[]"},
	{"pattern with \\d matches", "{\"spec\":{\"size\":1,\"name\":\"ab12\"}}", NULL, NULL, "[]"},
	{"(?:...) group", "{\"spec\":{\"size\":1,\"code\":\"x-9\"}}", NULL, NULL, "[]"},
	{"(?:...) group mismatch", "{\"spec\":{\"size\":1,\"code\":\"x-\"}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"x-\\\": spec.code in body should match '^(?:[a-z]+-)\\\\d$'\",\"field\":\"spec.code\"}]",
	 "[]"},
	{"min length", "{\"spec\":{\"size\":1,\"name\":\"a\"}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"a\\\": spec.name in body should be at least 2 chars long\",\"field\":\"spec.name\"}]",
	 "[]"},
	{"array limits and items", "{\"spec\":{\"size\":1,\"tags\":[\"a\",2,\"c\"]}}", NULL,
	 "[{\"reason\":\"FieldValueTooMany\",\"message\":\"Too many: 3: must have at most 2 items\",\"field\":\"spec.tags\"},"
	 "{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"integer\\\": spec.tags[1] in body must be of type string: \\\"integer\\\"\",\"field\":\"spec.tags[1]\"}]",
	 "[]"},
	{"min items", "{\"spec\":{\"size\":1,\"tags\":[]}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 0: spec.tags in body should have at least 1 items\",\"field\":\"spec.tags\"}]",
	 "[]"},
	{"nested required in array items", "{\"spec\":{\"size\":1,\"ports\":[{\"proto\":\"UDP\"}]}}", NULL,
	 "[{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\",\"field\":\"spec.ports[0].port\"}]", "[]"},
	{"int32 range", "{\"spec\":{\"size\":1,\"ports\":[{\"port\":4294967296}]}}", NULL,
	 "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 4294967296: spec.ports[0].port in body must be of type int32: \\\"4294967296\\\"\",\"field\":\"spec.ports[0].port\"}]",
	 "[]"},
	{"integer rejects fractions", "{\"spec\":{\"size\":1.5}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"number\\\": spec.size in body must be of type integer: \\\"number\\\"\",\"field\":\"spec.size\"}]",
	 "[]"},
	{"pruning reports unknown fields", "{\"metadata\":{\"name\":\"w\",\"bogus\":1},\"spec\":{\"size\":1,\"foo\":1,"
					   "\"ports\":[{\"port\":1,\"x\":2}],\"free\":{\"any\":{\"thing\":1}},\"labels\":{\"a\":\"b\"},"
					   "\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"x\":\"y\",\"z\":1}}},"
					   "\"extra\":true}",
	 "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":1,\"mode\":\"fast\",\"ports\":[{\"port\":1,\"proto\":\"TCP\"}],"
	 "\"free\":{\"any\":{\"thing\":1}},\"labels\":{\"a\":\"b\"},\"nested\":{\"a\":7},"
	 "\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"x\":\"y\"}}}}",
	 NULL,
	 "[\"metadata.bogus\",\"spec.foo\",\"spec.ports[0].x\",\"spec.template.spec.z\",\"extra\"]"},
	{"additionalProperties typed", "{\"spec\":{\"size\":1,\"labels\":{\"a\":1}}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"integer\\\": spec.labels.a in body must be of type string: \\\"integer\\\"\",\"field\":\"spec.labels.a\"}]",
	 "[]"},
	{"int-or-string", "{\"spec\":{\"size\":1,\"port\":\"http\"}}", NULL, NULL, "[]"},
	{"int-or-string rejects bool", "{\"spec\":{\"size\":1,\"port\":true}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"boolean\\\": spec.port in body must be of type integer,string: \\\"boolean\\\"\",\"field\":\"spec.port\"}]",
	 "[]"},
	{"nullable keeps null, non-nullable null dropped or defaulted",
	 "{\"spec\":{\"size\":1,\"opt\":null,\"name\":null,\"mode\":null}}",
	 "{\"spec\":{\"size\":1,\"opt\":null,\"mode\":\"fast\",\"nested\":{\"a\":7}}}", NULL, "[]"},
	{"object where string expected", "{\"spec\":{\"size\":1,\"name\":{\"a\":1}}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"object\\\": spec.name in body must be of type string: \\\"object\\\"\",\"field\":\"spec.name\"}]",
	 "[\"spec.name.a\"]"}, /* like upstream, pruning walks the value whatever its type */
	{"status validated too", "{\"spec\":{\"size\":1},\"status\":{\"ready\":\"yes\"}}", NULL,
	 "[{\"reason\":\"FieldValueTypeInvalid\",\"message\":\"Invalid value: \\\"string\\\": status.ready in body must be of type boolean: \\\"string\\\"\",\"field\":\"status.ready\"}]",
	 "[]"},
};

static void test_apply_cases(void **state)
{
	(void)state;
	cJSON *schema = parse(widget_schema);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = parse(cases[i].obj);
		cJSON *unknown = cJSON_CreateArray();
		cJSON *causes = apis_schema_apply(schema, obj, unknown);
		if (cases[i].want_causes) {
			cJSON *want = parse(cases[i].want_causes);
			if (!causes || !cJSON_Compare(causes, want, 1)) {
				char *g = causes ? cJSON_PrintUnformatted(causes) : strdup("null");
				fail_msg("%s: causes\n got  %s\n want %s", cases[i].name, g, cases[i].want_causes);
			}
			cJSON_Delete(want);
		} else if (causes) {
			char *g = cJSON_PrintUnformatted(causes);
			fail_msg("%s: unexpected causes %s", cases[i].name, g);
		}
		if (cases[i].want_obj) {
			cJSON *want = parse(cases[i].want_obj);
			if (!cJSON_Compare(obj, want, 1)) {
				char *g = cJSON_PrintUnformatted(obj);
				fail_msg("%s: object\n got  %s\n want %s", cases[i].name, g, cases[i].want_obj);
			}
			cJSON_Delete(want);
		}
		cJSON *wu = parse(cases[i].want_unknown);
		if (!cJSON_Compare(unknown, wu, 1)) {
			char *g = cJSON_PrintUnformatted(unknown);
			fail_msg("%s: unknown\n got  %s\n want %s", cases[i].name, g, cases[i].want_unknown);
		}
		cJSON_Delete(wu);
		cJSON_Delete(unknown);
		cJSON_Delete(causes);
		cJSON_Delete(obj);
	}
	/* unknown_fields may be NULL: pruning still happens */
	cJSON *obj = parse("{\"spec\":{\"size\":1,\"zzz\":1}}");
	assert_null(apis_schema_apply(schema, obj, NULL));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "zzz"));
	cJSON_Delete(obj);
	cJSON_Delete(schema);
}

static void test_strict_message(void **state)
{
	(void)state;
	cJSON *u = parse("[\"spec.foo\",\"spec.a\\\"b\"]");
	char *m = apis_strict_error_message(u);
	assert_string_equal(m, "strict decoding error: unknown field \"spec.foo\", unknown field \"spec.a\\\"b\"");
	free(m);
	cJSON_Delete(u);
}

static void test_schema_check(void **state)
{
	(void)state;
	static const struct {
		const char *schema, *want; /* want: substring of the message, NULL: fine */
	} checks[] = {
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}", NULL},
		{"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"strin\"}}}",
		 "properties[spec].type: Unsupported value: \"strin\""},
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"([a-z\"}}}",
		 "properties[a].pattern: Invalid value"},
		{"{\"type\":\"object\",\"properties\":7}", "properties: must be an object"},
		{"{\"type\":\"array\",\"items\":{\"type\":5}}", "items.type: Unsupported value: 5"},
		{"[]", "must be an object"},
	};
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		cJSON *s = parse(checks[i].schema);
		char *m = apis_schema_check(s);
		if (checks[i].want) {
			if (!m || !strstr(m, checks[i].want))
				fail_msg("check %zu: got %s, want %s", i, m ? m : "(null)", checks[i].want);
		} else if (m) {
			fail_msg("check %zu: unexpected %s", i, m);
		}
		free(m);
		cJSON_Delete(s);
	}
}

static void test_builtin_unknown_fields(void **state)
{
	(void)state;
	static const struct {
		const char *group, *kind, *obj, *want;
	} cases[] = {
		{"", "ConfigMap", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"b\"}}",
		 "[]"},
		{"", "ConfigMap", "{\"metadata\":{\"name\":\"c\",\"lables\":{}},\"datta\":{}}",
		 "[\"metadata.lables\",\"datta\"]"},
		{"apps", "Deployment",
		 "{\"spec\":{\"replicas\":1,\"replica\":2,\"template\":{\"metadata\":{\"labels\":{},\"x\":1},"
		 "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i\"},{\"name\":\"b\",\"imagee\":\"i\"}],\"nodeSelectr\":{}}}}}",
		 "[\"spec.replica\",\"spec.template.metadata.x\",\"spec.template.spec.containers[1].imagee\","
		 "\"spec.template.spec.nodeSelectr\"]"},
		{"", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"anything\":1}}],\"schedulerName\":\"s\"},"
			    "\"status\":{\"whatever\":1}}",
		 "[]"},
		{"", "Node", "{\"spec\":{\"unschedulable\":true,\"taint\":[]}}", "[\"spec.taint\"]"},
		{"", "Widget", "{\"spec\":{\"anything\":1},\"top\":1}", "[]"},
		{"apps", "Pod", "{\"bogus\":1}", "[]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = parse(cases[i].obj);
		cJSON *u = cJSON_CreateArray();
		int n = apis_builtin_unknown_fields(cases[i].group, cases[i].kind, obj, u);
		cJSON *want = parse(cases[i].want);
		if (!cJSON_Compare(u, want, 1) || n != cJSON_GetArraySize(want)) {
			char *g = cJSON_PrintUnformatted(u);
			fail_msg("case %zu (%s): got %s (%d), want %s", i, cases[i].kind, g, n, cases[i].want);
		}
		cJSON_Delete(want);
		cJSON_Delete(u);
		cJSON_Delete(obj);
	}
	assert_int_equal(apis_builtin_unknown_fields("", "Pod", NULL, NULL), 0);
}

/* Fuzz: random schemas (from a small vocabulary) applied to random objects never crash. */
static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

static cJSON *rand_value(int depth)
{
	static const char *keys[] = {"spec", "a", "b", "metadata", "apiVersion", "kind", "items", "x"};
	switch (rnd() % (depth > 3 ? 4 : 6)) {
	case 0:
		return cJSON_CreateNull();
	case 1:
		return cJSON_CreateNumber((double)(int)(rnd() % 7) - 3 + (rnd() % 2 ? 0.5 : 0));
	case 2:
		return cJSON_CreateString(rnd() % 2 ? "abc" : "");
	case 3:
		return cJSON_CreateBool(rnd() % 2);
	case 4: {
		cJSON *o = cJSON_CreateObject();
		for (int i = rnd() % 4; i > 0; i--)
			cJSON_AddItemToObject(o, keys[rnd() % 8], rand_value(depth + 1));
		return o;
	}
	default: {
		cJSON *a = cJSON_CreateArray();
		for (int i = rnd() % 3; i > 0; i--)
			cJSON_AddItemToArray(a, rand_value(depth + 1));
		return a;
	}
	}
}

static cJSON *rand_schema(int depth)
{
	static const char *types[] = {"object", "array", "string", "integer", "number", "boolean", "bogus"};
	static const char *keys[] = {"spec", "a", "b", "metadata", "items", "x"};
	cJSON *s = cJSON_CreateObject();
	if (rnd() % 5)
		cJSON_AddStringToObject(s, "type", types[rnd() % 7]);
	if (depth < 4 && rnd() % 2) {
		cJSON *p = cJSON_AddObjectToObject(s, "properties");
		for (int i = rnd() % 3; i > 0; i--)
			cJSON_AddItemToObject(p, keys[rnd() % 6], rand_schema(depth + 1));
	}
	if (depth < 4 && rnd() % 3 == 0)
		cJSON_AddItemToObject(s, "items", rand_schema(depth + 1));
	if (depth < 4 && rnd() % 4 == 0)
		cJSON_AddItemToObject(s, "additionalProperties", rnd() % 2 ? rand_schema(depth + 1) : cJSON_CreateTrue());
	if (rnd() % 4 == 0)
		cJSON_AddItemToObject(s, "default", rand_value(2));
	if (rnd() % 4 == 0) {
		cJSON *r = cJSON_AddArrayToObject(s, "required");
		cJSON_AddItemToArray(r, cJSON_CreateString(keys[rnd() % 6]));
		if (rnd() % 3 == 0)
			cJSON_AddItemToArray(r, cJSON_CreateNumber(1));
	}
	if (rnd() % 6 == 0)
		cJSON_AddItemToObject(s, "enum", rand_value(3));
	if (rnd() % 6 == 0)
		cJSON_AddNumberToObject(s, rnd() % 2 ? "minimum" : "maxItems", rnd() % 3);
	if (rnd() % 6 == 0)
		cJSON_AddStringToObject(s, "pattern", rnd() % 2 ? "^a(b|c)*\\d$" : "([");
	if (rnd() % 8 == 0)
		cJSON_AddTrueToObject(s, "x-kubernetes-preserve-unknown-fields");
	if (rnd() % 8 == 0)
		cJSON_AddTrueToObject(s, "x-kubernetes-int-or-string");
	if (rnd() % 8 == 0)
		cJSON_AddTrueToObject(s, "x-kubernetes-embedded-resource");
	if (rnd() % 8 == 0)
		cJSON_AddTrueToObject(s, "nullable");
	return s;
}

static void test_fuzz(void **state)
{
	(void)state;
	for (int i = 0; i < 5000; i++) {
		cJSON *schema = rand_schema(0);
		cJSON *obj = rand_value(0);
		cJSON *u = cJSON_CreateArray();
		cJSON *causes = apis_schema_apply(schema, obj, u);
		for (const cJSON *c = causes ? causes->child : NULL; c; c = c->next) {
			assert_non_null(cJSON_GetObjectItem(c, "message"));
			assert_non_null(cJSON_GetObjectItem(c, "field"));
		}
		cJSON_Delete(causes);
		free(apis_schema_check(schema));
		cJSON_Delete(u);
		u = cJSON_CreateArray();
		apis_builtin_unknown_fields("apps", "Deployment", obj, u);
		apis_builtin_unknown_fields("", "Pod", obj, u);
		char *m = apis_strict_error_message(u);
		assert_non_null(m);
		free(m);
		cJSON_Delete(u);
		cJSON_Delete(obj);
		cJSON_Delete(schema);
	}
	assert_null(apis_schema_apply(NULL, NULL, NULL));
	/* deep nesting is bounded */
	cJSON *deep = cJSON_CreateObject(), *cur = deep;
	cJSON *ds = cJSON_CreateObject(), *scur = ds;
	for (int i = 0; i < 200; i++) {
		cJSON *n = cJSON_CreateObject();
		cJSON_AddItemToObject(cur, "a", n);
		cur = n;
		cJSON_AddStringToObject(scur, "type", "object");
		cJSON *p = cJSON_AddObjectToObject(scur, "properties");
		cJSON *ns = cJSON_CreateObject();
		cJSON_AddItemToObject(p, "a", ns);
		scur = ns;
	}
	cJSON_Delete(apis_schema_apply(ds, deep, NULL));
	char *m = apis_schema_check(ds);
	assert_non_null(m);
	free(m);
	cJSON_Delete(deep);
	cJSON_Delete(ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_cases),
		cmocka_unit_test(test_strict_message),
		cmocka_unit_test(test_schema_check),
		cmocka_unit_test(test_builtin_unknown_fields),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
