/* libFuzzer target: label and field selector strings (kube/selector.h). The input is
 * "<selector>\n<k=v lines>": the first line is parsed as a label selector and as a field selector,
 * each accepted one is matched against the label set given by the remaining lines, and its
 * canonical string must parse again to a selector with the same string (field selectors: from the
 * second round) and the same verdict. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LABELS 16

struct set {
	int n;
	const char *k[MAX_LABELS], *v[MAX_LABELS];
};

static const char *lookup(const void *ctx, const char *key)
{
	const struct set *s = ctx;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->k[i], key) == 0)
			return s->v[i];
	return NULL;
}

static void check_label(const char *text, const struct set *set)
{
	struct kube_label_selector *sel = NULL;
	char *err = NULL;
	if (kube_label_selector_parse(text, &sel, &err) != 0) {
		if (!err)
			abort();
		free(err);
		return;
	}
	bool m = kube_label_selector_matches(sel, lookup, set);
	char *canon = kube_label_selector_string(sel);
	if (!canon)
		abort();
	struct kube_label_selector *again = NULL;
	if (kube_label_selector_parse(canon, &again, NULL) != 0)
		abort(); /* String() re-parses */
	char *canon2 = kube_label_selector_string(again);
	if (!canon2 || strcmp(canon, canon2) != 0)
		abort(); /* ... to itself */
	if (kube_label_selector_matches(again, lookup, set) != m)
		abort(); /* ... with the same meaning */
	if (kube_label_selector_is_empty(sel) != kube_label_selector_is_empty(again))
		abort();
	free(canon2);
	free(canon);
	kube_label_selector_free(again);
	kube_label_selector_free(sel);
}

static void check_field(const char *text, const struct set *set)
{
	struct kube_field_selector *sel = NULL;
	char *err = NULL;
	if (kube_field_selector_parse(text, &sel, &err) != 0) {
		if (!err)
			abort();
		free(err);
		return;
	}
	bool m = kube_field_selector_matches(sel, lookup, set);
	(void)kube_field_selector_requires_exact(sel, set->n ? set->k[0] : "metadata.name");
	char *canon = kube_field_selector_string(sel);
	if (!canon)
		abort();
	/* Upstream sorts the raw terms before parsing, so "a==x,a=b" prints as "a=x,a=b" and that
	 * re-sorts: String() is a fixed point only from the second round on. */
	struct kube_field_selector *again = NULL, *third = NULL;
	if (kube_field_selector_parse(canon, &again, NULL) != 0)
		abort();
	char *canon2 = kube_field_selector_string(again);
	if (!canon2 || kube_field_selector_parse(canon2, &third, NULL) != 0)
		abort();
	char *canon3 = kube_field_selector_string(third);
	if (!canon3 || strcmp(canon2, canon3) != 0 || strlen(canon) != strlen(canon2))
		abort();
	if (kube_field_selector_matches(again, lookup, set) != m || kube_field_selector_matches(third, lookup, set) != m)
		abort();
	free(canon3);
	free(canon2);
	free(canon);
	kube_field_selector_free(third);
	kube_field_selector_free(again);
	kube_field_selector_free(sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (strlen(buf) != size) { /* an embedded NUL: the selector APIs take C strings */
		free(buf);
		return 0;
	}
	struct set set = { 0 };
	char *nl = strchr(buf, '\n');
	if (nl) {
		*nl = '\0';
		for (char *line = nl + 1; line && *line && set.n < MAX_LABELS;) {
			char *next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			char *eq = strchr(line, '=');
			if (eq) {
				*eq = '\0';
				set.k[set.n] = line;
				set.v[set.n++] = eq + 1;
			}
			line = next;
		}
	}
	check_label(buf, &set);
	check_field(buf, &set);
	free(buf);
	return 0;
}
