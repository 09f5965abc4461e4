/* The service proxy's upgrade pass-through (a WebSocket through services/proxy), as
 * kube-apiserver's UpgradeAwareHandler (k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go) does
 * it: the request goes to the endpoint with its own headers (Host set to the endpoint, the
 * caller's Authorization dropped, as the proxy forwards no credentials), the endpoint's answer (101
 * or an error) comes back as it is, and then bytes are copied both ways until one side closes.
 * The worker serving the connection is held for its life, as a watch holds one. */
#include <errno.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/proxy_upgrade.h"
#include "kube/rest.h"

#define PIPE_BUF_BYTES 32768
#define DIAL_TIMEOUT_MS 5000

struct upstream {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static int dial(const char *host, int port)
{
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (getaddrinfo(host, ps, &hints, &res) != 0)
		return -1;
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

static void upstream_close(struct upstream *u)
{
	if (u->ssl) {
		SSL_shutdown(u->ssl);
		SSL_free(u->ssl);
	}
	if (u->ctx)
		SSL_CTX_free(u->ctx);
	if (u->fd >= 0)
		close(u->fd);
	ERR_clear_error();
}

/* HTTPS endpoints are not verified (as upstream's proxy transport). */
static int upstream_open(struct upstream *u, const char *scheme, const char *host, int port)
{
	*u = (struct upstream){ .fd = dial(host, port) };
	if (u->fd < 0)
		return -1;
	struct timeval tv = { DIAL_TIMEOUT_MS / 1000, 0 };
	setsockopt(u->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (strcmp(scheme, "https"))
		return 0;
	if (!(u->ctx = SSL_CTX_new(TLS_client_method())) || !(u->ssl = SSL_new(u->ctx)) ||
	    SSL_set_fd(u->ssl, u->fd) != 1 || SSL_set_tlsext_host_name(u->ssl, host) != 1 ||
	    SSL_set_alpn_protos(u->ssl, (const unsigned char *)"\x08http/1.1", 9) != 0 || SSL_connect(u->ssl) != 1)
		return -1;
	return 0;
}

static int up_write(struct upstream *u, const void *p, size_t n)
{
	const char *q = p;
	while (n) {
		ssize_t w = u->ssl ? SSL_write(u->ssl, q, (int)n) : send(u->fd, q, n, MSG_NOSIGNAL);
		if (w <= 0) {
			if (!u->ssl && w < 0 && errno == EINTR)
				continue;
			return -1;
		}
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

static ssize_t up_read(struct upstream *u, void *p, size_t n)
{
	ssize_t r = u->ssl ? SSL_read(u->ssl, p, (int)n) : recv(u->fd, p, n, 0);
	return r <= 0 ? -1 : r;
}

/* The request line and the caller's headers without Host and Authorization. */
static int send_head(struct upstream *u, const struct apis_req *r, const char *host, int port, const char *target)
{
	struct apis_buf b = { 0 };
	apis_buf_printf(&b, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", r->method, target, host, port);
	for (const char *p = r->raw_headers ? r->raw_headers : ""; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p + 1) : strlen(p);
		bool drop = !strncasecmp(p, "host:", 5) || !strncasecmp(p, "authorization:", 14) || len <= 2;
		if (!drop)
			apis_buf_printf(&b, "%.*s", (int)len, p);
		p += len;
	}
	apis_buf_printf(&b, "\r\n");
	int rc = b.oom ? -1 : up_write(u, b.p, b.len);
	apis_buf_free(&b);
	return rc;
}

/* Copies both ways until one side closes or fails. */
static void pipe_both(struct apis_conn *c, struct upstream *u)
{
	char *buf = malloc(PIPE_BUF_BYTES);
	if (!buf)
		return;
	struct timeval none = { 0, 0 };
	setsockopt(u->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
	size_t k = apis_conn_take_buffered(c, buf, PIPE_BUF_BYTES); /* sent with the request */
	if (k && up_write(u, buf, k) != 0)
		goto out;
	for (;;) {
		bool cp = apis_conn_pending(c), up = u->ssl && SSL_pending(u->ssl) > 0;
		struct pollfd p[2] = { { .fd = apis_conn_fd(c), .events = POLLIN }, { .fd = u->fd, .events = POLLIN } };
		if (!cp && !up && poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (cp || (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = apis_conn_read_raw(c, buf, PIPE_BUF_BYTES);
			if (n <= 0 || up_write(u, buf, (size_t)n) != 0)
				break;
		}
		if (up || (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = up_read(u, buf, PIPE_BUF_BYTES);
			if (n <= 0 || apis_conn_write_raw(c, buf, (size_t)n) != 0)
				break;
		}
	}
out:
	free(buf);
}

void apis_proxy_upgrade(struct apis_conn *c, const struct apis_req *r, const char *scheme, const char *host, int port,
			const char *target)
{
	struct upstream u;
	if (upstream_open(&u, scheme, host, port) != 0) {
		char msg[700];
		snprintf(msg, sizeof msg, "error trying to reach service: dial %s:%d: %s", host, port,
			 u.fd < 0 ? strerror(errno) : "TLS handshake failed");
		upstream_close(&u);
		apis_respond_status(c, 503, "ServiceUnavailable", msg, NULL);
		return;
	}
	if (send_head(&u, r, host, port, target) == 0)
		pipe_both(c, &u);
	upstream_close(&u);
	c->close_after = true;
}
