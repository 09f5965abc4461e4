/* Health/metrics/configz HTTP server on libwebsockets: one lws context with one vhost, serviced
 * by a thread of its own. Requests are dispatched to an exact-path route table that is built
 * before start and read-only afterwards, so the service thread needs no lock to read it.
 * Only srv->stop is shared between threads (atomic; lws_cancel_service wakes the loop). */
#include "kube/httpserver.h"
#include "kube/httpserver_ws.h"

#include <arpa/inet.h>
#include <errno.h>
#include <cjson/cJSON.h>
#include <openssl/ssl.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/log.h"
#include "kube/metrics.h"
#include "kube/util.h"

#define TEXT_PLAIN "text/plain; charset=utf-8"
#define WRITE_CHUNK 16384
#define MAX_QUERY 4096

struct route {
	char *method;
	char *path;
	kube_http_handler_fn fn;
	void *ctx;
};

struct health_check {
	char *name;
	kube_health_check_fn fn;
	void *ctx;
};

struct health_endpoint {
	const char *name; /* "healthz", "livez", "readyz" */
	struct health_check **checks; /* borrowed from srv->checks */
	int n;
};

/* A request waiting for the guard. Owned by the guard queue, then by the done list; freed on the
 * service thread. pss is the connection's state while it is open (NULL once it closed). */
struct guard_job {
	struct guard_job *next;
	struct pss *pss;
	void *ws;  /* a WebSocket connection waiting for the guard (httpws.c); NULL for HTTP */
	struct lws *wsi;
	char method[32];
	char *path, *query, *authorization;
	int status;
	char msg[512];
};

struct kube_http_server {
	char *name;
	struct lws_context *ctx;
	struct lws_protocols protocols[3]; /* http, the WebSocket channel's (httpws.c), end */
	struct kube_ws_channel *ws;
	int port;
	pthread_t thread;
	bool started, joined;
	atomic_bool stop;

	/* Written before start only; read-only while the thread runs. */
	struct route *routes;
	int nroutes, cap_routes;
	struct health_check **checks;
	int nchecks;
	struct health_endpoint health[3];
	bool health_used;

	/* The guard (kube_http_set_guard): set before start. gmu guards gtodo, gdone and gstop;
	 * gcv wakes the guard thread. */
	kube_http_guard_fn guard;
	void *guard_ctx;
	char **open_paths;
	pthread_mutex_t gmu;
	pthread_cond_t gcv;
	struct guard_job *gtodo, *gtodo_tail, *gdone;
	bool gstop, gthread_running;
	pthread_t gthread;
};

/* Per-connection state: a response deferred until the guard decided (job, then deferred), and
 * the body being written. */
struct pss {
	char *body; /* owned copy or static */
	size_t len, off;
	bool owned;
	struct guard_job *job;
	bool deferred, dhead;
	struct kube_http_response dresp;
	char dallow[128];
};

static const char *health_names[3] = {"healthz", "livez", "readyz"};

static void lws_log_to_klog(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	if (level & LLL_ERR)
		klog_error("libwebsockets", " msg=\"%.*s\"", (int)n, line);
	else
		klog_warning("libwebsockets", " msg=\"%.*s\"", (int)n, line);
}

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static void set_lws_logging(void)
{
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_to_klog);
}

/* ---- responses ---- */

void kube_http_respond(struct kube_http_response *resp, int status, const char *content_type, const char *body)
{
	if (!resp)
		return;
	if (resp->body_owned)
		free((char *)resp->body);
	resp->status = status;
	resp->content_type = content_type;
	resp->body = body;
	resp->body_len = body ? strlen(body) : 0;
	resp->body_owned = false;
}

void kube_http_respondf(struct kube_http_response *resp, int status, const char *content_type, const char *fmt,
			...)
{
	if (!resp)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		kube_http_respond(resp, 500, TEXT_PLAIN, "out of memory\n");
		return;
	}
	kube_http_respond(resp, status, content_type, NULL);
	resp->body = s;
	resp->body_len = (size_t)n;
	resp->body_owned = true;
}

/* ---- route table ---- */

static int add_route(struct kube_http_server *srv, const char *method, const char *path, kube_http_handler_fn fn,
		     void *ctx)
{
	if (srv->nroutes == srv->cap_routes) {
		int cap = srv->cap_routes ? srv->cap_routes * 2 : 16;
		struct route *r = realloc(srv->routes, (size_t)cap * sizeof(*r));
		if (!r)
			return -1;
		srv->routes = r;
		srv->cap_routes = cap;
	}
	struct route *r = &srv->routes[srv->nroutes];
	r->method = strdup(method);
	r->path = strdup(path);
	r->fn = fn;
	r->ctx = ctx;
	if (!r->method || !r->path) {
		free(r->method);
		free(r->path);
		return -1;
	}
	srv->nroutes++;
	return 0;
}

int kube_http_route(struct kube_http_server *srv, const char *method, const char *path, kube_http_handler_fn fn,
		    void *ctx)
{
	if (!srv || !method || !path || !fn)
		return -1;
	if (srv->started) {
		klog_error("HTTP route registered after start", " server=\"%s\" path=\"%s\"", srv->name, path);
		return -1;
	}
	if (add_route(srv, method, path, fn, ctx) != 0) {
		klog_error("Out of memory registering HTTP route", " server=\"%s\" path=\"%s\"", srv->name, path);
		return -1;
	}
	return 0;
}

/* ---- health endpoints ---- */

/* True when the query has argument `name` (with or without a value), as Go's
 * r.URL.Query()[name] presence test. */
static bool query_has(const char *query, const char *name, const char **value, size_t *value_len, const char **next)
{
	size_t nl = strlen(name);
	const char *p = *next ? *next : query;
	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len >= nl && strncmp(p, name, nl) == 0 && (len == nl || p[nl] == '=')) {
			if (value) {
				*value = len == nl ? p + len : p + nl + 1;
				*value_len = len == nl ? 0 : len - nl - 1;
			}
			*next = end ? end + 1 : p + len;
			return true;
		}
		p = end ? end + 1 : NULL;
	}
	*next = p ? p : "";
	return false;
}

#define MAX_EXCLUDES 32

struct arg_value {
	const char *v;
	size_t len;
};

static bool arg_equals(const struct arg_value *a, const char *s)
{
	return a->len == strlen(s) && strncmp(a->v, s, a->len) == 0;
}

static int arg_cmp(const void *x, const void *y)
{
	const struct arg_value *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = strncmp(a->v, b->v, n);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Collects the ?exclude= values (at most MAX_EXCLUDES). */
static int collect_excludes(const char *query, struct arg_value *out)
{
	const char *next = NULL;
	int n = 0;
	while (n < MAX_EXCLUDES && query_has(query, "exclude", &out[n].v, &out[n].len, &next)) {
		n++;
		if (!*next)
			break;
	}
	return n;
}

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap : 256;
		while (cap <= b->len + (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

static void health_root(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	const struct health_endpoint *ep = ctx;
	const char *q = req->query;
	struct sbuf out = {0}, logbuf = {0};
	bool failed = false;
	struct arg_value ex[MAX_EXCLUDES];
	int nex = collect_excludes(q, ex);
	for (int i = 0; i < ep->n; i++) {
		const struct health_check *c = ep->checks[i];
		bool skip = false;
		for (int k = 0; k < nex && !skip; k++)
			skip = arg_equals(&ex[k], c->name);
		if (skip) {
			sb_printf(&out, "[+]%s excluded: ok\n", c->name);
			continue;
		}
		char reason[512] = "";
		if (c->fn && c->fn(c->ctx, reason, sizeof(reason)) != 0) {
			reason[sizeof(reason) - 1] = 0;
			sb_printf(&out, "[-]%s failed: reason withheld\n", c->name);
			/* One log line: checks separated by "; ", not newlines. */
			sb_printf(&logbuf, "%s[-]%s failed: %s", logbuf.len ? "; " : "", c->name,
				  reason[0] ? reason : "unknown");
			failed = true;
		} else {
			sb_printf(&out, "[+]%s ok\n", c->name);
		}
	}
	/* Excludes that match no check: a warning line, names sorted and unique (upstream's set). */
	qsort(ex, (size_t)nex, sizeof(ex[0]), arg_cmp);
	struct sbuf unknown = {0};
	for (int k = 0; k < nex; k++) {
		if (k > 0 && arg_cmp(&ex[k], &ex[k - 1]) == 0)
			continue;
		bool known = false;
		for (int i = 0; i < ep->n && !known; i++)
			known = arg_equals(&ex[k], ep->checks[i]->name);
		if (!known)
			sb_printf(&unknown, "%s\"%.*s\"", unknown.len ? "," : "", (int)ex[k].len, ex[k].v);
	}
	if (unknown.len) {
		sb_printf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", unknown.p);
		klog_warning("Cannot exclude some health checks, no health checks are installed matching",
			     " checks=%s", unknown.p);
	}
	free(unknown.p);
	if (out.oom || logbuf.oom) {
		free(out.p);
		free(logbuf.p);
		kube_http_respond(resp, 500, TEXT_PLAIN, "out of memory\n");
		return;
	}
	if (failed) {
		klog_info(2, "Health check failed", " endpoint=%s checks=\"%s\"", ep->name, logbuf.p ? logbuf.p : "");
		sb_printf(&out, "%s check failed\n", ep->name);
		free(logbuf.p);
		kube_http_respondf(resp, 500, TEXT_PLAIN, "%s", out.p ? out.p : "");
		free(out.p);
		return;
	}
	free(logbuf.p);
	const char *nx = NULL;
	if (!query_has(q, "verbose", NULL, NULL, &nx)) {
		free(out.p);
		kube_http_respond(resp, 200, TEXT_PLAIN, "ok");
		return;
	}
	sb_printf(&out, "%s check passed\n", ep->name);
	kube_http_respondf(resp, 200, TEXT_PLAIN, "%s", out.p ? out.p : "");
	free(out.p);
}

static void health_single(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	const struct health_check *c = ctx;
	char reason[512] = "";
	if (c->fn && c->fn(c->ctx, reason, sizeof(reason)) != 0) {
		reason[sizeof(reason) - 1] = 0;
		kube_http_respondf(resp, 500, TEXT_PLAIN, "internal server error: %s\n", reason[0] ? reason : "unknown");
		return;
	}
	kube_http_respond(resp, 200, TEXT_PLAIN, "ok");
}

int kube_http_add_check(struct kube_http_server *srv, int endpoints, const char *name, kube_health_check_fn fn,
			void *ctx)
{
	if (!srv || !name || !*name || strchr(name, '/'))
		return -1;
	if (srv->started) {
		klog_error("Health check registered after start", " server=\"%s\" check=\"%s\"", srv->name, name);
		return -1;
	}
	/* srv->checks owns every check from the moment it exists, so no error path leaks it. */
	struct health_check **all = realloc(srv->checks, ((size_t)srv->nchecks + 1) * sizeof(*all));
	if (!all)
		goto oom;
	srv->checks = all;
	struct health_check *c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	srv->checks[srv->nchecks++] = c;
	if (!(c->name = strdup(name)))
		goto oom;
	c->fn = fn;
	c->ctx = ctx;
	for (int e = 0; e < 3; e++) {
		if (!(endpoints & (1 << e)))
			continue;
		struct health_endpoint *ep = &srv->health[e];
		struct health_check **l = realloc(ep->checks, ((size_t)ep->n + 1) * sizeof(*l));
		if (!l)
			goto oom;
		ep->checks = l;
		ep->checks[ep->n++] = c;
	}
	srv->health_used = true;
	return 0;
oom:
	klog_error("Out of memory registering health check", " server=\"%s\" check=\"%s\"", srv->name, name);
	return -1;
}

int kube_http_add_health(struct kube_http_server *srv, const char *name, kube_health_check_fn fn, void *ctx)
{
	return kube_http_add_check(srv, KUBE_HEALTH_ALL, name, fn, ctx);
}

/* Installs /healthz, /livez, /readyz and their per-check paths; endpoints without checks get
 * "ping" as upstream's InstallPathHandler does. */
static int install_health_routes(struct kube_http_server *srv)
{
	for (int e = 0; e < 3; e++) {
		struct health_endpoint *ep = &srv->health[e];
		if (ep->n == 0 && kube_http_add_check(srv, 1 << e, "ping", NULL, NULL) != 0)
			return -1;
		char path[300];
		snprintf(path, sizeof(path), "/%s", ep->name);
		if (add_route(srv, "GET", path, health_root, ep) != 0)
			return -1;
		for (int i = 0; i < ep->n; i++) {
			snprintf(path, sizeof(path), "/%s/%s", ep->name, ep->checks[i]->name);
			if (add_route(srv, "GET", path, health_single, ep->checks[i]) != 0)
				return -1;
		}
	}
	return 0;
}

static void metrics_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	char *text = kube_metrics_render(ctx);
	if (!text) {
		kube_http_respond(resp, 500, TEXT_PLAIN, "out of memory\n");
		return;
	}
	kube_http_respond(resp, 200, KUBE_METRICS_CONTENT_TYPE, NULL);
	resp->body = text;
	resp->body_len = strlen(text);
	resp->body_owned = true;
}

int kube_http_add_metrics(struct kube_http_server *srv, struct kube_metrics_registry *registry)
{
	if (!srv || !registry)
		return -1;
	return kube_http_route(srv, "GET", "/metrics", metrics_handler, registry);
}

/* ---- dispatch ---- */

static void dispatch(struct kube_http_server *srv, const struct kube_http_request *req,
		     struct kube_http_response *resp, char *allow, size_t allow_len)
{
	bool head = strcmp(req->method, "HEAD") == 0;
	bool path_known = false;
	allow[0] = 0;
	for (int i = 0; i < srv->nroutes; i++) {
		const struct route *r = &srv->routes[i];
		if (strcmp(r->path, req->path) != 0)
			continue;
		path_known = true;
		if (strcmp(r->method, req->method) == 0 || (head && strcmp(r->method, "GET") == 0)) {
			r->fn(req, resp, r->ctx);
			return;
		}
		size_t l = strlen(allow);
		snprintf(allow + l, allow_len - l, "%s%s", l ? ", " : "", r->method);
		if (strcmp(r->method, "GET") == 0 && !strstr(allow, "HEAD")) {
			l = strlen(allow);
			snprintf(allow + l, allow_len - l, ", HEAD");
		}
	}
	if (path_known)
		kube_http_respond(resp, 405, TEXT_PLAIN, "Method Not Allowed\n");
	else
		kube_http_respond(resp, 404, TEXT_PLAIN, "404 page not found\n");
}

static const char *method_name(struct lws *wsi, int mi, char *buf, int buflen)
{
	switch (mi) {
	case LWSHUMETH_GET:
		return "GET";
	case LWSHUMETH_POST:
		return "POST";
	case LWSHUMETH_OPTIONS:
		return "OPTIONS";
	case LWSHUMETH_PUT:
		return "PUT";
	case LWSHUMETH_PATCH:
		return "PATCH";
	case LWSHUMETH_DELETE:
		return "DELETE";
	case LWSHUMETH_CONNECT:
		return "CONNECT";
	case LWSHUMETH_HEAD:
		return "HEAD";
	case LWSHUMETH_COLON_PATH: /* HTTP/2: the method is a pseudo-header */
		if (lws_hdr_copy(wsi, buf, buflen, WSI_TOKEN_HTTP_COLON_METHOD) > 0)
			return buf;
		return "GET";
	}
	return "UNKNOWN";
}

static void pss_release(struct pss *pss)
{
	if (!pss)
		return;
	if (pss->owned)
		free(pss->body);
	pss->body = NULL;
	pss->owned = false;
	pss->len = pss->off = 0;
}

static int send_response(struct lws *wsi, struct pss *pss, bool head, struct kube_http_response *r, const char *allow);
static int guard_enqueue(struct kube_http_server *srv, struct lws *wsi, struct pss *pss,
			 const struct kube_http_request *req, const char *authz);

/* Returns -1 to close the connection. */
static int serve_request(struct kube_http_server *srv, struct lws *wsi, struct pss *pss, const char *in, size_t len)
{
	char *uri_ptr = NULL;
	int uri_len = 0;
	char method_buf[32];
	int mi = lws_http_get_uri_and_method(wsi, &uri_ptr, &uri_len);
	const char *method = method_name(wsi, mi, method_buf, sizeof(method_buf));

	char *path = strndup(in ? in : "/", in ? len : 1);
	char query[MAX_QUERY];
	query[0] = 0;
	size_t ql = 0;
	for (int frag = 0;; frag++) {
		char arg[1024];
		int n = lws_hdr_copy_fragment(wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, frag);
		if (n < 0)
			break;
		if (ql + (size_t)n + 2 >= sizeof(query))
			break;
		if (ql)
			query[ql++] = '&';
		memcpy(query + ql, arg, (size_t)n);
		ql += (size_t)n;
		query[ql] = 0;
	}
	if (!path)
		return -1;
	/* An HTTP/2 :path still carries the query; keep the path part only. */
	char *qm = strchr(path, '?');
	if (qm)
		*qm = 0;

	struct kube_http_request req = {method, path, query};
	if (srv->guard) {
		char authz[8192];
		authz[0] = 0;
		if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
		    lws_hdr_copy(wsi, authz, sizeof authz, WSI_TOKEN_HTTP_AUTHORIZATION) < 0)
			authz[0] = 0;
		if (authz[0] || !kube_http_path_matches((const char *const *)srv->open_paths, path)) {
			int rc = guard_enqueue(srv, wsi, pss, &req, authz);
			free(path);
			return rc;
		}
	}
	struct kube_http_response resp = {.status = 200, .content_type = TEXT_PLAIN};
	char allow[128];
	dispatch(srv, &req, &resp, allow, sizeof(allow));
	free(path);
	return send_response(wsi, pss, strcmp(method, "HEAD") == 0, &resp, allow);
}

/* Sends the status line and headers of resp and stages its body (written on WRITEABLE). */
static int send_response(struct lws *wsi, struct pss *pss, bool head, struct kube_http_response *r, const char *allow)
{
	struct kube_http_response resp = *r;
	if (resp.status < 100 || resp.status > 999)
		resp.status = 500;
	if (!resp.content_type)
		resp.content_type = TEXT_PLAIN;
	if (!resp.body)
		resp.body_len = 0;

	unsigned char hbuf[LWS_PRE + 2048];
	unsigned char *start = &hbuf[LWS_PRE], *p = start, *end = &hbuf[sizeof(hbuf) - 1];
	if (lws_add_http_common_headers(wsi, (unsigned int)resp.status, resp.content_type,
					(lws_filepos_t)resp.body_len, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
					(const unsigned char *)"nosniff", 7, &p, end) ||
	    (allow[0] && lws_add_http_header_by_name(wsi, (const unsigned char *)"allow:",
						     (const unsigned char *)allow, (int)strlen(allow), &p, end)) ||
	    lws_finalize_write_http_header(wsi, start, &p, end)) {
		if (resp.body_owned)
			free((char *)resp.body);
		return -1;
	}
	if (head || resp.body_len == 0) {
		if (resp.body_owned)
			free((char *)resp.body);
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	}
	pss->body = (char *)resp.body;
	pss->owned = resp.body_owned;
	pss->len = resp.body_len;
	pss->off = 0;
	lws_callback_on_writable(wsi);
	return 0;
}

static int write_body(struct lws *wsi, struct pss *pss)
{
	if (!pss->body)
		return 0;
	unsigned char buf[LWS_PRE + WRITE_CHUNK];
	size_t n = pss->len - pss->off;
	if (n > WRITE_CHUNK)
		n = WRITE_CHUNK;
	/* TLS and HTTP/2: lws takes at most its service buffer (4096 bytes) per write there, and an
	 * HTTP/2 DATA frame stays within the stream's credit; larger writes were cut short. */
	if (lws_get_network_wsi(wsi) != wsi || lws_is_ssl(wsi)) {
		lws_fileofs_t credit = lws_get_peer_write_allowance(wsi);
		if (credit == 0) {
			lws_callback_on_writable(wsi);
			return 0;
		}
		if (credit > 0 && (size_t)credit < n)
			n = (size_t)credit;
		if (n > 4096)
			n = 4096;
	}
	bool last = pss->off + n == pss->len;
	memcpy(buf + LWS_PRE, pss->body + pss->off, n);
	if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n) {
		pss_release(pss);
		return -1;
	}
	pss->off += n;
	if (last) {
		pss_release(pss);
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	}
	lws_callback_on_writable(wsi);
	return 0;
}

/* ---- the guard (kube_http_set_guard) ---- */

static void strv_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

bool kube_http_path_matches(const char *const *paths, const char *path)
{
	for (int i = 0; paths && paths[i]; i++) {
		size_t n = strlen(paths[i]);
		if (n && paths[i][n - 1] == '*' ? strncmp(paths[i], path, n - 1) == 0 : strcmp(paths[i], path) == 0)
			return true;
	}
	return false;
}

int kube_http_set_guard(struct kube_http_server *srv, kube_http_guard_fn fn, void *ctx, const char *const *open_paths)
{
	if (!srv || srv->started || !fn)
		return -1;
	int n = 0;
	while (open_paths && open_paths[n])
		n++;
	char **v = calloc((size_t)n + 1, sizeof *v);
	if (!v)
		return -1;
	for (int i = 0; i < n; i++)
		if (!(v[i] = strdup(open_paths[i]))) {
			strv_free(v);
			return -1;
		}
	strv_free(srv->open_paths);
	srv->open_paths = v;
	srv->guard = fn;
	srv->guard_ctx = ctx;
	return 0;
}

static void guard_job_free(struct guard_job *j)
{
	if (!j)
		return;
	free(j->path);
	free(j->query);
	free(j->authorization);
	free(j);
}

/* Hands j to the guard thread. */
static void guard_push(struct kube_http_server *srv, struct guard_job *j)
{
	pthread_mutex_lock(&srv->gmu);
	if (srv->gtodo_tail)
		srv->gtodo_tail->next = j;
	else
		srv->gtodo = j;
	srv->gtodo_tail = j;
	pthread_cond_signal(&srv->gcv);
	pthread_mutex_unlock(&srv->gmu);
}

static int guard_enqueue(struct kube_http_server *srv, struct lws *wsi, struct pss *pss,
			 const struct kube_http_request *req, const char *authz)
{
	struct guard_job *j = calloc(1, sizeof *j);
	if (!j || !(j->path = strdup(req->path)) || !(j->query = strdup(req->query)) ||
	    !(j->authorization = strdup(authz))) {
		guard_job_free(j);
		return -1;
	}
	snprintf(j->method, sizeof j->method, "%s", req->method);
	j->pss = pss;
	j->wsi = wsi;
	if (pss->job)
		pss->job->pss = NULL;
	pss->job = j;
	guard_push(srv, j);
	return 0;
}

static void *guard_main(void *arg)
{
	struct kube_http_server *srv = arg;
	pthread_mutex_lock(&srv->gmu);
	for (;;) {
		while (!srv->gstop && !srv->gtodo)
			pthread_cond_wait(&srv->gcv, &srv->gmu);
		if (srv->gstop)
			break;
		struct guard_job *j = srv->gtodo;
		srv->gtodo = j->next;
		if (!srv->gtodo)
			srv->gtodo_tail = NULL;
		pthread_mutex_unlock(&srv->gmu);
		j->msg[0] = 0;
		j->status = srv->guard(srv->guard_ctx, j->method, j->path, j->authorization, j->msg, sizeof j->msg);
		if (j->status != 0 && j->status != 401 && j->status != 403)
			j->status = 403;
		pthread_mutex_lock(&srv->gmu);
		j->next = srv->gdone;
		srv->gdone = j;
		lws_cancel_service(srv->ctx);
	}
	pthread_mutex_unlock(&srv->gmu);
	return NULL;
}

/* A v1 Status body as upstream's filters answer (responsewriters.ErrorNegotiated). */
static char *status_body(int code, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", "Status");
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(o, "status", "Failure");
	cJSON_AddStringToObject(o, "message", msg);
	cJSON_AddStringToObject(o, "reason", code == 401 ? "Unauthorized" : "Forbidden");
	if (code == 403)
		cJSON_AddObjectToObject(o, "details");
	cJSON_AddNumberToObject(o, "code", code);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Service thread: answers the requests the guard decided (their connections still open). */
static void guard_complete(struct kube_http_server *srv)
{
	pthread_mutex_lock(&srv->gmu);
	struct guard_job *done = srv->gdone;
	srv->gdone = NULL;
	pthread_mutex_unlock(&srv->gmu);
	while (done) {
		struct guard_job *j = done;
		done = j->next;
		struct pss *pss = j->pss;
		if (j->ws) {
			kube_ws_guard_done(j->ws, j->status, j->msg[0] ? j->msg : j->status == 401 ? "Unauthorized" : "forbidden");
		} else if (pss) {
			pss->job = NULL;
			struct kube_http_request req = {j->method, j->path, j->query};
			struct kube_http_response resp = {.status = 200, .content_type = TEXT_PLAIN};
			pss->dallow[0] = 0;
			if (j->status == 0) {
				dispatch(srv, &req, &resp, pss->dallow, sizeof pss->dallow);
			} else {
				char *b = status_body(j->status, j->msg[0] ? j->msg : j->status == 401 ? "Unauthorized" : "forbidden");
				kube_http_respond(&resp, j->status, "application/json", NULL);
				resp.body = b;
				resp.body_len = b ? strlen(b) : 0;
				resp.body_owned = b != NULL;
			}
			pss->dresp = resp;
			pss->dhead = strcmp(j->method, "HEAD") == 0;
			pss->deferred = true;
			lws_callback_on_writable(j->wsi);
		}
		guard_job_free(j);
	}
}

static int guard_start(struct kube_http_server *srv)
{
	if (!srv->guard)
		return 0;
	srv->gstop = false;
	if (pthread_create(&srv->gthread, NULL, guard_main, srv) != 0)
		return -1;
	srv->gthread_running = true;
	return 0;
}

static void guard_stop(struct kube_http_server *srv)
{
	if (srv->gthread_running) {
		pthread_mutex_lock(&srv->gmu);
		srv->gstop = true;
		pthread_cond_broadcast(&srv->gcv);
		pthread_mutex_unlock(&srv->gmu);
		pthread_join(srv->gthread, NULL);
		srv->gthread_running = false;
	}
}

static void guard_free(struct kube_http_server *srv)
{
	struct guard_job *lists[2] = {srv->gtodo, srv->gdone};
	for (int i = 0; i < 2; i++)
		while (lists[i]) {
			struct guard_job *j = lists[i];
			lists[i] = j->next;
			guard_job_free(j);
		}
	srv->gtodo = srv->gtodo_tail = srv->gdone = NULL;
	strv_free(srv->open_paths);
	srv->open_paths = NULL;
}


static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct kube_http_server *srv = lws_context_user(lws_get_context(wsi));
	struct pss *pss = user;
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!pss || !srv)
			return -1;
		pss_release(pss);
		return serve_request(srv, wsi, pss, in, len);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!pss)
			return -1;
		if (pss->deferred) {
			pss->deferred = false;
			return send_response(wsi, pss, pss->dhead, &pss->dresp, pss->dallow);
		}
		return write_body(wsi, pss);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (srv)
			guard_complete(srv);
		break;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return -1; /* WebSocket only with the channel's subprotocol (httpws.c) */
	case LWS_CALLBACK_HTTP_BODY:
		return 0; /* bodies are not used; the response was sent from LWS_CALLBACK_HTTP */
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		pss_release(pss);
		if (pss && pss->job) {
			pss->job->pss = NULL; /* the guard's answer is dropped when it comes */
			pss->job = NULL;
		}
		if (pss && pss->deferred) {
			pss->deferred = false;
			if (pss->dresp.body_owned)
				free((char *)pss->dresp.body);
			pss->dresp.body = NULL;
		}
		break;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- lifecycle ---- */

/* The bind address must be an IP literal present on this host. lws would take an interface
 * name too, and for an address it cannot use it falls back to listening everywhere, which is
 * exactly what a --bind-address must not do; so check it ourselves first. */
static int check_bind_address(const char *addr, char **err)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t len;
	int family;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		family = v4->sin_family = AF_INET;
		len = sizeof(*v4);
	} else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		family = v6->sin6_family = AF_INET6;
		len = sizeof(*v6);
	} else {
		return kube_errf(err, "http server: bind address \"%s\": not an IP address", addr);
	}
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kube_errf(err, "http server: bind address \"%s\": %s", addr, strerror(errno));
	int rc = bind(fd, (struct sockaddr *)&ss, len);
	int saved = errno;
	close(fd);
	if (rc != 0)
		return kube_errf(err, "http server: bind address \"%s\": %s", addr, strerror(saved));
	return 0;
}

int kube_http_server_new(const struct kube_http_server_opts *opts, struct kube_http_server **out, char **err)
{
	if (err)
		*err = NULL;
	if (!out) {
		kube_errf(err, "http server: out is NULL");
		return -1;
	}
	*out = NULL;
	struct kube_http_server_opts o = opts ? *opts : (struct kube_http_server_opts){0};
	if (o.port < 0 || o.port > 65535) {
		kube_errf(err, "http server: port %d: must be between 0 and 65535", o.port);
		return -1;
	}
	if (!o.tls_cert_file != !o.tls_key_file) {
		kube_errf(err, "http server: tls: both a certificate and a key file are needed");
		return -1;
	}
	if (o.tls_cert_file)
		o.tls_cert_pem = o.tls_key_pem = NULL;
	if (!o.tls_cert_pem != !o.tls_key_pem) {
		kube_errf(err, "http server: tls: both a certificate and a key are needed");
		return -1;
	}
	bool tls = o.tls_cert_file || o.tls_cert_pem;
	if (o.tls_min_version && (o.tls_min_version < 0x0301 || o.tls_min_version > 0x0304)) {
		kube_errf(err, "http server: tls: minimum version 0x%04x: not TLS 1.0 to 1.3", (unsigned)o.tls_min_version);
		return -1;
	}
	const char *files[2] = {o.tls_cert_file, o.tls_key_file};
	for (int i = 0; i < 2; i++)
		if (files[i] && access(files[i], R_OK) != 0) {
			kube_errf(err, "http server: tls %s file \"%s\": cannot read it", i ? "key" : "certificate",
				  files[i]);
			return -1;
		}
	const char *ba = o.bind_address;
	if (ba && *ba && strcmp(ba, "0.0.0.0") != 0 && strcmp(ba, "::") != 0) {
		if (check_bind_address(ba, err) != 0)
			return -1;
	}
	pthread_once(&log_once, set_lws_logging);

	struct kube_http_server *srv = calloc(1, sizeof(*srv));
	if (!srv || !(srv->name = strdup(o.name ? o.name : "http"))) {
		free(srv);
		kube_errf(err, "http server: out of memory");
		return -1;
	}
	for (int e = 0; e < 3; e++)
		srv->health[e].name = health_names[e];
	pthread_mutex_init(&srv->gmu, NULL);
	pthread_cond_init(&srv->gcv, NULL);
	srv->protocols[0] = (struct lws_protocols){
		.name = "http",
		.callback = http_callback,
		.per_session_data_size = sizeof(struct pss),
		.rx_buffer_size = 0,
	};
	srv->protocols[1] = (struct lws_protocols){
		.name = KUBE_WS_SUBPROTOCOL,
		.callback = kube_ws_callback,
		.per_session_data_size = kube_ws_session_size(),
	};

	/* The context is created without listeners and the vhost added afterwards: when binding
	 * fails, lws_create_context itself would leak (seen with 4.1.6 under ASan), while a failed
	 * lws_create_vhost leaves a context we can destroy cleanly. */
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	if (tls)
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	info.user = srv;
	info.timeout_secs = 30;
	/* lws sizes its fd table from the fd limit; a probe/metrics endpoint needs few sockets. */
	info.fd_limit_per_thread = 1024;
	srv->ctx = lws_create_context(&info);
	if (!srv->ctx) {
		kube_errf(err, "http server \"%s\": cannot create the libwebsockets context", srv->name);
		kube_http_server_free(srv);
		return -1;
	}

	memset(&info, 0, sizeof(info));
	info.port = o.port;
	const char *addr = o.bind_address;
	if (addr && (!*addr || strcmp(addr, "::") == 0))
		addr = NULL;
	if (addr && strcmp(addr, "0.0.0.0") == 0) {
		addr = NULL;
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	}
	info.iface = addr;
	info.protocols = srv->protocols;
	info.vhost_name = srv->name;
	info.options |= LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	if (tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; /* lws reads it per vhost too */
		info.ssl_cert_filepath = o.tls_cert_file;
		info.ssl_private_key_filepath = o.tls_key_file;
		if (o.tls_cert_pem) {
			info.server_ssl_cert_mem = o.tls_cert_pem;
			info.server_ssl_cert_mem_len = (unsigned int)strlen(o.tls_cert_pem);
			info.server_ssl_private_key_mem = o.tls_key_pem;
			info.server_ssl_private_key_mem_len = (unsigned int)strlen(o.tls_key_pem);
		}
		info.ssl_cipher_list = o.tls_cipher_list;
		info.tls1_3_plus_cipher_list = o.tls13_cipher_list;
		int minv = o.tls_min_version ? o.tls_min_version : TLS1_2_VERSION;
		info.ssl_options_set = (minv > TLS1_VERSION ? SSL_OP_NO_TLSv1 : 0) |
				       (minv > TLS1_1_VERSION ? SSL_OP_NO_TLSv1_1 : 0) |
				       (minv > TLS1_2_VERSION ? SSL_OP_NO_TLSv1_2 : 0);
	}
	info.timeout_secs = 30;
	struct lws_vhost *vh = lws_create_vhost(srv->ctx, &info);
	if (!vh) {
		kube_errf(err, "http server \"%s\": cannot listen on %s:%d%s", srv->name,
			  o.bind_address && *o.bind_address ? o.bind_address : "*", o.port,
			  tls ? " (or the TLS certificate/key or cipher list could not be used)" : "");
		kube_http_server_free(srv);
		return -1;
	}
	srv->port = lws_get_vhost_listen_port(vh);
	*out = srv;
	return 0;
}

int kube_http_server_port(const struct kube_http_server *srv)
{
	return srv ? srv->port : 0;
}

static void *service_thread(void *arg)
{
	struct kube_http_server *srv = arg;
	while (!atomic_load(&srv->stop))
		if (lws_service(srv->ctx, 0) < 0)
			break;
	return NULL;
}

int kube_http_server_start(struct kube_http_server *srv, char **err)
{
	if (err)
		*err = NULL;
	if (!srv || srv->started) {
		kube_errf(err, "http server: already started");
		return -1;
	}
	if (srv->health_used && install_health_routes(srv) != 0) {
		kube_errf(err, "http server \"%s\": out of memory installing health routes", srv->name);
		return -1;
	}
	if (guard_start(srv) != 0) {
		kube_errf(err, "http server \"%s\": cannot start the guard thread", srv->name);
		return -1;
	}
	srv->started = true;
	if (pthread_create(&srv->thread, NULL, service_thread, srv) != 0) {
		guard_stop(srv);
		srv->started = false;
		srv->joined = true;
		kube_errf(err, "http server \"%s\": cannot start the service thread", srv->name);
		return -1;
	}
	klog_info(1, "Serving HTTP", " server=\"%s\" port=%d", srv->name, srv->port);
	return 0;
}

void kube_http_server_stop(struct kube_http_server *srv)
{
	if (!srv || !srv->started || srv->joined)
		return;
	guard_stop(srv);
	atomic_store(&srv->stop, true);
	lws_cancel_service(srv->ctx);
	pthread_join(srv->thread, NULL);
	srv->joined = true;
}

void kube_http_server_free(struct kube_http_server *srv)
{
	if (!srv)
		return;
	kube_http_server_stop(srv);
	if (srv->ctx)
		lws_context_destroy(srv->ctx);
	for (int i = 0; i < srv->nroutes; i++) {
		free(srv->routes[i].method);
		free(srv->routes[i].path);
	}
	free(srv->routes);
	for (int i = 0; i < srv->nchecks; i++) {
		free(srv->checks[i]->name);
		free(srv->checks[i]);
	}
	free(srv->checks);
	for (int e = 0; e < 3; e++)
		free(srv->health[e].checks);
	guard_free(srv);
	kube_ws_channel_free(srv->ws);
	pthread_mutex_destroy(&srv->gmu);
	pthread_cond_destroy(&srv->gcv);
	free(srv->name);
	free(srv);
}

/* ---- hooks of the WebSocket channel (kube/httpserver_ws.h) ---- */

struct lws_context *kube_http_lws_context(struct kube_http_server *srv)
{
	return srv->ctx;
}

struct kube_ws_channel *kube_http_ws_channel(struct kube_http_server *srv)
{
	return srv ? srv->ws : NULL;
}

int kube_http_set_ws_channel(struct kube_http_server *srv, struct kube_ws_channel *ch)
{
	if (srv->started || srv->ws)
		return -1;
	srv->ws = ch;
	return 0;
}

bool kube_http_needs_guard(struct kube_http_server *srv, const char *path, const char *authorization)
{
	return srv->guard && (authorization[0] || !kube_http_path_matches((const char *const *)srv->open_paths, path));
}

void *kube_http_guard_ws(struct kube_http_server *srv, void *conn, const char *path, const char *authorization)
{
	struct guard_job *j = calloc(1, sizeof *j);
	if (!j || !(j->path = strdup(path)) || !(j->query = strdup("")) || !(j->authorization = strdup(authorization))) {
		guard_job_free(j);
		return NULL;
	}
	snprintf(j->method, sizeof j->method, "GET");
	j->ws = conn;
	guard_push(srv, j);
	return j;
}

void kube_http_guard_ws_cancel(void *job)
{
	if (job)
		((struct guard_job *)job)->ws = NULL;
}
