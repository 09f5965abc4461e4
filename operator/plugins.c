/* Validating SchedulerPlugins, settling their clashes by age, the hash of the accepted set and
 * their status (see plugins.h). */
#include "operator/plugins.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/object.h"
#include "operator/plan.h"
#include "operator/render.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/registry.h"

/* Working state for one SchedulerPlugin while the set is built. */
struct cand {
	const cJSON *obj;
	const char *name;
	time_t created;
	char *errors;          /* validation errors joined by "; ", NULL when valid */
	const cJSON *files;    /* spec.files / spec.plugins (borrowed, valid ones only) */
	const cJSON *plugins;
	char *conflict;        /* why an older SchedulerPlugin wins, NULL when none does */
	bool accepted;
};

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Appends one formatted message to *acc ("; " between). -1 on OOM. */
static int add_error(char **acc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_error(char **acc, const char *fmt, ...)
{
	char *msg = NULL, *joined = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (!*acc) {
		*acc = msg;
		return 0;
	}
	n = asprintf(&joined, "%s; %s", *acc, msg);
	free(msg);
	if (n < 0)
		return -1;
	free(*acc);
	*acc = joined;
	return 0;
}

bool op_plugin_name_in_tree(const char *name)
{
	if (sk_registry_lookup(name) || sk_unavailable_plugin_desc(name))
		return true;
	for (int i = 0; sk_unavailable_default_plugins[i]; i++)
		if (!strcmp(sk_unavailable_default_plugins[i], name))
			return true;
	return false;
}

/* A container name is an RFC 1123 label; ours is the prefix plus the object's name. */
static bool label_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > (size_t)OP_PLUGIN_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && !(c == '-' && i > 0 && i + 1 < n))
			return false;
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* The files list: absolute *.so paths with distinct base names. -1 on OOM. */
static int check_files(const cJSON *files, char **errs)
{
	if (!files)
		return add_error(errs, "spec.files: Required value");
	if (!cJSON_IsArray(files) || cJSON_GetArraySize(files) == 0)
		return add_error(errs, "spec.files: Invalid value: must be a non-empty list of paths");
	int i = 0;
	for (const cJSON *f = files->child; f; f = f->next, i++) {
		const char *p = cJSON_IsString(f) ? f->valuestring : NULL;
		int rc = 0;
		if (!p || !*p)
			rc = add_error(errs, "spec.files[%d]: Required value: a path", i);
		else if (p[0] != '/')
			rc = add_error(errs, "spec.files[%d]: Invalid value: \"%s\": must be an absolute path", i, p);
		else if (!ends_with(p, ".so") || strlen(base_name(p)) <= 3)
			rc = add_error(errs, "spec.files[%d]: Invalid value: \"%s\": must name a shared object (*.so)", i, p);
		if (rc)
			return -1;
		if (!p || p[0] != '/' || !ends_with(p, ".so"))
			continue;
		int j = 0;
		for (const cJSON *g = files->child; g != f; g = g->next, j++) {
			if (cJSON_IsString(g) && !strcmp(base_name(g->valuestring), base_name(p))) {
				if (add_error(errs,
					      "spec.files[%d]: Duplicate value: \"%s\": spec.files[%d] has the same base name "
					      "(both would be copied to " OP_PLUGIN_DIR "/%s)",
					      i, p, j, base_name(p)))
					return -1;
				break;
			}
		}
	}
	return 0;
}

/* The plugins list: distinct non-empty names, none of them in-tree or in the scheduler image's
 * modules (the loader refuses a name two plugin files register). -1 on OOM. */
static int check_plugins(const cJSON *plugins, const struct sk_module_set *modules, char **errs)
{
	if (!plugins)
		return add_error(errs, "spec.plugins: Required value");
	if (!cJSON_IsArray(plugins) || cJSON_GetArraySize(plugins) == 0)
		return add_error(errs, "spec.plugins: Invalid value: must be a non-empty list of plugin names");
	int i = 0;
	for (const cJSON *p = plugins->child; p; p = p->next, i++) {
		const char *s = cJSON_IsString(p) ? p->valuestring : NULL;
		int rc = 0;
		if (!s || !*s) {
			rc = add_error(errs, "spec.plugins[%d]: Required value: a plugin name", i);
		} else if (op_plugin_name_in_tree(s)) {
			rc = add_error(errs, "spec.plugins[%d]: Invalid value: \"%s\": shadows an in-tree plugin", i, s);
		} else if (sk_module_set_lookup(modules, s)) {
			rc = add_error(errs, "spec.plugins[%d]: Invalid value: \"%s\": shadows a plugin of the scheduler image",
				       i, s);
		} else {
			int j = 0;
			for (const cJSON *q = plugins->child; q != p; q = q->next, j++) {
				if (cJSON_IsString(q) && !strcmp(q->valuestring, s)) {
					rc = add_error(errs, "spec.plugins[%d]: Duplicate value: \"%s\"", i, s);
					break;
				}
			}
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* Validates one SchedulerPlugin into c->errors (NULL when valid). -1 on OOM. */
static int validate(struct cand *c, const struct sk_module_set *modules)
{
	if (!label_ok(c->name) &&
	    add_error(&c->errors,
		      "metadata.name: Invalid value: \"%s\": must be a lowercase RFC 1123 label of at most %d "
		      "characters (the init container is named " OP_PLUGIN_CONTAINER_PREFIX "<name>)",
		      c->name, OP_PLUGIN_NAME_MAX))
		return -1;
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(c->obj, "spec");
	if (!cJSON_IsObject(spec))
		return add_error(&c->errors, "spec: Required value");
	const cJSON *image = cJSON_GetObjectItemCaseSensitive(spec, "image");
	if ((!cJSON_IsString(image) || !*image->valuestring) && add_error(&c->errors, "spec.image: Required value"))
		return -1;
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(spec, "imagePullPolicy");
	if (pp && !cJSON_IsNull(pp)) {
		const char *v = cJSON_IsString(pp) ? pp->valuestring : "";
		if (strcmp(v, "Always") && strcmp(v, "IfNotPresent") && strcmp(v, "Never") &&
		    add_error(&c->errors,
			      "spec.imagePullPolicy: Unsupported value: \"%s\": supported values: \"Always\", "
			      "\"IfNotPresent\", \"Never\"",
			      v))
			return -1;
	}
	c->files = cJSON_GetObjectItemCaseSensitive(spec, "files");
	c->plugins = cJSON_GetObjectItemCaseSensitive(spec, "plugins");
	if (check_files(c->files, &c->errors) || check_plugins(c->plugins, modules, &c->errors))
		return -1;
	return 0;
}

static bool list_has(const cJSON *list, const char *s, bool by_base_name)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		if (!cJSON_IsString(it))
			continue;
		if (by_base_name ? !strcmp(base_name(it->valuestring), base_name(s)) : !strcmp(it->valuestring, s))
			return true;
	}
	return false;
}

/* Against the accepted SchedulerPlugins older than c: the first plugin name or file base name
 * already taken, as c->conflict. -1 on OOM. */
static int find_conflict(struct cand *all, int upto, struct cand *c)
{
	for (int i = 0; i < upto; i++) {
		const struct cand *o = &all[i];
		if (!o->accepted)
			continue;
		const cJSON *it;
		cJSON_ArrayForEach(it, c->plugins) {
			if (list_has(o->plugins, it->valuestring, false))
				return add_error(&c->conflict,
						 "plugin \"%s\" is already provided by SchedulerPlugin \"%s\", which is older",
						 it->valuestring, o->name);
		}
		cJSON_ArrayForEach(it, c->files) {
			if (list_has(o->files, it->valuestring, true))
				return add_error(&c->conflict,
						 "file base name \"%s\" is already used by SchedulerPlugin \"%s\", which is "
						 "older (both would be copied to " OP_PLUGIN_DIR "/%s)",
						 base_name(it->valuestring), o->name, base_name(it->valuestring));
		}
	}
	return 0;
}

static int cmp_age(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return op_age_cmp(&(struct op_age){ x->name, x->created }, &(struct op_age){ y->name, y->created });
}

static int cmp_result(const void *a, const void *b)
{
	const struct op_plugin_result *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char **strings_of(const cJSON *list, int *n)
{
	*n = cJSON_GetArraySize(list);
	char **out = calloc((size_t)*n + 1, sizeof *out);
	if (!out)
		return NULL;
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		if (!(out[i++] = strdup(it->valuestring))) {
			for (int j = 0; j < i; j++)
				free(out[j]);
			free(out);
			return NULL;
		}
	}
	return out;
}

static int fill_result(const struct cand *c, struct op_plugin_result *r)
{
	const cJSON *g = kube_obj_get(c->obj, "metadata.generation");
	if (g)
		kube_json_get_int64(g, &r->generation);
	r->name = xstrdup(c->name);
	r->accepted = c->accepted;
	if (c->errors) {
		r->reason = OP_REASON_INVALID;
		r->message = xstrdup(c->errors);
	} else if (c->conflict) {
		r->reason = OP_REASON_CONFLICT;
		r->message = xstrdup(c->conflict);
	} else {
		r->reason = OP_REASON_ACCEPTED;
		r->message = xstrdup("valid");
	}
	if (!r->name || !r->message)
		return -1;
	if (!c->accepted)
		return 0;
	r->image = xstrdup(kube_obj_get_string(c->obj, "spec.image"));
	const char *pp = kube_obj_get_string(c->obj, "spec.imagePullPolicy");
	r->pull_policy = pp ? strdup(pp) : NULL;
	r->files = strings_of(c->files, &r->nfiles);
	r->plugins = strings_of(c->plugins, &r->nplugins);
	if (!r->image || (pp && !r->pull_policy) || !r->files || !r->plugins)
		return -1;
	return 0;
}

/* sha256 of the accepted specs, rebuilt field by field in a fixed order so the hash does not
 * depend on how the API server ordered the JSON. */
static int hash_accepted(struct op_plugin_set *s)
{
	s->hash[0] = '\0';
	if (s->naccepted == 0)
		return 0;
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return -1;
	for (int i = 0; i < s->n; i++) {
		const struct op_plugin_result *r = &s->items[i];
		if (!r->accepted)
			continue;
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		cJSON *files = kube_json_string_array((const char *const *)r->files, r->nfiles), *plugins = kube_json_string_array((const char *const *)r->plugins, r->nplugins);
		if (!files || !cJSON_AddItemToObject(o, "files", files)) {
			cJSON_Delete(files);
			cJSON_Delete(plugins);
			goto fail;
		}
		if (!plugins || !cJSON_AddItemToObject(o, "plugins", plugins)) {
			cJSON_Delete(plugins);
			goto fail;
		}
		if (!cJSON_AddStringToObject(o, "name", r->name) || !cJSON_AddStringToObject(o, "image", r->image) ||
		    (r->pull_policy && !cJSON_AddStringToObject(o, "imagePullPolicy", r->pull_policy)))
			goto fail;
	}
	char *text = cJSON_PrintUnformatted(arr);
	cJSON_Delete(arr);
	if (!text)
		return -1;
	op_sha256_hex(text, strlen(text), s->hash);
	free(text);
	return 0;
fail:
	cJSON_Delete(arr);
	return -1;
}

static int collect_external(struct op_plugin_set *s)
{
	int total = 0;
	for (int i = 0; i < s->n; i++)
		total += s->items[i].nplugins;
	s->external = calloc((size_t)total + 1, sizeof *s->external);
	if (!s->external)
		return -1;
	int k = 0;
	for (int i = 0; i < s->n; i++)
		for (int j = 0; j < s->items[i].nplugins; j++)
			s->external[k++] = s->items[i].plugins[j];
	qsort(s->external, (size_t)k, sizeof *s->external, cmp_str);
	return 0;
}

int op_plugin_set_build(const cJSON *objs, struct op_plugin_set *out, char **err)
{
	return op_plugin_set_build_with(objs, NULL, out, err);
}

int op_plugin_set_build_with(const cJSON *objs, const struct sk_module_set *modules, struct op_plugin_set *out,
			     char **err)
{
	memset(out, 0, sizeof *out);
	if (err)
		*err = NULL;
	int total = cJSON_GetArraySize(objs), n = 0;
	struct cand *c = calloc(total > 0 ? (size_t)total : 1, sizeof *c);
	if (!c)
		goto oom;
	const cJSON *obj;
	cJSON_ArrayForEach(obj, objs) {
		struct op_age age;
		if (!op_object_age(obj, &age))
			continue;
		struct cand *x = &c[n++];
		x->obj = obj;
		x->name = age.name;
		x->created = age.created;
	}
	qsort(c, (size_t)n, sizeof *c, cmp_age);
	for (int i = 0; i < n; i++) {
		if (validate(&c[i], modules) != 0)
			goto oom;
		if (c[i].errors)
			continue;
		if (find_conflict(c, i, &c[i]) != 0)
			goto oom;
		c[i].accepted = !c[i].conflict;
	}
	out->items = calloc(n > 0 ? (size_t)n : 1, sizeof *out->items);
	if (!out->items)
		goto oom;
	out->n = n;
	for (int i = 0; i < n; i++) {
		if (fill_result(&c[i], &out->items[i]) != 0)
			goto oom;
		out->naccepted += c[i].accepted;
	}
	qsort(out->items, (size_t)n, sizeof *out->items, cmp_result);
	if (hash_accepted(out) != 0 || collect_external(out) != 0)
		goto oom;
	for (int i = 0; i < n; i++) {
		free(c[i].errors);
		free(c[i].conflict);
	}
	free(c);
	return 0;
oom:
	if (c)
		for (int i = 0; i < n; i++) {
			free(c[i].errors);
			free(c[i].conflict);
		}
	free(c);
	op_plugin_set_free(out);
	if (err)
		*err = strdup("out of memory");
	return -1;
}

static void free_strings(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void op_plugin_set_free(struct op_plugin_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		struct op_plugin_result *r = &s->items[i];
		free(r->name);
		free(r->message);
		free(r->image);
		free(r->pull_policy);
		free_strings(r->files, r->nfiles);
		free_strings(r->plugins, r->nplugins);
	}
	free(s->items);
	free(s->external);
	memset(s, 0, sizeof *s);
}

const struct op_plugin_result *op_plugin_set_find(const struct op_plugin_set *s, const char *name)
{
	for (int i = 0; s && i < s->n; i++)
		if (!strcmp(s->items[i].name, name))
			return &s->items[i];
	return NULL;
}

cJSON *op_plugin_status_desired(const cJSON *obj, const struct op_plugin_result *r, const char *now)
{
	cJSON *st = cJSON_CreateObject();
	cJSON *gen = kube_json_create_int64(r->generation);
	if (!st || !gen || !cJSON_AddItemToObject(st, "observedGeneration", gen)) {
		cJSON_Delete(gen);
		cJSON_Delete(st);
		return NULL;
	}
	/* keep the conditions already there so their transition times survive */
	const cJSON *old = kube_obj_get(obj, "status.conditions");
	cJSON *conds = cJSON_IsArray(old) ? cJSON_Duplicate(old, 1) : cJSON_CreateArray();
	if (!conds || !cJSON_AddItemToObject(st, "conditions", conds)) {
		cJSON_Delete(conds);
		cJSON_Delete(st);
		return NULL;
	}
	kube_condition_set(st, "Accepted", r->accepted ? "True" : "False", r->reason, r->message, r->generation, now);
	if (!kube_condition_find(conds, "Accepted")) {
		cJSON_Delete(st);
		return NULL;
	}
	return st;
}
