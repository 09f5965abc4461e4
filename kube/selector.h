/* Label selectors (k8s.io/apimachinery/pkg/labels) and field selectors (.../pkg/fields):
 * the ?labelSelector= / ?fieldSelector= string syntax, metav1.LabelSelector JSON, matching and
 * canonical strings, plus the label key/value validation both rely on.
 *
 * Selectors are immutable after construction: share them across threads without a lock. */
#ifndef KUBE_SELECTOR_H
#define KUBE_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* ---- label selectors ---- */

enum kube_selector_op {
	KUBE_SEL_EQUALS,	/* "=" */
	KUBE_SEL_DOUBLE_EQUALS, /* "==" */
	KUBE_SEL_NOT_EQUALS,	/* "!=" */
	KUBE_SEL_IN,		/* "in" */
	KUBE_SEL_NOT_IN,	/* "notin" */
	KUBE_SEL_EXISTS,	/* "k" */
	KUBE_SEL_DOES_NOT_EXIST, /* "!k" */
	KUBE_SEL_GT,		/* "gt" (only via the string syntax "k>1") */
	KUBE_SEL_LT,		/* "lt" ("k<1") */
};

struct kube_label_selector; /* opaque, immutable after parse, safe to share across threads */

/* Parses the string syntax used in ?labelSelector= (after URL-decoding):
 * "a=b,c!=d,e in (x,y),f notin (z),g,!h", also "==", "k>5", "k<5" and upstream whitespace rules.
 * Requirements are sorted by key as upstream does. Empty string -> matches everything.
 * Returns 0 or -1 with *err (caller frees; err may be NULL). Caller frees *out. */
int kube_label_selector_parse(const char *text, struct kube_label_selector **out, char **err);

/* metav1.LabelSelector JSON {matchLabels, matchExpressions[{key, operator: In|NotIn|Exists|
 * DoesNotExist, values}]} with upstream validation (In/NotIn need values, Exists/DoesNotExist
 * none, keys and matchLabels values validated). NULL json -> matches nothing (upstream
 * LabelSelectorAsSelector(nil) = Nothing); empty {} -> everything. 0 or -1 with *err. */
int kube_label_selector_from_json(const cJSON *sel, struct kube_label_selector **out, char **err);

/* A selector requiring every key=value of a map (pod.spec.nodeSelector, Service.spec.selector,
 * matchLabels-only). NULL or {} -> everything (upstream SelectorFromSet). Values are not
 * validated (SelectorFromSet does not). 0 or -1 (OOM / non-string value) with *err. */
int kube_label_selector_from_map(const cJSON *map, struct kube_label_selector **out, char **err);

/* A new selector = s AND (key op values[0..n)). Validates like upstream NewRequirement.
 * Used for matchLabelKeys. Caller frees *out. 0 or -1 with *err. */
int kube_label_selector_add(const struct kube_label_selector *s, const char *key, enum kube_selector_op op,
			    const char *const *values, size_t n, struct kube_label_selector **out, char **err);

/* Same, with every error prefixed by path + "." (e.g. "nodeSelectorTerms[0].matchExpressions[1]"
 * gives "nodeSelectorTerms[0].matchExpressions[1].values: Invalid value: ..."); values_nil makes
 * an empty list print as []string(nil) the way Go does for an absent list. Several problems
 * are reported together as "[a, b]". */
int kube_label_selector_add_at(const struct kube_label_selector *s, const char *path, const char *key,
			       enum kube_selector_op op, const char *const *values, size_t n, bool values_nil,
			       struct kube_label_selector **out, char **err);

typedef const char *(*kube_label_lookup_fn)(const void *ctx, const char *key); /* NULL if absent */
bool kube_label_selector_matches(const struct kube_label_selector *s, kube_label_lookup_fn get, const void *ctx);
/* Canonical pointers for s's keys and values: canon returns a string equal to its argument that
 * outlives s (the scheduler passes sk_intern, whose strings its node labels hold), or NULL when it
 * has none. Matching then hands the lookup the canonical key and compares a looked-up value with the
 * canonical values by pointer before comparing strings; what matches is unchanged. */
void kube_label_selector_canonicalize(struct kube_label_selector *s, const char *(*canon)(const char *));
/* labels: a JSON object of string values, or NULL (no labels). */
bool kube_label_selector_matches_json(const struct kube_label_selector *s, const cJSON *labels);
/* True when s matches everything (no requirements). A "nothing" selector is not empty. */
bool kube_label_selector_is_empty(const struct kube_label_selector *s);
/* True for the selector that matches nothing (from_json(NULL)). */
bool kube_label_selector_is_nothing(const struct kube_label_selector *s);
bool kube_label_selector_equal(const struct kube_label_selector *a, const struct kube_label_selector *b);
/* Canonical string as upstream String(): requirements sorted by key, "a=b,c!=d,e in (x,y)",
 * set values sorted. Caller frees; NULL on OOM. */
char *kube_label_selector_string(const struct kube_label_selector *s);
void kube_label_selector_free(struct kube_label_selector *s);

/* ---- field selectors ---- */

struct kube_field_selector; /* "a=b,c!=d,e==f" with upstream escaping (\\ \= \,); immutable */
/* Empty string -> everything. 0 or -1 with *err (caller frees). Caller frees *out. */
int kube_field_selector_parse(const char *text, struct kube_field_selector **out, char **err);
typedef const char *(*kube_field_lookup_fn)(const void *ctx, const char *field);
/* An absent field (lookup returns NULL) compares as "" (upstream fields.Set semantics). */
bool kube_field_selector_matches(const struct kube_field_selector *s, kube_field_lookup_fn get, const void *ctx);
/* Calls fn(u, field) for each requirement's field; returns the first nonzero fn result. */
int kube_field_selector_each_field(const struct kube_field_selector *s, int (*fn)(void *u, const char *field), void *u);
bool kube_field_selector_is_empty(const struct kube_field_selector *s);
/* If s has a requirement "field=v" or "field==v", returns v (borrowed from s), else NULL
 * (upstream RequiresExactMatch). */
const char *kube_field_selector_requires_exact(const struct kube_field_selector *s, const char *field);
/* Canonical string (upstream String(): requirements in input order, values escaped).
 * Caller frees. */
char *kube_field_selector_string(const struct kube_field_selector *s);
void kube_field_selector_free(struct kube_field_selector *s);

/* ---- validation shared with config/CRD code ---- */

/* Upstream IsQualifiedName: [prefix/]name, name <= 63 chars of [A-Za-z0-9_.-] starting and
 * ending alphanumeric, prefix a DNS-1123 subdomain <= 253. Returns 0 or -1 with *err holding
 * upstream's message (caller frees; err may be NULL). */
int kube_validate_qualified_name(const char *s, char **err);
/* Upstream IsValidLabelValue: empty or <= 63 chars as a name. 0 or -1 with *err. */
int kube_validate_label_value(const char *s, char **err);

#endif
