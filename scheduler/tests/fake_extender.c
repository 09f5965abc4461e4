/* Fake scheduler extender HTTP server for the extender tests; see fake_extender.h. */
#include "scheduler/tests/fake_extender.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define FE_MAX_SCRIPT 16
#define FE_MAX_REQ 256

struct fe_script {
	char *path, *body;
	int status, delay_ms;
};
struct fe_req {
	char *path, *body, *ctype;
	char *host, *sni; /* the Host header, the TLS server name ("" when none) */
};

struct fe_server {
	int lfd;
	int stop_pipe[2];
	pthread_t th;
	char url[64];
	pthread_mutex_t mu; /* guards script, reqs */
	struct fe_script script[FE_MAX_SCRIPT];
	int nscript;
	struct fe_req reqs[FE_MAX_REQ];
	int nreqs;
	SSL_CTX *tls; /* NULL: plain HTTP */
};

/* One accepted connection: plain fd or TLS over it. */
struct conn {
	int fd;
	SSL *ssl;
};

/* Waits for fd readable or stop; timeout_ms < 0: forever. 1 readable, 0 timeout, -1 stop. */
static int wait_fd(struct fe_server *s, int fd, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = s->stop_pipe[0], .events = POLLIN }, { .fd = fd, .events = POLLIN } };
	int n = poll(p, fd >= 0 ? 2 : 1, timeout_ms);
	if (n < 0 || (p[0].revents & POLLIN))
		return -1;
	if (fd < 0)
		return 0;
	return (p[1].revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}

static ssize_t conn_read(struct conn *c, char *buf, size_t n)
{
	if (!c->ssl)
		return read(c->fd, buf, n);
	int k = SSL_read(c->ssl, buf, (int)n);
	return k > 0 ? k : -1;
}

static int conn_write(struct conn *c, const char *buf, size_t n)
{
	if (!c->ssl)
		return send(c->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
	return SSL_write(c->ssl, buf, (int)n) == (int)n ? 0 : -1;
}

static void handle(struct fe_server *s, struct conn *cn)
{
	int fd = cn->fd;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	size_t hdr_end = 0, clen = 0;
	for (;;) {
		if ((!cn->ssl || SSL_pending(cn->ssl) == 0) && wait_fd(s, fd, 5000) <= 0)
			goto out;
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *x = realloc(buf, cap);
			if (!x)
				goto out;
			buf = x;
		}
		ssize_t k = conn_read(cn, buf + n, cap - n - 1);
		if (k <= 0)
			goto out;
		n += (size_t)k;
		buf[n] = '\0';
		if (!hdr_end) {
			char *e = strstr(buf, "\r\n\r\n");
			if (!e)
				continue;
			hdr_end = (size_t)(e - buf) + 4;
			char *cl = strcasestr(buf, "\r\nContent-Length:");
			if (cl && cl < e)
				clen = strtoul(cl + 17, NULL, 10);
		}
		if (n >= hdr_end + clen)
			break;
	}
	char method[16] = "", path[256] = "", ctype[128] = "";
	sscanf(buf, "%15s %255s", method, path);
	char *ct = strcasestr(buf, "\r\nContent-Type:");
	if (ct && ct < buf + hdr_end) {
		ct += 15;
		while (*ct == ' ')
			ct++;
		size_t l = strcspn(ct, "\r");
		if (l >= sizeof(ctype))
			l = sizeof(ctype) - 1;
		memcpy(ctype, ct, l);
		ctype[l] = '\0';
	}
	char host[256] = "";
	char *h = strcasestr(buf, "\r\nHost:");
	if (h && h < buf + hdr_end) {
		h += 7;
		while (*h == ' ')
			h++;
		size_t l = strcspn(h, "\r");
		if (l >= sizeof(host))
			l = sizeof(host) - 1;
		memcpy(host, h, l);
		host[l] = '\0';
	}
	const char *sni = cn->ssl ? SSL_get_servername(cn->ssl, TLSEXT_NAMETYPE_host_name) : NULL;
	int status = 404, delay = 0;
	char *reply = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->nreqs < FE_MAX_REQ) {
		struct fe_req *r = &s->reqs[s->nreqs++];
		r->path = strdup(path);
		r->body = strndup(buf + hdr_end, clen);
		r->ctype = strdup(ctype);
		r->host = strdup(host);
		r->sni = strdup(sni ? sni : "");
	}
	for (int i = 0; i < s->nscript; i++)
		if (strcmp(s->script[i].path, path) == 0 && strcmp(method, "POST") == 0) {
			status = s->script[i].status;
			delay = s->script[i].delay_ms;
			reply = strdup(s->script[i].body);
		}
	pthread_mutex_unlock(&s->mu);
	if (delay > 0 && wait_fd(s, -1, delay) < 0)
		goto out_reply;
	const char *body = reply ? reply : "not found";
	char head[256];
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			  status, strlen(body));
	if (conn_write(cn, head, (size_t)hl) < 0 || conn_write(cn, body, strlen(body)) < 0) {
		/* the client gave up (timeout): nothing to do */
	}
out_reply:
	free(reply);
out:
	free(buf);
}

static void *serve(void *arg)
{
	struct fe_server *s = arg;
	for (;;) {
		int r = wait_fd(s, s->lfd, -1);
		if (r < 0)
			break;
		if (r == 0)
			continue;
		int fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		struct conn cn = { .fd = fd };
		if (s->tls) {
			cn.ssl = SSL_new(s->tls);
			if (!cn.ssl || SSL_set_fd(cn.ssl, fd) != 1 || SSL_accept(cn.ssl) != 1) {
				ERR_clear_error();
				SSL_free(cn.ssl);
				close(fd);
				continue;
			}
		}
		handle(s, &cn);
		if (cn.ssl) {
			SSL_shutdown(cn.ssl);
			SSL_free(cn.ssl);
		}
		close(fd);
	}
	return NULL;
}

struct fe_server *fe_start(void) { return fe_start_tls(NULL, NULL, NULL); }

struct fe_server *fe_start_tls(const char *cert_file, const char *key_file, const char *client_ca_file)
{
	/* peers vanish mid-write (timeouts, refused handshakes), and curl runs with CURLOPT_NOSIGNAL */
	signal(SIGPIPE, SIG_IGN);
	struct fe_server *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (cert_file) {
		s->tls = SSL_CTX_new(TLS_server_method());
		if (!s->tls || SSL_CTX_use_certificate_chain_file(s->tls, cert_file) != 1 ||
		    SSL_CTX_use_PrivateKey_file(s->tls, key_file, SSL_FILETYPE_PEM) != 1 ||
		    (client_ca_file && SSL_CTX_load_verify_locations(s->tls, client_ca_file, NULL) != 1)) {
			ERR_clear_error();
			SSL_CTX_free(s->tls);
			free(s);
			return NULL;
		}
		if (client_ca_file)
			SSL_CTX_set_verify(s->tls, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	}
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->lfd, 16) != 0 ||
	    getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0 || pipe(s->stop_pipe) != 0) {
		if (s->lfd >= 0)
			close(s->lfd);
		SSL_CTX_free(s->tls);
		free(s);
		return NULL;
	}
	snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", s->tls ? "https" : "http", ntohs(a.sin_port));
	pthread_mutex_init(&s->mu, NULL);
	if (pthread_create(&s->th, NULL, serve, s) != 0) {
		close(s->lfd);
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
		pthread_mutex_destroy(&s->mu);
		SSL_CTX_free(s->tls);
		free(s);
		return NULL;
	}
	return s;
}

void fe_clear(struct fe_server *s)
{
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->nreqs; i++) {
		free(s->reqs[i].path);
		free(s->reqs[i].body);
		free(s->reqs[i].ctype);
		free(s->reqs[i].host);
		free(s->reqs[i].sni);
	}
	s->nreqs = 0;
	pthread_mutex_unlock(&s->mu);
}

void fe_stop(struct fe_server *s)
{
	if (!s)
		return;
	if (write(s->stop_pipe[1], "x", 1) < 0) {
		/* cannot happen with an open pipe */
	}
	pthread_join(s->th, NULL);
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	fe_clear(s);
	for (int i = 0; i < s->nscript; i++) {
		free(s->script[i].path);
		free(s->script[i].body);
	}
	pthread_mutex_destroy(&s->mu);
	SSL_CTX_free(s->tls);
	free(s);
}

const char *fe_url(const struct fe_server *s) { return s->url; }

void fe_respond(struct fe_server *s, const char *path, int status, const char *body, int delay_ms)
{
	pthread_mutex_lock(&s->mu);
	struct fe_script *sc = NULL;
	for (int i = 0; i < s->nscript; i++)
		if (strcmp(s->script[i].path, path) == 0)
			sc = &s->script[i];
	if (!sc && s->nscript < FE_MAX_SCRIPT) {
		sc = &s->script[s->nscript++];
		sc->path = strdup(path);
		sc->body = NULL;
	}
	if (sc) {
		free(sc->body);
		sc->body = strdup(body ? body : "");
		sc->status = status;
		sc->delay_ms = delay_ms;
	}
	pthread_mutex_unlock(&s->mu);
}

int fe_count(struct fe_server *s, const char *path)
{
	pthread_mutex_lock(&s->mu);
	int n = 0;
	for (int i = 0; i < s->nreqs; i++)
		if (!path || strcmp(s->reqs[i].path, path) == 0)
			n++;
	pthread_mutex_unlock(&s->mu);
	return n;
}

cJSON *fe_body(struct fe_server *s, const char *path, int idx)
{
	cJSON *out = NULL;
	pthread_mutex_lock(&s->mu);
	int matches[FE_MAX_REQ], n = 0;
	for (int i = 0; i < s->nreqs; i++)
		if (strcmp(s->reqs[i].path, path) == 0)
			matches[n++] = i;
	if (idx < 0)
		idx = n - 1;
	if (idx >= 0 && idx < n)
		out = cJSON_Parse(s->reqs[matches[idx]].body);
	pthread_mutex_unlock(&s->mu);
	return out;
}

char *fe_last_content_type(struct fe_server *s)
{
	pthread_mutex_lock(&s->mu);
	char *r = strdup(s->nreqs ? s->reqs[s->nreqs - 1].ctype : "");
	pthread_mutex_unlock(&s->mu);
	return r;
}

char *fe_last_host(struct fe_server *s)
{
	pthread_mutex_lock(&s->mu);
	char *r = strdup(s->nreqs && s->reqs[s->nreqs - 1].host ? s->reqs[s->nreqs - 1].host : "");
	pthread_mutex_unlock(&s->mu);
	return r;
}

char *fe_last_sni(struct fe_server *s)
{
	pthread_mutex_lock(&s->mu);
	char *r = strdup(s->nreqs && s->reqs[s->nreqs - 1].sni ? s->reqs[s->nreqs - 1].sni : "");
	pthread_mutex_unlock(&s->mu);
	return r;
}

int fe_make_cert(const char *cert_path, const char *key_path, const char *cn)
{
	return fe_make_cert_san(cert_path, key_path, cn, "IP:127.0.0.1");
}

int fe_make_cert_san(const char *cert_path, const char *key_path, const char *cn, const char *san)
{
	EVP_PKEY *pkey = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	int rc = -1;
	if (!pkey || !x)
		goto out;
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24);
	X509_set_version(x, 2);
	X509_set_pubkey(x, pkey);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	const char *exts[][2] = { { "basicConstraints", "critical,CA:TRUE" },
				  { "subjectAltName", san },
				  { "keyUsage", "critical,digitalSignature,keyCertSign" } };
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		X509_EXTENSION *ex = X509V3_EXT_conf(NULL, &ctx, exts[i][0], exts[i][1]);
		if (!ex)
			goto out;
		X509_add_ext(x, ex, -1);
		X509_EXTENSION_free(ex);
	}
	if (X509_sign(x, pkey, EVP_sha256()) <= 0)
		goto out;
	FILE *fc = fopen(cert_path, "w"), *fk = fopen(key_path, "w");
	if (fc && fk && PEM_write_X509(fc, x) == 1 && PEM_write_PrivateKey(fk, pkey, NULL, NULL, 0, NULL, NULL) == 1)
		rc = 0;
	if (fc)
		fclose(fc);
	if (fk)
		fclose(fk);
out:
	X509_free(x);
	EVP_PKEY_free(pkey);
	return rc;
}
