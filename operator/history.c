/* The ConfigMap's profile-hash history (see history.h). */
#include "operator/history.h"

#include <string.h>

#include "kube/object.h"

/* {"<schedulerName>": "<rendered hash>"} of the profiles in plan's configuration. */
static cJSON *profiles_of(const struct op_plan *plan)
{
	cJSON *m = cJSON_CreateObject();
	if (!m)
		return NULL;
	for (int i = 0; i < plan->n; i++) {
		const struct op_profile_result *r = &plan->profiles[i];
		if (r->source == OP_SOURCE_NONE || !r->rendered_scheduler_name || !r->rendered_hash[0])
			continue;
		if (!cJSON_AddStringToObject(m, r->rendered_scheduler_name, r->rendered_hash)) {
			cJSON_Delete(m);
			return NULL;
		}
	}
	return m;
}

/* About the bytes e adds to the compact JSON: "key":{"name":"hash",...}, */
static size_t entry_bytes(const cJSON *e)
{
	size_t n = strlen(e->string) + 6;
	const cJSON *v;
	cJSON_ArrayForEach(v, e)
		n += strlen(v->string) + strlen(v->valuestring) + 6;
	return n;
}

/* A history entry worth keeping: an object of strings. */
static bool valid_entry(const cJSON *e)
{
	if (!cJSON_IsObject(e) || !e->string)
		return false;
	const cJSON *v;
	cJSON_ArrayForEach(v, e)
		if (!cJSON_IsString(v))
			return false;
	return true;
}

cJSON *op_history_update(const char *old, const struct op_plan *plan)
{
	cJSON *prev = old ? kube_json_parse(old, strlen(old), NULL) : NULL;
	cJSON *out = cJSON_CreateObject();
	if (!out)
		goto fail;
	int n = 0;
	size_t bytes = 2;
	if (plan && plan->config_yaml && plan->config_hash[0]) {
		cJSON *cur = profiles_of(plan);
		if (!cur || !cJSON_AddItemToObject(out, plan->config_hash, cur)) {
			cJSON_Delete(cur);
			goto fail;
		}
		bytes += entry_bytes(cur);
		n++;
	}
	if (cJSON_IsObject(prev)) {
		for (cJSON *e = prev->child; e && n < OP_HISTORY_MAX; e = e->next) {
			if (!valid_entry(e) || cJSON_GetObjectItemCaseSensitive(out, e->string))
				continue;
			if ((bytes += entry_bytes(e)) > OP_HISTORY_MAX_BYTES)
				break;
			cJSON *dup = cJSON_Duplicate(e, 1);
			if (!dup || !cJSON_AddItemToObject(out, e->string, dup)) {
				cJSON_Delete(dup);
				goto fail;
			}
			n++;
		}
	}
	cJSON_Delete(prev);
	return out;
fail:
	cJSON_Delete(prev);
	cJSON_Delete(out);
	return NULL;
}

int op_history_lookup(const cJSON *history, const char *config_hash, const char *scheduler_name, const char **out)
{
	*out = NULL;
	if (!history || !config_hash || !scheduler_name)
		return -1;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(history, config_hash);
	if (!valid_entry(e))
		return -1;
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, scheduler_name);
	if (!cJSON_IsString(h))
		return 0;
	*out = h->valuestring;
	return 1;
}
