/* SchedulerProfile.spec.legacyPolicy and the upstream provider names rendered through the
 * scheduler's legacy translation (operator/legacy.h): the same code `--policy-config-file` and
 * `schedkit-scheduler convert` run, so the operator cannot translate differently. */
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "operator/extender_tls.h"
#include "operator/legacy.h"
#include "operator/render.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"

int op_is_upstream_provider(const char *provider)
{
	for (int i = 0; provider && sk_provider_names[i]; i++)
		if (!strcmp(provider, sk_provider_names[i]))
			return 1;
	return 0;
}

static const cJSON *present(const cJSON *spec, const char *k)
{
	const cJSON *v = spec ? cJSON_GetObjectItemCaseSensitive(spec, k) : NULL;
	return v && !cJSON_IsNull(v) ? v : NULL;
}

static int join_errors(char **err, const char *prefix, const struct sk_errors *e)
{
	char *j = sk_errors_join(e, "; ");
	kube_errf(err, "%s%s", prefix, j ? j : "invalid");
	free(j);
	return -1;
}

/* spec.plugins (v1 deltas) merged into the translated lists, point by point. */
static int merge_user_plugins(cJSON *profile, const cJSON *user, char **err)
{
	if (!user)
		return 0;
	if (!cJSON_IsObject(user))
		return kube_errf(err, "spec.plugins: Invalid value: must be an object");
	if (present(user, "multiPoint"))
		return kube_errf(err, "spec.plugins.multiPoint: Forbidden: an upstream provider lists every extension "
				      "point; configure the points themselves");
	cJSON *plugins = cJSON_GetObjectItemCaseSensitive(profile, "plugins");
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		const char *field = sk_ext_point_field((enum sk_ext_point)ep);
		const cJSON *u = present(user, field);
		if (!u)
			continue;
		cJSON *m = sk_plugin_set_merge(cJSON_GetObjectItemCaseSensitive(plugins, field), u);
		if (!m)
			return kube_errf(err, "out of memory");
		if (cJSON_GetObjectItemCaseSensitive(plugins, field))
			cJSON_ReplaceItemInObjectCaseSensitive(plugins, field, m);
		else
			cJSON_AddItemToObject(plugins, field, m);
	}
	for (const cJSON *k = user->child; k; k = k->next) {
		bool known = false;
		for (int ep = 0; ep < SK_EP_COUNT && !known; ep++)
			known = !strcmp(k->string, sk_ext_point_field((enum sk_ext_point)ep));
		if (!known)
			return kube_errf(err, "unknown field \"spec.plugins.%s\"", k->string);
	}
	return 0;
}

/* spec.pluginConfig over the translated entries: a user entry's args merged over the entry of the
 * same name, field by field, or appended. */
static int merge_user_config(cJSON *profile, const cJSON *user, char **err)
{
	if (!user)
		return 0;
	if (!cJSON_IsArray(user))
		return kube_errf(err, "spec.pluginConfig: Invalid value: must be an array");
	cJSON *pc = cJSON_GetObjectItemCaseSensitive(profile, "pluginConfig");
	if (!pc && !(pc = cJSON_AddArrayToObject(profile, "pluginConfig")))
		return kube_errf(err, "out of memory");
	for (const cJSON *u = user->child; u; u = u->next) {
		const char *n = kube_obj_get_string(u, "name");
		cJSON *mine = NULL;
		for (cJSON *e = pc->child; n && e && !mine; e = e->next)
			if (!strcmp(kube_obj_get_string(e, "name") ? kube_obj_get_string(e, "name") : "", n))
				mine = e;
		const cJSON *ua = cJSON_GetObjectItemCaseSensitive(u, "args");
		if (mine && cJSON_IsObject(ua)) {
			cJSON *m = op_json_merge(cJSON_GetObjectItemCaseSensitive(mine, "args"), ua);
			if (!m)
				return kube_errf(err, "out of memory");
			if (cJSON_GetObjectItemCaseSensitive(mine, "args"))
				cJSON_ReplaceItemInObjectCaseSensitive(mine, "args", m);
			else
				cJSON_AddItemToObject(mine, "args", m);
			continue;
		}
		cJSON *c = cJSON_Duplicate(u, 1);
		if (!c || !cJSON_AddItemToArray(pc, c)) {
			cJSON_Delete(c);
			return kube_errf(err, "out of memory");
		}
	}
	return 0;
}

/* {"<point>": ["Name", "Name:weight"]} of a v1 profile made by the translation. */
static cJSON *plugin_summary(const cJSON *profile)
{
	cJSON *out = cJSON_CreateObject();
	const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(profile, "plugins");
	for (int ep = 0; out && ep < SK_EP_COUNT; ep++) {
		const char *field = sk_ext_point_field((enum sk_ext_point)ep);
		const cJSON *en = kube_obj_get(cJSON_GetObjectItemCaseSensitive(plugins, field), "enabled");
		if (ep == SK_EP_QUEUE_SORT && !cJSON_GetArraySize(en)) /* the translation keeps it in multiPoint */
			en = kube_obj_get(cJSON_GetObjectItemCaseSensitive(plugins, "multiPoint"), "enabled");
		if (!cJSON_IsArray(en) || !cJSON_GetArraySize(en))
			continue;
		cJSON *arr = cJSON_AddArrayToObject(out, field);
		for (const cJSON *e = en->child; arr && e; e = e->next) {
			const char *n = kube_obj_get_string(e, "name");
			int64_t w = 0;
			char buf[300];
			if (ep == SK_EP_SCORE && kube_json_get_int64(cJSON_GetObjectItemCaseSensitive(e, "weight"), &w) == 0)
				snprintf(buf, sizeof buf, "%s:%lld", n ? n : "", (long long)w);
			else
				snprintf(buf, sizeof buf, "%s", n ? n : "");
			cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
		}
	}
	return out;
}

static cJSON *translation_summary(const char *source, const cJSON *profile, const struct sk_errors *notes)
{
	cJSON *t = cJSON_CreateObject();
	if (!t || !cJSON_AddStringToObject(t, "source", source) || !cJSON_AddItemToObject(t, "plugins", plugin_summary(profile)))
		goto oom;
	if (notes->n) {
		cJSON *arr = kube_json_string_array((const char *const *)notes->msgs, notes->n);
		if (!arr || !cJSON_AddItemToObject(t, "notes", arr))
			goto oom;
	}
	return t;
oom:
	cJSON_Delete(t);
	return NULL;
}

/* The Policy's translation: legacy profile -> v1, plus its extenders. */
static int translate_policy(const cJSON *spec, const cJSON *legacy, cJSON **v1, cJSON **ext, struct sk_errors *notes,
			    char **err)
{
	static const char *const alone[] = { "plugins", "pluginConfig", NULL };
	for (int i = 0; alone[i]; i++)
		if (present(spec, alone[i]))
			return kube_errf(err, "spec.%s: Forbidden: cannot be combined with spec.legacyPolicy (the Policy "
					      "defines every plugin, as upstream refused profiles beside a Policy)", alone[i]);
	const char *provider = kube_obj_get_string(spec, "provider");
	if (provider && *provider && strcmp(provider, "Default"))
		return kube_errf(err, "spec.provider: Forbidden: cannot be combined with spec.legacyPolicy (the Policy "
				      "defines every plugin)");
	if (!cJSON_IsObject(legacy))
		return kube_errf(err, "spec.legacyPolicy: Invalid value: must be an object (a Policy)");
	struct sk_errors e = { 0 };
	cJSON *lp = NULL;
	bool all = false;
	int rc = -1;
	if (sk_policy_translate(legacy, &lp, ext, &all, notes, &e) == 0 && (*v1 = sk_legacy_profile_to_v1(lp, notes, &e)))
		rc = 0;
	else
		join_errors(err, "spec.legacyPolicy.", &e);
	cJSON_Delete(lp);
	sk_errors_free(&e);
	/* The profile goes into a ConfigMap: no private key may ride along (docs/operator.md). */
	int i = 0;
	for (const cJSON *x = rc == 0 && *ext ? (*ext)->child : NULL; x; x = x->next, i++) {
		const char *key = kube_obj_get_string(x, "tlsConfig.keyData");
		if (key && *key) {
			cJSON_Delete(*v1);
			*v1 = NULL;
			return kube_errf(err, "spec.legacyPolicy.extenders[%d].tlsConfig.keyData: Forbidden: a private key would be "
					      "written into the scheduler's ConfigMap; give the extender in spec.extenders with its "
					      "key in a Secret", i);
		}
	}
	if (rc == 0 && *ext && present(spec, "extenders")) {
		cJSON_Delete(*v1);
		*v1 = NULL;
		return kube_errf(err, "spec.extenders: Forbidden: the legacyPolicy has extenders too; keep one list");
	}
	return rc;
}

int op_render_legacy(const cJSON *spec, const char *scheduler_name, cJSON **profile, cJSON **translation, char **err)
{
	*profile = NULL;
	if (translation)
		*translation = NULL;
	const cJSON *legacy = present(spec, "legacyPolicy");
	const char *provider = kube_obj_get_string(spec, "provider");
	bool upstream = op_is_upstream_provider(provider);
	if (!legacy && !upstream)
		return 0;
	struct sk_errors notes = { 0 };
	cJSON *v1 = NULL, *ext = NULL;
	char source[64];
	if (legacy) {
		snprintf(source, sizeof source, "legacyPolicy");
		if (translate_policy(spec, legacy, &v1, &ext, &notes, err) < 0)
			goto fail;
	} else {
		snprintf(source, sizeof source, "provider %s", provider);
		struct sk_errors e = { 0 };
		cJSON *lp = sk_provider_profile(provider);
		v1 = lp ? sk_legacy_profile_to_v1(lp, &notes, &e) : NULL;
		cJSON_Delete(lp);
		sk_errors_free(&e);
		if (!v1) {
			kube_errf(err, "out of memory");
			goto fail;
		}
		if (merge_user_plugins(v1, present(spec, "plugins"), err) < 0 ||
		    merge_user_config(v1, present(spec, "pluginConfig"), err) < 0)
			goto fail;
	}
	/* the SchedulerProfile's name and its other fields, in op_render_profile's order */
	cJSON_ReplaceItemInObjectCaseSensitive(v1, "schedulerName", cJSON_CreateString(scheduler_name));
	const cJSON *pct = present(spec, "percentageOfNodesToScore");
	cJSON *out = cJSON_CreateObject();
	if (!out || !cJSON_AddStringToObject(out, "schedulerName", scheduler_name) ||
	    (pct && !cJSON_AddItemToObject(out, "percentageOfNodesToScore", cJSON_Duplicate(pct, 1))) ||
	    !cJSON_AddItemToObject(out, "plugins", cJSON_DetachItemFromObjectCaseSensitive(v1, "plugins"))) {
		cJSON_Delete(out);
		kube_errf(err, "out of memory");
		goto fail;
	}
	cJSON *pc = cJSON_DetachItemFromObjectCaseSensitive(v1, "pluginConfig");
	if (pc)
		cJSON_AddItemToObject(out, "pluginConfig", pc);
	const cJSON *uext = present(spec, "extenders");
	if (ext) {
		cJSON_AddItemToObject(out, "extenders", ext); /* the profile's own extenders (docs/operator.md) */
	} else if (uext) { /* TLS files from Secrets, no inline key (operator/extender_tls.h) */
		cJSON *r = NULL;
		if (op_render_extenders(uext, &r, err) != 0) {
			cJSON_Delete(out);
			goto fail;
		}
		cJSON_AddItemToObject(out, "extenders", r);
	}
	ext = NULL;
	if (translation && !(*translation = translation_summary(source, out, &notes))) {
		cJSON_Delete(out);
		kube_errf(err, "out of memory");
		goto fail;
	}
	cJSON_Delete(v1);
	sk_errors_free(&notes);
	*profile = out;
	return 1;
fail:
	cJSON_Delete(v1);
	cJSON_Delete(ext);
	sk_errors_free(&notes);
	return -1;
}
