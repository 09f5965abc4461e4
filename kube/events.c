/* events.k8s.io/v1 recorder: bounded queue, one sender thread, client-go style series
 * de-duplication (create, then PATCH series on repeats), periodic refresh of pending counts. */
#include "kube/events.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "kube/hash.h"
#include "kube/jsonw.h"
#include "kube/log.h"
#include "kube/object.h"

#define NOTE_MAX 1024
#define SERIES_EXPIRY_S 360.0   /* client-go forgets series unobserved for 6 minutes */
#define MAX_TRIES 3             /* client-go tries 12 times, 10 s apart, in a goroutine per event;
				   one sender thread must not stall the queue that long */
#define RETRY_SLEEP_S 0.5
#define CACHE_BUCKETS 4096     /* series index; entries expire after SERIES_EXPIRY_S */
#define EVENT_PIPELINE_MAX 16  /* creates sent back to back on one connection (kube_request_pipelined) */

/* One occurrence, in one allocation: the strings live in buf. It is small because the series
 * cache keeps the first occurrence of every series for 6 minutes (one per scheduled pod). */
struct pending {
	double when;                   /* wall clock seconds */
	const char *type, *reason, *action, *note;
	const char *regarding, *related;   /* ObjectReferences as compact JSON; related may be NULL */
	const char *ns, *name;             /* regarding's namespace ("default" when none) and name */
	char buf[];
};

#define KEY_BYTES 16   /* SHA-256 of the isomorphism key, truncated: 2^-128 per pair to collide */

struct cached {
	struct cached *next;           /* all entries, for sweeps */
	struct cached *hnext;          /* same hash bucket */
	uint32_t hash;
	unsigned char key[KEY_BYTES];
	struct pending *first;         /* the first occurrence, to re-create an expired Event */
	char *name, *ns;               /* the Event on the server */
	int count;
	double last_observed;
	bool dirty;                    /* count > 2 not yet PATCHed */
};

struct kube_event_recorder {
	struct kube_client *client;
	char *controller, *instance;

	pthread_mutex_t mu;            /* guards the queue, flush counters, stats, stopping, options */
	pthread_cond_t work;           /* queue non-empty / flush requested / stop */
	pthread_cond_t flushed;
	struct pending **q; size_t qcap, qhead, qlen;
	size_t queue_size;
	double refresh_interval;
	unsigned long flush_req, flush_done;
	struct kube_event_stats stats;
	bool stopping;
	pthread_t thread;

	double last_refresh, last_finish;

	/* sender thread only */
	struct cached *cache;
	struct cached *buckets[CACHE_BUCKETS]; /* index over cache by key hash */
	long long last_name_ns;
};

/* ---------- helpers ---------- */

static void bucket_unlink(struct kube_event_recorder *r, struct cached *c)
{
	for (struct cached **pp = &r->buckets[c->hash % CACHE_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			return;
		}
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


static void pending_free(struct pending *p) { free(p); }

/* Packs the strings (related may be NULL) into one allocation; NULL on OOM. */
static struct pending *pending_new(const char *type, const char *reason, const char *action, const char *note,
				   const char *regarding, const char *related, const char *ns, const char *name)
{
	const char *in[8] = { type, reason, action, note, regarding, related, ns, name };
	size_t len[8], total = 0;
	for (int i = 0; i < 8; i++)
		total += (len[i] = in[i] ? strlen(in[i]) + 1 : 0);
	struct pending *p = malloc(sizeof(*p) + total);
	if (!p)
		return NULL;
	const char **out[8] = { &p->type, &p->reason, &p->action, &p->note, &p->regarding, &p->related, &p->ns, &p->name };
	char *w = p->buf;
	for (int i = 0; i < 8; i++) {
		*out[i] = in[i] ? memcpy(w, in[i], len[i]) : NULL;
		w += len[i];
	}
	p->when = 0;
	return p;
}

static cJSON *object_reference(const cJSON *obj)
{
	if (!obj)
		return NULL;
	cJSON *ref = cJSON_CreateObject();
	if (!ref)
		return NULL;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	static const struct { const char *from; bool meta; const char *to; } fields[] = {
		{"kind", false, "kind"}, {"namespace", true, "namespace"}, {"name", true, "name"},
		{"uid", true, "uid"}, {"apiVersion", false, "apiVersion"}, {"resourceVersion", true, "resourceVersion"},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(fields[i].meta ? meta : obj, fields[i].from);
		if (cJSON_IsString(v) && *v->valuestring && !cJSON_AddStringToObject(ref, fields[i].to, v->valuestring)) {
			cJSON_Delete(ref);
			return NULL;
		}
	}
	return ref;
}

/* Truncates s in place to at most max bytes without splitting a UTF-8 sequence. */
static void truncate_utf8(char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	s[n] = 0;
}

/* ---------- lifecycle ---------- */

static void *sender_main(void *arg);

int kube_event_recorder_new(struct kube_client *c, const char *controller, const char *instance,
			    struct kube_event_recorder **out)
{
	*out = NULL;
	if (!c || !controller || !*controller)
		return -1;
	struct kube_event_recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	r->client = c;
	r->controller = strdup(controller);
	r->instance = strdup(instance && *instance ? instance : controller);
	r->queue_size = 1000;
	r->refresh_interval = 1800;
	r->last_refresh = r->last_finish = wall_now();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->work, NULL);
	pthread_cond_init(&r->flushed, NULL);
	if (!r->controller || !r->instance || pthread_create(&r->thread, NULL, sender_main, r) != 0) {
		free(r->controller);
		free(r->instance);
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->work);
		pthread_cond_destroy(&r->flushed);
		free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void kube_event_recorder_set_queue_size(struct kube_event_recorder *r, size_t n)
{
	pthread_mutex_lock(&r->mu);
	r->queue_size = n > 0 ? n : 1;
	pthread_mutex_unlock(&r->mu);
}

void kube_event_recorder_set_refresh_interval(struct kube_event_recorder *r, double seconds)
{
	pthread_mutex_lock(&r->mu);
	r->refresh_interval = seconds > 0 ? seconds : 1800;
	pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->mu);
}

void kube_event_recorder_stats(struct kube_event_recorder *r, struct kube_event_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->stats;
	pthread_mutex_unlock(&r->mu);
}

void kube_event_recorder_flush(struct kube_event_recorder *r)
{
	pthread_mutex_lock(&r->mu);
	unsigned long want = ++r->flush_req;
	pthread_cond_signal(&r->work);
	while (r->flush_done < want)
		pthread_cond_wait(&r->flushed, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

void kube_event_recorder_free(struct kube_event_recorder *r)
{
	if (!r)
		return;
	kube_event_recorder_flush(r);
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	for (size_t i = 0; i < r->qlen; i++)
		pending_free(r->q[(r->qhead + i) % r->qcap]);
	free(r->q);
	for (struct cached *c = r->cache, *next; c; c = next) {
		next = c->next;
		pending_free(c->first);
		free(c->name); free(c->ns);
		free(c);
	}
	free(r->controller);
	free(r->instance);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->work);
	pthread_cond_destroy(&r->flushed);
	free(r);
}

/* ---------- recording (caller side) ---------- */

static void enqueue(struct kube_event_recorder *r, struct pending *p)
{
	pthread_mutex_lock(&r->mu);
	r->stats.recorded++;
	if (r->qlen >= r->queue_size) {
		r->stats.dropped++;
		pthread_mutex_unlock(&r->mu);
		klog_info(2, "Event dropped: queue full", " reason=%s", p->reason);
		pending_free(p);
		return;
	}
	if (r->qlen == r->qcap) {
		size_t ncap = r->qcap ? r->qcap * 2 : 64;
		struct pending **nq = malloc(ncap * sizeof(*nq));
		if (!nq) {
			r->stats.dropped++;
			pthread_mutex_unlock(&r->mu);
			pending_free(p);
			return;
		}
		for (size_t i = 0; i < r->qlen; i++)
			nq[i] = r->q[(r->qhead + i) % r->qcap];
		free(r->q);
		r->q = nq;
		r->qcap = ncap;
		r->qhead = 0;
	}
	r->q[(r->qhead + r->qlen) % r->qcap] = p;
	r->qlen++;
	pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->mu);
}

static void record_v(struct kube_event_recorder *r, const cJSON *regarding, const cJSON *related, const char *type,
		     const char *reason, const char *action, const char *fmt, va_list ap)
{
	if (!r)
		return;
	struct pending *p = NULL;
	cJSON *reg = object_reference(regarding), *rel = related ? object_reference(related) : NULL;
	char *regs = reg ? cJSON_PrintUnformatted(reg) : NULL, *rels = rel ? cJSON_PrintUnformatted(rel) : NULL;
	char *note = NULL;
	if (vasprintf(&note, fmt ? fmt : "", ap) < 0)
		note = NULL;
	if (note)
		truncate_utf8(note, NOTE_MAX);
	char t[16], re[128], ac[128];
	snprintf(t, sizeof(t), "%s", type ? type : "Normal");
	snprintf(re, sizeof(re), "%s", reason ? reason : "");
	snprintf(ac, sizeof(ac), "%s", action ? action : "");
	const char *rns = reg ? kube_obj_get_string(reg, "namespace") : NULL;
	const char *rname = reg ? kube_obj_get_string(reg, "name") : NULL;
	if (regs && note && (!related || rels))
		p = pending_new(t, re, ac, note, regs, rels, rns && *rns ? rns : "default", rname ? rname : "unknown");
	cJSON_Delete(reg);
	cJSON_Delete(rel);
	free(regs);
	free(rels);
	free(note);
	if (!p)
		goto drop;
	p->when = wall_now();
	enqueue(r, p);
	return;
drop:
	pthread_mutex_lock(&r->mu);
	r->stats.recorded++;
	r->stats.dropped++;
	pthread_mutex_unlock(&r->mu);
}

void kube_event_record(struct kube_event_recorder *r, const cJSON *regarding, const char *type, const char *reason,
		       const char *action, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record_v(r, regarding, NULL, type, reason, action, fmt, ap);
	va_end(ap);
}

void kube_event_record_related(struct kube_event_recorder *r, const cJSON *regarding, const cJSON *related,
			       const char *type, const char *reason, const char *action, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record_v(r, regarding, related, type, reason, action, fmt, ap);
	va_end(ap);
}

/* ---------- sender thread ---------- */

static void count_stat(struct kube_event_recorder *r, uint64_t *field)
{
	pthread_mutex_lock(&r->mu);
	(*field)++;
	pthread_mutex_unlock(&r->mu);
}

/* Isomorphism key as client-go's getKey (v1.34): type, action, reason, reportingController,
 * reportingInstance, regarding, related. The note is not part of it: a repeat with a new note
 * joins the series of the first (whose note stays). The cache keeps its SHA-256 (first
 * KEY_BYTES), not the text. 0, or -1 on OOM. */
static const EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
/* Fetched once: EVP_sha256() in EVP_Digest looks the implementation up again on every call. */
static void sha256_fetch(void) { sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL); }

static int event_key(struct kube_event_recorder *r, const struct pending *p, unsigned char out[KEY_BYTES])
{
	const char *parts[] = { p->type, p->action, p->reason, r->controller, r->instance, p->regarding,
				p->related ? p->related : "" };
	enum { NPARTS = sizeof parts / sizeof parts[0] };
	size_t lens[NPARTS], n = NPARTS - 1;
	for (size_t i = 0; i < NPARTS; i++)
		n += (lens[i] = strlen(parts[i]));
	char stack[2048];
	char *key = n <= sizeof stack ? stack : malloc(n);
	if (!key)
		return -1;
	char *w = key;
	for (size_t i = 0; i < NPARTS; i++) {
		if (i)
			*w++ = '\x1f';
		memcpy(w, parts[i], lens[i]);
		w += lens[i];
	}
	pthread_once(&sha256_once, sha256_fetch);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int ok = sha256_md && EVP_Digest(key, n, md, &mdlen, sha256_md, NULL);
	if (key != stack)
		free(key);
	if (!ok || mdlen < KEY_BYTES)
		return -1;
	memcpy(out, md, KEY_BYTES);
	return 0;
}

static char *events_path(const char *ns, const char *name)
{
	return kube_path("events.k8s.io", "v1", "events", ns, name, NULL);
}

static bool sender_sleep(struct kube_event_recorder *r, double seconds)
{
	(void)r;
	struct timespec ts = {(time_t)seconds, (long)((seconds - floor(seconds)) * 1e9)};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	return false;
}

/* A new Event's name, namespace, path and body (the POST not yet sent). */
struct built_event {
	char *name, *ns, *path, *body;
};

static void built_free(struct built_event *b)
{
	free(b->name);
	free(b->ns);
	free(b->path);
	free(b->body);
	memset(b, 0, sizeof *b);
}

/* Builds the Event for p (with c's series when c has one). 0, or -1 (out of memory). */
static int build_event(struct kube_event_recorder *r, const struct pending *p, const struct cached *c,
		       struct built_event *b)
{
	memset(b, 0, sizeof *b);
	const char *ns = p->ns;
	long long nanos = (long long)(p->when * 1e9);
	if (nanos <= r->last_name_ns)
		nanos = r->last_name_ns + 1;
	r->last_name_ns = nanos;
	if (asprintf(&b->name, "%s.%llx", p->name, nanos) < 0) {
		b->name = NULL;
		return -1;
	}
	char when[40];
	kube_time_micro(when, p->when);
	/* The body as text, members in the order the recorder always sent them; the references are
	 * printed into it as they were recorded, not parsed again. */
	struct kube_jsonw w = {0};
	kube_jsonw_raw(&w, "{\"metadata\":{\"name\":");
	kube_jsonw_str(&w, b->name);
	kube_jsonw_raw(&w, ",\"namespace\":");
	kube_jsonw_str(&w, ns);
	kube_jsonw_raw(&w, "},\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"eventTime\":");
	kube_jsonw_str(&w, when);
	static const char *const keys[] = { ",\"reportingController\":", ",\"reportingInstance\":", ",\"action\":",
					    ",\"reason\":", ",\"note\":", ",\"type\":" };
	const char *vals[] = { r->controller, r->instance, p->action, p->reason, p->note, p->type };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		kube_jsonw_raw(&w, keys[i]);
		kube_jsonw_str(&w, vals[i]);
	}
	kube_jsonw_raw(&w, ",\"regarding\":");
	kube_jsonw_raw(&w, p->regarding);
	if (p->related) {
		kube_jsonw_raw(&w, ",\"related\":");
		kube_jsonw_raw(&w, p->related);
	}
	if (c && c->count >= 2) {
		char last[40];
		kube_time_micro(last, c->last_observed);
		kube_jsonw_raw(&w, ",\"series\":{\"count\":");
		kube_jsonw_int(&w, c->count);
		kube_jsonw_raw(&w, ",\"lastObservedTime\":");
		kube_jsonw_str(&w, last);
		kube_jsonw_raw(&w, "}");
	}
	kube_jsonw_raw(&w, "}");
	b->body = kube_jsonw_finish(&w);
	b->ns = strdup(ns);
	b->path = b->body && b->ns ? events_path(b->ns, NULL) : NULL;
	if (!b->path) {
		built_free(b);
		return -1;
	}
	return 0;
}

/* POSTs b from attempt `from` on (an attempt before it may have reached the server: then
 * AlreadyExists means it did). 0 when the Event exists, else -1 with *e. */
static int post_event(struct kube_event_recorder *r, const struct built_event *b, int from, struct kube_error *e)
{
	for (int attempt = from; attempt < MAX_TRIES; attempt++) {
		if (attempt > 0 && sender_sleep(r, RETRY_SLEEP_S * attempt))
			return -1;
		if (kube_create_text(r->client, b->path, b->body, NULL, e) == 0 ||
		    (attempt > 0 && kube_error_is(e, "AlreadyExists")))
			return 0; /* AlreadyExists: an earlier attempt reached the server after all */
		/* Transport errors and 5xx are worth another try; a rejected event is not. */
		if (!e->retriable)
			return -1;
	}
	return -1;
}

static void warn_unwritten(const struct built_event *b, const struct pending *p, const struct kube_error *e)
{
	klog_warning("Unable to write event", " name=%s reason=%s code=%d err=\"%s\"", b->name, p->reason, e->http_code,
		     e->message);
}

/* POSTs a new Event for p (with c's series when c has one). */
static int create_event(struct kube_event_recorder *r, const struct pending *p, const struct cached *c,
			char **name_out, char **ns_out)
{
	struct built_event b;
	if (build_event(r, p, c, &b))
		return -1;
	struct kube_error e = {0};
	if (post_event(r, &b, 0, &e)) {
		warn_unwritten(&b, p, &e);
		built_free(&b);
		return -1;
	}
	*name_out = b.name;
	*ns_out = b.ns;
	b.name = b.ns = NULL;
	built_free(&b);
	return 0;
}

static int patch_series(struct kube_event_recorder *r, struct cached *c)
{
	char when[40];
	kube_time_micro(when, c->last_observed);
	cJSON *patch = cJSON_CreateObject();
	cJSON *series = cJSON_AddObjectToObject(patch, "series");
	char *path = events_path(c->ns, c->name);
	int rc = -1;
	struct kube_error e = {0};
	if (patch && series && path && cJSON_AddNumberToObject(series, "count", c->count) &&
	    cJSON_AddStringToObject(series, "lastObservedTime", when))
		rc = kube_patch(r->client, path, KUBE_PATCH_STRATEGIC, patch, NULL, &e);
	free(path);
	cJSON_Delete(patch);
	if (rc && kube_error_is_not_found(&e) && c->first) {
		/* The Event expired on the server (TTL): create it again carrying the series. */
		char *name = NULL, *ns = NULL;
		if (create_event(r, c->first, c, &name, &ns) == 0) {
			free(c->name);
			free(c->ns);
			c->name = name;
			c->ns = ns;
			count_stat(r, &r->stats.created);
			c->dirty = false;
			return 0;
		}
		free(name);
	}
	if (rc) {
		klog_warning("Unable to update event series", " name=%s code=%d err=\"%s\"", c->name, e.http_code, e.message);
		count_stat(r, &r->stats.failed);
		c->dirty = true;   /* the count is still owed: the next refresh or flush sends it */
		return -1;
	}
	count_stat(r, &r->stats.patched);
	c->dirty = false;
	return 0;
}

static struct cached *cache_find(struct kube_event_recorder *r, const unsigned char key[KEY_BYTES], uint32_t hash)
{
	for (struct cached *c = r->buckets[hash % CACHE_BUCKETS]; c; c = c->hnext)
		if (c->hash == hash && memcmp(c->key, key, KEY_BYTES) == 0)
			return c;
	return NULL;
}

/* The series of a created Event; takes p, name and ns. */
static void cache_insert(struct kube_event_recorder *r, struct cached *c, struct pending *p,
			 const unsigned char key[KEY_BYTES], uint32_t hash, char *name, char *ns)
{
	count_stat(r, &r->stats.created);
	c->first = p;
	memcpy(c->key, key, KEY_BYTES);
	c->name = name;
	c->ns = ns;
	c->count = 1;
	c->last_observed = p->when;
	c->hash = hash;
	c->next = r->cache;
	r->cache = c;
	c->hnext = r->buckets[hash % CACHE_BUCKETS];
	r->buckets[hash % CACHE_BUCKETS] = c;
}

/* An occurrence of a known series; takes p. */
static void repeat(struct kube_event_recorder *r, struct cached *c, struct pending *p)
{
	c->count++;
	c->last_observed = p->when;
	pending_free(p);
	if (c->count == 2)
		patch_series(r, c);   /* the first repeat starts the series at once */
	else
		c->dirty = true;      /* later ones ride on the refresh (or a flush) */
}

/* Handles one occurrence; takes ownership of p. */
static void process(struct kube_event_recorder *r, struct pending *p)
{
	unsigned char key[KEY_BYTES];
	if (event_key(r, p, key)) {
		count_stat(r, &r->stats.failed);
		pending_free(p);
		return;
	}
	uint32_t hash;
	memcpy(&hash, key, sizeof(hash));
	struct cached *c = cache_find(r, key, hash);
	if (c) {
		repeat(r, c, p);
		return;
	}
	char *name = NULL, *ns = NULL;
	c = calloc(1, sizeof(*c));
	if (!c || create_event(r, p, NULL, &name, &ns)) {
		free(c);
		free(name);
		pending_free(p);
		count_stat(r, &r->stats.failed);
		return;
	}
	cache_insert(r, c, p, key, hash, name, ns);
}

/* ---------- occurrences in a pipeline ---------- */

/* An occurrence of a new series, waiting to be created with the others of its batch. */
struct fresh {
	struct pending *p;
	unsigned char key[KEY_BYTES];
	uint32_t hash;
	struct built_event b;
	struct kube_pipelined req;
};

/* Creates the Events of f[0, n) in one pipeline (kube_request_pipelined), each as
 * create_event would: one that failed and is worth another try goes on alone (post_event,
 * which takes AlreadyExists as done, since the pipelined POST may have reached the server). */
static void create_fresh(struct kube_event_recorder *r, struct fresh *f, int n)
{
	if (n == 0)
		return;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (build_event(r, f[i].p, NULL, &f[i].b)) {
			pending_free(f[i].p);
			count_stat(r, &r->stats.failed);
			continue;
		}
		f[k] = f[i];
		f[k].req = (struct kube_pipelined){ .method = "POST", .path = f[k].b.path, .body = f[k].b.body };
		k++;
	}
	n = k;
	struct kube_pipelined reqs[EVENT_PIPELINE_MAX];
	for (int i = 0; i < n; i++)
		reqs[i] = f[i].req;
	kube_request_pipelined(r->client, reqs, (size_t)n);
	if (n > 1) {
		pthread_mutex_lock(&r->mu);
		r->stats.pipelined += (uint64_t)n;
		pthread_mutex_unlock(&r->mu);
	}
	for (int i = 0; i < n; i++) {
		struct kube_error *e = &reqs[i].e;
		int rc = reqs[i].result;
		if (rc && e->retriable)
			rc = post_event(r, &f[i].b, 1, e);
		struct cached *c = rc ? NULL : calloc(1, sizeof(*c));
		if (!c) {
			if (rc)
				warn_unwritten(&f[i].b, f[i].p, e);
			pending_free(f[i].p);
			count_stat(r, &r->stats.failed);
			built_free(&f[i].b);
			continue;
		}
		cache_insert(r, c, f[i].p, f[i].key, f[i].hash, f[i].b.name, f[i].b.ns);
		f[i].b.name = f[i].b.ns = NULL;
		built_free(&f[i].b);
	}
}

/* Handles the occurrences ps[0, n) in order (takes them): runs of new series go in one
 * pipeline; an occurrence of a known series, or of one earlier in the run, waits for the run. */
static void process_batch(struct kube_event_recorder *r, struct pending **ps, int n)
{
	struct fresh f[EVENT_PIPELINE_MAX];
	int nf = 0;
	for (int i = 0; i < n; i++) {
		struct fresh *x = &f[nf];
		x->p = ps[i];
		if (event_key(r, x->p, x->key)) {
			count_stat(r, &r->stats.failed);
			pending_free(x->p);
			continue;
		}
		memcpy(&x->hash, x->key, sizeof(x->hash));
		bool seen = cache_find(r, x->key, x->hash) != NULL;
		for (int j = 0; j < nf && !seen; j++)
			seen = f[j].hash == x->hash && memcmp(f[j].key, x->key, KEY_BYTES) == 0;
		if (!seen) {
			nf++;
			continue;
		}
		struct pending *p = x->p;
		unsigned char key[KEY_BYTES];
		memcpy(key, x->key, KEY_BYTES);
		uint32_t hash = x->hash;
		create_fresh(r, f, nf);
		nf = 0;
		struct cached *c = cache_find(r, key, hash);
		if (c)
			repeat(r, c, p);
		else
			process(r, p); /* its run's create failed: this one starts the series */
	}
	create_fresh(r, f, nf);
}

/* all: PATCH every dirty series (refresh, flush). Otherwise only finish series unobserved for
 * SERIES_EXPIRY_S (PATCH their final count). With expire, forget entries unobserved that long. */
static void sweep(struct kube_event_recorder *r, bool all, bool expire)
{
	double now = wall_now();
	for (struct cached **pp = &r->cache; *pp;) {
		struct cached *c = *pp;
		bool old = now - c->last_observed > SERIES_EXPIRY_S;
		if (c->dirty && (all || old))
			patch_series(r, c);
		if (expire && old && !c->dirty) {
			*pp = c->next;
			bucket_unlink(r, c);
			pending_free(c->first);
			free(c->name); free(c->ns);
			free(c);
			continue;
		}
		pp = &c->next;
	}
}

static void *sender_main(void *arg)
{
	struct kube_event_recorder *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (r->qlen > 0) {
			/* what is queued, up to a pipeline's worth: one round trip for a burst */
			struct pending *ps[EVENT_PIPELINE_MAX];
			int n = 0;
			while (r->qlen > 0 && n < EVENT_PIPELINE_MAX) {
				ps[n++] = r->q[r->qhead];
				r->qhead = (r->qhead + 1) % r->qcap;
				r->qlen--;
			}
			pthread_mutex_unlock(&r->mu);
			if (n == 1)
				process(r, ps[0]);
			else
				process_batch(r, ps, n);
			pthread_mutex_lock(&r->mu);
			continue;
		}
		if (r->flush_done < r->flush_req) {
			unsigned long target = r->flush_req;
			pthread_mutex_unlock(&r->mu);
			sweep(r, true, false);
			pthread_mutex_lock(&r->mu);
			r->flush_done = target;
			pthread_cond_broadcast(&r->flushed);
			continue;
		}
		if (r->stopping)
			break;
		double now = wall_now();
		double refresh_due = r->last_refresh + r->refresh_interval, finish_due = r->last_finish + SERIES_EXPIRY_S;
		if (now >= refresh_due || now >= finish_due) {
			bool all = now >= refresh_due;
			if (all)
				r->last_refresh = now;
			r->last_finish = now;
			pthread_mutex_unlock(&r->mu);
			sweep(r, all, true);
			pthread_mutex_lock(&r->mu);
			continue;
		}
		double due = fmin(refresh_due, finish_due);
		struct timespec ts = {(time_t)due, (long)((due - floor(due)) * 1e9)};
		pthread_cond_timedwait(&r->work, &r->mu, &ts);   /* CLOCK_REALTIME, as due is wall time */
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}
