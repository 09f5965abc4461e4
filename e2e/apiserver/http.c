/* http.c — schedkit-apiserver's HTTP/1.1 layer: an elastic worker pool whose idle workers wait on
 * one epoll set of the listening socket and the idle keep-alive connections (a watch stream
 * occupies only its own worker), request parsing with size limits (431/413/400), Content-Length
 * and chunked bodies, Expect: 100-continue, plain or TLS (OpenSSL) transport, whole and chunked
 * responses, and the apiVersion rewrite for CRD versions served from another stored version. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>

#include "kube/log.h"
#include "kube/util.h"
#include "e2e/apiserver/internal.h"

#define MAX_HEADER_BYTES (64 * 1024)
#define MAX_CONNS 2048

/* ---------------- buffers ---------------- */

void apis_buf_add(struct apis_buf *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->len + n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void apis_buf_str(struct apis_buf *b, const char *s) { apis_buf_add(b, s, strlen(s)); }

void apis_buf_printf(struct apis_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		apis_buf_add(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	apis_buf_add(b, big, (size_t)n);
	free(big);
}

void apis_buf_free(struct apis_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ---------------- transport ---------------- */

static ssize_t conn_read(struct apis_conn *c, void *p, size_t n)
{
	if (c->ssl) {
		int r = SSL_read(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
		if (r <= 0) {
			ERR_clear_error();
			return -1;
		}
		return r;
	}
	for (;;) {
		ssize_t r = recv(c->fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		return r <= 0 ? -1 : r;
	}
}

static int conn_write_all(struct apis_conn *c, const void *p, size_t n)
{
	const char *q = p;
	while (n > 0) {
		if (c->ssl) {
			int w = SSL_write(c->ssl, q, n > (1 << 30) ? (1 << 30) : (int)n);
			if (w <= 0) {
				ERR_clear_error();
				return -1;
			}
			q += w;
			n -= (size_t)w;
		} else {
			ssize_t w = send(c->fd, q, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			q += w;
			n -= (size_t)w;
		}
	}
	return 0;
}

static const char *status_text(int code)
{
	switch (code) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "Request Entity Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Status";
	}
}

/* Length of the {"apiVersion":"<from>" prefix when body starts with it (rewrite active), else 0. */
static size_t rewrite_prefix(const struct apis_conn *c, const char *body, size_t len)
{
	if (!c->av_from || !c->av_to)
		return 0;
	static const char pre[] = "{\"apiVersion\":\"";
	size_t pl = sizeof pre - 1, fl = strlen(c->av_from);
	if (len < pl + fl + 1 || memcmp(body, pre, pl) || memcmp(body + pl, c->av_from, fl) || body[pl + fl] != '"')
		return 0;
	return pl + fl + 1;
}

void apis_buf_add_object(struct apis_buf *b, const struct apis_conn *c, const char *json, size_t len)
{
	size_t skip = rewrite_prefix(c, json, len);
	if (skip) {
		apis_buf_str(b, "{\"apiVersion\":\"");
		apis_buf_str(b, c->av_to);
		apis_buf_add(b, "\"", 1);
	}
	apis_buf_add(b, json + skip, len - skip);
}

int apis_respond(struct apis_conn *c, int code, const char *ctype, const char *body, size_t len,
		 const char *extra_headers)
{
	if (rewrite_prefix(c, body, len)) {
		struct apis_buf b = {0};
		apis_buf_add_object(&b, c, body, len);
		const char *saved = c->av_from;
		c->av_from = NULL;
		int rc = b.oom ? -1 : apis_respond(c, code, ctype, b.p, b.len, extra_headers);
		c->av_from = saved;
		apis_buf_free(&b);
		return rc;
	}
	char head[1024];
	int hn = snprintf(head, sizeof head,
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nCache-Control: no-cache, private\r\n"
			  "Content-Length: %zu\r\n%s%s\r\n",
			  code, status_text(code), ctype ? ctype : "application/json", len,
			  extra_headers ? extra_headers : "", c->close_after ? "Connection: close\r\n" : "");
	if (hn < 0 || (size_t)hn >= sizeof head)
		return -1;
	if (c->ssl || len < 65536) {
		/* one write: header and body in the same TLS record / TCP segment */
		size_t need = (size_t)hn + len;
		if (need > c->wcap) {
			char *nb = realloc(c->wbuf, need);
			if (!nb)
				return -1;
			c->wbuf = nb;
			c->wcap = need;
		}
		memcpy(c->wbuf, head, (size_t)hn);
		if (len)
			memcpy(c->wbuf + hn, body, len);
		int rc = conn_write_all(c, c->wbuf, need);
		if (c->wcap > (1 << 20)) { /* do not keep huge list buffers around */
			free(c->wbuf);
			c->wbuf = NULL;
			c->wcap = 0;
		}
		return rc;
	}
	if (conn_write_all(c, head, (size_t)hn) < 0)
		return -1;
	return conn_write_all(c, body, len);
}

int apis_respond_json(struct apis_conn *c, int code, const cJSON *obj)
{
	char *txt = cJSON_PrintUnformatted(obj);
	if (!txt)
		return apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
	int rc = apis_respond(c, code, "application/json", txt, strlen(txt), NULL);
	free(txt);
	return rc;
}

int apis_respond_status(struct apis_conn *c, int code, const char *reason, const char *message,
			cJSON *details)
{
	cJSON *st = cJSON_CreateObject();
	if (!st) {
		cJSON_Delete(details);
		return -1;
	}
	cJSON_AddStringToObject(st, "kind", "Status");
	cJSON_AddStringToObject(st, "apiVersion", "v1");
	cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
	cJSON_AddStringToObject(st, "status", code < 400 ? "Success" : "Failure");
	if (message)
		cJSON_AddStringToObject(st, "message", message);
	if (reason && *reason)
		cJSON_AddStringToObject(st, "reason", reason);
	if (details)
		cJSON_AddItemToObject(st, "details", details);
	cJSON_AddNumberToObject(st, "code", code);
	char *txt = cJSON_PrintUnformatted(st);
	cJSON_Delete(st);
	if (!txt)
		return -1;
	char extra[64] = "";
	if (code == 429 || (code == 500 && reason && !strcmp(reason, "ServerTimeout")))
		snprintf(extra, sizeof extra, "Retry-After: 1\r\n");
	int rc = apis_respond(c, code, "application/json", txt, strlen(txt), extra);
	free(txt);
	return rc;
}

int apis_stream_begin(struct apis_conn *c, const char *ctype)
{
	char head[512];
	int hn = snprintf(head, sizeof head,
			  "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-cache, private\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n",
			  ctype);
	c->streaming = true;
	return conn_write_all(c, head, (size_t)hn);
}

int apis_stream_chunk(struct apis_conn *c, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	char hdr[32];
	int hn = snprintf(hdr, sizeof hdr, "%zx\r\n", len);
	size_t need = (size_t)hn + len + 2;
	if (need > c->wcap) {
		char *nb = realloc(c->wbuf, need);
		if (!nb)
			return -1;
		c->wbuf = nb;
		c->wcap = need;
	}
	memcpy(c->wbuf, hdr, (size_t)hn);
	memcpy(c->wbuf + hn, data, len);
	memcpy(c->wbuf + hn + len, "\r\n", 2);
	return conn_write_all(c, c->wbuf, need);
}

void apis_stream_end(struct apis_conn *c)
{
	conn_write_all(c, "0\r\n\r\n", 5);
	c->streaming = false;
}

static void consume(struct apis_conn *c, size_t n);

size_t apis_conn_take_buffered(struct apis_conn *c, char *buf, size_t n)
{
	size_t k = c->rlen < n ? c->rlen : n;
	memcpy(buf, c->rbuf, k);
	consume(c, k);
	return k;
}

ssize_t apis_conn_read_raw(struct apis_conn *c, void *buf, size_t n)
{
	return conn_read(c, buf, n);
}

int apis_conn_write_raw(struct apis_conn *c, const void *buf, size_t n)
{
	return conn_write_all(c, buf, n);
}

int apis_conn_fd(const struct apis_conn *c)
{
	return c->fd;
}

bool apis_conn_pending(const struct apis_conn *c)
{
	return c->ssl && SSL_pending(c->ssl) > 0;
}

bool apis_conn_peer_gone(struct apis_conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int r = poll(&p, 1, 0);
	if (r <= 0)
		return false;
	if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
		return true;
	if (c->ssl)
		return true; /* a client does not send on a connection carrying its watch: close_notify */
	char ch;
	ssize_t n = recv(c->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
	return n <= 0;
}

/* ---------------- request parsing ---------------- */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Percent-decodes [s, s+n) into a new string; plus_space turns '+' into ' ' (query strings). */
static char *url_decode(const char *s, size_t n, bool plus_space)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			out[j++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else if (plus_space && s[i] == '+') {
			out[j++] = ' ';
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = 0;
	return out;
}

const char *apis_query(const struct apis_req *r, const char *key)
{
	for (int i = 0; i < r->nquery; i++)
		if (!strcmp(r->query[i].k, key))
			return r->query[i].v;
	return NULL;
}

int apis_query_bool(struct apis_conn *c, const struct apis_req *r, const char *key, bool *out)
{
	const char *v = apis_query(r, key);
	*out = false;
	if (!v)
		return 0;
	if (kube_parse_bool(v, out) == 0)
		return 0;
	char msg[300];
	snprintf(msg, sizeof msg, "invalid value for query parameter \"%s\": strconv.ParseBool: parsing \"%.200s\": invalid syntax",
		 key, v);
	apis_respond_status(c, 400, "BadRequest", msg, NULL);
	return -1;
}

static void req_clear(struct apis_req *r)
{
	free(r->path);
	for (int i = 0; i < r->nquery; i++) {
		free(r->query[i].k);
		free(r->query[i].v);
	}
	free(r->query);
	free(r->accept);
	free(r->content_type);
	free(r->authorization);
	free(r->user_agent);
	free(r->upgrade);
	free(r->raw_headers);
	free(r->body);
	memset(r, 0, sizeof *r);
}

static int parse_target(struct apis_req *r, const char *t, size_t n)
{
	const char *q = memchr(t, '?', n);
	size_t pn = q ? (size_t)(q - t) : n;
	r->path = url_decode(t, pn, false);
	if (!r->path)
		return -1;
	if (!q)
		return 0;
	const char *p = q + 1, *end = t + n;
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *e = amp ? amp : end;
		if (e > p) {
			const char *eq = memchr(p, '=', (size_t)(e - p));
			const char *ke = eq ? eq : e;
			if (r->nquery >= 64)
				return -1;
			struct apis_kv *nq = realloc(r->query, sizeof *nq * (size_t)(r->nquery + 1));
			if (!nq)
				return -1;
			r->query = nq;
			char *k = url_decode(p, (size_t)(ke - p), true);
			char *v = eq ? url_decode(eq + 1, (size_t)(e - eq - 1), true) : strdup("");
			if (!k || !v) {
				free(k);
				free(v);
				return -1;
			}
			r->query[r->nquery].k = k;
			r->query[r->nquery].v = v;
			r->nquery++;
		}
		p = e + 1;
	}
	return 0;
}

static char *dup_trim(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return strndup(s, n);
}

/* Ensures at least want bytes are buffered. Returns 0 or -1 (closed / error). */
static int fill(struct apis_conn *c, size_t want)
{
	while (c->rlen < want) {
		if (c->rcap < want + 1) {
			size_t nc = c->rcap ? c->rcap : 16384;
			while (nc < want + 1)
				nc *= 2;
			char *nb = realloc(c->rbuf, nc);
			if (!nb)
				return -1;
			c->rbuf = nb;
			c->rcap = nc;
		}
		ssize_t r = conn_read(c, c->rbuf + c->rlen, c->rcap - c->rlen - 1);
		if (r <= 0)
			return -1;
		c->rlen += (size_t)r;
	}
	return 0;
}

static void consume(struct apis_conn *c, size_t n)
{
	memmove(c->rbuf, c->rbuf + n, c->rlen - n);
	c->rlen -= n;
}

static void fail_and_close(struct apis_conn *c, int code, const char *reason, const char *msg)
{
	c->close_after = true;
	apis_respond_status(c, code, reason, msg, NULL);
}

/* Reads a chunked body. Returns 0, -1 (I/O), -2 (malformed), -3 (too large). */
static int read_chunked(struct apis_conn *c, struct apis_req *r, size_t max)
{
	struct apis_buf b = {0};
	for (;;) {
		char *nl;
		for (;;) {
			nl = c->rlen ? memchr(c->rbuf, '\n', c->rlen) : NULL;
			if (nl)
				break;
			if (c->rlen > 1024) {
				apis_buf_free(&b);
				return -2;
			}
			if (fill(c, c->rlen + 1) < 0) {
				apis_buf_free(&b);
				return -1;
			}
		}
		char *endp;
		unsigned long long sz = strtoull(c->rbuf, &endp, 16);
		if (endp == c->rbuf) {
			apis_buf_free(&b);
			return -2;
		}
		consume(c, (size_t)(nl - c->rbuf) + 1);
		if (sz > max || b.len + sz > max) {
			apis_buf_free(&b);
			return -3;
		}
		if (sz == 0) {
			/* trailers until an empty line */
			for (;;) {
				while (!(nl = c->rlen ? memchr(c->rbuf, '\n', c->rlen) : NULL)) {
					if (c->rlen > 8192 || fill(c, c->rlen + 1) < 0) {
						apis_buf_free(&b);
						return -1;
					}
				}
				size_t ln = (size_t)(nl - c->rbuf);
				consume(c, ln + 1);
				if (ln == 0 || (ln == 1))
					break;
			}
			break;
		}
		if (fill(c, (size_t)sz + 2) < 0) {
			apis_buf_free(&b);
			return -1;
		}
		apis_buf_add(&b, c->rbuf, (size_t)sz);
		consume(c, (size_t)sz);
		if (c->rbuf[0] == '\r')
			consume(c, 1);
		if (c->rlen && c->rbuf[0] == '\n')
			consume(c, 1);
		if (b.oom)
			return -1;
	}
	if (!b.p) {
		b.p = strdup("");
		if (!b.p)
			return -1;
	}
	r->body = b.p;
	r->body_len = b.len;
	return 0;
}

/* Reads and parses one request. Returns 1 = request ready, 0 = connection done. */
static int read_request(struct apis_conn *c, struct apis_req *r)
{
	struct apis_server *s = c->srv;
	char *hend;
	size_t scanned = 0;
	for (;;) {
		hend = NULL;
		if (c->rlen >= 4) {
			size_t from = scanned > 3 ? scanned - 3 : 0;
			char *p = memmem(c->rbuf + from, c->rlen - from, "\r\n\r\n", 4);
			if (p)
				hend = p;
			scanned = c->rlen;
		}
		if (hend)
			break;
		/* tolerate blank lines between requests */
		while (c->rlen >= 2 && c->rbuf[0] == '\r' && c->rbuf[1] == '\n') {
			consume(c, 2);
			scanned = 0;
		}
		if (c->rlen >= MAX_HEADER_BYTES) {
			fail_and_close(c, 431, "BadRequest", "request header too large");
			return 0;
		}
		if (fill(c, c->rlen + 1) < 0)
			return 0;
	}
	size_t hlen = (size_t)(hend - c->rbuf) + 4;
	/* request line */
	char *line_end = memchr(c->rbuf, '\n', hlen);
	char *sp1 = memchr(c->rbuf, ' ', (size_t)(line_end - c->rbuf));
	char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(sp1 - c->rbuf) >= sizeof r->method || sp1 == c->rbuf || sp2 == sp1 + 1 ||
	    sp1[1] != '/') {
		fail_and_close(c, 400, "BadRequest", "malformed HTTP request line");
		return 0;
	}
	memcpy(r->method, c->rbuf, (size_t)(sp1 - c->rbuf));
	r->method[sp1 - c->rbuf] = 0;
	bool http10 = (size_t)(line_end - sp2) >= 9 && !strncmp(sp2 + 1, "HTTP/1.0", 8);
	if (strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		fail_and_close(c, 400, "BadRequest", "unsupported HTTP version");
		return 0;
	}
	if (parse_target(r, sp1 + 1, (size_t)(sp2 - sp1 - 1)) < 0) {
		fail_and_close(c, 400, "BadRequest", "malformed request target");
		return 0;
	}
	r->keep_alive = !http10;
	long long clen = -1;
	bool chunked = false, expect = false;
	char *p = line_end + 1;
	while (p < hend + 2) {
		char *e = memchr(p, '\n', (size_t)(hend + 2 - p));
		if (!e)
			break;
		char *colon = memchr(p, ':', (size_t)(e - p));
		if (colon) {
			size_t kn = (size_t)(colon - p);
			const char *v = colon + 1;
			size_t vn = (size_t)(e - v);
#define HDR(name) (kn == sizeof(name) - 1 && !strncasecmp(p, name, kn))
			if (HDR("content-length")) {
				char *t = dup_trim(v, vn);
				char *endp;
				if (!t)
					return 0;
				errno = 0;
				clen = strtoll(t, &endp, 10);
				bool bad = endp == t || *endp || clen < 0 || errno;
				free(t);
				if (bad) {
					fail_and_close(c, 400, "BadRequest", "malformed Content-Length");
					return 0;
				}
			} else if (HDR("transfer-encoding")) {
				char *t = dup_trim(v, vn);
				if (t && strcasestr(t, "chunked"))
					chunked = true;
				free(t);
			} else if (HDR("connection")) {
				char *t = dup_trim(v, vn);
				if (t && strcasestr(t, "close"))
					r->keep_alive = false;
				if (t && strcasestr(t, "keep-alive"))
					r->keep_alive = true;
				free(t);
			} else if (HDR("expect")) {
				expect = true;
			} else if (HDR("accept") && !r->accept) {
				r->accept = dup_trim(v, vn);
			} else if (HDR("content-type") && !r->content_type) {
				r->content_type = dup_trim(v, vn);
			} else if (HDR("authorization") && !r->authorization) {
				r->authorization = dup_trim(v, vn);
			} else if (HDR("user-agent") && !r->user_agent) {
				r->user_agent = dup_trim(v, vn);
			} else if (HDR("upgrade") && !r->upgrade) {
				r->upgrade = dup_trim(v, vn);
			}
#undef HDR
		}
		p = e + 1;
	}
	if (r->upgrade && !(r->raw_headers = strndup(line_end + 1, (size_t)(hend + 2 - (line_end + 1)))))
		return 0;
	consume(c, hlen);
	size_t max = s->opts.max_body_bytes;
	if (chunked) {
		if (expect && conn_write_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
			return 0;
		int rc = read_chunked(c, r, max);
		if (rc == -2) {
			fail_and_close(c, 400, "BadRequest", "malformed chunked request body");
			return 0;
		}
		if (rc == -3) {
			fail_and_close(c, 413, "RequestEntityTooLarge",
				       "the request body is too large (limit exceeded)");
			return 0;
		}
		if (rc < 0)
			return 0;
	} else if (clen > 0) {
		if ((unsigned long long)clen > max) {
			fail_and_close(c, 413, "RequestEntityTooLarge",
				       "the request body is too large (limit exceeded)");
			return 0;
		}
		if (expect && c->rlen == 0 && conn_write_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
			return 0;
		if (fill(c, (size_t)clen) < 0)
			return 0;
		r->body = malloc((size_t)clen + 1);
		if (!r->body)
			return 0;
		memcpy(r->body, c->rbuf, (size_t)clen);
		r->body[clen] = 0;
		r->body_len = (size_t)clen;
		consume(c, (size_t)clen);
	}
	if (!r->keep_alive)
		c->close_after = true;
	return 1;
}

/* ---------------- worker pool on one epoll set ----------------
 *
 * Idle workers wait in epoll_wait on one epoll set holding the listening socket, the wake pipe
 * and every idle keep-alive connection, each connection (and the listener) EPOLLONESHOT: a
 * readable connection wakes exactly one worker, which serves its requests while bytes are
 * buffered and re-arms it. A request on an idle connection so costs one wake-up and no hand-off
 * between threads (an event-loop thread queueing it for a worker cost two wake-ups, a linger
 * timer and the run queue's lock). A watch keeps its worker for the life of the stream, so the
 * pool grows on demand (min_workers .. MAX_WORKERS: a worker taking an event when no other
 * waits starts one) and idle extra workers retire. s->conns_mu guards the connection list and
 * each conn's busy flag; s->pool_mu the worker counts and the retired workers. */

#define MIN_WORKERS 4
#define MAX_WORKERS 1024
#define WORKER_IDLE_SECONDS 10
#define REQUEST_READ_TIMEOUT_S 10

struct apis_worker {
	pthread_t thread;
	struct apis_server *srv;
	struct apis_worker *next; /* s->dead_workers */
};

/* SSL_shutdown writes close_notify with write(2). Workers block SIGPIPE, but stop closes the idle
 * connections on the caller's thread (a test's main thread), where a peer already gone would kill
 * the process: block it around the write and drop the one it raised. */
static void ssl_shutdown_quietly(SSL *ssl)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	SSL_shutdown(ssl);
	sigset_t pending;
	if (!sigismember(&old, SIGPIPE) && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
		const struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Closes and frees c. Caller must own it (a worker, or stop once the loop is gone). */
static void conn_close(struct apis_conn *c)
{
	struct apis_server *s = c->srv;
	if (c->ssl) {
		ssl_shutdown_quietly(c->ssl);
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	ERR_clear_error();
	pthread_mutex_lock(&s->conns_mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	close(c->fd); /* also removes it from the epoll set */
	pthread_mutex_unlock(&s->conns_mu);
	free(c->rbuf);
	free(c->wbuf);
	free(c);
}

static void worker_spawn_locked(struct apis_server *s);

static void rearm(struct apis_conn *c)
{
	struct apis_server *s = c->srv;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c };
	/* Under conns_mu: once armed, c may be taken and closed by another worker at once; the
	 * lock orders this call before that close (and before stop() closing an idle conn). */
	pthread_mutex_lock(&s->conns_mu);
	c->busy = false;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	pthread_mutex_unlock(&s->conns_mu);
}

/* Serves c while requests are buffered; then re-arms or closes it. */
static void serve(struct apis_conn *c)
{
	struct apis_server *s = c->srv;
	if (s->ssl_ctx && !c->ssl) {
		c->ssl = SSL_new(s->ssl_ctx);
		if (!c->ssl || !SSL_set_fd(c->ssl, c->fd) || SSL_accept(c->ssl) <= 0) {
			if (c->ssl) {
				SSL_free(c->ssl);
				c->ssl = NULL;
			}
			conn_close(c);
			return;
		}
	}
	for (;;) {
		if (atomic_load(&s->stopping)) {
			conn_close(c);
			return;
		}
		struct apis_req r;
		memset(&r, 0, sizeof r);
		if (read_request(c, &r) != 1) {
			req_clear(&r);
			conn_close(c);
			return;
		}
		apis_handle(s, c, &r);
		req_clear(&r);
		if (c->close_after) {
			conn_close(c);
			return;
		}
		/* the next request of this client wakes whichever worker waits in epoll_wait */
		if (c->rlen == 0 && !(c->ssl && SSL_pending(c->ssl) > 0))
			break;
	}
	if (c->rcap > 65536) { /* keep idle connections small */
		free(c->rbuf);
		c->rbuf = NULL;
		c->rcap = 0;
	}
	rearm(c);
}

static void accept_all(struct apis_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN (non-blocking listener) or a transient error */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct timeval snd = { .tv_sec = 30 }, rcv = { .tv_sec = REQUEST_READ_TIMEOUT_S };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv);
		struct apis_conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		c->srv = s;
		c->fd = fd;
		pthread_mutex_lock(&s->conns_mu);
		if (s->nconns >= MAX_CONNS) {
			pthread_mutex_unlock(&s->conns_mu);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
		pthread_mutex_unlock(&s->conns_mu);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c };
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			pthread_mutex_lock(&s->conns_mu);
			c->busy = true; /* ours to close */
			pthread_mutex_unlock(&s->conns_mu);
			conn_close(c);
		}
	}
}

static char wake_marker;

/* Joins the workers in d (retired: off every list). */
static void join_workers(struct apis_worker *d)
{
	while (d) {
		struct apis_worker *n = d->next;
		pthread_join(d->thread, NULL);
		free(d);
		d = n;
	}
}

static void *worker_main(void *arg)
{
	struct apis_worker *w = arg;
	struct apis_server *s = w->srv;
	/* OpenSSL writes with write(2): a peer that went away must give EPIPE, not kill the
	 * process hosting the server (tests run it in-process). */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&s->pool_mu);
	for (;;) {
		s->idle_workers++;
		pthread_mutex_unlock(&s->pool_mu);
		struct epoll_event ev;
		int n = epoll_wait(s->epfd, &ev, 1, s->worker_idle_ms);
		pthread_mutex_lock(&s->pool_mu);
		s->idle_workers--;
		if (atomic_load(&s->stopping) || (n == 1 && ev.data.ptr == &wake_marker))
			break; /* an event taken here stays armed-off: stop closes idle connections */
		if (n == 0 && s->workers > s->min_workers && s->idle_workers > 0)
			break; /* retire, leaving another worker waiting for events */
		if (n != 1)
			continue; /* idle timeout at the minimum, EINTR */
		if (s->idle_workers == 0 && s->workers < MAX_WORKERS)
			worker_spawn_locked(s); /* someone must wait for the next event while we serve */
		struct apis_worker *dead = s->dead_workers;
		s->dead_workers = NULL;
		pthread_mutex_unlock(&s->pool_mu);
		join_workers(dead);
		if (ev.data.ptr == NULL) {
			accept_all(s);
			struct epoll_event lev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = NULL };
			epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listen_fd, &lev);
		} else {
			struct apis_conn *c = ev.data.ptr;
			pthread_mutex_lock(&s->conns_mu);
			c->busy = true;
			pthread_mutex_unlock(&s->conns_mu);
			serve(c);
		}
		pthread_mutex_lock(&s->pool_mu);
	}
	s->workers--;
	w->next = s->dead_workers;
	s->dead_workers = w;
	pthread_cond_broadcast(&s->pool_cond);
	pthread_mutex_unlock(&s->pool_mu);
	ERR_clear_error();
	OPENSSL_thread_stop();
	return NULL;
}

static void worker_spawn_locked(struct apis_server *s)
{
	struct apis_worker *w = calloc(1, sizeof *w);
	if (!w)
		return;
	w->srv = s;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	if (pthread_create(&w->thread, &attr, worker_main, w) == 0)
		s->workers++;
	else
		free(w);
	pthread_attr_destroy(&attr);
}

/* Joins retired workers. */
static void reap_workers(struct apis_server *s)
{
	pthread_mutex_lock(&s->pool_mu);
	struct apis_worker *d = s->dead_workers;
	s->dead_workers = NULL;
	pthread_mutex_unlock(&s->pool_mu);
	join_workers(d);
}

int apis_http_start(struct apis_server *s)
{
	pthread_mutex_init(&s->pool_mu, NULL);
	pthread_cond_init(&s->pool_cond, NULL);
	s->pool_init = true;
	int fl = fcntl(s->listen_fd, F_GETFL);
	fcntl(s->listen_fd, F_SETFL, fl | O_NONBLOCK);
	if (pipe2(s->wake_pipe, O_CLOEXEC) < 0)
		return -1;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	/* the listener one-shot too: one worker accepts, then re-arms it */
	struct epoll_event lev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = NULL };
	struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &wake_marker }; /* stays readable: wakes all */
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen_fd, &lev) < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wake_pipe[0], &wev) < 0)
		goto fail;
	s->worker_idle_ms = s->opts.worker_idle_ms > 0 ? s->opts.worker_idle_ms : WORKER_IDLE_SECONDS * 1000;
	s->min_workers = s->opts.workers > 0 ? s->opts.workers : MIN_WORKERS;
	if (s->min_workers > MAX_WORKERS)
		s->min_workers = MAX_WORKERS;
	pthread_mutex_lock(&s->pool_mu);
	for (int i = 0; i < s->min_workers; i++)
		worker_spawn_locked(s);
	bool none = s->workers == 0;
	pthread_mutex_unlock(&s->pool_mu);
	if (none)
		goto fail;
	return 0;
fail:
	if (s->epfd >= 0)
		close(s->epfd);
	close(s->wake_pipe[0]);
	close(s->wake_pipe[1]);
	return -1;
}

/* Stops accepting, ends every stream, stops the pool, then closes the idle connections. */
void apis_http_stop(struct apis_server *s)
{
	atomic_store(&s->stopping, true);
	if (write(s->wake_pipe[1], "x", 1) < 0)
		klog_warning("wake pipe write failed", " fd=%d", s->wake_pipe[1]);
	/* workers waiting in epoll_wait see the pipe and leave; busy ones end their connection
	 * (a blocked read or write is cut by the shutdown, a watch by the wake-up) */
	pthread_mutex_lock(&s->pool_mu);
	while (s->workers > 0) {
		pthread_mutex_unlock(&s->pool_mu);
		pthread_mutex_lock(&s->conns_mu);
		for (struct apis_conn *c = s->conns; c; c = c->next)
			if (c->busy)
				shutdown(c->fd, SHUT_RDWR);
		pthread_mutex_unlock(&s->conns_mu);
		apis_watch_wake_all(s);
		pthread_mutex_lock(&s->pool_mu);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (s->workers > 0)
			pthread_cond_timedwait(&s->pool_cond, &s->pool_mu, &ts);
	}
	pthread_mutex_unlock(&s->pool_mu);
	reap_workers(s);
	/* no worker is left: every remaining connection is idle and ours */
	pthread_mutex_lock(&s->conns_mu);
	while (s->conns) {
		struct apis_conn *c = s->conns;
		c->busy = true;
		pthread_mutex_unlock(&s->conns_mu);
		conn_close(c);
		pthread_mutex_lock(&s->conns_mu);
	}
	pthread_mutex_unlock(&s->conns_mu);
	close(s->epfd);
	close(s->wake_pipe[0]);
	close(s->wake_pipe[1]);
	pthread_mutex_destroy(&s->pool_mu);
	pthread_cond_destroy(&s->pool_cond);
	s->pool_init = false;
}
