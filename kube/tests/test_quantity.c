/* Tests for kube/quantity.c: tables ported (values only) from upstream
 * k8s.io/apimachinery/pkg/api/resource quantity_test.go, plus the scheduler's uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/quantity.h"

#define DSI KUBE_QUANTITY_DECIMAL_SI
#define BSI KUBE_QUANTITY_BINARY_SI
#define DEX KUBE_QUANTITY_DECIMAL_EXPONENT

static struct kube_quantity dq(int64_t m, int32_t e, enum kube_quantity_format f)
{
	return kube_quantity_from_scaled(m, e, f);
}

static struct kube_quantity must_parse(const char *s)
{
	struct kube_quantity q;
	char *err = NULL;
	if (kube_quantity_parse(s, &q, &err) != 0)
		fail_msg("parse %s: %s", s, err ? err : "?");
	return q;
}

static const char *str(const struct kube_quantity *q)
{
	static char buf[8][64];
	static int i;
	i = (i + 1) % 8;
	return kube_quantity_format(q, buf[i]);
}

static const struct parse_case {
	const char *in;
	int64_t m;
	int32_t e;
	enum kube_quantity_format f;
} parse_cases[] = {
	{"0", 0, 0, DSI}, {"0n", 0, 0, DSI}, {"0u", 0, 0, DSI}, {"0m", 0, 0, DSI}, {"0Ki", 0, 0, BSI},
	{"0k", 0, 0, DSI}, {"0Mi", 0, 0, BSI}, {"0M", 0, 0, DSI}, {"0Gi", 0, 0, BSI}, {"0G", 0, 0, DSI},
	{"0Ti", 0, 0, BSI}, {"0T", 0, 0, DSI},
	{"1", 1, 0, DSI},
	{"1Ki", 1024, 0, BSI}, {"8Ki", 8 * 1024, 0, BSI}, {"7Mi", 7LL * 1024 * 1024, 0, BSI},
	{"6Gi", 6LL * 1024 * 1024 * 1024, 0, BSI}, {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
	{"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
	{"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
	{"10Ti", 10LL * 1024 * 1024 * 1024 * 1024, 0, BSI}, {"100Ti", 100LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
	{"5n", 5, -9, DSI}, {"4u", 4, -6, DSI}, {"3m", 3, -3, DSI}, {"9", 9, 0, DSI}, {"8k", 8, 3, DSI},
	{"50k", 5, 4, DSI}, {"7M", 7, 6, DSI}, {"6G", 6, 9, DSI}, {"5T", 5, 12, DSI}, {"40T", 4, 13, DSI},
	{"300T", 3, 14, DSI}, {"2P", 2, 15, DSI}, {"1E", 1, 18, DSI},
	{"1E-3", 1, -3, DEX}, {"1e3", 1, 3, DEX}, {"1E6", 1, 6, DEX}, {"1e9", 1, 9, DEX}, {"1E12", 1, 12, DEX},
	{"1e15", 1, 15, DEX}, {"1E18", 1, 18, DEX},
	{"1e14", 1, 14, DEX}, {"1e13", 1, 13, DEX}, {"100.035k", 100035, 0, DSI},
	{"0.001", 1, -3, DSI}, {"0.0005k", 5, -1, DSI}, {"0.005", 5, -3, DSI}, {"0.05", 5, -2, DSI},
	{"0.5", 5, -1, DSI}, {"0.00050k", 5, -1, DSI}, {"0.00500", 5, -3, DSI}, {"0.05000", 5, -2, DSI},
	{"0.50000", 5, -1, DSI}, {"0.5e0", 5, -1, DEX}, {"0.5e-1", 5, -2, DEX}, {"0.5e-2", 5, -3, DEX},
	{"10.035M", 10035, 3, DSI},
	{"1.2e3", 12, 2, DEX}, {"1.3E+6", 13, 5, DEX}, {"1.40e9", 14, 8, DEX}, {"1.53E12", 153, 10, DEX},
	{"1.6e15", 16, 14, DEX}, {"1.7E18", 17, 17, DEX},
	{"9.01", 901, -2, DSI}, {"8.1k", 81, 2, DSI}, {"7.123456M", 7123456, 0, DSI},
	{"6.987654321G", 6987654321LL, 0, DSI}, {"5.444T", 5444, 9, DSI}, {"40.1T", 401, 11, DSI},
	{"300.2T", 3002, 11, DSI}, {"2.5P", 25, 14, DSI}, {"1.01E", 101, 16, DSI},
	/* things that saturate/round */
	{"3.001n", 4, -9, DSI}, {"1.1E-9", 2, -9, DEX}, {"0.0000000001", 1, -9, DSI},
	{"0.0000000005", 1, -9, DSI}, {"0.00000000050", 1, -9, DSI}, {"0.5e-9", 1, -9, DEX},
	{"0.9n", 1, -9, DSI}, {"0.00000012345", 124, -9, DSI}, {"0.00000012354", 124, -9, DSI},
	{"9Ei", INT64_MAX, 0, BSI}, {"9223372036854775807Ki", INT64_MAX, 0, BSI}, {"12E", 12, 18, DSI},
	/* fractional binary */
	{"100.035Ki", 10243584, -2, BSI}, {"0.5Mi", 512 * 1024, 0, BSI}, {"0.05Gi", 536870912, -1, BSI},
	{"0.025Ti", 274877906944LL, -1, BSI},
	/* things written by trolls */
	{"0.000000000001Ki", 2, -9, DSI}, {".001", 1, -3, DSI}, {".0001k", 100, -3, DSI}, {"1.", 1, 0, DSI},
	{"1.G", 1, 9, DSI},
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct kube_quantity want = dq(c->m, c->e, c->f), got = must_parse(c->in);
		char in[64];
		if (kube_quantity_cmp(&want, &got) != 0 || got.format != c->f)
			fail_msg("%s: want %s fmt %d, got %s fmt %d", c->in, str(&want), c->f, str(&got), got.format);
		/* the negative and explicit-plus variants */
		snprintf(in, sizeof(in), "-%s", c->in);
		got = must_parse(in);
		struct kube_quantity neg = dq(-c->m, c->e, c->f);
		if (kube_quantity_cmp(&neg, &got) != 0 || got.format != c->f)
			fail_msg("%s: want %s, got %s", in, str(&neg), str(&got));
		snprintf(in, sizeof(in), "+%s", c->in);
		got = must_parse(in);
		if (kube_quantity_cmp(&want, &got) != 0 || got.format != c->f)
			fail_msg("%s: want %s, got %s", in, str(&want), str(&got));
	}
}

static void test_parse_invalid(void **state)
{
	(void)state;
	static const struct {
		const char *in, *err;
	} cases[] = {
		{"", "quantities must match"},
		{"1.1.M", "quantities must match"},
		{"1+1.0M", "quantities must match"},
		{"0.1mi", "unable to parse quantity's suffix"},
		{"0.1am", "quantities must match"},
		{"aoeu", "quantities must match"},
		{".5i", "unable to parse quantity's suffix"},
		{"1i", "unable to parse quantity's suffix"},
		{"-3.01i", "unable to parse quantity's suffix"},
		{"-3.01e-", "unable to parse quantity's suffix"},
		{"1e4294967297", "unable to parse quantity's suffix"},
		{"1E2147483648", "unable to parse quantity's suffix"},
		{" 1", "quantities must match"},
		{"1 ", "quantities must match"},
		/* from the task brief */
		{"1.2.3", "quantities must match"},
		{"1 Gi", "quantities must match"},
		{"1GiB", "quantities must match"},
		{"ki", "unable to parse quantity's suffix"},
		{"1ki", "unable to parse quantity's suffix"},
		{"1e", "unable to parse quantity's suffix"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity q;
		char *err = NULL;
		if (kube_quantity_parse(cases[i].in, &q, &err) == 0)
			fail_msg("%s: parsed unexpectedly as %s", cases[i].in, str(&q));
		assert_non_null(err);
		if (!strstr(err, cases[i].err))
			fail_msg("%s: error %s, want %s", cases[i].in, err, cases[i].err);
		free(err);
	}
}

/* Upstream's scanner accepts a bare suffix, sign or dot as zero; we match it. */
static void test_parse_upstream_quirks(void **state)
{
	(void)state;
	static const char *zero[] = {"Gi", "-", "+", ".", "-.", "000", "-0.0"};
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		struct kube_quantity q = must_parse(zero[i]);
		if (!kube_quantity_is_zero(&q))
			fail_msg("%s: want 0, got %s", zero[i], str(&q));
		assert_string_equal(str(&q), "0");
	}
	/* long inputs: trailing zeros are free, too many significant digits are refused */
	char *longq = malloc(20000);
	strcpy(longq, "1");
	memset(longq + 1, '0', 10000);
	strcpy(longq + 10001, "e-10000");
	struct kube_quantity lq = must_parse(longq);
	assert_int_equal(kube_quantity_value(&lq), 1);
	strcpy(longq, "0.");
	memset(longq + 2, '1', 600);
	longq[602] = '\0';
	char *lerr = NULL;
	assert_int_equal(kube_quantity_parse(longq, &lq, &lerr), -1);
	assert_string_equal(lerr, "unable to parse numeric part of quantity");
	free(lerr);
	free(longq);
	struct kube_quantity q = must_parse("9223372036854775808");
	assert_string_equal(str(&q), "9223372036854775808");
	assert_int_equal(kube_quantity_value(&q), INT64_MAX);
}

static const struct string_case {
	int64_t m;
	int32_t e;
	enum kube_quantity_format f;
	const char *expect, *alternate;
} string_cases[] = {
	{1024LL * 1024 * 1024, 0, BSI, "1Gi", "1024Mi"},
	{300LL * 1024 * 1024, 0, BSI, "300Mi", "307200Ki"},
	{6 * 1024, 0, BSI, "6Ki", ""},
	{1001LL * 1024 * 1024 * 1024, 0, BSI, "1001Gi", "1025024Mi"},
	{1024LL * 1024 * 1024 * 1024, 0, BSI, "1Ti", "1024Gi"},
	{5, 0, BSI, "5", "5000m"},
	{500, -3, BSI, "500m", "0.5"},
	{1, 9, DSI, "1G", "1000M"},
	{1000, 6, DSI, "1G", "0.001T"},
	{1000000, 3, DSI, "1G", ""},
	{1000000000, 0, DSI, "1G", ""},
	{1, -3, DSI, "1m", "1000u"},
	{80, -3, DSI, "80m", ""},
	{1080, -3, DSI, "1080m", "1.08"},
	{108, -2, DSI, "1080m", "1080000000n"},
	{10800, -4, DSI, "1080m", ""},
	{300, 6, DSI, "300M", ""},
	{1, 12, DSI, "1T", ""},
	{1, 18, DSI, "1E", ""},
	{1, 21, DSI, "1e21", "1000E"},
	{5, 21, DSI, "5e21", "5000E"},
	{1, 24, DSI, "1e24", "1000000E"},
	{1, 70, BSI, "10e69", ""},
	{2, 70, BSI, "20e69", ""},
	{1, 72, BSI, "1e72", ""},
	{1234567, 6, DSI, "1234567M", ""},
	{1234567, -3, BSI, "1234567m", ""},
	{3, 3, DSI, "3k", ""},
	{1025, 0, BSI, "1025", ""},
	{0, 0, DSI, "0", ""},
	{0, 0, BSI, "0", ""},
	{1, 9, DEX, "1e9", ".001e12"},
	{1, -3, DEX, "1e-3", "0.001e0"},
	{1, -9, DEX, "1e-9", "1000e-12"},
	{80, -3, DEX, "80e-3", ""},
	{300, 6, DEX, "300e6", ""},
	{1, 12, DEX, "1e12", ""},
	{1, 3, DEX, "1e3", ""},
	{3, 3, DEX, "3e3", ""},
	{0, 0, DEX, "0", "00"},
	{1, -9, DSI, "1n", ""},
	{80, -9, DSI, "80n", ""},
	{1080, -9, DSI, "1080n", ""},
	{108, -8, DSI, "1080n", ""},
	{10800, -10, DSI, "1080n", ""},
	{1, -6, DSI, "1u", ""},
	{80, -6, DSI, "80u", ""},
	{1080, -6, DSI, "1080u", ""},
	/* below nano only reachable by construction */
	{1, -12, DSI, "1e-12", ""},
	{1, -10, DSI, "100e-12", ""},
	{2000, 0, BSI, "2000", ""},
};

static void test_string_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(string_cases) / sizeof(string_cases[0]); i++) {
		const struct string_case *c = &string_cases[i];
		struct kube_quantity q = dq(c->m, c->e, c->f);
		if (strcmp(str(&q), c->expect) != 0)
			fail_msg("%lld e%d fmt %d: want %s got %s", (long long)c->m, c->e, c->f, c->expect, str(&q));
		if (c->e >= -9) { /* canonical strings parse back to the same value */
			struct kube_quantity back = must_parse(c->expect);
			if (kube_quantity_cmp(&back, &q) != 0)
				fail_msg("%s: round trip gave %s", c->expect, str(&back));
		}
		if (c->m != 0) {
			char want[80];
			struct kube_quantity n = dq(-c->m, c->e, c->f);
			snprintf(want, sizeof(want), "-%s", c->expect);
			if (strcmp(str(&n), want) != 0)
				fail_msg("negated: want %s got %s", want, str(&n));
		}
		if (c->alternate[0]) {
			struct kube_quantity alt = must_parse(c->alternate);
			if (strcmp(str(&alt), c->expect) != 0)
				fail_msg("%s: want canonical %s got %s", c->alternate, c->expect, str(&alt));
		}
	}
}

static void test_parse_emit(void **state)
{
	(void)state;
	static const char *cases[][2] = {
		{"1Ki", "1Ki"}, {"1Mi", "1Mi"}, {"1Gi", "1Gi"}, {"1024Mi", "1Gi"}, {"1000M", "1G"},
		{".001Ki", "1024m"}, {".000001Ki", "1024u"}, {".000000001Ki", "1024n"}, {".000000000001Ki", "2n"},
		/* the brief's examples */
		{"1000m", "1"}, {"1024Ki", "1Mi"}, {"1536Mi", "1536Mi"}, {"0.5", "500m"}, {"1e3", "1e3"},
		{"100000000000", "100G"}, {"1.5Gi", "1536Mi"}, {"1.5", "1500m"}, {"1.5Ki", "1536"},
		{"0.5Ki", "512"}, {"100m", "100m"}, {"2000Mi", "2000Mi"}, {"1.1Ki", "1126400m"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity q = must_parse(cases[i][0]);
		if (strcmp(str(&q), cases[i][1]) != 0)
			fail_msg("%s: want %s got %s", cases[i][0], cases[i][1], str(&q));
		char in[64], want[64];
		snprintf(in, sizeof(in), "-%s", cases[i][0]);
		snprintf(want, sizeof(want), "-%s", cases[i][1]);
		q = must_parse(in);
		if (strcmp(str(&q), want) != 0)
			fail_msg("%s: want %s got %s", in, want, str(&q));
	}
}

static void test_values(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int64_t value, milli;
	} cases[] = {
		{"-.484785E-7466", -1, -1},
		{".484785E-7466", 1, 1},
		{"-.484785E-1", -1, -49},
		{".484785E-1", 1, 49},
		{"-0.0005", -1, -1},
		{"0.0005", 1, 1},
		{"-1500m", -2, -1500},
		{"1500m", 2, 1500},
		{"-9.5000000001Gi", -10200547329LL, -10200547328108LL},
		{"9.5000000001Gi", 10200547329LL, 10200547328108LL},
		{"-1", -1, -1000},
		{"1", 1, 1000},
		{"0", 0, 0},
		/* the scheduler's uses */
		{"0.1m", 1, 1},
		{"1.5", 2, 1500},
		{"100m", 1, 100},
		{"2", 2, 2000},
		{"1Gi", 1073741824LL, 1073741824000LL},
		{"128974848", 128974848LL, 128974848000LL},
		{"129e6", 129000000LL, 129000000000LL},
		{"123Mi", 128974848LL, 128974848000LL},
		{"1n", 1, 1},
		/* saturation */
		{"9Ei", INT64_MAX, INT64_MAX},
		{"100E", INT64_MAX, INT64_MAX},
		{"-100E", INT64_MIN, INT64_MIN},
		{"9223372036854775807", INT64_MAX, INT64_MAX},
		{"9223372036854775", 9223372036854775LL, 9223372036854775000LL},
		{"9223372036854776", 9223372036854776LL, INT64_MAX},
		{"1e2147483647", INT64_MAX, INT64_MAX},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity q = must_parse(cases[i].in);
		if (kube_quantity_value(&q) != cases[i].value || kube_quantity_milli_value(&q) != cases[i].milli)
			fail_msg("%s: want %lld/%lld got %lld/%lld", cases[i].in, (long long)cases[i].value,
				 (long long)cases[i].milli, (long long)kube_quantity_value(&q),
				 (long long)kube_quantity_milli_value(&q));
		int64_t v, m;
		assert_int_equal(kube_parse_value(cases[i].in, &v), 0);
		assert_int_equal(kube_parse_milli(cases[i].in, &m), 0);
		assert_true(v == cases[i].value && m == cases[i].milli);
	}
	int64_t out;
	assert_int_equal(kube_parse_milli("abc", &out), -1);
	assert_int_equal(kube_parse_value("1 Gi", &out), -1);
}

static void test_scaled_value(void **state)
{
	(void)state;
	static const struct {
		int32_t from, to;
		int64_t want;
	} cases[] = {
		{-9, -9, 1}, {-9, -6, 1}, {-9, -3, 1}, {-9, 0, 1}, {-6, -9, 1000}, {-6, -6, 1}, {-6, -3, 1},
		{-6, 0, 1}, {-3, -9, 1000 * 1000}, {-3, -6, 1000}, {-3, -3, 1}, {-3, 0, 1}, {0, -9, 1000000000},
		{0, -6, 1000000}, {0, -3, 1000}, {0, 0, 1}, {2, -2, 100 * 100},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity q = kube_quantity_from_scaled(1, cases[i].from, DSI);
		assert_int_equal(kube_quantity_scaled_value(&q, cases[i].to), cases[i].want);
	}
}

static void test_constructors(void **state)
{
	(void)state;
	static const struct {
		int64_t v;
		enum kube_quantity_format f;
		const char *milli, *plain;
	} cases[] = {
		{1, DSI, "1m", "1"},
		{1000, DSI, "1", "1k"},
		{1234000, DSI, "1234", "1234k"},
		{1024, BSI, "1024m", "1Ki"},
		{1024 * 1024, BSI, "1048576m", "1Mi"},
		{1000000, DEX, "1e3", "1e6"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity m = kube_quantity_from_milli(cases[i].v, cases[i].f);
		struct kube_quantity p = kube_quantity_from_int64(cases[i].v, cases[i].f);
		assert_string_equal(str(&m), cases[i].milli);
		assert_string_equal(str(&p), cases[i].plain);
		struct kube_quantity back = must_parse(str(&p));
		assert_int_equal(kube_quantity_value(&back), cases[i].v);
	}
	static const struct {
		int64_t v;
		int32_t scale;
		const char *want;
	} scaled[] = {
		{1, -9, "1n"}, {1000, -9, "1u"}, {1, -6, "1u"}, {1000, -6, "1m"}, {1, -3, "1m"},
		{1000, -3, "1"}, {1, 0, "1"}, {0, -9, "0"}, {0, -6, "0"}, {0, -3, "0"}, {0, 0, "0"},
	};
	for (size_t i = 0; i < sizeof(scaled) / sizeof(scaled[0]); i++) {
		struct kube_quantity q = kube_quantity_from_scaled(scaled[i].v, scaled[i].scale, DSI);
		assert_string_equal(str(&q), scaled[i].want);
		struct kube_quantity back = must_parse(scaled[i].want);
		assert_int_equal(kube_quantity_scaled_value(&back, scaled[i].scale), scaled[i].v);
	}
}

static void test_cmp(void **state)
{
	(void)state;
	static const struct {
		const char *x, *y;
		int want;
	} cases[] = {
		{"0", "0", 0},	 {"100m", "50m", 1},   {"50m", "100m", -1}, {"10000T", "100Gi", 1},
		{"1Gi", "1024Mi", 0}, {"1", "1000m", 0}, {"-1", "1n", -1},	{"1e30", "1e29", 1},
		{"1E", "1e18", 0},    {"0.5", "500m", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_quantity x = must_parse(cases[i].x), y = must_parse(cases[i].y);
		if (kube_quantity_cmp(&x, &y) != cases[i].want || kube_quantity_cmp(&y, &x) != -cases[i].want)
			fail_msg("cmp(%s,%s) != %d", cases[i].x, cases[i].y, cases[i].want);
	}
	static const struct {
		int64_t am;
		int32_t ae;
		int64_t bm;
		int32_t be;
		int want;
	} raw[] = {
		{901, -2, 901, -2, 0},
		{90, -1, 901, -2, -1},
		{901, -2, 900, -2, 1},
		{0, 1, 0, -1, 0},
		{800, -3, 1, 0, -1},
		{800, -3, 79, -2, 1},
		{INT64_MAX, 0, 1, -1, 1},
		{INT64_MAX, 1, 1, 0, 1},
		{INT64_MAX, -16, 1, 3, -1},
		{INT64_MIN, 0, 0, 0, -1},
		{INT64_MIN, -18, -1, 0, -1},
		{INT64_MIN, -19, -1, 0, 1},
		{1000000000000000000LL, -17, 1, 1, 0},
		{1000000000000000000LL, -17, -10, 0, 1},
		{-1000000000000000000LL, -17, -10, 0, 0},
		{1000000000000000001LL, -17, 1, 1, 1},
		{999999999999999999LL, -17, 1, 1, -1},
	};
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		struct kube_quantity a = dq(raw[i].am, raw[i].ae, DSI), b = dq(raw[i].bm, raw[i].be, DSI);
		if (kube_quantity_cmp(&a, &b) != raw[i].want || kube_quantity_cmp(&b, &a) != -raw[i].want)
			fail_msg("raw cmp case %zu", i);
	}
}

static void test_add_sub(void **state)
{
	(void)state;
	/* zero keeps the other operand's suffix */
	static const char *vals[] = {"100m", "1Gi"};
	for (size_t i = 0; i < 2; i++) {
		struct kube_quantity v = must_parse(vals[i]), z = must_parse("0");
		struct kube_quantity v1 = v, v2 = z;
		assert_int_equal(kube_quantity_add(&v1, &z), 0);
		assert_int_equal(kube_quantity_add(&v2, &v), 0);
		assert_string_equal(str(&v1), vals[i]);
		assert_string_equal(str(&v2), vals[i]);
		struct kube_quantity v3 = v, v4 = z;
		assert_int_equal(kube_quantity_sub(&v3, &z), 0);
		assert_int_equal(kube_quantity_sub(&v4, &v), 0);
		assert_string_equal(str(&v3), vals[i]);
		char want[32];
		snprintf(want, sizeof(want), "-%s", vals[i]);
		assert_string_equal(str(&v4), want);
	}
	static const struct {
		int64_t am;
		enum kube_quantity_format af;
		int64_t bm;
		int32_t be;
		enum kube_quantity_format bf;
		int64_t want;
		enum kube_quantity_format wf;
	} subs[] = {
		{10, DSI, 1, 1, DSI, 0, DSI},
		{10, DSI, 1, 0, BSI, 9, DSI},
		{10, BSI, 1, 0, DSI, 9, BSI},
		{0, DSI, 50, 0, DSI, -50, DSI},
		{50, DSI, 0, 0, DSI, 50, DSI},
	};
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		struct kube_quantity a = dq(subs[i].am, 0, subs[i].af), b = dq(subs[i].bm, subs[i].be, subs[i].bf);
		struct kube_quantity w = dq(subs[i].want, 0, subs[i].wf);
		assert_int_equal(kube_quantity_sub(&a, &b), 0);
		assert_int_equal(kube_quantity_cmp(&a, &w), 0);
		assert_int_equal(a.format, subs[i].wf);
	}
	/* int64 extremes do not wrap */
	struct kube_quantity z = dq(0, 0, DSI), mn = dq(INT64_MIN, 0, DSI);
	assert_int_equal(kube_quantity_sub(&z, &mn), 0);
	assert_string_equal(str(&z), "9223372036854775808");
	struct kube_quantity one = dq(1, -3, DSI), mnm = dq(INT64_MIN, -3, DSI);
	assert_int_equal(kube_quantity_sub(&one, &mnm), 0);
	assert_string_equal(str(&one), "9223372036854775809m");
	/* 1Ei * 1024 through additions: past Ei prints exact decimal digits */
	struct kube_quantity ei = must_parse("1Ei"), acc = must_parse("0Ei");
	for (int i = 0; i < 1024; i++)
		assert_int_equal(kube_quantity_add(&acc, &ei), 0);
	assert_string_equal(str(&acc), "1180591620717411303424");
	/* overflow of the 38-digit mantissa is reported, not wrapped */
	struct kube_quantity big = must_parse("99999999999999999999999999999999999999"), tiny = must_parse("1n");
	struct kube_quantity before = big;
	assert_int_equal(kube_quantity_add(&big, &tiny), -1);
	assert_int_equal(kube_quantity_cmp(&big, &before), 0);
}

/* Found by kube/fuzz/fuzz_quantity.c: two 38-digit mantissas summed in an int128 overflowed
 * (undefined behaviour; UBSan aborts under `make asan`). The sum is out of range: -1, a unchanged. */
static void test_add_overflow_regression(void **state)
{
	(void)state;
	struct kube_quantity a, b;
	assert_int_equal(kube_quantity_parse("99999999999999999999999999999999999997", &a, NULL), 0);
	b = a;
	assert_int_equal(kube_quantity_add(&a, &b), -1);
	assert_true(kube_quantity_cmp(&a, &b) == 0);
	struct kube_quantity n = b;
	n.mantissa = -n.mantissa;
	assert_int_equal(kube_quantity_sub(&n, &b), -1); /* -x - x: the same overflow, negative */
	assert_int_equal(kube_quantity_add(&n, &b), 0);  /* -x + x = 0 */
	assert_true(kube_quantity_is_zero(&n));
	struct kube_quantity c, d;
	assert_int_equal(kube_quantity_parse("50000000000000000000000000000000000000", &c, NULL), 0);
	assert_int_equal(kube_quantity_parse("49999999999999999999999999999999999999", &d, NULL), 0);
	assert_int_equal(kube_quantity_add(&c, &d), 0); /* just below 10^38: fits */
	char buf[64];
	assert_string_equal(kube_quantity_format(&c, buf), "99999999999999999999999999999999999999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),   cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_upstream_quirks), cmocka_unit_test(test_string_table),
		cmocka_unit_test(test_parse_emit),    cmocka_unit_test(test_values),
		cmocka_unit_test(test_scaled_value),  cmocka_unit_test(test_constructors),
		cmocka_unit_test(test_cmp),	      cmocka_unit_test(test_add_sub), cmocka_unit_test(test_add_overflow_regression),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
