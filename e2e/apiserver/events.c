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

/* The mirror of from, taking its parts: from (the tree just committed, about to be freed) is
 * left without them. Moving rather than copying yields the same object for less work. */
static cJSON *convert(cJSON *from, bool to_new)
{
	cJSON *out = cJSON_CreateObject();
	if (!out)
		return NULL;
	cJSON_AddStringToObject(out, "kind", "Event");
	cJSON_AddStringToObject(out, "apiVersion", to_new ? "events.k8s.io/v1" : "v1");
	cJSON *md = cJSON_GetObjectItemCaseSensitive(from, "metadata");
	cJSON *nmd = md ? cJSON_DetachItemViaPointer(from, md) : cJSON_CreateObject();
	if (!nmd) {
		cJSON_Delete(out);
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(nmd, "resourceVersion");
	cJSON_AddItemToObject(out, "metadata", nmd);
	/* read before the loop moves it into out (as reportingComponent) */
	const cJSON *rc = to_new ? NULL : cJSON_GetObjectItemCaseSensitive(from, "reportingController");
	for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++) {
		const char *src = MAP[i][to_new ? 0 : 1], *dst = MAP[i][to_new ? 1 : 0];
		cJSON *v = cJSON_GetObjectItemCaseSensitive(from, src);
		if (v && !cJSON_IsNull(v))
			cJSON_AddItemToObject(out, dst, cJSON_DetachItemViaPointer(from, v));
	}
	if (!to_new && cJSON_GetObjectItemCaseSensitive(out, "source") == NULL) {
		/* kubectl describe prints From: source.component */
		if (cJSON_IsString(rc)) {
			cJSON *src = cJSON_AddObjectToObject(out, "source");
			if (src)
				cJSON_AddStringToObject(src, "component", rc->valuestring);
		}
	}
	return out;
}

void apis_events_mirror(struct apis_server *s, struct apis_rdef *rd, const struct apis_obj *o, cJSON *tree,
			bool removed)
{
	if (s->mirroring || (rd != s->rd_events && rd != s->rd_events2) || !s->rd_events || !s->rd_events2) {
		cJSON_Delete(tree);
		return;
	}
	struct apis_rdef *other = rd == s->rd_events ? s->rd_events2 : s->rd_events;
	s->mirroring = true;
	struct apis_obj *cur = apis_store_get(other, o->ns, o->name);
	if (removed) {
		cJSON_Delete(tree);
		if (cur)
			apis_store_remove(s, other, cur, NULL);
	} else {
		cJSON *from = tree ? tree : apis_obj_parse(o);
		cJSON *conv = from ? convert(from, rd == s->rd_events) : NULL;
		cJSON_Delete(from);
		if (conv)
			apis_store_commit(s, other, conv, cur);
	}
	s->mirroring = false;
}
