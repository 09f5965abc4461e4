/* Private to kube/rest.c and kube/rest_tunnel.c. */
#ifndef KUBE_REST_INTERNAL_H
#define KUBE_REST_INTERNAL_H

#include <curl/curl.h>

#include "kube/rest.h"

/* A new curl handle set up for the client's server (URL "/", TLS, client certificate) as every
 * request is, with *authorization the credential's header value ("Bearer ...", NULL when the
 * client has no token; caller frees) and *host the server's host[:port] (caller frees). NULL and
 * *e on failure. */
CURL *kube_client_raw_handle(struct kube_client *c, char **authorization, char **host, struct kube_error *e);

#endif
