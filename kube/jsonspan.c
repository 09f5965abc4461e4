/* Finding a member's value bytes in JSON text without building a tree (jsonspan.h). */
#include "kube/jsonspan.h"

#include <stdbool.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

/* i at an opening '"': the index after the closing one, or n when unterminated. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* i at the start of a value: the index after it, or n when malformed. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			char c = s[i];
			if (c == '"') {
				i = skip_string(s, n, i);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
	       s[i] != '\n')
		i++; /* number, true, false, null */
	return i;
}

const char *kube_json_member_span(const char *s, size_t n, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	size_t i = skip_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return NULL;
	i = skip_ws(s, n, i + 1);
	while (i < n && s[i] == '"') {
		size_t kstart = i + 1, kend = skip_string(s, n, i);
		if (kend >= n)
			return NULL;
		bool match = kend - 1 - kstart == klen && memcmp(s + kstart, key, klen) == 0;
		i = skip_ws(s, n, kend);
		if (i >= n || s[i] != ':')
			return NULL;
		size_t vstart = skip_ws(s, n, i + 1), vend = skip_value(s, n, vstart);
		if (vend >= n || vend == vstart) /* inside an object a value never ends the text */
			return NULL;
		if (match) {
			*len = vend - vstart;
			return s + vstart;
		}
		i = skip_ws(s, n, vend);
		if (i < n && s[i] == ',')
			i = skip_ws(s, n, i + 1);
		else
			break;
	}
	return NULL;
}

/* ---------- strict validation ---------- */

/* The deepest nesting kube_json_valid follows; deeper text is left to a full parser. */
#define VALID_MAX_DEPTH 128

struct vscan { const char *s; size_t n, i; int depth; };

static bool v_string(struct vscan *v, bool key)
{
	const char *s = v->s;
	for (v->i++; v->i < v->n; v->i++) {
		unsigned char c = (unsigned char)s[v->i];
		if (c == '"') {
			v->i++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (key || ++v->i >= v->n)
			return false; /* an escaped key could name a member another way: not plain */
		switch (s[v->i]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u': {
			if (v->n - v->i < 5)
				return false;
			unsigned cp = 0;
			for (int k = 1; k <= 4; k++) {
				char h = s[v->i + (size_t)k];
				unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
					     : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
					     : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
				if (d > 15)
					return false;
				cp = cp << 4 | d;
			}
			/* NUL and surrogates: parsers differ on them; not plain */
			if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
				return false;
			v->i += 4;
			break;
		}
		default:
			return false;
		}
	}
	return false;
}

static bool v_digits(struct vscan *v)
{
	size_t start = v->i;
	while (v->i < v->n && v->s[v->i] >= '0' && v->s[v->i] <= '9')
		v->i++;
	return v->i > start;
}

static bool v_number(struct vscan *v)
{
	if (v->s[v->i] == '-')
		v->i++;
	if (v->i < v->n && v->s[v->i] == '0')
		v->i++;
	else if (!v_digits(v))
		return false;
	if (v->i < v->n && v->s[v->i] == '.') {
		v->i++;
		if (!v_digits(v))
			return false;
	}
	if (v->i < v->n && (v->s[v->i] == 'e' || v->s[v->i] == 'E')) {
		v->i++;
		if (v->i < v->n && (v->s[v->i] == '+' || v->s[v->i] == '-'))
			v->i++;
		if (!v_digits(v))
			return false;
	}
	return true;
}

static bool v_literal(struct vscan *v, const char *lit, size_t len)
{
	if (v->n - v->i < len || memcmp(v->s + v->i, lit, len) != 0)
		return false;
	v->i += len;
	return true;
}

static bool v_value(struct vscan *v);

static bool v_container(struct vscan *v, char close)
{
	if (++v->depth > VALID_MAX_DEPTH)
		return false;
	v->i = skip_ws(v->s, v->n, v->i + 1);
	if (v->i < v->n && v->s[v->i] == close) {
		v->i++;
		v->depth--;
		return true;
	}
	for (;;) {
		if (close == '}') {
			if (v->i >= v->n || v->s[v->i] != '"' || !v_string(v, true))
				return false;
			v->i = skip_ws(v->s, v->n, v->i);
			if (v->i >= v->n || v->s[v->i] != ':')
				return false;
			v->i = skip_ws(v->s, v->n, v->i + 1);
		}
		if (!v_value(v))
			return false;
		v->i = skip_ws(v->s, v->n, v->i);
		if (v->i >= v->n)
			return false;
		if (v->s[v->i] == close) {
			v->i++;
			v->depth--;
			return true;
		}
		if (v->s[v->i] != ',')
			return false;
		v->i = skip_ws(v->s, v->n, v->i + 1);
	}
}

static bool v_value(struct vscan *v)
{
	if (v->i >= v->n)
		return false;
	switch (v->s[v->i]) {
	case '{': return v_container(v, '}');
	case '[': return v_container(v, ']');
	case '"': return v_string(v, false);
	case 't': return v_literal(v, "true", 4);
	case 'f': return v_literal(v, "false", 5);
	case 'n': return v_literal(v, "null", 4);
	default: return v_number(v);
	}
}

bool kube_json_valid(const char *s, size_t n)
{
	struct vscan v = { s, n, skip_ws(s, n, 0), 0 };
	return v_value(&v) && skip_ws(s, n, v.i) == n;
}

/* ---------- paths, plain strings, members ---------- */

const char *kube_json_path_span(const char *s, size_t n, const char *const *path, size_t *len)
{
	const char *v = s;
	size_t vlen = n;
	for (; *path; path++)
		if (!(v = kube_json_member_span(v, vlen, *path, &vlen)))
			return NULL;
	*len = vlen;
	return v;
}

const char *kube_json_plain_string(const char *v, size_t len, size_t *out_len)
{
	if (!v || len < 2 || v[0] != '"' || v[len - 1] != '"' || memchr(v + 1, '\\', len - 2))
		return NULL;
	*out_len = len - 2;
	return v + 1;
}

int kube_json_member_range(const char *s, size_t n, const char *key, size_t *start, size_t *end)
{
	size_t vlen;
	const char *v = kube_json_member_span(s, n, key, &vlen);
	if (!v)
		return -1;
	/* back from the value over ':' to the key (the bytes of key itself: it matched them) */
	size_t vs = (size_t)(v - s), ve = vs + vlen, klen = strlen(key), ks = vs;
	while (ks > 0 && is_ws(s[ks - 1]))
		ks--;
	if (ks == 0 || s[--ks] != ':')
		return -1;
	while (ks > 0 && is_ws(s[ks - 1]))
		ks--;
	if (ks < klen + 2 || s[ks - 1] != '"' || s[ks - klen - 2] != '"' || memcmp(s + ks - klen - 1, key, klen) != 0)
		return -1;
	ks -= klen + 2;
	size_t after = skip_ws(s, n, ve);
	if (after < n && s[after] == ',') {
		*start = ks;
		*end = skip_ws(s, n, after + 1);
		return 0;
	}
	size_t before = ks;
	while (before > 0 && is_ws(s[before - 1]))
		before--;
	*start = before > 0 && s[before - 1] == ',' ? before - 1 : ks;
	*end = ve;
	return 0;
}

/* ---------- comparing texts but for some members ---------- */

#define EXCEPT_MAX 8

struct segs { size_t start[EXCEPT_MAX + 1], end[EXCEPT_MAX + 1]; int n; };

/* The bytes of s[0..n) left once the members at paths are cut: up to npaths + 1 segments.
 * false when the cuts overlap (a path inside another) or there are too many. */
static bool cut_members(const char *s, size_t n, const char *const *const *paths, int npaths, struct segs *out)
{
	size_t cs[EXCEPT_MAX], ce[EXCEPT_MAX];
	int nc = 0;
	if (npaths > EXCEPT_MAX)
		return false;
	for (int p = 0; p < npaths; p++) {
		const char *const *path = paths[p];
		int depth = 0;
		while (path[depth])
			depth++;
		if (depth == 0)
			return false;
		const char *parent = s;
		size_t plen = n, st, en;
		for (int k = 0; k < depth - 1 && parent; k++)
			parent = kube_json_member_span(parent, plen, path[k], &plen);
		if (!parent || kube_json_member_range(parent, plen, path[depth - 1], &st, &en) != 0)
			continue; /* absent here */
		size_t off = (size_t)(parent - s);
		int at = nc++;
		while (at > 0 && cs[at - 1] > off + st) { /* keep the cuts sorted */
			cs[at] = cs[at - 1];
			ce[at] = ce[at - 1];
			at--;
		}
		cs[at] = off + st;
		ce[at] = off + en;
	}
	out->n = 0;
	size_t pos = 0;
	for (int c = 0; c < nc; c++) {
		if (cs[c] < pos)
			return false;
		out->start[out->n] = pos;
		out->end[out->n++] = cs[c];
		pos = ce[c];
	}
	out->start[out->n] = pos;
	out->end[out->n++] = n;
	return true;
}

bool kube_json_equal_except(const char *a, size_t an, const char *b, size_t bn, const char *const *const *paths,
			    int npaths)
{
	struct segs sa, sb;
	if (!cut_members(a, an, paths, npaths, &sa) || !cut_members(b, bn, paths, npaths, &sb))
		return false;
	int ia = 0, ib = 0;
	size_t pa = sa.start[0], pb = sb.start[0];
	for (;;) {
		while (ia < sa.n && pa == sa.end[ia])
			if (++ia < sa.n)
				pa = sa.start[ia];
		while (ib < sb.n && pb == sb.end[ib])
			if (++ib < sb.n)
				pb = sb.start[ib];
		if (ia == sa.n || ib == sb.n)
			return ia == sa.n && ib == sb.n;
		size_t k = sa.end[ia] - pa < sb.end[ib] - pb ? sa.end[ia] - pa : sb.end[ib] - pb;
		if (memcmp(a + pa, b + pb, k) != 0)
			return false;
		pa += k;
		pb += k;
	}
}
