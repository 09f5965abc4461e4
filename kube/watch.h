/* Streaming watch: GET <list path>?watch=1&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=N,
 * newline-delimited WatchEvents decoded incrementally as bytes arrive, one callback per event,
 * last resourceVersion tracked, a reason for why the stream ended. */
#ifndef KUBE_WATCH_H
#define KUBE_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/jsonspan.h"
#include "kube/rest.h"

enum kube_watch_event_type {
	KUBE_WATCH_ADDED, KUBE_WATCH_MODIFIED, KUBE_WATCH_DELETED, KUBE_WATCH_BOOKMARK, KUBE_WATCH_ERROR,
};
const char *kube_watch_event_type_name(enum kube_watch_event_type);   /* "ADDED", ... */

/* Why kube_watch_run returned. */
enum kube_watch_end {
	KUBE_WATCH_END_CLOSED,     /* server ended the stream before timeoutSeconds: resume from the RV */
	KUBE_WATCH_END_EXPIRED,    /* 410 (Expired/Gone) as HTTP status or ERROR event: relist */
	KUBE_WATCH_END_ERROR,      /* other ERROR event, non-2xx status, decode or transport error (*e) */
	KUBE_WATCH_END_STOPPED,    /* kube_watch_stop() or the callback asked to stop */
	KUBE_WATCH_END_TIMEOUT,    /* the stream lasted timeoutSeconds (server ended it, or our own
				      safety timeout of timeoutSeconds + 30 s fired): resume from the RV */
};
const char *kube_watch_end_name(enum kube_watch_end);

/* Per-event callback. obj is owned by the callee (cJSON_Delete it or keep it); for ERROR it is
 * the Status. Return 0 to continue, non-zero to stop (run returns KUBE_WATCH_END_STOPPED). */
typedef int (*kube_watch_fn)(void *ctx, enum kube_watch_event_type type, cJSON *obj);

/* From inside a kube_watch_fn callback: the event's object exactly as the server sent it (its
 * bytes in the event line, *len long, not NUL-terminated), valid until the callback returns;
 * NULL outside a callback or when the bytes cannot be delimited. */
const char *kube_watch_event_object_json(size_t *len);

/* One event for kube_watch_run_events: its type, its object as the server sent it (json[0..len),
 * not NUL-terminated, valid for the call) and, when the decoder had to parse the event, the
 * object's tree. Lines the decoder can frame without a tree (plain JSON, kube/jsonspan.h
 * kube_json_valid; ADDED, MODIFIED, DELETED, BOOKMARK) come with obj NULL; the others (ERROR,
 * and JSON only cJSON accepts) with obj set and json the same bytes (NULL, len 0, when they
 * cannot be delimited). The callee may take obj (set it NULL); else it is freed after the call.
 * Return 0 to continue, non-zero to stop. */
struct kube_watch_event {
	enum kube_watch_event_type type;
	const char *json;
	size_t len;
	cJSON *obj;
	/* framed events (obj NULL): the members asked for with kube_watch_find or
	 * kube_watch_decoder_find, in that order, found in json (kube/jsonspan.h; their paths start
	 * with "object"); NULL, 0 otherwise */
	const struct kube_json_member *members;
	int nmembers;
};
typedef int (*kube_watch_event_fn)(void *ctx, struct kube_watch_event *ev);

struct kube_watch_opts {
	const char *path;               /* list path, e.g. kube_path("", "v1", "pods", NULL, NULL, NULL) */
	const char *resource_version;   /* start point; NULL/"" = "get state and start" */
	const char *label_selector, *field_selector;   /* raw; NULL = none */
	int timeout_seconds;            /* server-side timeoutSeconds; 0 = omitted */
	bool no_bookmarks;              /* false => allowWatchBookmarks=true */
};

struct kube_watch;   /* one watch; run from one thread, stopped from any */

/* Copies opts. Returns 0 and *out (free with kube_watch_free), -1 on OOM. */
int kube_watch_new(struct kube_client *, const struct kube_watch_opts *, struct kube_watch **out);
/* Opens the stream and calls fn per event until it ends. May be called again after it returns
 * (resumes from kube_watch_resource_version). e may be NULL; filled for END_ERROR/END_EXPIRED. */
enum kube_watch_end kube_watch_run(struct kube_watch *, kube_watch_fn fn, void *ctx, struct kube_error *e);
/* The same, with events as bytes (struct kube_watch_event): no tree for the common event. */
enum kube_watch_end kube_watch_run_events(struct kube_watch *, kube_watch_event_fn fn, void *ctx,
					  struct kube_error *e);
/* Before kube_watch_run_events: as kube_watch_decoder_find (the watch adds its own
 * metadata.resourceVersion). 0 or -1. */
int kube_watch_find(struct kube_watch *, const char *const *const *paths, int npaths);
/* Thread-safe; makes a running (or the next) kube_watch_run return END_STOPPED promptly. */
void kube_watch_stop(struct kube_watch *);
/* Last resourceVersion seen (from any event incl. BOOKMARK), or the start RV. Borrowed; valid
 * until the next run/free. Only read it from the thread that runs the watch. */
const char *kube_watch_resource_version(const struct kube_watch *);
/* Number of events decoded over the watch's life. */
size_t kube_watch_event_count(const struct kube_watch *);
void kube_watch_free(struct kube_watch *);

/* ---- incremental decoder (bytes -> events), exposed for tests and benchmarks ----
 * Splits on '\n', tolerates '\r' and blank lines, buffers partial lines across feeds. */
struct kube_watch_decoder;
struct kube_watch_decoder *kube_watch_decoder_new(void);   /* NULL on OOM */
/* Feeds len bytes; calls fn for each complete event. Returns 0, 1 when fn asked to stop, or -1 on
 * a malformed event (bad JSON / unknown type / missing object; message in *err, caller frees, err
 * may be NULL). */
int kube_watch_decoder_feed(struct kube_watch_decoder *, const char *buf, size_t len,
                            kube_watch_fn fn, void *ctx, char **err);
/* The same for kube_watch_event_fn: events the strict check passes are framed without a tree.
 * Accepts and rejects exactly the lines kube_watch_decoder_feed does, with the same events. */
int kube_watch_decoder_feed_events(struct kube_watch_decoder *, const char *buf, size_t len,
				   kube_watch_event_fn fn, void *ctx, char **err);
/* Members of the object (paths from its top level, as kube_json_find's) that framed events come
 * with, found in the same pass that checks the line; at most KUBE_WATCH_FIND_MAX. paths are
 * copied, their names borrowed (static strings). 0, or -1 (too many, OOM: none then). */
#define KUBE_WATCH_FIND_MAX 24
int kube_watch_decoder_find(struct kube_watch_decoder *, const char *const *const *paths, int npaths);
/* Bytes buffered in an incomplete line. */
size_t kube_watch_decoder_pending(const struct kube_watch_decoder *);
void kube_watch_decoder_free(struct kube_watch_decoder *);

#endif
