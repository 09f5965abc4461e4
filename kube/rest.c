/* REST client: bearer token with token-file rotation, TLS material, token-bucket rate limiting,
 * retries with backoff, Status -> kube_error mapping, request counters, and cancellable
 * streaming GETs for watches. kube_request goes over the persistent HTTP/1.1 connections of
 * kube/rest_conn.c when the client's server allows it (no proxy, no exec-plugin client
 * certificate), else over libcurl like streams and tunnels: a pool of easy handles (keep-alive
 * reuse).
 *
 * Locking: c->mu guards the handle pool, the token cache, the rate limiter and the counters.
 * It is never held across an HTTP transfer or a sleep. */
#include "kube/rest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kube/log.h"
#include "kube/rest_conn.h"
#include "kube/rest_internal.h"
#include "kube/util.h"

#define KUBE_MAX_COUNTERS 64
#define KUBE_POOL_MAX 16
/* client-go's default names the program ("kube-scheduler/v1.34.0 (linux/amd64) ..."): the API
 * server's logs, audit and RBAC tests tell the operator from the scheduler by it. */
#define KUBE_DEFAULT_USER_AGENT_VERSION "schedkit/0.1"

struct kube_client {
	char *server;                  /* without trailing '/' */
	/* kube_client_set_observer: every kube_request attempt's verb, code and latency */
	void (*observe)(void *ctx, const char *verb, int code, double seconds);
	void *observe_ctx;
	/* kube_client_set_detail_observer: sizes, rate-limiter wait and retries of each attempt */
	void (*observe_detail)(void *ctx, const struct kube_request_observation *ob);
	void *observe_detail_ctx;
	char *token, *token_file;
	char *ca_file, *ca_data;
	char *cert_file, *cert_data, *key_file, *key_data;
	bool insecure;
	char *user_agent;
	char *namespace;
	int max_retries;
	int timeout_s;
	struct kube_clock clock;
	struct kube_conn_pool *conns;  /* kube_request's connections; NULL: libcurl carries it */
	char *fixed_head;              /* "User-Agent: ...\r\nAccept: application/json\r\n" */
	size_t fixed_head_len;
	bool curl_only;                /* kube_client_set_curl_only (tests, benchmarks) */

	pthread_mutex_t mu;            /* guards the fields below */
	CURL *pool[KUBE_POOL_MAX]; int npool;
	char *file_token;              /* cached token_file content */
	struct timespec file_mtime; off_t file_size; bool file_loaded;
	struct kube_rate_limiter rl;
	struct kube_request_count counters[KUBE_MAX_COUNTERS]; size_t ncounters;
	unsigned int rand_state;

	struct kube_exec_config *exec; /* copy of the config's plugin, or NULL */
	pthread_mutex_t exec_mu;       /* serialises plugin runs; guards the exec_* cache below */
	bool exec_valid;
	char *exec_token, *exec_cert, *exec_key;
	double exec_expiry;            /* wall clock; 0 = until a 401 */
};

/* Credentials for one request (copies; wiped and freed by creds_free). */
struct creds { char *token, *cert, *key; };

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* ---------- clock ---------- */

static double real_now(void *ctx)
{
	(void)ctx;
	return (double)kube_mono_ns() / 1e9;
}

static void real_sleep(void *ctx, double s)
{
	(void)ctx;
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

void kube_client_set_clock(struct kube_client *c, const struct kube_clock *clock)
{
	c->clock.now = clock && clock->now ? clock->now : real_now;
	c->clock.sleep = clock && clock->sleep ? clock->sleep : real_sleep;
	c->clock.ctx = clock ? clock->ctx : NULL;
	pthread_mutex_lock(&c->mu);
	c->rl.last = c->clock.now(c->clock.ctx);
	pthread_mutex_unlock(&c->mu);
}

/* ---------- rate limiter ---------- */

void kube_rate_limiter_init(struct kube_rate_limiter *rl, double qps, int burst, double now)
{
	rl->qps = qps;
	rl->burst = burst > 0 ? burst : 1;
	rl->tokens = rl->burst;
	rl->last = now;
}

double kube_rate_limiter_reserve(struct kube_rate_limiter *rl, double now)
{
	if (rl->qps <= 0)
		return 0;
	if (now > rl->last) {
		rl->tokens += (now - rl->last) * rl->qps;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last = now;
	}
	rl->tokens -= 1;
	return rl->tokens >= 0 ? 0 : -rl->tokens / rl->qps;
}

/* ---------- client lifecycle ---------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_ALL); }

static int dup_field(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

static char default_ua[160];

static void fill_default_user_agent(void)
{
	snprintf(default_ua, sizeof default_ua, "%s %s",
		 program_invocation_short_name && *program_invocation_short_name ? program_invocation_short_name : "schedkit",
		 KUBE_DEFAULT_USER_AGENT_VERSION);
}

/* "<program> schedkit/0.1", e.g. "schedkit-operator schedkit/0.1". */
static const char *default_user_agent(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, fill_default_user_agent);
	return default_ua;
}

int kube_client_new(const struct kube_config *cfg, struct kube_client **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (!cfg || !cfg->server || !*cfg->server) {
		kube_errf(err, "kube client: config has no server");
		return -1;
	}
	if (strncmp(cfg->server, "http://", 7) != 0 && strncmp(cfg->server, "https://", 8) != 0) {
		kube_errf(err, "kube client: server \"%s\": scheme must be http or https", cfg->server);
		return -1;
	}
	pthread_once(&curl_once, curl_init_once);
	struct kube_client *c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->exec_mu, NULL);
	if (dup_field(&c->server, cfg->server) || dup_field(&c->token, cfg->token) ||
	    dup_field(&c->token_file, cfg->token_file) || dup_field(&c->ca_file, cfg->ca_file) ||
	    dup_field(&c->ca_data, cfg->ca_data) || dup_field(&c->cert_file, cfg->client_cert_file) ||
	    dup_field(&c->cert_data, cfg->client_cert_data) || dup_field(&c->key_file, cfg->client_key_file) ||
	    dup_field(&c->key_data, cfg->client_key_data) ||
	    dup_field(&c->user_agent, cfg->user_agent ? cfg->user_agent : default_user_agent()) ||
	    dup_field(&c->namespace, cfg->namespace ? cfg->namespace : "default"))
		goto oom;
	size_t sl = strlen(c->server);
	while (sl > 0 && c->server[sl - 1] == '/')
		c->server[--sl] = 0;
	c->insecure = cfg->insecure_skip_tls_verify;
	if (cfg->exec && !(c->exec = kube_exec_config_dup(cfg->exec)))
		goto oom;
	c->max_retries = 5;
	c->timeout_s = 60;
	c->rand_state = (unsigned int)time(NULL) ^ (unsigned int)(uintptr_t)c;
	c->clock.now = real_now;
	c->clock.sleep = real_sleep;
	kube_rate_limiter_init(&c->rl, cfg->qps, cfg->burst, real_now(NULL));
	if (asprintf(&c->fixed_head, "User-Agent: %s\r\nAccept: application/json\r\n", c->user_agent) < 0) {
		c->fixed_head = NULL;
		goto oom;
	}
	c->fixed_head_len = strlen(c->fixed_head);
	if (!strpbrk(c->user_agent, "\r\n")) {
		struct kube_conn_tls tls = { .insecure = c->insecure, .ca_file = c->ca_file, .ca_data = c->ca_data,
					     .cert_file = c->cert_file, .cert_data = c->cert_data,
					     .key_file = c->key_file, .key_data = c->key_data };
		c->conns = kube_conn_pool_new(c->server, &tls);   /* NULL: libcurl for everything */
	}
	*out = c;
	return 0;
oom:
	kube_client_free(c);
	kube_errf(err, "kube client: out of memory");
	return -1;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->npool; i++)
		curl_easy_cleanup(c->pool[i]);
	kube_conn_pool_free(c->conns);
	free(c->fixed_head);
	free(c->server); free(c->token); free(c->token_file);
	free(c->ca_file); free(c->ca_data);
	free(c->cert_file); free(c->cert_data); free(c->key_file); free(c->key_data);
	free(c->user_agent); free(c->namespace);
	free(c->file_token);
	kube_exec_config_free(c->exec);
	wipe_free(c->exec_token);
	wipe_free(c->exec_cert);
	wipe_free(c->exec_key);
	pthread_mutex_destroy(&c->exec_mu);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void kube_client_set_max_retries(struct kube_client *c, int n) { c->max_retries = n < 0 ? 0 : n; }
void kube_client_set_timeout(struct kube_client *c, int s) { c->timeout_s = s < 0 ? 0 : s; }
const char *kube_client_namespace(const struct kube_client *c) { return c->namespace; }
void kube_client_set_curl_only(struct kube_client *c, bool curl_only) { c->curl_only = curl_only; }
long kube_client_connections_opened(struct kube_client *c)
{
	return c->conns ? (long)kube_conn_pool_opened(c->conns) : -1;
}

/* ---------- paths and encoding ---------- */

/* One allocation and copies: a binding and an event each build a path per request. */
char *kube_path(const char *group, const char *version, const char *resource, const char *ns,
		const char *name, const char *subresource)
{
	const char *v = version && *version ? version : "v1";
	bool core = !group || !*group;
	/* the pieces in order; NULL pieces are skipped */
	const char *parts[] = {
		core ? "/api/" : "/apis/", core ? NULL : group, core ? NULL : "/", v,
		ns && *ns ? "/namespaces/" : NULL, ns && *ns ? ns : NULL,
		resource && *resource ? "/" : NULL, resource && *resource ? resource : NULL,
		name && *name ? "/" : NULL, name && *name ? name : NULL,
		subresource && *subresource ? "/" : NULL, subresource && *subresource ? subresource : NULL,
	};
	enum { NPARTS = sizeof parts / sizeof parts[0] };
	size_t lens[NPARTS], n = 1;
	for (size_t i = 0; i < NPARTS; i++)
		n += (lens[i] = parts[i] ? strlen(parts[i]) : 0);
	char *p = malloc(n), *w = p;
	if (!p)
		return NULL;
	for (size_t i = 0; i < NPARTS; i++) {
		memcpy(w, parts[i] ? parts[i] : "", lens[i]);
		w += lens[i];
	}
	*w = 0;
	return p;
}

char *kube_urlencode(const char *s)
{
	if (!s)
		return strdup("");
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1);
	if (!out)
		return NULL;
	static const char hex[] = "0123456789ABCDEF";
	char *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = 0;
	return out;
}

const char *kube_patch_content_type(enum kube_patch_type t)
{
	switch (t) {
	case KUBE_PATCH_JSON: return "application/json-patch+json";
	case KUBE_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
	case KUBE_PATCH_MERGE:
	default: return "application/merge-patch+json";
	}
}

/* ---------- errors ---------- */

static const char *reason_for_code(int code)
{
	switch (code) {
	case 400: return "BadRequest";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "NotFound";
	case 405: return "MethodNotAllowed";
	case 406: return "NotAcceptable";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 415: return "UnsupportedMediaType";
	case 422: return "Invalid";
	case 429: return "TooManyRequests";
	case 500: return "InternalError";
	case 503: return "ServiceUnavailable";
	case 504: return "Timeout";
	default: return "";
	}
}

static bool code_retriable(int code)
{
	return code == 429 || (code >= 500 && code != 501 && code != 505);
}

void kube_error_from_status(struct kube_error *e, int http_code, const cJSON *status)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	e->http_code = http_code;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
	if (http_code == 0 && cJSON_IsNumber(code))
		e->http_code = code->valueint;
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(status, "message");
	if (cJSON_IsString(reason) && *reason->valuestring)
		snprintf(e->reason, sizeof(e->reason), "%s", reason->valuestring);
	else
		snprintf(e->reason, sizeof(e->reason), "%s", reason_for_code(e->http_code));
	if (cJSON_IsString(message))
		snprintf(e->message, sizeof(e->message), "%s", message->valuestring);
	else
		snprintf(e->message, sizeof(e->message), "the server responded with HTTP %d", e->http_code);
	e->retriable = code_retriable(e->http_code);
}

void kube_error_from_response(struct kube_error *e, int http_code, const char *body, size_t len)
{
	if (!e)
		return;
	cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
	if (cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0) {
		kube_error_from_status(e, http_code, j);
	} else {
		kube_error_from_status(e, http_code, NULL);
		if (body && len) {
			/* Not a Status: keep the start of the body as the message, like client-go. */
			size_t n = len < sizeof(e->message) - 1 ? len : sizeof(e->message) - 1;
			memcpy(e->message, body, n);
			e->message[n] = 0;
			while (n > 0 && (e->message[n - 1] == '\n' || e->message[n - 1] == '\r'))
				e->message[--n] = 0;
		}
	}
	cJSON_Delete(j);
}

bool kube_error_is(const struct kube_error *e, const char *reason)
{
	return e && reason && strcmp(e->reason, reason) == 0;
}
bool kube_error_is_not_found(const struct kube_error *e)
{
	return e && (kube_error_is(e, "NotFound") || (e->http_code == 404 && !*e->reason));
}
bool kube_error_is_conflict(const struct kube_error *e) { return kube_error_is(e, "Conflict"); }
bool kube_error_is_gone(const struct kube_error *e)
{
	return e && (e->http_code == 410 || kube_error_is(e, "Expired") || kube_error_is(e, "Gone"));
}

static void transport_error(struct kube_error *e, CURLcode rc, const char *errbuf)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	snprintf(e->message, sizeof(e->message), "%s", errbuf && *errbuf ? errbuf : curl_easy_strerror(rc));
	if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(e->reason, sizeof(e->reason), "Timeout");
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_SSL_CIPHER:
		e->retriable = false;
		break;
	default:
		e->retriable = true;
	}
}

/* ---------- counters ---------- */

static void count_request(struct kube_client *c, const char *verb, int code)
{
	pthread_mutex_lock(&c->mu);
	size_t i;
	for (i = 0; i < c->ncounters; i++)
		if (c->counters[i].code == code && strcmp(c->counters[i].verb, verb) == 0)
			break;
	if (i == c->ncounters && c->ncounters < KUBE_MAX_COUNTERS) {
		snprintf(c->counters[i].verb, sizeof(c->counters[i].verb), "%s", verb);
		c->counters[i].code = code;
		c->counters[i].count = 0;
		c->ncounters++;
	}
	if (i < c->ncounters)
		c->counters[i].count++;
	pthread_mutex_unlock(&c->mu);
}

void kube_client_set_observer(struct kube_client *c, void (*fn)(void *ctx, const char *verb, int code, double seconds),
			      void *ctx)
{
	c->observe = fn;
	c->observe_ctx = ctx;
}

void kube_client_set_detail_observer(struct kube_client *c,
				     void (*fn)(void *ctx, const struct kube_request_observation *ob), void *ctx)
{
	c->observe_detail = fn;
	c->observe_detail_ctx = ctx;
}

size_t kube_client_request_counts(struct kube_client *c, struct kube_request_count *out, size_t max)
{
	pthread_mutex_lock(&c->mu);
	size_t n = c->ncounters;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = c->counters[i];
	pthread_mutex_unlock(&c->mu);
	return n;
}

uint64_t kube_client_request_count(struct kube_client *c, const char *verb, int code)
{
	uint64_t n = 0;
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->ncounters; i++)
		if ((!verb || strcasecmp(verb, c->counters[i].verb) == 0) && (code < 0 || code == c->counters[i].code))
			n += c->counters[i].count;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* ---------- token ---------- */

/* Returns a malloc'd copy of the current bearer token or NULL (none / unreadable). */
static char *current_token(struct kube_client *c)
{
	if (!c->token_file)
		return c->token ? strdup(c->token) : NULL;
	struct stat st;
	char *tok = NULL;
	pthread_mutex_lock(&c->mu);
	if (stat(c->token_file, &st) == 0 &&
	    (!c->file_loaded || st.st_mtim.tv_sec != c->file_mtime.tv_sec ||
	     st.st_mtim.tv_nsec != c->file_mtime.tv_nsec || st.st_size != c->file_size)) {
		FILE *f = fopen(c->token_file, "r");
		if (f) {
			char *buf = malloc((size_t)st.st_size + 1);
			size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
			fclose(f);
			if (buf) {
				buf[n] = 0;
				while (n > 0 && isspace((unsigned char)buf[n - 1]))
					buf[--n] = 0;
				free(c->file_token);
				c->file_token = buf;
				c->file_mtime = st.st_mtim;
				c->file_size = st.st_size;
				c->file_loaded = true;
				klog_info(4, "Loaded bearer token file", " path=%s", c->token_file);
			}
		} else {
			klog_warning("Cannot read bearer token file", " path=%s errno=%d", c->token_file, errno);
		}
	}
	if (c->file_token)
		tok = strdup(c->file_token);
	else if (c->token)
		tok = strdup(c->token);
	pthread_mutex_unlock(&c->mu);
	return tok;
}

/* ---------- exec credential plugins ---------- */

static void creds_free(struct creds *cr)
{
	wipe_free(cr->token);
	wipe_free(cr->cert);
	wipe_free(cr->key);
	memset(cr, 0, sizeof(*cr));
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Drops the cached plugin credential if it is still the one a request used (after a 401). */
static void exec_invalidate(struct kube_client *c, const char *used_token)
{
	if (!c->exec)
		return;
	pthread_mutex_lock(&c->exec_mu);
	if (c->exec_valid && (!used_token || !c->exec_token || strcmp(used_token, c->exec_token) == 0))
		c->exec_valid = false;
	pthread_mutex_unlock(&c->exec_mu);
}

/* Credentials for the next request: token file / literal token, or the exec plugin's (run when
 * nothing valid is cached). Returns 0, or -1 with *e when the plugin fails. */
static int get_creds(struct kube_client *c, struct creds *cr, struct kube_error *e)
{
	memset(cr, 0, sizeof(*cr));
	if (!c->exec) {
		cr->token = current_token(c);
		return 0;
	}
	pthread_mutex_lock(&c->exec_mu);
	int rc = 0;
	if (!c->exec_valid || (c->exec_expiry > 0 && wall_now() >= c->exec_expiry)) {
		struct kube_exec_cred cred;
		rc = kube_exec_run(c->exec, c->server, c->insecure, c->ca_data, &cred, e);
		if (rc == 0) {
			wipe_free(c->exec_token);
			wipe_free(c->exec_cert);
			wipe_free(c->exec_key);
			c->exec_token = cred.token;
			c->exec_cert = cred.cert;
			c->exec_key = cred.key;
			c->exec_expiry = cred.expiry;
			c->exec_valid = true;
		}
	}
	if (rc == 0) {
		cr->token = c->exec_token ? strdup(c->exec_token) : NULL;
		cr->cert = c->exec_cert ? strdup(c->exec_cert) : NULL;
		cr->key = c->exec_key ? strdup(c->exec_key) : NULL;
	}
	pthread_mutex_unlock(&c->exec_mu);
	return rc;
}

/* ---------- handles ---------- */

static CURL *handle_get(struct kube_client *c)
{
	CURL *h = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->npool > 0)
		h = c->pool[--c->npool];
	pthread_mutex_unlock(&c->mu);
	if (h) {
		curl_easy_reset(h);   /* keeps live connections and the session cache */
		return h;
	}
	return curl_easy_init();
}

static void handle_put(struct kube_client *c, CURL *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->npool < KUBE_POOL_MAX) {
		c->pool[c->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	if (h)
		curl_easy_cleanup(h);
}

/* Returns the seconds waited (rest_client_rate_limiter_duration_seconds). */
static double rate_limit(struct kube_client *c)
{
	pthread_mutex_lock(&c->mu);
	double wait = kube_rate_limiter_reserve(&c->rl, c->clock.now(c->clock.ctx));
	pthread_mutex_unlock(&c->mu);
	if (wait > 0)
		c->clock.sleep(c->clock.ctx, wait);
	return wait > 0 ? wait : 0;
}

struct buf { char *p; size_t len, cap; };

static int buf_append(struct buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		char *np = realloc(b->p, ncap);
		if (!np)
			return -1;
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

static size_t write_buf(char *data, size_t size, size_t nmemb, void *ud)
{
	return buf_append(ud, data, size * nmemb) ? 0 : size * nmemb;
}

struct hdr_state { double retry_after; };

static size_t header_cb(char *data, size_t size, size_t nmemb, void *ud)
{
	struct hdr_state *hs = ud;
	size_t n = size * nmemb;
	if (n > 12 && strncasecmp(data, "Retry-After:", 12) == 0) {
		char tmp[32];
		size_t vl = n - 12 < sizeof(tmp) - 1 ? n - 12 : sizeof(tmp) - 1;
		memcpy(tmp, data + 12, vl);
		tmp[vl] = 0;
		char *end;
		long v = strtol(tmp, &end, 10);
		if (end != tmp && v >= 0)
			hs->retry_after = (double)v;
	}
	return n;
}

/* Common easy-handle setup: URL, TLS, auth, UA, headers. Returns the header list to free. */
static struct curl_slist *setup_handle(struct kube_client *c, CURL *h, const char *url, const char *method,
				       const char *content_type, bool has_body, char *errbuf, const struct creds *cr)
{
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);    /* a silently dead peer is found in ~2 min */
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (c->ca_data) {
		struct curl_blob blob = {c->ca_data, strlen(c->ca_data), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	} else if (c->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (cr->cert && cr->key) {   /* from an exec plugin */
		struct curl_blob cb = {cr->cert, strlen(cr->cert), CURL_BLOB_COPY};
		struct curl_blob kb = {cr->key, strlen(cr->key), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (c->cert_data) {
		struct curl_blob blob = {c->cert_data, strlen(c->cert_data), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (c->cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
	}
	if (cr->cert && cr->key) {
		/* set above */
	} else if (c->key_data) {
		struct curl_blob blob = {c->key_data, strlen(c->key_data), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (c->key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
	}
	struct curl_slist *hdrs = NULL, *t;
#define ADD_HDR(s) do { t = curl_slist_append(hdrs, (s)); if (!t) goto oom; hdrs = t; } while (0)
	ADD_HDR("Accept: application/json");
	ADD_HDR("Expect:");
	if (has_body) {
		char ct[128];
		snprintf(ct, sizeof(ct), "Content-Type: %s", content_type ? content_type : "application/json");
		ADD_HDR(ct);
	}
	if (cr->token) {
		char *auth = NULL;
		if (asprintf(&auth, "Authorization: Bearer %s", cr->token) < 0)
			auth = NULL;
		if (!auth)
			goto oom;
		t = curl_slist_append(hdrs, auth);
		explicit_bzero(auth, strlen(auth));
		free(auth);
		if (!t)
			goto oom;
		hdrs = t;
	}
#undef ADD_HDR
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	return hdrs;
oom:
	curl_slist_free_all(hdrs);
	return NULL;
}

static char *build_url(struct kube_client *c, const char *path, const char *query)
{
	char *url = NULL;
	if (asprintf(&url, "%s%s%s%s", c->server, path, query && *query ? "?" : "", query && *query ? query : "") < 0)
		return NULL;
	return url;
}

static bool idempotent(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "DELETE") == 0 ||
	       strcmp(method, "HEAD") == 0;
}

static bool failed_before_sending(CURLcode rc, CURL *h)
{
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY)
		return true;
	long sent = 0;
	curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
	return sent == 0 && rc != CURLE_OPERATION_TIMEDOUT;
}

static double backoff_delay(struct kube_client *c, int attempt)
{
	double base = 0.1 * (double)(1u << (attempt < 8 ? attempt : 8));   /* 0.1, 0.2, 0.4 ... 25.6 */
	if (base > 10)
		base = 10;
	pthread_mutex_lock(&c->mu);
	double jitter = (double)rand_r(&c->rand_state) / (double)RAND_MAX;
	pthread_mutex_unlock(&c->mu);
	return base * (1.0 + jitter);   /* jitter factor 1.0, as wait.Backoff with Jitter 1 */
}

/* What one attempt of kube_request came back with, over either transport. */
struct attempt {
	CURLcode rc;                 /* CURLE_OK: an answer with code */
	long code;
	struct buf rb;               /* the answer's body */
	double retry_after;          /* -1 when absent */
	bool before_send;            /* failed before the request went out: safe to retry for any verb */
	char errbuf[CURL_ERROR_SIZE];
};

/* One attempt over libcurl. Returns 0, or -1 when the handle cannot be set up (out of memory). */
static int attempt_curl(struct kube_client *c, const char *url, const char *method, const char *body,
			const char *content_type, const struct creds *cr, struct attempt *a)
{
	CURL *h = handle_get(c);
	struct curl_slist *hdrs = h ? setup_handle(c, h, url, method, content_type, body != NULL, a->errbuf, cr) : NULL;
	if (!hdrs) {
		handle_put(c, h);
		return -1;
	}
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	}
	struct hdr_state hs = {-1};
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_buf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->rb);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &hs);
	if (c->timeout_s > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)c->timeout_s);
	a->rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->code);
	a->before_send = a->rc != CURLE_OK && failed_before_sending(a->rc, h);
	a->retry_after = hs.retry_after;
	curl_slist_free_all(hdrs);
	handle_put(c, h);
	return 0;
}

/* The head of a request over the client's persistent connections: the fixed headers,
 * Content-Type (when there is a body) and the credential, into stack (n bytes) or a malloc'd
 * buffer when it does not fit. NULL on ENOMEM. The caller wipes and frees it (head_free). */
static char *build_head(struct kube_client *c, bool has_body, const char *content_type, const struct creds *cr,
			char *stack, size_t n, size_t *len)
{
	const char *ct = has_body ? (content_type ? content_type : "application/json") : NULL;
	size_t ctl = ct ? strlen(ct) : 0, tl = cr->token ? strlen(cr->token) : 0;
	size_t need = c->fixed_head_len + (ct ? 16 + ctl : 0) + (cr->token ? 24 + tl : 0) + 1;
	char *head = stack;
	if (need > n && !(head = malloc(need)))
		return NULL;
	char *w = head;
	memcpy(w, c->fixed_head, c->fixed_head_len);
	w += c->fixed_head_len;
	if (ct) {
		memcpy(w, "Content-Type: ", 14);
		memcpy(w + 14, ct, ctl);
		memcpy(w + 14 + ctl, "\r\n", 2);
		w += 16 + ctl;
	}
	if (cr->token) {
		memcpy(w, "Authorization: Bearer ", 22);
		memcpy(w + 22, cr->token, tl);
		memcpy(w + 22 + tl, "\r\n", 2);
		w += 24 + tl;
	}
	*len = (size_t)(w - head);
	return head;
}

static void head_free(char *head, size_t len, const char *stack)
{
	if (!head)
		return;
	explicit_bzero(head, len);
	if (head != stack)
		free(head);
}

/* An answer of the persistent connections as an attempt. */
static void attempt_from(struct attempt *a, CURLcode rc, struct kube_conn_response *r)
{
	a->rc = rc;
	a->code = rc == CURLE_OK ? r->code : 0;
	a->retry_after = r->retry_after;
	a->rb.p = r->body;
	a->rb.len = a->rb.cap = r->body_len;
	a->before_send = rc != CURLE_OK &&
			 (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
			  (!r->sent && rc != CURLE_OPERATION_TIMEDOUT));
	snprintf(a->errbuf, sizeof a->errbuf, "%s", r->errbuf);
}

/* One attempt over the client's persistent connections (kube/rest_conn.c). The head is the
 * fixed headers, Content-Type and the credential; it is wiped after use. Returns 0 or -1 (OOM). */
static int attempt_conn(struct kube_client *c, const char *method, const char *path, const char *query,
			const char *body, size_t body_len, const char *content_type, const struct creds *cr,
			struct attempt *a)
{
	char stack[2048];
	size_t hl = 0;
	char *head = build_head(c, body != NULL, content_type, cr, stack, sizeof stack, &hl);
	if (!head)
		return -1;
	struct kube_conn_request q = { .method = method, .path = path, .query = query, .head = head,
				       .head_len = hl, .body = body, .body_len = body_len, .timeout_s = c->timeout_s };
	struct kube_conn_response r;
	CURLcode rc = kube_conn_do(c->conns, &q, &r);
	head_free(head, hl, stack);
	attempt_from(a, rc, &r);
	return 0;
}

int kube_request(struct kube_client *c, const char *method, const char *path, const char *query,
		 const char *body, const char *content_type, cJSON **resp, struct kube_error *e)
{
	if (resp)
		*resp = NULL;
	struct kube_error local;
	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	char *url = NULL;   /* libcurl's, built on first use */
	size_t body_len = body ? strlen(body) : 0;
	int result = -1;
	bool reauthed = false;
	for (int attempt = 0;; attempt++) {
		double rl_wait = rate_limit(c);
		struct attempt a = { .retry_after = -1 };
		struct creds cr;
		if (get_creds(c, &cr, e))
			break;
		/* an exec plugin's client certificate is per credential: libcurl takes it per request; a
		 * token that would break the header block goes the way it always went */
		bool fast = c->conns && !c->curl_only && !(cr.cert && cr.key) && !(cr.token && strpbrk(cr.token, "\r\n"));
		if (!fast && !url && !(url = build_url(c, path, query))) {
			creds_free(&cr);
			snprintf(e->message, sizeof(e->message), "out of memory");
			break;
		}
		double t0 = real_now(NULL);
		int setup = fast ? attempt_conn(c, method, path, query, body, body_len, content_type, &cr, &a)
				 : attempt_curl(c, url, method, body, content_type, &cr, &a);
		if (setup) {
			creds_free(&cr);
			snprintf(e->message, sizeof(e->message), "out of memory");
			break;
		}
		double t1 = real_now(NULL);
		CURLcode rc = a.rc;
		long code = a.code;
		count_request(c, method, rc == CURLE_OK ? (int)code : 0);
		if (c->observe)
			c->observe(c->observe_ctx, method, rc == CURLE_OK ? (int)code : 0, t1 - t0);
		struct kube_request_observation ob = { .verb = method, .code = rc == CURLE_OK ? (int)code : 0,
						       .seconds = t1 - t0, .rate_limiter_seconds = rl_wait,
						       .request_bytes = body_len, .response_bytes = a.rb.len };
		klog_info(6, "HTTP request", " verb=%s path=%s status=%ld latency_ms=%.1f", method, path,
			  rc == CURLE_OK ? code : 0L, (t1 - t0) * 1000);
		double wait = -1;
		if (rc != CURLE_OK) {
			transport_error(e, rc, a.errbuf);
			if (e->retriable && (idempotent(method) || a.before_send))
				wait = backoff_delay(c, attempt);
		} else if (code >= 200 && code < 300) {
			result = 0;
			if (resp && a.rb.len > 0) {
				*resp = cJSON_ParseWithLength(a.rb.p, a.rb.len);
				if (!*resp) {
					result = -1;
					e->http_code = (int)code;
					snprintf(e->message, sizeof(e->message), "%s %s: response body is not valid JSON", method, path);
				}
			}
		} else {
			kube_error_from_response(e, (int)code, a.rb.p, a.rb.len);
			/* A 429 was turned away before being processed: safe to retry for every verb
			 * (client-go retries any verb the server answers with Retry-After). */
			if (e->retriable && (idempotent(method) || code == 429))
				wait = a.retry_after >= 0 ? a.retry_after : backoff_delay(c, attempt);
			if (code == 401 && c->exec && !reauthed) {
				/* The plugin's credential was refused: get a fresh one and try once more
				 * (a 401 means nothing was done, so this is safe for every verb). */
				exec_invalidate(c, cr.token);
				reauthed = true;
				ob.retry = true;
				if (c->observe_detail)
					c->observe_detail(c->observe_detail_ctx, &ob);
				creds_free(&cr);
				free(a.rb.p);
				attempt--;
				continue;
			}
		}
		creds_free(&cr);
		free(a.rb.p);
		ob.retry = !(result == 0 || wait < 0 || attempt >= c->max_retries);
		if (c->observe_detail)
			c->observe_detail(c->observe_detail_ctx, &ob);
		if (!ob.retry)
			break;
		klog_info(4, "Retrying request", " verb=%s path=%s attempt=%d code=%d wait_s=%.2f", method, path,
			  attempt + 1, e->http_code, wait);
		c->clock.sleep(c->clock.ctx, wait);
	}
	free(url);
	return result;
}

/* ---------- requests in a pipeline ---------- */

/* kube_request's handling of one answer, for a pipelined one: counted and observed alike; 0 when
 * it is final (*result set), 1 when kube_request's rules would try it again (after *wait s). */
static int pipelined_answer(struct kube_client *c, struct kube_pipelined *q, struct kube_conn_response *r,
			    double seconds, double rl_wait, const struct creds *cr, double *wait)
{
	struct attempt a = { .retry_after = -1 };
	attempt_from(&a, r->result, r);
	struct kube_error *e = &q->e;
	int code = a.rc == CURLE_OK ? (int)a.code : 0;
	count_request(c, q->method, code);
	if (c->observe)
		c->observe(c->observe_ctx, q->method, code, seconds);
	struct kube_request_observation ob = { .verb = q->method, .code = code, .seconds = seconds,
					       .rate_limiter_seconds = rl_wait,
					       .request_bytes = q->body ? strlen(q->body) : 0, .response_bytes = a.rb.len };
	klog_info(6, "HTTP request", " verb=%s path=%s status=%d latency_ms=%.1f pipelined=true", q->method, q->path, code,
		  seconds * 1000);
	*wait = -1;
	if (a.rc != CURLE_OK) {
		transport_error(e, a.rc, a.errbuf);
		if (e->retriable && (idempotent(q->method) || a.before_send))
			*wait = backoff_delay(c, 0);
	} else if (a.code >= 200 && a.code < 300) {
		q->result = 0;
		if (q->resp && a.rb.len > 0 && !(*q->resp = cJSON_ParseWithLength(a.rb.p, a.rb.len))) {
			q->result = -1;
			e->http_code = code;
			snprintf(e->message, sizeof(e->message), "%s %s: response body is not valid JSON", q->method, q->path);
		}
	} else {
		kube_error_from_response(e, code, a.rb.p, a.rb.len);
		if (e->retriable && (idempotent(q->method) || code == 429))
			*wait = a.retry_after >= 0 ? a.retry_after : backoff_delay(c, 0);
		if (code == 401 && c->exec) {
			exec_invalidate(c, cr->token); /* kube_request fetches a fresh credential */
			*wait = 0;
		}
	}
	free(a.rb.p);
	bool again = *wait >= 0 && (c->max_retries > 0 || code == 401);
	ob.retry = again;
	if (c->observe_detail)
		c->observe_detail(c->observe_detail_ctx, &ob);
	return again ? 1 : 0;
}

void kube_request_pipelined(struct kube_client *c, struct kube_pipelined *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		reqs[i].result = -1;
		memset(&reqs[i].e, 0, sizeof reqs[i].e);
		if (reqs[i].resp)
			*reqs[i].resp = NULL;
	}
	struct creds cr;
	bool fast = false;
	if (n > 1 && c->conns && !c->curl_only && get_creds(c, &cr, &reqs[0].e) == 0) {
		fast = !(cr.cert && cr.key) && !(cr.token && strpbrk(cr.token, "\r\n"));
		if (!fast)
			creds_free(&cr);
	}
	struct kube_conn_request *q = fast ? calloc(n, sizeof *q) : NULL;
	struct kube_conn_response *r = q ? calloc(n, sizeof *r) : NULL;
	char **heads = r ? calloc(n, sizeof *heads) : NULL;
	double *rl = heads ? calloc(n, sizeof *rl) : NULL;
	if (!rl) {
		/* one by one, as kube_request sends them */
		if (fast)
			creds_free(&cr);
		free(q);
		free(r);
		free(heads);
		for (size_t i = 0; i < n; i++)
			reqs[i].result = kube_request(c, reqs[i].method, reqs[i].path, reqs[i].query, reqs[i].body,
						      reqs[i].content_type, reqs[i].resp, &reqs[i].e);
		return;
	}
	size_t built = 0;
	for (; built < n; built++) {
		size_t hl = 0;
		if (!(heads[built] = build_head(c, reqs[built].body != NULL, reqs[built].content_type, &cr, NULL, 0, &hl)))
			break;
		rl[built] = rate_limit(c);
		q[built] = (struct kube_conn_request){ .method = reqs[built].method, .path = reqs[built].path,
						       .query = reqs[built].query, .head = heads[built], .head_len = hl,
						       .body = reqs[built].body,
						       .body_len = reqs[built].body ? strlen(reqs[built].body) : 0,
						       .timeout_s = c->timeout_s };
	}
	double t0 = (double)kube_mono_ns() / 1e9;
	kube_conn_do_pipelined(c->conns, q, built, r);
	for (size_t i = 0; i < built; i++) {
		head_free(heads[i], q[i].head_len, NULL);
		double wait = -1, seconds = (r[i].done > 0 ? r[i].done : (double)kube_mono_ns() / 1e9) - t0;
		if (pipelined_answer(c, &reqs[i], &r[i], seconds, rl[i], &cr, &wait) == 1) {
			klog_info(4, "Retrying request", " verb=%s path=%s attempt=1 code=%d wait_s=%.2f", reqs[i].method,
				  reqs[i].path, reqs[i].e.http_code, wait);
			if (wait > 0)
				c->clock.sleep(c->clock.ctx, wait);
			reqs[i].result = kube_request(c, reqs[i].method, reqs[i].path, reqs[i].query, reqs[i].body,
						      reqs[i].content_type, reqs[i].resp, &reqs[i].e);
		}
	}
	creds_free(&cr);
	for (size_t i = built; i < n; i++) /* a head did not fit in memory: these go one by one */
		reqs[i].result = kube_request(c, reqs[i].method, reqs[i].path, reqs[i].query, reqs[i].body,
					      reqs[i].content_type, reqs[i].resp, &reqs[i].e);
	free(q);
	free(r);
	free(heads);
	free(rl);
}

/* ---------- wrappers ---------- */

int kube_get(struct kube_client *c, const char *path, cJSON **out, struct kube_error *e)
{
	return kube_request(c, "GET", path, NULL, NULL, NULL, out, e);
}

static int body_request(struct kube_client *c, const char *method, const char *path, const cJSON *obj,
			const char *ct, cJSON **out, struct kube_error *e)
{
	char *body = cJSON_PrintUnformatted(obj);
	if (!body) {
		if (out)
			*out = NULL;
		if (e) {
			memset(e, 0, sizeof(*e));
			snprintf(e->message, sizeof(e->message), "%s %s: cannot serialize body", method, path);
		}
		return -1;
	}
	int rc = kube_request(c, method, path, NULL, body, ct, out, e);
	free(body);
	return rc;
}

int kube_create(struct kube_client *c, const char *path, const cJSON *obj, cJSON **out, struct kube_error *e)
{
	return body_request(c, "POST", path, obj, NULL, out, e);
}

int kube_create_text(struct kube_client *c, const char *path, const char *json, cJSON **out, struct kube_error *e)
{
	return kube_request(c, "POST", path, NULL, json, NULL, out, e);
}

int kube_update(struct kube_client *c, const char *path, const cJSON *obj, cJSON **out, struct kube_error *e)
{
	return body_request(c, "PUT", path, obj, NULL, out, e);
}

int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type t, const cJSON *patch, cJSON **out,
	       struct kube_error *e)
{
	return body_request(c, "PATCH", path, patch, kube_patch_content_type(t), out, e);
}

int kube_delete(struct kube_client *c, const char *path, struct kube_error *e)
{
	static const char opts[] = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"Background\"}";
	return kube_request(c, "DELETE", path, NULL, opts, NULL, NULL, e);
}

int kube_list_each(struct kube_client *c, const char *path, const char *label_selector, const char *field_selector,
		   int (*fn)(void *ctx, cJSON *page, bool first), void *ctx, struct kube_error *e)
{
	struct kube_error local;
	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	char *ls = label_selector && *label_selector ? kube_urlencode(label_selector) : NULL;
	char *fsel = field_selector && *field_selector ? kube_urlencode(field_selector) : NULL;
	char *cont = NULL;
	int rc = -1;
	bool paged = true, first = true;
	for (;;) {
		char *query = NULL;
		if (asprintf(&query, "%s%s%s%s%s%s%s", paged ? "limit=500" : "", ls ? "&labelSelector=" : "", ls ? ls : "",
			     fsel ? "&fieldSelector=" : "", fsel ? fsel : "", cont ? "&continue=" : "",
			     cont ? cont : "") < 0)
			break;
		cJSON *page = NULL;
		int r = kube_request(c, "GET", path, query[0] == '&' ? query + 1 : query, NULL, NULL, &page, e);
		free(query);
		bool continued = cont != NULL;
		free(cont);
		cont = NULL;
		if (r != 0 && continued && kube_error_is_gone(e)) {
			/* The continue token outlived the server's history: start over with one
			 * unpaginated list, as client-go's pager does (FullListIfExpired). */
			klog_info(2, "List continuation expired; listing again without paging", " path=%s", path);
			paged = false;
			first = true;
			continue;
		}
		if (r != 0)
			break;
		if (!cJSON_IsObject(page)) {
			cJSON_Delete(page);
			memset(e, 0, sizeof(*e));
			e->http_code = 200;
			snprintf(e->message, sizeof(e->message), "list %s: response is not an object", path);
			break;
		}
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(page, "metadata");
		const cJSON *next = cJSON_GetObjectItemCaseSensitive(meta, "continue");
		if (cJSON_IsString(next) && *next->valuestring)
			cont = kube_urlencode(next->valuestring);
		if (!cJSON_GetObjectItemCaseSensitive(page, "items"))
			cJSON_AddItemToObject(page, "items", cJSON_CreateArray());
		int frc = fn(ctx, page, first);
		cJSON_Delete(page);
		first = false;
		if (frc != 0) {
			memset(e, 0, sizeof(*e));
			snprintf(e->message, sizeof(e->message), "list %s: out of memory", path);
			break;
		}
		if (!cont) {
			rc = 0;
			break;
		}
	}
	free(cont);
	free(ls);
	free(fsel);
	return rc;
}

/* kube_list's page callback: the first page becomes the result, later pages' items move into it.
 * The first page's resourceVersion describes the merged list: upstream serves every page from
 * that snapshot, and a server that reads later pages from newer state makes a watch from the
 * first RV replay (never miss) what changed. */
static int merge_page(void *ctx, cJSON *page, bool first)
{
	cJSON **result = ctx;
	if (first) {
		cJSON_Delete(*result);
		*result = cJSON_Duplicate(page, 0); /* the page without its members */
		if (!*result)
			return -1;
		for (cJSON *m = page->child; m;) {
			cJSON *next = m->next;
			cJSON_AddItemToObject(*result, m->string, cJSON_DetachItemViaPointer(page, m));
			m = next;
		}
		return 0;
	}
	cJSON *items = cJSON_GetObjectItemCaseSensitive(*result, "items");
	cJSON *more = cJSON_GetObjectItemCaseSensitive(page, "items");
	while (more && more->child)
		cJSON_AddItemToArray(items, cJSON_DetachItemViaPointer(more, more->child));
	return 0;
}

int kube_list(struct kube_client *c, const char *path, const char *label_selector, const char *field_selector,
	      cJSON **out, struct kube_error *e)
{
	*out = NULL;
	cJSON *result = NULL;
	if (kube_list_each(c, path, label_selector, field_selector, merge_page, &result, e) != 0) {
		cJSON_Delete(result);
		return -1;
	}
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(result, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "continue");
	*out = result;
	return 0;
}

/* ---------- cancellation and streaming ---------- */

struct kube_cancel {
	pthread_mutex_t mu;   /* guards fired, multi */
	bool fired;
	CURLM *multi;
};

struct kube_cancel *kube_cancel_new(void)
{
	struct kube_cancel *k = calloc(1, sizeof(*k));
	if (k)
		pthread_mutex_init(&k->mu, NULL);
	return k;
}

void kube_cancel_fire(struct kube_cancel *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	k->fired = true;
	if (k->multi)
		curl_multi_wakeup(k->multi);
	pthread_mutex_unlock(&k->mu);
}

void kube_cancel_reset(struct kube_cancel *k)
{
	pthread_mutex_lock(&k->mu);
	k->fired = false;
	pthread_mutex_unlock(&k->mu);
}

bool kube_cancel_fired(const struct kube_cancel *k)
{
	if (!k)
		return false;
	pthread_mutex_lock((pthread_mutex_t *)&k->mu);
	bool f = k->fired;
	pthread_mutex_unlock((pthread_mutex_t *)&k->mu);
	return f;
}

void kube_cancel_free(struct kube_cancel *k)
{
	if (!k)
		return;
	pthread_mutex_destroy(&k->mu);
	free(k);
}

struct stream_state {
	CURL *h;
	int (*on_data)(const char *, size_t, void *);
	void *ctx;
	long code;            /* 0 until known */
	struct buf err_body;  /* non-2xx body */
	bool aborted;
};

static size_t stream_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct stream_state *s = ud;
	size_t n = size * nmemb;
	if (s->code == 0)
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->code);
	if (s->code < 200 || s->code >= 300) {
		if (s->err_body.len < 65536 && buf_append(&s->err_body, data, n))
			return 0;
		return n;
	}
	if (s->on_data(data, n, s->ctx)) {
		s->aborted = true;
		return 0;
	}
	return n;
}

int kube_request_stream(struct kube_client *c, const char *path, const char *query,
			int (*on_data)(const char *buf, size_t len, void *ctx), void *ctx,
			struct kube_cancel *cancel, struct kube_error *e)
{
	struct kube_error local;
	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	if (kube_cancel_fired(cancel))
		return -2;
	rate_limit(c);
	char *url = build_url(c, path, query);
	CURL *h = url ? handle_get(c) : NULL;
	CURLM *multi = h ? curl_multi_init() : NULL;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct creds cr = {0};
	if (multi && get_creds(c, &cr, e)) {
		curl_multi_cleanup(multi);
		handle_put(c, h);
		free(url);
		return -1;
	}
	struct curl_slist *hdrs = multi ? setup_handle(c, h, url, "GET", NULL, false, errbuf, &cr) : NULL;
	if (!hdrs) {
		creds_free(&cr);
		if (multi)
			curl_multi_cleanup(multi);
		handle_put(c, h);
		free(url);
		snprintf(e->message, sizeof(e->message), "out of memory");
		return -1;
	}
	struct stream_state st = {.h = h, .on_data = on_data, .ctx = ctx};
	/* A watch asks the server to end it after timeoutSeconds; give up ourselves a little later in
	 * case the server (or a proxy) never does. */
	const char *ts = query ? strstr(query, "timeoutSeconds=") : NULL;
	if (ts && (ts == query || ts[-1] == '&')) {
		long secs = strtol(ts + 15, NULL, 10);
		if (secs > 0)
			curl_easy_setopt(h, CURLOPT_TIMEOUT, secs + 30);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
	curl_multi_add_handle(multi, h);
	if (cancel) {
		pthread_mutex_lock(&cancel->mu);
		cancel->multi = multi;
		pthread_mutex_unlock(&cancel->mu);
	}
	CURLcode rc = CURLE_OK;
	bool done = false, cancelled = false;
	while (!done) {
		if (kube_cancel_fired(cancel)) {
			cancelled = true;
			break;
		}
		int running = 0;
		CURLMcode mc = curl_multi_perform(multi, &running);
		if (mc != CURLM_OK) {
			rc = CURLE_FAILED_INIT;
			snprintf(errbuf, sizeof(errbuf), "%s", curl_multi_strerror(mc));
			break;
		}
		int nmsg;
		CURLMsg *msg;
		while ((msg = curl_multi_info_read(multi, &nmsg)))
			if (msg->msg == CURLMSG_DONE) {
				rc = msg->data.result;
				done = true;
			}
		if (done || !running) {
			done = true;
			break;
		}
		curl_multi_poll(multi, NULL, 0, 1000, NULL);
	}
	if (cancel) {
		pthread_mutex_lock(&cancel->mu);
		cancel->multi = NULL;
		pthread_mutex_unlock(&cancel->mu);
	}
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(multi, h);
	curl_multi_cleanup(multi);
	curl_slist_free_all(hdrs);
	handle_put(c, h);
	free(url);
	int result;
	if (cancelled || st.aborted) {
		count_request(c, "GET", (int)code);
		result = -2;
	} else if (rc != CURLE_OK) {
		count_request(c, "GET", 0);
		transport_error(e, rc, errbuf);
		if (code >= 200 && code < 300)
			e->http_code = 0;
		result = -1;
	} else if (code < 200 || code >= 300) {
		count_request(c, "GET", (int)code);
		kube_error_from_response(e, (int)code, st.err_body.p, st.err_body.len);
		if (code == 401)
			exec_invalidate(c, cr.token);   /* the next stream runs the plugin again */
		result = -1;
	} else {
		count_request(c, "GET", (int)code);
		result = (int)code;
	}
	free(st.err_body.p);
	creds_free(&cr);
	return result;
}

/* ---------- raw connections (kube/rest_tunnel.c) ---------- */

CURL *kube_client_raw_handle(struct kube_client *c, char **authorization, char **host, struct kube_error *e)
{
	struct creds cr;
	*authorization = *host = NULL;
	if (get_creds(c, &cr, e))
		return NULL;
	char *url = build_url(c, "/", NULL);
	CURL *h = url ? curl_easy_init() : NULL;
	char errbuf[CURL_ERROR_SIZE]; /* setup_handle wants one; unset below, the tunnel sets its own */
	struct curl_slist *hdrs = h ? setup_handle(c, h, url, "GET", NULL, false, errbuf, &cr) : NULL;
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	const char *hs = strstr(c->server, "://");
	hs = hs ? hs + 3 : c->server;
	if (!hdrs || (cr.token && asprintf(authorization, "Bearer %s", cr.token) < 0) || !(*host = strdup(hs))) {
		if (h)
			curl_easy_cleanup(h);
		h = NULL;
		if (*authorization)
			wipe_free(*authorization);
		*authorization = NULL;
		snprintf(e->message, sizeof e->message, "out of memory");
	}
	creds_free(&cr);
	free(url);
	return h;
}
