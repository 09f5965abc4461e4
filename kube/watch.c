/* Streaming watch over kube_request_stream: incremental newline-delimited WatchEvent decoding,
 * resourceVersion tracking, 410 detection, prompt stop from another thread. */
#include "kube/watch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/jsonspan.h"
#include "kube/log.h"
#include "kube/util.h"

/* ---------- decoder ---------- */

struct kube_watch_decoder {
	char *buf; size_t len, cap;   /* partial line carried between feeds */
	/* members framed events come with (kube_watch_decoder_find): their paths under "object" */
	const char **paths[KUBE_JSON_FIND_MAX - 2];
	int nfind;
	struct kube_json_member members[KUBE_JSON_FIND_MAX]; /* type, object, then those */
};

struct kube_watch_decoder *kube_watch_decoder_new(void)
{
	return calloc(1, sizeof(struct kube_watch_decoder));
}

static void find_clear(struct kube_watch_decoder *d)
{
	for (int i = 0; i < d->nfind; i++)
		free(d->paths[i]);
	d->nfind = 0;
}

void kube_watch_decoder_free(struct kube_watch_decoder *d)
{
	if (!d)
		return;
	find_clear(d);
	free(d->buf);
	free(d);
}

int kube_watch_decoder_find(struct kube_watch_decoder *d, const char *const *const *paths, int npaths)
{
	find_clear(d);
	if (npaths < 0 || npaths > KUBE_WATCH_FIND_MAX)
		return -1;
	for (int i = 0; i < npaths; i++) {
		int len = 0;
		while (paths[i][len])
			len++;
		/* "object" in front: the decoder searches the event line */
		const char **p = malloc(((size_t)len + 2) * sizeof(*p));
		if (!p) {
			find_clear(d);
			return -1;
		}
		p[0] = "object";
		for (int k = 0; k <= len; k++)
			p[k + 1] = paths[i][k];
		d->paths[i] = p;
		d->members[i + 2].path = p;
		d->nfind = i + 1;
	}
	return 0;
}

size_t kube_watch_decoder_pending(const struct kube_watch_decoder *d) { return d->len; }

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

const char *kube_watch_event_type_name(enum kube_watch_event_type t)
{
	return (unsigned)t < 5 ? type_names[t] : "UNKNOWN";
}

const char *kube_watch_end_name(enum kube_watch_end e)
{
	switch (e) {
	case KUBE_WATCH_END_CLOSED: return "closed";
	case KUBE_WATCH_END_EXPIRED: return "expired";
	case KUBE_WATCH_END_ERROR: return "error";
	case KUBE_WATCH_END_STOPPED: return "stopped";
	case KUBE_WATCH_END_TIMEOUT: return "timeout";
	}
	return "unknown";
}

/* "watch: <msg>: <the start of the offending line>" */
static void set_err(char **err, const char *msg, const char *line, size_t len)
{
	kube_errf(err, "watch: %s: %.*s", msg, len > 80 ? 80 : (int)len, line);
}

/* The line whose event fn is being called with, on this thread (kube_watch_event_object_json). */
static _Thread_local const char *cur_line;
static _Thread_local size_t cur_len;

const char *kube_watch_event_object_json(size_t *len)
{
	return cur_line ? kube_json_member_span(cur_line, cur_len, "object", len) : NULL;
}

/* Where decoded events go: fn (a tree per event), or efn (struct kube_watch_event). */
struct sink {
	kube_watch_fn fn;
	kube_watch_event_fn efn;
	void *ctx;
	struct kube_watch_decoder *d;
};

/* The fast framing of an event line for efn: the line is plain JSON (kube_json_find, which also
 * finds the members asked for), its type a known one other than ERROR and its object an object;
 * then ev holds them and no tree is built. false: leave the line to cJSON (which also gives the
 * errors). */
static bool frame_event(const char *line, size_t len, struct kube_watch_decoder *d, struct kube_watch_event *ev)
{
	static const char *const type_path[] = { "type", NULL }, *const object_path[] = { "object", NULL };
	struct kube_json_member *m = d->members;
	m[0].path = type_path;
	m[1].path = object_path;
	if (!kube_json_find(line, len, m, 2 + d->nfind))
		return false;
	size_t sl;
	const char *ts = kube_json_plain_string(m[0].val.p, m[0].val.len, &sl);
	if (!ts || !m[1].val.p || m[1].val.p[0] != '{')
		return false;
	int t = -1;
	for (int i = 0; i < KUBE_WATCH_ERROR; i++)
		if (strlen(type_names[i]) == sl && memcmp(ts, type_names[i], sl) == 0)
			t = i;
	if (t < 0)
		return false;
	*ev = (struct kube_watch_event){ .type = (enum kube_watch_event_type)t, .json = m[1].val.p, .len = m[1].val.len,
					 .members = m + 2, .nmembers = d->nfind };
	return true;
}

/* Decodes one line. Returns 0, 1 (the sink asked to stop), -1 (malformed). Blank lines are
 * skipped. */
static int decode_line(const char *line, size_t len, const struct sink *sk, char **err)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	size_t start = 0;
	while (start < len && (line[start] == ' ' || line[start] == '\t'))
		start++;
	if (start == len)
		return 0;
	line += start;
	len -= start;
	struct kube_watch_event fev;
	if (sk->efn && frame_event(line, len, sk->d, &fev)) {
		cur_line = line;
		cur_len = len;
		int rc = sk->efn(sk->ctx, &fev) ? 1 : 0;
		cur_line = NULL;
		cJSON_Delete(fev.obj); /* a tree the callee built and left here */
		return rc;
	}
	cJSON *ev = cJSON_ParseWithLength(line, len);
	if (!ev) {
		set_err(err, "invalid JSON", line, len);
		return -1;
	}
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
	int t = -1;
	if (cJSON_IsString(type))
		for (int i = 0; i < 5; i++)
			if (strcmp(type->valuestring, type_names[i]) == 0)
				t = i;
	cJSON *obj = cJSON_DetachItemFromObjectCaseSensitive(ev, "object");
	cJSON_Delete(ev);
	if (t < 0 || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		set_err(err, t < 0 ? "unknown event type" : "event without object", line, len);
		return -1;
	}
	cur_line = line;
	cur_len = len;
	int rc;
	if (sk->efn) {
		struct kube_watch_event e = { .type = (enum kube_watch_event_type)t, .obj = obj };
		e.json = kube_json_member_span(line, len, "object", &e.len);
		if (!e.json)
			e.len = 0;
		rc = sk->efn(sk->ctx, &e) ? 1 : 0;
		cJSON_Delete(e.obj);
	} else {
		rc = sk->fn(sk->ctx, (enum kube_watch_event_type)t, obj) ? 1 : 0;
	}
	cur_line = NULL;
	return rc;
}

static int buf_reserve(struct kube_watch_decoder *d, size_t need)
{
	if (need <= d->cap)
		return 0;
	size_t ncap = d->cap ? d->cap : 4096;
	while (ncap < need)
		ncap *= 2;
	char *nb = realloc(d->buf, ncap);
	if (!nb)
		return -1;
	d->buf = nb;
	d->cap = ncap;
	return 0;
}

static int feed(struct kube_watch_decoder *d, const char *buf, size_t len, const struct sink *sk, char **err)
{
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		if (!nl) {
			/* Incomplete line: keep it for the next feed. */
			if (buf_reserve(d, d->len + (len - pos))) {
				set_err(err, "out of memory", "", 0);
				return -1;
			}
			memcpy(d->buf + d->len, buf + pos, len - pos);
			d->len += len - pos;
			return 0;
		}
		size_t n = (size_t)(nl - (buf + pos));
		int rc;
		if (d->len > 0) {
			if (buf_reserve(d, d->len + n)) {
				set_err(err, "out of memory", "", 0);
				return -1;
			}
			memcpy(d->buf + d->len, buf + pos, n);
			size_t total = d->len + n;
			d->len = 0;
			rc = decode_line(d->buf, total, sk, err);
		} else {
			rc = decode_line(buf + pos, n, sk, err);   /* no copy */
		}
		pos += n + 1;
		if (rc != 0)
			return rc;
	}
	return 0;
}

int kube_watch_decoder_feed(struct kube_watch_decoder *d, const char *buf, size_t len, kube_watch_fn fn,
			    void *ctx, char **err)
{
	return feed(d, buf, len, &(struct sink){ .fn = fn, .ctx = ctx }, err);
}

int kube_watch_decoder_feed_events(struct kube_watch_decoder *d, const char *buf, size_t len,
				   kube_watch_event_fn fn, void *ctx, char **err)
{
	return feed(d, buf, len, &(struct sink){ .efn = fn, .ctx = ctx, .d = d }, err);
}

/* ---------- watch ---------- */

struct kube_watch {
	struct kube_client *client;
	char *path, *label_selector, *field_selector;
	int timeout_seconds;
	bool bookmarks;
	char *rv; size_t rv_cap;
	size_t events;
	atomic_bool stopped;
	struct kube_cancel *cancel;
	/* per run */
	struct kube_watch_decoder *dec;
	kube_watch_fn fn; kube_watch_event_fn efn; void *ctx;   /* one of fn, efn */
	struct kube_error *err;
	enum { RUN_OK, RUN_ERROR_EVENT, RUN_EXPIRED_EVENT, RUN_DECODE_ERROR, RUN_USER_STOP } run_state;
	char *decode_err;
};

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s || !*s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static int set_rv_n(struct kube_watch *w, const char *rv, size_t n)
{
	if (n + 1 > w->rv_cap) {
		char *nb = realloc(w->rv, n + 32);
		if (!nb)
			return -1;
		w->rv = nb;
		w->rv_cap = n + 32;
	}
	memcpy(w->rv, rv, n);
	w->rv[n] = 0;
	return 0;
}

static int set_rv(struct kube_watch *w, const char *rv) { return set_rv_n(w, rv, strlen(rv)); }

int kube_watch_new(struct kube_client *c, const struct kube_watch_opts *o, struct kube_watch **out)
{
	*out = NULL;
	if (!o || !o->path)
		return -1;
	struct kube_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	bool oom = false;
	w->client = c;
	w->path = dup_or_null(o->path, &oom);
	w->label_selector = dup_or_null(o->label_selector, &oom);
	w->field_selector = dup_or_null(o->field_selector, &oom);
	w->timeout_seconds = o->timeout_seconds;
	w->bookmarks = !o->no_bookmarks;
	w->cancel = kube_cancel_new();
	w->dec = kube_watch_decoder_new();
	if (oom || !w->path || !w->cancel || !w->dec || kube_watch_find(w, NULL, 0) ||
	    set_rv(w, o->resource_version ? o->resource_version : "")) {
		kube_watch_free(w);
		return -1;
	}
	atomic_init(&w->stopped, false);
	*out = w;
	return 0;
}

void kube_watch_free(struct kube_watch *w)
{
	if (!w)
		return;
	free(w->path); free(w->label_selector); free(w->field_selector);
	free(w->rv);
	kube_cancel_free(w->cancel);
	kube_watch_decoder_free(w->dec);
	free(w->decode_err);
	free(w);
}

int kube_watch_find(struct kube_watch *w, const char *const *const *paths, int npaths)
{
	static const char *const rv_path[] = { "metadata", "resourceVersion", NULL };
	const char *const *all[KUBE_WATCH_FIND_MAX];
	if (npaths < 0 || npaths + 1 > KUBE_WATCH_FIND_MAX)
		return -1;
	for (int i = 0; i < npaths; i++)
		all[i] = paths[i];
	all[npaths] = rv_path;
	return kube_watch_decoder_find(w->dec, all, npaths + 1);
}

void kube_watch_stop(struct kube_watch *w)
{
	atomic_store(&w->stopped, true);
	kube_cancel_fire(w->cancel);
}

const char *kube_watch_resource_version(const struct kube_watch *w) { return w->rv; }
size_t kube_watch_event_count(const struct kube_watch *w) { return w->events; }

/* The ERROR event's Status (obj): the error, 410 or not. */
static void error_event(struct kube_watch *w, const cJSON *obj)
{
	kube_error_from_status(w->err, 0, obj);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(obj, "reason");
	bool gone = (cJSON_IsNumber(code) && code->valueint == 410) ||
		    (cJSON_IsString(reason) && (strcmp(reason->valuestring, "Expired") == 0 ||
						strcmp(reason->valuestring, "Gone") == 0));
	if (gone && w->err && w->err->http_code == 0)
		w->err->http_code = 410;
	w->run_state = gone ? RUN_EXPIRED_EVENT : RUN_ERROR_EVENT;
}

static int on_event(void *ctx, enum kube_watch_event_type t, cJSON *obj)
{
	struct kube_watch *w = ctx;
	if (atomic_load(&w->stopped)) {
		cJSON_Delete(obj);
		return 1;
	}
	w->events++;
	if (t == KUBE_WATCH_ERROR) {
		error_event(w, obj);
		w->fn(w->ctx, t, obj);
		return 1;   /* the server ends the stream after an ERROR event */
	}
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	if (cJSON_IsString(rv) && *rv->valuestring && set_rv(w, rv->valuestring)) {
		cJSON_Delete(obj);
		return 1;
	}
	if (w->fn(w->ctx, t, obj)) {
		w->run_state = RUN_USER_STOP;
		return 1;
	}
	return 0;
}

/* metadata.resourceVersion of an event's object given as bytes (ev->obj NULL): as on_event
 * reads it from the tree (a non-empty string, else left alone). -1 on OOM. */
static int rv_from_bytes(struct kube_watch *w, const struct kube_watch_event *ev)
{
	static const char *const path[] = { "metadata", "resourceVersion", NULL };
	size_t vl = 0, sl = 0;
	const char *v;
	if (ev->nmembers > 0) { /* kube_watch_find put it last */
		v = ev->members[ev->nmembers - 1].val.p;
		vl = ev->members[ev->nmembers - 1].val.len;
	} else {
		v = kube_json_path_span(ev->json, ev->len, path, &vl);
	}
	const char *p = kube_json_plain_string(v, vl, &sl);
	if (p)
		return sl ? set_rv_n(w, p, sl) : 0;
	if (!v || v[0] != '"')
		return 0;
	cJSON *str = cJSON_ParseWithLength(v, vl); /* a string with escapes */
	int rc = cJSON_IsString(str) && *str->valuestring ? set_rv(w, str->valuestring) : str ? 0 : -1;
	cJSON_Delete(str);
	return rc;
}

static int on_event_ev(void *ctx, struct kube_watch_event *ev)
{
	struct kube_watch *w = ctx;
	if (atomic_load(&w->stopped))
		return 1;
	w->events++;
	if (ev->type == KUBE_WATCH_ERROR) { /* always parsed (frame_event leaves ERROR to cJSON) */
		error_event(w, ev->obj);
		w->efn(w->ctx, ev);
		return 1; /* the server ends the stream after an ERROR event */
	}
	int rc;
	if (ev->obj) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->obj, "metadata");
		const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
		rc = cJSON_IsString(rv) && *rv->valuestring ? set_rv(w, rv->valuestring) : 0;
	} else {
		rc = rv_from_bytes(w, ev);
		if (ev->nmembers > 0)
			ev->nmembers--; /* the caller's members only */
	}
	if (rc)
		return 1;
	if (w->efn(w->ctx, ev)) {
		w->run_state = RUN_USER_STOP;
		return 1;
	}
	return 0;
}

static int on_data(const char *buf, size_t len, void *ctx)
{
	struct kube_watch *w = ctx;
	int rc = w->efn ? kube_watch_decoder_feed_events(w->dec, buf, len, on_event_ev, w, &w->decode_err)
			: kube_watch_decoder_feed(w->dec, buf, len, on_event, w, &w->decode_err);
	if (rc < 0)
		w->run_state = RUN_DECODE_ERROR;
	return rc != 0;
}

static enum kube_watch_end run(struct kube_watch *w, kube_watch_fn fn, kube_watch_event_fn efn, void *ctx,
			       struct kube_error *e)
{
	struct kube_error local;
	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	if (atomic_load(&w->stopped))
		return KUBE_WATCH_END_STOPPED;
	char *rv_enc = kube_urlencode(w->rv);
	char *ls = w->label_selector ? kube_urlencode(w->label_selector) : NULL;
	char *fs = w->field_selector ? kube_urlencode(w->field_selector) : NULL;
	char *query = NULL;
	char tmo[48] = "";
	if (w->timeout_seconds > 0)
		snprintf(tmo, sizeof(tmo), "&timeoutSeconds=%d", w->timeout_seconds);
	int qn = -1;
	if (rv_enc && (!w->label_selector || ls) && (!w->field_selector || fs))
		qn = asprintf(&query, "watch=1%s%s%s%s%s%s%s%s", *rv_enc ? "&resourceVersion=" : "", rv_enc,
			      w->bookmarks ? "&allowWatchBookmarks=true" : "", tmo, ls ? "&labelSelector=" : "",
			      ls ? ls : "", fs ? "&fieldSelector=" : "", fs ? fs : "");
	free(rv_enc);
	free(ls);
	free(fs);
	if (qn < 0) {
		snprintf(e->message, sizeof(e->message), "watch %s: out of memory", w->path);
		return KUBE_WATCH_END_ERROR;
	}
	/* A fresh decoder state per stream: a partial line from a dead stream is garbage. */
	w->dec->len = 0;
	w->fn = fn;
	w->efn = efn;
	w->ctx = ctx;
	w->err = e;
	w->run_state = RUN_OK;
	klog_info(5, "Starting watch", " path=%s resourceVersion=%s", w->path, w->rv);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = kube_request_stream(w->client, w->path, query, on_data, w, w->cancel, e);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	free(query);
	enum kube_watch_end end;
	if (w->run_state == RUN_EXPIRED_EVENT) {
		end = KUBE_WATCH_END_EXPIRED;
	} else if (w->run_state == RUN_ERROR_EVENT) {
		end = KUBE_WATCH_END_ERROR;
	} else if (w->run_state == RUN_DECODE_ERROR) {
		memset(e, 0, sizeof(*e));
		e->http_code = 200;
		snprintf(e->message, sizeof(e->message), "%s", w->decode_err ? w->decode_err : "watch: decode error");
		end = KUBE_WATCH_END_ERROR;
	} else if (w->run_state == RUN_USER_STOP || atomic_load(&w->stopped)) {
		end = KUBE_WATCH_END_STOPPED;
	} else if (rc == -1) {
		if (kube_error_is_gone(e))
			end = KUBE_WATCH_END_EXPIRED;
		else if (e->http_code == 0 && kube_error_is(e, "Timeout") && w->timeout_seconds > 0)
			end = KUBE_WATCH_END_TIMEOUT;
		else
			end = KUBE_WATCH_END_ERROR;
	} else if (rc == -2) {
		end = KUBE_WATCH_END_STOPPED;
	} else if (w->timeout_seconds > 0 && elapsed >= w->timeout_seconds - 0.05) {
		end = KUBE_WATCH_END_TIMEOUT;
	} else {
		end = KUBE_WATCH_END_CLOSED;
	}
	free(w->decode_err);
	w->decode_err = NULL;
	if (w->dec->len > 0 && end == KUBE_WATCH_END_CLOSED)
		klog_info(4, "Watch stream ended inside an event", " path=%s pending_bytes=%zu", w->path, w->dec->len);
	w->dec->len = 0;
	klog_info(5, "Watch ended", " path=%s reason=%s resourceVersion=%s", w->path, kube_watch_end_name(end), w->rv);
	return end;
}

enum kube_watch_end kube_watch_run(struct kube_watch *w, kube_watch_fn fn, void *ctx, struct kube_error *e)
{
	return run(w, fn, NULL, ctx, e);
}

enum kube_watch_end kube_watch_run_events(struct kube_watch *w, kube_watch_event_fn fn, void *ctx, struct kube_error *e)
{
	return run(w, NULL, fn, ctx, e);
}
