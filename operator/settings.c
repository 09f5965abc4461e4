/* Parsing and validating the scheduler settings file (see settings.h). */
#include "operator/settings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/quantity.h"

/* Volume and mount names the Deployment already uses. */
static const char *const reserved_volumes[] = { "config", "plugins" };

static int fail(char **err, const char *source, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **err, const char *source, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (err && asprintf(err, "%s: %s", source, msg) < 0)
		*err = NULL;
	return -1;
}

/* Blank lines, comments and document markers only: a settings file that sets nothing (the
 * shipped ConfigMap holds commented examples). */
static bool only_comments(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
			i++;
		if (i < len && text[i] != '\n' && text[i] != '#' && !(len - i >= 3 && !strncmp(text + i, "---", 3)))
			return false;
		while (i < len && text[i] != '\n')
			i++;
		i++;
	}
	return true;
}

static bool all_strings(const cJSON *o)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, o)
		if (!cJSON_IsString(v))
			return false;
	return true;
}

/* resources: {requests, limits}, each {name: quantity string}; a limit below its request is refused. */
static int check_resources(const cJSON *r, const char *source, char **err)
{
	if (!cJSON_IsObject(r))
		return fail(err, source, "resources: must be an object with requests and limits");
	const cJSON *part;
	cJSON_ArrayForEach(part, r) {
		if (strcmp(part->string, "requests") && strcmp(part->string, "limits"))
			return fail(err, source, "resources.%s: unknown field (requests, limits)", part->string);
		if (!cJSON_IsObject(part))
			return fail(err, source, "resources.%s: must be an object of quantities", part->string);
		const cJSON *q;
		cJSON_ArrayForEach(q, part) {
			struct kube_quantity kq;
			char *qerr = NULL;
			if (!cJSON_IsString(q) || kube_quantity_parse(q->valuestring, &kq, &qerr) != 0 ||
			    kube_quantity_sign(&kq) < 0) {
				free(qerr);
				return fail(err, source, "resources.%s.%s: Invalid value: must be a non-negative quantity string such as \"100m\" or \"128Mi\"",
					    part->string, q->string);
			}
			free(qerr);
		}
	}
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(r, "requests"), *lim = cJSON_GetObjectItemCaseSensitive(r, "limits");
	const cJSON *l;
	cJSON_ArrayForEach(l, lim) {
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(req, l->string);
		struct kube_quantity a, b;
		if (q && kube_quantity_parse(q->valuestring, &a, NULL) == 0 && kube_quantity_parse(l->valuestring, &b, NULL) == 0 &&
		    kube_quantity_cmp(&b, &a) < 0)
			return fail(err, source, "resources.limits.%s: Invalid value: \"%s\": must be greater than or equal to the request (%s)",
				    l->string, l->valuestring, q->valuestring);
	}
	return 0;
}

/* An array of objects, each with a non-empty string `name` (and, for mounts, `mountPath`),
 * names unique and not the Deployment's own. */
static int check_named_list(const cJSON *a, const char *field, bool mounts, const char *source, char **err)
{
	if (!cJSON_IsArray(a))
		return fail(err, source, "%s: must be a list", field);
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, a) {
		const char *name = kube_obj_get_string(e, "name");
		if (!cJSON_IsObject(e) || !name || !*name)
			return fail(err, source, "%s[%d].name: Required value", field, i);
		if (mounts && !kube_obj_get_string(e, "mountPath"))
			return fail(err, source, "%s[%d].mountPath: Required value", field, i);
		for (size_t k = 0; k < sizeof reserved_volumes / sizeof reserved_volumes[0]; k++)
			if (!strcmp(name, reserved_volumes[k]))
				return fail(err, source, "%s[%d].name: Invalid value: \"%s\": used by the scheduler Deployment itself",
					    field, i, name);
		if (!mounts) {
			for (const cJSON *prev = a->child; prev && prev != e; prev = prev->next)
				if (!strcmp(kube_obj_get_string(prev, "name"), name))
					return fail(err, source, "%s[%d].name: Duplicate value: \"%s\"", field, i, name);
		}
		i++;
	}
	return 0;
}

int op_settings_parse(const char *text, size_t len, const char *source, struct op_settings *out, char **err)
{
	memset(out, 0, sizeof *out);
	out->replicas = -1;
	if (err)
		*err = NULL;
	char *perr = NULL;
	cJSON *doc = len && !only_comments(text, len) ? kube_yaml_parse_one(text, len, &perr) : NULL;
	if (len && !doc && perr) {
		fail(err, source, "%s", perr);
		free(perr);
		return -1;
	}
	free(perr);
	if (!doc || cJSON_IsNull(doc)) {
		cJSON_Delete(doc);
		return 0;
	}
	static const char *const known[] = { "image", "replicas", "priorityClassName", "resources", "nodeSelector",
					     "tolerations", "volumes", "volumeMounts" };
	int rc = -1;
	if (!cJSON_IsObject(doc)) {
		fail(err, source, "must be a mapping of settings");
		goto out;
	}
	for (const cJSON *f = doc->child; f; f = f->next) {
		bool ok = false;
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			ok |= !strcmp(f->string, known[k]);
		if (!ok) {
			fail(err, source, "%s: unknown field (image, replicas, priorityClassName, resources, nodeSelector, "
				     "tolerations, volumes, volumeMounts)", f->string);
			goto out;
		}
	}
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "image");
	if (v && (!cJSON_IsString(v) || !*v->valuestring)) {
		fail(err, source, "image: must be a non-empty string");
		goto out;
	}
	if (v && !(out->image = strdup(v->valuestring)))
		goto oom;
	v = cJSON_GetObjectItemCaseSensitive(doc, "replicas");
	int64_t n;
	if (v && (kube_json_get_int64(v, &n) != 0 || n < 1 || n > 100)) {
		fail(err, source, "replicas: Invalid value: must be an integer from 1 to 100");
		goto out;
	}
	if (v)
		out->replicas = (int)n;
	v = cJSON_GetObjectItemCaseSensitive(doc, "priorityClassName");
	if (v && !cJSON_IsString(v)) {
		fail(err, source, "priorityClassName: must be a string (\"\" for none)");
		goto out;
	}
	if (v && !(out->priority_class = strdup(v->valuestring)))
		goto oom;
	if ((v = cJSON_GetObjectItemCaseSensitive(doc, "resources")) && check_resources(v, source, err))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(doc, "nodeSelector");
	if (v && (!cJSON_IsObject(v) || !all_strings(v))) {
		fail(err, source, "nodeSelector: must be a mapping of label names to string values");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(doc, "tolerations");
	if (v && !cJSON_IsArray(v)) {
		fail(err, source, "tolerations: must be a list of tolerations");
		goto out;
	}
	int i = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, v) {
		if (!cJSON_IsObject(t)) {
			fail(err, source, "tolerations[%d]: must be a toleration object", i);
			goto out;
		}
		i++;
	}
	const cJSON *vols = cJSON_GetObjectItemCaseSensitive(doc, "volumes");
	const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(doc, "volumeMounts");
	if ((vols && check_named_list(vols, "volumes", false, source, err)) ||
	    (mounts && check_named_list(mounts, "volumeMounts", true, source, err)))
		goto out;
	i = 0;
	cJSON_ArrayForEach(t, mounts) {
		bool found = false;
		const cJSON *vol;
		cJSON_ArrayForEach(vol, vols)
			found |= !strcmp(kube_obj_get_string(vol, "name"), kube_obj_get_string(t, "name"));
		if (!found) {
			fail(err, source, "volumeMounts[%d].name: Not found: \"%s\" is not in volumes", i,
			     kube_obj_get_string(t, "name"));
			goto out;
		}
		i++;
	}
	out->resources = cJSON_DetachItemFromObjectCaseSensitive(doc, "resources");
	out->node_selector = cJSON_DetachItemFromObjectCaseSensitive(doc, "nodeSelector");
	out->tolerations = cJSON_DetachItemFromObjectCaseSensitive(doc, "tolerations");
	out->volumes = cJSON_DetachItemFromObjectCaseSensitive(doc, "volumes");
	out->volume_mounts = cJSON_DetachItemFromObjectCaseSensitive(doc, "volumeMounts");
	rc = 0;
	goto out;
oom:
	fail(err, source, "out of memory");
out:
	cJSON_Delete(doc);
	if (rc)
		op_settings_free(out);
	return rc;
}

int op_settings_load(const char *path, struct op_settings *out, char **err)
{
	memset(out, 0, sizeof *out);
	out->replicas = -1;
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(err, path, "cannot open: %s", strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return fail(err, path, "out of memory");
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
		if (len > (1 << 20)) {
			free(buf);
			fclose(f);
			return fail(err, path, "larger than 1 MiB");
		}
	}
	fclose(f);
	int rc = op_settings_parse(buf, len, path, out, err);
	free(buf);
	return rc;
}

void op_settings_free(struct op_settings *s)
{
	if (!s)
		return;
	free(s->image);
	free(s->priority_class);
	cJSON_Delete(s->resources);
	cJSON_Delete(s->node_selector);
	cJSON_Delete(s->tolerations);
	cJSON_Delete(s->volumes);
	cJSON_Delete(s->volume_mounts);
	memset(s, 0, sizeof *s);
	s->replicas = -1;
}
