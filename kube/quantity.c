/* resource.Quantity: parse, canonical String(), Value/MilliValue rounding, compare, add.
 * Values are exact decimals (128-bit mantissa * 10^scale) kept normalized: the mantissa has no
 * trailing decimal zeros and |mantissa| < 10^38, so every aligned comparison fits 128 bits. */
#include "kube/quantity.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

typedef unsigned __int128 u128;

#define MANTISSA_LIMIT_DIGITS 38
#define MAX_SIGNIFICANT_DIGITS 512

static const char ERR_FORMAT[] =
	"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";

static u128 pow10_u128(int n) /* n in [0, 38] */
{
	u128 r = 1;
	while (n-- > 0)
		r *= 10;
	return r;
}

static int digits_u128(u128 v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static u128 abs_u128(kube_int128 v) { return v < 0 ? (u128)0 - (u128)v : (u128)v; }

/* Strips trailing zeros into the scale; zero gets scale 0. */
static void normalize(struct kube_quantity *q)
{
	if (q->mantissa == 0) {
		q->scale = 0;
		return;
	}
	while (q->mantissa % 10 == 0 && q->scale < INT32_MAX) {
		q->mantissa /= 10;
		q->scale++;
	}
}

/* ---- tiny unsigned bignum (base 2^32 limbs, little endian) for parsing ---- */

struct big {
	uint32_t *limb;
	size_t n, cap;
};

static int big_mul_add(struct big *b, uint32_t mul, uint32_t add)
{
	uint64_t carry = add;
	for (size_t i = 0; i < b->n; i++) {
		uint64_t v = (uint64_t)b->limb[i] * mul + carry;
		b->limb[i] = (uint32_t)v;
		carry = v >> 32;
	}
	if (carry) {
		if (b->n == b->cap)
			return -1;
		b->limb[b->n++] = (uint32_t)carry;
	}
	return 0;
}

/* Divides by d, returns the remainder. */
static uint32_t big_div(struct big *b, uint32_t d)
{
	uint64_t rem = 0;
	for (size_t i = b->n; i-- > 0;) {
		uint64_t cur = (rem << 32) | b->limb[i];
		b->limb[i] = (uint32_t)(cur / d);
		rem = cur % d;
	}
	while (b->n > 0 && b->limb[b->n - 1] == 0)
		b->n--;
	return (uint32_t)rem;
}

static bool big_is_zero(const struct big *b) { return b->n == 0; }

/* b mod 10 without changing b: 2^32 = 6 (mod 10) and 6^k = 6 (mod 10) for k >= 1. */
static unsigned big_mod10(const struct big *b)
{
	unsigned hi = 0;
	for (size_t i = 1; i < b->n; i++)
		hi = (hi + b->limb[i] % 10) % 10;
	return (unsigned)((b->limb[0] % 10 + 6 * hi) % 10);
}

/* Fits in 128 bits with fewer than 39 decimal digits? */
static bool big_to_u128(const struct big *b, u128 *out)
{
	if (b->n > 4)
		return false;
	u128 v = 0;
	for (size_t i = b->n; i-- > 0;)
		v = (v << 32) | b->limb[i];
	if (v >= pow10_u128(MANTISSA_LIMIT_DIGITS))
		return false;
	*out = v;
	return true;
}

/* ---- parsing ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Upstream's scanner: sign, number (digits, optional '.', digits), suffix letters, optional
 * sign and digits. Returns 0 or -1 (format error). */
static int scan(const char *s, size_t end, bool *positive, const char **num, size_t *num_len, const char **den,
		size_t *den_len, const char **suf, size_t *suf_len)
{
	size_t pos = 0;
	*positive = true;
	*num = "0";
	*num_len = 1;
	*den = "";
	*den_len = 0;
	*suf = "";
	*suf_len = 0;
	if (pos < end && (s[0] == '-' || s[0] == '+')) {
		*positive = s[0] != '-';
		pos++;
	}
	while (pos < end && s[pos] == '0')
		pos++;
	if (pos >= end)
		return 0;
	size_t start = pos;
	while (pos < end && is_digit(s[pos]))
		pos++;
	if (pos > start) {
		*num = s + start;
		*num_len = pos - start;
	}
	if (pos >= end)
		return 0;
	if (s[pos] == '.') {
		pos++;
		start = pos;
		while (pos < end && is_digit(s[pos]))
			pos++;
		*den = s + start;
		*den_len = pos - start;
		if (pos >= end)
			return 0;
	}
	size_t suffix_start = pos;
	while (pos < end && strchr("eEinumkKMGTP", s[pos]))
		pos++;
	if (pos < end && (s[pos] == '-' || s[pos] == '+'))
		pos++;
	while (pos < end && is_digit(s[pos]))
		pos++;
	if (pos < end)
		return -1;
	*suf = s + suffix_start;
	*suf_len = end - suffix_start;
	return 0;
}

/* Suffix -> base (2 or 10), exponent, format. Returns 0 or -1. */
static int interpret_suffix(const char *s, size_t n, int *base, long long *exp, enum kube_quantity_format *f)
{
	static const struct {
		const char *s;
		int base, exp;
		enum kube_quantity_format f;
	} table[] = {
		{"", 10, 0, KUBE_QUANTITY_DECIMAL_SI},	 {"n", 10, -9, KUBE_QUANTITY_DECIMAL_SI},
		{"u", 10, -6, KUBE_QUANTITY_DECIMAL_SI}, {"m", 10, -3, KUBE_QUANTITY_DECIMAL_SI},
		{"k", 10, 3, KUBE_QUANTITY_DECIMAL_SI},	 {"M", 10, 6, KUBE_QUANTITY_DECIMAL_SI},
		{"G", 10, 9, KUBE_QUANTITY_DECIMAL_SI},	 {"T", 10, 12, KUBE_QUANTITY_DECIMAL_SI},
		{"P", 10, 15, KUBE_QUANTITY_DECIMAL_SI}, {"E", 10, 18, KUBE_QUANTITY_DECIMAL_SI},
		{"Ki", 2, 10, KUBE_QUANTITY_BINARY_SI},	 {"Mi", 2, 20, KUBE_QUANTITY_BINARY_SI},
		{"Gi", 2, 30, KUBE_QUANTITY_BINARY_SI},	 {"Ti", 2, 40, KUBE_QUANTITY_BINARY_SI},
		{"Pi", 2, 50, KUBE_QUANTITY_BINARY_SI},	 {"Ei", 2, 60, KUBE_QUANTITY_BINARY_SI},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].s) == n && memcmp(table[i].s, s, n) == 0) {
			*base = table[i].base;
			*exp = table[i].exp;
			*f = table[i].f;
			return 0;
		}
	}
	if (n > 1 && (s[0] == 'e' || s[0] == 'E')) {
		/* strconv.ParseInt(s[1:], 10, 64) then bounded to +-MaxInt32. */
		size_t i = 1;
		bool neg = false;
		if (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-';
			i++;
		}
		if (i >= n)
			return -1;
		long long v = 0;
		for (; i < n; i++) {
			if (!is_digit(s[i]))
				return -1;
			v = v * 10 + (s[i] - '0');
			if (v > INT32_MAX)
				return -1;
		}
		*base = 10;
		*exp = neg ? -v : v;
		*f = KUBE_QUANTITY_DECIMAL_EXPONENT;
		return 0;
	}
	return -1;
}

int kube_quantity_parse(const char *s, struct kube_quantity *q, char **err)
{
	if (err)
		*err = NULL;
	if (!s || !q) {
		kube_errf(err, "%s", ERR_FORMAT);
		return -1;
	}
	size_t len = strlen(s);
	if (len == 0) {
		kube_errf(err, "%s", ERR_FORMAT);
		return -1;
	}
	bool positive;
	const char *num, *den, *suf;
	size_t num_len, den_len, suf_len;
	if (scan(s, len, &positive, &num, &num_len, &den, &den_len, &suf, &suf_len) != 0) {
		kube_errf(err, "%s", ERR_FORMAT);
		return -1;
	}
	int base;
	long long exponent;
	enum kube_quantity_format format;
	if (interpret_suffix(suf, suf_len, &base, &exponent, &format) != 0) {
		kube_errf(err, "%s", ERR_SUFFIX);
		return -1;
	}

	/* digits = num ++ den, value = digits * 10^(-den_len) * (10^exp or 2^exp). Trailing zeros
	 * go to the scale first; absurdly long mantissas are refused rather than crunched (upstream
	 * has no limit, but nothing real comes close). */
	size_t ndig = num_len + den_len, lead = 0, tz = 0;
#define DIGIT(i) ((i) < num_len ? num[(i)] : den[(i) - num_len])
	while (tz < ndig && DIGIT(ndig - 1 - tz) == '0')
		tz++;
	while (lead < ndig - tz && DIGIT(lead) == '0')
		lead++;
	if (ndig - tz - lead > MAX_SIGNIFICANT_DIGITS) {
		kube_errf(err, "%s", ERR_NUMERIC);
		return -1;
	}
	size_t cap = (ndig - tz - lead) / 9 + (base == 2 ? 3 : 1) + 2;
	uint32_t stack_limbs[16];
	struct big b = {stack_limbs, 0, 16};
	if (cap > 16) {
		b.limb = malloc(cap * sizeof(uint32_t));
		if (!b.limb) {
			kube_errf(err, "%s", ERR_NUMERIC);
			return -1;
		}
		b.cap = cap;
	}
	int rc = -1;
	for (size_t i = lead; i < ndig - tz; i++) {
		if (big_mul_add(&b, 10, (uint32_t)(DIGIT(i) - '0')) != 0)
			goto out;
	}
#undef DIGIT
	ndig -= tz + lead;
	long long scale = -(long long)den_len + (long long)tz;
	if (base == 10) {
		scale += exponent;
	} else {
		for (long long e = exponent; e > 0; e -= 10)
			if (big_mul_add(&b, e >= 10 ? 1024u : (1u << e), 0) != 0)
				goto out;
	}

	/* Round away from zero to nano precision (upstream inf.RoundUp at scale 9). */
	bool dropped = false;
	if (scale < -9 && !big_is_zero(&b)) {
		long long drop = -9 - scale;
		/* Dropping more digits than the number has leaves just the rounding unit. */
		if ((unsigned long long)drop > ndig + 24) {
			b.n = 0;
			dropped = true;
		} else {
			for (long long i = 0; i < drop && !big_is_zero(&b); i++)
				if (big_div(&b, 10) != 0)
					dropped = true;
		}
		scale = -9;
		if (dropped && big_mul_add(&b, 1, 1) != 0)
			goto out;
	}
	/* Strip trailing zeros so the mantissa is as small as possible. */
	while (!big_is_zero(&b) && big_mod10(&b) == 0 && scale < INT32_MAX) {
		big_div(&b, 10);
		scale++;
	}
	u128 mag;
	if (big_is_zero(&b)) {
		mag = 0;
		scale = 0;
	} else if (!big_to_u128(&b, &mag)) {
		if (format == KUBE_QUANTITY_BINARY_SI) { /* certainly above the 2^63-1 cap */
			mag = (u128)INT64_MAX; /* capped below */
			scale = 0;
		} else {
			kube_errf(err, "%s", ERR_NUMERIC);
			goto out;
		}
	}
	if (scale > INT32_MAX || scale < INT32_MIN) {
		kube_errf(err, "%s", ERR_NUMERIC);
		goto out;
	}
	q->mantissa = (kube_int128)mag;
	q->scale = (int32_t)scale;
	q->format = format;
	if (format == KUBE_QUANTITY_BINARY_SI && mag != 0) {
		/* Cap at 2^63-1 (upstream maxAllowed), and below 1 become DecimalSI. */
		struct kube_quantity max = {INT64_MAX, 0, format}, one = {1, 0, format};
		q->mantissa = (kube_int128)mag;
		if (kube_quantity_cmp(q, &max) > 0) {
			q->mantissa = INT64_MAX;
			q->scale = 0;
		}
		if (kube_quantity_cmp(q, &one) < 0)
			q->format = KUBE_QUANTITY_DECIMAL_SI;
	}
	if (!positive)
		q->mantissa = -q->mantissa;
	normalize(q);
	rc = 0;
out:
	if (rc != 0 && err && !*err)
		kube_errf(err, "%s", ERR_NUMERIC);
	if (b.limb != stack_limbs)
		free(b.limb);
	return rc;
}

/* ---- comparison and arithmetic ---- */

int kube_quantity_sign(const struct kube_quantity *q) { return q->mantissa > 0 ? 1 : q->mantissa < 0 ? -1 : 0; }
bool kube_quantity_is_zero(const struct kube_quantity *q) { return q->mantissa == 0; }

/* Compares magnitudes |a| and |b| (both non-zero). */
static int cmp_mag(u128 am, long long as, u128 bm, long long bs)
{
	long long ae = digits_u128(am) + as, be = digits_u128(bm) + bs;
	if (ae != be)
		return ae > be ? 1 : -1;
	/* Same magnitude order: align to the smaller scale; the shift is < 39 digits. */
	if (as > bs)
		am *= pow10_u128((int)(as - bs));
	else if (bs > as)
		bm *= pow10_u128((int)(bs - as));
	return am > bm ? 1 : am < bm ? -1 : 0;
}

int kube_quantity_cmp(const struct kube_quantity *a, const struct kube_quantity *b)
{
	int sa = kube_quantity_sign(a), sb = kube_quantity_sign(b);
	if (sa != sb)
		return sa > sb ? 1 : -1;
	if (sa == 0)
		return 0;
	int c = cmp_mag(abs_u128(a->mantissa), a->scale, abs_u128(b->mantissa), b->scale);
	return sa > 0 ? c : -c;
}

static int add_signed(struct kube_quantity *a, const struct kube_quantity *b, bool negate_b)
{
	kube_int128 bm = negate_b ? -b->mantissa : b->mantissa;
	if (a->mantissa == 0)
		a->format = b->format;
	if (bm == 0)
		return 0;
	if (a->mantissa == 0) {
		a->mantissa = bm;
		a->scale = b->scale;
		return 0;
	}
	long long s = a->scale < b->scale ? a->scale : b->scale;
	long long da = a->scale - s, db = b->scale - s;
	const u128 limit = pow10_u128(MANTISSA_LIMIT_DIGITS);
	u128 ma = abs_u128(a->mantissa), mb = abs_u128(bm);
	if (da >= MANTISSA_LIMIT_DIGITS || db >= MANTISSA_LIMIT_DIGITS)
		return -1;
	if (ma > limit / pow10_u128((int)da) || mb > limit / pow10_u128((int)db))
		return -1;
	/* Each term is below 10^38 but their sum may not fit an int128 (~1.7e38): add magnitudes in
	 * u128 (found by kube/fuzz/fuzz_quantity.c). */
	u128 x = ma * pow10_u128((int)da), y = mb * pow10_u128((int)db), mag;
	bool na = a->mantissa < 0, nb = bm < 0, neg;
	if (na == nb) {
		mag = x + y;
		neg = na;
	} else {
		mag = x >= y ? x - y : y - x;
		neg = x >= y ? na : nb;
	}
	if (mag >= limit)
		return -1;
	a->mantissa = neg ? -(kube_int128)mag : (kube_int128)mag;
	a->scale = (int32_t)s;
	normalize(a);
	return 0;
}

int kube_quantity_add(struct kube_quantity *a, const struct kube_quantity *b)
{
	struct kube_quantity t = *a;
	if (add_signed(&t, b, false) != 0)
		return -1;
	*a = t;
	return 0;
}

int kube_quantity_sub(struct kube_quantity *a, const struct kube_quantity *b)
{
	struct kube_quantity t = *a;
	if (add_signed(&t, b, true) != 0)
		return -1;
	*a = t;
	return 0;
}

struct kube_quantity kube_quantity_from_scaled(int64_t v, int32_t scale, enum kube_quantity_format f)
{
	struct kube_quantity q = {v, scale, f};
	normalize(&q);
	return q;
}

struct kube_quantity kube_quantity_from_int64(int64_t v, enum kube_quantity_format f)
{
	return kube_quantity_from_scaled(v, 0, f);
}

struct kube_quantity kube_quantity_from_milli(int64_t milli, enum kube_quantity_format f)
{
	return kube_quantity_from_scaled(milli, -3, f);
}

/* ---- conversion ---- */

int64_t kube_quantity_scaled_value(const struct kube_quantity *q, int32_t target)
{
	if (q->mantissa == 0)
		return 0;
	bool neg = q->mantissa < 0;
	u128 m = abs_u128(q->mantissa);
	long long delta = (long long)q->scale - target;
	u128 r;
	if (delta >= 0) {
		if (delta >= 39 || m > ((u128)INT64_MAX + 1) / pow10_u128((int)delta) + 1)
			return neg ? INT64_MIN : INT64_MAX;
		r = m * pow10_u128((int)delta);
	} else {
		if (-delta > MANTISSA_LIMIT_DIGITS) {
			r = 1; /* only the rounding unit is left */
		} else {
			u128 d = pow10_u128((int)-delta);
			r = m / d + (m % d != 0); /* away from zero */
		}
	}
	if (neg)
		return r > (u128)INT64_MAX + 1 ? INT64_MIN : (int64_t)(0 - r);
	return r > (u128)INT64_MAX ? INT64_MAX : (int64_t)r;
}

int64_t kube_quantity_value(const struct kube_quantity *q) { return kube_quantity_scaled_value(q, 0); }
int64_t kube_quantity_milli_value(const struct kube_quantity *q) { return kube_quantity_scaled_value(q, -3); }

/* ---- formatting ---- */

static size_t put_u128(char *out, u128 v)
{
	char tmp[48];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* Base-10 canonical form: mantissa digits, exponent a multiple of 3, suffix from the format
 * (or exponent notation when DecimalSI has no suffix for it). */
static void format_decimal(const struct kube_quantity *q, enum kube_quantity_format f, char *buf)
{
	size_t n = 0;
	if (q->mantissa < 0)
		buf[n++] = '-';
	n += put_u128(buf + n, abs_u128(q->mantissa));
	long long e = q->scale;
	long long r = ((e % 3) + 3) % 3;
	for (long long i = 0; i < r; i++)
		buf[n++] = '0';
	e -= r;
	static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
	if (f == KUBE_QUANTITY_DECIMAL_SI && e >= -9 && e <= 18) {
		strcpy(buf + n, si[(e + 9) / 3]);
	} else if (e != 0) {
		snprintf(buf + n, 64 - n, "e%lld", e);
	} else {
		buf[n] = '\0';
	}
}

char *kube_quantity_format(const struct kube_quantity *q, char buf[64])
{
	if (q->mantissa == 0) {
		strcpy(buf, "0");
		return buf;
	}
	enum kube_quantity_format f = q->format;
	if (f == KUBE_QUANTITY_BINARY_SI) {
		u128 m = abs_u128(q->mantissa);
		struct kube_quantity k = {1024, 0, f};
		struct kube_quantity mag = {(kube_int128)m, q->scale, f};
		/* |q| < 1024 or not an integer: DecimalSI. */
		if (kube_quantity_cmp(&mag, &k) < 0 || q->scale < 0) {
			f = KUBE_QUANTITY_DECIMAL_SI;
		} else if (q->scale >= MANTISSA_LIMIT_DIGITS ||
			   m > pow10_u128(MANTISSA_LIMIT_DIGITS) / pow10_u128(q->scale)) {
			f = KUBE_QUANTITY_DECIMAL_EXPONENT; /* past any binary suffix */
		} else {
			u128 v = m * pow10_u128(q->scale);
			int times = 0;
			while (v >= 1024 && v % 1024 == 0) {
				v /= 1024;
				times++;
			}
			if (times > 6) {
				f = KUBE_QUANTITY_DECIMAL_EXPONENT; /* no suffix past Ei */
			} else {
				static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
				size_t n = 0;
				if (q->mantissa < 0)
					buf[n++] = '-';
				n += put_u128(buf + n, v);
				strcpy(buf + n, bin[times]);
				return buf;
			}
		}
	}
	format_decimal(q, f, buf);
	return buf;
}

int kube_parse_milli(const char *s, int64_t *out)
{
	struct kube_quantity q;
	if (kube_quantity_parse(s, &q, NULL) != 0)
		return -1;
	*out = kube_quantity_milli_value(&q);
	return 0;
}

int kube_parse_value(const char *s, int64_t *out)
{
	struct kube_quantity q;
	if (kube_quantity_parse(s, &q, NULL) != 0)
		return -1;
	*out = kube_quantity_value(&q);
	return 0;
}
