/* Raw connections to the API server (kube/rest_tunnel.h) on curl's CONNECT_ONLY: curl dials and
 * does the TLS handshake with the handle kube/rest.c sets up for every request, then hands over
 * the stream (curl_easy_send / curl_easy_recv). */
#include "kube/rest_tunnel.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/rest_internal.h"

struct kube_tunnel {
	CURL *h;
	curl_socket_t fd;
	char errbuf[CURL_ERROR_SIZE];
};

int kube_tunnel_open(struct kube_client *c, struct kube_tunnel **out, char **authorization, char **host,
		     struct kube_error *e)
{
	struct kube_error local;
	if (!e)
		e = &local;
	memset(e, 0, sizeof *e);
	*out = NULL;
	struct kube_tunnel *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(e->message, sizeof e->message, "out of memory");
		return -1;
	}
	if (!(t->h = kube_client_raw_handle(c, authorization, host, e))) {
		free(t);
		return -1;
	}
	curl_easy_setopt(t->h, CURLOPT_ERRORBUFFER, t->errbuf);
	curl_easy_setopt(t->h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(t->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	CURLcode rc = curl_easy_perform(t->h);
	curl_socket_t fd = CURL_SOCKET_BAD;
	if (rc == CURLE_OK)
		rc = curl_easy_getinfo(t->h, CURLINFO_ACTIVESOCKET, &fd);
	if (rc != CURLE_OK || fd == CURL_SOCKET_BAD) {
		snprintf(e->message, sizeof e->message, "%s", t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc));
		kube_tunnel_close(t);
		free(*authorization);
		free(*host);
		*authorization = *host = NULL;
		return -1;
	}
	t->fd = fd;
	*out = t;
	return 0;
}

int kube_tunnel_send(struct kube_tunnel *t, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		size_t n = 0;
		CURLcode rc = curl_easy_send(t->h, p, len, &n);
		if (rc == CURLE_AGAIN) {
			struct pollfd pf = { .fd = t->fd, .events = POLLOUT };
			if (poll(&pf, 1, 30000) <= 0)
				return -1;
			continue;
		}
		if (rc != CURLE_OK)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t kube_tunnel_recv(struct kube_tunnel *t, void *buf, size_t len)
{
	size_t n = 0;
	CURLcode rc = curl_easy_recv(t->h, buf, len, &n);
	if (rc == CURLE_AGAIN)
		return -2;
	if (rc != CURLE_OK)
		return -1;
	return (ssize_t)n;
}

int kube_tunnel_fd(const struct kube_tunnel *t)
{
	return (int)t->fd;
}

void kube_tunnel_close(struct kube_tunnel *t)
{
	if (!t)
		return;
	if (t->h)
		curl_easy_cleanup(t->h);
	free(t);
}
