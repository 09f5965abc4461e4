/* Informer: a reflector (list, then watch from the list's resourceVersion, resume on disconnect,
 * relist on 410) feeding a thread-safe store keyed "ns/name" (or "name"), with secondary indexes
 * and add/update/delete handlers. One thread per informer.
 *
 * Locking: the store (objects, indexes) is guarded by a rwlock; handlers run on the informer
 * thread, in event order, never while that lock is held. */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/rest.h"

struct kube_informer;

/* Objects passed to handlers are borrowed for the duration of the call. on_update is also called
 * with old == new for every stored object on each resync (resync_seconds > 0), as client-go does.
 * Resyncs run on the informer thread between events; the watch's timeoutSeconds is capped at
 * resync_seconds so a quiet watch still returns in time. On relist, on_update is only called for
 * objects whose resourceVersion changed (client-go calls it for all). */
struct kube_informer_handlers {
	void (*on_add)(void *ctx, const cJSON *obj);
	void (*on_update)(void *ctx, const cJSON *old_obj, const cJSON *new_obj);
	void (*on_delete)(void *ctx, const cJSON *obj);   /* incl. deletions discovered on relist */
	void *ctx;
};

struct kube_informer_opts { const char *group, *version, *resource, *ns /*NULL all*/;
	const char *label_selector, *field_selector; int resync_seconds; };

/* Copies opts. Returns 0 and *out, or -1 (OOM / missing version or resource). */
int kube_informer_new(struct kube_client *, const struct kube_informer_opts *, struct kube_informer **out);
/* Before start. Several handler sets may be added; each sees every event, in order. */
void kube_informer_add_handlers(struct kube_informer *, const struct kube_informer_handlers *);
/* Before start. keys() writes up to max_keys borrowed strings (pointing into obj or static) and
 * returns how many. Returns 0, or -1 (OOM, duplicate name, already started). */
int kube_informer_add_index(struct kube_informer *, const char *index_name,
        int (*keys)(const cJSON *obj, const char **out_keys, int max_keys, void *u), void *u);
/* Own thread: list, then watch from list RV, resume from last RV on disconnect with backoff, relist
 * on 410 (diffing the store so deletes missed while disconnected are delivered, and adds/updates
 * too). Returns 0 or -1 (thread creation failed / already started). */
int kube_informer_start(struct kube_informer *);
/* True once the first list has been stored and its handlers called. */
bool kube_informer_has_synced(const struct kube_informer *);
/* Waits up to timeout_ms (< 0 = forever) for has_synced. */
bool kube_informer_wait_for_sync(struct kube_informer *, int timeout_ms);
void kube_informer_stop(struct kube_informer *);   /* joins the thread; idempotent */
void kube_informer_free(struct kube_informer *);   /* stops first; NULL is a no-op */

/* Watch-resume tuning for tests: initial and maximum backoff between failed list/watch attempts
 * (defaults 0.8 s and 30 s, as client-go's reflector), and the server-side watch timeout
 * (default: random 300..600 s). Before start. */
void kube_informer_set_backoff(struct kube_informer *, double initial_s, double max_s);
void kube_informer_set_watch_timeout(struct kube_informer *, int seconds);

/* Counters for tests and metrics: lists performed (initial + relists), watches opened. */
size_t kube_informer_list_count(const struct kube_informer *);
size_t kube_informer_watch_count(const struct kube_informer *);

/* Store reads (thread-safe): results are deep copies the caller frees (cJSON_Delete), or use the
 * _with variant that calls fn under the store's read lock without copying. key = "ns/name" or "name". */
cJSON *kube_store_get(struct kube_informer *, const char *key);      /* NULL when absent */
cJSON *kube_store_list(struct kube_informer *);   /* JSON array, caller frees; NULL on OOM */
/* *out_array: JSON array of copies of the objects whose index function produced value.
 * Returns 0, or -1 for an unknown index / OOM. */
int kube_store_by_index(struct kube_informer *, const char *index, const char *value, cJSON **out_array);
/* fn for every object whose index function produced value, under the read lock, without copying
 * (unspecified order). Returns 0, or -1 for an unknown index. fn must not call back into the store. */
int kube_store_by_index_with(struct kube_informer *, const char *index, const char *value,
			     void (*fn)(const cJSON *obj, void *u), void *u);
size_t kube_store_len(struct kube_informer *);
/* fn(obj or NULL when absent, u) under the read lock. fn must not call back into the store. */
void kube_store_get_with(struct kube_informer *, const char *key, void (*fn)(const cJSON *obj, void *u), void *u);
/* fn for every object under the read lock (unspecified order). */
void kube_store_list_with(struct kube_informer *, void (*fn)(const cJSON *obj, void *u), void *u);

/* The store key of obj ("ns/name" or "name") into buf; returns buf, or NULL when obj has no name
 * or buf is too small. */
char *kube_object_key(const cJSON *obj, char *buf, size_t len);

#endif
