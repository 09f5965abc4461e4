/* v1.NodeSelector and PreferredSchedulingTerm compilation and matching, following
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity: matchExpressions become a label
 * selector (In, NotIn, Exists, DoesNotExist, Gt, Lt), matchFields a field selector (In/NotIn
 * with exactly one value), empty terms are dropped, and errors carry the field path. */
#include "kube/nodeselector.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

struct field_req {
	char *key;
	char *value;
	bool not_in;
};

struct term {
	struct kube_label_selector *labels; /* NULL when the term has no matchExpressions */
	struct field_req *fields;
	size_t nfields;
	bool has_fields;
	bool broken; /* lazy mode: failed to compile, never matches */
	int64_t weight;
};

struct kube_node_selector {
	size_t n;
	struct term *terms;
	bool had_empty_terms; /* dropped at compile: they still stop PreFilter narrowing upstream */
};

struct kube_preferred_terms {
	size_t n;
	struct term *terms;
};

/* Errors collected like upstream's flattened aggregate: one -> "msg", several -> "[a, b]". */
struct errs {
	char *joined;
	size_t count;
	bool oom;
};

static void errs_add(struct errs *e, const char *msg)
{
	/* A nested aggregate "[a, b]" is flattened into its parts. */
	size_t len = strlen(msg);
	size_t parts = 1;
	const char *body = msg;
	size_t body_len = len;
	if (len >= 2 && msg[0] == '[' && msg[len - 1] == ']') {
		body = msg + 1;
		body_len = len - 2;
		parts = 2; /* at least two when bracketed */
	}
	char *n = NULL;
	if (asprintf(&n, "%s%s%.*s", e->joined ? e->joined : "", e->joined ? ", " : "", (int)body_len, body) < 0) {
		e->oom = true;
		return;
	}
	free(e->joined);
	e->joined = n;
	e->count += parts;
}

static void errs_addf(struct errs *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errs_addf(struct errs *e, const char *fmt, ...)
{
	char *m = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		e->oom = true;
		return;
	}
	errs_add(e, m);
	free(m);
}

static char *errs_take(struct errs *e)
{
	if (e->oom) {
		free(e->joined);
		return strdup("out of memory");
	}
	if (e->count > 1) {
		char *m = NULL;
		if (asprintf(&m, "[%s]", e->joined) < 0)
			m = NULL;
		free(e->joined);
		return m;
	}
	return e->joined;
}

static void term_free(struct term *t)
{
	kube_label_selector_free(t->labels);
	for (size_t i = 0; i < t->nfields; i++) {
		free(t->fields[i].key);
		free(t->fields[i].value);
	}
	free(t->fields);
}

static bool term_is_empty(const cJSON *term)
{
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(term, "matchExpressions");
	const cJSON *mf = cJSON_GetObjectItemCaseSensitive(term, "matchFields");
	return cJSON_GetArraySize(cJSON_IsArray(me) ? me : NULL) == 0 &&
	       cJSON_GetArraySize(cJSON_IsArray(mf) ? mf : NULL) == 0;
}

/* Go's %#v for a JSON array of strings (NULL -> []string(nil)). */
static char *go_strings(const cJSON *values)
{
	size_t cap = 32;
	char *s = NULL;
	if (!values || cJSON_IsNull(values))
		return strdup("[]string(nil)");
	for (const cJSON *v = values->child; v; v = v->next)
		cap += (cJSON_IsString(v) ? strlen(v->valuestring) : 4) + 4;
	s = malloc(cap);
	if (!s)
		return NULL;
	strcpy(s, "[]string{");
	bool first = true;
	for (const cJSON *v = values->child; v; v = v->next) {
		if (!first)
			strcat(s, ", ");
		first = false;
		strcat(s, "\"");
		strcat(s, cJSON_IsString(v) ? v->valuestring : "");
		strcat(s, "\"");
	}
	strcat(s, "}");
	return s;
}

static const char *str_or_empty(const cJSON *j) { return cJSON_IsString(j) ? j->valuestring : ""; }

static void compile_expressions(struct term *t, const cJSON *me, const char *path, struct errs *e)
{
	struct kube_label_selector *sel = NULL;
	char *err = NULL;
	size_t before = e->count;
	if (kube_label_selector_parse("", &sel, &err) != 0) {
		errs_add(e, err ? err : "out of memory");
		free(err);
		return;
	}
	int i = 0;
	for (const cJSON *r = me->child; r; r = r->next, i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s.matchExpressions[%d]", path, i);
		const char *op = str_or_empty(cJSON_GetObjectItemCaseSensitive(r, "operator"));
		enum kube_selector_op o;
		if (strcmp(op, "In") == 0)
			o = KUBE_SEL_IN;
		else if (strcmp(op, "NotIn") == 0)
			o = KUBE_SEL_NOT_IN;
		else if (strcmp(op, "Exists") == 0)
			o = KUBE_SEL_EXISTS;
		else if (strcmp(op, "DoesNotExist") == 0)
			o = KUBE_SEL_DOES_NOT_EXIST;
		else if (strcmp(op, "Gt") == 0)
			o = KUBE_SEL_GT;
		else if (strcmp(op, "Lt") == 0)
			o = KUBE_SEL_LT;
		else {
			errs_addf(e, "%s.operator: Unsupported value: \"%s\"", p, op);
			continue;
		}
		const cJSON *values = cJSON_GetObjectItemCaseSensitive(r, "values");
		size_t n = cJSON_IsArray(values) ? (size_t)cJSON_GetArraySize(values) : 0;
		const char **vals = n ? calloc(n, sizeof(char *)) : NULL;
		if (n && !vals) {
			e->oom = true;
			continue;
		}
		size_t k = 0;
		for (const cJSON *v = n ? values->child : NULL; v; v = v->next)
			vals[k++] = str_or_empty(v);
		struct kube_label_selector *next = NULL;
		err = NULL;
		if (kube_label_selector_add_at(sel, p, str_or_empty(cJSON_GetObjectItemCaseSensitive(r, "key")), o, vals,
					       n, !cJSON_IsArray(values), &next, &err) != 0) {
			errs_add(e, err ? err : "out of memory");
		} else {
			kube_label_selector_free(sel);
			sel = next;
		}
		free(err);
		free(vals);
	}
	if (e->count != before || e->oom) {
		kube_label_selector_free(sel);
		return;
	}
	t->labels = sel;
}

static void compile_fields(struct term *t, const cJSON *mf, const char *path, struct errs *e)
{
	size_t n = (size_t)cJSON_GetArraySize(mf);
	t->has_fields = true;
	t->fields = calloc(n, sizeof(*t->fields));
	if (!t->fields) {
		e->oom = true;
		return;
	}
	int i = 0;
	for (const cJSON *r = mf->child; r; r = r->next, i++) {
		const char *op = str_or_empty(cJSON_GetObjectItemCaseSensitive(r, "operator"));
		const cJSON *values = cJSON_GetObjectItemCaseSensitive(r, "values");
		bool in = strcmp(op, "In") == 0, not_in = strcmp(op, "NotIn") == 0;
		if (!in && !not_in) {
			errs_addf(e, "%s.matchFields[%d].operator: Unsupported value: \"%s\": supported values: \"In\", \"NotIn\"",
				  path, i, op);
			continue;
		}
		if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) != 1) {
			char *g = go_strings(cJSON_IsArray(values) ? values : NULL);
			errs_addf(e, "%s.matchFields[%d].values: Invalid value: %s: must have one element", path, i,
				  g ? g : "?");
			free(g);
			continue;
		}
		struct field_req *f = &t->fields[t->nfields];
		f->key = strdup(str_or_empty(cJSON_GetObjectItemCaseSensitive(r, "key")));
		f->value = strdup(str_or_empty(values->child));
		f->not_in = not_in;
		t->nfields++;
		if (!f->key || !f->value)
			e->oom = true;
	}
}

/* Compiles one term; returns false when it had errors (added to e). */
static bool compile_term(struct term *t, const cJSON *term, const char *path, struct errs *e)
{
	size_t before = e->count;
	memset(t, 0, sizeof(*t));
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(term, "matchExpressions");
	const cJSON *mf = cJSON_GetObjectItemCaseSensitive(term, "matchFields");
	if (cJSON_IsArray(me) && cJSON_GetArraySize(me) > 0)
		compile_expressions(t, me, path, e);
	if (cJSON_IsArray(mf) && cJSON_GetArraySize(mf) > 0)
		compile_fields(t, mf, path, e);
	if (e->count != before || e->oom) {
		term_free(t);
		memset(t, 0, sizeof(*t));
		t->broken = true;
		return false;
	}
	return true;
}

static bool term_matches(const struct term *t, const char *node_name, kube_label_lookup_fn get, const void *ctx)
{
	if (t->broken)
		return false;
	if (t->labels && !kube_label_selector_matches(t->labels, get, ctx))
		return false;
	/* upstream skips matchFields when the node has no name (empty field set) */
	if (t->has_fields && node_name && *node_name) {
		for (size_t i = 0; i < t->nfields; i++) {
			const char *v = strcmp(t->fields[i].key, "metadata.name") == 0 ? node_name : "";
			bool eq = strcmp(v, t->fields[i].value) == 0;
			if (eq == t->fields[i].not_in)
				return false;
		}
	}
	return true;
}

static bool term_equal(const struct term *x, const struct term *y)
{
	if (x->broken != y->broken || x->has_fields != y->has_fields || x->nfields != y->nfields ||
	    x->weight != y->weight || !kube_label_selector_equal(x->labels, y->labels))
		return false;
	for (size_t i = 0; i < x->nfields; i++)
		if (x->fields[i].not_in != y->fields[i].not_in || strcmp(x->fields[i].key, y->fields[i].key) != 0 ||
		    strcmp(x->fields[i].value, y->fields[i].value) != 0)
			return false;
	return true;
}

bool kube_node_selector_equal(const struct kube_node_selector *a, const struct kube_node_selector *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->n != b->n || a->had_empty_terms != b->had_empty_terms)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!term_equal(&a->terms[i], &b->terms[i]))
			return false;
	return true;
}

int kube_node_selector_compile(const cJSON *terms, const char *path, unsigned flags, struct kube_node_selector **out,
			       char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	if (!path)
		path = "nodeSelectorTerms";
	struct kube_node_selector *s = calloc(1, sizeof(*s));
	if (!s) {
		kube_errf(err, "out of memory");
		return -1;
	}
	size_t n = cJSON_IsArray(terms) ? (size_t)cJSON_GetArraySize(terms) : 0;
	s->terms = n ? calloc(n, sizeof(struct term)) : NULL;
	if (n && !s->terms) {
		free(s);
		kube_errf(err, "out of memory");
		return -1;
	}
	struct errs e = {0};
	int i = 0;
	for (const cJSON *t = n ? terms->child : NULL; t; t = t->next, i++) {
		if (term_is_empty(t)) {
			s->had_empty_terms = true;
			continue; /* an empty term selects nothing */
		}
		char p[256];
		snprintf(p, sizeof(p), "%s[%d]", path, i);
		compile_term(&s->terms[s->n], t, p, &e);
		s->n++;
	}
	if (e.count || e.oom) {
		char *msg = errs_take(&e);
		if (!(flags & KUBE_NODE_SELECTOR_LAZY) || e.oom) {
			kube_node_selector_free(s);
			kube_errf(err, "%s", msg ? msg : "out of memory");
			free(msg);
			return -1;
		}
		kube_errf(err, "%s", msg ? msg : "out of memory");
		free(msg);
	}
	*out = s;
	return 0;
}

int kube_node_selector_compile_object(const cJSON *node_selector, const char *path, unsigned flags,
				      struct kube_node_selector **out, char **err)
{
	char p[256];
	snprintf(p, sizeof(p), "%s%snodeSelectorTerms", path ? path : "", path && *path ? "." : "");
	return kube_node_selector_compile(cJSON_GetObjectItemCaseSensitive(node_selector, "nodeSelectorTerms"), p,
					  flags, out, err);
}

/* Upstream NodeAffinity PreFilter: within a term, "metadata.name In" requirements intersect; across
 * terms the sets are unioned; one term without such a requirement means no narrowing. */
int kube_node_selector_node_names(const struct kube_node_selector *s, const char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	if (!s || s->had_empty_terms || s->n == 0)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct term *t = &s->terms[i];
		bool has_name_in = false;
		for (size_t j = 0; !t->broken && j < t->nfields; j++)
			if (!t->fields[j].not_in && strcmp(t->fields[j].key, "metadata.name") == 0)
				has_name_in = true;
		if (!has_name_in)
			return 0;
	}
	const char **out = calloc(s->n, sizeof(*out));
	if (!out)
		return -1;
	size_t count = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct term *t = &s->terms[i];
		const char *name = NULL;
		bool conflict = false;
		for (size_t j = 0; j < t->nfields; j++) {
			const struct field_req *f = &t->fields[j];
			if (f->not_in || strcmp(f->key, "metadata.name") != 0)
				continue;
			if (!name)
				name = f->value;
			else if (strcmp(name, f->value) != 0)
				conflict = true; /* single-valued sets: the intersection is empty */
		}
		if (conflict)
			continue;
		bool seen = false;
		for (size_t k = 0; k < count && !seen; k++)
			seen = strcmp(out[k], name) == 0;
		if (!seen)
			out[count++] = name;
	}
	*names = out;
	*n = count;
	return 1;
}

void kube_node_selector_canonicalize(struct kube_node_selector *s, const char *(*canon)(const char *))
{
	for (size_t i = 0; s && i < s->n; i++)
		kube_label_selector_canonicalize(s->terms[i].labels, canon);
}

void kube_preferred_terms_canonicalize(struct kube_preferred_terms *p, const char *(*canon)(const char *))
{
	for (size_t i = 0; p && i < p->n; i++)
		kube_label_selector_canonicalize(p->terms[i].labels, canon);
}

bool kube_node_selector_matches(const struct kube_node_selector *s, const char *node_name, kube_label_lookup_fn get,
				const void *ctx)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (term_matches(&s->terms[i], node_name, get, ctx))
			return true;
	return false;
}

static const char *json_label(const void *ctx, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive((const cJSON *)ctx, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void node_parts(const cJSON *node, const char **name, const cJSON **labels)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(node, "metadata");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(meta, "name");
	*name = cJSON_IsString(n) ? n->valuestring : NULL;
	*labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
}

bool kube_node_selector_matches_node(const struct kube_node_selector *s, const cJSON *node)
{
	if (!node)
		return false;
	const char *name;
	const cJSON *labels;
	node_parts(node, &name, &labels);
	return kube_node_selector_matches(s, name, json_label, cJSON_IsObject(labels) ? labels : NULL);
}

void kube_node_selector_free(struct kube_node_selector *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		term_free(&s->terms[i]);
	free(s->terms);
	free(s);
}

int kube_preferred_terms_compile(const cJSON *terms, const char *path, unsigned flags,
				 struct kube_preferred_terms **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	if (!path)
		path = "preferredDuringSchedulingIgnoredDuringExecution";
	struct kube_preferred_terms *p = calloc(1, sizeof(*p));
	size_t n = cJSON_IsArray(terms) ? (size_t)cJSON_GetArraySize(terms) : 0;
	if (!p || (n && !(p->terms = calloc(n, sizeof(struct term))))) {
		free(p);
		kube_errf(err, "out of memory");
		return -1;
	}
	struct errs e = {0};
	int i = 0;
	for (const cJSON *t = n ? terms->child : NULL; t; t = t->next, i++) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, "weight");
		const cJSON *pref = cJSON_GetObjectItemCaseSensitive(t, "preference");
		int64_t weight = cJSON_IsNumber(w) ? (int64_t)w->valuedouble : 0;
		if (weight == 0 || term_is_empty(pref))
			continue;
		char tp[256];
		snprintf(tp, sizeof(tp), "%s[%d]", path, i);
		struct term tm;
		if (compile_term(&tm, pref, tp, &e)) {
			tm.weight = weight;
			p->terms[p->n++] = tm;
		}
	}
	if (e.count || e.oom) {
		char *msg = errs_take(&e);
		if (!(flags & KUBE_NODE_SELECTOR_LAZY) || e.oom) {
			kube_preferred_terms_free(p);
			kube_errf(err, "%s", msg ? msg : "out of memory");
			free(msg);
			return -1;
		}
		kube_errf(err, "%s", msg ? msg : "out of memory");
		free(msg);
	}
	*out = p;
	return 0;
}

int64_t kube_preferred_terms_score(const struct kube_preferred_terms *p, const char *node_name,
				   kube_label_lookup_fn get, const void *ctx)
{
	int64_t score = 0;
	for (size_t i = 0; p && i < p->n; i++)
		if (term_matches(&p->terms[i], node_name, get, ctx))
			score += p->terms[i].weight;
	return score;
}

int64_t kube_preferred_terms_score_node(const struct kube_preferred_terms *p, const cJSON *node)
{
	if (!node)
		return 0;
	const char *name;
	const cJSON *labels;
	node_parts(node, &name, &labels);
	return kube_preferred_terms_score(p, name, json_label, cJSON_IsObject(labels) ? labels : NULL);
}

void kube_preferred_terms_free(struct kube_preferred_terms *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		term_free(&p->terms[i]);
	free(p->terms);
	free(p);
}
