/* Tests for kube/selector.c: tables ported (values only) from upstream
 * k8s.io/apimachinery/pkg/labels/selector_test.go and pkg/fields/selector_test.go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/selector.h"

/* labels given as "k=v,k2=v2" (no escaping needed in tests) */
static cJSON *labels(const char *spec)
{
	cJSON *o = cJSON_CreateObject();
	char *copy = strdup(spec), *save = NULL;
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		*eq = '\0';
		cJSON_AddStringToObject(o, kv, eq + 1);
	}
	free(copy);
	return o;
}

static bool sel_matches(const char *sel, const char *lbl)
{
	struct kube_label_selector *s;
	char *err = NULL;
	if (kube_label_selector_parse(sel, &s, &err) != 0)
		fail_msg("parse %s: %s", sel, err);
	cJSON *l = labels(lbl);
	bool m = kube_label_selector_matches_json(s, l);
	cJSON_Delete(l);
	kube_label_selector_free(s);
	return m;
}

static char *strip_spaces(const char *s)
{
	char *o = strdup(s), *w = o;
	for (; *s; s++)
		if (*s != ' ')
			*w++ = *s;
	*w = '\0';
	return o;
}

static void test_selector_parse(void **state)
{
	(void)state;
	static const char *good[] = {"x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"};
	static const char *bad[] = {"x=a||y=b", "x==a==b", "!x=a", "x<a"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct kube_label_selector *s;
		char *err = NULL;
		if (kube_label_selector_parse(good[i], &s, &err) != 0)
			fail_msg("%s: %s", good[i], err);
		char *str = kube_label_selector_string(s), *want = strip_spaces(good[i]);
		if (strcmp(str, want) != 0)
			fail_msg("%s: restring gave %s", good[i], str);
		free(str);
		free(want);
		kube_label_selector_free(s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_label_selector *s = NULL;
		char *err = NULL;
		if (kube_label_selector_parse(bad[i], &s, &err) == 0)
			fail_msg("%s: parsed unexpectedly", bad[i]);
		assert_null(s);
		assert_non_null(err);
		free(err);
	}
	/* deterministic */
	struct kube_label_selector *a, *b;
	assert_int_equal(kube_label_selector_parse("x=a,a=x", &a, NULL), 0);
	assert_int_equal(kube_label_selector_parse("a=x,x=a", &b, NULL), 0);
	char *sa = kube_label_selector_string(a), *sb = kube_label_selector_string(b);
	assert_string_equal(sa, sb);
	assert_string_equal(sa, "a=x,x=a");
	free(sa);
	free(sb);
	kube_label_selector_free(a);
	kube_label_selector_free(b);
}

static void test_selector_matches(void **state)
{
	(void)state;
	static const struct {
		const char *sel, *labels;
		bool match;
	} cases[] = {
		{"", "x=y", true},
		{"x=y", "x=y", true},
		{"x=y,z=w", "x=y,z=w", true},
		{"x!=y,z!=w", "x=z,z=a", true},
		{"notin=in", "notin=in", true},
		{"x", "x=z", true},
		{"!x", "y=z", true},
		{"x>1", "x=2", true},
		{"x<1", "x=0", true},
		{"x=z", "", false},
		{"x=y", "x=z", false},
		{"x=y,z=w", "x=w,z=w", false},
		{"x!=y,z!=w", "x=z,z=w", false},
		{"x", "y=z", false},
		{"!x", "x=z", false},
		{"x>1", "x=0", false},
		{"x<1", "x=2", false},
		{"foo=bar", "foo=bar,baz=blah", true},
		{"baz=blah", "foo=bar,baz=blah", true},
		{"foo=bar,baz=blah", "foo=bar,baz=blah", true},
		{"foo=blah", "foo=bar,baz=blah", false},
		{"baz=bar", "foo=bar,baz=blah", false},
		{"foo=bar,foobar=bar,baz=blah", "foo=bar,baz=blah", false},
		/* requirement matching table */
		{"x in (foo),y notin (alpha)", "x=foo,y=baz", true},
		{"x in (foo),y in (alpha)", "x=foo,y=baz", false},
		{"x notin (),y", "y=", true},
		{"!x,y", "y=", true},
		{"x notin (),!y", "y=", false},
		{"x in ()", "y=baz", false},
		{"z>1", "z=2", true},
		{"z>1", "z=v2", false},
		{"x!=a", "", true},
		{"x notin (a)", "", true},
		{"x==a", "x=a", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (sel_matches(cases[i].sel, cases[i].labels) != cases[i].match)
			fail_msg("%s vs {%s}: want %d", cases[i].sel, cases[i].labels, cases[i].match);
}

/* The same table with the selector canonicalized (kube_label_selector_canonicalize) against a pool
 * holding the labels' keys and values, as the scheduler interns node labels: the labels are looked
 * up by pointer among the pool's strings, the lookup must be handed the pool's key whenever the
 * pool has it, and every case must match as before. */
#define POOL_MAX 16
static char *pool[POOL_MAX];
static int npool;
static int foreign_keys; /* lookups handed a key the pool has, but not the pool's pointer */

static const char *pool_find(const char *s)
{
	for (int i = 0; i < npool; i++)
		if (!strcmp(pool[i], s))
			return pool[i];
	return NULL;
}

static const char *pool_add(const char *s)
{
	const char *p = pool_find(s);
	if (p)
		return p;
	assert_true(npool < POOL_MAX);
	return pool[npool++] = strdup(s);
}

struct pool_labels {
	int n;
	const char *k[8], *v[8];
};

static const char *pool_lookup(const void *ctx, const char *key)
{
	const struct pool_labels *l = ctx;
	const char *pk = pool_find(key);
	if (pk && pk != key)
		foreign_keys++;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->k[i], key))
			return l->v[i];
	return NULL;
}

static void test_selector_matches_canonical(void **state)
{
	(void)state;
	static const struct {
		const char *sel, *labels;
		bool match;
	} cases[] = {
		{"x=y", "x=y", true},
		{"x=y", "x=z", false},
		{"x in (a,b,c)", "x=b", true},
		{"x in (a,c)", "x=b", false},
		{"x notin (a,b)", "x=b", false},
		{"x notin (a,c)", "x=b", true},
		{"x!=y,z!=w", "x=z,z=a", true},
		{"x!=y,z!=w", "x=z,z=w", false},
		{"x", "x=z", true},
		{"!x", "x=z", false},
		{"x>1", "x=2", true},
		{"x<1", "x=2", false},
		{"foo=bar,baz=blah", "foo=bar,baz=blah", true},
		{"foo=bar,foobar=bar,baz=blah", "foo=bar,baz=blah", false},
		{"q in (v1,v2)", "x=v2", false}, /* the value is pooled, the key absent */
		{"x in (a,c)", "x=b,y=c", false}, /* c pooled, the node's b is not a canonical value */
		{"x notin (a,c)", "x=b,y=a", true},
		{"x in (b,c)", "x=b,y=c", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		npool = 0;
		foreign_keys = 0;
		struct pool_labels l = { 0 };
		char *copy = strdup(cases[i].labels), *save = NULL;
		for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			*eq = '\0';
			l.k[l.n] = pool_add(kv);
			l.v[l.n++] = pool_add(eq + 1);
		}
		free(copy);
		struct kube_label_selector *s;
		char *err = NULL;
		if (kube_label_selector_parse(cases[i].sel, &s, &err) != 0)
			fail_msg("parse %s: %s", cases[i].sel, err);
		bool before = kube_label_selector_matches(s, pool_lookup, &l);
		kube_label_selector_canonicalize(s, pool_find);
		kube_label_selector_canonicalize(s, pool_find); /* twice: no leak, same pointers */
		foreign_keys = 0;
		bool after = kube_label_selector_matches(s, pool_lookup, &l);
		if (before != cases[i].match || after != cases[i].match || foreign_keys != 0)
			fail_msg("%s vs {%s}: want %d, got %d before and %d after canonicalizing, %d lookups without the "
				 "pooled key",
				 cases[i].sel, cases[i].labels, cases[i].match, before, after, foreign_keys);
		kube_label_selector_free(s);
		for (int k = 0; k < npool; k++)
			free(pool[k]);
	}
}

static void test_set_selector_parser(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *out; /* canonical string, NULL when invalid */
	} cases[] = {
		{"", ""},
		{"\rx", "x"},
		{"this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"},
		{"this-is-another-dns.domain.com/key-with-dash in (so,what)",
		 "this-is-another-dns.domain.com/key-with-dash in (so,what)"},
		{"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"},
		{"foo  in\t (abc)", "foo in (abc)"},
		{"x notin\n (abc)", "x notin (abc)"},
		{"x  notin\t\t\t(abc,def)", "x notin (abc,def)"},
		{"x in (abc,def)", "x in (abc,def)"},
		{"x in (abc,)", "x in (,abc)"},
		{"x in ()", "x in ()"},
		{"x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"},
		{"x,y in (a)", "x,y in (a)"},
		{"x=a", "x=a"},
		{"x>1", "x>1"},
		{"x<7", "x<7"},
		{"x=a,y!=b", "x=a,y!=b"},
		{"x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"},
		{"x=a||y=b", NULL},
		{"x,,y", NULL},
		{",x,y", NULL},
		{"x nott in (y)", NULL},
		{"x notin ( )", "x notin ()"},
		{"x notin (, a)", "x notin (,a)"},
		{"a in (xyz),", NULL},
		{"a in (xyz)b notin ()", NULL},
		{"a ", "a"},
		{"a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"},
		{"a in (xyz abc)", NULL},
		{"a notin(", NULL},
		{"a (", NULL},
		{"(", NULL},
		/* validation of keys and values */
		{"x=a b", NULL},
		{"-x=a", NULL},
		{"x=-a", NULL},
		{"example.com/x=a", "example.com/x=a"},
		{"Example.com/x=a", NULL},
		{"x=0123456789012345678901234567890123456789012345678901234567890123", NULL},
		{"x=012345678901234567890123456789012345678901234567890123456789012",
		 "x=012345678901234567890123456789012345678901234567890123456789012"},
		{"x>1.5", NULL},
		{"x in (a,b", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_label_selector *s = NULL;
		char *err = NULL;
		int rc = kube_label_selector_parse(cases[i].in, &s, &err);
		if (!cases[i].out) {
			if (rc == 0)
				fail_msg("%s: parsed unexpectedly", cases[i].in);
			free(err);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: %s", cases[i].in, err);
		char *str = kube_label_selector_string(s);
		if (strcmp(str, cases[i].out) != 0)
			fail_msg("%s: got %s want %s", cases[i].in, str, cases[i].out);
		free(str);
		kube_label_selector_free(s);
	}
}

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *in, *err;
	} cases[] = {
		{"x=a||y=b", "unable to parse requirement: values[0]: Invalid value: \"a||y\": a valid label"},
		{"!x=a", "found '=', expected: ',' or 'end of string'"},
		{"x,,y", "found ',', expected: identifier after ','"},
		{",x", "found ',', expected: !, identifier, or 'end of string'"},
		{"x nott in (y)", "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"},
		{"a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"},
		{"x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"},
		{"a b=c", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		{"x/y/z", "unable to parse requirement: key: Invalid value: \"x/y/z\": a qualified name must consist of"},
		{"x=a b", "found 'b', expected: ',' or 'end of string'"},
		{"x=a_", "unable to parse requirement: values[0]: Invalid value: \"a_\": a valid label must be an empty string or consist of alphanumeric characters"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_label_selector *s = NULL;
		char *err = NULL;
		assert_int_equal(kube_label_selector_parse(cases[i].in, &s, &err), -1);
		if (!err || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("%s: got error %s, want %s", cases[i].in, err, cases[i].err);
		free(err);
	}
}

static void test_requirement_constructor(void **state)
{
	(void)state;
	char key254[255];
	memset(key254, 'a', 254);
	key254[254] = '\0';
	static const char *foo[] = {"foo"}, *bar[] = {"bar"}, *one[] = {"1"}, *six[] = {"6"}, *blah[] = {"blah"};
	const struct {
		const char *key;
		enum kube_selector_op op;
		const char *const *vals;
		size_t n;
		bool ok;
	} cases[] = {
		{"x", KUBE_SEL_IN, NULL, 0, false},
		{"x", KUBE_SEL_NOT_IN, NULL, 0, false},
		{"x", KUBE_SEL_IN, foo, 1, true},
		{"x", KUBE_SEL_NOT_IN, foo, 1, true},
		{"x", KUBE_SEL_EXISTS, NULL, 0, true},
		{"x", KUBE_SEL_DOES_NOT_EXIST, NULL, 0, true},
		{"1foo", KUBE_SEL_IN, bar, 1, true},
		{"1234", KUBE_SEL_IN, bar, 1, true},
		{"y", KUBE_SEL_GT, one, 1, true},
		{"z", KUBE_SEL_LT, six, 1, true},
		{"foo", KUBE_SEL_GT, bar, 1, false},
		{"barz", KUBE_SEL_LT, blah, 1, false},
		{key254, KUBE_SEL_EXISTS, NULL, 0, false},
		{"x", KUBE_SEL_EXISTS, foo, 1, false},
		{"x", KUBE_SEL_EQUALS, NULL, 0, false},
	};
	struct kube_label_selector *empty;
	assert_int_equal(kube_label_selector_parse("", &empty, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_label_selector *s = NULL;
		char *err = NULL;
		int rc = kube_label_selector_add(empty, cases[i].key, cases[i].op, cases[i].vals, cases[i].n, &s, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu: rc %d err %s", i, rc, err ? err : "");
		free(err);
		kube_label_selector_free(s);
	}
	kube_label_selector_free(empty);
}

static void test_add_and_string(void **state)
{
	(void)state;
	struct kube_label_selector *s0, *s1, *s2;
	assert_int_equal(kube_label_selector_parse("", &s0, NULL), 0);
	static const char *v[] = {"value"}, *v2[] = {"value2"};
	assert_int_equal(kube_label_selector_add(s0, "key", KUBE_SEL_IN, v, 1, &s1, NULL), 0);
	assert_int_equal(kube_label_selector_add(s1, "key2", KUBE_SEL_EQUALS, v2, 1, &s2, NULL), 0);
	char *str = kube_label_selector_string(s2);
	assert_string_equal(str, "key in (value),key2=value2");
	free(str);
	assert_true(kube_label_selector_is_empty(s0));
	assert_false(kube_label_selector_is_empty(s1));
	kube_label_selector_free(s0);
	kube_label_selector_free(s1);
	kube_label_selector_free(s2);
	/* ToString table */
	static const struct {
		const char *in, *out;
	} ts[] = {
		{"x in (abc,def),y notin (jkl),z", "x in (abc,def),y notin (jkl),z"},
		{"x notin (abc,def),y!=jkl,!z", "x notin (abc,def),y!=jkl,!z"},
		{"x notin (abc),y in (jkl,mno),z notin ()", "x notin (abc),y in (jkl,mno),z notin ()"},
		{"x=abc,y==jkl,z!=a,z", "x=abc,y==jkl,z!=a,z"},
		{"x>2,y<8,z", "x>2,y<8,z"},
	};
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		struct kube_label_selector *s;
		assert_int_equal(kube_label_selector_parse(ts[i].in, &s, NULL), 0);
		char *o = kube_label_selector_string(s);
		assert_string_equal(o, ts[i].out);
		free(o);
		kube_label_selector_free(s);
	}
}

static void test_from_json(void **state)
{
	(void)state;
	static const struct {
		const char *json; /* NULL = nil selector */
		const char *labels;
		bool ok, match;
		const char *err;
	} cases[] = {
		{NULL, "a=b", true, false, NULL},
		{"{}", "a=b", true, true, NULL},
		{"{}", "", true, true, NULL},
		{"{\"matchLabels\":{\"a\":\"b\"}}", "a=b", true, true, NULL},
		{"{\"matchLabels\":{\"a\":\"b\"}}", "a=c", true, false, NULL},
		{"{\"matchLabels\":{\"a\":\"b\"}}", "", true, false, NULL},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]}]}", "a=y", true, true, NULL},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"x\"]}]}", "", true, true, NULL},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}", "a=", true, true, NULL},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"DoesNotExist\"}]}", "a=1", true, false, NULL},
		{"{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"c\",\"operator\":\"Exists\"}]}", "a=b,c=d",
		 true, true, NULL},
		{"{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"c\",\"operator\":\"Exists\"}]}", "a=b", true,
		 false, NULL},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}", "", false, false,
		 "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[]}]}", "", false, false,
		 "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}", "", false, false,
		 "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"},
		{"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}", "", false, false,
		 "\"Gt\" is not a valid label selector operator"},
		{"{\"matchLabels\":{\"a b\":\"c\"}}", "", false, false, "key: Invalid value: \"a b\": name part must consist"},
		{"{\"matchLabels\":{\"a\":\"b c\"}}", "", false, false, "values[0]: Invalid value: \"b c\": a valid label"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = cases[i].json ? cJSON_Parse(cases[i].json) : NULL;
		struct kube_label_selector *s = NULL;
		char *err = NULL;
		int rc = kube_label_selector_from_json(j, &s, &err);
		if ((rc == 0) != cases[i].ok)
			fail_msg("%s: rc %d err %s", cases[i].json, rc, err ? err : "");
		if (rc == 0) {
			cJSON *l = labels(cases[i].labels);
			if (kube_label_selector_matches_json(s, l) != cases[i].match)
				fail_msg("%s vs {%s}: want %d", cases[i].json, cases[i].labels, cases[i].match);
			cJSON_Delete(l);
		} else if (!err || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0) {
			fail_msg("%s: error %s, want %s", cases[i].json, err, cases[i].err);
		}
		free(err);
		kube_label_selector_free(s);
		cJSON_Delete(j);
	}
	struct kube_label_selector *nothing;
	assert_int_equal(kube_label_selector_from_json(NULL, &nothing, NULL), 0);
	assert_true(kube_label_selector_is_nothing(nothing));
	assert_false(kube_label_selector_is_empty(nothing));
	assert_false(kube_label_selector_matches_json(nothing, NULL));
	kube_label_selector_free(nothing);
}

static void test_from_map(void **state)
{
	(void)state;
	cJSON *m = labels("foo=bar,baz=blah"), *l = labels("foo=bar,baz=blah,x=y");
	struct kube_label_selector *s;
	assert_int_equal(kube_label_selector_from_map(m, &s, NULL), 0);
	assert_true(kube_label_selector_matches_json(s, l));
	char *str = kube_label_selector_string(s);
	assert_string_equal(str, "baz=blah,foo=bar");
	free(str);
	kube_label_selector_free(s);
	assert_int_equal(kube_label_selector_from_map(NULL, &s, NULL), 0);
	assert_true(kube_label_selector_is_empty(s));
	assert_true(kube_label_selector_matches_json(s, NULL));
	kube_label_selector_free(s);
	cJSON_Delete(m);
	cJSON_Delete(l);
}

static void test_validation(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool ok;
	} names[] = {
		{"simple", true},	{"now-with-dashes", true}, {"1-starts-with-num", true}, {"1234", true},
		{"simple/simple", true}, {"now-with-dashes/simple", true}, {"now-with-dashes/now-with-dashes", true},
		{"now.with.dots/simple", true}, {"now-with.dashes-and.dots/simple", true},
		{"1-num.2-num/3-num", true}, {"1234/5678", true}, {"1.2.3.4/5678", true}, {"Uppercase_Is_OK_123", true},
		{"example.com/Uppercase_Is_OK_123", true}, {"requests.storage-foo", true},
		{"", false}, {"/simple", false}, {"Uppercase/simple", false}, {"-starts-with-dash", false},
		{"ends-with-dash-", false}, {".starts.with.dot", false}, {"ends.with.dot.", false},
		{"real/name/with/slashes", false}, {"a b", false}, {"example.com/", false},
		{"0123456789012345678901234567890123456789012345678901234567890123", false},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *err = NULL;
		int rc = kube_validate_qualified_name(names[i].s, &err);
		if ((rc == 0) != names[i].ok)
			fail_msg("qualified name %s: rc %d (%s)", names[i].s, rc, err ? err : "");
		if (rc != 0)
			assert_non_null(err);
		free(err);
	}
	static const struct {
		const char *s;
		bool ok;
	} values[] = {
		{"", true}, {"simple", true}, {"now-with-dashes", true}, {"1-starts-with-num", true}, {"end-with-num-1", true},
		{"1234", true}, {"Uppercase_Is_OK_123", true}, {"nospecialchars%^=@", false}, {"Tama-nui-te-rā.is.Māori.sun", false},
		{"\\backslashes\\are\\bad", false}, {"-starts-with-dash", false}, {"ends-with-dash-", false},
		{".starts.with.dot", false}, {"ends.with.dot.", false},
		{"0123456789012345678901234567890123456789012345678901234567890123", false},
	};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char *err = NULL;
		int rc = kube_validate_label_value(values[i].s, &err);
		if ((rc == 0) != values[i].ok)
			fail_msg("label value %s: rc %d", values[i].s, rc);
		free(err);
	}
	char *err = NULL;
	assert_int_equal(kube_validate_qualified_name("0123456789012345678901234567890123456789012345678901234567890123", &err), -1);
	assert_string_equal(err, "name part must be no more than 63 characters");
	free(err);
}

/* ---- field selectors ---- */

static const char *field_get(const void *ctx, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive((const cJSON *)ctx, field);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_field_selector_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} good[] = {
		{"", ""},
		{"x=a", "x=a"},
		{"x=a,y=b,z=c", "x=a,y=b,z=c"},
		{"x!=a,y=b", "x!=a,y=b"},
		{"x==a", "x=a"},
		{"x=", "x="},
		{"z=c,x=a", "x=a,z=c"},
		{"x=a\\,b", "x=a\\,b"},
		{"x=a\\=b", "x=a\\=b"},
		{"x=a\\\\b", "x=a\\\\b"},
		{"x=a,,y=b", "x=a,y=b"},
		{"metadata.name=foo", "metadata.name=foo"},
		{"status.phase!=Succeeded,status.phase!=Failed", "status.phase!=Failed,status.phase!=Succeeded"},
		/* upstream TestSelectorParse good strings restring unchanged */
		{"x=a||y\\=b", "x=a||y\\=b"},
		{"x=a\\=\\=b", "x=a\\=\\=b"},
		{"k=\\,,k2=v2", "k2=v2,k=\\,"},
		{"k=\\\\,k2=v2", "k2=v2,k=\\\\"},
		{"\xed\x95\xa8=\xec\x88\x98,\xeb\xaa\xa9=\xeb\xa1\x9d", "\xeb\xaa\xa9=\xeb\xa1\x9d,\xed\x95\xa8=\xec\x88\x98"},
		{",a=a", "a=a"},
		{"a=a,", "a=a"},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct kube_field_selector *s;
		char *err = NULL;
		if (kube_field_selector_parse(good[i].in, &s, &err) != 0)
			fail_msg("%s: %s", good[i].in, err);
		char *str = kube_field_selector_string(s);
		if (strcmp(str, good[i].out) != 0)
			fail_msg("%s: got %s want %s", good[i].in, str, good[i].out);
		free(str);
		kube_field_selector_free(s);
	}
	static const struct {
		const char *in, *err;
	} bad[] = {
		{"x", "invalid selector: 'x'; can't understand 'x'"},
		{"x=a,y", "invalid selector: 'x=a,y'; can't understand 'y'"},
		{"x=a=b", "invalid field selector: unescaped character in value: 61"},
		{"x=a\\b", "invalid field selector: invalid escape sequence: \\b"},
		{"x=a\\", "invalid field selector: invalid escape sequence: \\"},
		{"x=\\\\\\", "invalid field selector: invalid escape sequence: \\"},
		{"x=\\a", "invalid field selector: invalid escape sequence: \\a"},
		{"x=a||y=b", "invalid field selector: unescaped character in value: 61"},
		{"x==a==b", "invalid field selector: unescaped character in value: 61"},
		{"x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"},
		{"x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"},
		{"x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_field_selector *s = NULL;
		char *err = NULL;
		assert_int_equal(kube_field_selector_parse(bad[i].in, &s, &err), -1);
		assert_null(s);
		if (!err || strcmp(err, bad[i].err) != 0)
			fail_msg("%s: got %s want %s", bad[i].in, err, bad[i].err);
		free(err);
	}
}

static void test_field_selector_matches(void **state)
{
	(void)state;
	static const struct {
		const char *sel, *fields;
		bool match;
	} cases[] = {
		{"", "x=y", true},
		{"x=y", "x=y", true},
		{"x=y,z=w", "x=y,z=w", true},
		{"x!=y,z!=w", "x=z,z=a", true},
		{"x=y", "x=z", false},
		{"x=y,z=w", "x=w,z=w", false},
		{"x!=y,z!=w", "x=z,z=w", false},
		{"x=", "", true},
		{"x!=", "", false},
		{"x!=a", "", true},
		{"spec.nodeName=", "spec.nodeName=", true},
		{"status.phase!=Succeeded,status.phase!=Failed", "status.phase=Running", true},
		{"status.phase!=Succeeded,status.phase!=Failed", "status.phase=Failed", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_field_selector *s;
		assert_int_equal(kube_field_selector_parse(cases[i].sel, &s, NULL), 0);
		cJSON *f = labels(cases[i].fields);
		if (kube_field_selector_matches(s, field_get, f) != cases[i].match)
			fail_msg("%s vs {%s}: want %d", cases[i].sel, cases[i].fields, cases[i].match);
		cJSON_Delete(f);
		kube_field_selector_free(s);
	}
	/* upstream's complex value: =value\,\ */
	struct kube_field_selector *cx;
	assert_int_equal(kube_field_selector_parse("foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\", &cx, NULL), 0);
	cJSON *fs = labels("foo=bar,baz=blah");
	cJSON_AddStringToObject(fs, "complex", "=value\\,\\");
	assert_true(kube_field_selector_matches(cx, field_get, fs));
	char *cs = kube_field_selector_string(cx);
	assert_string_equal(cs, "baz=blah,complex=\\=value\\\\\\,\\\\,foo=bar");
	free(cs);
	cJSON_Delete(fs);
	kube_field_selector_free(cx);
	/* escaped comma in a value matches the literal comma */
	struct kube_field_selector *s;
	assert_int_equal(kube_field_selector_parse("x=a\\,b", &s, NULL), 0);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "x", "a,b");
	assert_true(kube_field_selector_matches(s, field_get, f));
	cJSON_Delete(f);
	kube_field_selector_free(s);
}

static int collect(void *u, const char *field)
{
	char *buf = u;
	strcat(buf, field);
	strcat(buf, ";");
	return strcmp(field, "stop") == 0 ? 7 : 0;
}

static void test_field_selector_helpers(void **state)
{
	(void)state;
	struct kube_field_selector *s;
	assert_int_equal(kube_field_selector_parse("spec.nodeName=n1,metadata.name!=x", &s, NULL), 0);
	char buf[128] = "";
	assert_int_equal(kube_field_selector_each_field(s, collect, buf), 0);
	assert_string_equal(buf, "metadata.name;spec.nodeName;");
	assert_string_equal(kube_field_selector_requires_exact(s, "spec.nodeName"), "n1");
	assert_null(kube_field_selector_requires_exact(s, "metadata.name"));
	assert_false(kube_field_selector_is_empty(s));
	kube_field_selector_free(s);
	assert_int_equal(kube_field_selector_parse("a=1,stop=2,z=3", &s, NULL), 0);
	buf[0] = '\0';
	assert_int_equal(kube_field_selector_each_field(s, collect, buf), 7);
	assert_string_equal(buf, "a;stop;");
	kube_field_selector_free(s);
	assert_int_equal(kube_field_selector_parse("", &s, NULL), 0);
	assert_true(kube_field_selector_is_empty(s));
	kube_field_selector_free(s);
	kube_field_selector_free(NULL);
	kube_label_selector_free(NULL);
}

/* kube_label_selector_equal: same requirements (keys, operators, values), same "nothing". */
static void test_selector_equal(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		bool equal;
	} cases[] = {
		{ "a=x", "a=x", true },
		{ "x=a,a=x", "a=x,x=a", true },          /* compiled in key order */
		{ "a in (y,x)", "a in (x,y)", true },    /* set values sorted */
		{ "", "", true },
		{ "a=x", "a=y", false },
		{ "a=x", "b=x", false },
		{ "a=x", "a==x", false },                /* another operator: no claim of equivalence */
		{ "a=x", "a!=x", false },
		{ "a in (x)", "a in (x,y)", false },
		{ "a", "!a", false },
		{ "a=x", "a=x,b", false },
		{ "", "a", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_label_selector *a, *b;
		assert_int_equal(kube_label_selector_parse(cases[i].a, &a, NULL), 0);
		assert_int_equal(kube_label_selector_parse(cases[i].b, &b, NULL), 0);
		if (kube_label_selector_equal(a, b) != cases[i].equal || kube_label_selector_equal(b, a) != cases[i].equal) {
			print_error("\"%s\" vs \"%s\": want %d\n", cases[i].a, cases[i].b, cases[i].equal);
			fail();
		}
		assert_true(kube_label_selector_equal(a, a));
		kube_label_selector_free(a);
		kube_label_selector_free(b);
	}
	struct kube_label_selector *nothing, *empty;
	assert_int_equal(kube_label_selector_from_json(NULL, &nothing, NULL), 0);
	assert_int_equal(kube_label_selector_parse("", &empty, NULL), 0);
	assert_false(kube_label_selector_equal(nothing, empty)); /* matches nothing vs everything */
	assert_false(kube_label_selector_equal(NULL, empty));
	assert_true(kube_label_selector_equal(NULL, NULL));
	kube_label_selector_free(nothing);
	kube_label_selector_free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector_equal),
		cmocka_unit_test(test_selector_parse),	  cmocka_unit_test(test_selector_matches),
		cmocka_unit_test(test_selector_matches_canonical),
		cmocka_unit_test(test_set_selector_parser), cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_requirement_constructor), cmocka_unit_test(test_add_and_string),
		cmocka_unit_test(test_from_json),	  cmocka_unit_test(test_from_map),
		cmocka_unit_test(test_validation),	  cmocka_unit_test(test_field_selector_parse),
		cmocka_unit_test(test_field_selector_matches), cmocka_unit_test(test_field_selector_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
