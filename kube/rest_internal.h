/* Private to kube/rest.c, kube/rest_exec.c and kube/rest_tunnel.c (and their tests and benchmarks). */
#ifndef KUBE_REST_INTERNAL_H
#define KUBE_REST_INTERNAL_H

#include <curl/curl.h>

#include "kube/rest.h"

/* A new curl handle set up for the client's server (URL "/", TLS, client certificate) as every
 * request is, with *authorization the credential's header value ("Bearer ...", NULL when the
 * client has no token; caller frees) and *host the server's host[:port] (caller frees). NULL and
 * *e on failure. */
CURL *kube_client_raw_handle(struct kube_client *c, char **authorization, char **host, struct kube_error *e);

/* What an exec credential plugin printed (kube/rest_exec.c); the strings are the caller's (wipe
 * before freeing). expiry: wall-clock seconds, 0 = until a 401. */
struct kube_exec_cred { char *token, *cert, *key; double expiry; };
/* Runs plugin x (KUBERNETES_EXEC_INFO carries server, insecure and ca_data when x asks for the
 * cluster) and fills *out. 0, or -1 with *e (e may be NULL). */
int kube_exec_run(const struct kube_exec_config *x, const char *server, bool insecure, const char *ca_data,
		  struct kube_exec_cred *out, struct kube_error *e);

/* Sends kube_request over libcurl as streams are (true), or over the persistent connections
 * when the client has them (false, the default). Set before the client is shared (tests). */
void kube_client_set_curl_only(struct kube_client *c, bool curl_only);
/* Connections the persistent path has opened; -1 when the client has none (a proxy, ...). */
long kube_client_connections_opened(struct kube_client *c);

#endif
