/* Tests for kube/object.c: YAML typing as sigs.k8s.io/yaml (go-yaml v2 resolution), YAML and
 * JSON output and round trips, paths, metadata, owner references, conditions, times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <unistd.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"

static cJSON *yaml(const char *text)
{
	char *err = NULL;
	cJSON *d = kube_yaml_parse(text, strlen(text), &err);
	if (!d)
		fail_msg("parse %s: %s", text, err);
	return d;
}

/* compact JSON of the documents array */
static char *yaml_to_json(const char *text)
{
	cJSON *d = yaml(text);
	char *s = kube_json_print(d);
	cJSON_Delete(d);
	return s;
}

static void test_scalar_typing(void **state)
{
	(void)state;
	/* "v: <scalar>" -> expected JSON for v; go-yaml v2 resolution as kubectl applies it */
	static const struct {
		const char *yaml, *json;
	} cases[] = {
		{"true", "true"}, {"True", "true"}, {"TRUE", "true"}, {"false", "false"},
		{"yes", "true"}, {"Yes", "true"}, {"YES", "true"}, {"no", "false"}, {"No", "false"},
		{"on", "true"}, {"ON", "true"}, {"off", "false"}, {"Off", "false"}, {"y", "true"}, {"n", "false"},
		{"Y", "true"}, {"N", "false"}, {"yES", "\"yES\""}, {"tRUE", "\"tRUE\""},
		{"null", "null"}, {"Null", "null"}, {"NULL", "null"}, {"~", "null"}, {"", "null"},
		{"nULL", "\"nULL\""},
		{"0", "0"}, {"123", "123"}, {"-17", "-17"}, {"+17", "17"}, {"0x1F", "31"}, {"0o17", "15"},
		{"017", "15"}, {"0b101", "5"}, {"1_000", "1000"}, {"-0x10", "-16"}, {"08", "8"}, {"09.5", "9.5"},
		{"9223372036854775807", "9223372036854775807"}, {"-9223372036854775808", "-9223372036854775808"},
		{"18446744073709551615", "18446744073709551615"}, {"9007199254740993", "9007199254740993"},
		{"18446744073709551616", "18446744073709552000"},
		{"1.5", "1.5"}, {"-1.5", "-1.5"}, {".5", "0.5"}, {"1.", "1"}, {"1e3", "1000"}, {"1E3", "1000"},
		{"1.5e-3", "0.0015"}, {"1e21", "1e+21"}, {"1e-7", "1e-07"}, {"3.14159", "3.14159"},
		{"0.1", "0.1"}, {"1e400", "\"1e400\""}, {"1e-400", "0"},
		{"1_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000",
		 "1e+116"},
		{"abc", "\"abc\""}, {"1.2.3", "\"1.2.3\""}, {"1Gi", "\"1Gi\""}, {"100m", "\"100m\""},
		{"2001-12-14", "\"2001-12-14\""}, {"2001-12-14T21:59:43.10-05:00", "\"2001-12-14T21:59:43.10-05:00\""},
		{"1:20", "\"1:20\""}, {"0x", "\"0x\""}, {"'-'", "\"-\""}, {"+", "\"+\""}, {"--1", "\"--1\""},
		{"\"true\"", "\"true\""}, {"'123'", "\"123\""}, {"\"\"", "\"\""}, {"''", "\"\""}, {"\"null\"", "\"null\""},
		{"!!str 123", "\"123\""}, {"!!str true", "\"true\""}, {"!!int \"42\"", "42"}, {"!!float 1", "1"},
		{"'it''s'", "\"it's\""}, {"\"a\\tb\\n\"", "\"a\\tb\\n\""}, {"\"\\u00e9\"", "\"\xc3\xa9\""},
		{"a b c", "\"a b c\""}, {"a # comment", "\"a\""}, {"[]", "[]"}, {"{}", "{}"},
		{"[1, two, \"3\", true]", "[1,\"two\",\"3\",true]"}, {"{a: 1, b: [x]}", "{\"a\":1,\"b\":[\"x\"]}"},
		{"|\n  line1\n  line2\n", "\"line1\\nline2\\n\""}, {"|-\n  keep\n", "\"keep\""},
		{">\n  folded\n  text\n", "\"folded text\\n\""}, {"|\n  123\n", "\"123\\n\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512], want[512];
		snprintf(text, sizeof(text), "v: %s", cases[i].yaml);
		snprintf(want, sizeof(want), "[{\"v\":%s}]", cases[i].json);
		char *got = yaml_to_json(text);
		if (strcmp(got, want) != 0)
			fail_msg("%s: got %s want %s", text, got, want);
		free(got);
	}
}

static void test_keys_and_structure(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *json;
	} cases[] = {
		/* non-string keys become their canonical text */
		{"1: a\ntrue: b\nyes: c\n~: d\n0x10: e", "[{\"1\":\"a\",\"true\":\"c\",\"null\":\"d\",\"16\":\"e\"}]"},
		/* duplicate keys: last wins at the first position */
		{"a: 1\nb: 2\na: 3", "[{\"a\":3,\"b\":2}]"},
		/* anchors, aliases, merge keys */
		{"base: &b {p: 1, q: 2}\nc: *b\nd:\n  <<: *b\n  q: 3",
		 "[{\"base\":{\"p\":1,\"q\":2},\"c\":{\"p\":1,\"q\":2},\"d\":{\"q\":3,\"p\":1}}]"},
		/* kubectl's gotcha: plain y/n/on/off keys are booleans too */
		{"y: 1\nn: 2\non: 3\n'y': 4", "[{\"true\":3,\"false\":2,\"y\":4}]"},
		{"a: &a [1, 2]\nb: *a", "[{\"a\":[1,2],\"b\":[1,2]}]"},
		{"s: &s hello\nt: *s", "[{\"s\":\"hello\",\"t\":\"hello\"}]"},
		{"m1: &m1 {a: 1}\nm2: &m2 {a: 2, b: 2}\nx:\n  <<: [*m1, *m2]", "[{\"m1\":{\"a\":1},\"m2\":{\"a\":2,\"b\":2},\"x\":{\"a\":1,\"b\":2}}]"},
		/* multi-document, empty documents skipped */
		{"---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n", "[{\"a\":1},{\"b\":2}]"},
		{"", "[]"},
		{"# nothing", "[]"},
		{"- a\n- b: 1\n  c: 2\n- - x\n  - z\n", "[[\"a\",{\"b\":1,\"c\":2},[\"x\",\"z\"]]]"},
		/* JSON is YAML */
		{"{\"kind\":\"Pod\",\"n\":9007199254740993,\"f\":1.25,\"s\":\"x\\\"y\",\"a\":[null,false]}",
		 "[{\"kind\":\"Pod\",\"n\":9007199254740993,\"f\":1.25,\"s\":\"x\\\"y\",\"a\":[null,false]}]"},
		{"{\"a\":1}\n{\"b\":2}", NULL},
		{"key:\n- a\n- b\nother: c", "[{\"key\":[\"a\",\"b\"],\"other\":\"c\"}]"},
		{"text: \"line1\\nline2\"", "[{\"text\":\"line1\\nline2\"}]"},
		{"\xef\xbb\xbf" "a: 1", "[{\"a\":1}]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		cJSON *d = kube_yaml_parse(cases[i].yaml, strlen(cases[i].yaml), &err);
		if (!cases[i].json) {
			if (d)
				fail_msg("%s: parsed unexpectedly", cases[i].yaml);
			free(err);
			continue;
		}
		if (!d)
			fail_msg("%s: %s", cases[i].yaml, err);
		char *got = kube_json_print(d);
		if (strcmp(got, cases[i].json) != 0)
			fail_msg("%s:\n got %s\nwant %s", cases[i].yaml, got, cases[i].json);
		free(got);
		cJSON_Delete(d);
	}
}

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *err;
	} cases[] = {
		{"a: b: c", "line 1 column 5: mapping values are not allowed in this context"},
		{"a: 1\n b: 2", "line 2 column 3: mapping values are not allowed in this context"},
		{"a: [1, 2", "line 2 column 1: did not find expected ',' or ']' while parsing a flow sequence"},
		{"a: *nope", "line 1 column 4: unknown anchor 'nope' referenced"},
		{"a: \"unterminated", "line 1 column 17: found unexpected end of stream while scanning a quoted scalar"},
		{"v: .inf", "line 1 column 4: json: unsupported value: .inf"},
		{"? [a]\n: b", "line 1 column 3: mapping keys must be scalars"},
		{"v: !!int abc", "line 1 column 4: cannot decode"},
		{"\tkey: 1", "line 1 column 1: found character that cannot start any token while scanning for the next token"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		cJSON *d = kube_yaml_parse(cases[i].yaml, strlen(cases[i].yaml), &err);
		if (d)
			fail_msg("%s: parsed unexpectedly", cases[i].yaml);
		if (!err || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("%s:\n got %s\nwant %s", cases[i].yaml, err, cases[i].err);
		free(err);
	}
	/* err may be NULL */
	assert_null(kube_yaml_parse("a: [", 4, NULL));
	/* an alias bomb is refused instead of exhausting memory */
	const char *bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
			   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
			   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
			   "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";
	char *err = NULL;
	assert_null(kube_yaml_parse(bomb, strlen(bomb), &err));
	assert_non_null(strstr(err, "excessive aliasing"));
	free(err);
	/* parse_one */
	err = NULL;
	assert_null(kube_yaml_parse_one("# empty", 7, &err));
	assert_string_equal(err, "no document");
	free(err);
	cJSON *one = kube_yaml_parse_one("a: 1\n---\nb: 2", 13, NULL);
	assert_non_null(one);
	assert_non_null(cJSON_GetObjectItem(one, "a"));
	cJSON_Delete(one);
}

/* Strings that would read back as something else when written plain. */
static const char *tricky[] = {
	"true", "false", "yes", "no", "on", "off", "y", "n", "Y", "N", "TRUE", "null", "Null", "~", "", "123", "-1",
	"0x1F", "0o7", "017", "1_000", "1e3", ".5", "1.", "1.5", ".inf", "-.inf", ".nan", " lead", "trail ",
	" both ", "a: b", "a:b", "key:", "a #b", "a#b", "#x", "multi\nline", "trailing\n", "\n", "tab\there",
	"-", "- x", "-x", "--", "---", "...", "? x", "?x", ":x", "@x", "`x", "!tag", "&anchor", "*alias", "|x",
	">x", "%x", "'q'", "\"dq\"", "[a]", "{a}", "a,b", "a [b]", "<<", "=", "caf\xc3\xa9", "\xe2\x80\xa8",
	"back\\slash", "ctl\x01", "2001-12-14", "1:20", "100m", "1Gi", "0", "08", "+1", "+.5", "null ",
	"\x7f", "x\r\ny", "# comment",
};

static void test_yaml_round_trip(void **state)
{
	(void)state;
	size_t n = sizeof(tricky) / sizeof(tricky[0]);
	cJSON *obj = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(obj, "list");
	cJSON *map = cJSON_AddObjectToObject(obj, "map");
	for (size_t i = 0; i < n; i++) {
		cJSON_AddItemToArray(arr, cJSON_CreateString(tricky[i]));
		cJSON_AddStringToObject(map, tricky[i], tricky[i]);
		/* also as a single value, so failures point at one string */
		cJSON *one = cJSON_CreateObject();
		cJSON_AddStringToObject(one, "v", tricky[i]);
		char *text = kube_yaml_emit(one);
		cJSON *back = yaml(text);
		if (!cJSON_Compare(cJSON_GetArrayItem(back, 0), one, true))
			fail_msg("round trip of [%s] via\n%s", tricky[i], text);
		cJSON_Delete(back);
		free(text);
		cJSON_Delete(one);
	}
	/* nested structures, empty collections, numbers, nulls */
	cJSON *nested = cJSON_Parse(
		"{\"a\":{\"b\":{\"c\":[1,2,{\"d\":[]}],\"e\":{}}},\"f\":[[1,[2,[3]]],[],{}],\"g\":null,\"h\":true,"
		"\"i\":-0.5,\"j\":1e21,\"k\":[{\"x\":1,\"y\":[{\"z\":\"w\"}]}],\"l\":{\"m\":[[\"n\"]]}}");
	cJSON_AddItemToObject(obj, "nested", nested);
	cJSON_AddItemToObject(obj, "big", kube_json_create_int64(INT64_MAX));
	char *text = kube_yaml_emit(obj);
	cJSON *back = yaml(text);
	if (!cJSON_Compare(cJSON_GetArrayItem(back, 0), obj, true))
		fail_msg("round trip failed for\n%s", text);
	/* int64 precision survives: compare exact text */
	char *json = kube_json_print(cJSON_GetObjectItem(cJSON_GetArrayItem(back, 0), "big"));
	assert_string_equal(json, "9223372036854775807");
	free(json);
	cJSON_Delete(back);
	free(text);
	cJSON_Delete(obj);
	/* keys too long for an implicit YAML key */
	char *longkey = malloc(3001);
	memset(longkey, 'k', 3000);
	longkey[3000] = '\0';
	cJSON *lk = cJSON_CreateObject();
	cJSON_AddItemToObject(cJSON_AddObjectToObject(lk, "m"), longkey, cJSON_CreateString("v"));
	cJSON_AddItemToObject(lk, longkey, cJSON_CreateArray());
	cJSON_AddItemToArray(cJSON_GetObjectItem(lk, longkey), cJSON_CreateNumber(1));
	text = kube_yaml_emit(lk);
	back = yaml(text);
	assert_true(cJSON_Compare(cJSON_GetArrayItem(back, 0), lk, true));
	cJSON_Delete(back);
	free(text);
	cJSON_Delete(lk);
	free(longkey);
	/* top-level scalars, arrays and empties */
	static const char *tops[] = {"[]", "{}", "\"s\"", "[1,\"2\",[3]]", "42", "null"};
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		cJSON *v = cJSON_Parse(tops[i]);
		char *t = kube_yaml_emit(v);
		char *err = NULL;
		cJSON *d = kube_yaml_parse(t, strlen(t), &err);
		assert_non_null(d);
		if (cJSON_IsNull(v))
			assert_int_equal(cJSON_GetArraySize(d), 0); /* a null document is an empty one */
		else if (!cJSON_Compare(cJSON_GetArrayItem(d, 0), v, true))
			fail_msg("top %s via %s", tops[i], t);
		cJSON_Delete(d);
		free(t);
		cJSON_Delete(v);
	}
}

/* Deterministic pseudo-random strings over an alphabet of YAML-significant characters. */
static void test_yaml_round_trip_random(void **state)
{
	(void)state;
	static const char alphabet[] = "ab1 :#-?'\"\n\t.,[]{}!&*|>%@`~yYnN0x_e+\\/=<";
	unsigned seed = 12345;
	for (int i = 0; i < 4000; i++) {
		char str[16];
		seed = seed * 1103515245u + 12345u;
		int n = (int)((seed >> 16) % 12);
		for (int k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			str[k] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		str[n] = '\0';
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, str, str);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "l"), cJSON_CreateString(str));
		char *text = kube_yaml_emit(o);
		char *err = NULL;
		cJSON *back = kube_yaml_parse(text, strlen(text), &err);
		if (!back || !cJSON_Compare(cJSON_GetArrayItem(back, 0), o, true))
			fail_msg("random round trip of [%s] via\n%s\n%s", str, text, err ? err : "");
		cJSON_Delete(back);
		free(text);
		cJSON_Delete(o);
	}
}

static void test_yaml_emit_format(void **state)
{
	(void)state;
	cJSON *o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\","
			       "\"tier\":\"true\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1.25\","
			       "\"ports\":[{\"containerPort\":80}],\"args\":[]}],\"nodeSelector\":{}},\"x\":[[1,2],\"\"]}");
	char *t = kube_yaml_emit(o);
	assert_string_equal(t, "apiVersion: v1\n"
			       "kind: Pod\n"
			       "metadata:\n"
			       "  name: p\n"
			       "  labels:\n"
			       "    app: web\n"
			       "    tier: \"true\"\n"
			       "spec:\n"
			       "  containers:\n"
			       "  - name: c\n"
			       "    image: nginx:1.25\n"
			       "    ports:\n"
			       "    - containerPort: 80\n"
			       "    args: []\n"
			       "  nodeSelector: {}\n"
			       "x:\n"
			       "- - 1\n"
			       "  - 2\n"
			       "- \"\"\n");
	free(t);
	cJSON_Delete(o);
}

static void test_json_print(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"{\"a\": [1, 2.5, -3, true, false, null], \"b\": {}}", "{\"a\":[1,2.5,-3,true,false,null],\"b\":{}}"},
		{"{\"s\":\"q\\\"b\\\\n\\n\\t\\u0001\"}", "{\"s\":\"q\\\"b\\\\n\\n\\t\\u0001\"}"},
		{"[1e18, 1e21, 1e-7, 0.000001, 123456789012, 0.1, 100, -0]", "[1000000000000000000,1e+21,1e-07,0.000001,123456789012,0.1,100,0]"},
		{"[]", "[]"},
		{"\"\xc3\xa9\"", "\"\xc3\xa9\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = cJSON_Parse(cases[i].in);
		char *s = kube_json_print(j);
		if (strcmp(s, cases[i].out) != 0)
			fail_msg("%s: got %s want %s", cases[i].in, s, cases[i].out);
		free(s);
		cJSON_Delete(j);
	}
	/* int64 helpers; stale raw text is ignored after cJSON_SetNumberValue */
	cJSON *n = kube_json_create_int64(INT64_MIN);
	int64_t v;
	assert_int_equal(kube_json_get_int64(n, &v), 0);
	assert_true(v == INT64_MIN);
	char *s = kube_json_print(n);
	assert_string_equal(s, "-9223372036854775808");
	free(s);
	cJSON_SetNumberValue(n, 7);
	s = kube_json_print(n);
	assert_string_equal(s, "7");
	free(s);
	assert_int_equal(kube_json_get_int64(n, &v), 0);
	assert_int_equal(v, 7);
	cJSON_Delete(n);
	cJSON *f = cJSON_CreateNumber(1.5);
	assert_int_equal(kube_json_get_int64(f, &v), -1);
	cJSON_Delete(f);
	cJSON *d = yaml("num: 9223372036854775806");
	assert_int_equal(kube_json_get_int64(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "num"), &v), 0);
	assert_true(v == 9223372036854775806LL);
	cJSON *dup = cJSON_Duplicate(d, true);
	s = kube_json_print(dup);
	assert_string_equal(s, "[{\"num\":9223372036854775806}]");
	free(s);
	cJSON_Delete(dup);
	cJSON_Delete(d);
}

static void test_json_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out; /* out NULL: error, and then err is the expected message prefix */
		const char *err;
	} cases[] = {
		{"{}", "{}", NULL},
		{" [ ] ", "[]", NULL},
		{"\xef\xbb\xbf{\"a\":1}", "{\"a\":1}", NULL},
		{"{\"a\":[1,-2,3.5,1e2,-0.5e-3,true,false,null,\"s\"]}", "{\"a\":[1,-2,3.5,100,-0.0005,true,false,null,\"s\"]}", NULL},
		{"9223372036854775807", "9223372036854775807", NULL},
		{"-9223372036854775808", "-9223372036854775808", NULL},
		{"18446744073709551615", "18446744073709551615", NULL},
		{"123456789012345678901234567890", "123456789012345678901234567890", NULL},
		{"\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\xc3\xa9\xf0\x9f\x98\x80/\\b\\f\\n\\r\\t\\\"\\\\\"", NULL},
		{"\"\\ud800x\"", "\"\xef\xbf\xbdx\"", NULL},
		{"{\"a\":1,\"b\":2,\"a\":3}", "{\"a\":3,\"b\":2}", NULL},
		{"", NULL, "line 1 column 1: unexpected end of JSON input"},
		{"{", NULL, "line 1 column 2: unexpected end of JSON input"},
		{"{\"a\" 1}", NULL, "line 1 column 6: invalid character '1' after object key"},
		{"[1,]", NULL, "line 1 column 4: invalid character ']' looking for beginning of value"},
		{"[1 2]", NULL, "line 1 column 4: invalid character '2' after array element"},
		{"{\"a\":1,}", NULL, "line 1 column 8: invalid character '}' looking for beginning of object key string"},
		{"{\n  \"a\": tru\n}", NULL, "line 2 column 11: invalid character '\\n' in literal"},
		{"01", NULL, "line 1 column 2: invalid character '1' after top-level value"},
		{"1.", NULL, "line 1 column 3: unexpected end of JSON input"},
		{"-", NULL, "line 1 column 2: unexpected end of JSON input"},
		{"1e", NULL, "line 1 column 3: unexpected end of JSON input"},
		{"\"a\nb\"", NULL, "line 1 column 3: invalid character '\\n' in string literal"},
		{"\"abc", NULL, "line 1 column 5: unexpected end of JSON input"},
		{"\"\\x\"", NULL, "line 1 column 3: invalid character 'x' in string escape code"},
		{"\"\\u12\"", NULL, "line 1 column 4: invalid character in \\u hexadecimal character escape"},
		{"{\"a\":1} x", NULL, "line 1 column 9: invalid character 'x' after top-level value"},
		{"1e999", NULL, "line 1 column 1: number 1e999 out of range"},
		{"{a: 1}", NULL, "line 1 column 2: invalid character 'a' looking for beginning of object key string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		cJSON *v = kube_json_parse(cases[i].in, strlen(cases[i].in), &err);
		if (cases[i].out) {
			if (!v)
				fail_msg("%s: %s", cases[i].in, err);
			char *got = kube_json_print(v);
			if (strcmp(got, cases[i].out) != 0)
				fail_msg("%s: got %s want %s", cases[i].in, got, cases[i].out);
			free(got);
			cJSON_Delete(v);
		} else {
			if (v)
				fail_msg("%s: parsed unexpectedly", cases[i].in);
			if (!err || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
				fail_msg("%s:\n got %s\nwant %s", cases[i].in, err, cases[i].err);
			free(err);
		}
	}
	/* depth limit */
	size_t n = 20000;
	char *deep = malloc(2 * n + 1);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	char *err = NULL;
	assert_null(kube_json_parse(deep, 2 * n, &err));
	assert_non_null(strstr(err, "exceeded max depth"));
	free(err);
	free(deep);
	/* the YAML entry point takes JSON through the same parser, and YAML flow style still works */
	char *s = yaml_to_json("  {\"n\": 12345678901234567890}");
	assert_string_equal(s, "[{\"n\":12345678901234567890}]");
	free(s);
	s = yaml_to_json("{a: yes, b: [1, 0x10]}");
	assert_string_equal(s, "[{\"a\":true,\"b\":[1,16]}]");
	free(s);
	/* JSON and YAML paths agree on a realistic object */
	const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
			  "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
			  "\"priority\":2000000000,\"ratio\":0.25}}";
	cJSON *a = kube_json_parse(pod, strlen(pod), NULL);
	cJSON *b = cJSON_Parse(pod);
	assert_true(cJSON_Compare(a, b, true));
	char *ya = kube_yaml_emit(a);
	cJSON *c = yaml(ya);
	assert_true(cJSON_Compare(cJSON_GetArrayItem(c, 0), b, true));
	free(ya);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

static void test_paths_and_meta(void **state)
{
	(void)state;
	cJSON *pod = cJSON_Parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\","
				 "\"labels\":{\"app\":\"web\"},\"annotations\":{\"a\":\"b\"}},\"spec\":{\"nodeName\":\"n1\","
				 "\"priority\":5}}");
	assert_string_equal(kube_obj_get_string(pod, "metadata.name"), "p");
	assert_string_equal(kube_obj_get_string(pod, "spec.nodeName"), "n1");
	assert_null(kube_obj_get_string(pod, "spec.priority"));
	assert_non_null(kube_obj_get(pod, "spec.priority"));
	assert_null(kube_obj_get(pod, "spec.nodeName.x"));
	assert_null(kube_obj_get(pod, "status.phase"));
	assert_null(kube_obj_get(NULL, "a"));
	assert_string_equal(kube_meta_name(pod), "p");
	assert_string_equal(kube_meta_namespace(pod), "ns");
	assert_string_equal(kube_meta_uid(pod), "u1");
	assert_string_equal(kube_meta_resource_version(pod), "7");
	assert_string_equal(kube_meta_label(pod, "app"), "web");
	assert_null(kube_meta_label(pod, "nope"));
	assert_string_equal(kube_meta_annotation(pod, "a"), "b");
	assert_non_null(kube_meta_labels(pod));
	assert_non_null(kube_meta_annotations(pod));

	assert_int_equal(kube_obj_set_string(pod, "status.phase", "Running"), 0);
	assert_string_equal(kube_obj_get_string(pod, "status.phase"), "Running");
	assert_int_equal(kube_obj_set_string(pod, "spec.nodeName", "n2"), 0);
	assert_string_equal(kube_obj_get_string(pod, "spec.nodeName"), "n2");
	/* a non-object in the way is replaced */
	assert_int_equal(kube_obj_set_string(pod, "spec.priority.x", "y"), 0);
	assert_string_equal(kube_obj_get_string(pod, "spec.priority.x"), "y");
	assert_int_equal(kube_obj_set_string(pod, "", "y"), -1);
	assert_int_equal(kube_obj_set_string(pod, "a..b", "y"), -1);
	cJSON *arr = cJSON_CreateArray();
	assert_int_equal(kube_obj_set_string(arr, "a", "b"), -1);
	cJSON_Delete(arr);
	cJSON_Delete(pod);
	cJSON *empty = cJSON_CreateObject();
	assert_null(kube_meta_name(empty));
	assert_null(kube_meta_labels(empty));
	cJSON_Delete(empty);
}

static void test_owner_refs(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject();
	assert_false(kube_owner_ref_has(o, "u1"));
	assert_null(kube_owner_ref_controller(o));
	assert_int_equal(kube_owner_ref_set(o, "apps/v1", "ReplicaSet", "rs", "u1", false), 0);
	assert_int_equal(kube_owner_ref_set(o, "schedkit.io/v1alpha1", "SchedulerProfile", "sp", "u2", true), 0);
	assert_true(kube_owner_ref_has(o, "u1"));
	const cJSON *c = kube_owner_ref_controller(o);
	assert_non_null(c);
	assert_string_equal(cJSON_GetObjectItem(c, "name")->valuestring, "sp");
	char *s = kube_json_print(o);
	assert_string_equal(s, "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
			       "\"name\":\"rs\",\"uid\":\"u1\"},{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":"
			       "\"SchedulerProfile\",\"name\":\"sp\",\"uid\":\"u2\",\"controller\":true,"
			       "\"blockOwnerDeletion\":true}]}}");
	free(s);
	/* same uid replaces in place */
	assert_int_equal(kube_owner_ref_set(o, "apps/v1", "ReplicaSet", "rs2", "u1", true), 0);
	const cJSON *refs = kube_obj_get(o, "metadata.ownerReferences");
	assert_int_equal(cJSON_GetArraySize(refs), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(refs, 0), "name")->valuestring, "rs2");
	assert_int_equal(kube_owner_ref_set(o, NULL, "k", "n", "u", false), -1);
	cJSON_Delete(o);
}

static void test_conditions(void **state)
{
	(void)state;
	cJSON *status = cJSON_CreateObject();
	assert_true(kube_condition_set(status, "Accepted", "True", "Valid", "ok", 3, "2026-01-01T00:00:00Z"));
	const cJSON *conds = cJSON_GetObjectItem(status, "conditions");
	const cJSON *c = kube_condition_find(conds, "Accepted");
	assert_non_null(c);
	char *s = kube_json_print(c);
	assert_string_equal(s, "{\"type\":\"Accepted\",\"status\":\"True\",\"observedGeneration\":3,"
			       "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"reason\":\"Valid\",\"message\":\"ok\"}");
	free(s);
	/* same values: no change, time untouched */
	assert_false(kube_condition_set(status, "Accepted", "True", "Valid", "ok", 3, "2026-01-02T00:00:00Z"));
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring, "2026-01-01T00:00:00Z");
	/* message change: changed, but the transition time stays */
	assert_true(kube_condition_set(status, "Accepted", "True", "Valid", "still ok", 3, "2026-01-03T00:00:00Z"));
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring, "2026-01-01T00:00:00Z");
	/* generation change */
	assert_true(kube_condition_set(status, "Accepted", "True", "Valid", "still ok", 4, "2026-01-03T00:00:00Z"));
	assert_int_equal(cJSON_GetObjectItem(c, "observedGeneration")->valuedouble, 4);
	/* status change moves the transition time */
	assert_true(kube_condition_set(status, "Accepted", "False", "Invalid", "bad", 4, "2026-01-04T00:00:00Z"));
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring, "2026-01-04T00:00:00Z");
	/* a second type, observedGeneration omitted */
	assert_true(kube_condition_set(status, "Ready", "True", NULL, NULL, -1, "2026-01-05T00:00:00Z"));
	const cJSON *r = kube_condition_find(conds, "Ready");
	assert_null(cJSON_GetObjectItem(r, "observedGeneration"));
	assert_null(cJSON_GetObjectItem(r, "reason"));
	assert_int_equal(cJSON_GetArraySize(conds), 2);
	assert_null(kube_condition_find(conds, "Nope"));
	assert_null(kube_condition_find(NULL, "Ready"));
	cJSON_Delete(status);
}

static void test_time(void **state)
{
	(void)state;
	char buf[32];
	kube_time_rfc3339(buf, 0);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	kube_time_rfc3339(buf, 1764470622);
	assert_string_equal(buf, "2025-11-30T02:43:42Z");
	/* kube_json_string_array: copies, in order; n 0 gives [] */
	const char *const words[] = { "a", "b\"c" };
	cJSON *arr = kube_json_string_array(words, 2);
	char *txt = cJSON_PrintUnformatted(arr);
	assert_string_equal(txt, "[\"a\",\"b\\\"c\"]");
	free(txt);
	cJSON_Delete(arr);
	arr = kube_json_string_array(NULL, 0);
	assert_true(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 0);
	cJSON_Delete(arr);
	/* MicroTime: six digits always, rounding that carries into the next second. */
	static const struct {
		double t;
		const char *want;
	} micro[] = {
		{ 0, "1970-01-01T00:00:00.000000Z" },
		{ 1764470622.25, "2025-11-30T02:43:42.250000Z" },
		{ 1764470622.0000004, "2025-11-30T02:43:42.000000Z" },
		{ 1764470622.9999996, "2025-11-30T02:43:43.000000Z" },
	};
	for (size_t i = 0; i < sizeof(micro) / sizeof(micro[0]); i++) {
		char mb[40];
		kube_time_micro(mb, micro[i].t);
		assert_string_equal(mb, micro[i].want);
	}
	static const struct {
		const char *s;
		long long t;
		bool ok;
	} cases[] = {
		{"1970-01-01T00:00:00Z", 0, true},
		{"2025-11-30T02:43:42Z", 1764470622, true},
		{"2025-11-30T02:43:42.123456789Z", 1764470622, true},
		{"2025-11-30T03:43:42+01:00", 1764470622, true},
		{"2025-11-29T21:43:42.5-05:00", 1764470622, true},
		{"2025-11-30t02:43:42z", 1764470622, true},
		{"2025-11-30T02:43:42", 0, false},
		{"2025-11-30 02:43", 0, false},
		{"2025-13-30T02:43:42Z", 0, false},
		{"2025-11-30T02:43:42.Z", 0, false},
		{"2025-11-30T02:43:42Zjunk", 0, false},
		{"", 0, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		time_t t = 0;
		int rc = kube_time_parse_rfc3339(cases[i].s, &t);
		if ((rc == 0) != cases[i].ok || (rc == 0 && (long long)t != cases[i].t))
			fail_msg("%s: rc %d t %lld", cases[i].s, rc, (long long)t);
	}
}

static void test_read_file(void **state)
{
	(void)state;
	char path[] = "/tmp/sk-read-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char big[10000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(write(fd, big, sizeof big), (ssize_t)sizeof big);
	close(fd);
	size_t len = 0;
	int e = 0;
	char *got = kube_read_file(path, 0, &len, &e);
	assert_non_null(got);
	assert_int_equal(len, sizeof big);
	assert_memory_equal(got, big, sizeof big);
	assert_int_equal(got[len], '\0');
	free(got);
	assert_null(kube_read_file(path, 4096, &len, &e));
	assert_int_equal(e, EFBIG);
	got = kube_read_file(path, sizeof big * 4, &len, &e);
	assert_non_null(got);
	free(got);
	unlink(path);
	assert_null(kube_read_file(path, 0, &len, &e));
	assert_int_equal(e, ENOENT);
}

/* kube_json_add: the value lands under its key; a NULL value (a failed allocation) is false and
 * adds nothing, so encoders can chain it with &&. */
static void test_json_add(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject();
	assert_true(kube_json_add(o, "a", cJSON_CreateNumber(1)));
	assert_true(kube_json_add(o, "b", cJSON_CreateString("x")));
	assert_false(kube_json_add(o, "c", NULL));
	char *text = cJSON_PrintUnformatted(o);
	assert_string_equal(text, "{\"a\":1,\"b\":\"x\"}");
	free(text);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_scalar_typing),	cmocka_unit_test(test_keys_and_structure),
		cmocka_unit_test(test_parse_errors),	cmocka_unit_test(test_yaml_round_trip),
		cmocka_unit_test(test_yaml_emit_format), cmocka_unit_test(test_json_print),
		cmocka_unit_test(test_json_parse),	cmocka_unit_test(test_yaml_round_trip_random),
		cmocka_unit_test(test_paths_and_meta),	cmocka_unit_test(test_owner_refs),
		cmocka_unit_test(test_conditions),	cmocka_unit_test(test_time),
		cmocka_unit_test(test_json_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
