/* Rendering SchedulerProfiles into one KubeSchedulerConfiguration: the profile entry of each spec
 * (provider merged into pluginConfig) and the deterministic YAML document around them. */
#include "operator/legacy.h"
#include "operator/render.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kube/object.h"
#include "kube/util.h"
#include "operator/extender_tls.h"

#define DEFAULT_LEASE_NS "schedkit-system"
#define DEFAULT_LEASE_NAME "schedkit-scheduler"


const char *op_profile_scheduler_name(const cJSON *spec, const char *metadata_name)
{
	const cJSON *n = spec ? cJSON_GetObjectItemCaseSensitive(spec, "schedulerName") : NULL;
	if (cJSON_IsString(n) && n->valuestring && *n->valuestring)
		return n->valuestring;
	return metadata_name;
}

cJSON *op_json_merge(const cJSON *base, const cJSON *over)
{
	if (!over)
		return base ? cJSON_Duplicate(base, 1) : cJSON_CreateNull();
	if (!cJSON_IsObject(base) || !cJSON_IsObject(over))
		return cJSON_Duplicate(over, 1);
	cJSON *out = cJSON_Duplicate(base, 1);
	if (!out)
		return NULL;
	for (const cJSON *it = over->child; it; it = it->next) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(out, it->string);
		cJSON *m = op_json_merge(b, it);
		if (!m) {
			cJSON_Delete(out);
			return NULL;
		}
		if (b) {
			if (!cJSON_ReplaceItemInObjectCaseSensitive(out, it->string, m)) {
				cJSON_Delete(m);
				cJSON_Delete(out);
				return NULL;
			}
		} else if (!cJSON_AddItemToObject(out, it->string, m)) {
			cJSON_Delete(m);
			cJSON_Delete(out);
			return NULL;
		}
	}
	return out;
}

/* Adds a copy of spec[field] to out under the same name when present. 0, or -1 on OOM. */
static int copy_field(cJSON *out, const cJSON *spec, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, field);
	if (!v || cJSON_IsNull(v))
		return 0;
	cJSON *c = cJSON_Duplicate(v, 1);
	if (!c || !cJSON_AddItemToObject(out, field, c)) {
		cJSON_Delete(c);
		return -1;
	}
	return 0;
}

static const char *json_type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "null";
}

/* spec.field must be absent, null, or of the given kind. */
static int check_type(const cJSON *spec, const char *field, int (*is)(const cJSON *), const char *want, char **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, field);
	if (!v || cJSON_IsNull(v) || is(v))
		return 0;
	return kube_errf(err, "spec.%s: Invalid value: \"%s\": spec.%s in body must be of type %s", field,
		    json_type_name(v), field, want);
}

static int is_string(const cJSON *v) { return cJSON_IsString(v); }
static int is_object(const cJSON *v) { return cJSON_IsObject(v); }
static int is_array(const cJSON *v) { return cJSON_IsArray(v); }
static int is_integer(const cJSON *v)
{
	int64_t i;
	return cJSON_IsNumber(v) && kube_json_get_int64(v, &i) == 0;
}

/* pluginConfig with the ClusterAutoscaler provider's NodeResourcesFit args merged in. */
static cJSON *provider_plugin_config(const cJSON *user)
{
	cJSON *base = cJSON_CreateObject();
	cJSON *ss = cJSON_AddObjectToObject(base, "scoringStrategy");
	if (!ss || !cJSON_AddStringToObject(ss, "type", "MostAllocated")) {
		cJSON_Delete(base);
		return NULL;
	}
	cJSON *out = user ? cJSON_Duplicate(user, 1) : cJSON_CreateArray();
	if (!out) {
		cJSON_Delete(base);
		return NULL;
	}
	cJSON *entry = NULL;
	cJSON *it;
	cJSON_ArrayForEach(it, out) {
		const char *n = kube_obj_get_string(it, "name");
		if (n && !strcmp(n, "NodeResourcesFit")) {
			entry = it;
			break;
		}
	}
	int rc = -1;
	if (entry) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(entry, "args");
		/* Args that are not an object are left for the loader to reject. */
		if (!args || cJSON_IsNull(args) || cJSON_IsObject(args)) {
			cJSON *m = op_json_merge(base, cJSON_IsObject(args) ? args : NULL);
			if (m && (args ? cJSON_ReplaceItemInObjectCaseSensitive(entry, "args", m)
				       : cJSON_AddItemToObject(entry, "args", m)))
				rc = 0;
			else
				cJSON_Delete(m);
		} else {
			rc = 0;
		}
	} else {
		cJSON *e = cJSON_CreateObject();
		if (e && cJSON_AddStringToObject(e, "name", "NodeResourcesFit") &&
		    cJSON_AddItemToObject(e, "args", base)) {
			base = NULL;
			if (cJSON_AddItemToArray(out, e))
				rc = 0;
		} else {
			cJSON_Delete(e);
		}
	}
	cJSON_Delete(base);
	if (rc) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

/* pluginConfig entries with "name" first (kubectl sends keys sorted, which puts args first);
 * other keys keep their order. Entries that are not objects are copied as they are. */
static cJSON *normalize_plugin_config(const cJSON *pc)
{
	cJSON *out = cJSON_CreateArray();
	if (!out)
		return NULL;
	const cJSON *e;
	cJSON_ArrayForEach(e, pc) {
		const cJSON *name = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "name") : NULL;
		cJSON *c = name ? cJSON_CreateObject() : cJSON_Duplicate(e, 1);
		if (!c || !cJSON_AddItemToArray(out, c)) {
			cJSON_Delete(c);
			goto oom;
		}
		if (!name)
			continue;
		if (!cJSON_AddItemToObject(c, "name", cJSON_Duplicate(name, 1)))
			goto oom;
		for (const cJSON *f = e->child; f; f = f->next) {
			if (f == name)
				continue;
			cJSON *d = cJSON_Duplicate(f, 1);
			if (!d || !cJSON_AddItemToObject(c, f->string, d)) {
				cJSON_Delete(d);
				goto oom;
			}
		}
	}
	return out;
oom:
	cJSON_Delete(out);
	return NULL;
}

int op_render_profile(const cJSON *spec, const char *metadata_name, cJSON **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (spec && cJSON_IsNull(spec))
		spec = NULL;
	if (spec && !cJSON_IsObject(spec))
		return kube_errf(err, "spec: Invalid value: \"%s\": spec in body must be of type object", json_type_name(spec));
	if (spec && (check_type(spec, "schedulerName", is_string, "string", err) ||
		     check_type(spec, "provider", is_string, "string", err) ||
		     check_type(spec, "percentageOfNodesToScore", is_integer, "integer", err) ||
		     check_type(spec, "plugins", is_object, "object", err) ||
		     check_type(spec, "pluginConfig", is_array, "array", err) ||
		     check_type(spec, "extenders", is_array, "array", err) ||
		     check_type(spec, "decisionRecords", is_object, "object", err)))
		return -1;
	const char *name = op_profile_scheduler_name(spec, metadata_name);
	if (!name || !*name)
		return kube_errf(err, "spec.schedulerName: Required value");
	int lr = op_render_legacy(spec, name, out, NULL, err); /* legacyPolicy, DefaultProvider, ... */
	if (lr != 0)
		return lr > 0 ? 0 : -1;
	const char *provider = spec ? kube_obj_get_string(spec, "provider") : NULL;
	bool autoscaler = false;
	if (provider && *provider) {
		if (!strcmp(provider, "ClusterAutoscaler"))
			autoscaler = true;
		else if (strcmp(provider, "Default"))
			return kube_errf(err, "spec.provider: Unsupported value: \"%s\": supported values: \"ClusterAutoscaler\", "
					 "\"ClusterAutoscalerProvider\", \"Default\", \"DefaultProvider\"", provider);
	}

	cJSON *p = cJSON_CreateObject();
	if (!p || !cJSON_AddStringToObject(p, "schedulerName", name))
		goto oom;
	if (spec && (copy_field(p, spec, "percentageOfNodesToScore") || copy_field(p, spec, "plugins")))
		goto oom;
	const cJSON *pc = spec ? cJSON_GetObjectItemCaseSensitive(spec, "pluginConfig") : NULL;
	if (pc && cJSON_IsNull(pc))
		pc = NULL;
	if (pc || autoscaler) {
		cJSON *norm = pc ? normalize_plugin_config(pc) : NULL;
		cJSON *m = autoscaler ? (pc && !norm ? NULL : provider_plugin_config(norm)) : norm;
		if (autoscaler)
			cJSON_Delete(norm);
		if (!m || !cJSON_AddItemToObject(p, "pluginConfig", m)) {
			cJSON_Delete(m);
			goto oom;
		}
	}
	const cJSON *ext = spec ? cJSON_GetObjectItemCaseSensitive(spec, "extenders") : NULL;
	if (ext && !cJSON_IsNull(ext)) { /* TLS from Secrets: operator/extender_tls.h */
		cJSON *r = NULL;
		if (op_render_extenders(ext, &r, err) != 0) {
			cJSON_Delete(p);
			return -1;
		}
		if (!cJSON_AddItemToObject(p, "extenders", r)) {
			cJSON_Delete(r);
			goto oom;
		}
	}
	if (spec && copy_field(p, spec, "decisionRecords"))
		goto oom;
	*out = p;
	return 0;
oom:
	cJSON_Delete(p);
	return kube_errf(err, "out of memory");
}

struct sorted_profile {
	const cJSON *p;
	const char *name;
	int index;
};

static int cmp_profile(const void *a, const void *b)
{
	const struct sorted_profile *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->index - y->index;
}

char *op_render_config(const cJSON *const *profiles, int n, const struct op_render_opts *opts)
{
	const char *ns = opts && opts->lease_namespace ? opts->lease_namespace : DEFAULT_LEASE_NS;
	const char *lease = opts && opts->lease_name ? opts->lease_name : DEFAULT_LEASE_NAME;
	struct sorted_profile *s = calloc(n > 0 ? (size_t)n : 1, sizeof *s);
	cJSON *doc = cJSON_CreateObject();
	char *text = NULL;
	if (!s || !doc)
		goto out;
	for (int i = 0; i < n; i++) {
		const char *nm = kube_obj_get_string(profiles[i], "schedulerName");
		s[i] = (struct sorted_profile){ profiles[i], nm ? nm : "", i };
	}
	qsort(s, (size_t)n, sizeof *s, cmp_profile);
	if (!cJSON_AddStringToObject(doc, "apiVersion", "kubescheduler.config.k8s.io/v1") ||
	    !cJSON_AddStringToObject(doc, "kind", "KubeSchedulerConfiguration"))
		goto out;
	cJSON *le = cJSON_AddObjectToObject(doc, "leaderElection");
	if (!le || !cJSON_AddBoolToObject(le, "leaderElect", 1) || !cJSON_AddStringToObject(le, "resourceLock", "leases") ||
	    !cJSON_AddStringToObject(le, "resourceName", lease) || !cJSON_AddStringToObject(le, "resourceNamespace", ns))
		goto out;
	cJSON *arr = cJSON_AddArrayToObject(doc, "profiles");
	if (!arr)
		goto out;
	for (int i = 0; i < n; i++) {
		cJSON *c = cJSON_Duplicate(s[i].p, 1);
		if (!c || !cJSON_AddItemToArray(arr, c)) {
			cJSON_Delete(c);
			goto out;
		}
	}
	text = kube_yaml_emit(doc);
out:
	free(s);
	cJSON_Delete(doc);
	return text;
}

void op_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	out[0] = '\0';
	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		return;
	static const char hex[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}
