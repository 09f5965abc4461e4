/* Informer: a reflector (list, then watch from the list's resourceVersion, resume on disconnect,
 * relist on 410) feeding a thread-safe store keyed "ns/name" (or "name"), with secondary indexes
 * and add/update/delete handlers. One thread per informer.
 *
 * The store keeps each object as its JSON text, not as a cJSON tree (a pod's tree takes ~6 times
 * its text: docs/benchmarks.md, "Informer store"): a watched object as the server sent it (when
 * the transform left it unchanged), else cJSON's compact print. Readers get trees parsed from
 * it, and on_update's old object is parsed from the stored text. The watch hands over each plain
 * object as bytes with the members the store and the text hooks read already found
 * (kube_watch_run_events): a tree is parsed only for a handler set that wants one. An optional
 * transform trims each object before it is stored and handed to handlers (client-go's
 * SetTransform; the scheduler strips metadata.managedFields, cmd/kube-scheduler/app/server.go).
 *
 * Locking: the store (objects, indexes) is guarded by a rwlock; handlers run on the informer
 * thread, in event order, never while that lock is held. */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/jsonspan.h"
#include "kube/rest.h"
#include "kube/text.h"

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

/* From an on_update handler, with the new object it was given: the previous object (borrowed
 * for the call; the new one on a resync, or when parsing it ran out of memory, logged). */
const cJSON *kube_informer_old(struct kube_informer *, const cJSON *new_obj);
/* The same previous object as its stored text, without a parse (caller unrefs): a reference
 * while new_obj is the update being handed out; NULL otherwise (a resync, an add, another
 * object), when kube_informer_old answers. */
struct kube_text *kube_informer_old_text(struct kube_informer *, const cJSON *new_obj);

struct kube_informer_opts { const char *group, *version, *resource, *ns /*NULL all*/;
	const char *label_selector, *field_selector; int resync_seconds; };

/* Copies opts. Returns 0 and *out, or -1 (OOM / missing version or resource). */
int kube_informer_new(struct kube_client *, const struct kube_informer_opts *, struct kube_informer **out);
/* Before start. Several handler sets may be added; each sees every event, in order. */
void kube_informer_add_handlers(struct kube_informer *, const struct kube_informer_handlers *);
/* The same, but on_update gets old_obj NULL and calls kube_informer_old when it needs the
 * previous object: it is parsed from the stored text only then (once per event, shared by the
 * handler sets). */
void kube_informer_add_handlers_old_on_demand(struct kube_informer *, const struct kube_informer_handlers *);
/* A text hook: the new object's stored text of an update (borrowed for the call; kube_text_ref
 * to keep it) and the members the hook asked for, found in it (m[0..npaths), pointers into
 * text; kube/jsonspan.h). true: it handled the update from the text alone (on_update is then not
 * called for this set); false: on_update as usual. */
typedef bool (*kube_informer_text_fn)(void *ctx, struct kube_text *text, const struct kube_json_member *m);
/* The same (old object on demand), and for each update of a stored object first update_text
 * (not on resyncs, nor when the text is not plain JSON). The watch finds the members (paths, a
 * NULL-terminated list of names each; the arrays must outlive the informer) in the pass that
 * checks each event, so when every set of an update takes the text, the informer builds no tree
 * of the object at all and reads it once. */
void kube_informer_add_handlers_with_text(struct kube_informer *, const struct kube_informer_handlers *,
					  kube_informer_text_fn update_text, const char *const *const *paths, int npaths);
/* From an on_add or on_update handler of this informer, with the new object it was given: a
 * reference to the text the store keeps for it (the object's JSON without what the transform
 * removed; caller unrefs), so a consumer that wants the JSON shares it instead of printing a copy.
 * NULL for any other object (the old one, a delete, another informer's). */
struct kube_text *kube_informer_text_of(struct kube_informer *, const cJSON *obj);
/* Before start. fn(obj, u) edits every listed or watched object in place before it is stored
 * and before handlers see it (deleted objects too), and returns whether it changed it. */
void kube_informer_set_transform(struct kube_informer *, bool (*fn)(cJSON *obj, void *u), void *u);
/* A transform: drops metadata.managedFields (upstream's TransformStripManagedFields). Returns
 * whether obj changed (an unchanged watched object is stored as the bytes the server sent). */
bool kube_transform_strip_managed_fields(cJSON *obj, void *u);
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

/* Store reads (thread-safe): trees parsed from the stored text, which the caller frees
 * (cJSON_Delete); the _with variants free them after fn. key = "ns/name" or "name". */
cJSON *kube_store_get(struct kube_informer *, const char *key);      /* NULL when absent */
cJSON *kube_store_list(struct kube_informer *);   /* JSON array, caller frees; NULL on OOM */
/* *out_array: JSON array of copies of the objects whose index function produced value.
 * Returns 0, or -1 for an unknown index / OOM. */
int kube_store_by_index(struct kube_informer *, const char *index, const char *value, cJSON **out_array);
/* fn for every object whose index function produced value, under the read lock (unspecified
 * order; each parsed from the stored text in turn). Returns 0, or -1 for an unknown index or when an
 * object could not be read. fn must not call back into the store. */
int kube_store_by_index_with(struct kube_informer *, const char *index, const char *value,
			     void (*fn)(const cJSON *obj, void *u), void *u);
size_t kube_store_len(struct kube_informer *);
/* fn(obj or NULL when absent (or out of memory, logged), u); the store's lock is not held during
 * fn. */
void kube_store_get_with(struct kube_informer *, const char *key, void (*fn)(const cJSON *obj, void *u), void *u);
/* fn for every object under the read lock (unspecified order; one object parsed at a time). fn
 * must not call back into the store. */
void kube_store_list_with(struct kube_informer *, void (*fn)(const cJSON *obj, void *u), void *u);
/* The stored JSON text of key (caller frees; *len its length when len is not NULL), or
 * NULL when absent / out of memory: for readers that want the text, such as a wire format. */
char *kube_store_get_json(struct kube_informer *, const char *key, size_t *len);
/* Bytes of stored text over all objects (memory accounting, benchmarks). */
size_t kube_store_bytes(struct kube_informer *);

/* The store key of obj ("ns/name" or "name") into buf; returns buf, or NULL when obj has no name
 * or buf is too small. */
char *kube_object_key(const cJSON *obj, char *buf, size_t len);

#endif
