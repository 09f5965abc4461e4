/* server.h — schedkit-apiserver's public face: a local, in-memory Kubernetes API server for tests
 * and the demo. Start it in-process (tests) or through bin/schedkit-apiserver (main.c).
 *
 *   struct apis_opts o = APIS_OPTS_DEFAULT;  o.port = 0;
 *   struct apis_server *s;  if (apis_server_start(&o, &s) == 0) { ... apis_server_port(s) ... }
 *   apis_server_stop(s);
 *
 * All functions are thread-safe; apis_server_stop must be called exactly once per started server. */
#ifndef SK_APISERVER_SERVER_H
#define SK_APISERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct apis_opts {
	const char *bind_address;     /* default "127.0.0.1" */
	int port;                     /* 0 = pick a free port */
	const char *token;            /* require "Authorization: Bearer <token>"; NULL = no auth */
	const char *token_auth_file;  /* more tokens: CSV token,user,uid[,"groups"] (auth.c) */
	bool rbac;                    /* --authorization-mode=RBAC: enforce RBAC on every request */
	bool tls;                     /* HTTPS with an in-memory CA + serving cert (127.0.0.1, localhost) */
	const char *kubeconfig_path;  /* written once listening; NULL = none */
	size_t max_body_bytes;        /* request bodies above this get 413; 0 = 3 MiB (upstream's) */
	int history_events;           /* retained watch events (older RVs get 410); 0 = 20000 */
	int bookmark_interval_ms;     /* BOOKMARK cadence for allowWatchBookmarks watchers; 0 = 1000 */
	bool simulate_kubelet;        /* bound pods on existing Nodes become Running+Ready */
	int kubelet_delay_ms;         /* delay before a bound pod runs / a deleting pod goes; 0 = 100 */
	/* Fault injection, deterministic from fault_seed. */
	unsigned long fault_seed;
	double fault_error_rate;      /* fraction of API requests failed (half 500, half 429) */
	int fault_close_watch_every;  /* seconds; watch streams are closed after this; 0 = never */
	int fault_delay_ms;           /* added to every API response */
	int workers;                  /* minimum worker threads (the pool grows for watches); 0 = 4 */
	int worker_idle_ms;           /* an extra worker idle this long retires; 0 = 10000 */
};

#define APIS_OPTS_DEFAULT { .bind_address = "127.0.0.1" }

struct apis_server;

/* Starts listening and serving. Returns 0 and *out, or -1 (message logged) when the socket,
 * TLS material or kubeconfig cannot be set up. */
int apis_server_start(const struct apis_opts *opts, struct apis_server **out);
/* The port actually bound. */
int apis_server_port(const struct apis_server *s);
/* "http://127.0.0.1:PORT" or "https://..."; borrowed, valid until stop. */
const char *apis_server_url(const struct apis_server *s);
/* PEM of the generated CA (TLS only, else NULL); borrowed, valid until stop. */
const char *apis_server_ca_pem(const struct apis_server *s);
/* Writes a kubeconfig for this server to path (atomically). 0 or -1. */
int apis_server_write_kubeconfig(const struct apis_server *s, const char *path);
/* Closes every connection (watch streams end), joins all threads, frees everything.
 * NULL is a no-op. */
void apis_server_stop(struct apis_server *s);

#endif
