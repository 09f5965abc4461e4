/* The profile field `decisionRecords` (schedkit extension, docs/explain.md): whether the
 * scheduler keeps a decision record of each attempt of the profile's pods, and whether it writes
 * the result annotations on the pod. Strictly decoded like the rest of the profile. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/config/config.h"

int sk_records_config_decode(const cJSON *obj, const char *path, struct sk_records_config *out, struct sk_errors *e)
{
	static const char *const fields[] = { "enabled", "annotations", NULL };
	memset(out, 0, sizeof *out);
	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", path);
		return -1;
	}
	int rc = sk_json_check_object(obj, path, fields, false, e);
	bool present = false;
	rc |= sk_json_bool(obj, "enabled", path, &out->enabled, &present, e);
	rc |= sk_json_bool(obj, "annotations", path, &out->annotations, &present, e);
	out->given = true;
	return rc ? -1 : 0;
}

cJSON *sk_records_config_json(const struct sk_records_config *c)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddBoolToObject(o, "enabled", c->enabled) ||
	    !cJSON_AddBoolToObject(o, "annotations", c->annotations)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
