/* REST client for the Kubernetes API: path building, one-shot requests with retries (over
 * persistent HTTP/1.1 connections, libcurl where a proxy or an exec-plugin certificate needs it),
 * Status -> kube_error mapping, bearer tokens (rotating token files), TLS (CA, client certs),
 * a token-bucket rate limiter, per-verb/code request counters, and a streaming primitive that
 * kube/watch.c builds on. Everything here is thread-safe unless stated. */
#ifndef KUBE_REST_H
#define KUBE_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/config.h"

struct kube_client;  /* thread-safe; holds a pool of keep-alive connections for kube_request and one of
                        curl easy handles (streams, fallback), token cache, token-bucket rate
                        limiter (qps/burst) */

struct kube_error { int http_code; char reason[64]; char message[512]; bool retriable; };
	/* from the API's Status object (reason e.g. "NotFound", "Conflict", "AlreadyExists", "Expired",
	   "Gone"); on transport errors http_code 0 and the curl error text (reason "Timeout" when the
	   request timed out, else ""). When the body is not a
	   Status, reason is derived from the HTTP code as client-go does (404 -> "NotFound", ...).
	   retriable: the request could be retried as is (transport error, 429, 5xx). */

/* Credentials: the bearer token comes from cfg->token_file when readable (re-read whenever its
 * mtime or size changes: service-account token rotation), else cfg->token. With cfg->exec the
 * plugin is run for a token or client certificate, cached until its expirationTimestamp; a 401
 * drops it, and kube_request then runs the plugin again and retries once. Tokens are never logged.
 *
 * Creates a client. Copies what it needs from cfg. Returns 0 and *out, or -1 and *err
 * (caller frees; err may be NULL). Free with kube_client_free (NULL is a no-op). */
int kube_client_new(const struct kube_config *cfg, struct kube_client **out, char **err);
void kube_client_free(struct kube_client *);

/* Retries after the first attempt (default 5). */
void kube_client_set_max_retries(struct kube_client *, int max_retries);

/* Injectable clock for the rate limiter and retry backoff (tests). now returns monotonic seconds;
 * sleep sleeps (or advances a fake clock by) the given seconds. NULL functions restore the real
 * ones. Set before the client is shared between threads. */
struct kube_clock {
	double (*now)(void *ctx);
	void (*sleep)(void *ctx, double seconds);
	void *ctx;
};
void kube_client_set_clock(struct kube_client *, const struct kube_clock *clock);

/* Per-request timeout for kube_request (seconds, default 60; 0 = none). Not applied to streams. */
void kube_client_set_timeout(struct kube_client *, int seconds);

/* The default namespace from the config the client was built from (borrowed). */
const char *kube_client_namespace(const struct kube_client *);

/* Path builder: group "" or NULL -> /api/v1, else /apis/<group>/<version>; ns NULL -> cluster-scoped
 * or all namespaces; name/subresource optional. Caller frees; NULL on OOM. */
char *kube_path(const char *group, const char *version, const char *resource, const char *ns,
                const char *name, const char *subresource);

/* Percent-encodes everything but unreserved characters (A-Z a-z 0-9 - _ . ~). Caller frees. */
char *kube_urlencode(const char *s);

/* One request. method GET/POST/PUT/PATCH/DELETE; query "a=b&c=d" or NULL (values you pass must
 * already be URL-encoded; use kube_urlencode()); body may be NULL; content_type NULL = json.
 * On 2xx returns 0 and *resp (parsed JSON, NULL for an empty body; caller frees; resp may be NULL
 * to discard). On error returns -1 and fills *e (e may be NULL).
 * Retries with exponential backoff + jitter on connection errors, 429 (honouring Retry-After
 * seconds) and 5xx — only for idempotent verbs (GET/PUT/DELETE; never POST/PATCH unless the
 * connection failed before sending, or the answer was 429: the server turned it away unprocessed)
 * up to max_retries. */
int kube_request(struct kube_client *, const char *method, const char *path, const char *query,
                 const char *body, const char *content_type, cJSON **resp, struct kube_error *e);

/* Several requests written back to back on one persistent connection and answered in order
 * (HTTP/1.1 pipelining): one round trip and one wake-up of each side for all of them instead of
 * one each (the event recorder's creates). Each gets kube_request's outcome in result (0 or -1)
 * and e, its answer in *resp when resp is set; each is counted, observed and rate limited as
 * kube_request's. An answer kube_request would retry (a connection error before the request
 * went out, 429, a 5xx for an idempotent verb, 401 with an exec plugin) is sent again through
 * kube_request; a request the server may have received when the connection died is not sent
 * again unless its verb is idempotent. Without the persistent client (libcurl only, a client
 * certificate from an exec plugin) or for one request they go one by one through kube_request. */
struct kube_pipelined {
	const char *method, *path, *query, *body, *content_type; /* as kube_request's */
	cJSON **resp;            /* NULL: the answer is dropped */
	int result;              /* out */
	struct kube_error e;     /* out */
};
void kube_request_pipelined(struct kube_client *, struct kube_pipelined *reqs, size_t n);

/* Convenience wrappers taking cJSON bodies (same return convention, *out caller-owned): */
int kube_get(struct kube_client *, const char *path, cJSON **out, struct kube_error *e);
/* Follows limit/continue pages (limit 500) and merges items into the first page's object,
 * keeping the first page's metadata.resourceVersion (the snapshot every page is read from).
 * When a continue token has expired (410), lists once more without paging (client-go's pager). Selectors are raw (encoded here); NULL = none. */
int kube_list(struct kube_client *, const char *path, const char *label_selector, const char *field_selector,
              cJSON **out, struct kube_error *e);
/* The same pages one at a time, for callers that need not hold the whole list (the informer):
 * fn(ctx, page, first) for each page object (items always present; the page is freed after fn,
 * which may detach members); first is true on the first page and again when the listing starts
 * over unpaginated after an expired continue token (the callee then discards what it kept).
 * Returns 0, or -1 with *e (a failed request, or fn returned non-zero: "out of memory"). */
int kube_list_each(struct kube_client *, const char *path, const char *label_selector, const char *field_selector,
                   int (*fn)(void *ctx, cJSON *page, bool first), void *ctx, struct kube_error *e);
int kube_create(struct kube_client *, const char *path, const cJSON *obj, cJSON **out, struct kube_error *e);
/* kube_create with a body the caller already holds as JSON text (no cJSON tree, no printing;
 * the binder's Binding, the event recorder's Events). out NULL: the answer is not parsed (its
 * code still decides, and an error's Status is still mapped into *e). */
int kube_create_text(struct kube_client *, const char *path, const char *json, cJSON **out, struct kube_error *e);
int kube_update(struct kube_client *, const char *path, const cJSON *obj, cJSON **out, struct kube_error *e);
enum kube_patch_type { KUBE_PATCH_MERGE, KUBE_PATCH_JSON, KUBE_PATCH_STRATEGIC };
int kube_patch(struct kube_client *, const char *path, enum kube_patch_type, const cJSON *patch, cJSON **out, struct kube_error *e);
int kube_delete(struct kube_client *, const char *path, struct kube_error *e);

/* Content-Type for a patch type ("application/merge-patch+json", ...). Static string. */
const char *kube_patch_content_type(enum kube_patch_type);

/* Convenience predicates on a filled kube_error. */
bool kube_error_is(const struct kube_error *e, const char *reason);   /* reason equality */
bool kube_error_is_not_found(const struct kube_error *e);
bool kube_error_is_conflict(const struct kube_error *e);               /* reason Conflict */
bool kube_error_is_gone(const struct kube_error *e);                   /* 410 Expired or Gone */

/* Fills e from an HTTP code and a response body (a Status when it parses as one). Exposed for
 * tests and for kube/watch.c (ERROR events carry a Status). body may be NULL. */
void kube_error_from_status(struct kube_error *e, int http_code, const cJSON *status);
void kube_error_from_response(struct kube_error *e, int http_code, const char *body, size_t len);

/* ---- request counters (metrics hooks) ---- */
struct kube_request_count { char verb[8]; int code; uint64_t count; };  /* code 0 = transport error */
/* Copies up to max counters into out; returns the number of distinct (verb, code) pairs seen
 * (may exceed max). Counts every HTTP attempt, retries included. */
size_t kube_client_request_counts(struct kube_client *, struct kube_request_count *out, size_t max);
/* fn is called after every attempt of kube_request (not streams) with the verb, the HTTP code (0:
 * transport error) and the latency in seconds, on the requesting thread (rest_client_* metrics).
 * Set before the client is shared between threads. */
void kube_client_set_observer(struct kube_client *, void (*fn)(void *ctx, const char *verb, int code, double seconds),
			      void *ctx);
/* One attempt of kube_request as the rest_client_* histograms and retry counter see it. */
struct kube_request_observation {
	const char *verb;            /* the method, "GET", ... */
	int code;                    /* the HTTP code, 0: transport error */
	double seconds;              /* the attempt's latency */
	double rate_limiter_seconds; /* waited in the client-side rate limiter before the attempt */
	size_t request_bytes;        /* request body (0 without one) */
	size_t response_bytes;       /* response body received */
	bool retry;                  /* another attempt follows (after a retriable error or a refreshed credential) */
};
/* fn is called once after every attempt of kube_request (not streams), on the requesting thread.
 * Set before the client is shared between threads; NULL removes it. */
void kube_client_set_detail_observer(struct kube_client *,
				     void (*fn)(void *ctx, const struct kube_request_observation *ob), void *ctx);
/* Count of attempts for one verb (NULL = any) and code (-1 = any). */
uint64_t kube_client_request_count(struct kube_client *, const char *verb, int code);

/* ---- rate limiter (token bucket, client-go flowcontrol semantics) ----
 * Exposed so its math can be tested with a fake clock. qps <= 0 disables limiting. */
struct kube_rate_limiter { double qps; double burst; double tokens; double last; };
void kube_rate_limiter_init(struct kube_rate_limiter *rl, double qps, int burst, double now);
/* Takes one token; returns how many seconds the caller must wait before proceeding (0 = now).
 * Tokens may go negative: reservations queue up as client-go's Wait does. Not thread-safe. */
double kube_rate_limiter_reserve(struct kube_rate_limiter *rl, double now);

/* ---- streaming (used by kube/watch.c) ---- */

/* Cancellation token for a running stream: kube_cancel_fire() from any thread makes the stream
 * return promptly (it wakes the transfer; no polling delay). Reusable after kube_cancel_reset. */
struct kube_cancel;
struct kube_cancel *kube_cancel_new(void);       /* NULL on OOM */
void kube_cancel_fire(struct kube_cancel *);
void kube_cancel_reset(struct kube_cancel *);
bool kube_cancel_fired(const struct kube_cancel *);
void kube_cancel_free(struct kube_cancel *);

/* GET path?query and hand body bytes to on_data as they arrive (2xx only). on_data returns 0 to
 * continue, non-zero to abort the transfer. No retries; counts against the rate limiter.
 * Returns: the HTTP status (2xx) when the body ended (server closed / complete);
 *          -1 on error with *e filled (non-2xx: Status mapped; transport: http_code 0);
 *          -2 when cancelled via cancel or aborted by on_data.
 * cancel may be NULL. */
int kube_request_stream(struct kube_client *, const char *path, const char *query,
                        int (*on_data)(const char *buf, size_t len, void *ctx), void *ctx,
                        struct kube_cancel *cancel, struct kube_error *e);

#endif
