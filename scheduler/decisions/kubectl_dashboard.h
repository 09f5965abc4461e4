/* `kubectl schedkit dashboard` (kubectl_dashboard.c, docs/explain.md). */
#ifndef SK_KUBECTL_DASHBOARD_H
#define SK_KUBECTL_DASHBOARD_H

#include <stdbool.h>
#include <stdio.h>

#include "kube/rest.h"

/* Listens on address:port (0: a free port), prints the dashboard's local URL on out and forwards
 * every request under /debug/schedkit/ to the API server path prefix + path (prefix: the
 * scheduler's service proxy, /api/v1/namespaces/NS/services/SCHEME:NAME:PORT/proxy). Runs until
 * the process is stopped; returns only on an error (1) or bad usage (2). */
int sk_kubectl_dashboard(struct kube_client *c, const char *prefix, const char *address, int port, bool open_browser,
			 FILE *out, FILE *errout);

/* The request head sent to the API server for the browser's head (request line through the blank
 * line): method, prefix + target, Host, Authorization (authz: the value, NULL for none), then
 * "Connection: Upgrade" (upgrade) or "Connection: close", and the browser's other headers except
 * Host, Authorization, Connection, Keep-Alive, Proxy-Connection, Cookie (and Upgrade unless
 * upgrading). Caller frees; NULL on OOM. */
char *sk_dash_forward_head(const char *head, const char *method, const char *target, const char *prefix,
			   const char *host, const char *authz, bool upgrade);

#endif
