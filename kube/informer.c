/* Informer: reflector loop (list page by page, watch, resume, relist on 410) on its own thread, an
 * indexed object store holding JSON text, and in-order handler dispatch.
 *
 * Locking: store_lock (rwlock) guards objects and indexes; only the informer thread writes.
 * sync_mu guards synced/stopping and the current watch pointer, and pairs with sync_cond (waiters
 * for sync, interruptible backoff sleeps). Handlers run on the informer thread with no lock held;
 * store objects handed to them stay valid because only that same thread replaces or frees them. */
#include "kube/informer.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/util.h"
#include "kube/watch.h"
#include "kube/hash.h"
#include "kube/jsonspan.h"

#define MAX_INDEX_KEYS 16

/* ---------- string hash map (chained) ---------- */

struct hnode { struct hnode *next; uint64_t hash; char *key; void *val; };
struct hmap { struct hnode **b; size_t nb, n; };

static struct hnode *hmap_find(const struct hmap *m, const char *key)
{
	if (!m->nb)
		return NULL;
	uint64_t h = kube_fnv1a64(key);
	for (struct hnode *n = m->b[h & (m->nb - 1)]; n; n = n->next)
		if (n->hash == h && strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

static int hmap_grow(struct hmap *m)
{
	size_t nb = m->nb ? m->nb * 2 : 64;
	struct hnode **b = calloc(nb, sizeof(*b));
	if (!b)
		return -1;
	for (size_t i = 0; i < m->nb; i++)
		for (struct hnode *n = m->b[i], *next; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	free(m->b);
	m->b = b;
	m->nb = nb;
	return 0;
}

/* Inserts a new key (must not exist). Returns the node or NULL on OOM. */
static struct hnode *hmap_insert(struct hmap *m, const char *key, void *val)
{
	if ((m->n + 1) * 4 > m->nb * 3 && hmap_grow(m))
		return NULL;
	struct hnode *n = malloc(sizeof(*n));
	if (!n)
		return NULL;
	n->key = strdup(key);
	if (!n->key) {
		free(n);
		return NULL;
	}
	n->hash = kube_fnv1a64(key);
	n->val = val;
	n->next = m->b[n->hash & (m->nb - 1)];
	m->b[n->hash & (m->nb - 1)] = n;
	m->n++;
	return n;
}

/* Removes key; returns its value (or NULL). */
static void *hmap_remove(struct hmap *m, const char *key)
{
	if (!m->nb)
		return NULL;
	uint64_t h = kube_fnv1a64(key);
	for (struct hnode **pp = &m->b[h & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
		struct hnode *n = *pp;
		if (n->hash == h && strcmp(n->key, key) == 0) {
			*pp = n->next;
			void *v = n->val;
			free(n->key);
			free(n);
			m->n--;
			return v;
		}
	}
	return NULL;
}

static void hmap_clear(struct hmap *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->nb; i++)
		for (struct hnode *n = m->b[i], *next; n; n = next) {
			next = n->next;
			if (free_val)
				free_val(n->val);
			free(n->key);
			free(n);
		}
	free(m->b);
	m->b = NULL;
	m->nb = m->n = 0;
}

/* ---------- informer ---------- */

struct keyset { char **keys; size_t n, cap; };

struct index {
	char *name;
	int (*fn)(const cJSON *obj, const char **out_keys, int max_keys, void *u);
	void *u;
	struct hmap values;   /* index value -> struct keyset */
};

/* One stored object: its JSON text (a cJSON tree of a pod costs ~6x its text), the
 * resourceVersion for relist diffs, and the index values it was filed under, so that removing it
 * needs no parse. */
struct ikey { size_t ix; char *val; };
struct entry {
	struct kube_text *text;        /* shared with kube_informer_text_of's callers */
	char *rv;
	struct ikey *ik;
	size_t nik;
};

enum { META_NAME, META_NAMESPACE, META_RV, META_MANAGED_FIELDS, META_N };

struct kube_informer {
	struct kube_client *client;
	char *path, *label_selector, *field_selector;
	int resync_seconds;
	double backoff_initial, backoff_max;
	int watch_timeout;

	struct handler_set {
		struct kube_informer_handlers h;
		bool old_on_demand;
		kube_informer_text_fn update_text;
		int find_off, nfind;   /* its members in find_paths */
	} *handlers;
	size_t nhandlers;
	struct index *indexes; size_t nindexes;
	/* members the watch finds in each framed object (kube_watch_find): the store's four
	 * (META_*), then each text hook's */
	const char *const *find_paths[KUBE_WATCH_FIND_MAX - 1];
	int nfind;

	pthread_rwlock_t store_lock;   /* guards objects, indexes[].values */
	struct hmap objects;           /* key -> struct entry* */
	bool (*transform)(cJSON *obj, void *u);
	void *transform_u;
	_Atomic(const cJSON *) dispatching;   /* the new object handlers are being given, */
	struct kube_text *dispatching_text;   /* its stored text (informer thread), */
	const struct entry *dispatching_old;  /* the entry it replaced (updates), */
	cJSON *dispatching_old_tree;          /* parsed on the first kube_informer_old */
	const char *dispatching_key;

	pthread_mutex_t sync_mu;       /* guards synced, stopping, watch */
	pthread_cond_t sync_cond;
	bool synced, stopping, started, joined;
	struct kube_watch *watch;
	pthread_t thread;

	atomic_size_t lists, watches;
	char *rv;                      /* informer thread only */
	double next_resync;
	unsigned int rand_state;
};

static char *dup_opt(const char *s, bool *oom)
{
	if (!s || !*s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

int kube_informer_new(struct kube_client *c, const struct kube_informer_opts *o, struct kube_informer **out)
{
	*out = NULL;
	if (!c || !o || !o->version || !o->resource)
		return -1;
	struct kube_informer *inf = calloc(1, sizeof(*inf));
	if (!inf)
		return -1;
	bool oom = false;
	inf->client = c;
	inf->path = kube_path(o->group, o->version, o->resource, o->ns, NULL, NULL);
	inf->label_selector = dup_opt(o->label_selector, &oom);
	inf->field_selector = dup_opt(o->field_selector, &oom);
	inf->resync_seconds = o->resync_seconds;
	static const char *const name_path[] = { "metadata", "name", NULL };
	static const char *const ns_path[] = { "metadata", "namespace", NULL };
	static const char *const rv_path[] = { "metadata", "resourceVersion", NULL };
	static const char *const mf_path[] = { "metadata", "managedFields", NULL };
	inf->find_paths[META_NAME] = name_path;
	inf->find_paths[META_NAMESPACE] = ns_path;
	inf->find_paths[META_RV] = rv_path;
	inf->find_paths[META_MANAGED_FIELDS] = mf_path;
	inf->nfind = META_N;
	inf->backoff_initial = 0.8;
	inf->backoff_max = 30;
	inf->rand_state = (unsigned int)time(NULL) ^ (unsigned int)(uintptr_t)inf;
	pthread_rwlock_init(&inf->store_lock, NULL);
	pthread_mutex_init(&inf->sync_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&inf->sync_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (oom || !inf->path) {
		kube_informer_free(inf);
		return -1;
	}
	*out = inf;
	return 0;
}

static void add_handlers(struct kube_informer *inf, const struct kube_informer_handlers *h, bool old_on_demand,
			 kube_informer_text_fn update_text, const char *const *const *paths, int npaths)
{
	if (inf->started || !h)
		return;
	struct handler_set *n = realloc(inf->handlers, (inf->nhandlers + 1) * sizeof(*n));
	if (!n) {
		klog_error("Cannot add informer handlers: out of memory", " path=%s", inf->path);
		return;
	}
	inf->handlers = n;
	if (update_text && (npaths < 0 || inf->nfind + npaths > (int)(sizeof(inf->find_paths) / sizeof(inf->find_paths[0])))) {
		klog_error("Cannot add informer handlers: too many members to find", " path=%s", inf->path);
		return;
	}
	struct handler_set hs = { *h, old_on_demand, update_text, inf->nfind, update_text ? npaths : 0 };
	for (int i = 0; i < hs.nfind; i++)
		inf->find_paths[inf->nfind++] = paths[i];
	inf->handlers[inf->nhandlers++] = hs;
}

void kube_informer_add_handlers(struct kube_informer *inf, const struct kube_informer_handlers *h)
{
	add_handlers(inf, h, false, NULL, NULL, 0);
}

void kube_informer_add_handlers_old_on_demand(struct kube_informer *inf, const struct kube_informer_handlers *h)
{
	add_handlers(inf, h, true, NULL, NULL, 0);
}

void kube_informer_add_handlers_with_text(struct kube_informer *inf, const struct kube_informer_handlers *h,
					  kube_informer_text_fn update_text, const char *const *const *paths, int npaths)
{
	add_handlers(inf, h, true, update_text, paths, npaths);
}

struct kube_text *kube_informer_text_of(struct kube_informer *inf, const cJSON *obj)
{
	if (!inf || !obj || atomic_load(&inf->dispatching) != obj)
		return NULL;
	return kube_text_ref(inf->dispatching_text);
}

void kube_informer_set_transform(struct kube_informer *inf, bool (*fn)(cJSON *obj, void *u), void *u)
{
	if (inf->started)
		return;
	inf->transform = fn;
	inf->transform_u = u;
}

bool kube_transform_strip_managed_fields(cJSON *obj, void *u)
{
	(void)u;
	cJSON *mf = cJSON_DetachItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
							    "managedFields");
	cJSON_Delete(mf);
	return mf != NULL;
}

int kube_informer_add_index(struct kube_informer *inf, const char *name,
			    int (*keys)(const cJSON *obj, const char **out_keys, int max_keys, void *u), void *u)
{
	if (inf->started || !name || !keys)
		return -1;
	for (size_t i = 0; i < inf->nindexes; i++)
		if (strcmp(inf->indexes[i].name, name) == 0)
			return -1;
	struct index *n = realloc(inf->indexes, (inf->nindexes + 1) * sizeof(*n));
	if (!n)
		return -1;
	inf->indexes = n;
	struct index *ix = &inf->indexes[inf->nindexes];
	memset(ix, 0, sizeof(*ix));
	ix->name = strdup(name);
	if (!ix->name)
		return -1;
	ix->fn = keys;
	ix->u = u;
	inf->nindexes++;
	return 0;
}

void kube_informer_set_backoff(struct kube_informer *inf, double initial_s, double max_s)
{
	inf->backoff_initial = initial_s > 0 ? initial_s : 0.001;
	inf->backoff_max = max_s >= inf->backoff_initial ? max_s : inf->backoff_initial;
}

void kube_informer_set_watch_timeout(struct kube_informer *inf, int seconds) { inf->watch_timeout = seconds; }
size_t kube_informer_list_count(const struct kube_informer *inf) { return atomic_load(&inf->lists); }
size_t kube_informer_watch_count(const struct kube_informer *inf) { return atomic_load(&inf->watches); }

char *kube_object_key(const cJSON *obj, char *buf, size_t len)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	if (!cJSON_IsString(name) || !*name->valuestring)
		return NULL;
	int n = cJSON_IsString(ns) && *ns->valuestring ? snprintf(buf, len, "%s/%s", ns->valuestring, name->valuestring)
						       : snprintf(buf, len, "%s", name->valuestring);
	return n < 0 || (size_t)n >= len ? NULL : buf;
}

static const char *obj_rv(const cJSON *obj)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	return cJSON_IsString(rv) ? rv->valuestring : "";
}

/* ---------- stored entries ---------- */

static void entry_free(void *v)
{
	struct entry *e = v;
	if (!e)
		return;
	for (size_t i = 0; i < e->nik; i++)
		free(e->ik[i].val);
	free(e->ik);
	kube_text_unref(e->text);
	free(e->rv);
	free(e);
}

/* The stored form of obj: its text (raw[0..rawlen), the bytes it was parsed from, when given;
 * else its print), resourceVersion and index values. NULL on OOM. */
static struct entry *entry_new(struct kube_informer *inf, const cJSON *obj, const char *raw, size_t rawlen)
{
	struct entry *e = calloc(1, sizeof(*e));
	if (e)
		e->text = raw ? kube_text_new(raw, rawlen) : kube_text_adopt(cJSON_PrintUnformatted(obj));
	if (!e || !e->text || !(e->rv = strdup(obj_rv(obj)))) {
		entry_free(e);
		return NULL;
	}
	for (size_t i = 0; i < inf->nindexes; i++) {
		const char *vals[MAX_INDEX_KEYS];
		int nv = inf->indexes[i].fn(obj, vals, MAX_INDEX_KEYS, inf->indexes[i].u);
		for (int v = 0; v < nv && v < MAX_INDEX_KEYS; v++) {
			if (!vals[v])
				continue;
			struct ikey *n = realloc(e->ik, (e->nik + 1) * sizeof(*n));
			if (!n || !(n[e->nik].val = strdup(vals[v]))) {
				if (n)
					e->ik = n;
				entry_free(e);
				return NULL;
			}
			n[e->nik].ix = i;
			e->ik = n;
			e->nik++;
		}
	}
	return e;
}

/* A tree parsed from the entry's text (caller frees); NULL on OOM. */
static cJSON *entry_parse(const struct entry *e)
{
	return cJSON_ParseWithLength(e->text->s, e->text->len);
}

/* ---------- indexes (store_lock held for writing) ---------- */

static void keyset_free(void *v)
{
	struct keyset *ks = v;
	for (size_t i = 0; i < ks->n; i++)
		free(ks->keys[i]);
	free(ks->keys);
	free(ks);
}

static void index_remove(struct kube_informer *inf, const char *key, const struct entry *e)
{
	for (size_t i = 0; i < e->nik; i++) {
		struct index *ix = &inf->indexes[e->ik[i].ix];
		struct hnode *hn = hmap_find(&ix->values, e->ik[i].val);
		if (!hn)
			continue;
		struct keyset *ks = hn->val;
		for (size_t k = 0; k < ks->n; k++)
			if (strcmp(ks->keys[k], key) == 0) {
				free(ks->keys[k]);
				ks->keys[k] = ks->keys[--ks->n];
				break;
			}
		if (ks->n == 0)
			keyset_free(hmap_remove(&ix->values, e->ik[i].val));
	}
}

static void index_add(struct kube_informer *inf, const char *key, const struct entry *e)
{
	for (size_t i = 0; i < e->nik; i++) {
		struct index *ix = &inf->indexes[e->ik[i].ix];
		const char *val = e->ik[i].val;
		struct hnode *hn = hmap_find(&ix->values, val);
		struct keyset *ks;
		if (hn) {
			ks = hn->val;
			bool dup = false;
			for (size_t k = 0; k < ks->n && !dup; k++)
				dup = strcmp(ks->keys[k], key) == 0;
			if (dup)
				continue;
		} else {
			ks = calloc(1, sizeof(*ks));
			if (!ks || !hmap_insert(&ix->values, val, ks)) {
				free(ks);
				klog_error("Informer index: out of memory", " index=%s", ix->name);
				continue;
			}
		}
		if (ks->n == ks->cap) {
			size_t ncap = ks->cap ? ks->cap * 2 : 4;
			char **nk = realloc(ks->keys, ncap * sizeof(*nk));
			if (!nk)
				continue;
			ks->keys = nk;
			ks->cap = ncap;
		}
		ks->keys[ks->n] = strdup(key);
		if (ks->keys[ks->n])
			ks->n++;
	}
}

/* ---------- store mutation (informer thread only) ---------- */

/* Puts e (takes ownership) under key; returns the previous entry (caller frees) or NULL.
 * *ok false on OOM (e freed). */
static struct entry *store_put(struct kube_informer *inf, const char *key, struct entry *e, bool *ok)
{
	struct entry *old = NULL;
	*ok = true;
	pthread_rwlock_wrlock(&inf->store_lock);
	struct hnode *n = hmap_find(&inf->objects, key);
	if (n) {
		old = n->val;
		index_remove(inf, key, old);
		n->val = e;
	} else if (!hmap_insert(&inf->objects, key, e)) {
		*ok = false;
	}
	if (*ok)
		index_add(inf, key, e);
	pthread_rwlock_unlock(&inf->store_lock);
	if (!*ok)
		entry_free(e);
	return old;
}

static struct entry *store_remove(struct kube_informer *inf, const char *key)
{
	pthread_rwlock_wrlock(&inf->store_lock);
	struct entry *old = hmap_remove(&inf->objects, key);
	if (old)
		index_remove(inf, key, old);
	pthread_rwlock_unlock(&inf->store_lock);
	return old;
}

/* The tree of a stored entry for a handler; NULL (logged) on OOM. */
static cJSON *parse_for_handlers(struct kube_informer *inf, const struct entry *e, const char *key)
{
	cJSON *t = entry_parse(e);
	if (!t)
		klog_error("Informer: cannot parse a stored object: out of memory", " path=%s key=%s", inf->path, key);
	return t;
}

/* The previous object of the update being dispatched: parsed from its entry once, for the
 * handlers that want it; the new one when parsing fails (out of memory, logged). */
static const cJSON *old_for_handlers(struct kube_informer *inf, const cJSON *obj)
{
	if (!inf->dispatching_old)
		return obj;
	if (!inf->dispatching_old_tree)
		inf->dispatching_old_tree = parse_for_handlers(inf, inf->dispatching_old, inf->dispatching_key);
	return inf->dispatching_old_tree ? inf->dispatching_old_tree : obj;
}

/* A resync: on_update(obj, obj) for every set (text hooks are for changes, not resyncs). */
static void dispatch_resync(struct kube_informer *inf, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nhandlers; i++) {
		const struct handler_set *hs = &inf->handlers[i];
		if (hs->h.on_update)
			hs->h.on_update(hs->h.ctx, hs->old_on_demand ? NULL : obj, obj);
	}
}

const cJSON *kube_informer_old(struct kube_informer *inf, const cJSON *obj)
{
	if (!inf || !obj || atomic_load(&inf->dispatching) != obj)
		return obj; /* a resync (old == new), or not this informer's dispatch */
	return old_for_handlers(inf, obj);
}

struct kube_text *kube_informer_old_text(struct kube_informer *inf, const cJSON *obj)
{
	if (!inf || !obj || atomic_load(&inf->dispatching) != obj || !inf->dispatching_old)
		return NULL;
	return kube_text_ref(inf->dispatching_old->text);
}

static void dispatch_delete(struct kube_informer *inf, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].h.on_delete)
			inf->handlers[i].h.on_delete(inf->handlers[i].h.ctx, obj);
}

/* The members find_paths names, found in the stored text (a watched object given as a tree, a
 * listed one); false when the text is not plain JSON (kube_json_find). */
static bool find_in_text(struct kube_informer *inf, const struct kube_text *t, struct kube_json_member *m)
{
	for (int i = 0; i < inf->nfind; i++)
		m[i].path = inf->find_paths[i];
	return kube_json_find(t->s, t->len, m, inf->nfind);
}

/* Hands an upsert to the handler sets, in order: a set with a text hook gets an update as the
 * stored text first (with its members: found, m NULL, or by the watch, m), and on_update only
 * when the hook declines; the others get the tree, obj or (obj NULL) parsed from the stored
 * text the first time a set wants it. Frees old and obj. */
static void dispatch_upsert(struct kube_informer *inf, const char *key, struct entry *e, struct entry *old, cJSON *obj,
			    const struct kube_json_member *m)
{
	struct kube_json_member found[KUBE_WATCH_FIND_MAX];
	int have = m ? 1 : 0; /* 1 members known, 0 not looked for, -1 not plain */
	/* e stays valid during dispatch: only this thread replaces or frees entries. */
	inf->dispatching_text = e->text;
	inf->dispatching_old = old;
	inf->dispatching_key = key;
	atomic_store(&inf->dispatching, obj);
	for (size_t i = 0; i < inf->nhandlers; i++) {
		const struct handler_set *hs = &inf->handlers[i];
		if (old ? !hs->h.on_update : !hs->h.on_add)
			continue;
		if (old && hs->update_text) {
			if (!have) {
				have = find_in_text(inf, e->text, found) ? 1 : -1;
				m = found;
			}
			if (have > 0 && hs->update_text(hs->h.ctx, e->text, m + hs->find_off))
				continue;
		}
		if (!obj) {
			if (!(obj = parse_for_handlers(inf, e, key)))
				break;
			atomic_store(&inf->dispatching, obj);
		}
		if (old)
			hs->h.on_update(hs->h.ctx, hs->old_on_demand ? NULL : old_for_handlers(inf, obj), obj);
		else
			hs->h.on_add(hs->h.ctx, obj);
	}
	atomic_store(&inf->dispatching, NULL);
	inf->dispatching_text = NULL;
	inf->dispatching_old = NULL;
	cJSON_Delete(inf->dispatching_old_tree);
	inf->dispatching_old_tree = NULL;
	entry_free(old);
	cJSON_Delete(obj);
}

/* Add or update from a watch event or a list item; takes ownership of obj. raw: the bytes obj
 * was parsed from (a watch event's object), stored as they are unless the transform changes obj. */
static void apply_upsert(struct kube_informer *inf, cJSON *obj, bool only_if_changed, const char *raw, size_t rawlen)
{
	char key[512];
	if (!kube_object_key(obj, key, sizeof(key))) {
		klog_warning("Informer: object without a name ignored", " path=%s", inf->path);
		cJSON_Delete(obj);
		return;
	}
	if (only_if_changed) {
		pthread_rwlock_rdlock(&inf->store_lock);
		struct hnode *n = hmap_find(&inf->objects, key);
		bool same = n && *obj_rv(obj) && strcmp(((struct entry *)n->val)->rv, obj_rv(obj)) == 0;
		pthread_rwlock_unlock(&inf->store_lock);
		if (same) {
			cJSON_Delete(obj);
			return;
		}
	}
	if (inf->transform && inf->transform(obj, inf->transform_u))
		raw = NULL;
	bool ok = false;
	struct entry *e = entry_new(inf, obj, raw, rawlen);
	struct entry *old = e ? store_put(inf, key, e, &ok) : NULL;
	if (!ok) {
		klog_error("Informer store: out of memory", " key=%s", key);
		cJSON_Delete(obj);
		return;
	}
	dispatch_upsert(inf, key, e, old, obj, NULL);
}

/* A watched ADDED or MODIFIED object given as its bytes (json[0..len), checked plain by the
 * watch, which also found the members find_paths names: m, in json): stored as they are, keyed
 * from the text, and parsed only for the handler sets that want a tree. Objects the text path
 * cannot take as they are (a transform that would change them, index functions, names that are
 * not plain strings) go the tree's way. */
static void apply_upsert_text(struct kube_informer *inf, const char *json, size_t len, const struct kube_json_member *m)
{
	char key[512];
	size_t name_len = 0, ns_len = 0, rv_len = 0;
	const char *name = kube_json_plain_string(m[META_NAME].val.p, m[META_NAME].val.len, &name_len);
	const char *ns = kube_json_plain_string(m[META_NAMESPACE].val.p, m[META_NAMESPACE].val.len, &ns_len);
	const char *rv = kube_json_plain_string(m[META_RV].val.p, m[META_RV].val.len, &rv_len);
	bool plain = !inf->nindexes && name && name_len && (ns || !m[META_NAMESPACE].val.p) && (rv || !m[META_RV].val.p) &&
		     (!inf->transform ||
		      (inf->transform == kube_transform_strip_managed_fields && !m[META_MANAGED_FIELDS].val.p));
	size_t kn = plain ? name_len + (ns_len ? ns_len + 1 : 0) : sizeof(key);
	if (kn < sizeof(key)) {
		if (ns_len) {
			memcpy(key, ns, ns_len);
			key[ns_len] = '/';
		}
		memcpy(key + (ns_len ? ns_len + 1 : 0), name, name_len);
		key[kn] = 0;
	}
	if (kn >= sizeof(key) || memchr(key, 0, kn)) {
		cJSON *obj = cJSON_ParseWithLength(json, len);
		if (obj)
			apply_upsert(inf, obj, false, json, len);
		else
			klog_error("Informer: cannot parse a watched object: out of memory", " path=%s", inf->path);
		return;
	}
	struct entry *e = calloc(1, sizeof(*e));
	if (e && (!(e->text = kube_text_new(json, len)) || !(e->rv = strndup(rv ? rv : "", rv_len)))) {
		entry_free(e);
		e = NULL;
	}
	bool ok = false;
	struct entry *old = e ? store_put(inf, key, e, &ok) : NULL;
	if (!ok) {
		klog_error("Informer store: out of memory", " key=%s", key);
		return;
	}
	/* the members, moved from the event's bytes to the stored copy of them */
	struct kube_json_member moved[KUBE_WATCH_FIND_MAX];
	for (int i = 0; i < inf->nfind; i++) {
		moved[i] = m[i];
		if (m[i].val.p) {
			moved[i].val.p = e->text->s + (m[i].val.p - json);
			moved[i].cut.p = e->text->s + (m[i].cut.p - json);
		}
	}
	dispatch_upsert(inf, key, e, old, NULL, moved);
}

static void apply_delete(struct kube_informer *inf, cJSON *obj)
{
	char key[512];
	if (!kube_object_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return;
	}
	struct entry *old = store_remove(inf, key);
	if (old) {
		/* The event carries the object's final state; hand that to handlers. */
		if (inf->transform)
			inf->transform(obj, inf->transform_u);
		dispatch_delete(inf, obj);
		entry_free(old);
	}
	cJSON_Delete(obj);
}

/* A relist in progress: the keys its pages have held so far. */
struct replace { struct kube_informer *inf; struct hmap seen; char *rv; };

/* Adds/updates a list page's items (taking them out of items) in list order. */
static void replace_items(struct replace *rp, cJSON *items)
{
	while (items && items->child) {
		cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
		char key[512];
		if (kube_object_key(it, key, sizeof(key)) && !hmap_find(&rp->seen, key))
			hmap_insert(&rp->seen, key, NULL);
		apply_upsert(rp->inf, it, true, NULL, 0);
	}
}

/* Ends a relist: deletes for keys the list no longer has. */
static void replace_finish(struct replace *rp)
{
	struct kube_informer *inf = rp->inf;
	/* Collect stale keys under the read lock, then delete one by one. */
	char **stale = NULL;
	size_t nstale = 0;
	pthread_rwlock_rdlock(&inf->store_lock);
	if (inf->objects.n > rp->seen.n)
		stale = calloc(inf->objects.n - rp->seen.n, sizeof(char *));
	for (size_t i = 0; stale && i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next)
			if (!hmap_find(&rp->seen, n->key) && nstale < inf->objects.n - rp->seen.n)
				stale[nstale++] = strdup(n->key);
	pthread_rwlock_unlock(&inf->store_lock);
	for (size_t i = 0; i < nstale; i++) {
		if (!stale[i])
			continue;
		struct entry *old = store_remove(inf, stale[i]);
		if (old) {
			klog_info(4, "Informer: object deleted while not watching", " key=%s", stale[i]);
			cJSON *ot = parse_for_handlers(inf, old, stale[i]);
			if (ot)
				dispatch_delete(inf, ot);
			cJSON_Delete(ot);
			entry_free(old);
		}
		free(stale[i]);
	}
	free(stale);
}

/* kube_list_each's page callback: each page goes into the store as it arrives, so the whole
 * list is never held as one tree (50,000 pods would take ~250 MB). The first page's
 * resourceVersion is the list's (kube_list). A listing that starts over forgets the keys seen. */
static int replace_page(void *ctx, cJSON *page, bool first)
{
	struct replace *rp = ctx;
	if (first) {
		hmap_clear(&rp->seen, NULL);
		const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(page, "metadata"),
								   "resourceVersion");
		free(rp->rv);
		if (!(rp->rv = strdup(cJSON_IsString(rv) ? rv->valuestring : "")))
			return -1;
	}
	replace_items(rp, cJSON_GetObjectItemCaseSensitive(page, "items"));
	return 0;
}

/* ---------- reflector thread ---------- */

static double mono_now(void) { return (double)kube_mono_ns() / 1e9; }

static bool is_stopping(struct kube_informer *inf)
{
	pthread_mutex_lock(&inf->sync_mu);
	bool s = inf->stopping;
	pthread_mutex_unlock(&inf->sync_mu);
	return s;
}

/* Sleeps up to seconds unless stopped; returns true when stopping. */
static bool sleep_or_stop(struct kube_informer *inf, double seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	ts.tv_sec = (time_t)end;
	ts.tv_nsec = (long)((end - floor(end)) * 1e9);
	pthread_mutex_lock(&inf->sync_mu);
	while (!inf->stopping) {
		if (pthread_cond_timedwait(&inf->sync_cond, &inf->sync_mu, &ts) == ETIMEDOUT)
			break;
	}
	bool s = inf->stopping;
	pthread_mutex_unlock(&inf->sync_mu);
	return s;
}

static void maybe_resync(struct kube_informer *inf)
{
	if (inf->resync_seconds <= 0 || mono_now() < inf->next_resync)
		return;
	inf->next_resync = mono_now() + inf->resync_seconds;
	/* Entries stay valid outside the lock: only this thread replaces or frees them. */
	pthread_rwlock_rdlock(&inf->store_lock);
	size_t n = inf->objects.n, k = 0;
	struct { const struct entry *e; const char *key; } *objs = calloc(n ? n : 1, sizeof(*objs));
	for (size_t i = 0; objs && i < inf->objects.nb; i++)
		for (struct hnode *h = inf->objects.b[i]; h; h = h->next) {
			objs[k].e = h->val;
			objs[k++].key = h->key;
		}
	pthread_rwlock_unlock(&inf->store_lock);
	for (size_t i = 0; i < k; i++) {
		cJSON *t = parse_for_handlers(inf, objs[i].e, objs[i].key);
		if (t)
			dispatch_resync(inf, t);
		cJSON_Delete(t);
	}
	free(objs);
}

static int on_watch_event(void *ctx, struct kube_watch_event *ev)
{
	struct kube_informer *inf = ctx;
	cJSON *obj = ev->obj;
	ev->obj = NULL;
	switch (ev->type) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		if (obj)
			apply_upsert(inf, obj, false, ev->json, ev->len);
		else if (ev->nmembers == inf->nfind)
			apply_upsert_text(inf, ev->json, ev->len, ev->members);
		else if ((obj = cJSON_ParseWithLength(ev->json, ev->len)))
			apply_upsert(inf, obj, false, ev->json, ev->len);
		else
			klog_error("Informer: cannot parse a watched object: out of memory", " path=%s", inf->path);
		break;
	case KUBE_WATCH_DELETED:
		if (!obj && !(obj = cJSON_ParseWithLength(ev->json, ev->len)))
			klog_error("Informer: cannot parse a deleted object: out of memory", " path=%s", inf->path);
		else
			apply_delete(inf, obj);
		break;
	case KUBE_WATCH_BOOKMARK:
	case KUBE_WATCH_ERROR:
		cJSON_Delete(obj);
		break;
	}
	maybe_resync(inf);
	return 0;
}

static int set_rv(struct kube_informer *inf, const char *rv)
{
	char *n = strdup(rv ? rv : "");
	if (!n)
		return -1;
	free(inf->rv);
	inf->rv = n;
	return 0;
}

/* LIST and replace the store, page by page. Returns 0 or -1. A list that fails part way has
 * applied its first pages (each object's state as listed) but deleted nothing; the retry
 * relists. */
static int do_list(struct kube_informer *inf)
{
	struct kube_error e;
	struct replace rp = { .inf = inf };
	atomic_fetch_add(&inf->lists, 1);
	if (kube_list_each(inf->client, inf->path, inf->label_selector, inf->field_selector, replace_page, &rp, &e)) {
		klog_warning("Informer list failed", " path=%s code=%d reason=%s message=\"%s\"", inf->path, e.http_code,
			     e.reason, e.message);
		hmap_clear(&rp.seen, NULL);
		free(rp.rv);
		return -1;
	}
	int rc = set_rv(inf, rp.rv ? rp.rv : "");
	free(rp.rv);
	if (rc) {
		hmap_clear(&rp.seen, NULL);
		return -1;
	}
	replace_finish(&rp);
	hmap_clear(&rp.seen, NULL);
	klog_info(4, "Informer listed", " path=%s resourceVersion=%s objects=%zu", inf->path, inf->rv,
		  kube_store_len(inf));
	pthread_mutex_lock(&inf->sync_mu);
	if (!inf->synced) {
		inf->synced = true;
		pthread_cond_broadcast(&inf->sync_cond);
	}
	pthread_mutex_unlock(&inf->sync_mu);
	return 0;
}

static double jittered(struct kube_informer *inf, double d)
{
	return d * (1.0 + 0.5 * (double)rand_r(&inf->rand_state) / (double)RAND_MAX);
}

static void *informer_main(void *arg)
{
	struct kube_informer *inf = arg;
	bool need_list = true;
	double backoff = inf->backoff_initial;
	inf->next_resync = mono_now() + inf->resync_seconds;
	while (!is_stopping(inf)) {
		if (need_list) {
			if (do_list(inf)) {
				if (sleep_or_stop(inf, jittered(inf, backoff)))
					break;
				backoff = fmin(backoff * 2, inf->backoff_max);
				continue;
			}
			need_list = false;
		}
		int timeout = inf->watch_timeout > 0 ? inf->watch_timeout : 300 + (int)(rand_r(&inf->rand_state) % 300);
		if (inf->resync_seconds > 0 && inf->resync_seconds < timeout)
			timeout = inf->resync_seconds;
		struct kube_watch_opts wo = {
			.path = inf->path, .resource_version = inf->rv, .label_selector = inf->label_selector,
			.field_selector = inf->field_selector, .timeout_seconds = timeout,
		};
		struct kube_watch *w = NULL;
		if (kube_watch_new(inf->client, &wo, &w) || kube_watch_find(w, inf->find_paths, inf->nfind)) {
			kube_watch_free(w);
			w = NULL;
			if (sleep_or_stop(inf, jittered(inf, backoff)))
				break;
			continue;
		}
		pthread_mutex_lock(&inf->sync_mu);
		bool stop = inf->stopping;
		if (!stop)
			inf->watch = w;
		pthread_mutex_unlock(&inf->sync_mu);
		if (stop) {
			kube_watch_free(w);
			break;
		}
		atomic_fetch_add(&inf->watches, 1);
		struct kube_error e;
		double started = mono_now();
		enum kube_watch_end end = kube_watch_run_events(w, on_watch_event, inf, &e);
		size_t nevents = kube_watch_event_count(w);
		pthread_mutex_lock(&inf->sync_mu);
		inf->watch = NULL;
		pthread_mutex_unlock(&inf->sync_mu);
		int rvrc = set_rv(inf, kube_watch_resource_version(w));
		kube_watch_free(w);
		maybe_resync(inf);
		if (rvrc)
			need_list = true;
		switch (end) {
		case KUBE_WATCH_END_STOPPED:
			break;
		case KUBE_WATCH_END_TIMEOUT:
			backoff = inf->backoff_initial;
			break;
		case KUBE_WATCH_END_CLOSED:
			if (nevents == 0 && mono_now() - started < 1.0) {
				/* A server that ends every watch at once would make us spin: back off
				 * (client-go's reflector treats a very short empty watch as an error). */
				if (sleep_or_stop(inf, jittered(inf, backoff)))
					goto out;
				backoff = fmin(backoff * 2, inf->backoff_max);
			} else {
				backoff = inf->backoff_initial;
			}
			break;
		case KUBE_WATCH_END_EXPIRED:
			klog_info(2, "Informer watch expired; relisting", " path=%s resourceVersion=%s message=\"%s\"",
				  inf->path, inf->rv, e.message);
			need_list = true;
			backoff = inf->backoff_initial;
			break;
		case KUBE_WATCH_END_ERROR:
			klog_warning("Informer watch failed; resuming", " path=%s resourceVersion=%s code=%d message=\"%s\"",
				     inf->path, inf->rv, e.http_code, e.message);
			if (nevents > 0)
				backoff = inf->backoff_initial;
			if (sleep_or_stop(inf, jittered(inf, backoff)))
				goto out;
			backoff = fmin(backoff * 2, inf->backoff_max);
			break;
		}
	}
out:
	return NULL;
}

int kube_informer_start(struct kube_informer *inf)
{
	if (inf->started)
		return -1;
	inf->started = true;
	if (pthread_create(&inf->thread, NULL, informer_main, inf) != 0) {
		inf->started = false;
		return -1;
	}
	return 0;
}

bool kube_informer_has_synced(const struct kube_informer *inf)
{
	struct kube_informer *m = (struct kube_informer *)inf;
	pthread_mutex_lock(&m->sync_mu);
	bool s = m->synced;
	pthread_mutex_unlock(&m->sync_mu);
	return s;
}

bool kube_informer_wait_for_sync(struct kube_informer *inf, int timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + timeout_ms / 1000.0;
	ts.tv_sec = (time_t)end;
	ts.tv_nsec = (long)((end - floor(end)) * 1e9);
	pthread_mutex_lock(&inf->sync_mu);
	while (!inf->synced && !inf->stopping) {
		if (timeout_ms < 0)
			pthread_cond_wait(&inf->sync_cond, &inf->sync_mu);
		else if (pthread_cond_timedwait(&inf->sync_cond, &inf->sync_mu, &ts) == ETIMEDOUT)
			break;
	}
	bool s = inf->synced;
	pthread_mutex_unlock(&inf->sync_mu);
	return s;
}

void kube_informer_stop(struct kube_informer *inf)
{
	if (!inf)
		return;
	pthread_mutex_lock(&inf->sync_mu);
	inf->stopping = true;
	if (inf->watch)
		kube_watch_stop(inf->watch);
	pthread_cond_broadcast(&inf->sync_cond);
	pthread_mutex_unlock(&inf->sync_mu);
	if (inf->started && !inf->joined) {
		pthread_join(inf->thread, NULL);
		inf->joined = true;
	}
}

void kube_informer_free(struct kube_informer *inf)
{
	if (!inf)
		return;
	kube_informer_stop(inf);
	hmap_clear(&inf->objects, entry_free);
	for (size_t i = 0; i < inf->nindexes; i++) {
		hmap_clear(&inf->indexes[i].values, keyset_free);
		free(inf->indexes[i].name);
	}
	free(inf->indexes);
	free(inf->handlers);
	free(inf->path);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf->rv);
	pthread_rwlock_destroy(&inf->store_lock);
	pthread_mutex_destroy(&inf->sync_mu);
	pthread_cond_destroy(&inf->sync_cond);
	free(inf);
}

/* ---------- store reads ---------- */

/* A copy of the text stored under key (caller frees), or NULL when absent / OOM (*oom). */
static char *copy_text(struct kube_informer *inf, const char *key, size_t *len, bool *oom)
{
	*oom = false;
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *n = hmap_find(&inf->objects, key);
	const struct entry *e = n ? n->val : NULL;
	char *c = e ? malloc(e->text->len + 1) : NULL;
	if (c) {
		memcpy(c, e->text->s, e->text->len + 1);
		*len = e->text->len;
	}
	*oom = e && !c;
	pthread_rwlock_unlock(&inf->store_lock);
	return c;
}

char *kube_store_get_json(struct kube_informer *inf, const char *key, size_t *len)
{
	size_t l = 0;
	bool oom;
	char *c = copy_text(inf, key, &l, &oom);
	if (len)
		*len = c ? l : 0;
	return c;
}

cJSON *kube_store_get(struct kube_informer *inf, const char *key)
{
	size_t len = 0;
	bool oom;
	char *c = copy_text(inf, key, &len, &oom);
	cJSON *t = c ? cJSON_ParseWithLength(c, len) : NULL;
	free(c);
	return t;
}

/* Parses every entry (under the read lock) into arr; -1 on OOM. ks: only those keys. */
static int parse_into(struct kube_informer *inf, cJSON *arr, const struct keyset *ks)
{
	if (ks) {
		for (size_t k = 0; k < ks->n; k++) {
			struct hnode *on = hmap_find(&inf->objects, ks->keys[k]);
			cJSON *c = on ? entry_parse(on->val) : NULL;
			if (on && !c)
				return -1;
			if (c)
				cJSON_AddItemToArray(arr, c);
		}
		return 0;
	}
	for (size_t i = 0; i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next) {
			cJSON *c = entry_parse(n->val);
			if (!c)
				return -1;
			cJSON_AddItemToArray(arr, c);
		}
	return 0;
}

cJSON *kube_store_list(struct kube_informer *inf)
{
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return NULL;
	pthread_rwlock_rdlock(&inf->store_lock);
	int rc = parse_into(inf, arr, NULL);
	pthread_rwlock_unlock(&inf->store_lock);
	if (rc) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

static struct index *index_named(struct kube_informer *inf, const char *index)
{
	for (size_t i = 0; i < inf->nindexes; i++)
		if (strcmp(inf->indexes[i].name, index) == 0)
			return &inf->indexes[i];
	return NULL;
}

int kube_store_by_index(struct kube_informer *inf, const char *index, const char *value, cJSON **out)
{
	*out = NULL;
	struct index *ix = index_named(inf, index);
	if (!ix)
		return -1;
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return -1;
	static const struct keyset none = {0};
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *hn = hmap_find(&ix->values, value);
	int rc = parse_into(inf, arr, hn ? hn->val : &none);
	pthread_rwlock_unlock(&inf->store_lock);
	if (rc) {
		cJSON_Delete(arr);
		return -1;
	}
	*out = arr;
	return 0;
}

/* One object parsed at a time, under the read lock (as kube_store_list_with). */
int kube_store_by_index_with(struct kube_informer *inf, const char *index, const char *value,
			     void (*fn)(const cJSON *obj, void *u), void *u)
{
	struct index *ix = index_named(inf, index);
	if (!ix)
		return -1;
	int rc = 0;
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *hn = hmap_find(&ix->values, value);
	struct keyset *ks = hn ? hn->val : NULL;
	for (size_t k = 0; ks && k < ks->n; k++) {
		struct hnode *on = hmap_find(&inf->objects, ks->keys[k]);
		if (!on)
			continue;
		cJSON *t = entry_parse(on->val);
		if (!t) {
			klog_error("Informer store: cannot read an object: out of memory", " path=%s key=%s", inf->path, on->key);
			rc = -1;
			continue;
		}
		fn(t, u);
		cJSON_Delete(t);
	}
	pthread_rwlock_unlock(&inf->store_lock);
	return rc;
}

size_t kube_store_len(struct kube_informer *inf)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	size_t n = inf->objects.n;
	pthread_rwlock_unlock(&inf->store_lock);
	return n;
}

size_t kube_store_bytes(struct kube_informer *inf)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	size_t b = 0;
	for (size_t i = 0; i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next)
			b += ((const struct entry *)n->val)->text->len;
	pthread_rwlock_unlock(&inf->store_lock);
	return b;
}

void kube_store_get_with(struct kube_informer *inf, const char *key, void (*fn)(const cJSON *obj, void *u), void *u)
{
	size_t len = 0;
	bool oom;
	char *c = copy_text(inf, key, &len, &oom);
	cJSON *t = c ? cJSON_ParseWithLength(c, len) : NULL;
	bool failed = oom || (c && !t);
	free(c);
	if (failed)
		klog_error("Informer store: cannot read an object: out of memory", " path=%s key=%s", inf->path, key);
	fn(t, u);
	cJSON_Delete(t);
}

void kube_store_list_with(struct kube_informer *inf, void (*fn)(const cJSON *obj, void *u), void *u)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	for (size_t i = 0; i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next) {
			cJSON *t = entry_parse(n->val);
			if (t)
				fn(t, u);
			else
				klog_error("Informer store: cannot read an object: out of memory", " path=%s key=%s",
					   inf->path, n->key);
			cJSON_Delete(t);
		}
	pthread_rwlock_unlock(&inf->store_lock);
}
