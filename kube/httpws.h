/* A WebSocket channel on the daemon's HTTP(S) server (kube/httpserver.h): RFC 6455 through
 * libwebsockets on the same listener and the same guard as every other path, for pushing JSON to
 * browsers (the scheduler's dashboard, docs/explain.md).
 *
 *   struct kube_ws_channel *ch;
 *   kube_http_add_websocket(srv, "/debug/x/ws", &ch);   before start
 *   kube_ws_publish(ch, json, len, true);                from any thread
 *
 * A client connects with the subprotocol KUBE_WS_SUBPROTOCOL (`new WebSocket(url,
 * "schedkit.v1")`) to the channel's path; any other path, or no subprotocol, is refused. The
 * server only sends (what a client sends is read and dropped; pings are answered by lws).
 *
 * Authorization: the upgrade is decided by the server's guard as an HTTP GET of the path would be
 * (open paths without an Authorization header need none). The guard may block, and lws cannot
 * hold an upgrade open, so the connection is upgraded first and nothing is sent on it until the
 * guard allowed it; a refused one is closed with status 1008 (policy violation) and the guard's
 * message as the reason.
 *
 * Delivery: a published message goes to every authorized client; the last one published with
 * `retain` is also sent to each client when it is authorized (so a new client starts from the
 * current state). A client that has KUBE_WS_QUEUE messages waiting loses its oldest (counted in
 * kube_ws_dropped): a slow browser never holds memory without bound. */
#ifndef KUBE_HTTPWS_H
#define KUBE_HTTPWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/httpserver.h"

#define KUBE_WS_SUBPROTOCOL "schedkit.v1"
#define KUBE_WS_QUEUE 64
/* Frames are at most this long; a longer message goes out as continuation frames. */
#define KUBE_WS_FRAME 16384

struct kube_ws_channel;

/* Registers the server's one WebSocket path. Before start; -1 on allocation failure, a second
 * channel or after start. *out stays owned by the server (freed with it). */
int kube_http_add_websocket(struct kube_http_server *srv, const char *path, struct kube_ws_channel **out);

/* Queues msg (len bytes, copied) for every authorized client; thread-safe, never blocks on a
 * client. With retain, it also replaces the message new clients get first. 0, or -1 on OOM. */
int kube_ws_publish(struct kube_ws_channel *ch, const char *msg, size_t len, bool retain);

/* Authorized clients now connected (atomic; a producer skips work when there are none). */
int kube_ws_clients(const struct kube_ws_channel *ch);
/* Messages dropped for slow clients over the channel's life. */
uint64_t kube_ws_dropped(const struct kube_ws_channel *ch);

#endif
