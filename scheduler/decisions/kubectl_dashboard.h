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

#endif
