/* Finding a member's value bytes in JSON text without building a tree (jsonspan.h). */
#include "kube/jsonspan.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

/* Whether c continues a run of plain string bytes: not '"', '\\' or a control character. */
static bool str_plain(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\'; }

/* From i, the index of the first byte that ends a run of plain string bytes (str_plain), or n.
 * Eight bytes at a time where the words are little-endian: the lowest byte the bit tricks flag
 * is exact (a borrow only ever flags bytes above a true hit). */
static size_t string_run(const char *s, size_t n, size_t i)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__GNUC__) || defined(__clang__))
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (n - i >= 8) {
		uint64_t x, q, b;
		memcpy(&x, s + i, 8);
		q = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		uint64_t m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & highs;
		if (m)
			return i + (size_t)(__builtin_ctzll(m) >> 3);
		i += 8;
	}
#endif
	while (i < n && str_plain((unsigned char)s[i]))
		i++;
	return i;
}

/* Bytes skip_value stops at inside an object or array. */
static const bool structural[256] = { ['"'] = true, ['{'] = true, ['['] = true, ['}'] = true, [']'] = true };

/* i at an opening '"': the index after the closing one, or n when unterminated. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		i = string_run(s, n, i);
		if (i >= n)
			break;
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
			while (i < n && !structural[(unsigned char)s[i]])
				i++;
			if (i >= n)
				break;
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

/* The member key's value in the object s[0..n): its start, and its end in *vend unless
 * the value need not be scanned (vend NULL: the caller only wants where it starts). */
static const char *member_find(const char *s, size_t n, const char *key, size_t *vend_out)
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
		size_t vstart = skip_ws(s, n, i + 1);
		if (match && !vend_out)
			return vstart < n ? s + vstart : NULL;
		size_t vend = skip_value(s, n, vstart);
		if (vend >= n || vend == vstart) /* inside an object a value never ends the text */
			return NULL;
		if (match) {
			*vend_out = vend;
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

const char *kube_json_member_span(const char *s, size_t n, const char *key, size_t *len)
{
	size_t vend;
	const char *v = member_find(s, n, key, &vend);
	if (v)
		*len = vend - (size_t)(v - s);
	return v;
}

/* ---------- strict validation ---------- */

/* The deepest nesting kube_json_valid follows; deeper text is left to a full parser. */
#define VALID_MAX_DEPTH 128

struct vscan {
	const char *s;
	size_t n, i;
	int depth;
	struct kube_json_member *m; /* members to find (kube_json_find), nm of them */
	int nm;
};

static bool v_string(struct vscan *v, bool key)
{
	const char *s = v->s;
	for (v->i++; v->i < v->n; v->i++) {
		v->i = string_run(s, v->n, v->i);
		if (v->i >= v->n)
			break;
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

static bool v_value(struct vscan *v, uint32_t mask);

/* The members of v->m whose path goes on below key k (at depth v->depth) among mask; those it
 * ends at are recorded once the value is known (*leaves). */
static uint32_t v_match(struct vscan *v, uint32_t mask, const char *k, size_t klen, uint32_t *leaves)
{
	uint32_t sub = 0;
	*leaves = 0;
	for (uint32_t left = mask; left; left &= left - 1) {
		int p = __builtin_ctz(left);
		const char *want = v->m[p].path[v->depth - 1];
		if (want[0] != k[0] || strncmp(want, k, klen) != 0 || want[klen] != 0)
			continue;
		if (v->m[p].path[v->depth])
			sub |= 1u << p;
		else
			*leaves |= 1u << p;
	}
	return sub;
}

/* Records the member [ks, ve) (value at vs) for the members in leaves: its first occurrence, and
 * whether it comes again. prev_end: the previous member's value end (0 for the first). */
static void v_record(struct vscan *v, uint32_t leaves, size_t ks, size_t vs, size_t ve, size_t prev_end)
{
	for (uint32_t left = leaves; left; left &= left - 1) {
		struct kube_json_member *m = &v->m[__builtin_ctz(left)];
		if (m->val.p) {
			m->dup = true;
			continue;
		}
		m->val = (struct kube_json_span){ v->s + vs, ve - vs };
		size_t after = skip_ws(v->s, v->n, ve);
		if (after < v->n && v->s[after] == ',') {
			size_t end = skip_ws(v->s, v->n, after + 1);
			m->cut = (struct kube_json_span){ v->s + ks, end - ks };
			m->comma = 1;
		} else if (prev_end) {
			m->cut = (struct kube_json_span){ v->s + prev_end, ve - prev_end };
			m->comma = -1;
		} else {
			m->cut = (struct kube_json_span){ v->s + ks, ve - ks };
			m->comma = 0;
		}
	}
}

/* An object or array; mask: the members of v->m whose paths lead into it (objects only). */
static bool v_container(struct vscan *v, char close, uint32_t mask)
{
	if (++v->depth > VALID_MAX_DEPTH)
		return false;
	v->i = skip_ws(v->s, v->n, v->i + 1);
	if (v->i < v->n && v->s[v->i] == close) {
		v->i++;
		v->depth--;
		return true;
	}
	size_t prev_end = 0;
	for (;;) {
		uint32_t sub = 0, leaves = 0;
		size_t ks = v->i;
		if (close == '}') {
			if (v->i >= v->n || v->s[v->i] != '"' || !v_string(v, true))
				return false;
			if (mask)
				sub = v_match(v, mask, v->s + ks + 1, v->i - ks - 2, &leaves);
			v->i = skip_ws(v->s, v->n, v->i);
			if (v->i >= v->n || v->s[v->i] != ':')
				return false;
			v->i = skip_ws(v->s, v->n, v->i + 1);
		}
		size_t vs = v->i;
		if (!v_value(v, sub))
			return false;
		if (leaves)
			v_record(v, leaves, ks, vs, v->i, prev_end);
		prev_end = v->i;
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

static bool v_value(struct vscan *v, uint32_t mask)
{
	if (v->i >= v->n)
		return false;
	switch (v->s[v->i]) {
	case '{': return v_container(v, '}', mask);
	case '[': return v_container(v, ']', 0);
	case '"': return v_string(v, false);
	case 't': return v_literal(v, "true", 4);
	case 'f': return v_literal(v, "false", 5);
	case 'n': return v_literal(v, "null", 4);
	default: return v_number(v);
	}
}

bool kube_json_valid(const char *s, size_t n)
{
	struct vscan v = { s, n, skip_ws(s, n, 0), 0, NULL, 0 };
	return v_value(&v, 0) && skip_ws(s, n, v.i) == n;
}

bool kube_json_find(const char *s, size_t n, struct kube_json_member *m, int nm)
{
	if (nm < 0 || nm > KUBE_JSON_FIND_MAX)
		return false;
	for (int p = 0; p < nm; p++) {
		m[p].val = m[p].cut = (struct kube_json_span){ NULL, 0 };
		m[p].comma = 0;
		m[p].dup = false;
		if (!m[p].path || !m[p].path[0])
			return false;
	}
	struct vscan v = { s, n, skip_ws(s, n, 0), 0, m, nm };
	uint32_t all = nm == 32 ? 0xffffffffu : (1u << nm) - 1;
	return v.i < n && s[v.i] == '{' && v_value(&v, all) && skip_ws(s, n, v.i) == n;
}

/* ---------- paths, plain strings, members ---------- */

const char *kube_json_path_span(const char *s, size_t n, const char *const *path, size_t *len)
{
	if (!*path)
		return NULL;
	/* the objects on the way are searched from where they start: a search ends at the closing
	 * brace of the object it is in, so their ends need not be found first */
	const char *v = s;
	for (; path[1]; path++) {
		if (!(v = member_find(v, n - (size_t)(v - s), *path, NULL)))
			return NULL;
	}
	return kube_json_member_span(v, n - (size_t)(v - s), *path, len);
}

const char *kube_json_plain_string(const char *v, size_t len, size_t *out_len)
{
	if (!v || len < 2 || v[0] != '"' || v[len - 1] != '"' || memchr(v + 1, '\\', len - 2))
		return NULL;
	*out_len = len - 2;
	return v + 1;
}

/* ---------- comparing texts but for some members ---------- */

/* In a at i, the member m cuts from b, in the same form (the same comma): the index after it
 * (and its value in *val), or i when a has no such member there. */
static size_t skip_cut(const char *a, size_t an, size_t i, const struct kube_json_member *m, struct kube_json_span *val)
{
	const char *key = m->path[0];
	for (int d = 1; m->path[d]; d++)
		key = m->path[d];
	size_t j = i, klen = strlen(key);
	if (m->comma == -1) {
		j = skip_ws(a, an, j);
		if (j >= an || a[j] != ',')
			return i;
		j = skip_ws(a, an, j + 1);
	}
	if (an - j < klen + 2 || a[j] != '"' || memcmp(a + j + 1, key, klen) != 0 || a[j + klen + 1] != '"')
		return i;
	j = skip_ws(a, an, j + klen + 2);
	if (j >= an || a[j] != ':')
		return i;
	size_t vs = skip_ws(a, an, j + 1), ve = skip_value(a, an, vs);
	if (ve >= an || ve == vs)
		return i;
	j = ve;
	if (m->comma == 1) {
		j = skip_ws(a, an, j);
		if (j >= an || a[j] != ',')
			return i;
		j = skip_ws(a, an, j + 1);
	}
	*val = (struct kube_json_span){ a + vs, ve - vs };
	return j;
}

bool kube_json_equal_cut(const char *a, size_t an, const char *b, size_t bn, const struct kube_json_member *m, int nm,
			 struct kube_json_span *a_vals)
{
	int order[KUBE_JSON_FIND_MAX], nc = 0;
	if (nm > KUBE_JSON_FIND_MAX)
		return false;
	for (int p = 0; p < nm; p++) {
		if (a_vals)
			a_vals[p] = (struct kube_json_span){ NULL, 0 };
		if (m[p].dup)
			return false;
		if (!m[p].val.p)
			continue;
		if (m[p].cut.p < b || m[p].cut.p + m[p].cut.len > b + bn)
			return false;
		int at = nc++;
		while (at > 0 && m[order[at - 1]].cut.p > m[p].cut.p) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = p;
	}
	/* b's bytes between its cuts, each matched in a, where a may hold its own member at a cut */
	size_t ia = 0, ib = 0;
	for (int k = 0; k <= nc; k++) {
		size_t seg_end = k < nc ? (size_t)(m[order[k]].cut.p - b) : bn;
		if (seg_end < ib)
			return false; /* cuts that overlap */
		size_t len = seg_end - ib;
		if (an - ia < len || memcmp(a + ia, b + ib, len) != 0)
			return false;
		ia += len;
		if (k == nc)
			break;
		struct kube_json_span v = { NULL, 0 };
		ia = skip_cut(a, an, ia, &m[order[k]], &v);
		if (a_vals)
			a_vals[order[k]] = v;
		ib = seg_end + m[order[k]].cut.len;
	}
	return ia == an;
}

bool kube_json_equal_except(const char *a, size_t an, const char *b, size_t bn, const char *const *const *paths,
			    int npaths, struct kube_json_span *a_vals, struct kube_json_span *b_vals)
{
	struct kube_json_member m[KUBE_JSON_FIND_MAX];
	if (npaths > KUBE_JSON_FIND_MAX)
		return false;
	for (int p = 0; p < npaths; p++)
		m[p].path = paths[p];
	if (!kube_json_find(b, bn, m, npaths))
		return false;
	if (b_vals)
		for (int p = 0; p < npaths; p++)
			b_vals[p] = m[p].val;
	return kube_json_equal_cut(a, an, b, bn, m, npaths, a_vals);
}
