/* events.c — one event, two APIs: core/v1 Events and events.k8s.io/v1 Events are kept as
 * mirrored objects (same namespace, name and uid), so an event written through either API is
 * readable, listable and watchable through the other, with upstream's field mapping
 * (message<->note, involvedObject<->regarding, count<->deprecatedCount, ...). Called from the
 * store's commit path with s->lock held for writing. */
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/internal.h"

/* core/v1 field, events.k8s.io/v1 field */
static const char *const MAP[][2] = {
	{ "involvedObject", "regarding" },
	{ "related", "related" },
	{ "reason", "reason" },
	{ "message", "note" },
	{ "type", "type" },
	{ "eventTime", "eventTime" },
	{ "series", "series" },
	{ "action", "action" },
	{ "reportingComponent", "reportingController" },
	{ "reportingInstance", "reportingInstance" },
	{ "source", "deprecatedSource" },
	{ "firstTimestamp", "deprecatedFirstTimestamp" },
	{ "lastTimestamp", "deprecatedLastTimestamp" },
	{ "count", "deprecatedCount" },
};

static cJSON *convert(const cJSON *from, bool to_new)
{
	cJSON *out = cJSON_CreateObject();
	if (!out)
		return NULL;
	cJSON_AddStringToObject(out, "kind", "Event");
	cJSON_AddStringToObject(out, "apiVersion", to_new ? "events.k8s.io/v1" : "v1");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(from, "metadata");
	cJSON *nmd = md ? cJSON_Duplicate(md, true) : cJSON_CreateObject();
	if (!nmd) {
		cJSON_Delete(out);
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(nmd, "resourceVersion");
	cJSON_AddItemToObject(out, "metadata", nmd);
	for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++) {
		const char *src = MAP[i][to_new ? 0 : 1], *dst = MAP[i][to_new ? 1 : 0];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, src);
		if (v && !cJSON_IsNull(v))
			cJSON_AddItemToObject(out, dst, cJSON_Duplicate(v, true));
	}
	if (!to_new && cJSON_GetObjectItemCaseSensitive(out, "source") == NULL) {
		/* kubectl describe prints From: source.component */
		const cJSON *rc = cJSON_GetObjectItemCaseSensitive(from, "reportingController");
		if (cJSON_IsString(rc)) {
			cJSON *src = cJSON_AddObjectToObject(out, "source");
			if (src)
				cJSON_AddStringToObject(src, "component", rc->valuestring);
		}
	}
	return out;
}

void apis_events_mirror(struct apis_server *s, struct apis_rdef *rd, const struct apis_obj *o, bool removed)
{
	if (s->mirroring || (rd != s->rd_events && rd != s->rd_events2) || !s->rd_events || !s->rd_events2)
		return;
	struct apis_rdef *other = rd == s->rd_events ? s->rd_events2 : s->rd_events;
	s->mirroring = true;
	struct apis_obj *cur = apis_store_get(other, o->ns, o->name);
	if (removed) {
		if (cur)
			apis_store_remove(s, other, cur, NULL);
	} else {
		cJSON *from = apis_obj_parse(o);
		cJSON *conv = from ? convert(from, rd == s->rd_events) : NULL;
		cJSON_Delete(from);
		if (conv)
			apis_store_commit(s, other, conv, cur);
	}
	s->mirroring = false;
}
