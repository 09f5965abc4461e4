/* Deciding what goes into the configuration: per-profile validation with the scheduler's loader,
 * schedulerName conflicts, last-accepted fallbacks, and the combined check (rules that span
 * profiles, such as one queueSort for all, only show up when they are loaded together). */
#include "operator/legacy.h"
#include "operator/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/object.h"
#include "scheduler/config/config.h"

/* Working state for one SchedulerProfile while the plan is built. */
struct cand {
	const cJSON *obj;
	const char *name;
	time_t created;
	char *requested;       /* schedulerName of the current spec */
	cJSON *current;        /* rendered current spec, NULL when it failed */
	char *current_err;     /* why current failed (render or loader message) */
	char *unavailable;     /* upstream plugins the current spec runs without */
	cJSON *last;           /* rendered last accepted spec, NULL when none / unusable */
	bool last_read;        /* read_last ran (it is only needed when the current spec is not used) */
	int64_t last_generation;
	char *last_json;       /* the annotation value for the current spec */
	bool conflict;
	char *conflict_with;
	enum op_source source;
};

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* sk_config_load of the configuration holding entries[0..n). The plugins accepted SchedulerPlugins
 * provide are external to the loader: accepted at every extension point they are enabled at, args
 * kept raw (the scheduler validates them when it loads the plugin). */
static struct sk_config *load_entries(const cJSON *const *entries, int n, const struct op_render_opts *opts,
				      struct sk_errors *e)
{
	char *text = op_render_config(entries, n, opts);
	if (!text) {
		sk_errors_addf(e, "%s", "out of memory");
		return NULL;
	}
	struct sk_config_opts lo = { .external_plugins = opts ? opts->external_plugins : NULL,
				     .modules = opts ? opts->modules : NULL };
	struct sk_config *cfg = sk_config_load_opts(text, strlen(text), &lo, e);
	free(text);
	return cfg;
}

int op_validate_profile(const cJSON *profile, const struct op_render_opts *opts, char **msg, char **unavailable)
{
	*msg = NULL;
	if (unavailable)
		*unavailable = NULL;
	struct sk_errors e = { 0 };
	struct sk_config *cfg = load_entries(&profile, 1, opts, &e);
	if (!cfg) {
		char *raw = e.n ? sk_errors_join(&e, "; ") : NULL;
		*msg = op_spec_paths(raw ? raw : "invalid configuration");
		free(raw);
		sk_errors_free(&e);
		return -1;
	}
	sk_errors_free(&e);
	if (unavailable && cfg->nprofiles == 1 && cfg->profiles[0].nunavailable > 0) {
		const struct sk_profile_config *p = &cfg->profiles[0];
		size_t len = 1;
		for (int i = 0; i < p->nunavailable; i++)
			len += strlen(p->unavailable[i]) + 2;
		char *list = malloc(len);
		if (list) {
			list[0] = '\0';
			for (int i = 0; i < p->nunavailable; i++) {
				if (i)
					strcat(list, ", ");
				strcat(list, p->unavailable[i]);
			}
		}
		*unavailable = list;
	}
	sk_config_free(cfg);
	return 0;
}

static char *replace_all(const char *msg, const char *from, const char *to);

char *op_spec_paths(const char *msg)
{
	return op_spec_paths_at(msg, 0);
}

char *op_spec_paths_at(const char *msg, int index)
{
	char from[32];
	snprintf(from, sizeof from, "profiles[%d]", index);
	return replace_all(msg, from, "spec");
}

/* msg with every occurrence of from written to. Caller frees; NULL on OOM. */
static char *replace_all(const char *msg, const char *from, const char *to)
{
	size_t n = 0, fl = strlen(from), tl = strlen(to);
	for (const char *p = msg; (p = strstr(p, from)); p += fl)
		n++;
	char *out = malloc(strlen(msg) - n * (fl - tl) + 1), *w = out;
	if (!out)
		return NULL;
	for (const char *p = msg, *q; *p; p = q + fl) {
		if (!(q = strstr(p, from))) {
			strcpy(w, p);
			return out;
		}
		memcpy(w, p, (size_t)(q - p));
		w += q - p;
		memcpy(w, to, tl);
		w += tl;
	}
	*w = '\0';
	return out;
}

/* The profile's own hash: sha256 of the configuration holding only its entry. */
static int entry_hash(const cJSON *entry, const struct op_render_opts *opts, char out[65])
{
	char *text = op_render_config(&entry, 1, opts);
	if (!text)
		return -1;
	op_sha256_hex(text, strlen(text), out);
	free(text);
	return 0;
}

/* Loads the configuration made of the given entries; NULL when valid, else the loader's message. */
static char *load_error(const cJSON *const *entries, int n, const struct op_render_opts *opts)
{
	struct sk_errors e = { 0 };
	struct sk_config *cfg = load_entries(entries, n, opts, &e);
	char *msg = NULL;
	if (!cfg)
		msg = e.n ? sk_errors_join(&e, "; ") : xstrdup("invalid configuration");
	sk_errors_free(&e);
	sk_config_free(cfg);
	return msg;
}

static int cmp_age(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return op_age_cmp(&(struct op_age){ x->name, x->created }, &(struct op_age){ y->name, y->created });
}

static int cmp_result_name(const void *a, const void *b)
{
	const struct op_profile_result *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* The rendered last accepted version from the annotation, or NULL (absent, unparsable, or no
 * longer valid: e.g. written by another operator version). */
static void read_last(struct cand *c, const struct op_render_opts *opts)
{
	if (c->last_read)
		return;
	c->last_read = true;
	const char *v = kube_meta_annotation(c->obj, OP_LAST_ACCEPTED_ANNOTATION);
	if (!v)
		return;
	cJSON *j = kube_json_parse(v, strlen(v), NULL);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return;
	}
	int64_t gen = 0;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "generation");
	if (g)
		kube_json_get_int64(g, &gen);
	cJSON *frag = NULL;
	char *err = NULL, *msg = NULL;
	if (op_render_profile(cJSON_GetObjectItemCaseSensitive(j, "spec"), c->name, &frag, &err) == 0 &&
	    op_validate_profile(frag, opts, &msg, NULL) == 0) {
		c->last = frag;
		c->last_generation = gen;
		frag = NULL;
	}
	free(err);
	free(msg);
	cJSON_Delete(frag);
	cJSON_Delete(j);
}

/* The annotation value recording the current spec as accepted. */
static char *last_json_for(const cJSON *obj, int64_t generation)
{
	cJSON *j = cJSON_CreateObject();
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	cJSON *s = spec ? cJSON_Duplicate(spec, 1) : cJSON_CreateObject();
	cJSON *g = kube_json_create_int64(generation);
	char *out = NULL;
	if (j && g && cJSON_AddItemToObject(j, "generation", g)) {
		g = NULL;
		if (s && cJSON_AddItemToObject(j, "spec", s)) {
			s = NULL;
			out = kube_json_print(j);
		}
	}
	cJSON_Delete(g);
	cJSON_Delete(s);
	cJSON_Delete(j);
	return out;
}

static bool name_claimed_by_other(struct cand *c, int n, const char *name, const struct cand *self)
{
	for (int i = 0; i < n; i++) {
		if (&c[i] == self)
			continue;
		if (c[i].source != OP_SOURCE_NONE) {
			const cJSON *e = c[i].source == OP_SOURCE_CURRENT ? c[i].current : c[i].last;
			const char *nm = kube_obj_get_string(e, "schedulerName");
			if (nm && !strcmp(nm, name))
				return true;
		}
		if (!c[i].conflict && c[i].requested && !strcmp(c[i].requested, name))
			return true;
	}
	return false;
}

static const cJSON *entry_of(const struct cand *c)
{
	return c->source == OP_SOURCE_CURRENT ? c->current : c->source == OP_SOURCE_LAST_ACCEPTED ? c->last : NULL;
}

/* The loader's message for entries[0..k] in the
 * SchedulerProfiles' terms (entries[k] is the candidate): the loader numbers the entries as op_render_config sorts them (by
 * schedulerName, ties in input order); the candidate's own path becomes "spec", another
 * profile's "(SchedulerProfile NAME) spec". Takes msg; NULL only on OOM. */
static char *combined_paths(char *msg, const cJSON **entries, const char **owners, int k)
{
	for (int j = 0; j <= k && msg; j++) {
		const char *nm = kube_obj_get_string(entries[j], "schedulerName");
		int pos = 0;
		for (int q = 0; q <= k; q++) {
			const char *o = kube_obj_get_string(entries[q], "schedulerName");
			int c = strcmp(o ? o : "", nm ? nm : "");
			pos += c < 0 || (c == 0 && q < j);
		}
		char from[32], to[300];
		snprintf(from, sizeof from, "profiles[%d]", pos);
		if (j == k)
			snprintf(to, sizeof to, "spec");
		else
			snprintf(to, sizeof to, "(SchedulerProfile %s) spec", owners[j]);
		char *out = replace_all(msg, from, to);
		free(msg);
		msg = out;
	}
	return msg;
}

/* Drops candidates, oldest first kept, until the assembled configuration loads. A current spec that
 * breaks it is marked invalid with the loader's message and falls back to its last accepted version. */
static int combine(struct cand *c, int n, const struct op_render_opts *opts)
{
	const cJSON **entries = calloc(n > 0 ? (size_t)n : 1, sizeof *entries);
	if (!entries)
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++)
		if (entry_of(&c[i]))
			entries[k++] = entry_of(&c[i]);
	char *msg = k ? load_error(entries, k, opts) : NULL;
	if (!msg) {
		free(entries);
		return 0;
	}
	free(msg);
	/* Incremental: admit profiles in age order while the configuration stays loadable. */
	const char **owners = calloc(n > 0 ? (size_t)n : 1, sizeof *owners); /* metadata.name of entries[j] */
	if (!owners) {
		free(entries);
		return -1;
	}
	k = 0;
	for (int i = 0; i < n; i++) {
		for (int attempt = 0; attempt < 2 && entry_of(&c[i]); attempt++) {
			entries[k] = entry_of(&c[i]);
			owners[k] = c[i].name;
			msg = load_error(entries, k + 1, opts);
			if (!msg) {
				k++;
				break;
			}
			if (c[i].source == OP_SOURCE_CURRENT) {
				free(c[i].current_err);
				c[i].current_err = combined_paths(msg, entries, owners, k);
				read_last(&c[i], opts);
				c[i].source = c[i].last && !name_claimed_by_other(c, n, kube_obj_get_string(c[i].last, "schedulerName"), &c[i])
						      ? OP_SOURCE_LAST_ACCEPTED
						      : OP_SOURCE_NONE;
			} else {
				free(msg);
				c[i].source = OP_SOURCE_NONE;
			}
		}
	}
	free(owners);
	free(entries);
	return 0;
}

static void cand_free(struct cand *c)
{
	free(c->requested);
	cJSON_Delete(c->current);
	free(c->current_err);
	free(c->unavailable);
	cJSON_Delete(c->last);
	free(c->last_json);
	free(c->conflict_with);
}

bool op_object_age(const cJSON *obj, struct op_age *out)
{
	out->name = kube_meta_name(obj);
	if (!out->name || kube_obj_get(obj, "metadata.deletionTimestamp"))
		return false;
	const char *ts = kube_obj_get_string(obj, "metadata.creationTimestamp");
	if (!ts || kube_time_parse_rfc3339(ts, &out->created) != 0)
		out->created = 0;
	return true;
}

int op_age_cmp(const struct op_age *a, const struct op_age *b)
{
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The profiles not being deleted, oldest first, into c (room for all). Returns their count. */
static int collect_candidates(const cJSON *profiles, struct cand *c)
{
	int n = 0;
	const cJSON *obj;
	cJSON_ArrayForEach(obj, profiles) {
		struct op_age age;
		if (!op_object_age(obj, &age))
			continue;
		struct cand *x = &c[n++];
		x->obj = obj;
		x->name = age.name;
		x->created = age.created;
	}
	qsort(c, (size_t)n, sizeof *c, cmp_age);
	return n;
}

static int64_t generation_of(const cJSON *obj)
{
	int64_t gen = 0;
	const cJSON *g = kube_obj_get(obj, "metadata.generation");
	if (g)
		kube_json_get_int64(g, &gen);
	return gen;
}

/* Renders and validates the current spec: x->current, or x->current_err saying why not. -1 when
 * out of memory. */
static int evaluate_current(struct cand *x, const struct op_render_opts *opts)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(x->obj, "spec");
	x->requested = xstrdup(op_profile_scheduler_name(cJSON_IsObject(spec) ? spec : NULL, x->name));
	if (!x->requested)
		return -1;
	if (!strcmp(x->requested, OP_RESERVED_SCHEDULER_NAME)) {
		x->current_err = xasprintf("spec.schedulerName: Invalid value: \"%s\": reserved for the cluster's "
					   "default scheduler",
					   x->requested);
	} else if (op_render_profile(spec, x->name, &x->current, &x->current_err) == 0) {
		if (op_validate_profile(x->current, opts, &x->current_err, &x->unavailable) != 0) {
			cJSON_Delete(x->current);
			x->current = NULL;
		}
	}
	if (!x->current && !x->current_err)
		return -1;
	if (x->current && !(x->last_json = last_json_for(x->obj, generation_of(x->obj))))
		return -1;
	return 0;
}

/* Picks each candidate's source by scheduler name: current specs first (oldest wins a name),
 * then last accepted versions whose names are free. -1 when out of memory. */
static int assign_sources(struct cand *c, int n, const struct op_render_opts *opts)
{
	/* Pass 1: names requested by current specs, oldest first. */
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++) {
			if (!c[j].conflict && !strcmp(c[j].requested, c[i].requested)) {
				c[i].conflict = true;
				c[i].conflict_with = xstrdup(c[j].name);
				if (!c[i].conflict_with)
					return -1;
				break;
			}
		}
		if (!c[i].conflict && c[i].current)
			c[i].source = OP_SOURCE_CURRENT;
	}
	/* Pass 2: a profile not running its current spec keeps its last accepted version if that
	 * version's name is free. */
	for (int i = 0; i < n; i++) {
		if (c[i].source != OP_SOURCE_NONE)
			continue;
		read_last(&c[i], opts);
		if (!c[i].last)
			continue;
		const char *nm = kube_obj_get_string(c[i].last, "schedulerName");
		if (nm && strcmp(nm, OP_RESERVED_SCHEDULER_NAME) && !name_claimed_by_other(c, n, nm, &c[i]))
			c[i].source = OP_SOURCE_LAST_ACCEPTED;
	}
	return 0;
}

/* One profile's result (reason, message, generations, the annotation to write); its rendered
 * entry, if any, is appended to entries[*nrendered]. -1 when out of memory. */
static int fill_result(const struct cand *x, struct op_profile_result *r, const cJSON **entries, int *nrendered,
		       const struct op_render_opts *opts)
{
	bool need_annotation = false;
	int64_t gen = generation_of(x->obj);
	r->name = xstrdup(x->name);
	r->generation = gen;
	r->scheduler_name = xstrdup(x->requested);
	r->source = x->source;
	r->accepted = x->source == OP_SOURCE_CURRENT;
	r->rendered_generation = -1;
	if (x->source == OP_SOURCE_CURRENT) {
		r->reason = OP_REASON_ACCEPTED;
		r->message = x->unavailable
				     ? xasprintf("valid; runs without upstream plugins not in this build: %s", x->unavailable)
				     : xstrdup("valid");
		r->rendered_generation = gen;
		cJSON *tp = NULL;
		char *terr = NULL;
		if (op_render_legacy(cJSON_GetObjectItemCaseSensitive(x->obj, "spec"), x->requested, &tp, &r->translation,
				     &terr) < 0) {
			free(terr);
			return -1; /* it rendered a moment ago: only memory can fail */
		}
		cJSON_Delete(tp);
		if (r->translation) {
			const char *src = kube_obj_get_string(r->translation, "source");
			int nn = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r->translation, "notes"));
			char *m = xasprintf("%s; translated from %s (plugin sets in status.translation%s)", r->message,
					    src ? src : "", nn ? ", what did not carry over in status.translation.notes" : "");
			free(r->message);
			r->message = m;
		}
		const char *cur = kube_meta_annotation(x->obj, OP_LAST_ACCEPTED_ANNOTATION);
		need_annotation = !cur || strcmp(cur, x->last_json);
		if (need_annotation)
			r->last_accepted = xstrdup(x->last_json);
	} else if (x->conflict) {
		r->reason = OP_REASON_CONFLICT;
		r->message = xasprintf("schedulerName \"%s\" is already used by SchedulerProfile \"%s\", which is older",
				       x->requested, x->conflict_with);
	} else {
		r->reason = OP_REASON_INVALID;
		r->message = xstrdup(x->current_err ? x->current_err : "invalid");
	}
	if (x->source == OP_SOURCE_LAST_ACCEPTED)
		r->rendered_generation = x->last_generation;
	const cJSON *e = entry_of(x);
	if (e) {
		entries[(*nrendered)++] = e;
		r->rendered_scheduler_name = xstrdup(kube_obj_get_string(e, "schedulerName"));
		if (entry_hash(e, opts, r->rendered_hash) != 0)
			return -1;
	}
	if (!r->name || !r->scheduler_name || !r->message || (e && !r->rendered_scheduler_name) ||
	    (need_annotation && !r->last_accepted))
		return -1;
	return 0;
}

int op_plan_build(const cJSON *profiles, const struct op_render_opts *opts, struct op_plan *out, char **err)
{
	memset(out, 0, sizeof *out);
	if (err)
		*err = NULL;
	int total = cJSON_GetArraySize(profiles), n = 0;
	const cJSON **entries = NULL;
	struct cand *c = calloc(total > 0 ? (size_t)total : 1, sizeof *c);
	if (!c)
		goto oom;
	n = collect_candidates(profiles, c);
	for (int i = 0; i < n; i++)
		if (evaluate_current(&c[i], opts) != 0)
			goto oom;
	if (assign_sources(c, n, opts) != 0 || combine(c, n, opts) != 0)
		goto oom;

	out->profiles = calloc(n > 0 ? (size_t)n : 1, sizeof *out->profiles);
	entries = calloc(n > 0 ? (size_t)n : 1, sizeof *entries);
	if (!out->profiles || !entries)
		goto oom;
	out->n = n;
	for (int i = 0; i < n; i++)
		if (fill_result(&c[i], &out->profiles[i], entries, &out->nrendered, opts) != 0)
			goto oom;
	if (out->nrendered > 0) {
		out->config_yaml = op_render_config(entries, out->nrendered, opts);
		if (!out->config_yaml)
			goto oom;
		/* combine() loaded exactly this set last, so it is known to load */
		op_sha256_hex(out->config_yaml, strlen(out->config_yaml), out->config_hash);
	}
	free(entries);
	qsort(out->profiles, (size_t)out->n, sizeof *out->profiles, cmp_result_name);
	for (int i = 0; i < n; i++)
		cand_free(&c[i]);
	free(c);
	return 0;
oom:
	free(entries);
	if (err && !*err)
		*err = xstrdup("out of memory");
	if (c)
		for (int i = 0; i < n; i++)
			cand_free(&c[i]);
	free(c);
	op_plan_free(out);
	return -1;
}

void op_plan_free(struct op_plan *plan)
{
	if (!plan)
		return;
	for (int i = 0; i < plan->n; i++) {
		struct op_profile_result *r = &plan->profiles[i];
		free(r->name);
		free(r->scheduler_name);
		free(r->message);
		cJSON_Delete(r->translation);
		free(r->rendered_scheduler_name);
		free(r->last_accepted);
	}
	free(plan->profiles);
	free(plan->config_yaml);
	cJSON_Delete(plan->history);
	memset(plan, 0, sizeof *plan);
}

const struct op_profile_result *op_plan_find(const struct op_plan *plan, const char *name)
{
	for (int i = 0; i < plan->n; i++)
		if (!strcmp(plan->profiles[i].name, name))
			return &plan->profiles[i];
	return NULL;
}
