/* The filter and prioritize answers read straight from the response bytes, without a cJSON tree
 * (an ExtenderFilterResult or HostPriorityList of 1,000 nodes is thousands of allocations; see
 * docs/benchmarks.md "Extenders"). The fast path covers what extenders send in practice: strict
 * RFC 8259 JSON, keys and node names without escapes, integer scores of at most 15 digits. On
 * anything else (an error answer, an escape, a float score, a syntax error, deep nesting) it
 * returns 0 and the caller decodes through cJSON (sk_extender_filter_decode /
 * sk_extender_prioritize_decode in extender.c), so both paths give the same result; the lookups
 * follow sk_extender_rget: the first exact key, else the first case-insensitive one.
 * scheduler/tests/test_extender_fast.c compares the two on a table and on mutated bodies. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/framework/extender_priv.h"

#define MAX_DEPTH 64

struct span {
	const char *p; /* NULL: absent */
	const char *end;
};

static const char *ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The 4 hex digits at p as a number, -1 when not. */
static long hex4(const char *p, const char *end)
{
	if (end - p < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* A string starting at p ('"'); returns the position after its closing quote, NULL when invalid
 * or holding a control character. *escaped: it has a backslash escape. */
static const char *scan_string(const char *p, const char *end, bool *escaped)
{
	*escaped = false;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		*escaped = true;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			/* UTF-16 surrogates as cJSON checks them: a low one alone, or a high one not followed
			 * by \u and a low one, makes the body invalid */
			long u = hex4(p + 1, end);
			if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
				return NULL;
			p += 4;
			if (u >= 0xD800 && u <= 0xDBFF) {
				long lo = end - p > 2 && p[1] == '\\' && p[2] == 'u' ? hex4(p + 3, end) : -1;
				if (lo < 0xDC00 || lo > 0xDFFF)
					return NULL;
				p += 6;
			}
		} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
			return NULL;
		}
	}
	return NULL;
}

static const char *scan_number_rfc(const char *p, const char *end, bool *plain);

static const char *scan_digits(const char *p, const char *end)
{
	const char *s = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* RFC 8259 number of at most 63 characters (cJSON reads no more). *plain: an integer without
 * fraction or exponent. */
static const char *scan_number(const char *p, const char *end, bool *plain)
{
	const char *start = p, *e = scan_number_rfc(p, end, plain);
	return e && e - start <= 63 ? e : NULL;
}

static const char *scan_number_rfc(const char *p, const char *end, bool *plain)
{
	*plain = true;
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = scan_digits(p, end)))
		return NULL;
	if (p < end && *p == '.') {
		*plain = false;
		if (!(p = scan_digits(p + 1, end)))
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*plain = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = scan_digits(p, end)))
			return NULL;
	}
	return p;
}

static const char *scan_value(const char *p, const char *end, int depth);

static const char *scan_container(const char *p, const char *end, int depth, bool object)
{
	char close = object ? '}' : ']';
	p = ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (object) {
			bool esc;
			if (p >= end || *p != '"' || !(p = scan_string(p, end, &esc)))
				return NULL;
			p = ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = ws(p + 1, end);
		}
		if (!(p = scan_value(p, end, depth + 1)))
			return NULL;
		p = ws(p, end);
		if (p < end && *p == ',') {
			p = ws(p + 1, end);
			continue;
		}
		return p < end && *p == close ? p + 1 : NULL;
	}
}

/* One value at p (no leading whitespace); the position after it, or NULL. */
static const char *scan_value(const char *p, const char *end, int depth)
{
	if (p >= end || depth > MAX_DEPTH)
		return NULL;
	bool flag;
	switch (*p) {
	case '{':
	case '[':
		return scan_container(p, end, depth, *p == '{');
	case '"':
		return scan_string(p, end, &flag);
	case 't':
		return end - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
	case 'f':
		return end - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
	case 'n':
		return end - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
	default:
		return scan_number(p, end, &flag);
	}
}

static bool ieq(const char *a, size_t n, const char *k)
{
	size_t i = 0;
	for (; i < n && k[i]; i++) {
		char x = a[i], y = k[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return i == n && !k[i];
}

/* An object at p scanned strictly, as scan_container, picking the values of keys k[0..nk) on the
 * way as lookup() does (one pass instead of a validation and a lookup); *esc_key: a key had an
 * escape (its text could be any of them). The position after it, or NULL. */
static const char *scan_object_pick(const char *p, const char *end, int depth, const char *const *k, int nk,
				    struct span *out, bool *esc_key)
{
	struct span ci[8] = { 0 };
	for (int i = 0; i < nk; i++)
		out[i].p = NULL;
	*esc_key = false;
	p = ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		bool esc;
		const char *ks = p + 1, *ke;
		if (p >= end || *p != '"' || !(ke = scan_string(p, end, &esc)))
			return NULL;
		*esc_key |= esc;
		p = ws(ke, end);
		if (p >= end || *p != ':')
			return NULL;
		p = ws(p + 1, end);
		const char *vs = p;
		if (!(p = scan_value(p, end, depth + 1)))
			return NULL;
		size_t kn = (size_t)(ke - 1 - ks);
		for (int i = 0; !esc && i < nk; i++) {
			if (!out[i].p && strlen(k[i]) == kn && !memcmp(ks, k[i], kn))
				out[i] = (struct span){ vs, p };
			else if (!ci[i].p && ieq(ks, kn, k[i]))
				ci[i] = (struct span){ vs, p };
		}
		p = ws(p, end);
		if (p < end && *p == ',') {
			p = ws(p + 1, end);
			continue;
		}
		if (p >= end || *p != '}')
			return NULL;
		break;
	}
	for (int i = 0; i < nk; i++)
		if (!out[i].p)
			out[i] = ci[i];
	return p + 1;
}

/* ---- after parse_top validated the body: skipping without checks (a third of the work) ---- */

/* Past the string at p ('"'); *escaped: it holds a backslash. */
static const char *skip_string(const char *p, bool *escaped)
{
	*escaped = false;
	for (p++;; p++) {
		if (*p == '"')
			return p + 1;
		if (*p == '\\') {
			*escaped = true;
			p++;
		}
	}
}

static const char *skip_value(const char *p)
{
	bool esc;
	if (*p == '"')
		return skip_string(p, &esc);
	if (*p != '{' && *p != '[') {
		while (*p && !strchr(",}] \t\n\r", *p))
			p++;
		return p;
	}
	int depth = 0;
	for (;; p++) {
		if (*p == '"') {
			p = skip_string(p, &esc) - 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return p + 1;
		}
	}
}


/* The values of keys k[0..nk) in the (valid) object o, as sk_extender_rget picks them. false when
 * a key has an escape (its text could be any of them). */
static bool lookup(struct span o, const char *const *k, int nk, struct span *out)
{
	struct span ci[8] = { 0 };
	for (int i = 0; i < nk; i++)
		out[i].p = NULL;
	const char *p = ws(o.p + 1, o.end);
	if (*p == '}')
		return true;
	for (;;) {
		bool esc;
		const char *ks = p + 1, *ke = skip_string(p, &esc) - 1;
		if (esc)
			return false;
		p = ws(ws(ke + 1, o.end) + 1, o.end); /* past ':' */
		const char *ve = skip_value(p);
		size_t kn = (size_t)(ke - ks);
		for (int i = 0; i < nk; i++) {
			if (!out[i].p && strlen(k[i]) == kn && !memcmp(ks, k[i], kn))
				out[i] = (struct span){ p, ve };
			else if (!ci[i].p && ieq(ks, kn, k[i]))
				ci[i] = (struct span){ p, ve };
		}
		p = ws(ve, o.end);
		if (*p != ',')
			break;
		p = ws(p + 1, o.end);
	}
	for (int i = 0; i < nk; i++)
		if (!out[i].p)
			out[i] = ci[i];
	return true;
}

static bool is(struct span v, char c) { return v.p && *v.p == c; }

/* The next element of the (valid) array or object a: *it starts at NULL; for objects *key gets the
 * key's span. false at the end. */
static bool next(struct span a, const char **it, struct span *key, struct span *val)
{
	const char *p = *it ? ws(*it, a.end) : a.p;
	if (*p == ']' || *p == '}' || (*it && *p != ','))
		return false;
	p = ws(p + 1, a.end);
	if (*p == ']' || *p == '}')
		return false;
	if (key) {
		bool esc;
		const char *ke = skip_string(p, &esc);
		*key = (struct span){ esc ? NULL : p + 1, ke - 1 };
		p = ws(ws(ke, a.end) + 1, a.end);
	}
	val->p = p;
	val->end = skip_value(p);
	*it = val->end;
	return true;
}

/* A string value without escapes, as [p, end) without the quotes; false otherwise. */
static bool plain_str(struct span v, struct span *s)
{
	bool esc;
	if (!is(v, '"') || (skip_string(v.p, &esc), esc))
		return false;
	*s = (struct span){ v.p + 1, v.end - 1 };
	return true;
}

static int find(const struct sk_node_info *const *nodes, int n, struct span s, int *hint)
{
	return sk_extender_find_node(nodes, n, s.p, (size_t)(s.end - s.p), hint);
}

/* The whole body, strictly valid; o gets the top-level value. */
static bool parse_top(const char *body, struct span *o)
{
	const char *end = body + strlen(body); /* cJSON reads up to the NUL, as post() hands it */
	const char *p = ws(body, end);
	const char *ve = scan_value(p, end, 0);
	if (!ve)
		return false;
	*o = (struct span){ p, ve };
	return true;
}

/* FailedNodes / FailedAndUnresolvableNodes: 1, 0 (an escaped key or message: cJSON decodes it),
 * -1 on ENOMEM. */
static int add_failed_map(struct sk_extender_filter_result *out, struct span m, bool unresolvable)
{
	if (!is(m, '{'))
		return 1; /* absent or not an object: ignored, as the cJSON path does */
	const char *it = NULL;
	struct span k, v, msg = { "", "" };
	while (next(m, &it, &k, &v)) {
		if (!k.p || (is(v, '"') && !plain_str(v, &msg)))
			return 0;
		if (!is(v, '"'))
			msg = (struct span){ "", "" }; /* not a string: an empty message */
		if (sk_extender_add_failed(out, k.p, (size_t)(k.end - k.p), msg.p, (size_t)(msg.end - msg.p),
					   unresolvable) < 0)
			return -1;
	}
	return 1;
}

int sk_extender_filter_fast(const struct sk_extender *e, const char *body, const struct sk_node_info *const *nodes,
			    int n, struct sk_extender_filter_result *out)
{
	static const char *const keys[] = { "Error", "NodeNames", "Nodes", "FailedAndUnresolvableNodes", "FailedNodes" };
	struct span top, v[5], s;
	if (!parse_top(body, &top) || !is(top, '{') || !lookup(top, keys, 5, v))
		return 0;
	if (is(v[0], '"') && !(plain_str(v[0], &s) && s.p == s.end))
		return 0; /* an Error (or an escaped empty one): the cJSON path words it */
	int hint = 0, rc = 1;
	const char *it = NULL;
	struct span x;
	out->n = 0;
	if (e->node_cache_capable && is(v[1], '[')) {
		while (rc == 1 && next(v[1], &it, NULL, &x)) {
			int k = plain_str(x, &s) ? find(nodes, n, s, &hint) : -1;
			if (k < 0)
				rc = 0; /* not a name that was sent: the cJSON path words the error */
			else if (out->n < n)
				out->nodes[out->n++] = nodes[k];
		}
	} else if (is(v[2], '{')) {
		static const char *const items_key[] = { "items" }, *const md_key[] = { "metadata" },
					 *const name_key[] = { "name" };
		struct span items, md, nm;
		if (!lookup(v[2], items_key, 1, &items))
			rc = 0;
		else if (is(items, '['))
			while (rc == 1 && next(items, &it, NULL, &x)) {
				int k = -1;
				if (is(x, '{') && lookup(x, md_key, 1, &md) && is(md, '{') && lookup(md, name_key, 1, &nm) &&
				    plain_str(nm, &s))
					k = find(nodes, n, s, &hint);
				if (k < 0)
					rc = 0;
				else if (out->n < n)
					out->nodes[out->n++] = nodes[k];
			}
	}
	if (rc == 1)
		rc = add_failed_map(out, v[3], true);
	if (rc == 1)
		rc = add_failed_map(out, v[4], false);
	if (rc != 1) {
		for (int i = 0; i < out->nfailed; i++) {
			free(out->failed[i].node);
			free(out->failed[i].message);
		}
		free(out->failed);
		out->failed = NULL;
		out->nfailed = 0;
		out->n = 0;
	}
	return rc;
}

/* A plain integer literal of at most 15 digits (exact as a double, so the same value as the cJSON
 * path's); 1 and *v, 0 when another kind of number (left to cJSON), -1 when not a number. */
static int small_int(struct span v, int64_t *out)
{
	bool plain;
	if (!v.p || !(*v.p == '-' || (*v.p >= '0' && *v.p <= '9')))
		return -1;
	scan_number(v.p, v.end, &plain);
	const char *p = v.p + (*v.p == '-');
	if (!plain || v.end - p > 15)
		return 0;
	int64_t x = 0;
	for (; p < v.end; p++)
		x = x * 10 + (*p - '0');
	*out = *v.p == '-' ? -x : x;
	return 1;
}

int sk_extender_prioritize_fast(const struct sk_extender *e, const char *body, const struct sk_node_info *const *nodes,
				int n, int64_t *add)
{
	static const char *const keys[] = { "Host", "Score" };
	const char *end = body + strlen(body); /* cJSON reads up to the NUL, as post() hands it */
	const char *p = ws(body, end);
	if (p < end && *p == 'n')
		return scan_value(p, end, 0) ? 1 : 0; /* null: no scores */
	if (p >= end || *p != '[')
		return 0;
	/* one strict pass over the list; (node, score) pairs applied only once all of it was read */
	int cap = 0, m = 0, hint = 0, rc = 1;
	struct {
		int k;
		int64_t score;
	} *pairs = NULL;
	p = ws(p + 1, end);
	if (p < end && *p == ']')
		p = NULL; /* empty */
	while (p && rc == 1) {
		struct span kv[2] = { { NULL, NULL }, { NULL, NULL } }, host;
		bool esc_key = false;
		const char *q = p < end && *p == '{' ? scan_object_pick(p, end, 1, keys, 2, kv, &esc_key) : scan_value(p, end, 1);
		if (!q || esc_key) {
			rc = 0; /* invalid, or a key to decode */
			break;
		}
		if (*p == '{') {
			int64_t score = 0;
			int si = kv[1].p ? small_int(kv[1], &score) : 1;
			if ((is(kv[0], '"') && !plain_str(kv[0], &host)) || si == 0) {
				rc = 0; /* an escaped Host, a float or long number */
				break;
			}
			int k = is(kv[0], '"') && si > 0 ? find(nodes, n, host, &hint) : -1;
			if (k >= 0) {
				if (m == cap) {
					int nc = cap ? cap * 2 : 64;
					void *np = realloc(pairs, (size_t)nc * sizeof(*pairs));
					if (!np) {
						rc = -1;
						break;
					}
					pairs = np;
					cap = nc;
				}
				pairs[m].k = k;
				pairs[m++].score = score;
			}
		} /* else not an object: no Host, skipped */
		p = ws(q, end);
		if (p < end && *p == ',')
			p = ws(p + 1, end);
		else if (p < end && *p == ']')
			p = NULL;
		else
			rc = 0;
	}
	const int64_t scale = SK_MAX_NODE_SCORE / SK_MAX_EXTENDER_PRIORITY;
	for (int i = 0; rc == 1 && i < m; i++) /* wrapping as sk_extender_prioritize_decode */
		add[pairs[i].k] = (int64_t)((uint64_t)add[pairs[i].k] +
					    (uint64_t)pairs[i].score * (uint64_t)e->weight * (uint64_t)scale);
	free(pairs);
	return rc;
}
