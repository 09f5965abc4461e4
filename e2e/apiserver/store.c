/* store.c — schedkit-apiserver's object store: each object kept once as its serialized JSON
 * plus the fields that index it (namespace, name, labels, field-selector values), one hash
 * table per resource, a global resourceVersion counter, and the bounded watch ring whose
 * events share the stored bytes with every watcher. Also small utilities (time, uuid, base64). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "e2e/apiserver/internal.h"

struct obj_entry {
	struct apis_obj *obj;
	struct obj_entry *next;
};

/* ---------------- utils ---------------- */

void apis_now_rfc3339(char buf[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void apis_now_micro(char buf[40])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char b[32];
	strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 40, "%.20s.%06dZ", b, (int)(ts.tv_nsec / 1000) % 1000000);
}

uint64_t apis_rand_next(uint64_t *st)
{
	/* splitmix64: deterministic from the seed, good enough for names and faults */
	uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void apis_uuid(char out[37])
{
	unsigned char b[16];
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		static _Thread_local uint64_t st;
		if (!st)
			st = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&st;
		uint64_t a = apis_rand_next(&st), c = apis_rand_next(&st);
		memcpy(b, &a, 8);
		memcpy(b + 8, &c, 8);
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	/* 8-4-4-4-12 lowercase hex digits (one uuid per create: no snprintf of 16 arguments) */
	static const char hex[] = "0123456789abcdef";
	char *p = out;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 15];
	}
	*p = 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *apis_b64(const unsigned char *p, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		out[j++] = B64[(v >> 18) & 63];
		out[j++] = B64[(v >> 12) & 63];
		out[j++] = i + 1 < n ? B64[(v >> 6) & 63] : '=';
		out[j++] = i + 2 < n ? B64[v & 63] : '=';
	}
	out[j] = 0;
	return out;
}

unsigned char *apis_unb64(const char *s, size_t *n)
{
	size_t len = strlen(s);
	unsigned char *out = malloc(len / 4 * 3 + 4);
	if (!out)
		return NULL;
	unsigned v = 0;
	int bits = 0;
	size_t j = 0;
	for (size_t i = 0; i < len; i++) {
		const char *q = s[i] ? strchr(B64, s[i]) : NULL;
		if (s[i] == '=')
			break;
		if (!q) {
			free(out);
			return NULL;
		}
		v = (v << 6) | (unsigned)(q - B64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[j++] = (unsigned char)((v >> bits) & 0xff);
		}
	}
	out[j] = 0;
	*n = j;
	return out;
}

/* ---------------- objects and events ---------------- */

void apis_obj_ref(struct apis_obj *o)
{
	if (o)
		atomic_fetch_add(&o->refs, 1);
}

void apis_obj_unref(struct apis_obj *o)
{
	if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
		return;
	free(o->key);
	free(o->nsname);
	free(o->uid);
	free(o->json);
	cJSON_Delete(o->labels);
	if (o->fields) {
		for (int i = 0; i < o->rd->nfields; i++)
			free(o->fields[i]);
		free(o->fields);
	}
	free(o);
}

void apis_event_unref(struct apis_event *e)
{
	if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	apis_obj_unref(e->obj);
	apis_obj_unref(e->prev);
	free(e);
}

cJSON *apis_obj_parse(const struct apis_obj *o)
{
	return cJSON_ParseWithLength(o->json, o->json_len);
}

/* Past the string whose opening quote is at p, or NULL at a truncation: the next quote after an
 * even run of backslashes (each pair one escaped backslash), found with memchr. */
static const char *json_skip_string(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			return NULL;
		size_t bs = 0;
		while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
			bs++;
		if (bs % 2 == 0)
			return q + 1;
		p = q + 1;
	}
	return NULL;
}

/* Past the JSON value at p (valid JSON, as the store keeps it), or NULL at a truncation. */
static const char *json_skip(const char *p, const char *end)
{
	if (p >= end)
		return NULL;
	if (*p == '"')
		return json_skip_string(p, end);
	if (*p == '{' || *p == '[') {
		/* 1: a string starts, 2: nesting opens, 3: closes; 0: any other byte */
		static const unsigned char cls[256] = { ['"'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 3, [']'] = 3 };
		int depth = 0;
		for (; p < end; p++) {
			unsigned char c = cls[(unsigned char)*p];
			if (!c)
				continue;
			if (c == 1) {
				p = json_skip_string(p, end);
				if (!p)
					return NULL;
				p--;
			} else if (c == 2) {
				depth++;
			} else if (--depth == 0) {
				return p + 1;
			}
		}
		return NULL;
	}
	while (p < end && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

bool apis_json_member(const char *json, size_t len, const char *key, size_t *at, size_t *vlen)
{
	const char *p = json, *end = json + len;
	size_t kl = strlen(key);
	if (p >= end || *p != '{')
		return false;
	p++;
	while (p < end && *p == '"') {
		const char *k = p;
		p = json_skip(p, end);
		if (!p || p >= end || *p != ':')
			return false;
		bool match = (size_t)(p - k) == kl + 2 && !memcmp(k + 1, key, kl);
		const char *v = ++p;
		p = json_skip(p, end);
		if (!p)
			return false;
		if (match) {
			*at = (size_t)(v - json);
			*vlen = (size_t)(p - v);
			return true;
		}
		if (p < end && *p == ',')
			p++;
	}
	return false;
}

bool apis_json_members(const char *json, size_t len, const char *const *keys, size_t n, size_t *at, size_t *vlen)
{
	const char *p = json, *end = json + len;
	size_t left = n;
	for (size_t i = 0; i < n; i++)
		vlen[i] = 0;
	if (p >= end || *p != '{')
		return false;
	p++;
	while (left && p < end && *p == '"') {
		const char *k = p;
		p = json_skip(p, end);
		if (!p || p >= end || *p != ':')
			return false;
		size_t kl = (size_t)(p - k) - 2;
		const char *v = ++p;
		p = json_skip(p, end);
		if (!p)
			return false;
		for (size_t i = 0; i < n; i++)
			if (!vlen[i] && keys[i][0] == k[1] && !strncmp(k + 1, keys[i], kl) && keys[i][kl] == 0) {
				at[i] = (size_t)(v - json); /* the first member of the name, as apis_json_member */
				vlen[i] = (size_t)(p - v);
				left--;
				break;
			}
		if (p < end && *p == ',')
			p++;
	}
	return true;
}

/* The garbage collector's test for an owner waiting on its dependents (controllers.c gc_visit
 * reads the same two strings from the stored JSON). */
static bool obj_gc_waits(const struct apis_obj *o)
{
	return o->deleting && (strstr(o->json, "\"foregroundDeletion\"") || strstr(o->json, "\"orphan\""));
}

/* The member of o named path[0, n), as cJSON_GetObjectItemCaseSensitive finds it (the first). */
static const cJSON *member_n(const cJSON *o, const char *name, size_t n)
{
	for (const cJSON *c = o ? o->child : NULL; c; c = c->next)
		if (c->string && c->string[0] == name[0] && !strncmp(c->string, name, n) && !c->string[n])
			return c;
	return NULL;
}

/* The value at the dotted path path[0, len) under o; a segment of 128 bytes or more is never
 * found. */
static const cJSON *jget_n(const cJSON *o, const char *path, size_t len)
{
	while (o && len) {
		const char *dot = memchr(path, '.', len);
		size_t n = dot ? (size_t)(dot - path) : len;
		if (n >= 128)
			return NULL;
		o = member_n(o, path, n);
		path += n + (dot ? 1 : 0);
		len -= n + (dot ? 1 : 0);
	}
	return o;
}

static char *value_string(const cJSON *v)
{
	if (!v)
		return NULL;
	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsBool(v))
		return strdup(cJSON_IsTrue(v) ? "true" : "false");
	if (cJSON_IsNumber(v)) {
		char b[64];
		snprintf(b, sizeof b, "%.17g", v->valuedouble);
		return strdup(b);
	}
	return NULL;
}

static char *field_value(const cJSON *obj, const char *path)
{
	return value_string(jget_n(obj, path, strlen(path)));
}

/* A run of paths under the same parent (an Event's seven involvedObject.* fields) looks the
 * parent up once. */
void apis_field_values(const cJSON *obj, const char *const *paths, int n, char **fields)
{
	const char *prefix = NULL;
	size_t prefix_len = 0;
	const cJSON *parent = NULL;
	for (int i = 0; i < n; i++) {
		const char *f = paths[i], *dot = strrchr(f, '.');
		size_t pl = dot ? (size_t)(dot - f) : 0;
		if (!prefix || pl != prefix_len || memcmp(f, prefix, pl)) {
			parent = jget_n(obj, f, pl);
			prefix = f;
			prefix_len = pl;
		}
		const char *leaf = dot ? dot + 1 : f;
		fields[i] = value_string(parent ? jget_n(parent, leaf, strlen(leaf)) : NULL);
	}
}

const char *apis_obj_field(const void *ctx, const char *field)
{
	const struct apis_obj *o = ctx;
	if (!strcmp(field, "metadata.name"))
		return o->name;
	if (!strcmp(field, "metadata.namespace"))
		return o->ns;
	if (o->rd == NULL || !o->fields)
		return NULL;
	if (!strcmp(field, "spec.host"))
		field = "spec.nodeName";
	for (int i = 0; i < o->rd->nfields; i++)
		if (!strcmp(o->rd->fields[i], field))
			return o->fields[i];
	return NULL;
}

static struct apis_obj *obj_build(struct apis_rdef *rd, const cJSON *obj, uint64_t rv, char *json)
{
	struct apis_obj *o = calloc(1, sizeof *o);
	if (!o) {
		free(json);
		return NULL;
	}
	atomic_init(&o->refs, 1);
	o->rd = rd;
	o->rv = rv;
	o->json = json;
	o->json_len = strlen(json);
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
	if (!rd->namespaced || !ns)
		ns = "";
	if (!name)
		name = "";
	size_t nl = strlen(ns), ml = strlen(name);
	o->nsname = malloc(nl + ml + 2);
	o->key = malloc(nl + ml + 2);
	o->uid = strdup(uid ? uid : "");
	if (!o->nsname || !o->key || !o->uid)
		goto oom;
	memcpy(o->nsname, ns, nl + 1);
	memcpy(o->nsname + nl + 1, name, ml + 1);
	o->ns = o->nsname;
	o->name = o->nsname + nl + 1;
	memcpy(o->key, ns, nl);
	o->key[nl] = '/';
	memcpy(o->key + nl + 1, name, ml + 1);
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
	if (cJSON_IsObject(labels) && labels->child) {
		o->labels = cJSON_Duplicate(labels, true);
		if (!o->labels)
			goto oom;
	}
	if (rd->nfields) {
		o->fields = calloc((size_t)rd->nfields, sizeof *o->fields);
		if (!o->fields)
			goto oom;
		apis_field_values(obj, rd->fields, rd->nfields, o->fields);
	}
	o->deleting = cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp") != NULL;
	const cJSON *owners = cJSON_GetObjectItemCaseSensitive(md, "ownerReferences");
	o->has_owners = cJSON_IsArray(owners) && owners->child;
	o->gc_waits = obj_gc_waits(o);
	return o;
oom:
	apis_obj_unref(o);
	return NULL;
}

/* ---------------- tables ---------------- */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct obj_entry **table_slot(struct obj_table *t, const char *key)
{
	if (!t->nbuckets)
		return NULL;
	struct obj_entry **pp = &t->buckets[hash_str(key) & (t->nbuckets - 1)];
	while (*pp && strcmp((*pp)->obj->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

static int table_grow(struct obj_table *t)
{
	size_t nb = t->nbuckets ? t->nbuckets * 2 : 64;
	struct obj_entry **b = calloc(nb, sizeof *b);
	if (!b)
		return -1;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct obj_entry *e = t->buckets[i];
		while (e) {
			struct obj_entry *n = e->next;
			size_t h = hash_str(e->obj->key) & (nb - 1);
			e->next = b[h];
			b[h] = e;
			e = n;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
	return 0;
}

/* Puts o (reference taken over) under its key; the previous object is unreferenced. */
static int table_put(struct obj_table *t, struct apis_obj *o)
{
	if ((t->count + 1 > t->nbuckets) && table_grow(t) < 0)
		return -1;
	struct obj_entry **pp = table_slot(t, o->key);
	if (*pp) {
		t->gc_count -= apis_obj_gc_relevant((*pp)->obj);
		t->gc_count += apis_obj_gc_relevant(o);
		apis_obj_unref((*pp)->obj);
		(*pp)->obj = o;
		return 0;
	}
	struct obj_entry *e = malloc(sizeof *e);
	if (!e)
		return -1;
	e->obj = o;
	e->next = NULL;
	*pp = e;
	t->count++;
	t->gc_count += apis_obj_gc_relevant(o);
	return 0;
}

static void table_del(struct obj_table *t, const char *key)
{
	struct obj_entry **pp = table_slot(t, key);
	if (!pp || !*pp)
		return;
	struct obj_entry *e = *pp;
	*pp = e->next;
	t->gc_count -= apis_obj_gc_relevant(e->obj);
	apis_obj_unref(e->obj);
	free(e);
	t->count--;
}

void apis_table_free(struct obj_table *t)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct obj_entry *e = t->buckets[i];
		while (e) {
			struct obj_entry *n = e->next;
			apis_obj_unref(e->obj);
			free(e);
			e = n;
		}
	}
	free(t->buckets);
	memset(t, 0, sizeof *t);
}

struct apis_obj *apis_store_get(struct apis_rdef *rd, const char *ns, const char *name)
{
	char stack[512];
	size_t nl = rd->namespaced && ns ? strlen(ns) : 0, ml = strlen(name);
	char *key = nl + ml + 2 <= sizeof stack ? stack : malloc(nl + ml + 2);
	if (!key)
		return NULL;
	if (nl)
		memcpy(key, ns, nl);
	key[nl] = '/';
	memcpy(key + nl + 1, name, ml + 1);
	struct obj_entry **pp = table_slot(&rd->table, key);
	if (key != stack)
		free(key);
	return pp && *pp ? (*pp)->obj : NULL;
}

void apis_store_each(struct apis_rdef *rd, const char *ns, void (*fn)(void *u, struct apis_obj *o), void *u)
{
	struct obj_table *t = &rd->table;
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct obj_entry *e = t->buckets[i]; e; e = e->next)
			if (!ns || !*ns || !strcmp(e->obj->ns, ns))
				fn(u, e->obj);
}

/* ---------------- commit path ---------------- */

void apis_watch_wait_add_locked(struct apis_server *s, struct apis_watch_wait *w)
{
	pthread_cond_init(&w->cond, NULL);
	w->waiting = false;
	w->prev = NULL;
	w->next = s->watch_waits;
	if (w->next)
		w->next->prev = w;
	s->watch_waits = w;
}

void apis_watch_wait_remove_locked(struct apis_server *s, struct apis_watch_wait *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		s->watch_waits = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_cond_destroy(&w->cond);
}

void apis_watch_wake_all(struct apis_server *s)
{
	pthread_mutex_lock(&s->ring_mu);
	for (struct apis_watch_wait *w = s->watch_waits; w; w = w->next)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&s->ring_mu);
}

bool apis_ring_lost_locked(const struct apis_server *s, const struct apis_rdef *rd, uint64_t from)
{
	uint64_t oldest = s->ring_head > s->ring_cap ? s->ring_head - s->ring_cap : 0;
	uint64_t k = rd->ring_last; /* 1 + seq of the newest event of rd not yet known to be kept */
	while (k > 0 && k - 1 >= oldest)
		k = s->ring[(k - 1) % s->ring_cap]->prev_same;
	return k > 0 && k - 1 >= from;
}

/* Appends e and wakes the watch streams of its resource that wait: a commit does not wake
 * (and have contend for ring_mu) every other resource's watchers, nor one already awake. */
static void ring_append(struct apis_server *s, struct apis_event *e)
{
	struct apis_rdef *rd = e->obj->rd;
	pthread_mutex_lock(&s->ring_mu);
	struct apis_event **slot = &s->ring[s->ring_head % s->ring_cap];
	struct apis_event *old = *slot;
	*slot = e;
	e->prev_same = rd->ring_last;
	rd->ring_last = s->ring_head + 1;
	s->ring_head++;
	for (struct apis_watch_wait *w = s->watch_waits; w; w = w->next)
		if (w->waiting && w->rd == rd) {
			w->waiting = false;
			pthread_cond_signal(&w->cond);
		}
	pthread_mutex_unlock(&s->ring_mu);
	apis_event_unref(old);
}

static struct apis_obj *serialize(struct apis_server *s, struct apis_rdef *rd, cJSON *obj)
{
	uint64_t rv = s->rv + 1;
	char rvs[32];
	snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (!cJSON_IsObject(md)) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
		md = cJSON_AddObjectToObject(obj, "metadata");
		if (!md)
			return NULL;
	}
	cJSON *rvitem = cJSON_CreateString(rvs);
	if (!rvitem)
		return NULL;
	if (cJSON_GetObjectItemCaseSensitive(md, "resourceVersion"))
		cJSON_ReplaceItemInObjectCaseSensitive(md, "resourceVersion", rvitem);
	else
		cJSON_AddItemToObject(md, "resourceVersion", rvitem);
	char *json = cJSON_PrintUnformatted(obj);
	if (!json)
		return NULL;
	struct apis_obj *o = obj_build(rd, obj, rv, json);
	if (o)
		s->rv = rv;
	return o;
}

static void emit(struct apis_server *s, enum apis_ev_type type, struct apis_obj *o, struct apis_obj *prev)
{
	struct apis_event *e = calloc(1, sizeof *e);
	if (!e)
		return; /* watchers miss this change; they would relist after a timeout */
	atomic_init(&e->refs, 1);
	e->type = type;
	e->rv = o->rv;
	e->obj = o;
	apis_obj_ref(o);
	e->prev = prev;
	apis_obj_ref(prev);
	apis_controllers_notify(s, e);
	ring_append(s, e);
}

/* Stores o (built, its RV taken) as the new state of its key after prev: the table, the event,
 * the mirror. tree (consumed, may be NULL) is o's content for the mirror. */
static struct apis_obj *commit_built(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *o,
				     struct apis_obj *prev, cJSON *obj)
{
	apis_obj_ref(prev); /* keep prev alive for the event while the table drops it */
	if (table_put(&rd->table, o) < 0) {
		apis_obj_unref(prev);
		apis_obj_unref(o);
		cJSON_Delete(obj);
		return NULL;
	}
	emit(s, prev ? APIS_EV_MODIFIED : APIS_EV_ADDED, o, prev);
	apis_obj_unref(prev);
	apis_events_mirror(s, rd, o, obj, false); /* obj is o's content: printing then parsing gives it back */
	return o;
}

struct apis_obj *apis_store_commit(struct apis_server *s, struct apis_rdef *rd, cJSON *obj, struct apis_obj *prev)
{
	struct apis_obj *o = serialize(s, rd, obj);
	if (!o) {
		cJSON_Delete(obj);
		return NULL;
	}
	return commit_built(s, rd, o, prev, obj);
}

/* o (refs 1, rd set) takes like's identity: namespace/name, key, uid, deleting, owners and
 * labels, as an edit of like's bytes keeps them. False on OOM (o then for apis_obj_unref). */
static bool take_identity(struct apis_obj *o, const struct apis_obj *like)
{
	size_t nsl = strlen(like->ns), nml = strlen(like->name);
	if (!(o->nsname = malloc(nsl + nml + 2)))
		return false;
	memcpy(o->nsname, like->nsname, nsl + nml + 2);
	o->ns = o->nsname;
	o->name = o->nsname + nsl + 1;
	o->key = strdup(like->key);
	o->uid = strdup(like->uid);
	o->deleting = like->deleting;
	o->has_owners = like->has_owners;
	return o->key && o->uid && (!like->labels || (o->labels = cJSON_Duplicate(like->labels, true)));
}

/* cur's JSON with the splices applied as a new object with the next resourceVersion (s->rv
 * taken), cur's index fields but field (NULL: none), whose value becomes value. NULL on OOM. */
static struct apis_obj *splice_build(struct apis_server *s, struct apis_obj *cur, const struct apis_splice *sp,
				     size_t n, const char *field, const char *value)
{
	struct apis_rdef *rd = cur->rd;
	uint64_t rv = s->rv + 1;
	char rvs[32];
	int rvn = snprintf(rvs, sizeof rvs, "\"%llu\"", (unsigned long long)rv);
	size_t len = cur->json_len;
	for (size_t i = 0; i < n; i++)
		len = len - sp[i].del + (sp[i].ins ? sp[i].ins_len : (size_t)rvn);
	struct apis_obj *o = calloc(1, sizeof *o);
	char *json = malloc(len + 1);
	if (!o || !json) {
		free(json);
		free(o);
		return NULL;
	}
	size_t from = 0, to = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(json + to, cur->json + from, sp[i].at - from);
		to += sp[i].at - from;
		const char *ins = sp[i].ins ? sp[i].ins : rvs;
		size_t il = sp[i].ins ? sp[i].ins_len : (size_t)rvn;
		memcpy(json + to, ins, il);
		to += il;
		from = sp[i].at + sp[i].del;
	}
	memcpy(json + to, cur->json + from, cur->json_len - from);
	json[len] = 0;
	atomic_init(&o->refs, 1);
	o->rd = rd;
	o->rv = rv;
	o->json = json;
	o->json_len = len;
	bool oom = !take_identity(o, cur);
	if (!oom && rd->nfields && cur->fields) {
		if (!(o->fields = calloc((size_t)rd->nfields, sizeof *o->fields)))
			oom = true;
		for (int i = 0; !oom && i < rd->nfields; i++) {
			const char *v = field && !strcmp(rd->fields[i], field) ? value : cur->fields[i];
			if (v && !(o->fields[i] = strdup(v)))
				oom = true;
		}
	}
	if (oom) {
		apis_obj_unref(o);
		return NULL;
	}
	o->gc_waits = obj_gc_waits(o);
	s->rv = rv;
	return o;
}

struct apis_obj *apis_store_commit_spliced(struct apis_server *s, struct apis_obj *cur, const struct apis_splice *sp,
					   size_t n, const char *field, const char *value)
{
	struct apis_obj *o = splice_build(s, cur, sp, n, field, value);
	return o ? commit_built(s, cur->rd, o, cur, NULL) : NULL;
}

static struct apis_obj *remove_built(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *prev,
				     struct apis_obj *o);

struct apis_obj *apis_store_commit_json(struct apis_server *s, struct apis_rdef *rd, const struct apis_obj *like,
					char *json, size_t len, char **fields, struct apis_obj *prev)
{
	struct apis_obj *o = calloc(1, sizeof *o);
	if (!o) {
		free(json);
		for (int i = 0; fields && i < rd->nfields; i++)
			free(fields[i]);
		free(fields);
		return NULL;
	}
	atomic_init(&o->refs, 1);
	o->rd = rd;
	o->rv = s->rv + 1;
	o->json = json;
	o->json_len = len;
	o->fields = fields;
	if (!take_identity(o, like)) {
		apis_obj_unref(o);
		return NULL;
	}
	o->gc_waits = obj_gc_waits(o);
	s->rv = o->rv;
	return commit_built(s, rd, o, prev, NULL);
}


struct apis_obj *apis_store_remove(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *prev, cJSON *final)
{
	if (!final)
		final = apis_obj_parse(prev);
	if (!final)
		return NULL;
	struct apis_obj *o = serialize(s, rd, final);
	cJSON_Delete(final);
	return o ? remove_built(s, rd, prev, o) : NULL;
}

struct apis_obj *apis_store_commit_member_spliced(struct apis_server *s, struct apis_obj *cur,
						  const struct apis_splice *sp, size_t n, const char *member,
						  const cJSON *tree)
{
	struct apis_obj *o = splice_build(s, cur, sp, n, NULL, NULL);
	if (!o)
		return NULL;
	size_t ml = strlen(member);
	for (int i = 0; o->fields && i < cur->rd->nfields; i++) {
		const char *f = cur->rd->fields[i];
		if (strncmp(f, member, ml) || f[ml] != '.')
			continue;
		free(o->fields[i]);
		o->fields[i] = field_value(tree, f + ml + 1);
	}
	return commit_built(s, cur->rd, o, cur, NULL);
}

struct apis_obj *apis_store_remove_spliced(struct apis_server *s, struct apis_obj *prev, size_t rv_at, size_t rv_len)
{
	struct apis_splice sp = { .at = rv_at, .del = rv_len, .ins = NULL };
	struct apis_obj *o = splice_build(s, prev, &sp, 1, NULL, NULL);
	return o ? remove_built(s, prev->rd, prev, o) : NULL;
}

/* Removes prev, o (built, its RV taken) being its final state: the table, the DELETED event,
 * the events mirror. */
static struct apis_obj *remove_built(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *prev,
				     struct apis_obj *o)
{
	apis_obj_ref(prev);
	table_del(&rd->table, prev->key);
	emit(s, APIS_EV_DELETED, o, prev);
	apis_obj_unref(prev);
	/* the caller gets a borrowed pointer valid until the next removal (it holds s->lock) */
	apis_obj_unref(s->graveyard);
	s->graveyard = o;
	if (!s->mirroring && (rd == s->rd_events || rd == s->rd_events2)) {
		apis_obj_ref(o); /* the mirror removal replaces the graveyard */
		apis_events_mirror(s, rd, o, NULL, true);
		apis_obj_unref(s->graveyard);
		s->graveyard = o;
	}
	return o;
}
