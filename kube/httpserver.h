/* The small HTTP(S) server every schedkit daemon embeds for /healthz, /livez, /readyz, /metrics
 * and /configz, built on libwebsockets (HTTP/1.1, and HTTP/2 over TLS via ALPN).
 *
 *   struct kube_http_server_opts o = {.bind_address = "127.0.0.1", .port = 10259};
 *   kube_http_server_new(&o, &srv, &err);
 *   kube_http_add_health(srv, "leaderElection", check_leader, sched);
 *   kube_http_add_metrics(srv, registry);
 *   kube_http_route(srv, "GET", "/configz", configz_handler, sched);
 *   kube_http_server_start(srv, &err);   ... kube_http_server_free(srv);
 *
 * Routes and checks are registered before start and are then read-only. Handlers and health
 * checks run on the server's own thread, one request at a time: they must not block (no HTTP
 * calls, no waiting on locks held across slow work); take a short lock, copy, return.
 * Unknown paths get 404 "404 page not found", a known path with another method 405 with an
 * Allow header; HEAD is answered for GET routes (headers only). Request bodies are not read. */
#ifndef KUBE_HTTPSERVER_H
#define KUBE_HTTPSERVER_H

#include <stdbool.h>
#include <stddef.h>

struct kube_http_server;
struct kube_metrics_registry;

struct kube_http_server_opts {
	/* IP literal of this host to listen on (a name or a foreign address is an error);
	 * NULL, "" or "::" = all addresses (dual stack), "0.0.0.0" = all IPv4 addresses. */
	const char *bind_address;
	int port;                 /* 0 = pick a free port, see kube_http_server_port() */
	const char *tls_cert_file; /* PEM; both set = HTTPS, both NULL = plain HTTP */
	const char *tls_key_file;
	/* Or the certificate (chain) and key in memory (PEM text), used when the files are NULL. */
	const char *tls_cert_pem, *tls_key_pem;
	/* With TLS: OpenSSL cipher lists for TLS 1.2 and below and for TLS 1.3 (NULL: the library's
	 * defaults) and the lowest protocol version (0x0301 TLS 1.0 .. 0x0304 TLS 1.3; 0: TLS 1.2,
	 * Go's server default). kube/tlsopts.h turns upstream's flag values into these. */
	const char *tls_cipher_list, *tls13_cipher_list;
	int tls_min_version;
	const char *name;         /* for logs ("scheduler", "operator"); may be NULL */
};

struct kube_http_request {
	const char *method; /* "GET", "HEAD", "POST", ... */
	const char *path;   /* decoded path, without the query */
	const char *query;  /* decoded query without '?', arguments joined with '&'; "" if none */
};

struct kube_http_response {
	int status;               /* default 200 */
	const char *content_type; /* static string; default "text/plain; charset=utf-8" */
	const char *body;         /* may be NULL (empty body) */
	size_t body_len;          /* bytes of body; kube_http_respond() sets it from strlen */
	bool body_owned;          /* true: the server free()s body after sending */
};

typedef void (*kube_http_handler_fn)(const struct kube_http_request *req, struct kube_http_response *resp,
				     void *ctx);

/* A health check: 0 = healthy; otherwise write a short reason into reason (NUL-terminated,
 * reason_len bytes available) and return non-zero. Runs on the server thread. */
typedef int (*kube_health_check_fn)(void *ctx, char *reason, size_t reason_len);

/* Creates the server and binds its listening socket (so a port of 0 is resolved and a bad
 * address or certificate fails here). Nothing is served until kube_http_server_start().
 * Returns 0, or -1 with *err set to a message the caller frees. */
int kube_http_server_new(const struct kube_http_server_opts *opts, struct kube_http_server **out, char **err);
/* The bound TCP port (useful with port 0). */
int kube_http_server_port(const struct kube_http_server *srv);

/* Registers handler for method + exact path. Before start only; -1 on allocation failure or
 * when called after start, with a klog error. */
int kube_http_route(struct kube_http_server *srv, const char *method, const char *path, kube_http_handler_fn fn,
		    void *ctx);

/* Health endpoints as k8s.io/apiserver/pkg/server/healthz serves them.
 * Adds check `name` to /healthz, /livez and /readyz (kube_http_add_check picks which with a
 * mask) and serves /<endpoint>/<name> for it. fn NULL = always healthy (upstream's "ping").
 * An endpoint installed with no checks gets "ping". Root endpoint: 200 "ok"; with ?verbose one
 * line per check "[+]name ok" then "<endpoint> check passed"; on failure 500 with
 * "[-]name failed: reason withheld" lines (the reason is only logged, at --v=2) and
 * "<endpoint> check failed"; ?exclude=name skips a check ("[+]name excluded: ok").
 * /<endpoint>/<name>: 200 "ok" or 500 "internal server error: <reason>". */
enum { KUBE_HEALTHZ = 1, KUBE_LIVEZ = 2, KUBE_READYZ = 4, KUBE_HEALTH_ALL = 7 };
int kube_http_add_check(struct kube_http_server *srv, int endpoints, const char *name, kube_health_check_fn fn,
			void *ctx);
int kube_http_add_health(struct kube_http_server *srv, const char *name, kube_health_check_fn fn, void *ctx);

/* Serves GET /metrics from registry (rendered per request). The registry must outlive the server. */
int kube_http_add_metrics(struct kube_http_server *srv, struct kube_metrics_registry *registry);

/* A guard decides every request before its route runs, as upstream's delegated authentication
 * and authorization filters do (k8s.io/apiserver/pkg/endpoints/filters): it returns 0 to serve,
 * or 401 / 403 with a message (answered as a JSON v1 Status, reason Unauthorized / Forbidden).
 * authorization is the request's Authorization header ("" when absent). A guard may block (it
 * makes HTTP calls): it runs on a worker thread of the server, one request at a time, never on
 * the service thread, and the response waits for it (the connection stays open, other
 * requests are served meanwhile). A request without an Authorization header for a path of
 * `open_paths` is served without calling the guard (upstream: anonymous, then the always-allow
 * paths; an entry ending in '*' matches by prefix). Set before start. -1 on allocation failure. */
typedef int (*kube_http_guard_fn)(void *ctx, const char *method, const char *path, const char *authorization,
				  char *msg, size_t msg_len);
int kube_http_set_guard(struct kube_http_server *srv, kube_http_guard_fn fn, void *ctx, const char *const *open_paths);
/* Whether path matches one of paths (NULL-terminated; "x*" matches by prefix). */
bool kube_http_path_matches(const char *const *paths, const char *path);

/* Fills resp with a static or owned body; helpers for handlers. */
void kube_http_respond(struct kube_http_response *resp, int status, const char *content_type, const char *body);
/* printf into a new body the server frees. */
void kube_http_respondf(struct kube_http_response *resp, int status, const char *content_type, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));

/* Starts the service thread. 0, or -1 with *err (caller frees). */
int kube_http_server_start(struct kube_http_server *srv, char **err);
/* Stops serving and joins the thread; open connections are closed. Idempotent. Never call it
 * (or _free) from a handler or health check: they run on the thread being joined. */
void kube_http_server_stop(struct kube_http_server *srv);
/* Stops if running and frees everything. NULL is a no-op. */
void kube_http_server_free(struct kube_http_server *srv);

#endif
