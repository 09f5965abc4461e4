/* Private to kube/httpserver.c and kube/httpws.c: the hooks the WebSocket channel needs from the
 * server (its lws context, its guard) and the server needs from the channel (its lws protocol).
 * Not for other code: it uses kube/httpws.h. */
#ifndef KUBE_HTTPSERVER_WS_H
#define KUBE_HTTPSERVER_WS_H

#include <libwebsockets.h>
#include <stdbool.h>

#include "kube/httpws.h"

/* httpserver.c */
struct lws_context *kube_http_lws_context(struct kube_http_server *srv);
struct kube_ws_channel *kube_http_ws_channel(struct kube_http_server *srv);
int kube_http_set_ws_channel(struct kube_http_server *srv, struct kube_ws_channel *ch); /* -1 after start */
/* Whether a request for path with this Authorization header ("" when absent) must be decided
 * by the guard (false: no guard, or an open path asked anonymously). */
bool kube_http_needs_guard(struct kube_http_server *srv, const char *path, const char *authorization);
/* Queues the guard's decision for a WebSocket connection; kube_ws_guard_done(conn, ...) is
 * called on the service thread with the answer. Returns the job (for _cancel) or NULL on OOM. */
void *kube_http_guard_ws(struct kube_http_server *srv, void *conn, const char *path, const char *authorization);
/* Service thread: the connection closed, its answer is dropped when it comes. */
void kube_http_guard_ws_cancel(void *job);

/* httpws.c */
int kube_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);
size_t kube_ws_session_size(void);
/* status 0: allowed; 401/403: refused with msg. */
void kube_ws_guard_done(void *conn, int status, const char *msg);
void kube_ws_channel_free(struct kube_ws_channel *ch);

#endif
