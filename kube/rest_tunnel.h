/* A raw connection to the API server with the client's TLS settings and credentials, for a
 * caller that speaks HTTP/1.1 itself: `kubectl schedkit dashboard` forwards a browser's requests,
 * WebSocket upgrades included, through it (curl's CONNECT_ONLY; HTTP/1.1 is the only ALPN
 * protocol offered, so an upgrade is possible). One tunnel, one thread at a time. */
#ifndef KUBE_REST_TUNNEL_H
#define KUBE_REST_TUNNEL_H

#include <stddef.h>
#include <sys/types.h>

#include "kube/rest.h"

struct kube_tunnel;

/* Connects (TCP, then TLS for https). *authorization: the header value to send ("Bearer ...", or
 * NULL when the credential is a client certificate or none); *host: the Host header value; both
 * caller-freed. 0, or -1 with *e. */
int kube_tunnel_open(struct kube_client *c, struct kube_tunnel **out, char **authorization, char **host,
		     struct kube_error *e);
/* Sends all of buf (waits while the socket is full). 0, or -1 when the connection failed. */
int kube_tunnel_send(struct kube_tunnel *t, const void *buf, size_t len);
/* Reads what is there: > 0 bytes, 0 at the end of the stream, -2 nothing now (poll the fd), -1
 * error. Call it again until -2 before polling: TLS may hold more than the socket shows. */
ssize_t kube_tunnel_recv(struct kube_tunnel *t, void *buf, size_t len);
int kube_tunnel_fd(const struct kube_tunnel *t);
void kube_tunnel_close(struct kube_tunnel *t); /* NULL ok */

#endif
