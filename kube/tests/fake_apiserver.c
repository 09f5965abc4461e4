/* Scripted HTTP/1.1 (optionally TLS) peer for kube/ tests; see fake_apiserver.h.
 * One accept thread, one thread per connection; keep-alive; Content-Length request bodies. */
#include "kube/tests/fake_apiserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

enum route_kind { ROUTE_REPLY, ROUTE_STREAM, ROUTE_CLOSE, ROUTE_HANDLER };

struct route {
	enum route_kind kind;
	char *method, *prefix;
	int times;                /* remaining; 0 = forever */
	bool used_up;
	int status; char *headers, *body;
	char **chunks; int nchunks; int pause_ms; enum fake_stream_end end;
	fake_handler_fn fn; void *ctx;
};

struct conn_slot {
	pthread_t thread;
	int fd;                   /* -1 once closed */
	bool done;
};

struct fake_apiserver {
	int listen_fd, port;
	char url[64];
	bool tls;
	SSL_CTX *ssl_ctx;
	char *ca_pem, *client_cert_pem, *client_key_pem;
	pthread_t accept_thread;
	atomic_bool stopping;

	pthread_mutex_t mu;       /* guards everything below */
	struct route **routes; size_t nroutes, cap_routes;
	struct fake_request **reqs; size_t nreqs, cap_reqs;
	struct conn_slot **conns; size_t nconns, cap_conns;
	int next_conn_id;
};

struct fake_conn {
	struct fake_apiserver *fs;
	struct conn_slot *slot;
	int fd;
	SSL *ssl;
	int id;
	bool client_cert;
	char buf[65536]; size_t len;   /* read-ahead */
};

/* ---------- small helpers ---------- */

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

static void route_free(struct route *r)
{
	if (!r)
		return;
	free(r->method); free(r->prefix); free(r->headers); free(r->body);
	for (int i = 0; i < r->nchunks; i++)
		free(r->chunks[i]);
	free(r->chunks);
	free(r);
}

void fake_request_free(struct fake_request *r)
{
	if (!r)
		return;
	free(r->path); free(r->headers); free(r->body);
	free(r);
}

static struct fake_request *request_dup(const struct fake_request *r)
{
	struct fake_request *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = *r;
	c->path = xstrdup(r->path);
	c->headers = xstrdup(r->headers);
	c->body = malloc(r->body_len + 1);
	if (c->body) {
		if (r->body_len)
			memcpy(c->body, r->body, r->body_len);
		c->body[r->body_len] = 0;
	}
	return c;
}

/* ---------- TLS material ---------- */

static EVP_PKEY *gen_key(void)
{
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	if (!kctx)
		return NULL;
	if (EVP_PKEY_keygen_init(kctx) <= 0 ||
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kctx, NID_X9_62_prime256v1) <= 0 ||
	    EVP_PKEY_keygen(kctx, &pkey) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(kctx);
	return pkey;
}

static X509 *gen_cert(EVP_PKEY *key, const char *cn, bool server)
{
	X509 *x = X509_new();
	if (!x)
		return NULL;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), server ? 1 : 2);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, key);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	const char *exts[][2] = {
		{"basicConstraints", "critical,CA:TRUE"},
		{"keyUsage", "critical,digitalSignature,keyCertSign"},
		{"subjectAltName", server ? "IP:127.0.0.1,DNS:localhost" : "DNS:client"},
		{"extendedKeyUsage", server ? "serverAuth" : "clientAuth"},
	};
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		X509_EXTENSION *ext = X509V3_EXT_conf(NULL, &v3, exts[i][0], exts[i][1]);
		if (ext) {
			X509_add_ext(x, ext, -1);
			X509_EXTENSION_free(ext);
		}
	}
	if (!X509_sign(x, key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static char *bio_string(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, data, (size_t)n);
		s[n] = 0;
	}
	return s;
}

static char *cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, x);
	char *s = bio_string(b);
	BIO_free(b);
	return s;
}

static char *key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	char *s = bio_string(b);
	BIO_free(b);
	return s;
}

static int accept_any_cert(int ok, X509_STORE_CTX *ctx)
{
	(void)ok; (void)ctx;
	return 1;   /* client certs are optional; the verify result is recorded per connection */
}

static int setup_tls(struct fake_apiserver *fs)
{
	int rc = -1;
	EVP_PKEY *skey = gen_key(), *ckey = gen_key();
	X509 *scert = NULL, *ccert = NULL;
	if (!skey || !ckey)
		goto out;
	scert = gen_cert(skey, "127.0.0.1", true);
	ccert = gen_cert(ckey, "client", false);
	if (!scert || !ccert)
		goto out;
	fs->ssl_ctx = SSL_CTX_new(TLS_server_method());
	if (!fs->ssl_ctx)
		goto out;
	if (SSL_CTX_use_certificate(fs->ssl_ctx, scert) != 1 || SSL_CTX_use_PrivateKey(fs->ssl_ctx, skey) != 1)
		goto out;
	X509_STORE_add_cert(SSL_CTX_get_cert_store(fs->ssl_ctx), ccert);
	SSL_CTX_set_verify(fs->ssl_ctx, SSL_VERIFY_PEER, accept_any_cert);
	fs->ca_pem = cert_pem(scert);
	fs->client_cert_pem = cert_pem(ccert);
	fs->client_key_pem = key_pem(ckey);
	rc = (fs->ca_pem && fs->client_cert_pem && fs->client_key_pem) ? 0 : -1;
out:
	X509_free(scert); X509_free(ccert);
	EVP_PKEY_free(skey); EVP_PKEY_free(ckey);
	return rc;
}

/* ---------- connection I/O ---------- */

static ssize_t conn_read_raw(struct fake_conn *c, char *buf, size_t n)
{
	if (c->ssl) {
		int r = SSL_read(c->ssl, buf, (int)n);
		return r > 0 ? r : (r == 0 ? 0 : -1);
	}
	for (;;) {
		ssize_t r = recv(c->fd, buf, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

static int conn_write(struct fake_conn *c, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w;
		if (c->ssl) {
			int r = SSL_write(c->ssl, buf, (int)n);
			w = r > 0 ? r : -1;
		} else {
			w = send(c->fd, buf, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
		}
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static const char *reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Status";
	}
}

int fake_conn_reply(struct fake_conn *c, int status, const char *headers, const char *body)
{
	size_t blen = body ? strlen(body) : 0;
	char head[1024];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n",
			 status, reason_phrase(status), blen);
	if (conn_write(c, head, (size_t)n) || (headers && conn_write(c, headers, strlen(headers))) ||
	    conn_write(c, "\r\n", 2) || (blen && conn_write(c, body, blen)))
		return -1;
	return 0;
}

int fake_conn_stream_begin(struct fake_conn *c, int status, const char *headers)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
			 status, reason_phrase(status));
	if (conn_write(c, head, (size_t)n) || (headers && conn_write(c, headers, strlen(headers))) ||
	    conn_write(c, "\r\n", 2))
		return -1;
	return 0;
}

int fake_conn_chunk(struct fake_conn *c, const char *data, size_t len)
{
	if (len == 0)
		return 0;
	char hdr[32];
	int n = snprintf(hdr, sizeof(hdr), "%zx\r\n", len);
	if (conn_write(c, hdr, (size_t)n) || conn_write(c, data, len) || conn_write(c, "\r\n", 2))
		return -1;
	return 0;
}

int fake_conn_stream_end(struct fake_conn *c)
{
	return conn_write(c, "0\r\n\r\n", 5);
}

void fake_conn_wait_closed(struct fake_conn *c)
{
	char tmp[256];
	while (!atomic_load(&c->fs->stopping)) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		int r = poll(&p, 1, 50);
		if (r < 0 && errno != EINTR)
			return;
		if (r > 0) {
			ssize_t got = conn_read_raw(c, tmp, sizeof(tmp));
			if (got <= 0)
				return;
		}
	}
}

/* ---------- request parsing ---------- */

/* Reads until the buffer holds a full header block; returns header length or -1. */
static long read_headers(struct fake_conn *c)
{
	for (;;) {
		if (c->len > 0) {
			char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
			if (end)
				return (long)(end - c->buf) + 4;
		}
		if (c->len >= sizeof(c->buf) - 1)
			return -1;
		ssize_t r = conn_read_raw(c, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
	}
}

static bool header_value(const char *headers, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	const char *p = headers;
	while (p && *p) {
		const char *eol = strstr(p, "\r\n");
		if (!eol)
			eol = p + strlen(p);
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t vl = (size_t)(eol - v);
			if (vl >= outlen)
				vl = outlen - 1;
			memcpy(out, v, vl);
			out[vl] = 0;
			return true;
		}
		p = *eol ? eol + 2 : eol;
	}
	return false;
}

char *fake_request_header(const struct fake_request *req, const char *name, char *buf, size_t len)
{
	return header_value(req->headers, name, buf, len) ? buf : NULL;
}

/* Parses one request from c into *req. Returns 0, or -1 when the connection closed / garbage. */
static int read_request(struct fake_conn *c, struct fake_request *req)
{
	memset(req, 0, sizeof(*req));
	long hl = read_headers(c);
	if (hl < 0)
		return -1;
	char *line_end = memmem(c->buf, (size_t)hl, "\r\n", 2);
	char path[8192];
	if (sscanf(c->buf, "%15s %8191s", req->method, path) != 2)
		return -1;
	req->path = strdup(path);
	size_t hdr_len = (size_t)(hl - (line_end + 2 - c->buf));
	req->headers = strndup(line_end + 2, hdr_len);
	if (!req->path || !req->headers)
		return -1;
	char v[64];
	size_t clen = 0;
	if (header_value(req->headers, "Content-Length", v, sizeof(v)))
		clen = strtoul(v, NULL, 10);
	memmove(c->buf, c->buf + hl, c->len - (size_t)hl);
	c->len -= (size_t)hl;
	if (header_value(req->headers, "Expect", v, sizeof(v)) && strcasecmp(v, "100-continue") == 0)
		if (conn_write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25))
			return -1;
	req->body = malloc(clen + 1);
	if (!req->body)
		return -1;
	size_t have = 0;
	while (have < clen) {
		if (c->len > 0) {
			size_t take = c->len < clen - have ? c->len : clen - have;
			memcpy(req->body + have, c->buf, take);
			memmove(c->buf, c->buf + take, c->len - take);
			c->len -= take;
			have += take;
			continue;
		}
		ssize_t r = conn_read_raw(c, c->buf, sizeof(c->buf) - 1);
		if (r <= 0)
			return -1;
		c->len = (size_t)r;
	}
	req->body[clen] = 0;
	req->body_len = clen;
	req->conn_id = c->id;
	req->client_cert = c->client_cert;
	return 0;
}

static bool method_matches(const char *want, const char *got)
{
	return !want || strcasecmp(want, got) == 0;
}

/* Finds and consumes a route; returns a private copy (caller frees) or NULL. */
static struct route *match_route(struct fake_apiserver *fs, const struct fake_request *req)
{
	struct route *copy = NULL;
	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nroutes; i++) {
		struct route *r = fs->routes[i];
		if (r->used_up || !method_matches(r->method, req->method) ||
		    strncmp(req->path, r->prefix, strlen(r->prefix)) != 0)
			continue;
		if (r->times > 0 && --r->times == 0)
			r->used_up = true;
		copy = calloc(1, sizeof(*copy));
		if (copy) {
			*copy = *r;
			copy->method = NULL;
			copy->prefix = NULL;
			copy->headers = xstrdup(r->headers);
			copy->body = xstrdup(r->body);
			copy->chunks = NULL;
			copy->nchunks = 0;
			if (r->nchunks) {
				copy->chunks = calloc((size_t)r->nchunks, sizeof(char *));
				if (copy->chunks) {
					copy->nchunks = r->nchunks;
					for (int k = 0; k < r->nchunks; k++)
						copy->chunks[k] = xstrdup(r->chunks[k]);
				}
			}
		}
		break;
	}
	pthread_mutex_unlock(&fs->mu);
	return copy;
}

static void record_request(struct fake_apiserver *fs, const struct fake_request *req)
{
	struct fake_request *c = request_dup(req);
	if (!c)
		return;
	pthread_mutex_lock(&fs->mu);
	if (fs->nreqs == fs->cap_reqs) {
		size_t ncap = fs->cap_reqs ? fs->cap_reqs * 2 : 64;
		struct fake_request **n = realloc(fs->reqs, ncap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&fs->mu);
			fake_request_free(c);
			return;
		}
		fs->reqs = n;
		fs->cap_reqs = ncap;
	}
	fs->reqs[fs->nreqs++] = c;
	pthread_mutex_unlock(&fs->mu);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Serves one request; returns false when the connection must be closed. */
static bool serve(struct fake_conn *c, const struct fake_request *req)
{
	struct route *r = match_route(c->fs, req);
	if (!r) {
		char body[1024];
		snprintf(body, sizeof(body),
			 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
			 "\"message\":\"fake: no route for %s\",\"reason\":\"NotFound\",\"code\":404}", req->method);
		return fake_conn_reply(c, 404, NULL, body) == 0;
	}
	bool keep = true;
	switch (r->kind) {
	case ROUTE_REPLY:
		keep = fake_conn_reply(c, r->status, r->headers, r->body) == 0;
		break;
	case ROUTE_CLOSE:
		keep = false;
		break;
	case ROUTE_HANDLER:
		keep = r->fn(r->ctx, req, c);
		break;
	case ROUTE_STREAM:
		if (fake_conn_stream_begin(c, 200, r->headers)) {
			keep = false;
			break;
		}
		for (int i = 0; i < r->nchunks; i++) {
			if (r->pause_ms > 0)
				sleep_ms(r->pause_ms);
			if (!r->chunks[i] || fake_conn_chunk(c, r->chunks[i], strlen(r->chunks[i]))) {
				keep = false;
				break;
			}
		}
		if (!keep)
			break;
		if (r->end == FAKE_END_CLEAN) {
			keep = fake_conn_stream_end(c) == 0;
		} else if (r->end == FAKE_END_HANG) {
			fake_conn_wait_closed(c);
			keep = false;
		} else {
			keep = false;
		}
		break;
	}
	route_free(r);
	return keep;
}

static void *conn_main(void *arg)
{
	struct fake_conn *c = arg;
	if (c->fs->tls) {
		c->ssl = SSL_new(c->fs->ssl_ctx);
		if (!c->ssl)
			goto done;
		SSL_set_fd(c->ssl, c->fd);
		if (SSL_accept(c->ssl) != 1)
			goto done;
		X509 *peer = SSL_get_peer_certificate(c->ssl);
		c->client_cert = peer && SSL_get_verify_result(c->ssl) == X509_V_OK;
		X509_free(peer);
	}
	while (!atomic_load(&c->fs->stopping)) {
		struct fake_request req;
		int rc = read_request(c, &req);
		if (rc == 0)
			record_request(c->fs, &req);
		bool keep = rc == 0 && serve(c, &req);
		free(req.path); free(req.headers); free(req.body);
		if (!keep)
			break;
	}
done:
	if (c->ssl) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	pthread_mutex_lock(&c->fs->mu);
	close(c->fd);
	c->slot->fd = -1;
	c->slot->done = true;
	pthread_mutex_unlock(&c->fs->mu);
	ERR_clear_error();
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct fake_apiserver *fs = arg;
	while (!atomic_load(&fs->stopping)) {
		int fd = accept(fs->listen_fd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;
		}
		if (atomic_load(&fs->stopping)) {
			close(fd);
			break;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct fake_conn *c = calloc(1, sizeof(*c));
		struct conn_slot *slot = calloc(1, sizeof(*slot));
		if (!c || !slot) {
			free(c); free(slot);
			close(fd);
			continue;
		}
		c->fs = fs;
		c->fd = fd;
		c->slot = slot;
		slot->fd = fd;
		pthread_mutex_lock(&fs->mu);
		c->id = ++fs->next_conn_id;
		if (fs->nconns == fs->cap_conns) {
			size_t ncap = fs->cap_conns ? fs->cap_conns * 2 : 16;
			struct conn_slot **n = realloc(fs->conns, ncap * sizeof(*n));
			if (!n) {
				pthread_mutex_unlock(&fs->mu);
				free(c); free(slot);
				close(fd);
				continue;
			}
			fs->conns = n;
			fs->cap_conns = ncap;
		}
		fs->conns[fs->nconns++] = slot;
		if (pthread_create(&slot->thread, NULL, conn_main, c) != 0) {
			fs->nconns--;
			pthread_mutex_unlock(&fs->mu);
			free(c); free(slot);
			close(fd);
			continue;
		}
		pthread_mutex_unlock(&fs->mu);
	}
	return NULL;
}

struct fake_apiserver *fake_apiserver_start(bool tls)
{
	struct fake_apiserver *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	signal(SIGPIPE, SIG_IGN);   /* peers vanish mid-write in tests */
	pthread_mutex_init(&fs->mu, NULL);
	fs->tls = tls;
	fs->listen_fd = -1;
	if (tls && setup_tls(fs))
		goto fail;
	fs->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fs->listen_fd < 0)
		goto fail;
	int one = 1;
	setsockopt(fs->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	if (bind(fs->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fs->listen_fd, 128) ||
	    getsockname(fs->listen_fd, (struct sockaddr *)&sa, &sl))
		goto fail;
	fs->port = ntohs(sa.sin_port);
	snprintf(fs->url, sizeof(fs->url), "%s://127.0.0.1:%d", tls ? "https" : "http", fs->port);
	if (pthread_create(&fs->accept_thread, NULL, accept_main, fs) != 0)
		goto fail;
	return fs;
fail:
	if (fs->listen_fd >= 0)
		close(fs->listen_fd);
	SSL_CTX_free(fs->ssl_ctx);
	free(fs->ca_pem); free(fs->client_cert_pem); free(fs->client_key_pem);
	pthread_mutex_destroy(&fs->mu);
	free(fs);
	return NULL;
}

void fake_apiserver_stop(struct fake_apiserver *fs)
{
	if (!fs)
		return;
	atomic_store(&fs->stopping, true);
	shutdown(fs->listen_fd, SHUT_RDWR);
	pthread_join(fs->accept_thread, NULL);
	close(fs->listen_fd);
	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nconns; i++)
		if (fs->conns[i]->fd >= 0)
			shutdown(fs->conns[i]->fd, SHUT_RDWR);
	pthread_mutex_unlock(&fs->mu);
	/* No new connections can appear now: the accept thread is gone. */
	for (size_t i = 0; i < fs->nconns; i++) {
		pthread_join(fs->conns[i]->thread, NULL);
		free(fs->conns[i]);
	}
	free(fs->conns);
	fake_apiserver_clear_routes(fs);
	free(fs->routes);
	fake_apiserver_clear_requests(fs);
	free(fs->reqs);
	SSL_CTX_free(fs->ssl_ctx);
	free(fs->ca_pem); free(fs->client_cert_pem); free(fs->client_key_pem);
	pthread_mutex_destroy(&fs->mu);
	free(fs);
}

const char *fake_apiserver_url(const struct fake_apiserver *fs) { return fs->url; }
int fake_apiserver_port(const struct fake_apiserver *fs) { return fs->port; }
const char *fake_apiserver_ca_pem(const struct fake_apiserver *fs) { return fs->ca_pem; }
const char *fake_apiserver_client_cert_pem(const struct fake_apiserver *fs) { return fs->client_cert_pem; }
const char *fake_apiserver_client_key_pem(const struct fake_apiserver *fs) { return fs->client_key_pem; }

static struct route *route_add(struct fake_apiserver *fs, enum route_kind kind, const char *method,
			       const char *prefix, int times)
{
	(void)fs;
	struct route *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->kind = kind;
	r->method = xstrdup(method);
	r->prefix = strdup(prefix ? prefix : "");
	r->times = times;
	return r;
}

static void route_push(struct fake_apiserver *fs, struct route *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&fs->mu);
	if (fs->nroutes == fs->cap_routes) {
		size_t ncap = fs->cap_routes ? fs->cap_routes * 2 : 16;
		struct route **n = realloc(fs->routes, ncap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&fs->mu);
			route_free(r);
			return;
		}
		fs->routes = n;
		fs->cap_routes = ncap;
	}
	fs->routes[fs->nroutes++] = r;
	pthread_mutex_unlock(&fs->mu);
}

void fake_apiserver_reply(struct fake_apiserver *fs, const char *method, const char *path_prefix, int times,
			  int status, const char *headers, const char *body)
{
	struct route *r = route_add(fs, ROUTE_REPLY, method, path_prefix, times);
	if (!r)
		return;
	r->status = status;
	r->headers = xstrdup(headers);
	r->body = xstrdup(body);
	route_push(fs, r);
}

void fake_apiserver_stream(struct fake_apiserver *fs, const char *method, const char *path_prefix, int times,
			   const char *const *chunks, int nchunks, int pause_ms, enum fake_stream_end end)
{
	struct route *r = route_add(fs, ROUTE_STREAM, method, path_prefix, times);
	if (!r)
		return;
	r->chunks = calloc(nchunks > 0 ? (size_t)nchunks : 1, sizeof(char *));
	if (!r->chunks) {
		route_free(r);
		return;
	}
	r->nchunks = nchunks;
	for (int i = 0; i < nchunks; i++)
		r->chunks[i] = xstrdup(chunks[i]);
	r->pause_ms = pause_ms;
	r->end = end;
	route_push(fs, r);
}

void fake_apiserver_close(struct fake_apiserver *fs, const char *method, const char *path_prefix, int times)
{
	route_push(fs, route_add(fs, ROUTE_CLOSE, method, path_prefix, times));
}

void fake_apiserver_handle(struct fake_apiserver *fs, const char *method, const char *path_prefix, int times,
			   fake_handler_fn fn, void *ctx)
{
	struct route *r = route_add(fs, ROUTE_HANDLER, method, path_prefix, times);
	if (!r)
		return;
	r->fn = fn;
	r->ctx = ctx;
	route_push(fs, r);
}

void fake_apiserver_clear_routes(struct fake_apiserver *fs)
{
	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nroutes; i++)
		route_free(fs->routes[i]);
	fs->nroutes = 0;
	pthread_mutex_unlock(&fs->mu);
}

size_t fake_apiserver_request_count(struct fake_apiserver *fs)
{
	pthread_mutex_lock(&fs->mu);
	size_t n = fs->nreqs;
	pthread_mutex_unlock(&fs->mu);
	return n;
}

struct fake_request *fake_apiserver_request(struct fake_apiserver *fs, size_t i)
{
	struct fake_request *r = NULL;
	pthread_mutex_lock(&fs->mu);
	if (i < fs->nreqs)
		r = request_dup(fs->reqs[i]);
	pthread_mutex_unlock(&fs->mu);
	return r;
}

size_t fake_apiserver_count(struct fake_apiserver *fs, const char *method, const char *path_prefix)
{
	size_t n = 0;
	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nreqs; i++)
		if (method_matches(method, fs->reqs[i]->method) &&
		    strncmp(fs->reqs[i]->path, path_prefix, strlen(path_prefix)) == 0)
			n++;
	pthread_mutex_unlock(&fs->mu);
	return n;
}

struct fake_request *fake_apiserver_last(struct fake_apiserver *fs, const char *method, const char *path_prefix)
{
	struct fake_request *r = NULL;
	pthread_mutex_lock(&fs->mu);
	for (size_t i = fs->nreqs; i-- > 0;)
		if (method_matches(method, fs->reqs[i]->method) &&
		    strncmp(fs->reqs[i]->path, path_prefix, strlen(path_prefix)) == 0) {
			r = request_dup(fs->reqs[i]);
			break;
		}
	pthread_mutex_unlock(&fs->mu);
	return r;
}

void fake_apiserver_clear_requests(struct fake_apiserver *fs)
{
	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nreqs; i++)
		fake_request_free(fs->reqs[i]);
	fs->nreqs = 0;
	pthread_mutex_unlock(&fs->mu);
}
