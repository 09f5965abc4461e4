/* Label selectors (string syntax and metav1.LabelSelector) and field selectors, with the label
 * key/value validation from k8s.io/apimachinery/pkg/util/validation. Behaviour follows
 * k8s.io/apimachinery/pkg/labels/selector.go and pkg/fields/selector.go. */
#include "kube/selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

struct requirement {
	char *key;
	enum kube_selector_op op;
	char **values; /* sorted */
	size_t nvalues;
	long long number; /* Gt/Lt operand */
	/* Canonical pointers (kube_label_selector_canonicalize), NULL when none: the key handed to the
	 * lookup instead of key, and values[i]'s equal that a looked-up value is compared with by
	 * pointer before the strcmp search (ivalues[i] NULL: none for that one). */
	const char *ikey;
	const char **ivalues;
};

struct kube_label_selector {
	bool nothing;
	size_t n;
	struct requirement *reqs; /* sorted by key (stable) */
};

/* ---- small helpers ---- */

/* Growable string. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
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

static void sb_puts(struct sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static char *sb_finish(struct sbuf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

/* Go's %#v of a []string: []string(nil), []string{"a", "b"}. */
static void sb_go_strings(struct sbuf *b, const char *const *v, size_t n, bool nil)
{
	if (nil) {
		sb_puts(b, "[]string(nil)");
		return;
	}
	sb_puts(b, "[]string{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_puts(b, "\"");
		sb_puts(b, v[i]);
		sb_puts(b, "\"");
	}
	sb_puts(b, "}");
}

static void sb_path(struct sbuf *b, const char *path)
{
	if (path && *path) {
		sb_puts(b, path);
		sb_puts(b, ".");
	}
}

/* ---- validation (k8s.io/apimachinery/pkg/util/validation) ---- */

static const char QNAME_FMT_MSG[] =
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
	"character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
	"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
static const char DNS1123_SUBDOMAIN_MSG[] =
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
	"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char LABEL_VALUE_MSG[] =
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
	"start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
	"for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

static bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static bool qname_part_ok(const char *s, size_t n)
{
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static bool dns1123_label_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

static bool dns1123_subdomain_ok(const char *s, size_t n)
{
	/* labels [a-z0-9]([-a-z0-9]*[a-z0-9])? separated by '.' */
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			size_t len = i - start;
			if (len == 0 || !dns1123_label_char(s[start]) || !dns1123_label_char(s[i - 1]))
				return false;
			for (size_t j = start; j < i; j++)
				if (!dns1123_label_char(s[j]) && s[j] != '-')
					return false;
			start = i + 1;
		}
	}
	return true;
}

/* Returns the list of problems joined by "; " (caller frees) or NULL when valid. */
static char *qualified_name_problems(const char *value)
{
	struct sbuf b = {0};
	size_t n = strlen(value);
	const char *slash = strchr(value, '/');
	const char *name = value;
	size_t name_len = n;
	int count = 0;
	if (slash && strchr(slash + 1, '/')) {
		sb_puts(&b, "a qualified name ");
		sb_puts(&b, QNAME_FMT_MSG);
		sb_puts(&b, " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
		return sb_finish(&b);
	}
	if (slash) {
		size_t plen = (size_t)(slash - value);
		name = slash + 1;
		name_len = n - plen - 1;
		if (plen == 0) {
			sb_puts(&b, "prefix part must be non-empty");
			count++;
		} else {
			if (plen > 253) {
				sb_puts(&b, "prefix part must be no more than 253 characters");
				count++;
			}
			if (!dns1123_subdomain_ok(value, plen)) {
				if (count++)
					sb_puts(&b, "; ");
				sb_puts(&b, "prefix part ");
				sb_puts(&b, DNS1123_SUBDOMAIN_MSG);
			}
		}
	}
	if (name_len == 0) {
		if (count++)
			sb_puts(&b, "; ");
		sb_puts(&b, "name part must be non-empty");
	} else {
		if (name_len > 63) {
			if (count++)
				sb_puts(&b, "; ");
			sb_puts(&b, "name part must be no more than 63 characters");
		}
		if (!qname_part_ok(name, name_len)) {
			if (count++)
				sb_puts(&b, "; ");
			sb_puts(&b, "name part ");
			sb_puts(&b, QNAME_FMT_MSG);
		}
	}
	if (count == 0) {
		free(b.s);
		return NULL;
	}
	return sb_finish(&b);
}

static char *label_value_problems(const char *value)
{
	size_t n = strlen(value);
	struct sbuf b = {0};
	int count = 0;
	if (n > 63) {
		sb_puts(&b, "must be no more than 63 characters");
		count++;
	}
	if (n > 0 && !qname_part_ok(value, n)) {
		if (count++)
			sb_puts(&b, "; ");
		sb_puts(&b, LABEL_VALUE_MSG);
	}
	if (count == 0) {
		free(b.s);
		return NULL;
	}
	return sb_finish(&b);
}

int kube_validate_qualified_name(const char *s, char **err)
{
	if (err)
		*err = NULL;
	char *p = qualified_name_problems(s ? s : "");
	if (!p)
		return 0;
	if (err)
		*err = p;
	else
		free(p);
	return -1;
}

int kube_validate_label_value(const char *s, char **err)
{
	if (err)
		*err = NULL;
	char *p = label_value_problems(s ? s : "");
	if (!p)
		return 0;
	if (err)
		*err = p;
	else
		free(p);
	return -1;
}

/* ---- requirements ---- */

static void req_free(struct requirement *r)
{
	free(r->key);
	for (size_t i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	free(r->values);
	free(r->ivalues);
	r->ivalues = NULL;
	r->ikey = NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool parse_int64(const char *s, long long *out)
{
	/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits only. */
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!*p)
		return false;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* upstream NewRequirement; values copied (and sorted). nil_values only affects messages. */
static int req_init_at(struct requirement *r, const char *path, const char *key, enum kube_selector_op op,
		       const char *const *vals, size_t n, bool nil_values, char **err)
{
	memset(r, 0, sizeof(*r));
	struct sbuf e = {0};
	int nerr = 0;
	char *kp = qualified_name_problems(key);
	if (kp) {
		sb_path(&e, path);
		sb_puts(&e, "key: Invalid value: \"");
		sb_puts(&e, key);
		sb_puts(&e, "\": ");
		sb_puts(&e, kp);
		free(kp);
		nerr++;
	}
	const char *msg = NULL;
	switch (op) {
	case KUBE_SEL_IN:
	case KUBE_SEL_NOT_IN:
		if (n == 0)
			msg = "for 'in', 'notin' operators, values set can't be empty";
		break;
	case KUBE_SEL_EQUALS:
	case KUBE_SEL_DOUBLE_EQUALS:
	case KUBE_SEL_NOT_EQUALS:
		if (n != 1)
			msg = "exact-match compatibility requires one single value";
		break;
	case KUBE_SEL_EXISTS:
	case KUBE_SEL_DOES_NOT_EXIST:
		if (n != 0)
			msg = "values set must be empty for exists and does not exist";
		break;
	case KUBE_SEL_GT:
	case KUBE_SEL_LT:
		if (n != 1)
			msg = "for 'Gt', 'Lt' operators, exactly one value is required";
		break;
	default:
		msg = "operator is not recognized";
	}
	if (msg) {
		if (nerr++)
			sb_puts(&e, ", ");
		sb_path(&e, path);
		sb_puts(&e, "values: Invalid value: ");
		sb_go_strings(&e, vals, n, nil_values && n == 0);
		sb_puts(&e, ": ");
		sb_puts(&e, msg);
	}
	if ((op == KUBE_SEL_GT || op == KUBE_SEL_LT) && n == 1 && !parse_int64(vals[0], &r->number)) {
		if (nerr++)
			sb_puts(&e, ", ");
		sb_path(&e, path);
		sb_puts(&e, "values[0]: Invalid value: \"");
		sb_puts(&e, vals[0]);
		sb_puts(&e, "\": for 'Gt', 'Lt' operators, the value must be an integer");
	}
	for (size_t i = 0; i < n; i++) {
		char *vp = label_value_problems(vals[i]);
		if (vp) {
			char idx[32];
			if (nerr++)
				sb_puts(&e, ", ");
			snprintf(idx, sizeof(idx), "values[%zu]", i);
			sb_path(&e, path);
			sb_puts(&e, idx);
			sb_puts(&e, ": Invalid value: \"");
			sb_puts(&e, vals[i]);
			sb_puts(&e, "\": ");
			sb_puts(&e, vp);
			free(vp);
		}
	}
	if (nerr) {
		char *m = sb_finish(&e);
		/* an aggregate of several errors prints as [a, b] */
		if (err) {
			free(*err);
			if (m && nerr > 1) {
				if (asprintf(err, "[%s]", m) < 0)
					*err = NULL;
			} else {
				*err = m;
				m = NULL;
			}
		}
		free(m);
		return -1;
	}
	free(e.s);
	r->op = op;
	r->key = strdup(key);
	r->values = n ? calloc(n, sizeof(char *)) : NULL;
	if (!r->key || (n && !r->values))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		r->values[i] = strdup(vals[i]);
		if (!r->values[i])
			goto oom;
		r->nvalues++;
	}
	if (r->nvalues > 1)
		qsort(r->values, r->nvalues, sizeof(char *), cmp_str);
	return 0;
oom:
	req_free(r);
	memset(r, 0, sizeof(*r));
	kube_errf(err, "out of memory");
	return -1;
}

static int req_init(struct requirement *r, const char *key, enum kube_selector_op op, const char *const *vals,
		    size_t n, bool nil_values, char **err)
{
	return req_init_at(r, NULL, key, op, vals, n, nil_values, err);
}

static bool req_has_value(const struct requirement *r, const char *v)
{
	if (r->ivalues)
		for (size_t i = 0; i < r->nvalues; i++)
			if (r->ivalues[i] == v)
				return true;
	size_t lo = 0, hi = r->nvalues;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(r->values[mid], v);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool req_matches(const struct requirement *r, kube_label_lookup_fn get, const void *ctx)
{
	const char *v = get(ctx, r->ikey ? r->ikey : r->key);
	switch (r->op) {
	case KUBE_SEL_IN:
	case KUBE_SEL_EQUALS:
	case KUBE_SEL_DOUBLE_EQUALS:
		return v && req_has_value(r, v);
	case KUBE_SEL_NOT_IN:
	case KUBE_SEL_NOT_EQUALS:
		return !v || !req_has_value(r, v);
	case KUBE_SEL_EXISTS:
		return v != NULL;
	case KUBE_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case KUBE_SEL_GT:
	case KUBE_SEL_LT: {
		long long lv;
		if (!v || !parse_int64(v, &lv))
			return false;
		return r->op == KUBE_SEL_GT ? lv > r->number : lv < r->number;
	}
	}
	return false;
}

/* ---- selectors ---- */

static struct kube_label_selector *sel_new(void) { return calloc(1, sizeof(struct kube_label_selector)); }

void kube_label_selector_free(struct kube_label_selector *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		req_free(&s->reqs[i]);
	free(s->reqs);
	free(s);
}

static int sel_append(struct kube_label_selector *s, const struct requirement *r)
{
	struct requirement *p = realloc(s->reqs, (s->n + 1) * sizeof(*p));
	if (!p)
		return -1;
	s->reqs = p;
	s->reqs[s->n++] = *r;
	return 0;
}

/* Stable insertion sort by key (upstream sort.Sort(ByKey) on small slices is insertion sort). */
static void sel_sort(struct kube_label_selector *s)
{
	for (size_t i = 1; i < s->n; i++) {
		struct requirement t = s->reqs[i];
		size_t j = i;
		while (j > 0 && strcmp(s->reqs[j - 1].key, t.key) > 0) {
			s->reqs[j] = s->reqs[j - 1];
			j--;
		}
		s->reqs[j] = t;
	}
}

/* ---- lexer / parser for the string syntax ---- */

enum tok {
	T_ERROR,
	T_EOS,
	T_CLOSE,
	T_COMMA,
	T_NOT,
	T_DEQ,
	T_EQ,
	T_GT,
	T_ID,
	T_IN,
	T_LT,
	T_NEQ,
	T_NOTIN,
	T_OPEN,
};

struct item {
	enum tok tok;
	char *lit;
};

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static bool is_special(char c) { return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<'; }

static enum tok special_token(const char *s, size_t n)
{
	static const struct {
		const char *s;
		enum tok t;
	} map[] = {{")", T_CLOSE}, {",", T_COMMA}, {"!", T_NOT}, {"==", T_DEQ}, {"=", T_EQ},
		   {">", T_GT},	   {"<", T_LT},	   {"!=", T_NEQ}, {"(", T_OPEN}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].s) == n && memcmp(map[i].s, s, n) == 0)
			return map[i].t;
	return T_ERROR;
}

/* One token from s at *pos; lit is malloc'd. */
static int lex(const char *s, size_t *pos, struct item *it)
{
	size_t p = *pos;
	while (s[p] && is_ws(s[p]))
		p++;
	it->lit = NULL;
	if (!s[p]) {
		it->tok = T_EOS;
		it->lit = strdup("");
	} else if (is_special(s[p])) {
		/* longest run of special symbols that forms a token */
		size_t start = p, best = 0;
		enum tok bt = T_ERROR;
		while (s[p] && is_special(s[p])) {
			enum tok t = special_token(s + start, p - start + 1);
			if (t != T_ERROR) {
				bt = t;
				best = p - start + 1;
			} else if (bt != T_ERROR) {
				break;
			}
			p++;
		}
		if (bt == T_ERROR) {
			it->tok = T_ERROR;
			if (asprintf(&it->lit, "error expected: keyword found '%.*s'", (int)(p - start), s + start) < 0)
				it->lit = NULL;
		} else {
			it->tok = bt;
			it->lit = strndup(s + start, best);
			p = start + best;
		}
	} else {
		size_t start = p;
		while (s[p] && !is_ws(s[p]) && !is_special(s[p]))
			p++;
		it->lit = strndup(s + start, p - start);
		if (it->lit && strcmp(it->lit, "in") == 0)
			it->tok = T_IN;
		else if (it->lit && strcmp(it->lit, "notin") == 0)
			it->tok = T_NOTIN;
		else
			it->tok = T_ID;
	}
	*pos = p;
	return it->lit ? 0 : -1;
}

struct parser {
	struct item *items;
	size_t n, pos;
};

enum ctx { KEY_AND_OP, VALUES };

static enum tok peek(struct parser *p, enum ctx c, const char **lit)
{
	struct item *it = &p->items[p->pos];
	*lit = it->lit;
	if (c == VALUES && (it->tok == T_IN || it->tok == T_NOTIN))
		return T_ID;
	return it->tok;
}

static enum tok next(struct parser *p, enum ctx c, const char **lit)
{
	enum tok t = peek(p, c, lit);
	if (p->pos + 1 < p->n)
		p->pos++;
	return t;
}

/* A small string set used while parsing values. */
struct strset {
	char **v;
	size_t n;
};

static int set_add(struct strset *s, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return 0;
	char **p = realloc(s->v, (s->n + 1) * sizeof(char *));
	if (!p)
		return -1;
	s->v = p;
	if (!(s->v[s->n] = strdup(v)))
		return -1;
	s->n++;
	return 0;
}

static void set_clear(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int parse_values(struct parser *p, struct strset *vals, char **err)
{
	const char *lit;
	enum tok t = next(p, VALUES, &lit);
	if (t != T_OPEN) {
		kube_errf(err, "found '%s' expected: '('", lit);
		return -1;
	}
	t = peek(p, VALUES, &lit);
	if (t == T_CLOSE) {
		next(p, VALUES, &lit);
		return set_add(vals, "");
	}
	if (t != T_ID && t != T_COMMA) {
		kube_errf(err, "found '%s', expected: ',', ')' or identifier", lit);
		return -1;
	}
	const char *open_lit = lit;
	for (;;) {
		t = next(p, VALUES, &lit);
		if (t == T_ID) {
			if (set_add(vals, lit))
				return -1;
			const char *l2;
			enum tok t2 = peek(p, VALUES, &l2);
			if (t2 == T_COMMA)
				continue;
			if (t2 == T_CLOSE)
				break;
			kube_errf(err, "found '%s', expected: ',' or ')'", l2);
			return -1;
		} else if (t == T_COMMA) {
			if (vals->n == 0 && set_add(vals, ""))
				return -1;
			const char *l2;
			enum tok t2 = peek(p, VALUES, &l2);
			if (t2 == T_CLOSE) {
				if (set_add(vals, ""))
					return -1;
				break;
			}
			if (t2 == T_COMMA) {
				next(p, VALUES, &l2);
				if (set_add(vals, ""))
					return -1;
			}
		} else {
			kube_errf(err, "found '%s', expected: ',', or identifier", lit);
			return -1;
		}
	}
	t = next(p, VALUES, &lit);
	if (t != T_CLOSE) {
		kube_errf(err, "found '%s', expected: ')'", open_lit);
		return -1;
	}
	return 0;
}

static int parse_requirement(struct parser *p, struct requirement *r, char **err)
{
	const char *lit;
	enum kube_selector_op op = KUBE_SEL_EQUALS;
	bool unary = false;
	enum tok t = next(p, VALUES, &lit);
	if (t == T_NOT) {
		op = KUBE_SEL_DOES_NOT_EXIST;
		unary = true;
		t = next(p, VALUES, &lit);
	}
	if (t != T_ID) {
		kube_errf(err, "found '%s', expected: identifier", lit);
		return -1;
	}
	const char *key = lit;
	char *kp = qualified_name_problems(key);
	if (kp) {
		kube_errf(err, "key: Invalid value: \"%s\": %s", key, kp);
		free(kp);
		return -1;
	}
	const char *l2;
	enum tok la = peek(p, VALUES, &l2);
	if (la == T_EOS || la == T_COMMA) {
		if (!unary)
			op = KUBE_SEL_EXISTS;
		unary = true;
	}
	if (unary)
		return req_init(r, key, op, NULL, 0, true, err);

	t = next(p, KEY_AND_OP, &lit);
	switch (t) {
	case T_IN: op = KUBE_SEL_IN; break;
	case T_NOTIN: op = KUBE_SEL_NOT_IN; break;
	case T_EQ: op = KUBE_SEL_EQUALS; break;
	case T_DEQ: op = KUBE_SEL_DOUBLE_EQUALS; break;
	case T_NEQ: op = KUBE_SEL_NOT_EQUALS; break;
	case T_GT: op = KUBE_SEL_GT; break;
	case T_LT: op = KUBE_SEL_LT; break;
	default:
		kube_errf(err, "found '%s', expected: in, notin, =, ==, !=, gt, lt", lit);
		return -1;
	}
	struct strset vals = {0};
	int rc;
	if (op == KUBE_SEL_IN || op == KUBE_SEL_NOT_IN) {
		rc = parse_values(p, &vals, err);
	} else {
		enum tok t2 = peek(p, VALUES, &l2);
		if (t2 == T_EOS || t2 == T_COMMA) {
			rc = set_add(&vals, "");
		} else {
			t2 = next(p, VALUES, &l2);
			if (t2 == T_ID) {
				rc = set_add(&vals, l2);
			} else {
				kube_errf(err, "found '%s', expected: identifier", l2);
				rc = -1;
			}
		}
	}
	if (rc == 0)
		rc = req_init(r, key, op, (const char *const *)vals.v, vals.n, false, err);
	else if (err && !*err)
		kube_errf(err, "out of memory");
	set_clear(&vals);
	return rc;
}

int kube_label_selector_parse(const char *text, struct kube_label_selector **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	if (!text)
		text = "";
	struct parser p = {0};
	size_t cap = 0, pos = 0;
	struct kube_label_selector *s = sel_new();
	int rc = -1;
	if (!s)
		goto oom;
	for (;;) {
		if (p.n == cap) {
			cap = cap ? cap * 2 : 16;
			struct item *ni = realloc(p.items, cap * sizeof(*ni));
			if (!ni)
				goto oom;
			p.items = ni;
		}
		if (lex(text, &pos, &p.items[p.n]) != 0)
			goto oom;
		if (p.items[p.n++].tok == T_EOS)
			break;
	}
	for (;;) {
		const char *lit;
		enum tok t = peek(&p, VALUES, &lit);
		if (t == T_EOS)
			break;
		if (t != T_ID && t != T_NOT) {
			kube_errf(err, "found '%s', expected: !, identifier, or 'end of string'", lit);
			goto out;
		}
		struct requirement r;
		char *rerr = NULL;
		if (parse_requirement(&p, &r, &rerr) != 0) {
			kube_errf(err, "unable to parse requirement: %s", rerr ? rerr : "out of memory");
			free(rerr);
			goto out;
		}
		if (sel_append(s, &r) != 0) {
			req_free(&r);
			goto oom;
		}
		t = next(&p, VALUES, &lit);
		if (t == T_EOS)
			break;
		if (t != T_COMMA) {
			kube_errf(err, "found '%s', expected: ',' or 'end of string'", lit);
			goto out;
		}
		t = peek(&p, VALUES, &lit);
		if (t != T_ID && t != T_NOT) {
			kube_errf(err, "found '%s', expected: identifier after ','", lit);
			goto out;
		}
	}
	sel_sort(s);
	*out = s;
	s = NULL;
	rc = 0;
	goto out;
oom:
	kube_errf(err, "out of memory");
out:
	for (size_t i = 0; i < p.n; i++)
		free(p.items[i].lit);
	free(p.items);
	kube_label_selector_free(s);
	return rc;
}

/* ---- metav1.LabelSelector ---- */

int kube_label_selector_from_json(const cJSON *sel, struct kube_label_selector **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	struct kube_label_selector *s = sel_new();
	if (!s) {
		kube_errf(err, "out of memory");
		return -1;
	}
	if (!sel || cJSON_IsNull(sel)) {
		s->nothing = true;
		*out = s;
		return 0;
	}
	if (!cJSON_IsObject(sel)) {
		kube_errf(err, "label selector must be an object");
		goto fail;
	}
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
	if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml)) {
		kube_errf(err, "matchLabels: must be an object");
		goto fail;
	}
	if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me)) {
		kube_errf(err, "matchExpressions: must be an array");
		goto fail;
	}
	const cJSON *it;
	if (cJSON_IsObject(ml)) {
		cJSON_ArrayForEach(it, ml)
		{
			if (!cJSON_IsString(it)) {
				kube_errf(err, "matchLabels.%s: must be a string", it->string);
				goto fail;
			}
			const char *v = it->valuestring;
			struct requirement r;
			if (req_init(&r, it->string, KUBE_SEL_EQUALS, &v, 1, false, err) != 0)
				goto fail;
			if (sel_append(s, &r) != 0) {
				req_free(&r);
				kube_errf(err, "out of memory");
				goto fail;
			}
		}
	}
	if (cJSON_IsArray(me)) {
		cJSON_ArrayForEach(it, me)
		{
			const cJSON *key = cJSON_GetObjectItemCaseSensitive(it, "key");
			const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "operator");
			const cJSON *values = cJSON_GetObjectItemCaseSensitive(it, "values");
			const char *ops = cJSON_IsString(op) ? op->valuestring : "";
			enum kube_selector_op o;
			if (strcmp(ops, "In") == 0)
				o = KUBE_SEL_IN;
			else if (strcmp(ops, "NotIn") == 0)
				o = KUBE_SEL_NOT_IN;
			else if (strcmp(ops, "Exists") == 0)
				o = KUBE_SEL_EXISTS;
			else if (strcmp(ops, "DoesNotExist") == 0)
				o = KUBE_SEL_DOES_NOT_EXIST;
			else {
				kube_errf(err, "\"%s\" is not a valid label selector operator", ops);
				goto fail;
			}
			size_t n = cJSON_IsArray(values) ? (size_t)cJSON_GetArraySize(values) : 0;
			const char **vals = n ? calloc(n, sizeof(char *)) : NULL;
			if (n && !vals) {
				kube_errf(err, "out of memory");
				goto fail;
			}
			size_t i = 0;
			const cJSON *v;
			if (n) {
				cJSON_ArrayForEach(v, values)
				{
					if (!cJSON_IsString(v)) {
						free(vals);
						kube_errf(err, "matchExpressions.values: must be strings");
						goto fail;
					}
					vals[i++] = v->valuestring;
				}
			}
			struct requirement r;
			int rc = req_init(&r, cJSON_IsString(key) ? key->valuestring : "", o, vals, n,
					  !values || cJSON_IsNull(values), err);
			free(vals);
			if (rc != 0)
				goto fail;
			if (sel_append(s, &r) != 0) {
				req_free(&r);
				kube_errf(err, "out of memory");
				goto fail;
			}
		}
	}
	sel_sort(s);
	*out = s;
	return 0;
fail:
	kube_label_selector_free(s);
	return -1;
}

int kube_label_selector_from_map(const cJSON *map, struct kube_label_selector **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	struct kube_label_selector *s = sel_new();
	if (!s) {
		kube_errf(err, "out of memory");
		return -1;
	}
	const cJSON *it;
	if (cJSON_IsObject(map)) {
		cJSON_ArrayForEach(it, map)
		{
			if (!cJSON_IsString(it)) {
				kube_errf(err, "%s: must be a string", it->string);
				goto fail;
			}
			struct requirement r = {0};
			r.op = KUBE_SEL_EQUALS;
			r.key = strdup(it->string);
			r.values = malloc(sizeof(char *));
			if (r.key && r.values && (r.values[0] = strdup(it->valuestring)))
				r.nvalues = 1;
			if (!r.nvalues || sel_append(s, &r) != 0) {
				req_free(&r);
				kube_errf(err, "out of memory");
				goto fail;
			}
		}
	}
	sel_sort(s);
	*out = s;
	return 0;
fail:
	kube_label_selector_free(s);
	return -1;
}

static int req_copy(struct requirement *dst, const struct requirement *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->op = src->op;
	dst->number = src->number;
	dst->key = strdup(src->key);
	dst->values = src->nvalues ? calloc(src->nvalues, sizeof(char *)) : NULL;
	if (!dst->key || (src->nvalues && !dst->values))
		goto oom;
	for (size_t i = 0; i < src->nvalues; i++) {
		if (!(dst->values[i] = strdup(src->values[i])))
			goto oom;
		dst->nvalues++;
	}
	return 0;
oom:
	req_free(dst);
	return -1;
}

int kube_label_selector_add(const struct kube_label_selector *s, const char *key, enum kube_selector_op op,
			    const char *const *values, size_t n, struct kube_label_selector **out, char **err)
{
	return kube_label_selector_add_at(s, NULL, key, op, values, n, false, out, err);
}

int kube_label_selector_add_at(const struct kube_label_selector *s, const char *path, const char *key,
			       enum kube_selector_op op, const char *const *values, size_t n, bool values_nil,
			       struct kube_label_selector **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	struct kube_label_selector *c = sel_new();
	if (!c) {
		kube_errf(err, "out of memory");
		return -1;
	}
	c->nothing = s ? s->nothing : false;
	for (size_t i = 0; s && i < s->n; i++) {
		struct requirement r;
		if (req_copy(&r, &s->reqs[i]) != 0 || sel_append(c, &r) != 0) {
			kube_errf(err, "out of memory");
			kube_label_selector_free(c);
			return -1;
		}
	}
	struct requirement r;
	if (req_init_at(&r, path, key ? key : "", op, values, n, values_nil, err) != 0) {
		kube_label_selector_free(c);
		return -1;
	}
	if (sel_append(c, &r) != 0) {
		req_free(&r);
		kube_errf(err, "out of memory");
		kube_label_selector_free(c);
		return -1;
	}
	sel_sort(c);
	*out = c;
	return 0;
}

void kube_label_selector_canonicalize(struct kube_label_selector *s, const char *(*canon)(const char *))
{
	for (size_t i = 0; s && i < s->n; i++) {
		struct requirement *r = &s->reqs[i];
		r->ikey = canon(r->key);
		if (r->ivalues || !r->nvalues)
			continue;
		const char **iv = calloc(r->nvalues, sizeof(*iv));
		bool any = false;
		for (size_t j = 0; iv && j < r->nvalues; j++)
			any |= (iv[j] = canon(r->values[j])) != NULL;
		if (any)
			r->ivalues = iv;
		else
			free(iv);
	}
}

bool kube_label_selector_matches(const struct kube_label_selector *s, kube_label_lookup_fn get, const void *ctx)
{
	if (!s || s->nothing)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (!req_matches(&s->reqs[i], get, ctx))
			return false;
	return true;
}

static const char *json_label(const void *ctx, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive((const cJSON *)ctx, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *no_label(const void *ctx, const char *key)
{
	(void)ctx;
	(void)key;
	return NULL;
}

bool kube_label_selector_matches_json(const struct kube_label_selector *s, const cJSON *labels)
{
	if (cJSON_IsObject(labels))
		return kube_label_selector_matches(s, json_label, labels);
	return kube_label_selector_matches(s, no_label, NULL);
}

bool kube_label_selector_equal(const struct kube_label_selector *a, const struct kube_label_selector *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->nothing != b->nothing || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct requirement *x = &a->reqs[i], *y = &b->reqs[i];
		if (x->op != y->op || x->nvalues != y->nvalues || x->number != y->number || strcmp(x->key, y->key) != 0)
			return false;
		for (size_t j = 0; j < x->nvalues; j++)
			if (strcmp(x->values[j], y->values[j]) != 0)
				return false;
	}
	return true;
}

bool kube_label_selector_is_empty(const struct kube_label_selector *s) { return s && !s->nothing && s->n == 0; }
bool kube_label_selector_is_nothing(const struct kube_label_selector *s) { return !s || s->nothing; }

char *kube_label_selector_string(const struct kube_label_selector *s)
{
	struct sbuf b = {0};
	for (size_t i = 0; s && i < s->n; i++) {
		const struct requirement *r = &s->reqs[i];
		if (i)
			sb_puts(&b, ",");
		if (r->op == KUBE_SEL_DOES_NOT_EXIST)
			sb_puts(&b, "!");
		sb_puts(&b, r->key);
		switch (r->op) {
		case KUBE_SEL_EQUALS: sb_puts(&b, "="); break;
		case KUBE_SEL_DOUBLE_EQUALS: sb_puts(&b, "=="); break;
		case KUBE_SEL_NOT_EQUALS: sb_puts(&b, "!="); break;
		case KUBE_SEL_IN: sb_puts(&b, " in "); break;
		case KUBE_SEL_NOT_IN: sb_puts(&b, " notin "); break;
		case KUBE_SEL_GT: sb_puts(&b, ">"); break;
		case KUBE_SEL_LT: sb_puts(&b, "<"); break;
		default: break;
		}
		if (r->op == KUBE_SEL_IN || r->op == KUBE_SEL_NOT_IN) {
			sb_puts(&b, "(");
			for (size_t j = 0; j < r->nvalues; j++) {
				if (j)
					sb_puts(&b, ",");
				sb_puts(&b, r->values[j]);
			}
			sb_puts(&b, ")");
		} else if (r->nvalues) {
			sb_puts(&b, r->values[0]);
		}
	}
	return sb_finish(&b);
}

/* ---- field selectors ---- */

struct field_term {
	char *field;
	char *value;
	bool not_equal;
};

struct kube_field_selector {
	size_t n;
	struct field_term *terms;
};

void kube_field_selector_free(struct kube_field_selector *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->terms[i].field);
		free(s->terms[i].value);
	}
	free(s->terms);
	free(s);
}

/* upstream UnescapeValue: \\ \, \= are escapes; bare , or = are errors. */
static char *unescape_value(const char *s, char **err)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1), *o = out;
	if (!out) {
		kube_errf(err, "out of memory");
		return NULL;
	}
	bool slash = false;
	for (const char *p = s; *p; p++) {
		if (slash) {
			if (*p != '\\' && *p != ',' && *p != '=') {
				kube_errf(err, "invalid field selector: invalid escape sequence: \\%c", *p);
				free(out);
				return NULL;
			}
			*o++ = *p;
			slash = false;
			continue;
		}
		if (*p == '\\') {
			slash = true;
		} else if (*p == ',' || *p == '=') {
			/* Go prints the rune with %v, i.e. its code point */
			kube_errf(err, "invalid field selector: unescaped character in value: %d", *p);
			free(out);
			return NULL;
		} else {
			*o++ = *p;
		}
	}
	if (slash) {
		kube_errf(err, "invalid field selector: invalid escape sequence: \\");
		free(out);
		return NULL;
	}
	*o = '\0';
	return out;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int kube_field_selector_parse(const char *text, struct kube_field_selector **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	if (!text)
		text = "";
	struct kube_field_selector *s = calloc(1, sizeof(*s));
	char **parts = NULL;
	size_t nparts = 0;
	int rc = -1;
	if (!s)
		goto oom;
	size_t len = strlen(text);
	if (len > 0) {
		/* split on unescaped commas */
		size_t start = 0;
		bool slash = false;
		for (size_t i = 0; i <= len; i++) {
			if (i < len) {
				if (slash) {
					slash = false;
					continue;
				}
				if (text[i] == '\\') {
					slash = true;
					continue;
				}
				if (text[i] != ',')
					continue;
			}
			char **np = realloc(parts, (nparts + 1) * sizeof(char *));
			if (!np)
				goto oom;
			parts = np;
			if (!(parts[nparts] = strndup(text + start, i - start)))
				goto oom;
			nparts++;
			start = i + 1;
		}
		qsort(parts, nparts, sizeof(char *), cmp_cstr);
	}
	for (size_t i = 0; i < nparts; i++) {
		const char *part = parts[i];
		if (!*part)
			continue;
		const char *op = NULL;
		size_t at = 0, oplen = 0;
		for (size_t j = 0; part[j] && !op; j++) {
			if (strncmp(part + j, "!=", 2) == 0) {
				op = "!=";
				oplen = 2;
			} else if (strncmp(part + j, "==", 2) == 0) {
				op = "==";
				oplen = 2;
			} else if (part[j] == '=') {
				op = "=";
				oplen = 1;
			}
			at = j;
		}
		if (!op) {
			kube_errf(err, "invalid selector: '%s'; can't understand '%s'", text, part);
			goto out;
		}
		char *value = unescape_value(part + at + oplen, err);
		if (!value)
			goto out;
		struct field_term *nt = realloc(s->terms, (s->n + 1) * sizeof(*nt));
		if (!nt) {
			free(value);
			goto oom;
		}
		s->terms = nt;
		struct field_term *t = &s->terms[s->n];
		t->field = strndup(part, at);
		t->value = value;
		t->not_equal = op[0] == '!';
		if (!t->field) {
			free(value);
			goto oom;
		}
		s->n++;
	}
	*out = s;
	s = NULL;
	rc = 0;
	goto out;
oom:
	kube_errf(err, "out of memory");
out:
	for (size_t i = 0; i < nparts; i++)
		free(parts[i]);
	free(parts);
	kube_field_selector_free(s);
	return rc;
}

bool kube_field_selector_matches(const struct kube_field_selector *s, kube_field_lookup_fn get, const void *ctx)
{
	if (!s)
		return false;
	for (size_t i = 0; i < s->n; i++) {
		const char *v = get(ctx, s->terms[i].field);
		bool eq = strcmp(v ? v : "", s->terms[i].value) == 0;
		if (eq == s->terms[i].not_equal)
			return false;
	}
	return true;
}

int kube_field_selector_each_field(const struct kube_field_selector *s, int (*fn)(void *u, const char *field), void *u)
{
	for (size_t i = 0; s && i < s->n; i++) {
		int rc = fn(u, s->terms[i].field);
		if (rc)
			return rc;
	}
	return 0;
}

bool kube_field_selector_is_empty(const struct kube_field_selector *s) { return !s || s->n == 0; }

const char *kube_field_selector_requires_exact(const struct kube_field_selector *s, const char *field)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!s->terms[i].not_equal && strcmp(s->terms[i].field, field) == 0)
			return s->terms[i].value;
	return NULL;
}

static void sb_escaped(struct sbuf *b, const char *v)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == ',' || *p == '=')
			sb_putn(b, "\\", 1);
		sb_putn(b, p, 1);
	}
}

char *kube_field_selector_string(const struct kube_field_selector *s)
{
	struct sbuf b = {0};
	for (size_t i = 0; s && i < s->n; i++) {
		if (i)
			sb_puts(&b, ",");
		sb_puts(&b, s->terms[i].field);
		sb_puts(&b, s->terms[i].not_equal ? "!=" : "=");
		sb_escaped(&b, s->terms[i].value);
	}
	return sb_finish(&b);
}
