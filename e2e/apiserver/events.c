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

bool apis_events_mirror_bytes = true;

/* A piece of the mirror's JSON. */
struct piece {
	const char *p;
	size_t n;
};

#define LIT(s) ((struct piece){ (s), sizeof(s) - 1 })

/* The mirror of o (an Event of the other API, tree its content) as the bytes convert's tree
 * prints once stored with the resourceVersion rv: each member convert moves is printed as it was
 * in o's JSON, cJSON's compact print, so its bytes are copied; metadata is o's less its
 * resourceVersion, which serialize then appends at its end. *fields gets other's index fields,
 * read from tree at the paths convert moves them from. NULL (the caller converts the tree) on
 * OOM or where the bytes could differ: a second resourceVersion in metadata (serialize would
 * replace it in place). */
static char *convert_bytes(const struct apis_obj *o, const cJSON *tree, const struct apis_rdef *other, bool to_new,
			   uint64_t rv, size_t *len, char ***fields)
{
	enum { NMAP = sizeof MAP / sizeof MAP[0] };
	const char *keys[NMAP + 1];
	size_t at[NMAP + 1], vl[NMAP + 1];
	for (size_t i = 0; i < NMAP; i++)
		keys[i] = MAP[i][to_new ? 0 : 1];
	keys[NMAP] = "metadata";
	const char *j = o->json;
	if (!apis_json_members(j, o->json_len, keys, NMAP + 1, at, vl) || !vl[NMAP] || j[at[NMAP]] != '{')
		return NULL;
	/* metadata without its (first) resourceVersion member and the comma next to it */
	const char *md = j + at[NMAP];
	size_t mdl = vl[NMAP], rat, rl;
	if (!apis_json_member(md, mdl, "resourceVersion", &rat, &rl))
		return NULL;
	static const char rvkey[] = "\"resourceVersion\":";
	size_t cut_at = rat - (sizeof rvkey - 1), cut_end = rat + rl;
	if (md[cut_at - 1] == ',')
		cut_at--;
	else if (md[cut_end] == ',')
		cut_end++;
	size_t rest_at, rest_len; /* a second one: serialize would replace it where it is */
	char *mdcut = malloc(mdl);
	if (!mdcut)
		return NULL;
	memcpy(mdcut, md, cut_at);
	memcpy(mdcut + cut_at, md + cut_end, mdl - cut_end);
	size_t mdcutl = cut_at + mdl - cut_end;
	if (apis_json_member(mdcut, mdcutl, "resourceVersion", &rest_at, &rest_len)) {
		free(mdcut);
		return NULL;
	}
	char rvs[48];
	int rvn = snprintf(rvs, sizeof rvs, "%s\"resourceVersion\":\"%llu\"}", mdcutl > 2 ? "," : "",
			   (unsigned long long)rv);
	struct piece pc[4 * NMAP + 8];
	int np = 0;
	pc[np++] = to_new ? LIT("{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\",\"metadata\":")
			  : LIT("{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":");
	pc[np++] = (struct piece){ mdcut, mdcutl - 1 };
	pc[np++] = (struct piece){ rvs, (size_t)rvn };
	bool has_source = false;
	for (size_t i = 0; i < NMAP; i++) {
		if (!vl[i] || (vl[i] == 4 && !memcmp(j + at[i], "null", 4)))
			continue;
		const char *dst = MAP[i][to_new ? 1 : 0];
		has_source |= !to_new && !strcmp(dst, "source");
		pc[np++] = LIT(",\"");
		pc[np++] = (struct piece){ dst, strlen(dst) };
		pc[np++] = LIT("\":");
		pc[np++] = (struct piece){ j + at[i], vl[i] };
	}
	if (!to_new && !has_source) {
		/* kubectl describe prints From: source.component (convert's reportingController) */
		for (size_t i = 0; i < NMAP; i++)
			if (!strcmp(keys[i], "reportingController") && vl[i] && j[at[i]] == '"') {
				pc[np++] = LIT(",\"source\":{\"component\":");
				pc[np++] = (struct piece){ j + at[i], vl[i] };
				pc[np++] = LIT("}");
			}
	}
	pc[np++] = LIT("}");
	size_t n = 0;
	for (int i = 0; i < np; i++)
		n += pc[i].n;
	char *out = malloc(n + 1);
	char **fv = other->nfields ? calloc((size_t)other->nfields, sizeof *fv) : NULL;
	/* other's fields at tree's paths: the first segment renamed back through MAP */
	const char *paths[16];
	char pathbuf[16][128];
	bool ok = out && (fv || !other->nfields) && other->nfields <= 16;
	for (int f = 0; ok && f < other->nfields; f++) {
		const char *fp = other->fields[f], *dot = strchr(fp, '.');
		size_t sl = dot ? (size_t)(dot - fp) : strlen(fp);
		const char *src = NULL;
		for (size_t i = 0; i < NMAP && !src; i++)
			if (strlen(MAP[i][to_new ? 1 : 0]) == sl && !memcmp(MAP[i][to_new ? 1 : 0], fp, sl))
				src = MAP[i][to_new ? 0 : 1];
		size_t srcl = src ? strlen(src) : 0, restl = strlen(fp + sl);
		ok = src && srcl + restl < sizeof pathbuf[f];
		if (ok) {
			memcpy(pathbuf[f], src, srcl);
			memcpy(pathbuf[f] + srcl, fp + sl, restl + 1);
		}
		paths[f] = pathbuf[f];
	}
	if (!ok) {
		free(out);
		free(fv);
		free(mdcut);
		return NULL;
	}
	apis_field_values(tree, paths, other->nfields, fv);
	size_t to = 0;
	for (int i = 0; i < np; i++) {
		memcpy(out + to, pc[i].p, pc[i].n);
		to += pc[i].n;
	}
	out[n] = 0;
	free(mdcut);
	*len = n;
	*fields = fv;
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
	} else if (apis_events_mirror_bytes && tree) {
		size_t len;
		char **fields = NULL;
		char *json = convert_bytes(o, tree, other, rd == s->rd_events, s->rv + 1, &len, &fields);
		cJSON *conv = json ? NULL : convert(tree, rd == s->rd_events);
		cJSON_Delete(tree);
		if (json)
			apis_store_commit_json(s, other, o, json, len, fields, cur);
		else if (conv)
			apis_store_commit(s, other, conv, cur);
	} else {
		cJSON *from = tree ? tree : apis_obj_parse(o);
		cJSON *conv = from ? convert(from, rd == s->rd_events) : NULL;
		cJSON_Delete(from);
		if (conv)
			apis_store_commit(s, other, conv, cur);
	}
	s->mirroring = false;
}
