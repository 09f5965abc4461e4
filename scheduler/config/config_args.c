/* Args of the upstream default plugins that are not built (sk_unavailable_default_plugins; since
 * the volume plugins, only DynamicResources):
 * each gets a stub descriptor with only a name and an args decoder, so configs naming them are
 * accepted, defaulted and validated exactly as upstream, and shown in sk_config_to_json. The
 * decoded args are kept as defaulted JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/config/config.h"

static void json_args_free(void *p) { cJSON_Delete(p); }
static cJSON *json_args_encode(const void *p) { return cJSON_Duplicate(p, 1); }

static char *child(const char *path, const char *f) { return sk_path_child(path, f); }

/* ---------- DynamicResourcesArgs (v1.34: DRASchedulerFilterTimeout beta, on) ---------- */
static int dynamic_resources_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "filterTimeout", "bindingTimeout", NULL };
	char *ft = NULL;
	int64_t ms = 10000;
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "DynamicResourcesArgs", path, e) < 0 ||
	    sk_json_string(json, "filterTimeout", path, &ft, NULL, e) < 0) {
		free(ft);
		return -1;
	}
	char *fp = child(path, "filterTimeout");
	if (ft && kube_duration_parse_ms(ft, &ms) < 0) {
		sk_err_invalid_str(e, fp, ft, "invalid duration");
		rc = -1;
	} else if (ms < 0) {
		sk_err_invalid_str(e, fp, ft, "must be zero or positive");
		rc = -1;
	}
	free(fp);
	const cJSON *bt = json ? cJSON_GetObjectItemCaseSensitive(json, "bindingTimeout") : NULL;
	if (bt && !cJSON_IsNull(bt)) {
		char *bp = child(path, "bindingTimeout");
		sk_err_forbidden(e, bp, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled");
		free(bp);
		rc = -1;
	}
	free(ft);
	if (rc < 0)
		return -1;
	char buf[48];
	kube_duration_format_ms(ms, buf, sizeof buf);
	cJSON *o = sk_args_json_new("DynamicResourcesArgs");
	if (!o || !cJSON_AddStringToObject(o, "filterTimeout", buf)) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

#define STUB(var, plugin_name, kind, decode)                                                                           \
	static const struct sk_plugin_desc var = {                                                                      \
		SK_PLUGIN_HEADER,                                                                  \
		.name = plugin_name,                                                                                   \
		.args_kind = kind,                                                                                     \
		.args_decode = decode,                                                                                 \
		.args_encode = (kind) ? json_args_encode : NULL,                                                       \
		.args_free = (kind) ? json_args_free : NULL,                                                           \
	}

STUB(stub_dynamic_resources, "DynamicResources", "DynamicResourcesArgs", dynamic_resources_decode);

static const struct sk_plugin_desc *const stubs[] = {
	&stub_dynamic_resources,
	NULL,
};

const struct sk_plugin_desc *sk_unavailable_plugin_desc(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; stubs[i]; i++)
		if (!strcmp(stubs[i]->name, name))
			return sk_registry_lookup(name) ? NULL : stubs[i]; /* a real build wins */
	return NULL;
}
