/* Informer: reflector loop (list, watch, resume, relist on 410) on its own thread, an indexed
 * object store, and in-order handler dispatch.
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

struct kube_informer {
	struct kube_client *client;
	char *path, *label_selector, *field_selector;
	int resync_seconds;
	double backoff_initial, backoff_max;
	int watch_timeout;

	struct kube_informer_handlers *handlers; size_t nhandlers;
	struct index *indexes; size_t nindexes;

	pthread_rwlock_t store_lock;   /* guards objects, indexes[].values */
	struct hmap objects;           /* key -> cJSON* */

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

void kube_informer_add_handlers(struct kube_informer *inf, const struct kube_informer_handlers *h)
{
	if (inf->started || !h)
		return;
	struct kube_informer_handlers *n = realloc(inf->handlers, (inf->nhandlers + 1) * sizeof(*n));
	if (!n) {
		klog_error("Cannot add informer handlers: out of memory", " path=%s", inf->path);
		return;
	}
	inf->handlers = n;
	inf->handlers[inf->nhandlers++] = *h;
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

/* ---------- indexes (store_lock held for writing) ---------- */

static void keyset_free(void *v)
{
	struct keyset *ks = v;
	for (size_t i = 0; i < ks->n; i++)
		free(ks->keys[i]);
	free(ks->keys);
	free(ks);
}

static void index_remove(struct kube_informer *inf, const char *key, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nindexes; i++) {
		struct index *ix = &inf->indexes[i];
		const char *vals[MAX_INDEX_KEYS];
		int nv = ix->fn(obj, vals, MAX_INDEX_KEYS, ix->u);
		for (int v = 0; v < nv && v < MAX_INDEX_KEYS; v++) {
			if (!vals[v])
				continue;
			struct hnode *hn = hmap_find(&ix->values, vals[v]);
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
				keyset_free(hmap_remove(&ix->values, vals[v]));
		}
	}
}

static void index_add(struct kube_informer *inf, const char *key, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nindexes; i++) {
		struct index *ix = &inf->indexes[i];
		const char *vals[MAX_INDEX_KEYS];
		int nv = ix->fn(obj, vals, MAX_INDEX_KEYS, ix->u);
		for (int v = 0; v < nv && v < MAX_INDEX_KEYS; v++) {
			if (!vals[v])
				continue;
			struct hnode *hn = hmap_find(&ix->values, vals[v]);
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
				if (!ks || !hmap_insert(&ix->values, vals[v], ks)) {
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
}

/* ---------- store mutation (informer thread only) ---------- */

/* Puts obj (takes ownership) under key; returns the previous object (caller frees) or NULL.
 * *ok false on OOM (obj freed). */
static cJSON *store_put(struct kube_informer *inf, const char *key, cJSON *obj, bool *ok)
{
	cJSON *old = NULL;
	*ok = true;
	pthread_rwlock_wrlock(&inf->store_lock);
	struct hnode *n = hmap_find(&inf->objects, key);
	if (n) {
		old = n->val;
		index_remove(inf, key, old);
		n->val = obj;
	} else if (!hmap_insert(&inf->objects, key, obj)) {
		*ok = false;
	}
	if (*ok)
		index_add(inf, key, obj);
	pthread_rwlock_unlock(&inf->store_lock);
	if (!*ok)
		cJSON_Delete(obj);
	return old;
}

static cJSON *store_remove(struct kube_informer *inf, const char *key)
{
	pthread_rwlock_wrlock(&inf->store_lock);
	cJSON *old = hmap_remove(&inf->objects, key);
	if (old)
		index_remove(inf, key, old);
	pthread_rwlock_unlock(&inf->store_lock);
	return old;
}

static void dispatch_add(struct kube_informer *inf, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_add)
			inf->handlers[i].on_add(inf->handlers[i].ctx, obj);
}

static void dispatch_update(struct kube_informer *inf, const cJSON *old, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_update)
			inf->handlers[i].on_update(inf->handlers[i].ctx, old, obj);
}

static void dispatch_delete(struct kube_informer *inf, const cJSON *obj)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_delete)
			inf->handlers[i].on_delete(inf->handlers[i].ctx, obj);
}

/* Add or update from a watch event or a list item; takes ownership of obj. */
static void apply_upsert(struct kube_informer *inf, cJSON *obj, bool only_if_changed)
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
		bool same = n && strcmp(obj_rv(n->val), obj_rv(obj)) == 0 && *obj_rv(obj);
		pthread_rwlock_unlock(&inf->store_lock);
		if (same) {
			cJSON_Delete(obj);
			return;
		}
	}
	bool ok;
	cJSON *old = store_put(inf, key, obj, &ok);
	if (!ok) {
		klog_error("Informer store: out of memory", " key=%s", key);
		return;
	}
	if (old)
		dispatch_update(inf, old, obj);
	else
		dispatch_add(inf, obj);
	cJSON_Delete(old);
}

static void apply_delete(struct kube_informer *inf, cJSON *obj)
{
	char key[512];
	if (!kube_object_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return;
	}
	cJSON *old = store_remove(inf, key);
	if (old) {
		/* The event carries the object's final state; hand that to handlers. */
		dispatch_delete(inf, obj);
		cJSON_Delete(old);
	}
	cJSON_Delete(obj);
}

/* Replaces the store with a list's items (taking them out of items): adds/updates in list order,
 * then deletes for keys the list no longer has. */
static void apply_replace(struct kube_informer *inf, cJSON *items)
{
	struct hmap seen = {0};
	while (items && items->child) {
		cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
		char key[512];
		if (kube_object_key(it, key, sizeof(key)) && !hmap_find(&seen, key))
			hmap_insert(&seen, key, NULL);
		apply_upsert(inf, it, true);
	}
	/* Collect stale keys under the read lock, then delete one by one. */
	char **stale = NULL;
	size_t nstale = 0;
	pthread_rwlock_rdlock(&inf->store_lock);
	if (inf->objects.n > seen.n)
		stale = calloc(inf->objects.n - seen.n, sizeof(char *));
	for (size_t i = 0; stale && i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next)
			if (!hmap_find(&seen, n->key) && nstale < inf->objects.n - seen.n)
				stale[nstale++] = strdup(n->key);
	pthread_rwlock_unlock(&inf->store_lock);
	for (size_t i = 0; i < nstale; i++) {
		if (!stale[i])
			continue;
		cJSON *old = store_remove(inf, stale[i]);
		if (old) {
			klog_info(4, "Informer: object deleted while not watching", " key=%s", stale[i]);
			dispatch_delete(inf, old);
			cJSON_Delete(old);
		}
		free(stale[i]);
	}
	free(stale);
	hmap_clear(&seen, NULL);
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
	/* Store pointers stay valid outside the lock: only this thread replaces or frees them. */
	pthread_rwlock_rdlock(&inf->store_lock);
	size_t n = inf->objects.n, k = 0;
	const cJSON **objs = calloc(n ? n : 1, sizeof(*objs));
	for (size_t i = 0; objs && i < inf->objects.nb; i++)
		for (struct hnode *h = inf->objects.b[i]; h; h = h->next)
			objs[k++] = h->val;
	pthread_rwlock_unlock(&inf->store_lock);
	for (size_t i = 0; i < k; i++)
		dispatch_update(inf, objs[i], objs[i]);
	free(objs);
}

static int on_watch_event(void *ctx, enum kube_watch_event_type t, cJSON *obj)
{
	struct kube_informer *inf = ctx;
	switch (t) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		apply_upsert(inf, obj, false);
		break;
	case KUBE_WATCH_DELETED:
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

/* LIST and replace the store. Returns 0 or -1. */
static int do_list(struct kube_informer *inf)
{
	cJSON *list = NULL;
	struct kube_error e;
	atomic_fetch_add(&inf->lists, 1);
	if (kube_list(inf->client, inf->path, inf->label_selector, inf->field_selector, &list, &e)) {
		klog_warning("Informer list failed", " path=%s code=%d reason=%s message=\"%s\"", inf->path, e.http_code,
			     e.reason, e.message);
		return -1;
	}
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	if (set_rv(inf, cJSON_IsString(rv) ? rv->valuestring : "")) {
		cJSON_Delete(list);
		return -1;
	}
	apply_replace(inf, cJSON_GetObjectItemCaseSensitive(list, "items"));
	cJSON_Delete(list);
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
		if (kube_watch_new(inf->client, &wo, &w)) {
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
		enum kube_watch_end end = kube_watch_run(w, on_watch_event, inf, &e);
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

static void free_obj(void *v) { cJSON_Delete(v); }

void kube_informer_free(struct kube_informer *inf)
{
	if (!inf)
		return;
	kube_informer_stop(inf);
	hmap_clear(&inf->objects, free_obj);
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

cJSON *kube_store_get(struct kube_informer *inf, const char *key)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *n = hmap_find(&inf->objects, key);
	cJSON *c = n ? cJSON_Duplicate(n->val, 1) : NULL;
	pthread_rwlock_unlock(&inf->store_lock);
	return c;
}

cJSON *kube_store_list(struct kube_informer *inf)
{
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return NULL;
	pthread_rwlock_rdlock(&inf->store_lock);
	for (size_t i = 0; i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next) {
			cJSON *c = cJSON_Duplicate(n->val, 1);
			if (!c) {
				pthread_rwlock_unlock(&inf->store_lock);
				cJSON_Delete(arr);
				return NULL;
			}
			cJSON_AddItemToArray(arr, c);
		}
	pthread_rwlock_unlock(&inf->store_lock);
	return arr;
}

struct copy_ctx {
	cJSON *arr;
	bool oom;
};

static void copy_into(const cJSON *obj, void *u)
{
	struct copy_ctx *c = u;
	cJSON *d = c->oom ? NULL : cJSON_Duplicate(obj, 1);
	if (d)
		cJSON_AddItemToArray(c->arr, d);
	else
		c->oom = true;
}

int kube_store_by_index(struct kube_informer *inf, const char *index, const char *value, cJSON **out)
{
	*out = NULL;
	struct copy_ctx c = { cJSON_CreateArray(), false };
	if (!c.arr)
		return -1;
	if (kube_store_by_index_with(inf, index, value, copy_into, &c) != 0 || c.oom) {
		cJSON_Delete(c.arr);
		return -1;
	}
	*out = c.arr;
	return 0;
}

int kube_store_by_index_with(struct kube_informer *inf, const char *index, const char *value,
			     void (*fn)(const cJSON *obj, void *u), void *u)
{
	struct index *ix = NULL;
	for (size_t i = 0; i < inf->nindexes; i++)
		if (strcmp(inf->indexes[i].name, index) == 0)
			ix = &inf->indexes[i];
	if (!ix)
		return -1;
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *hn = hmap_find(&ix->values, value);
	struct keyset *ks = hn ? hn->val : NULL;
	for (size_t k = 0; ks && k < ks->n; k++) {
		struct hnode *on = hmap_find(&inf->objects, ks->keys[k]);
		if (on)
			fn(on->val, u);
	}
	pthread_rwlock_unlock(&inf->store_lock);
	return 0;
}

size_t kube_store_len(struct kube_informer *inf)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	size_t n = inf->objects.n;
	pthread_rwlock_unlock(&inf->store_lock);
	return n;
}

void kube_store_get_with(struct kube_informer *inf, const char *key, void (*fn)(const cJSON *obj, void *u), void *u)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	struct hnode *n = hmap_find(&inf->objects, key);
	fn(n ? n->val : NULL, u);
	pthread_rwlock_unlock(&inf->store_lock);
}

void kube_store_list_with(struct kube_informer *inf, void (*fn)(const cJSON *obj, void *u), void *u)
{
	pthread_rwlock_rdlock(&inf->store_lock);
	for (size_t i = 0; i < inf->objects.nb; i++)
		for (struct hnode *n = inf->objects.b[i]; n; n = n->next)
			fn(n->val, u);
	pthread_rwlock_unlock(&inf->store_lock);
}
