/* Long file: the JSON and YAML codecs share the buffer and the int64/float formatting. */
/* Kubernetes objects as cJSON: YAML (libyaml events) to cJSON typed like sigs.k8s.io/yaml,
 * deterministic YAML and compact JSON printers, dotted paths, metadata, owner references,
 * conditions and RFC 3339 times. */
#include "kube/object.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#define MAX_JSON_DEPTH 10000

/* ------------------------------------------------------------------ */
/* growable buffer                                                     */

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void buf_putn(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_puts(struct buf *b, const char *s) { buf_putn(b, s, strlen(s)); }
static void buf_putc(struct buf *b, char c) { buf_putn(b, &c, 1); }

static char *buf_take(struct buf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

/* Strings handed to cJSON (keys, number text) must come from its allocator. */
static char *cj_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = cJSON_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */

/* The exact text of an integer number item, when it still agrees with valuedouble. */
static const char *number_raw(const cJSON *item)
{
	if (!cJSON_IsNumber(item) || !item->valuestring || !item->valuestring[0])
		return NULL;
	char *end;
	errno = 0;
	double d = strtod(item->valuestring, &end);
	if (*end || d != item->valuedouble)
		return NULL;
	return item->valuestring;
}

int kube_json_get_int64(const cJSON *item, int64_t *out)
{
	if (!cJSON_IsNumber(item))
		return -1;
	const char *raw = number_raw(item);
	if (raw) {
		char *end;
		errno = 0;
		long long v = strtoll(raw, &end, 10);
		if (!errno && !*end) {
			*out = v;
			return 0;
		}
	}
	double d = item->valuedouble;
	if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
		return -1;
	*out = (int64_t)d;
	return 0;
}

cJSON *kube_json_string_array(const char *const *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);
		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

cJSON *kube_json_create_int64(int64_t v)
{
	cJSON *n = cJSON_CreateNumber((double)v);
	if (!n)
		return NULL;
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	n->valuestring = cj_strdup(tmp);
	if (!n->valuestring) {
		cJSON_Delete(n);
		return NULL;
	}
	return n;
}

/* Go's strconv.FormatFloat(v, 'g'-like, -1, 64) as encoding/json prints it: shortest digits that
 * round-trip; plain decimal notation for 1e-6 <= |v| < 1e21, else d.ddde+XX. */
static void format_double(double v, char out[40])
{
	if (v == 0) {
		strcpy(out, "0");
		return;
	}
	char tmp[40];
	int p;
	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* tmp: [-]d[.ddd]e[+-]XX */
	char digits[24];
	int nd = 0;
	const char *q = tmp;
	bool neg = false;
	if (*q == '-') {
		neg = true;
		q++;
	}
	for (; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9')
			digits[nd++] = *q;
	digits[nd] = '\0';
	int exp = atoi(q + 1);
	double a = fabs(v);
	char *o = out;
	if (neg)
		*o++ = '-';
	if (a >= 1e-6 && a < 1e21) {
		if (exp >= 0) {
			for (int i = 0; i <= exp || i < nd; i++) {
				if (i == exp + 1)
					*o++ = '.';
				*o++ = i < nd ? digits[i] : '0';
			}
		} else {
			*o++ = '0';
			*o++ = '.';
			for (int i = 0; i < -exp - 1; i++)
				*o++ = '0';
			for (int i = 0; i < nd; i++)
				*o++ = digits[i];
		}
		*o = '\0';
	} else {
		*o++ = digits[0];
		if (nd > 1) {
			*o++ = '.';
			for (int i = 1; i < nd; i++)
				*o++ = digits[i];
		}
		snprintf(o, 16, "e%c%02d", exp < 0 ? '-' : '+', (exp < 0 ? -exp : exp) % 1000);
	}
}

static void put_number(struct buf *b, const cJSON *item)
{
	const char *raw = number_raw(item);
	if (raw) {
		buf_puts(b, raw);
		return;
	}
	double d = item->valuedouble;
	char tmp[40];
	if (isnan(d) || isinf(d)) {
		buf_puts(b, "null");
		return;
	}
	if (d == floor(d) && fabs(d) < 9007199254740992.0)
		snprintf(tmp, sizeof(tmp), "%lld", (long long)d);
	else
		format_double(d, tmp);
	buf_puts(b, tmp);
}

/* ------------------------------------------------------------------ */
/* JSON printer                                                        */

static void json_string(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	const char *run = s;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *esc = NULL;
		char u[8];
		switch (*p) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		default:
			if (*p < 0x20) {
				snprintf(u, sizeof(u), "\\u%04x", *p);
				esc = u;
			}
		}
		if (esc) {
			buf_putn(b, run, (size_t)((const char *)p - run));
			buf_puts(b, esc);
			run = (const char *)p + 1;
		}
	}
	buf_puts(b, run);
	buf_putc(b, '"');
}

static void json_value(struct buf *b, const cJSON *item)
{
	if (!item || b->oom) {
		buf_puts(b, "null");
		return;
	}
	switch (item->type & 0xff) {
	case cJSON_False: buf_puts(b, "false"); break;
	case cJSON_True: buf_puts(b, "true"); break;
	case cJSON_NULL: buf_puts(b, "null"); break;
	case cJSON_Number: put_number(b, item); break;
	case cJSON_String: json_string(b, item->valuestring ? item->valuestring : ""); break;
	case cJSON_Raw: buf_puts(b, item->valuestring ? item->valuestring : "null"); break;
	case cJSON_Array:
		buf_putc(b, '[');
		for (const cJSON *c = item->child; c; c = c->next) {
			json_value(b, c);
			if (c->next)
				buf_putc(b, ',');
		}
		buf_putc(b, ']');
		break;
	case cJSON_Object:
		buf_putc(b, '{');
		for (const cJSON *c = item->child; c; c = c->next) {
			json_string(b, c->string ? c->string : "");
			buf_putc(b, ':');
			json_value(b, c);
			if (c->next)
				buf_putc(b, ',');
		}
		buf_putc(b, '}');
		break;
	default: buf_puts(b, "null");
	}
}

char *kube_json_print(const cJSON *obj)
{
	struct buf b = {0};
	json_value(&b, obj);
	return buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* JSON parser (RFC 8259, exact integers)                              */

struct jparser {
	const char *s, *end, *p;
	char *err;
	int depth;
	char *scratch; /* string decoding buffer */
	size_t scratch_cap;
	bool strict; /* a duplicate key is an error (kube_json_parse_strict) */
};

static void jerr(struct jparser *j, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void jerr(struct jparser *j, const char *at, const char *fmt, ...)
{
	if (j->err)
		return;
	size_t line = 1, col = 1;
	for (const char *q = j->s; q < at && q < j->end; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (asprintf(&j->err, "line %zu column %zu: %s", line, col, msg ? msg : "out of memory") < 0)
		j->err = NULL;
	free(msg);
	if (!j->err)
		j->err = strdup("out of memory");
}

static void jskip(struct jparser *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Go's quoteChar: 'x', '\n', '\x01'. */
static void jerr_char(struct jparser *j, const char *ctx)
{
	if (j->p >= j->end) {
		jerr(j, j->p, "unexpected end of JSON input");
		return;
	}
	unsigned char c = (unsigned char)*j->p;
	static const char esc[] = {'\a', 'a', '\b', 'b', '\f', 'f', '\n', 'n', '\r', 'r', '\t', 't', '\v', 'v', 0};
	for (const char *e = esc; *e; e += 2) {
		if (c == (unsigned char)e[0]) {
			jerr(j, j->p, "invalid character '\\%c' %s", e[1], ctx);
			return;
		}
	}
	if (c < 0x20 || c == 0x7f)
		jerr(j, j->p, "invalid character '\\x%02x' %s", c, ctx);
	else if (c >= 0x80)
		jerr(j, j->p, "invalid character 0x%02x %s", c, ctx);
	else
		jerr(j, j->p, "invalid character '%c' %s", c, ctx);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool scratch_reserve(struct jparser *j, size_t n)
{
	if (n <= j->scratch_cap)
		return true;
	size_t cap = j->scratch_cap ? j->scratch_cap : 256;
	while (cap < n)
		cap *= 2;
	char *p = realloc(j->scratch, cap);
	if (!p)
		return false;
	j->scratch = p;
	j->scratch_cap = cap;
	return true;
}

static int read_hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the string at j->p (on the opening quote) into j->scratch; returns its length or -1. */
static long jstring(struct jparser *j)
{
	const char *p = j->p + 1;
	const char *start = p;
	/* fast scan: no escapes */
	while (p < j->end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	size_t n = (size_t)(p - start);
	if (!scratch_reserve(j, n + 1)) {
		jerr(j, j->p, "out of memory");
		return -1;
	}
	memcpy(j->scratch, start, n);
	while (p < j->end && *p != '"') {
		if ((unsigned char)*p < 0x20) {
			j->p = p;
			jerr_char(j, "in string literal");
			return -1;
		}
		if (!scratch_reserve(j, n + 8)) {
			jerr(j, p, "out of memory");
			return -1;
		}
		if (*p != '\\') {
			j->scratch[n++] = *p++;
			continue;
		}
		if (p + 1 >= j->end)
			break;
		char e = p[1];
		p += 2;
		switch (e) {
		case '"': j->scratch[n++] = '"'; break;
		case '\\': j->scratch[n++] = '\\'; break;
		case '/': j->scratch[n++] = '/'; break;
		case 'b': j->scratch[n++] = '\b'; break;
		case 'f': j->scratch[n++] = '\f'; break;
		case 'n': j->scratch[n++] = '\n'; break;
		case 'r': j->scratch[n++] = '\r'; break;
		case 't': j->scratch[n++] = '\t'; break;
		case 'u': {
			int cp = j->end - p >= 4 ? read_hex4(p) : -1;
			if (cp < 0) {
				jerr(j, p, "invalid character in \\u hexadecimal character escape");
				return -1;
			}
			p += 4;
			unsigned u = (unsigned)cp;
			if (u >= 0xd800 && u < 0xdc00) {
				int lo = (j->end - p >= 6 && p[0] == '\\' && p[1] == 'u') ? read_hex4(p + 2) : -1;
				if (lo >= 0xdc00 && lo < 0xe000) {
					u = 0x10000 + ((u - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
					p += 6;
				} else {
					u = 0xfffd; /* lone surrogate, as Go decodes it */
				}
			} else if (u >= 0xdc00 && u < 0xe000) {
				u = 0xfffd;
			}
			n += put_utf8(j->scratch + n, u);
			break;
		}
		default:
			jerr(j, p - 1, "invalid character '%c' in string escape code", e);
			return -1;
		}
	}
	if (p >= j->end) {
		j->p = p;
		jerr(j, p, "unexpected end of JSON input");
		return -1;
	}
	j->scratch[n] = '\0';
	j->p = p + 1;
	return (long)n;
}

static cJSON *jvalue(struct jparser *j);

static cJSON *jnumber(struct jparser *j)
{
	const char *p = j->p, *start = p;
	bool integer = true;
	if (*p == '-')
		p++;
	if (p < j->end && *p == '0') {
		p++;
	} else if (p < j->end && *p >= '1' && *p <= '9') {
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	} else {
		j->p = p;
		jerr_char(j, "in numeric literal");
		return NULL;
	}
	if (p < j->end && *p == '.') {
		integer = false;
		p++;
		if (p >= j->end || *p < '0' || *p > '9') {
			j->p = p;
			jerr_char(j, "after decimal point in numeric literal");
			return NULL;
		}
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		integer = false;
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || *p < '0' || *p > '9') {
			j->p = p;
			jerr_char(j, "in exponent of numeric literal");
			return NULL;
		}
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	size_t n = (size_t)(p - start);
	char tmp[64];
	char *num = n < sizeof(tmp) ? tmp : malloc(n + 1);
	if (!num) {
		jerr(j, start, "out of memory");
		return NULL;
	}
	memcpy(num, start, n);
	num[n] = '\0';
	errno = 0;
	double d = strtod(num, NULL);
	cJSON *item = NULL;
	if (errno == ERANGE && isinf(d)) {
		jerr(j, start, "number %s out of range", num);
	} else {
		item = cJSON_CreateNumber(d);
		if (item && integer && !(item->valuestring = cj_strdup(num))) {
			cJSON_Delete(item);
			item = NULL;
		}
		if (!item)
			jerr(j, start, "out of memory");
	}
	if (num != tmp)
		free(num);
	j->p = p;
	return item;
}

static bool jliteral(struct jparser *j, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(j->end - j->p) >= n && memcmp(j->p, lit, n) == 0) {
		j->p += n;
		return true;
	}
	/* point at the first differing character */
	for (size_t i = 0; i < n && j->p < j->end && *j->p == lit[i]; i++)
		j->p++;
	jerr_char(j, "in literal");
	return false;
}

static cJSON *jobject(struct jparser *j)
{
	cJSON *obj = cJSON_CreateObject();
	if (!obj) {
		jerr(j, j->p, "out of memory");
		return NULL;
	}
	j->p++; /* { */
	jskip(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return obj;
	}
	for (;;) {
		jskip(j);
		if (j->p >= j->end || *j->p != '"') {
			jerr_char(j, "looking for beginning of object key string");
			goto fail;
		}
		const char *key_at = j->p;
		if (jstring(j) < 0)
			goto fail;
		char *key = cj_strdup(j->scratch);
		if (!key) {
			jerr(j, j->p, "out of memory");
			goto fail;
		}
		if (j->strict && cJSON_GetObjectItemCaseSensitive(obj, key)) {
			jerr(j, key_at, "duplicate key \"%s\"", key);
			cJSON_free(key);
			goto fail;
		}
		jskip(j);
		if (j->p >= j->end || *j->p != ':') {
			cJSON_free(key);
			jerr_char(j, "after object key");
			goto fail;
		}
		j->p++;
		cJSON *v = jvalue(j);
		if (!v) {
			cJSON_free(key);
			goto fail;
		}
		if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
			cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v); /* last wins, as Go does */
			cJSON_free(key);
		} else {
			v->string = key; /* the item owns its key; saves a copy */
			cJSON_AddItemToArray(obj, v);
		}
		jskip(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return obj;
		}
		jerr_char(j, "after object key:value pair");
		goto fail;
	}
fail:
	cJSON_Delete(obj);
	return NULL;
}

static cJSON *jarray(struct jparser *j)
{
	cJSON *arr = cJSON_CreateArray();
	if (!arr) {
		jerr(j, j->p, "out of memory");
		return NULL;
	}
	j->p++; /* [ */
	jskip(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return arr;
	}
	for (;;) {
		cJSON *v = jvalue(j);
		if (!v)
			goto fail;
		cJSON_AddItemToArray(arr, v);
		jskip(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return arr;
		}
		jerr_char(j, "after array element");
		goto fail;
	}
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *jvalue(struct jparser *j)
{
	jskip(j);
	if (j->p >= j->end) {
		jerr(j, j->p, "unexpected end of JSON input");
		return NULL;
	}
	if (++j->depth > MAX_JSON_DEPTH) {
		jerr(j, j->p, "exceeded max depth");
		return NULL;
	}
	cJSON *v = NULL;
	switch (*j->p) {
	case '{': v = jobject(j); break;
	case '[': v = jarray(j); break;
	case '"':
		if (jstring(j) >= 0 && !(v = cJSON_CreateString(j->scratch)))
			jerr(j, j->p, "out of memory");
		break;
	case 't':
		if (jliteral(j, "true"))
			v = cJSON_CreateTrue();
		break;
	case 'f':
		if (jliteral(j, "false"))
			v = cJSON_CreateFalse();
		break;
	case 'n':
		if (jliteral(j, "null"))
			v = cJSON_CreateNull();
		break;
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
			v = jnumber(j);
		else
			jerr_char(j, "looking for beginning of value");
	}
	j->depth--;
	if (!v && !j->err)
		jerr(j, j->p, "out of memory");
	return v;
}

static cJSON *json_parse(const char *text, size_t len, bool strict, char **err)
{
	if (err)
		*err = NULL;
	struct jparser j = {.s = text ? text : "", .p = text ? text : "", .end = (text ? text : "") + (text ? len : 0),
			    .strict = strict};
	if (j.end - j.p >= 3 && memcmp(j.p, "\xef\xbb\xbf", 3) == 0)
		j.p += 3;
	cJSON *v = jvalue(&j);
	if (v) {
		jskip(&j);
		if (j.p < j.end) {
			jerr_char(&j, "after top-level value");
			cJSON_Delete(v);
			v = NULL;
		}
	}
	free(j.scratch);
	if (!v) {
		if (err)
			*err = j.err;
		else
			free(j.err);
	}
	return v;
}

cJSON *kube_json_parse(const char *text, size_t len, char **err)
{
	return json_parse(text, len, false, err);
}

cJSON *kube_json_parse_strict(const char *text, size_t len, char **err)
{
	return json_parse(text, len, true, err);
}

/* ------------------------------------------------------------------ */
/* YAML scalar resolution (go-yaml v2 rules, as sigs.k8s.io/yaml uses) */

enum scalar_kind { SK_STRING, SK_NULL, SK_BOOL, SK_INT, SK_FLOAT };

struct resolved {
	enum scalar_kind kind;
	bool b;
	double d;
	char num[32]; /* canonical integer text for SK_INT */
	bool nonfinite;
};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	} else {
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '.') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/* strconv.ParseInt/ParseUint(s, 0, 64) after '_' removal. Returns 0 (int64), 1 (uint64) or -1. */
static int go_parse_int(const char *s, long long *iv, unsigned long long *uv)
{
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-') {
		neg = *p == '-';
		p++;
	}
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		base = 2;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
		base = 8;
		p += 2;
	} else if (p[0] == '0' && p[1]) {
		base = 8;
		p += 1;
	}
	if (!*p)
		return -1;
	unsigned long long v = 0;
	for (const char *q = p; *q; q++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (*q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (*q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
			return -1;
		v = v * (unsigned)base + (unsigned)d;
	}
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX + 1)
			return -1;
		*iv = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
		return 0;
	}
	if (s[0] == '+' && v > (unsigned long long)LLONG_MAX)
		return -1; /* ParseUint rejects a sign */
	if (v <= (unsigned long long)LLONG_MAX) {
		*iv = (long long)v;
		return 0;
	}
	*uv = v;
	return 1;
}

static void resolve_number(const char *plain, struct resolved *r);

static void resolve_plain(const char *in, struct resolved *r)
{
	static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
	static const char *const no[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
	static const char *const nul[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const nan_[] = {".nan", ".NaN", ".NAN", NULL};
	static const char *const inf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
	static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
	memset(r, 0, sizeof(*r));
	r->kind = SK_STRING;
	char c = in[0];
	bool map_hint = c == '\0' || strchr("yYnNtTfFoO~", c) != NULL;
	if (map_hint || c == '.' || c == '-' || c == '+') {
		if (in_list(in, yes)) {
			r->kind = SK_BOOL;
			r->b = true;
			return;
		}
		if (in_list(in, no)) {
			r->kind = SK_BOOL;
			return;
		}
		if (in_list(in, nul)) {
			r->kind = SK_NULL;
			return;
		}
		if (in_list(in, nan_) || in_list(in, inf) || in_list(in, ninf)) {
			r->kind = SK_FLOAT;
			r->nonfinite = true;
			return;
		}
	}
	if (map_hint)
		return;
	if (c == '.') {
		if (yaml_style_float(in)) {
			r->kind = SK_FLOAT;
			r->d = strtod(in, NULL);
		}
		return;
	}
	if (!((c >= '0' && c <= '9') || c == '-' || c == '+'))
		return;
	char stack[128];
	size_t inlen = strlen(in);
	char *plain = inlen < sizeof(stack) ? stack : malloc(inlen + 1);
	if (!plain)
		return; /* out of memory: leave it a string */
	size_t n = 0;
	for (const char *p = in; *p; p++)
		if (*p != '_')
			plain[n++] = *p;
	plain[n] = '\0';
	resolve_number(plain, r);
	if (plain != stack)
		free(plain);
}

static void resolve_number(const char *plain, struct resolved *r)
{
	long long iv;
	unsigned long long uv;
	int k = go_parse_int(plain, &iv, &uv);
	if (k == 0) {
		r->kind = SK_INT;
		r->d = (double)iv;
		snprintf(r->num, sizeof(r->num), "%lld", iv);
		return;
	}
	if (k == 1) {
		r->kind = SK_INT;
		r->d = (double)uv;
		snprintf(r->num, sizeof(r->num), "%llu", uv);
		return;
	}
	if (yaml_style_float(plain)) {
		errno = 0;
		double d = strtod(plain, NULL);
		if (errno == ERANGE && isinf(d))
			return; /* ParseFloat range error: stays a string */
		r->kind = SK_FLOAT;
		r->d = d;
		return;
	}
	/* go-yaml's binary forms with a sign are covered by go_parse_int */
}

/* ------------------------------------------------------------------ */
/* YAML parser                                                         */

#define MAX_DEPTH 1000

struct anchor {
	char *name;
	cJSON *node;
};

struct yparser {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t budget; /* nodes we may still create (alias expansion guard) */
	char *err;
	bool strict; /* a duplicate key is an error (kube_yaml_parse_strict) */
};

static void perr(struct yparser *y, const yaml_mark_t *m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(struct yparser *y, const yaml_mark_t *m, const char *fmt, ...)
{
	if (y->err)
		return;
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (asprintf(&y->err, "line %zu column %zu: %s", m ? m->line + 1 : 0, m ? m->column + 1 : 0,
		     msg ? msg : "out of memory") < 0)
		y->err = NULL;
	free(msg);
	if (!y->err)
		y->err = strdup("out of memory");
}

/* Advances to the next event (freeing the current one). */
static bool next_event(struct yparser *y)
{
	if (y->have_ev) {
		yaml_event_delete(&y->ev);
		y->have_ev = false;
	}
	if (!yaml_parser_parse(&y->p, &y->ev)) {
		const char *prob = y->p.problem ? y->p.problem : "unknown error";
		yaml_mark_t m = y->p.problem_mark;
		if (y->p.context) {
			char *msg = NULL;
			if (asprintf(&msg, "%s %s", prob, y->p.context) >= 0) {
				perr(y, &m, "%s", msg);
				free(msg);
				return false;
			}
		}
		perr(y, &m, "%s", prob);
		return false;
	}
	y->have_ev = true;
	return true;
}

static bool take_budget(struct yparser *y, size_t n)
{
	if (n > y->budget) {
		perr(y, &y->ev.start_mark, "document contains excessive aliasing");
		return false;
	}
	y->budget -= n;
	return true;
}

static size_t count_nodes(const cJSON *n)
{
	size_t c = 1;
	for (const cJSON *ch = n->child; ch; ch = ch->next)
		c += count_nodes(ch);
	return c;
}

static int add_anchor(struct yparser *y, const char *name, cJSON *node)
{
	/* a redefined anchor replaces the earlier one for later aliases */
	for (size_t i = 0; i < y->nanchors; i++) {
		if (strcmp(y->anchors[i].name, name) == 0) {
			y->anchors[i].node = node;
			return 0;
		}
	}
	if (y->nanchors == y->capanchors) {
		size_t cap = y->capanchors ? y->capanchors * 2 : 8;
		struct anchor *a = realloc(y->anchors, cap * sizeof(*a));
		if (!a)
			return -1;
		y->anchors = a;
		y->capanchors = cap;
	}
	y->anchors[y->nanchors].name = strdup(name);
	if (!y->anchors[y->nanchors].name)
		return -1;
	y->anchors[y->nanchors++].node = node;
	return 0;
}

static bool tag_is(const yaml_char_t *tag, const char *suffix)
{
	if (!tag)
		return false;
	const char *t = (const char *)tag;
	if (strncmp(t, "tag:yaml.org,2002:", 18) == 0)
		return strcmp(t + 18, suffix) == 0;
	if (t[0] == '!' && t[1] == '!')
		return strcmp(t + 2, suffix) == 0;
	return false;
}

static cJSON *scalar_to_json(struct yparser *y, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	const yaml_char_t *tag = ev->data.scalar.tag;
	bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (tag_is(tag, "str") || tag_is(tag, "binary") || tag_is(tag, "timestamp") || (!plain && !tag) ||
	    (!plain && tag && !tag_is(tag, "int") && !tag_is(tag, "float") && !tag_is(tag, "bool") &&
	     !tag_is(tag, "null")))
		return cJSON_CreateString(v);
	struct resolved r;
	resolve_plain(v, &r);
	if (tag && (tag_is(tag, "int") || tag_is(tag, "float") || tag_is(tag, "bool") || tag_is(tag, "null"))) {
		bool ok = (tag_is(tag, "int") && r.kind == SK_INT) ||
			  (tag_is(tag, "float") && (r.kind == SK_FLOAT || r.kind == SK_INT)) ||
			  (tag_is(tag, "bool") && r.kind == SK_BOOL) || (tag_is(tag, "null") && r.kind == SK_NULL);
		if (!ok) {
			perr(y, &ev->start_mark, "cannot decode %s `%s` as a %s", "!!str", v, (const char *)tag);
			return NULL;
		}
	}
	switch (r.kind) {
	case SK_NULL: return cJSON_CreateNull();
	case SK_BOOL: return cJSON_CreateBool(r.b);
	case SK_INT: {
		cJSON *n = cJSON_CreateNumber(r.d);
		if (n && !(n->valuestring = cj_strdup(r.num))) {
			cJSON_Delete(n);
			return NULL;
		}
		return n;
	}
	case SK_FLOAT:
		if (r.nonfinite) {
			perr(y, &ev->start_mark, "json: unsupported value: %s", v);
			return NULL;
		}
		return cJSON_CreateNumber(r.d);
	default: return cJSON_CreateString(v);
	}
}

/* Mapping keys become strings: the scalar's canonical text as sigs.k8s.io/yaml prints it. */
static char *key_string(const cJSON *k)
{
	char tmp[48];
	switch (k->type & 0xff) {
	case cJSON_String: return cj_strdup(k->valuestring);
	case cJSON_True: return cj_strdup("true");
	case cJSON_False: return cj_strdup("false");
	case cJSON_NULL: return cj_strdup("null");
	case cJSON_Number:
		if (number_raw(k))
			return cj_strdup(k->valuestring);
		format_double(k->valuedouble, tmp);
		return cj_strdup(tmp);
	default: return NULL;
	}
}

static cJSON *parse_node(struct yparser *y, int depth);

static void merge_into(cJSON *map, const cJSON *src)
{
	for (const cJSON *c = src->child; c; c = c->next) {
		if (cJSON_GetObjectItemCaseSensitive(map, c->string))
			continue;
		cJSON *dup = cJSON_Duplicate(c, true);
		if (dup)
			cJSON_AddItemToObject(map, c->string, dup);
	}
}

static cJSON *parse_mapping(struct yparser *y, int depth)
{
	cJSON *map = cJSON_CreateObject();
	cJSON *merges = NULL; /* merged maps, applied after explicit keys */
	if (!map)
		goto oom;
	if (y->ev.data.mapping_start.anchor && add_anchor(y, (const char *)y->ev.data.mapping_start.anchor, map))
		goto oom;
	for (;;) {
		if (!next_event(y))
			goto fail;
		if (y->ev.type == YAML_MAPPING_END_EVENT)
			break;
		yaml_mark_t kmark = y->ev.start_mark;
		bool merge_key = y->ev.type == YAML_SCALAR_EVENT &&
				 y->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
				 strcmp((const char *)y->ev.data.scalar.value, "<<") == 0;
		cJSON *k = parse_node(y, depth + 1);
		if (!k)
			goto fail;
		if (cJSON_IsObject(k) || cJSON_IsArray(k)) {
			cJSON_Delete(k);
			perr(y, &kmark, "mapping keys must be scalars");
			goto fail;
		}
		char *key = key_string(k);
		cJSON_Delete(k);
		if (!key)
			goto oom;
		if (!next_event(y)) {
			cJSON_free(key);
			goto fail;
		}
		yaml_mark_t vmark = y->ev.start_mark;
		cJSON *v = parse_node(y, depth + 1);
		if (!v) {
			cJSON_free(key);
			goto fail;
		}
		if (merge_key) {
			cJSON_free(key);
			if (!merges && !(merges = cJSON_CreateArray())) {
				cJSON_Delete(v);
				goto oom;
			}
			if (cJSON_IsObject(v)) {
				cJSON_AddItemToArray(merges, v);
			} else if (cJSON_IsArray(v)) {
				cJSON *m;
				while ((m = cJSON_DetachItemFromArray(v, 0)) != NULL) {
					if (!cJSON_IsObject(m)) {
						cJSON_Delete(m);
						cJSON_Delete(v);
						perr(y, &vmark, "map merge requires map or sequence of maps as the value");
						goto fail;
					}
					cJSON_AddItemToArray(merges, m);
				}
				cJSON_Delete(v);
			} else {
				cJSON_Delete(v);
				perr(y, &vmark, "map merge requires map or sequence of maps as the value");
				goto fail;
			}
			continue;
		}
		/* duplicate key: the last value wins, at the first key's position (strict: an error,
		 * as sigs.k8s.io/yaml's strict decoding: "key \"x\" already set in map") */
		if (y->strict && cJSON_GetObjectItemCaseSensitive(map, key)) {
			perr(y, &kmark, "key \"%s\" already set in map", key);
			cJSON_free(key);
			cJSON_Delete(v);
			goto fail;
		}
		if (cJSON_GetObjectItemCaseSensitive(map, key)) {
			cJSON_ReplaceItemInObjectCaseSensitive(map, key, v);
			cJSON_free(key);
		} else {
			v->string = key; /* the item owns its key */
			cJSON_AddItemToArray(map, v);
		}
	}
	/* earlier merge sources win over later ones; explicit keys win over all */
	for (const cJSON *m = merges ? merges->child : NULL; m; m = m->next)
		merge_into(map, m);
	cJSON_Delete(merges);
	return map;
oom:
	perr(y, &y->ev.start_mark, "out of memory");
fail:
	cJSON_Delete(merges);
	/* anchors may point into map; they are dropped with the whole parse on failure */
	cJSON_Delete(map);
	return NULL;
}

static cJSON *parse_sequence(struct yparser *y, int depth)
{
	cJSON *seq = cJSON_CreateArray();
	if (!seq)
		goto oom;
	if (y->ev.data.sequence_start.anchor && add_anchor(y, (const char *)y->ev.data.sequence_start.anchor, seq))
		goto oom;
	for (;;) {
		if (!next_event(y))
			goto fail;
		if (y->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		cJSON *v = parse_node(y, depth + 1);
		if (!v)
			goto fail;
		cJSON_AddItemToArray(seq, v);
	}
	return seq;
oom:
	perr(y, &y->ev.start_mark, "out of memory");
fail:
	cJSON_Delete(seq);
	return NULL;
}

/* Builds the node starting at the current event; leaves the node's last event current. */
static cJSON *parse_node(struct yparser *y, int depth)
{
	if (depth > MAX_DEPTH) {
		perr(y, &y->ev.start_mark, "exceeded max depth of %d", MAX_DEPTH);
		return NULL;
	}
	if (!take_budget(y, 1))
		return NULL;
	switch (y->ev.type) {
	case YAML_SCALAR_EVENT: {
		cJSON *s = scalar_to_json(y, &y->ev);
		if (!s) {
			perr(y, &y->ev.start_mark, "out of memory");
			return NULL;
		}
		if (y->ev.data.scalar.anchor && add_anchor(y, (const char *)y->ev.data.scalar.anchor, s)) {
			cJSON_Delete(s);
			perr(y, &y->ev.start_mark, "out of memory");
			return NULL;
		}
		return s;
	}
	case YAML_SEQUENCE_START_EVENT: return parse_sequence(y, depth);
	case YAML_MAPPING_START_EVENT: return parse_mapping(y, depth);
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)y->ev.data.alias.anchor;
		for (size_t i = y->nanchors; i-- > 0;) {
			if (strcmp(y->anchors[i].name, name) == 0) {
				if (!take_budget(y, count_nodes(y->anchors[i].node)))
					return NULL;
				cJSON *d = cJSON_Duplicate(y->anchors[i].node, true);
				if (!d) {
					perr(y, &y->ev.start_mark, "out of memory");
					return NULL;
				}
				if (!(d->type & cJSON_StringIsConst))
					cJSON_free(d->string); /* the anchored node's key, if it was a map value */
				d->string = NULL;
				d->type &= ~cJSON_StringIsConst;
				return d;
			}
		}
		perr(y, &y->ev.start_mark, "unknown anchor '%s' referenced", name);
		return NULL;
	}
	default: perr(y, &y->ev.start_mark, "did not find expected node content"); return NULL;
	}
}

static void clear_anchors(struct yparser *y)
{
	for (size_t i = 0; i < y->nanchors; i++)
		free(y->anchors[i].name);
	y->nanchors = 0;
}

static cJSON *yaml_parse(const char *text, size_t len, bool strict, char **err)
{
	if (err)
		*err = NULL;
	/* JSON fast path (kubectl sends JSON as is); anything it rejects goes to the YAML parser */
	const char *q = text ? text : "";
	size_t off = (len >= 3 && memcmp(q, "\xef\xbb\xbf", 3) == 0) ? 3 : 0;
	while (off < len && (q[off] == ' ' || q[off] == '\t' || q[off] == '\n' || q[off] == '\r'))
		off++;
	if (off < len && (q[off] == '{' || q[off] == '[')) {
		cJSON *v = json_parse(q + off, len - off, strict, NULL);
		if (v) {
			cJSON *docs = cJSON_CreateArray();
			if (!docs) {
				cJSON_Delete(v);
				if (err)
					*err = strdup("out of memory");
				return NULL;
			}
			cJSON_AddItemToArray(docs, v);
			return docs;
		}
	}
	struct yparser y;
	memset(&y, 0, sizeof(y));
	y.strict = strict;
	cJSON *docs = cJSON_CreateArray();
	if (!docs || !yaml_parser_initialize(&y.p)) {
		cJSON_Delete(docs);
		if (err)
			*err = strdup("out of memory");
		return NULL;
	}
	/* alias expansion guard: generous for real manifests, fatal for alias bombs */
	y.budget = 4 * len + 1000000;
	yaml_parser_set_input_string(&y.p, (const unsigned char *)(text ? text : ""), text ? len : 0);
	bool ok = false;
	for (;;) {
		if (!next_event(&y))
			break;
		if (y.ev.type == YAML_STREAM_END_EVENT) {
			ok = true;
			break;
		}
		if (y.ev.type != YAML_DOCUMENT_START_EVENT)
			continue; /* STREAM_START */
		if (!next_event(&y))
			break;
		cJSON *doc = parse_node(&y, 0);
		if (!doc)
			break;
		if (!next_event(&y) || y.ev.type != YAML_DOCUMENT_END_EVENT) {
			cJSON_Delete(doc);
			if (!y.err)
				perr(&y, &y.ev.start_mark, "expected the end of the document");
			break;
		}
		clear_anchors(&y); /* anchors are document-scoped */
		if (cJSON_IsNull(doc))
			cJSON_Delete(doc); /* empty document */
		else
			cJSON_AddItemToArray(docs, doc);
	}
	if (y.have_ev)
		yaml_event_delete(&y.ev);
	yaml_parser_delete(&y.p);
	clear_anchors(&y);
	free(y.anchors);
	if (!ok) {
		cJSON_Delete(docs);
		if (err)
			*err = y.err ? y.err : strdup("unknown YAML error");
		else
			free(y.err);
		return NULL;
	}
	free(y.err);
	return docs;
}

cJSON *kube_yaml_parse(const char *text, size_t len, char **err)
{
	return yaml_parse(text, len, false, err);
}

cJSON *kube_yaml_parse_strict(const char *text, size_t len, char **err)
{
	return yaml_parse(text, len, true, err);
}

static cJSON *first_document(cJSON *docs, char **err)
{
	if (!docs)
		return NULL;
	cJSON *first = cJSON_DetachItemFromArray(docs, 0);
	cJSON_Delete(docs);
	if (!first && err)
		*err = strdup("no document");
	return first;
}

cJSON *kube_yaml_parse_one(const char *text, size_t len, char **err)
{
	return first_document(kube_yaml_parse(text, len, err), err);
}

cJSON *kube_yaml_parse_one_strict(const char *text, size_t len, char **err)
{
	return first_document(kube_yaml_parse_strict(text, len, err), err);
}

/* ------------------------------------------------------------------ */
/* YAML emitter                                                        */

/* Would s, written as a plain scalar, read back as this same string? */
static bool plain_safe(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return false;
	struct resolved r;
	resolve_plain(s, &r);
	if (r.kind != SK_STRING)
		return false;
	if (strchr("-?:,[]{}#&*!|>'\"%@` \t", s[0]))
		return false;
	if (s[n - 1] == ' ' || s[n - 1] == ':' || s[n - 1] == '\t')
		return false;
	if (strncmp(s, "...", 3) == 0 || strcmp(s, "<<") == 0)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		if (*p == ':' && (p[1] == ' ' || p[1] == '\t'))
			return false;
		if (*p == ' ' && p[1] == '#')
			return false;
		/* leave characters libyaml may treat specially (BOM, NEL, LS, PS) to quoting */
		if (*p == 0xef && p[1] == 0xbb && p[2] == 0xbf)
			return false;
		if (*p == 0xc2 && p[1] == 0x85)
			return false;
		if (*p == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
			return false;
	}
	return true;
}

static void yaml_string(struct buf *b, const char *s)
{
	if (plain_safe(s)) {
		buf_puts(b, s);
		return;
	}
	buf_putc(b, '"');
	const char *run = s;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8] = {0};
		switch (*p) {
		case '"': strcpy(esc, "\\\""); break;
		case '\\': strcpy(esc, "\\\\"); break;
		case '\n': strcpy(esc, "\\n"); break;
		case '\r': strcpy(esc, "\\r"); break;
		case '\t': strcpy(esc, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				snprintf(esc, sizeof(esc), "\\x%02x", *p);
			else if (*p == 0xc2 && p[1] == 0x85)
				strcpy(esc, "\\N");
			else if (*p == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
				strcpy(esc, p[2] == 0xa8 ? "\\L" : "\\P");
			else if (*p == 0xef && p[1] == 0xbb && p[2] == 0xbf)
				strcpy(esc, "\\uFEFF");
		}
		if (esc[0]) {
			buf_putn(b, run, (size_t)((const char *)p - run));
			buf_puts(b, esc);
			/* multi-byte sequences replaced by one escape */
			if (*p == 0xc2)
				p += 1;
			else if (*p == 0xe2 || *p == 0xef)
				p += 2;
			run = (const char *)p + 1;
		}
	}
	buf_puts(b, run);
	buf_putc(b, '"');
}

static void yaml_scalar(struct buf *b, const cJSON *item)
{
	switch (item->type & 0xff) {
	case cJSON_False: buf_puts(b, "false"); break;
	case cJSON_True: buf_puts(b, "true"); break;
	case cJSON_NULL: buf_puts(b, "null"); break;
	case cJSON_Number: put_number(b, item); break;
	case cJSON_String: yaml_string(b, item->valuestring ? item->valuestring : ""); break;
	default: buf_puts(b, "null");
	}
}

static bool is_collection(const cJSON *i) { return cJSON_IsObject(i) || cJSON_IsArray(i); }
static bool is_empty_collection(const cJSON *i) { return is_collection(i) && !i->child; }

static void indent(struct buf *b, int n)
{
	for (int i = 0; i < n; i++)
		buf_putc(b, ' ');
}

static void yaml_node(struct buf *b, const cJSON *item, int ind, bool inline_first);

/* Emits the value that follows "key:" or "- ". */
static void yaml_value_after(struct buf *b, const cJSON *v, int ind, bool in_seq)
{
	if (is_empty_collection(v)) {
		buf_puts(b, cJSON_IsObject(v) ? " {}\n" : " []\n");
	} else if (cJSON_IsObject(v)) {
		if (in_seq) {
			buf_putc(b, ' ');
			yaml_node(b, v, ind + 2, true);
		} else {
			buf_putc(b, '\n');
			yaml_node(b, v, ind + 2, false);
		}
	} else if (cJSON_IsArray(v)) {
		if (in_seq) {
			buf_putc(b, ' ');
			yaml_node(b, v, ind + 2, true);
		} else {
			buf_putc(b, '\n');
			yaml_node(b, v, ind, false); /* sequences in maps are not indented (kubectl style) */
		}
	} else {
		buf_putc(b, ' ');
		yaml_scalar(b, v);
		buf_putc(b, '\n');
	}
}

/* inline_first: the first line continues the current one (after "- "). */
static void yaml_node(struct buf *b, const cJSON *item, int ind, bool inline_first)
{
	bool first = true;
	if (cJSON_IsObject(item)) {
		for (const cJSON *c = item->child; c; c = c->next) {
			if (!(first && inline_first))
				indent(b, ind);
			first = false;
			const char *key = c->string ? c->string : "";
			if (strlen(key) > 1000) {
				/* YAML limits implicit keys to 1024 characters: use an explicit "? key" */
				buf_puts(b, "? ");
				yaml_string(b, key);
				buf_putc(b, '\n');
				indent(b, ind);
			} else {
				yaml_string(b, key);
			}
			buf_putc(b, ':');
			yaml_value_after(b, c, ind, false);
		}
	} else if (cJSON_IsArray(item)) {
		for (const cJSON *c = item->child; c; c = c->next) {
			if (!(first && inline_first))
				indent(b, ind);
			first = false;
			buf_putc(b, '-');
			yaml_value_after(b, c, ind, true);
		}
	}
}

char *kube_yaml_emit(const cJSON *obj)
{
	struct buf b = {0};
	if (!obj) {
		buf_puts(&b, "null\n");
	} else if (is_empty_collection(obj)) {
		buf_puts(&b, cJSON_IsObject(obj) ? "{}\n" : "[]\n");
	} else if (is_collection(obj)) {
		yaml_node(&b, obj, 0, false);
	} else {
		yaml_scalar(&b, obj);
		buf_putc(&b, '\n');
	}
	return buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* dotted paths                                                        */

cJSON *kube_obj_get(const cJSON *obj, const char *path)
{
	if (!obj || !path)
		return NULL;
	const cJSON *cur = obj;
	const char *p = path;
	char seg[256];
	while (cur) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(seg) || !cJSON_IsObject(cur))
			return NULL;
		memcpy(seg, p, n);
		seg[n] = '\0';
		cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
		if (!dot)
			return (cJSON *)cur;
		p = dot + 1;
	}
	return NULL;
}

const char *kube_obj_get_string(const cJSON *obj, const char *path)
{
	const cJSON *v = kube_obj_get(obj, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kube_obj_set(cJSON *obj, const char *path, cJSON *item)
{
	if (!item)
		return -1;
	if (!cJSON_IsObject(obj) || !path || !*path) {
		cJSON_Delete(item);
		return -1;
	}
	cJSON *cur = obj;
	const char *p = path;
	char seg[256];
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n == 0 || n >= sizeof(seg)) {
			cJSON_Delete(item);
			return -1;
		}
		memcpy(seg, p, n);
		seg[n] = '\0';
		cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, seg);
		if (!dot) {
			bool ok = next ? cJSON_ReplaceItemInObjectCaseSensitive(cur, seg, item)
				       : cJSON_AddItemToObject(cur, seg, item);
			if (!ok) {
				cJSON_Delete(item);
				return -1;
			}
			return 0;
		}
		if (!cJSON_IsObject(next)) {
			cJSON *o = cJSON_CreateObject();
			if (!o) {
				cJSON_Delete(item);
				return -1;
			}
			bool ok = next ? cJSON_ReplaceItemInObjectCaseSensitive(cur, seg, o) : cJSON_AddItemToObject(cur, seg, o);
			if (!ok) {
				cJSON_Delete(o);
				cJSON_Delete(item);
				return -1;
			}
			next = o;
		}
		cur = next;
		p = dot + 1;
	}
}

int kube_obj_set_string(cJSON *obj, const char *path, const char *v)
{
	if (!v)
		return -1;
	return kube_obj_set(obj, path, cJSON_CreateString(v));
}

/* ------------------------------------------------------------------ */
/* metadata                                                            */

static const cJSON *meta(const cJSON *obj) { return cJSON_GetObjectItemCaseSensitive(obj, "metadata"); }

static const char *meta_string(const cJSON *obj, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta(obj), field);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *kube_meta_name(const cJSON *obj) { return meta_string(obj, "name"); }
const char *kube_meta_namespace(const cJSON *obj) { return meta_string(obj, "namespace"); }
const char *kube_meta_uid(const cJSON *obj) { return meta_string(obj, "uid"); }
const char *kube_meta_resource_version(const cJSON *obj) { return meta_string(obj, "resourceVersion"); }

const cJSON *kube_meta_labels(const cJSON *obj)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(meta(obj), "labels");
	return cJSON_IsObject(l) ? l : NULL;
}

const cJSON *kube_meta_annotations(const cJSON *obj)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(meta(obj), "annotations");
	return cJSON_IsObject(a) ? a : NULL;
}

const char *kube_meta_label(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(kube_meta_labels(obj), key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *kube_meta_annotation(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(kube_meta_annotations(obj), key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ------------------------------------------------------------------ */
/* owner references                                                    */

static const cJSON *owner_refs(const cJSON *obj)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(meta(obj), "ownerReferences");
	return cJSON_IsArray(r) ? r : NULL;
}

bool kube_owner_ref_has(const cJSON *obj, const char *uid)
{
	const cJSON *r;
	if (!uid)
		return false;
	cJSON_ArrayForEach(r, owner_refs(obj))
	{
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "uid");
		if (cJSON_IsString(u) && strcmp(u->valuestring, uid) == 0)
			return true;
	}
	return false;
}

const cJSON *kube_owner_ref_controller(const cJSON *obj)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, owner_refs(obj))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")))
			return r;
	}
	return NULL;
}

int kube_owner_ref_set(cJSON *obj, const char *api_version, const char *kind, const char *name, const char *uid,
		       bool controller)
{
	if (!cJSON_IsObject(obj) || !api_version || !kind || !name || !uid)
		return -1;
	cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (!cJSON_IsObject(m)) {
		if (kube_obj_set(obj, "metadata", cJSON_CreateObject()) != 0)
			return -1;
		m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	}
	cJSON *refs = cJSON_GetObjectItemCaseSensitive(m, "ownerReferences");
	if (!cJSON_IsArray(refs)) {
		if (kube_obj_set(m, "ownerReferences", cJSON_CreateArray()) != 0)
			return -1;
		refs = cJSON_GetObjectItemCaseSensitive(m, "ownerReferences");
	}
	cJSON *ref = cJSON_CreateObject();
	if (!ref)
		return -1;
	if (!cJSON_AddStringToObject(ref, "apiVersion", api_version) || !cJSON_AddStringToObject(ref, "kind", kind) ||
	    !cJSON_AddStringToObject(ref, "name", name) || !cJSON_AddStringToObject(ref, "uid", uid) ||
	    (controller && (!cJSON_AddTrueToObject(ref, "controller") || !cJSON_AddTrueToObject(ref, "blockOwnerDeletion")))) {
		cJSON_Delete(ref);
		return -1;
	}
	int i = 0;
	cJSON *r;
	cJSON_ArrayForEach(r, refs)
	{
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "uid");
		if (cJSON_IsString(u) && strcmp(u->valuestring, uid) == 0)
			return cJSON_ReplaceItemInArray(refs, i, ref) ? 0 : (cJSON_Delete(ref), -1);
		i++;
	}
	if (!cJSON_AddItemToArray(refs, ref)) {
		cJSON_Delete(ref);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* conditions                                                          */

const cJSON *kube_condition_find(const cJSON *conditions, const char *type)
{
	const cJSON *c;
	if (!type || !cJSON_IsArray(conditions))
		return NULL;
	cJSON_ArrayForEach(c, conditions)
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
			return c;
	}
	return NULL;
}

/* Sets a string field; returns true when the value changed. */
static bool set_field_string(cJSON *o, const char *key, const char *v, bool *oom)
{
	cJSON *cur = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsString(cur) && strcmp(cur->valuestring, v) == 0)
		return false;
	if (kube_obj_set_string(o, key, v) != 0)
		*oom = true;
	return true;
}

bool kube_condition_set(cJSON *status, const char *type, const char *status_value, const char *reason,
			const char *message, long long observed_generation, const char *now_rfc3339)
{
	if (!cJSON_IsObject(status) || !type || !status_value)
		return false;
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		if (kube_obj_set(status, "conditions", cJSON_CreateArray()) != 0)
			return false;
		conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	}
	bool oom = false;
	cJSON *c = (cJSON *)kube_condition_find(conds, type);
	if (!c) {
		c = cJSON_CreateObject();
		if (!c)
			return false;
		cJSON_AddStringToObject(c, "type", type);
		cJSON_AddStringToObject(c, "status", status_value);
		if (observed_generation >= 0)
			cJSON_AddItemToObject(c, "observedGeneration", kube_json_create_int64(observed_generation));
		if (now_rfc3339)
			cJSON_AddStringToObject(c, "lastTransitionTime", now_rfc3339);
		if (reason)
			cJSON_AddStringToObject(c, "reason", reason);
		if (message)
			cJSON_AddStringToObject(c, "message", message);
		cJSON_AddItemToArray(conds, c);
		return true;
	}
	bool changed = false;
	if (set_field_string(c, "status", status_value, &oom)) {
		changed = true;
		if (now_rfc3339)
			set_field_string(c, "lastTransitionTime", now_rfc3339, &oom);
	}
	if (reason && set_field_string(c, "reason", reason, &oom))
		changed = true;
	if (message && set_field_string(c, "message", message, &oom))
		changed = true;
	if (observed_generation >= 0) {
		int64_t cur;
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
		if (kube_json_get_int64(g, &cur) != 0 || cur != observed_generation) {
			if (kube_obj_set(c, "observedGeneration", kube_json_create_int64(observed_generation)) != 0)
				oom = true;
			changed = true;
		}
	}
	return changed && !oom;
}

/* ------------------------------------------------------------------ */
/* time                                                                */

void kube_time_rfc3339(char buf[32], time_t t)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void kube_time_micro(char buf[40], double t)
{
	time_t secs = (time_t)floor(t);
	long usec = (long)llround((t - (double)secs) * 1e6);
	if (usec >= 1000000) {
		secs++;
		usec -= 1000000;
	}
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(buf, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 40 - n, ".%06dZ", (int)(usec % 1000000));
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int kube_time_parse_rfc3339(const char *s, time_t *out)
{
	if (!s || strlen(s) < 20)
		return -1;
	int Y, M, D, h, m, sec;
	if (digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' || digits(s + 8, 2, &D) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = (oh * 3600L + om * 60L) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	struct tm tm = {0};
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	if (t == (time_t)-1 && !(Y == 1969 && M == 12 && D == 31))
		return -1;
	*out = t - off;
	return 0;
}

char *kube_read_file(const char *path, size_t max_bytes, size_t *len, int *errnum)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*errnum = errno;
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	int e = 0;
	while (buf) {
		if (n == cap) {
			if (max_bytes && cap >= max_bytes) {
				e = EFBIG;
				break;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			break;
		}
		if (r == 0) {
			close(fd);
			buf[n] = '\0';
			if (len)
				*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	close(fd);
	free(buf);
	*errnum = e ? e : ENOMEM;
	return NULL;
}

bool kube_json_add(cJSON *o, const char *key, cJSON *v)
{
	if (!v)
		return false;
	if (!cJSON_AddItemToObject(o, key, v)) {
		cJSON_Delete(v);
		return false;
	}
	return true;
}
