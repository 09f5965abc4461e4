/* schema.c — structural schemas of CustomResourceDefinitions, applied the way the real API server
 * applies them to a custom resource: non-nullable nulls dropped, defaults filled in, unknown
 * fields pruned, then validated, with field errors worded like upstream's (apiextensions-apiserver
 * converts kube-openapi validation results into k8s.io/apimachinery field errors:
 * `Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
 * `Required value`, `Unsupported value: "x": supported values: "a", "b"`, ...).
 *
 * Also the strict-decoding side for built-in kinds: a compact table of the fields the kinds
 * schedkit uses know, so fieldValidation=Strict can answer `strict decoding error: unknown field
 * "spec.foo"` for typos.
 *
 * Limits (documented, deliberate):
 *   - pattern uses POSIX ERE after translating the common RE2 forms (\d \w \s \D \W \S and
 *     (?:...)); flags, lookarounds and non-greedy quantifiers are not supported: a pattern that
 *     does not compile is reported by apis_schema_check and not enforced here;
 *   - no x-kubernetes-validations (CEL), no format other than int32/int64, no
 *     x-kubernetes-list-type uniqueness, no oneOf/anyOf/allOf/not;
 *   - the built-in known-field table covers the top level and the parts of metadata, Pod,
 *     PodTemplate, Container, Deployment/ReplicaSet, Node, Service and a few more listed below;
 *     deeper fields (affinity terms, probes, volume sources, ...) are not checked.
 * No global state; thread-safe. */
#include "e2e/apiserver/schema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- small helpers */

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *sget(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool btrue(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(get(o, k));
}

struct sb {
	char *s;
	size_t n, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sb *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0) {
		b->oom = true;
		va_end(ap2);
		return;
	}
	if (b->n + (size_t)need + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		while (cap < b->n + (size_t)need + 1)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns) {
			b->oom = true;
			va_end(ap2);
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap2);
	va_end(ap2);
	b->n += (size_t)need;
}

/* Returns the built string (caller frees) or NULL on OOM. */
static char *sb_take(struct sb *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

/* Go's %q for a string (printable UTF-8 kept, the rest escaped). */
static void sb_quote(struct sb *b, const char *s)
{
	sb_add(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			sb_add(b, "\\\"");
			break;
		case '\\':
			sb_add(b, "\\\\");
			break;
		case '\n':
			sb_add(b, "\\n");
			break;
		case '\t':
			sb_add(b, "\\t");
			break;
		case '\r':
			sb_add(b, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				sb_add(b, "\\x%02x", *p);
			else
				sb_add(b, "%c", *p);
		}
	}
	sb_add(b, "\"");
}

/* Go %v of a JSON number as decoded by the apiserver (int64 when integral, else float64). */
static void sb_number(struct sb *b, double d)
{
	if (d == floor(d) && fabs(d) < 9.2e18)
		sb_add(b, "%lld", (long long)d);
	else
		sb_add(b, "%g", d);
}

/* ErrorBody-style rendering of a bad value. */
static void sb_value(struct sb *b, const cJSON *v)
{
	if (!v || cJSON_IsNull(v)) {
		sb_add(b, "\"null\"");
	} else if (cJSON_IsString(v)) {
		sb_quote(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		sb_number(b, v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		sb_add(b, "%s", cJSON_IsTrue(v) ? "true" : "false");
	} else {
		char *j = cJSON_PrintUnformatted(v);
		sb_add(b, "%s", j ? j : "?");
		free(j);
	}
}

/* JSON type name of a value, kube-openapi style ("integer" for integral numbers). */
static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsNumber(v))
		return v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9.2e18 ? "integer"
												 : "number";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "null";
}

/* ---------------------------------------------------------------- errors */

struct ctx {
	cJSON *causes;   /* array, created lazily */
	cJSON *unknown;  /* caller's array or NULL */
	bool oom;
};

static void add_cause(struct ctx *c, const char *reason, const char *field, struct sb *msg)
{
	char *m = sb_take(msg);
	if (!m) {
		c->oom = true;
		return;
	}
	if (!c->causes)
		c->causes = cJSON_CreateArray();
	cJSON *o = cJSON_CreateObject();
	if (!c->causes || !o || !cJSON_AddStringToObject(o, "reason", reason) ||
	    !cJSON_AddStringToObject(o, "message", m) ||
	    !cJSON_AddStringToObject(o, "field", field) || !cJSON_AddItemToArray(c->causes, o)) {
		cJSON_Delete(o);
		c->oom = true;
	}
	free(m);
}

/* field.Invalid(path, value, detail) */
static void err_invalid(struct ctx *c, const char *path, const cJSON *value, const char *detail)
{
	struct sb b = {0};
	sb_add(&b, "Invalid value: ");
	sb_value(&b, value);
	sb_add(&b, ": %s", detail);
	add_cause(c, "FieldValueInvalid", path, &b);
}

/* Invalid value with a numeric bad value (counts). */
static void err_invalid_n(struct ctx *c, const char *path, long long n, const char *detail)
{
	struct sb b = {0};
	sb_add(&b, "Invalid value: %lld: %s", n, detail);
	add_cause(c, "FieldValueInvalid", path, &b);
}

static void err_required(struct ctx *c, const char *path)
{
	struct sb b = {0};
	sb_add(&b, "Required value");
	add_cause(c, "FieldValueRequired", path, &b);
}

/* ---------------------------------------------------------------- paths */

static char *path_child(const char *base, const char *key)
{
	char *p = NULL;
	if (asprintf(&p, "%s%s%s", base, *base ? "." : "", key) < 0)
		return NULL;
	return p;
}

static char *path_index(const char *base, int i)
{
	char *p = NULL;
	if (asprintf(&p, "%s[%d]", base, i) < 0)
		return NULL;
	return p;
}

/* ---------------------------------------------------------------- regex */

/* RE2 -> POSIX ERE for the common escapes. Caller frees. */
static char *translate_pattern(const char *re)
{
	struct sb b = {0};
	bool in_class = false;
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1]) {
			char e = p[1];
			const char *rep = NULL;
			switch (e) {
			case 'd': rep = in_class ? "0-9" : "[0-9]"; break;
			case 'D': rep = in_class ? NULL : "[^0-9]"; break;
			case 'w': rep = in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]"; break;
			case 'W': rep = in_class ? NULL : "[^A-Za-z0-9_]"; break;
			case 's': rep = in_class ? "[:space:]" : "[[:space:]]"; break;
			case 'S': rep = in_class ? NULL : "[^[:space:]]"; break;
			default: break;
			}
			if (rep) {
				sb_add(&b, "%s", rep);
			} else if (in_class && (e == '-' || e == ']' || e == '\\' || e == '^')) {
				/* POSIX classes have no escapes: place literally */
				sb_add(&b, "%c", e);
			} else {
				sb_add(&b, "\\%c", e);
			}
			p++;
			continue;
		}
		if (!in_class && p[0] == '(' && p[1] == '?' && p[2] == ':') {
			sb_add(&b, "("); /* non-capturing group: capturing is equivalent for matching */
			p += 2;
			continue;
		}
		if (*p == '[' && !in_class) {
			in_class = true;
			sb_add(&b, "[");
			if (p[1] == '^') {
				sb_add(&b, "^");
				p++;
			}
			if (p[1] == ']') {
				sb_add(&b, "]");
				p++;
			}
			continue;
		}
		if (*p == ']' && in_class)
			in_class = false;
		sb_add(&b, "%c", *p);
	}
	return sb_take(&b);
}

/* 1 match, 0 no match, -1 pattern unusable. */
static int pattern_match(const char *pattern, const char *s)
{
	char *ere = translate_pattern(pattern);
	if (!ere)
		return -1;
	regex_t re;
	int rc = regcomp(&re, ere, REG_EXTENDED | REG_NOSUB);
	free(ere);
	if (rc != 0)
		return -1;
	rc = regexec(&re, s, 0, NULL, 0) == 0 ? 1 : 0;
	regfree(&re);
	return rc;
}

/* ---------------------------------------------------------------- ObjectMeta */

static const char *const object_meta_fields[] = {
	"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields",
};

static bool known_meta_field(const char *k)
{
	for (size_t i = 0; i < sizeof(object_meta_fields) / sizeof(object_meta_fields[0]); i++)
		if (strcmp(object_meta_fields[i], k) == 0)
			return true;
	return false;
}

static void note_unknown(struct ctx *c, const char *path)
{
	if (!c->unknown)
		return;
	cJSON *s = cJSON_CreateString(path);
	if (!s || !cJSON_AddItemToArray(c->unknown, s)) {
		cJSON_Delete(s);
		c->oom = true;
	}
}

/* Drops (and reports) unknown ObjectMeta fields of obj.metadata. */
static void prune_metadata(struct ctx *c, cJSON *meta, const char *path)
{
	if (!cJSON_IsObject(meta))
		return;
	cJSON *f = meta->child;
	while (f) {
		cJSON *next = f->next;
		if (f->string && !known_meta_field(f->string)) {
			char *p = path_child(path, f->string);
			if (p)
				note_unknown(c, p);
			else
				c->oom = true;
			free(p);
			cJSON_Delete(cJSON_DetachItemViaPointer(meta, f));
		}
		f = next;
	}
}

/* ---------------------------------------------------------------- defaulting, pruning */

/* Drops nulls of non-nullable fields that have no default; replaces the ones with a default.
 * Fills in defaults of missing properties. Recurses. */
static void default_value(struct ctx *c, const cJSON *schema, cJSON *v, int depth)
{
	if (!cJSON_IsObject(schema) || !v || depth > 64)
		return;
	if (cJSON_IsObject(v)) {
		const cJSON *props = get(schema, "properties");
		const cJSON *addl = get(schema, "additionalProperties");
		/* nulls and recursion for existing members */
		cJSON *m = v->child;
		while (m) {
			cJSON *next = m->next;
			const cJSON *ps = m->string ? get(props, m->string) : NULL;
			if (!ps && cJSON_IsObject(addl))
				ps = addl;
			if (ps && cJSON_IsNull(m) && !btrue(ps, "nullable")) {
				const cJSON *def = get(ps, "default");
				if (def) {
					cJSON *d = cJSON_Duplicate(def, 1);
					/* by name: the duplicate carries the name "default" */
					if (!d || !cJSON_ReplaceItemInObjectCaseSensitive(v, m->string, d)) {
						cJSON_Delete(d);
						c->oom = true;
					} else {
						default_value(c, ps, d, depth + 1);
					}
				} else {
					cJSON_Delete(cJSON_DetachItemViaPointer(v, m));
				}
			} else if (ps) {
				default_value(c, ps, m, depth + 1);
			}
			m = next;
		}
		/* missing properties with defaults */
		for (const cJSON *p = cJSON_IsObject(props) ? props->child : NULL; p; p = p->next) {
			const cJSON *def = get(p, "default");
			if (!def || !p->string || cJSON_GetObjectItemCaseSensitive(v, p->string))
				continue;
			cJSON *d = cJSON_Duplicate(def, 1);
			if (!d || !cJSON_AddItemToObject(v, p->string, d)) {
				cJSON_Delete(d);
				c->oom = true;
				continue;
			}
			default_value(c, p, d, depth + 1);
		}
	} else if (cJSON_IsArray(v)) {
		const cJSON *items = get(schema, "items");
		if (!cJSON_IsObject(items))
			return;
		cJSON *e = v->child;
		while (e) {
			cJSON *next = e->next;
			if (cJSON_IsNull(e) && !btrue(items, "nullable") && get(items, "default")) {
				cJSON *d = cJSON_Duplicate(get(items, "default"), 1);
				if (!d || !cJSON_ReplaceItemViaPointer(v, e, d)) {
					cJSON_Delete(d);
					c->oom = true;
				}
			} else {
				default_value(c, items, e, depth + 1);
			}
			e = next;
		}
	}
}

static void prune(struct ctx *c, const cJSON *schema, cJSON *v, const char *path, bool root,
		  int depth);

/* Prunes the members of an object value. */
static void prune_object(struct ctx *c, const cJSON *schema, cJSON *v, const char *path, bool root,
			 int depth)
{
	bool preserve = btrue(schema, "x-kubernetes-preserve-unknown-fields");
	bool embedded = btrue(schema, "x-kubernetes-embedded-resource");
	const cJSON *props = get(schema, "properties");
	const cJSON *addl = get(schema, "additionalProperties");
	cJSON *m = v->child;
	while (m) {
		cJSON *next = m->next;
		const char *k = m->string ? m->string : "";
		char *p = path_child(path, k);
		if (!p) {
			c->oom = true;
			return;
		}
		const cJSON *ps = get(props, k);
		if ((root || embedded) && (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0)) {
			/* kept; typed as strings by the API machinery */
		} else if ((root || embedded) && strcmp(k, "metadata") == 0) {
			prune_metadata(c, m, p);
			if (ps && !root)
				prune(c, ps, m, p, false, depth + 1);
		} else if (ps) {
			prune(c, ps, m, p, false, depth + 1);
		} else if (cJSON_IsObject(addl)) {
			prune(c, addl, m, p, false, depth + 1);
		} else if (cJSON_IsTrue(addl) || preserve) {
			/* kept as is */
		} else {
			note_unknown(c, p);
			cJSON_Delete(cJSON_DetachItemViaPointer(v, m));
		}
		free(p);
		m = next;
	}
}

static void prune(struct ctx *c, const cJSON *schema, cJSON *v, const char *path, bool root,
		  int depth)
{
	if (!cJSON_IsObject(schema) || depth > 64 || c->oom)
		return;
	if (btrue(schema, "x-kubernetes-int-or-string"))
		return;
	if (cJSON_IsObject(v)) {
		prune_object(c, schema, v, path, root, depth);
	} else if (cJSON_IsArray(v)) {
		const cJSON *items = get(schema, "items");
		if (!cJSON_IsObject(items))
			return;
		int i = 0;
		for (cJSON *e = v->child; e; e = e->next, i++) {
			char *p = path_index(path, i);
			if (!p) {
				c->oom = true;
				return;
			}
			prune(c, items, e, p, false, depth + 1);
			free(p);
		}
	}
}

/* ---------------------------------------------------------------- validation */

static void validate(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path,
		     bool root, int depth);

static bool type_ok(const cJSON *schema, const cJSON *v)
{
	const char *t = sget(schema, "type");
	if (btrue(schema, "x-kubernetes-int-or-string")) {
		return cJSON_IsString(v) || (cJSON_IsNumber(v) && strcmp(type_name(v), "integer") == 0);
	}
	if (!t || !*t)
		return true;
	if (cJSON_IsNull(v))
		return btrue(schema, "nullable");
	const char *vt = type_name(v);
	if (strcmp(t, vt) == 0)
		return true;
	if (strcmp(t, "number") == 0 && strcmp(vt, "integer") == 0)
		return true;
	return false;
}

static void validate_number(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path)
{
	double d = v->valuedouble;
	char detail[512];
	const cJSON *min = get(schema, "minimum"), *max = get(schema, "maximum");
	struct sb nb = {0};
	if (cJSON_IsNumber(min)) {
		bool excl = btrue(schema, "exclusiveMinimum");
		if (excl ? d <= min->valuedouble : d < min->valuedouble) {
			sb_number(&nb, min->valuedouble);
			snprintf(detail, sizeof(detail), "%s in body should be greater than %s%s", path,
				 excl ? "" : "or equal to ", nb.s ? nb.s : "?");
			err_invalid(c, path, v, detail);
		}
	}
	free(nb.s);
	nb = (struct sb){0};
	if (cJSON_IsNumber(max)) {
		bool excl = btrue(schema, "exclusiveMaximum");
		if (excl ? d >= max->valuedouble : d > max->valuedouble) {
			sb_number(&nb, max->valuedouble);
			snprintf(detail, sizeof(detail), "%s in body should be less than %s%s", path,
				 excl ? "" : "or equal to ", nb.s ? nb.s : "?");
			err_invalid(c, path, v, detail);
		}
	}
	free(nb.s);
	const cJSON *mo = get(schema, "multipleOf");
	if (cJSON_IsNumber(mo) && mo->valuedouble > 0) {
		double q = d / mo->valuedouble;
		if (fabs(q - floor(q + 0.5)) > 1e-9) {
			nb = (struct sb){0};
			sb_number(&nb, mo->valuedouble);
			snprintf(detail, sizeof(detail), "%s in body should be a multiple of %s", path,
				 nb.s ? nb.s : "?");
			free(nb.s);
			err_invalid(c, path, v, detail);
		}
	}
	const char *fmt = sget(schema, "format");
	if (fmt && strcmp(type_name(v), "integer") == 0) {
		if ((strcmp(fmt, "int32") == 0 && (d < -2147483648.0 || d > 2147483647.0))) {
			snprintf(detail, sizeof(detail), "%s in body must be of type int32: \"%.0f\"", path, d);
			err_invalid(c, path, v, detail);
		}
	}
}

/* Number of UTF-8 code points (kube-openapi counts characters). */
static long utf8_len(const char *s)
{
	long n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			n++;
	return n;
}

static void validate_string(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path)
{
	char detail[1024];
	long len = utf8_len(v->valuestring);
	const cJSON *minl = get(schema, "minLength"), *maxl = get(schema, "maxLength");
	if (cJSON_IsNumber(minl) && len < (long)minl->valuedouble) {
		snprintf(detail, sizeof(detail), "%s in body should be at least %lld chars long", path,
			 (long long)minl->valuedouble);
		err_invalid(c, path, v, detail);
	}
	if (cJSON_IsNumber(maxl) && len > (long)maxl->valuedouble) {
		struct sb b = {0};
		sb_add(&b, "Too long: may not be more than %lld bytes", (long long)maxl->valuedouble);
		add_cause(c, "FieldValueTooLong", path, &b);
	}
	const char *pat = sget(schema, "pattern");
	if (pat && pattern_match(pat, v->valuestring) == 0) {
		snprintf(detail, sizeof(detail), "%s in body should match '%s'", path, pat);
		err_invalid(c, path, v, detail);
	}
}

static void validate_enum(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path)
{
	const cJSON *en = get(schema, "enum");
	if (!cJSON_IsArray(en))
		return;
	for (const cJSON *e = en->child; e; e = e->next)
		if (cJSON_Compare(e, v, 1))
			return;
	struct sb b = {0};
	sb_add(&b, "Unsupported value: ");
	sb_value(&b, v);
	sb_add(&b, ": supported values: ");
	for (const cJSON *e = en->child; e; e = e->next) {
		if (cJSON_IsString(e)) {
			sb_quote(&b, e->valuestring);
		} else {
			char *j = cJSON_PrintUnformatted(e);
			if (j)
				sb_quote(&b, j);
			free(j);
		}
		if (e->next)
			sb_add(&b, ", ");
	}
	add_cause(c, "FieldValueNotSupported", path, &b);
}

static void validate_object(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path,
			    bool root, int depth)
{
	const cJSON *req = get(schema, "required");
	for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next) {
		if (!cJSON_IsString(r))
			continue;
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, r->valuestring);
		if (!m || (cJSON_IsNull(m) && !btrue(get(get(schema, "properties"), r->valuestring),
						      "nullable"))) {
			char *p = path_child(path, r->valuestring);
			if (p)
				err_required(c, p);
			else
				c->oom = true;
			free(p);
		}
	}
	const cJSON *minp = get(schema, "minProperties"), *maxp = get(schema, "maxProperties");
	int n = cJSON_GetArraySize(v);
	char detail[512];
	if (cJSON_IsNumber(minp) && n < (int)minp->valuedouble) {
		snprintf(detail, sizeof(detail), "%s in body should have at least %d properties", path,
			 (int)minp->valuedouble);
		err_invalid_n(c, path, n, detail);
	}
	if (cJSON_IsNumber(maxp) && n > (int)maxp->valuedouble) {
		struct sb b = {0};
		sb_add(&b, "Too many: %d: must have at most %d items", n, (int)maxp->valuedouble);
		add_cause(c, "FieldValueTooMany", path, &b);
	}
	const cJSON *props = get(schema, "properties");
	const cJSON *addl = get(schema, "additionalProperties");
	for (const cJSON *m = v->child; m; m = m->next) {
		const char *k = m->string ? m->string : "";
		if (root && (strcmp(k, "metadata") == 0 || strcmp(k, "apiVersion") == 0 ||
			     strcmp(k, "kind") == 0))
			continue;
		const cJSON *ps = get(props, k);
		if (!ps && cJSON_IsObject(addl))
			ps = addl;
		if (!ps)
			continue;
		char *p = path_child(path, k);
		if (!p) {
			c->oom = true;
			return;
		}
		validate(c, ps, m, p, false, depth + 1);
		free(p);
	}
}

static void validate_array(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path,
			   int depth)
{
	int n = cJSON_GetArraySize(v);
	const cJSON *mini = get(schema, "minItems"), *maxi = get(schema, "maxItems");
	char detail[512];
	if (cJSON_IsNumber(mini) && n < (int)mini->valuedouble) {
		snprintf(detail, sizeof(detail), "%s in body should have at least %d items", path,
			 (int)mini->valuedouble);
		err_invalid_n(c, path, n, detail);
	}
	if (cJSON_IsNumber(maxi) && n > (int)maxi->valuedouble) {
		struct sb b = {0};
		sb_add(&b, "Too many: %d: must have at most %d items", n, (int)maxi->valuedouble);
		add_cause(c, "FieldValueTooMany", path, &b);
	}
	if (btrue(schema, "uniqueItems")) {
		for (const cJSON *a = v->child; a; a = a->next)
			for (const cJSON *b = a->next; b; b = b->next)
				if (cJSON_Compare(a, b, 1)) {
					snprintf(detail, sizeof(detail), "%s in body shouldn't contain duplicates",
						 path);
					err_invalid(c, path, v, detail);
					goto items;
				}
	}
items:;
	const cJSON *items = get(schema, "items");
	if (!cJSON_IsObject(items))
		return;
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char *p = path_index(path, i);
		if (!p) {
			c->oom = true;
			return;
		}
		validate(c, items, e, p, false, depth + 1);
		free(p);
	}
}

static void validate(struct ctx *c, const cJSON *schema, const cJSON *v, const char *path,
		     bool root, int depth)
{
	if (!cJSON_IsObject(schema) || depth > 64 || c->oom)
		return;
	if (!type_ok(schema, v)) {
		const char *t = sget(schema, "type");
		char expected[64];
		if (btrue(schema, "x-kubernetes-int-or-string"))
			snprintf(expected, sizeof(expected), "integer,string");
		else
			snprintf(expected, sizeof(expected), "%s", t ? t : "?");
		struct sb b = {0};
		const char *vt = type_name(v);
		sb_add(&b, "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"", vt,
		       *path ? path : "body", expected, vt);
		add_cause(c, "FieldValueTypeInvalid", path, &b);
		return;
	}
	if (cJSON_IsNull(v))
		return;
	validate_enum(c, schema, v, path);
	if (cJSON_IsNumber(v))
		validate_number(c, schema, v, path);
	else if (cJSON_IsString(v))
		validate_string(c, schema, v, path);
	else if (cJSON_IsObject(v))
		validate_object(c, schema, v, path, root, depth);
	else if (cJSON_IsArray(v))
		validate_array(c, schema, v, path, depth);
}

cJSON *apis_schema_apply(const cJSON *schema, cJSON *obj, cJSON *unknown_fields)
{
	struct ctx c = {NULL, cJSON_IsArray(unknown_fields) ? unknown_fields : NULL, false};
	if (!cJSON_IsObject(schema) || !obj)
		return NULL;
	default_value(&c, schema, obj, 0);
	if (cJSON_IsObject(obj))
		prune(&c, schema, obj, "", true, 0);
	validate(&c, schema, obj, "", true, 0);
	if (c.oom) {
		cJSON_Delete(c.causes);
		c.causes = cJSON_CreateArray();
		cJSON *o = cJSON_CreateObject();
		if (c.causes && o && cJSON_AddStringToObject(o, "reason", "FieldValueInvalid") &&
		    cJSON_AddStringToObject(o, "message", "Internal error: out of memory while validating") &&
		    cJSON_AddStringToObject(o, "field", "") && cJSON_AddItemToArray(c.causes, o))
			return c.causes;
		cJSON_Delete(o);
		return c.causes; /* possibly NULL under total OOM; callers treat NULL as valid */
	}
	return c.causes;
}

/* ---------------------------------------------------------------- schema check */

static const char *const valid_types[] = {"array", "boolean", "integer", "number", "object", "string"};

static char *check(const cJSON *s, const char *path, int depth)
{
	char *m = NULL;
	if (depth > 64)
		return strdup("schema nested too deeply");
	if (!cJSON_IsObject(s)) {
		if (asprintf(&m, "%s: must be an object", *path ? path : "schema") < 0)
			m = NULL;
		return m;
	}
	const cJSON *t = get(s, "type");
	if (t) {
		bool ok = false;
		for (size_t i = 0; cJSON_IsString(t) && i < sizeof(valid_types) / sizeof(valid_types[0]); i++)
			ok = ok || strcmp(t->valuestring, valid_types[i]) == 0;
		if (!ok) {
			struct sb b = {0};
			sb_add(&b, "%s%stype: Unsupported value: ", path, *path ? "." : "");
			sb_value(&b, t);
			sb_add(&b, ": supported values: \"array\", \"boolean\", \"integer\", \"number\", "
				   "\"object\", \"string\"");
			return sb_take(&b);
		}
	}
	const cJSON *pat = get(s, "pattern");
	if (pat && (!cJSON_IsString(pat) || pattern_match(pat->valuestring, "") < 0)) {
		struct sb b = {0};
		sb_add(&b, "%s%spattern: Invalid value: ", path, *path ? "." : "");
		sb_value(&b, pat);
		sb_add(&b, ": must be a valid regular expression");
		return sb_take(&b);
	}
	const cJSON *props = get(s, "properties");
	if (props && !cJSON_IsObject(props)) {
		if (asprintf(&m, "%s%sproperties: must be an object", path, *path ? "." : "") < 0)
			m = NULL;
		return m;
	}
	for (const cJSON *p = props ? props->child : NULL; p; p = p->next) {
		char *sub = NULL;
		if (asprintf(&sub, "%s%sproperties[%s]", path, *path ? "." : "", p->string ? p->string : "") < 0)
			return strdup("out of memory");
		m = check(p, sub, depth + 1);
		free(sub);
		if (m)
			return m;
	}
	const char *subs[] = {"items", "additionalProperties"};
	for (int i = 0; i < 2; i++) {
		const cJSON *x = get(s, subs[i]);
		if (!x || cJSON_IsBool(x))
			continue;
		char *sub = NULL;
		if (asprintf(&sub, "%s%s%s", path, *path ? "." : "", subs[i]) < 0)
			return strdup("out of memory");
		m = check(x, sub, depth + 1);
		free(sub);
		if (m)
			return m;
	}
	return NULL;
}

char *apis_schema_check(const cJSON *schema)
{
	return check(schema, "", 0);
}

/* ---------------------------------------------------------------- built-in known fields */

struct kt;
struct kf {
	const char *name;
	const struct kt *sub; /* NULL: value not checked further */
	bool list;            /* value is a list of objects of type sub */
};
struct kt {
	const struct kf *f;
	size_t n;
};
#define KT(var, ...)                                          \
	static const struct kf var##_f[] = {__VA_ARGS__};     \
	static const struct kt var = {var##_f, sizeof(var##_f) / sizeof(var##_f[0])}

KT(kt_container, {"name", NULL, false}, {"image", NULL, false}, {"command", NULL, false},
   {"args", NULL, false}, {"workingDir", NULL, false}, {"ports", NULL, false},
   {"envFrom", NULL, false}, {"env", NULL, false}, {"resources", NULL, false},
   {"resizePolicy", NULL, false}, {"restartPolicy", NULL, false}, {"volumeMounts", NULL, false},
   {"volumeDevices", NULL, false}, {"livenessProbe", NULL, false}, {"readinessProbe", NULL, false},
   {"startupProbe", NULL, false}, {"lifecycle", NULL, false},
   {"terminationMessagePath", NULL, false}, {"terminationMessagePolicy", NULL, false},
   {"imagePullPolicy", NULL, false}, {"securityContext", NULL, false}, {"stdin", NULL, false},
   {"stdinOnce", NULL, false}, {"tty", NULL, false}, {"targetContainerName", NULL, false});

KT(kt_pod_spec, {"volumes", NULL, false}, {"initContainers", &kt_container, true},
   {"containers", &kt_container, true}, {"ephemeralContainers", &kt_container, true},
   {"restartPolicy", NULL, false}, {"terminationGracePeriodSeconds", NULL, false},
   {"activeDeadlineSeconds", NULL, false}, {"dnsPolicy", NULL, false}, {"nodeSelector", NULL, false},
   {"serviceAccountName", NULL, false}, {"serviceAccount", NULL, false},
   {"automountServiceAccountToken", NULL, false}, {"nodeName", NULL, false},
   {"hostNetwork", NULL, false}, {"hostPID", NULL, false}, {"hostIPC", NULL, false},
   {"shareProcessNamespace", NULL, false}, {"securityContext", NULL, false},
   {"imagePullSecrets", NULL, false}, {"hostname", NULL, false}, {"subdomain", NULL, false},
   {"affinity", NULL, false}, {"schedulerName", NULL, false}, {"tolerations", NULL, false},
   {"hostAliases", NULL, false}, {"priorityClassName", NULL, false}, {"priority", NULL, false},
   {"dnsConfig", NULL, false}, {"readinessGates", NULL, false}, {"runtimeClassName", NULL, false},
   {"enableServiceLinks", NULL, false}, {"preemptionPolicy", NULL, false}, {"overhead", NULL, false},
   {"topologySpreadConstraints", NULL, false}, {"setHostnameAsFQDN", NULL, false},
   {"os", NULL, false}, {"hostUsers", NULL, false}, {"schedulingGates", NULL, false},
   {"resourceClaims", NULL, false}, {"resources", NULL, false});

/* Marker type: the value is an ObjectMeta (checked against object_meta_fields). */
KT(kt_meta_any, {"name", NULL, false});
KT(kt_template, {"metadata", &kt_meta_any, false}, {"spec", &kt_pod_spec, false});

KT(kt_deploy_spec, {"replicas", NULL, false}, {"selector", NULL, false},
   {"template", &kt_template, false}, {"strategy", NULL, false}, {"minReadySeconds", NULL, false},
   {"revisionHistoryLimit", NULL, false}, {"paused", NULL, false},
   {"progressDeadlineSeconds", NULL, false});
KT(kt_rs_spec, {"replicas", NULL, false}, {"minReadySeconds", NULL, false},
   {"selector", NULL, false}, {"template", &kt_template, false});
KT(kt_node_spec, {"podCIDR", NULL, false}, {"podCIDRs", NULL, false}, {"providerID", NULL, false},
   {"unschedulable", NULL, false}, {"taints", NULL, false}, {"configSource", NULL, false},
   {"externalID", NULL, false});
KT(kt_svc_spec, {"ports", NULL, false}, {"selector", NULL, false}, {"clusterIP", NULL, false},
   {"clusterIPs", NULL, false}, {"type", NULL, false}, {"externalIPs", NULL, false},
   {"sessionAffinity", NULL, false}, {"loadBalancerIP", NULL, false},
   {"loadBalancerSourceRanges", NULL, false}, {"externalName", NULL, false},
   {"externalTrafficPolicy", NULL, false}, {"healthCheckNodePort", NULL, false},
   {"publishNotReadyAddresses", NULL, false}, {"sessionAffinityConfig", NULL, false},
   {"ipFamilies", NULL, false}, {"ipFamilyPolicy", NULL, false},
   {"allocateLoadBalancerNodePorts", NULL, false}, {"loadBalancerClass", NULL, false},
   {"internalTrafficPolicy", NULL, false}, {"trafficDistribution", NULL, false});
KT(kt_lease_spec, {"holderIdentity", NULL, false}, {"leaseDurationSeconds", NULL, false},
   {"acquireTime", NULL, false}, {"renewTime", NULL, false}, {"leaseTransitions", NULL, false},
   {"strategy", NULL, false}, {"preferredHolder", NULL, false});
KT(kt_pdb_spec, {"minAvailable", NULL, false}, {"selector", NULL, false},
   {"maxUnavailable", NULL, false}, {"unhealthyPodEvictionPolicy", NULL, false});
KT(kt_crd_spec, {"group", NULL, false}, {"names", NULL, false}, {"scope", NULL, false},
   {"versions", NULL, false}, {"conversion", NULL, false}, {"preserveUnknownFields", NULL, false});

/* Top-level field sets. "metadata", "apiVersion", "kind" are implied. */
#define TOP(var, ...) KT(var, {"status", NULL, false}, __VA_ARGS__)
TOP(top_pod, {"spec", &kt_pod_spec, false});
TOP(top_deploy, {"spec", &kt_deploy_spec, false});
TOP(top_rs, {"spec", &kt_rs_spec, false});
TOP(top_node, {"spec", &kt_node_spec, false});
TOP(top_svc, {"spec", &kt_svc_spec, false});
TOP(top_ns, {"spec", NULL, false});
TOP(top_pdb, {"spec", &kt_pdb_spec, false});
TOP(top_crd, {"spec", &kt_crd_spec, false});
TOP(top_pvc, {"spec", NULL, false});
KT(top_lease, {"spec", &kt_lease_spec, false});
KT(top_cm, {"data", NULL, false}, {"binaryData", NULL, false}, {"immutable", NULL, false});
KT(top_secret, {"data", NULL, false}, {"stringData", NULL, false}, {"type", NULL, false},
   {"immutable", NULL, false});
KT(top_sa, {"secrets", NULL, false}, {"imagePullSecrets", NULL, false},
   {"automountServiceAccountToken", NULL, false});
KT(top_pc, {"value", NULL, false}, {"globalDefault", NULL, false}, {"description", NULL, false},
   {"preemptionPolicy", NULL, false});
KT(top_role, {"rules", NULL, false}, {"aggregationRule", NULL, false});
KT(top_binding, {"subjects", NULL, false}, {"roleRef", NULL, false});
KT(top_sc, {"provisioner", NULL, false}, {"parameters", NULL, false},
   {"reclaimPolicy", NULL, false}, {"mountOptions", NULL, false},
   {"allowVolumeExpansion", NULL, false}, {"volumeBindingMode", NULL, false},
   {"allowedTopologies", NULL, false});
KT(top_spec_only, {"spec", NULL, false});
KT(top_csc, {"storageClassName", NULL, false}, {"capacity", NULL, false}, {"maximumVolumeSize", NULL, false},
   {"nodeTopology", NULL, false});
KT(top_event, {"involvedObject", NULL, false}, {"reason", NULL, false}, {"message", NULL, false},
   {"source", NULL, false}, {"firstTimestamp", NULL, false}, {"lastTimestamp", NULL, false},
   {"count", NULL, false}, {"type", NULL, false}, {"eventTime", NULL, false},
   {"series", NULL, false}, {"action", NULL, false}, {"related", NULL, false},
   {"reportingComponent", NULL, false}, {"reportingInstance", NULL, false});
KT(top_events_v1, {"eventTime", NULL, false}, {"series", NULL, false},
   {"reportingController", NULL, false}, {"reportingInstance", NULL, false},
   {"action", NULL, false}, {"reason", NULL, false}, {"regarding", NULL, false},
   {"related", NULL, false}, {"note", NULL, false}, {"type", NULL, false},
   {"deprecatedSource", NULL, false}, {"deprecatedFirstTimestamp", NULL, false},
   {"deprecatedLastTimestamp", NULL, false}, {"deprecatedCount", NULL, false});
KT(top_pod_binding, {"target", NULL, false});

static const struct {
	const char *group, *kind;
	const struct kt *t;
} builtin_kinds[] = {
	{"", "Pod", &top_pod},
	{"", "Node", &top_node},
	{"", "Service", &top_svc},
	{"", "Namespace", &top_ns},
	{"", "ConfigMap", &top_cm},
	{"", "Secret", &top_secret},
	{"", "ServiceAccount", &top_sa},
	{"", "PersistentVolume", &top_pvc},
	{"", "PersistentVolumeClaim", &top_pvc},
	{"", "Event", &top_event},
	{"", "Binding", &top_pod_binding},
	{"apps", "Deployment", &top_deploy},
	{"apps", "ReplicaSet", &top_rs},
	{"coordination.k8s.io", "Lease", &top_lease},
	{"scheduling.k8s.io", "PriorityClass", &top_pc},
	{"policy", "PodDisruptionBudget", &top_pdb},
	{"apiextensions.k8s.io", "CustomResourceDefinition", &top_crd},
	{"rbac.authorization.k8s.io", "Role", &top_role},
	{"rbac.authorization.k8s.io", "ClusterRole", &top_role},
	{"rbac.authorization.k8s.io", "RoleBinding", &top_binding},
	{"rbac.authorization.k8s.io", "ClusterRoleBinding", &top_binding},
	{"storage.k8s.io", "StorageClass", &top_sc},
	{"storage.k8s.io", "CSINode", &top_spec_only},
	{"storage.k8s.io", "CSIDriver", &top_spec_only},
	{"storage.k8s.io", "CSIStorageCapacity", &top_csc},
	{"storage.k8s.io", "VolumeAttachment", &top_pvc},
	{"events.k8s.io", "Event", &top_events_v1},
};

static const struct kf *kt_find(const struct kt *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->f[i].name, name) == 0)
			return &t->f[i];
	return NULL;
}

static int check_known(struct ctx *c, const struct kt *t, const cJSON *obj, const char *path,
		       bool top, int depth)
{
	int n = 0;
	if (!cJSON_IsObject(obj) || depth > 16)
		return 0;
	for (const cJSON *m = obj->child; m; m = m->next) {
		const char *k = m->string ? m->string : "";
		char *p = path_child(path, k);
		if (!p) {
			c->oom = true;
			return n;
		}
		if (top && strcmp(k, "metadata") == 0) {
			/* ObjectMeta: check its own fields */
			for (const cJSON *f = cJSON_IsObject(m) ? m->child : NULL; f; f = f->next) {
				if (f->string && !known_meta_field(f->string)) {
					char *fp = path_child(p, f->string);
					if (fp) {
						note_unknown(c, fp);
						n++;
					}
					free(fp);
				}
			}
		} else if (top && (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0)) {
			/* always known */
		} else {
			const struct kf *f = kt_find(t, k);
			if (!f) {
				note_unknown(c, p);
				n++;
			} else if (f->sub && f->sub != &kt_meta_any) {
				if (f->list && cJSON_IsArray(m)) {
					int i = 0;
					for (const cJSON *e = m->child; e; e = e->next, i++) {
						char *ip = path_index(p, i);
						if (ip)
							n += check_known(c, f->sub, e, ip, false, depth + 1);
						free(ip);
					}
				} else if (!f->list) {
					n += check_known(c, f->sub, m, p, false, depth + 1);
				}
			} else if (f->sub == &kt_meta_any && cJSON_IsObject(m)) {
				for (const cJSON *mf = m->child; mf; mf = mf->next) {
					if (mf->string && !known_meta_field(mf->string)) {
						char *fp = path_child(p, mf->string);
						if (fp) {
							note_unknown(c, fp);
							n++;
						}
						free(fp);
					}
				}
			}
		}
		free(p);
	}
	return n;
}

int apis_builtin_unknown_fields(const char *group, const char *kind, const cJSON *obj,
				cJSON *unknown_fields)
{
	if (!kind || !cJSON_IsArray(unknown_fields))
		return 0;
	for (size_t i = 0; i < sizeof(builtin_kinds) / sizeof(builtin_kinds[0]); i++) {
		if (strcmp(builtin_kinds[i].group, group ? group : "") != 0 ||
		    strcmp(builtin_kinds[i].kind, kind) != 0)
			continue;
		struct ctx c = {NULL, unknown_fields, false};
		return check_known(&c, builtin_kinds[i].t, obj, "", true, 0);
	}
	return 0;
}

char *apis_strict_error_message(const cJSON *unknown_fields)
{
	struct sb b = {0};
	sb_add(&b, "strict decoding error: ");
	int i = 0;
	for (const cJSON *u = cJSON_IsArray(unknown_fields) ? unknown_fields->child : NULL; u;
	     u = u->next) {
		if (!cJSON_IsString(u))
			continue;
		sb_add(&b, "%sunknown field ", i++ ? ", " : "");
		sb_quote(&b, u->valuestring);
	}
	return sb_take(&b);
}
