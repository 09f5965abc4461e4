/* `kubectl schedkit dashboard` (docs/explain.md, "The live web view"): a local HTTP listener that
 * forwards the browser's requests under /debug/schedkit/ to the scheduler through the API
 * server's service proxy, with the user's kubeconfig credentials, as `kubectl proxy` would but
 * for this one service. A WebSocket upgrade is forwarded too and then copied both ways (the API
 * server's proxy carries upgrades). One thread per browser connection; each request gets its own
 * upstream connection (Connection: close), so no response is ever matched to the wrong request. */
#include "scheduler/decisions/kubectl_dashboard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/rest_tunnel.h"

#define DASH_PATH "/debug/schedkit/v1/dashboard/"
#define HEAD_MAX 65536
#define COPY_BUF 32768

struct fwd_conn {
	struct kube_client *c;
	const char *prefix;
	int fd;
};

static void reply(int fd, const char *status, const char *extra, const char *body)
{
	char buf[2048];
	int n = snprintf(buf, sizeof buf, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n%s\r\n%s", status, strlen(body), extra, body);
	if (n > 0)
		(void)!send(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, MSG_NOSIGNAL);
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads the request head (through the blank line); *len: bytes read (the head and maybe more). */
static char *read_head(int fd, size_t *len, size_t *head_len)
{
	char *b = malloc(HEAD_MAX + 1);
	size_t n = 0;
	while (b && n < HEAD_MAX) {
		ssize_t r = recv(fd, b + n, HEAD_MAX - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		b[n] = 0;
		char *e = strstr(b, "\r\n\r\n");
		if (e) {
			*len = n;
			*head_len = (size_t)(e - b) + 4;
			return b;
		}
	}
	free(b);
	return NULL;
}

static bool header_is(const char *line, const char *name)
{
	size_t n = strlen(name);
	return !strncasecmp(line, name, n) && line[n] == ':';
}

char *sk_dash_forward_head(const char *head, const char *method, const char *target, const char *prefix,
			   const char *host, const char *authz, bool upgrade)
{
	size_t cap = strlen(head) + strlen(prefix) + strlen(host) + (authz ? strlen(authz) : 0) + 256;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	int n = snprintf(out, cap, "%s %s%s HTTP/1.1\r\nHost: %s\r\n%s%s%s%s", method, prefix, target, host,
			 authz ? "Authorization: " : "", authz ? authz : "", authz ? "\r\n" : "",
			 upgrade ? "Connection: Upgrade\r\n" : "Connection: close\r\n");
	size_t len = (size_t)n;
	const char *p = strstr(head, "\r\n") + 2;
	while (*p && strncmp(p, "\r\n", 2)) {
		const char *e = strstr(p, "\r\n");
		if (!e)
			break;
		size_t l = (size_t)(e - p) + 2;
		if (!header_is(p, "host") && !header_is(p, "authorization") && !header_is(p, "connection") &&
		    !header_is(p, "keep-alive") && !header_is(p, "proxy-connection") && !header_is(p, "cookie") &&
		    !(header_is(p, "upgrade") && !upgrade)) {
			memcpy(out + len, p, l);
			len += l;
		}
		p = e + 2;
	}
	memcpy(out + len, "\r\n", 3);
	return out;
}

/* Copies the tunnel to the browser, and with both the browser to the tunnel, until one ends. */
static void copy(int fd, struct kube_tunnel *t, bool both)
{
	char *buf = malloc(COPY_BUF);
	if (!buf)
		return;
	for (;;) {
		ssize_t n;
		while ((n = kube_tunnel_recv(t, buf, COPY_BUF)) > 0)
			if (send_all(fd, buf, (size_t)n) != 0)
				goto out;
		if (n != -2)
			break; /* 0: the API server closed; -1: error */
		struct pollfd p[2] = { { .fd = kube_tunnel_fd(t), .events = POLLIN }, { .fd = fd, .events = POLLIN } };
		if (poll(p, both ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (both && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			n = recv(fd, buf, COPY_BUF, 0);
			if (n <= 0 || kube_tunnel_send(t, buf, (size_t)n) != 0)
				break;
		}
		if (!both && (p[0].revents & (POLLHUP | POLLERR)) && !(p[0].revents & POLLIN))
			break;
	}
out:
	free(buf);
}

static void serve(struct fwd_conn *fc)
{
	size_t len = 0, hlen = 0;
	char *head = read_head(fc->fd, &len, &hlen);
	if (!head)
		return;
	char method[16], target[4096];
	if (sscanf(head, "%15s %4095s HTTP/1.", method, target) != 2) {
		reply(fc->fd, "400 Bad Request", "", "malformed request\n");
		goto out;
	}
	if (!strcmp(target, "/")) {
		reply(fc->fd, "302 Found", "Location: " DASH_PATH "\r\n", "see " DASH_PATH "\n");
		goto out;
	}
	if (strncmp(target, "/debug/schedkit/", 16)) {
		reply(fc->fd, "404 Not Found", "", "only the scheduler's /debug/schedkit/ paths are forwarded\n");
		goto out;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		reply(fc->fd, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "only GET and HEAD are forwarded\n");
		goto out;
	}
	bool upgrade = false;
	for (const char *p = strstr(head, "\r\n"); p && p < head + hlen; p = strstr(p + 2, "\r\n"))
		if (header_is(p + 2, "upgrade"))
			upgrade = true;
	struct kube_tunnel *t = NULL;
	char *authz = NULL, *host = NULL;
	struct kube_error e;
	if (kube_tunnel_open(fc->c, &t, &authz, &host, &e) != 0) {
		char msg[700];
		snprintf(msg, sizeof msg, "cannot reach the API server: %s\n", e.message);
		reply(fc->fd, "502 Bad Gateway", "", msg);
		goto out;
	}
	/* what follows the head (an upgrade's first bytes) is sent after it */
	char *hd = strndup(head, hlen);
	char *up = hd ? sk_dash_forward_head(hd, method, target, fc->prefix, host, authz, upgrade) : NULL;
	free(hd);
	if (authz) {
		memset(authz, 0, strlen(authz));
		free(authz);
	}
	free(host);
	if (up && kube_tunnel_send(t, up, strlen(up)) == 0 &&
	    (len == hlen || kube_tunnel_send(t, head + hlen, len - hlen) == 0))
		copy(fc->fd, t, upgrade);
	free(up);
	kube_tunnel_close(t);
out:
	free(head);
}

static void *conn_main(void *arg)
{
	struct fwd_conn *fc = arg;
	struct timeval tv = { 30, 0 };
	setsockopt(fc->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	serve(fc);
	close(fc->fd);
	free(fc);
	return NULL;
}

int sk_kubectl_dashboard(struct kube_client *c, const char *prefix, const char *address, int port, bool open_browser,
			 FILE *out, FILE *errout)
{
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, address, &a.sin_addr) != 1) {
		fprintf(errout, "error: --address %s: not an IPv4 address\n", address);
		return 2;
	}
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	socklen_t al = sizeof a;
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 64) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &al) != 0) {
		fprintf(errout, "error: cannot listen on %s:%d: %s\n", address, port, strerror(errno));
		if (ls >= 0)
			close(ls);
		return 1;
	}
	char url[256];
	snprintf(url, sizeof url, "http://%s:%d" DASH_PATH, address, ntohs(a.sin_port));
	fprintf(out, "Dashboard: %s\n(forwarding to the scheduler through the API server's service proxy; Ctrl-C stops)\n",
		url);
	fflush(out);
	if (open_browser) {
		const char *b = getenv("BROWSER");
		char *cmd = NULL;
		if (asprintf(&cmd, "%s '%s' >/dev/null 2>&1 &", b && *b ? b : "xdg-open", url) > 0 && system(cmd) != 0)
			fprintf(errout, "warning: could not start a browser; open %s\n", url);
		free(cmd);
	}
	for (;;) {
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			fprintf(errout, "error: accept: %s\n", strerror(errno));
			close(ls);
			return 1;
		}
		struct fwd_conn *fc = malloc(sizeof *fc);
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (!fc) {
			close(fd);
		} else {
			*fc = (struct fwd_conn){ c, prefix, fd };
			if (pthread_create(&th, &at, conn_main, fc) != 0) {
				close(fd);
				free(fc);
			}
		}
		pthread_attr_destroy(&at);
	}
}
