/* Building blocks of the legacy translation (scheduler/config/legacy_internal.h): a profile in
 * upstream's internal shape with appendToPluginSet semantics
 * (pkg/scheduler/framework/plugins/legacy_registry.go), the Policy's LegacyExtender list as v1
 * Extenders (staging/src/k8s.io/kube-scheduler/config/v1/types.go before v1.23: keys decoded
 * case-insensitively, httpTimeout in nanoseconds), and the old mergePluginSet. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/config/legacy.h"
#include "scheduler/config/legacy_internal.h"

int lp_init(struct legacy_profile *lp, const char *scheduler_name)
{
	lp->root = cJSON_CreateObject();
	if (!lp->root || !cJSON_AddStringToObject(lp->root, "schedulerName", scheduler_name) ||
	    !cJSON_AddObjectToObject(lp->root, "plugins") || !cJSON_AddArrayToObject(lp->root, "pluginConfig")) {
		lp_free(lp);
		return -1;
	}
	return 0;
}

void lp_free(struct legacy_profile *lp)
{
	cJSON_Delete(lp->root);
	lp->root = NULL;
}

cJSON *lp_take(struct legacy_profile *lp)
{
	cJSON *r = lp->root;
	lp->root = NULL;
	return r;
}

static cJSON *enabled_list(struct legacy_profile *lp, enum sk_ext_point ep)
{
	cJSON *plugins = cJSON_GetObjectItemCaseSensitive(lp->root, "plugins");
	cJSON *set = cJSON_GetObjectItemCaseSensitive(plugins, LP_FIELD(ep));
	if (!set && !(set = cJSON_AddObjectToObject(plugins, LP_FIELD(ep))))
		return NULL;
	cJSON *en = cJSON_GetObjectItemCaseSensitive(set, "enabled");
	if (!en)
		en = cJSON_AddArrayToObject(set, "enabled");
	return en;
}

int lp_append(struct legacy_profile *lp, enum sk_ext_point ep, const char *name, const int32_t *weight)
{
	cJSON *en = enabled_list(lp, ep);
	if (!en)
		return -1;
	for (cJSON *e = en->child; e; e = e->next) {
		if (strcmp(kube_obj_get_string(e, "name"), name))
			continue;
		cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "weight");
		int64_t cur = 0;
		if (weight && (!w || (kube_json_get_int64(w, &cur) == 0 && *weight > cur))) {
			cJSON *nw = kube_json_create_int64(*weight);
			if (!nw)
				return -1;
			if (w)
				cJSON_ReplaceItemInObjectCaseSensitive(e, "weight", nw);
			else
				cJSON_AddItemToObject(e, "weight", nw);
		}
		return 0;
	}
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddItemToArray(en, e) || !cJSON_AddStringToObject(e, "name", name))
		return -1;
	if (weight && !cJSON_AddItemToObject(e, "weight", kube_json_create_int64(*weight)))
		return -1;
	return 0;
}

static cJSON *config_entry(const struct legacy_profile *lp, const char *name)
{
	cJSON *pc = cJSON_GetObjectItemCaseSensitive(lp->root, "pluginConfig");
	for (cJSON *e = pc ? pc->child : NULL; e; e = e->next)
		if (!strcmp(kube_obj_get_string(e, "name"), name))
			return e;
	return NULL;
}

const cJSON *lp_config_get(const struct legacy_profile *lp, const char *name)
{
	cJSON *e = config_entry(lp, name);
	return e ? cJSON_GetObjectItemCaseSensitive(e, "args") : NULL;
}

int lp_config_append(struct legacy_profile *lp, const char *name, const cJSON *args)
{
	if (config_entry(lp, name))
		return 0;
	cJSON *e = cJSON_CreateObject(), *a = cJSON_Duplicate(args, 1);
	/* cJSON_AddItemToObject attaches a only when it succeeds, so on any failure a is ours */
	if (!e || !a || !cJSON_AddStringToObject(e, "name", name) || !cJSON_AddItemToObject(e, "args", a)) {
		cJSON_Delete(e);
		cJSON_Delete(a);
		return -1;
	}
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(lp->root, "pluginConfig"), e);
	return 0;
}

int lp_config_set(struct legacy_profile *lp, const char *name, const cJSON *args)
{
	cJSON *e = config_entry(lp, name);
	if (!e)
		return lp_config_append(lp, name, args);
	cJSON *a = cJSON_Duplicate(args, 1);
	if (!a)
		return -1;
	cJSON_ReplaceItemInObjectCaseSensitive(e, "args", a);
	return 0;
}

/* ---------- LegacyExtender -> v1 Extender ---------- */

/* The v1 spelling of each LegacyExtender key (matched case-insensitively, as Go's encoding/json
 * did for this type); "enableHttps" became "enableHTTPS". */
static const char *const extender_keys[] = { "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight",
					     "bindVerb", "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable",
					     "managedResources", "ignorable", NULL };
static const char *const tls_keys[] = { "insecure", "serverName", "certFile", "keyFile", "caFile",
					"certData", "keyData", "caData", NULL };
static const char *const resource_keys[] = { "name", "ignoredByScheduler", NULL };

static const char *canonical(const char *k, const char *const *keys)
{
	if (!strcasecmp(k, "enableHttps"))
		k = "enableHTTPS";
	for (int i = 0; keys[i]; i++)
		if (!strcasecmp(k, keys[i]))
			return keys[i];
	return NULL;
}

/* A copy of obj with its keys in their canonical spelling; unknown keys are left out and named in
 * the notes (upstream's decoder ignored them). */
static cJSON *canonical_copy(const cJSON *obj, const char *path, const char *const *keys, struct sk_errors *notes,
			     struct sk_errors *e)
{
	if (!cJSON_IsObject(obj)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", path);
		return NULL;
	}
	cJSON *out = cJSON_CreateObject();
	if (!out)
		return NULL;
	for (const cJSON *c = obj->child; c; c = c->next) {
		const char *k = canonical(c->string, keys);
		if (!k) {
			if (notes)
				sk_errors_addf(notes, "unknown field \"%s.%s\": ignored, as upstream's decoder ignored it", path,
					       c->string);
			continue;
		}
		if (cJSON_GetObjectItemCaseSensitive(out, k)) { /* Go: the last of the spellings wins */
			cJSON_DeleteItemFromObjectCaseSensitive(out, k);
		}
		cJSON *d = cJSON_Duplicate(c, 1);
		if (!d || !cJSON_AddItemToObject(out, k, d)) {
			cJSON_Delete(d);
			cJSON_Delete(out);
			return NULL;
		}
	}
	return out;
}

/* httpTimeout: Go time.Duration, an integer of nanoseconds -> v1 duration text. */
static int convert_timeout(cJSON *ext, const char *path, struct sk_errors *notes, struct sk_errors *e)
{
	cJSON *t = cJSON_GetObjectItemCaseSensitive(ext, "httpTimeout");
	if (!t || cJSON_IsNull(t)) {
		cJSON_DeleteItemFromObjectCaseSensitive(ext, "httpTimeout");
		return 0;
	}
	int64_t ns;
	if (!cJSON_IsNumber(t) || kube_json_get_int64(t, &ns) < 0) {
		sk_errors_addf(e, "%s.httpTimeout: Invalid type: expected integer (nanoseconds, a Go time.Duration)", path);
		return -1;
	}
	if (ns < 0) {
		sk_err_invalid_int(e, "httpTimeout", ns, "must not be negative");
		return -1;
	}
	int64_t ms = ns / 1000000;
	if (ns % 1000000) {
		ms++;
		if (notes)
			sk_errors_addf(notes, "%s.httpTimeout: %" PRId64 "ns rounded up to %" PRId64 "ms (v1 durations are kept "
					      "in milliseconds here)", path, ns, ms);
	}
	char buf[48];
	kube_duration_format_ms(ms, buf, sizeof buf);
	cJSON *s = cJSON_CreateString(buf);
	if (!s)
		return -1;
	cJSON_ReplaceItemInObjectCaseSensitive(ext, "httpTimeout", s);
	return 0;
}

int legacy_extenders_to_v1(const cJSON *list, cJSON **out, struct sk_errors *notes, struct sk_errors *errs)
{
	*out = NULL;
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list)) {
		sk_errors_addf(errs, "extenders: Invalid type: expected array");
		return -1;
	}
	int before = errs->n;
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return -1;
	int i = 0;
	for (const cJSON *x = list->child; x; x = x->next, i++) {
		char path[40];
		snprintf(path, sizeof path, "extenders[%d]", i);
		cJSON *ext = canonical_copy(x, path, extender_keys, notes, errs);
		if (!ext)
			continue;
		cJSON_AddItemToArray(arr, ext);
		cJSON *tls = cJSON_GetObjectItemCaseSensitive(ext, "tlsConfig");
		if (tls && !cJSON_IsNull(tls)) {
			char tp[64];
			snprintf(tp, sizeof tp, "%s.tlsConfig", path);
			cJSON *c = canonical_copy(tls, tp, tls_keys, notes, errs);
			if (c)
				cJSON_ReplaceItemInObjectCaseSensitive(ext, "tlsConfig", c);
		}
		cJSON *mr = cJSON_GetObjectItemCaseSensitive(ext, "managedResources");
		if (mr && cJSON_IsArray(mr)) {
			int j = 0;
			for (cJSON *r = mr->child, *next; r; r = next, j++) {
				next = r->next;
				char rp[80];
				snprintf(rp, sizeof rp, "%s.managedResources[%d]", path, j);
				cJSON *c = canonical_copy(r, rp, resource_keys, notes, errs);
				if (c)
					cJSON_ReplaceItemViaPointer(mr, r, c);
			}
		}
		convert_timeout(ext, path, notes, errs);
	}
	if (errs->n != before) {
		cJSON_Delete(arr);
		return -1;
	}
	*out = arr;
	return 0;
}

/* ---------- mergePluginSet (pre-v1beta3) ---------- */

cJSON *sk_plugin_set_merge(const cJSON *defaults, const cJSON *user)
{
	return legacy_merge_plugin_set(defaults, user);
}

cJSON *legacy_merge_plugin_set(const cJSON *defaults, const cJSON *user)
{
	const cJSON *den = defaults ? cJSON_GetObjectItemCaseSensitive(defaults, "enabled") : NULL;
	const cJSON *uen = user ? cJSON_GetObjectItemCaseSensitive(user, "enabled") : NULL;
	const cJSON *udis = user ? cJSON_GetObjectItemCaseSensitive(user, "disabled") : NULL;
	cJSON *out = cJSON_CreateObject();
	cJSON *en = out ? cJSON_AddArrayToObject(out, "enabled") : NULL;
	if (!en) {
		cJSON_Delete(out);
		return NULL;
	}
	int nu = cJSON_IsArray(uen) ? cJSON_GetArraySize(uen) : 0;
	char *replaced = calloc((size_t)nu + 1, 1);
	if (!replaced) {
		cJSON_Delete(out);
		return NULL;
	}
	bool all = false;
	for (const cJSON *d = cJSON_IsArray(udis) ? udis->child : NULL; d; d = d->next) {
		const char *n = kube_obj_get_string(d, "name");
		all = all || (n && !strcmp(n, "*"));
	}
	bool oom = false;
	for (const cJSON *d = (!all && cJSON_IsArray(den)) ? den->child : NULL; d; d = d->next) {
		const char *dn = kube_obj_get_string(d, "name");
		bool disabled = false;
		for (const cJSON *x = cJSON_IsArray(udis) ? udis->child : NULL; x && !disabled; x = x->next) {
			const char *n = kube_obj_get_string(x, "name");
			disabled = n && dn && !strcmp(n, dn);
		}
		if (disabled)
			continue;
		const cJSON *pick = d;
		int idx = 0, last = -1;
		for (const cJSON *u = cJSON_IsArray(uen) ? uen->child : NULL; u; u = u->next, idx++) {
			const char *n = kube_obj_get_string(u, "name");
			if (n && dn && !strcmp(n, dn))
				last = idx; /* upstream's map keeps the last entry of a name */
		}
		if (last >= 0) {
			pick = cJSON_GetArrayItem(uen, last);
			replaced[last] = 1;
		}
		cJSON *c = cJSON_Duplicate(pick, 1);
		if (!c || !cJSON_AddItemToArray(en, c)) {
			cJSON_Delete(c);
			oom = true;
		}
	}
	int idx = 0;
	for (const cJSON *u = cJSON_IsArray(uen) ? uen->child : NULL; u; u = u->next, idx++) {
		if (replaced[idx])
			continue;
		cJSON *c = cJSON_Duplicate(u, 1);
		if (!c || !cJSON_AddItemToArray(en, c)) {
			cJSON_Delete(c);
			oom = true;
		}
	}
	free(replaced);
	if (oom) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}
