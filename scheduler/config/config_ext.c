/* What --validate says about schedkit extensions, and the redaction of extender TLS secrets in
 * the configuration's JSON form (config.h). */
#include <stdio.h>
#include <string.h>

#include "scheduler/config/config.h"

#define REDACTED "--- REDACTED ---"

void sk_config_note_extensions(const struct sk_config *cfg, FILE *out)
{
	for (int p = 0; p < cfg->nprofiles; p++) {
		const cJSON *ext = cfg->profiles[p].extenders;
		if (!cJSON_IsArray(ext) || cJSON_GetArraySize(ext) == 0)
			continue;
		fprintf(out,
			"note: profiles[%d].extenders (profile \"%s\", %d extender%s): a schedkit extension (the extenders "
			"apply to this profile only); kube-scheduler cannot load this file\n",
			p, cfg->profiles[p].scheduler_name, cJSON_GetArraySize(ext), cJSON_GetArraySize(ext) == 1 ? "" : "s");
	}
}

static void redact_list(cJSON *list)
{
	static const char *const secret[] = { "keyData", "certData" };
	if (!cJSON_IsArray(list))
		return;
	cJSON *e;
	cJSON_ArrayForEach(e, list)
	{
		cJSON *tls = cJSON_GetObjectItemCaseSensitive(e, "tlsConfig");
		if (!cJSON_IsObject(tls))
			continue;
		for (int k = 0; k < 2; k++) {
			cJSON *v = cJSON_GetObjectItemCaseSensitive(tls, secret[k]);
			if (!cJSON_IsString(v) || !*v->valuestring)
				continue;
			cJSON *r = cJSON_CreateString(REDACTED);
			if (!r || !cJSON_ReplaceItemInObjectCaseSensitive(tls, secret[k], r)) {
				cJSON_Delete(r);
				cJSON_DeleteItemFromObjectCaseSensitive(tls, secret[k]); /* never the secret */
			}
		}
	}
}

void sk_config_redact_secrets(cJSON *cc)
{
	if (!cc)
		return;
	redact_list(cJSON_GetObjectItemCaseSensitive(cc, "extenders"));
	cJSON *profiles = cJSON_GetObjectItemCaseSensitive(cc, "profiles"), *p;
	if (!cJSON_IsArray(profiles))
		return;
	cJSON_ArrayForEach(p, profiles)
	{
		redact_list(cJSON_GetObjectItemCaseSensitive(p, "extenders"));
	}
}
