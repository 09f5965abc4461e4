/* The persistent HTTP/1.1 client behind kube_request (see kube/rest_conn.h): a pool of
 * keep-alive connections, plain or TLS (OpenSSL, with the CA, client certificate and host checks
 * libcurl applies), one write per request and an answer read by Content-Length, chunks or the
 * connection's end. What a request costs here is the two system calls and the header scan, not a
 * libcurl transfer set up from scratch (docs/benchmarks.md, "The client's per-request cost").
 *
 * Locking: pool->mu guards idle[], nidle, ctx and the files' stamps; it is not held across I/O. */
#include "kube/rest_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "kube/util.h"

#define IDLE_MAX 32                 /* idle connections kept: 16 binders, the event sender, informers, leases */
#define CONNECT_TIMEOUT_MS 10000   /* rest.c's CURLOPT_CONNECTTIMEOUT */
#define READ_CHUNK 16384           /* a connection's first read buffer */
#define READ_MIN 4096              /* no read is given less room than this */
#define READ_KEEP 65536            /* a read buffer up to this size stays with its connection */
#define HEADER_MAX (1u << 20)      /* an answer's header block; more is a broken server */

struct conn {
	int fd;
	SSL *ssl;
	unsigned long uses;           /* requests answered on it */
	/* The read buffer of the last answer, kept for the next one (at most READ_KEEP bytes): a
	 * binding's or an event's answer is read without allocating a buffer, and a small body is
	 * copied out at its size. */
	char *rbuf;
	size_t rcap;
};

/* A TLS file as last loaded: a new connection reloads the context when one of them changed. */
struct file_stamp { struct timespec mtime; off_t size; bool exists; };

struct kube_conn_pool {
	char *host;                   /* without brackets: what getaddrinfo, SNI and the checks take */
	char *port;                   /* decimal */
	char *authority;              /* the Host header: the URL's host[:port] as written */
	char *prefix;                 /* the URL's path ("" or "/prefix") */
	bool tls, host_is_ip;
	struct kube_conn_tls files;   /* copies of the file names (data is loaded once) */
	char *ca_data, *cert_data, *key_data;

	pthread_mutex_t mu;
	SSL_CTX *ctx;
	struct file_stamp stamps[3];  /* ca_file, cert_file, key_file */
	struct conn *idle[IDLE_MAX]; int nidle;
	unsigned long opened;
};

/* ---------- small helpers ---------- */

static double mono_now(void) { return (double)kube_mono_ns() / 1e9; }

/* Milliseconds left until deadline (0 = none: -1 for poll), at least 0. */
static int ms_left(double deadline)
{
	if (deadline <= 0)
		return -1;
	double left = (deadline - mono_now()) * 1000;
	return left <= 0 ? 0 : left > 1e9 ? 1000000000 : (int)left + 1;
}

static CURLcode fail(struct kube_conn_response *r, CURLcode rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static CURLcode fail(struct kube_conn_response *r, CURLcode rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errbuf, sizeof r->errbuf, fmt, ap);
	va_end(ap);
	return rc;
}

static void conn_close(struct conn *c)
{
	if (!c)
		return;
	if (c->ssl)
		SSL_free(c->ssl);   /* no close_notify: the socket is closed right after */
	if (c->fd >= 0)
		close(c->fd);
	free(c->rbuf);
	free(c);
}

/* ---------- a BIO that never raises SIGPIPE ----------
 * OpenSSL's socket BIO writes with write(2); a peer gone away would kill a process that did not
 * ignore SIGPIPE. This one sends with MSG_NOSIGNAL. */

static int nosig_write(BIO *b, const char *in, int n)
{
	int fd = (int)(intptr_t)BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t w = send(fd, in, (size_t)n, MSG_NOSIGNAL);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int)w;
}

static int nosig_read(BIO *b, char *out, int n)
{
	int fd = (int)(intptr_t)BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t r = recv(fd, out, (size_t)n, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	return (int)r;
}

static long nosig_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b; (void)num; (void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int nosig_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *nosig_method;
static pthread_once_t nosig_once = PTHREAD_ONCE_INIT;

static void nosig_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kube-nosigpipe");
	if (m && BIO_meth_set_write(m, nosig_write) && BIO_meth_set_read(m, nosig_read) &&
	    BIO_meth_set_ctrl(m, nosig_ctrl) && BIO_meth_set_create(m, nosig_create))
		nosig_method = m;
	else
		BIO_meth_free(m);
}

/* ---------- TLS context ---------- */

static void stamp_file(const char *path, struct file_stamp *st)
{
	struct stat sb;
	memset(st, 0, sizeof *st);
	if (path && stat(path, &sb) == 0) {
		st->mtime = sb.st_mtim;
		st->size = sb.st_size;
		st->exists = true;
	}
}

static bool stamp_changed(const char *path, const struct file_stamp *old)
{
	if (!path)
		return false;
	struct file_stamp now;
	stamp_file(path, &now);
	return now.exists != old->exists || now.size != old->size || now.mtime.tv_sec != old->mtime.tv_sec ||
	       now.mtime.tv_nsec != old->mtime.tv_nsec;
}

/* Adds every certificate of a PEM bundle to ctx's trust store; false when none loads. */
static bool load_ca_pem(SSL_CTX *ctx, const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	int n = 0;
	X509 *x;
	while (bio && (x = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL))) {
		if (X509_STORE_add_cert(store, x) == 1)
			n++;
		X509_free(x);
	}
	BIO_free(bio);
	ERR_clear_error();   /* the read that ended the loop */
	return n > 0;
}

/* A certificate (and its chain) from PEM text. */
static bool load_cert_pem(SSL_CTX *ctx, const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	X509 *leaf = bio ? PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL) : NULL;
	bool ok = leaf && SSL_CTX_use_certificate(ctx, leaf) == 1;
	X509_free(leaf);
	X509 *ca;
	while (ok && (ca = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
		if (SSL_CTX_add_extra_chain_cert(ctx, ca) != 1) {
			X509_free(ca);
			ok = false;
		}
	BIO_free(bio);
	ERR_clear_error();
	return ok;
}

static bool load_key_pem(SSL_CTX *ctx, const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	bool ok = k && SSL_CTX_use_PrivateKey(ctx, k) == 1;
	EVP_PKEY_free(k);
	BIO_free(bio);
	return ok;
}

/* The context for the pool's material as it is now; NULL when OpenSSL refuses any of it. As
 * rest.c's libcurl setup: only the given CA when there is one (no system bundle beside it), the
 * system's otherwise; the key from the certificate's file or text when none is given. */
static SSL_CTX *build_ctx(struct kube_conn_pool *p)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
	const struct kube_conn_tls *f = &p->files;
	bool ok = true;
	if (f->insecure)
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	else {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
		if (p->ca_data)
			ok = load_ca_pem(ctx, p->ca_data);
		else if (f->ca_file)
			ok = SSL_CTX_load_verify_locations(ctx, f->ca_file, NULL) == 1;
		else
			ok = SSL_CTX_set_default_verify_paths(ctx) == 1;
	}
	if (ok && p->cert_data)
		ok = load_cert_pem(ctx, p->cert_data) &&
		     load_key_pem(ctx, p->key_data ? p->key_data : p->cert_data);
	else if (ok && f->cert_file)
		ok = SSL_CTX_use_certificate_chain_file(ctx, f->cert_file) == 1 &&
		     (p->key_data ? load_key_pem(ctx, p->key_data)
				  : SSL_CTX_use_PrivateKey_file(ctx, f->key_file ? f->key_file : f->cert_file,
								SSL_FILETYPE_PEM) == 1);
	if (ok && (p->cert_data || f->cert_file))
		ok = SSL_CTX_check_private_key(ctx) == 1;
	ERR_clear_error();
	if (!ok) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	stamp_file(f->ca_file, &p->stamps[0]);
	stamp_file(f->cert_file, &p->stamps[1]);
	stamp_file(f->key_file, &p->stamps[2]);
	return ctx;
}

/* The context a new connection uses (a reference the caller frees): rebuilt when a CA, cert or
 * key file changed since it was loaded. NULL when the changed material does not load. */
static SSL_CTX *current_ctx(struct kube_conn_pool *p)
{
	pthread_mutex_lock(&p->mu);
	if (stamp_changed(p->files.ca_file, &p->stamps[0]) || stamp_changed(p->files.cert_file, &p->stamps[1]) ||
	    stamp_changed(p->files.key_file, &p->stamps[2])) {
		SSL_CTX *n = build_ctx(p);
		if (n) {
			SSL_CTX_free(p->ctx);
			p->ctx = n;
		} else {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
	}
	SSL_CTX *ctx = p->ctx;
	SSL_CTX_up_ref(ctx);
	pthread_mutex_unlock(&p->mu);
	return ctx;
}

/* ---------- pool lifecycle ---------- */

/* libcurl's proxy variables for a scheme (it reads http_proxy only in lower case). */
static bool proxy_in_env(bool tls)
{
	static const char *const http_vars[] = { "http_proxy", "all_proxy", "ALL_PROXY", NULL };
	static const char *const https_vars[] = { "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL };
	for (const char *const *v = tls ? https_vars : http_vars; *v; v++) {
		const char *s = getenv(*v);
		if (s && *s)
			return true;
	}
	return false;
}

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* Splits "scheme://authority/prefix" into the pool's fields. false when it is not one this client
 * carries (user info, an empty host, a bad port). */
static bool parse_server(struct kube_conn_pool *p, const char *server)
{
	p->tls = strncmp(server, "https://", 8) == 0;
	const char *a = server + (p->tls ? 8 : 7);
	size_t alen = strcspn(a, "/?#");
	if (alen == 0 || memchr(a, '@', alen) || a[alen] == '?' || a[alen] == '#')
		return false;
	const char *host = a, *port = NULL;
	size_t hlen;
	if (*a == '[') {
		const char *close = memchr(a, ']', alen);
		if (!close)
			return false;
		host = a + 1;
		hlen = (size_t)(close - host);
		if (close + 1 < a + alen) {
			if (close[1] != ':')
				return false;
			port = close + 2;
		}
	} else {
		const char *colon = memchr(a, ':', alen);
		hlen = colon ? (size_t)(colon - a) : alen;
		port = colon ? colon + 1 : NULL;
	}
	size_t plen = port ? (size_t)(a + alen - port) : 0;
	if (hlen == 0 || (port && (plen == 0 || plen > 5 || strspn(port, "0123456789") < plen)))
		return false;
	p->host = strndup(host, hlen);
	p->port = port ? strndup(port, plen) : strdup(p->tls ? "443" : "80");
	p->authority = strndup(a, alen);
	p->prefix = strdup(a + alen);
	if (!p->host || !p->port || !p->authority || !p->prefix)
		return false;
	unsigned char tmp[16];
	p->host_is_ip = inet_pton(AF_INET, p->host, tmp) == 1 || inet_pton(AF_INET6, p->host, tmp) == 1;
	return atoi(p->port) > 0 && atoi(p->port) < 65536;
}

struct kube_conn_pool *kube_conn_pool_new(const char *server, const struct kube_conn_tls *tls)
{
	pthread_once(&nosig_once, nosig_init);
	if (!nosig_method || !server || (strncmp(server, "http://", 7) && strncmp(server, "https://", 8)))
		return NULL;
	struct kube_conn_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	bool oom = false;
	if (!parse_server(p, server) || proxy_in_env(p->tls))
		goto refuse;
	if (p->tls) {
		p->files.insecure = tls->insecure;
		p->files.ca_file = dup_or_null(tls->ca_file, &oom);
		p->files.cert_file = dup_or_null(tls->cert_file, &oom);
		p->files.key_file = dup_or_null(tls->key_file, &oom);
		p->ca_data = dup_or_null(tls->ca_data, &oom);
		p->cert_data = dup_or_null(tls->cert_data, &oom);
		p->key_data = dup_or_null(tls->key_data, &oom);
		if (oom || !(p->ctx = build_ctx(p)))
			goto refuse;
	}
	return p;
refuse:
	kube_conn_pool_free(p);
	return NULL;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void kube_conn_pool_free(struct kube_conn_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nidle; i++)
		conn_close(p->idle[i]);
	SSL_CTX_free(p->ctx);
	free(p->host); free(p->port); free(p->authority); free(p->prefix);
	free((char *)p->files.ca_file); free((char *)p->files.cert_file); free((char *)p->files.key_file);
	free(p->ca_data); free(p->cert_data);
	wipe_free(p->key_data);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

unsigned long kube_conn_pool_opened(struct kube_conn_pool *p)
{
	pthread_mutex_lock(&p->mu);
	unsigned long n = p->opened;
	pthread_mutex_unlock(&p->mu);
	return n;
}

/* ---------- connecting ---------- */

static void tune_socket(int fd)
{
	int one = 1, idle = 30, intvl = 10;   /* as rest.c's TCP_KEEPIDLE / TCP_KEEPINTVL */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
}

/* A connected non-blocking socket, or -1 with the error in r. */
static int tcp_connect(struct kube_conn_pool *p, double deadline, struct kube_conn_response *r, CURLcode *rc)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *res = NULL;
	int gai = getaddrinfo(p->host, p->port, &hints, &res);
	if (gai != 0) {
		*rc = fail(r, CURLE_COULDNT_RESOLVE_HOST, "Could not resolve host: %s", p->host);
		return -1;
	}
	double t0 = mono_now();
	double cdeadline = t0 + CONNECT_TIMEOUT_MS / 1000.0;
	if (deadline > 0 && deadline < cdeadline)
		cdeadline = deadline;
	int fd = -1, err = ECONNREFUSED;
	bool timed_out = false;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
			err = errno;
		} else {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			int n;
			while ((n = poll(&pf, 1, ms_left(cdeadline))) < 0 && errno == EINTR)
				;
			socklen_t len = sizeof err;
			if (n == 0) {
				err = ETIMEDOUT;
				timed_out = true;
			} else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
				err = errno;
			}
			if (err == 0) {
				tune_socket(fd);
				break;
			}
		}
		close(fd);
		fd = -1;
		if (timed_out)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		long ms = (long)((mono_now() - t0) * 1000);
		*rc = timed_out ? fail(r, CURLE_OPERATION_TIMEDOUT, "Failed to connect to %s port %s after %ld ms: Timeout was reached",
				       p->host, p->port, ms)
				: fail(r, CURLE_COULDNT_CONNECT, "Failed to connect to %s port %s after %ld ms: %s", p->host,
				       p->port, ms, strerror(err));
	}
	return fd;
}

/* Waits for the socket (POLLIN or POLLOUT) until deadline; false on timeout or error. */
static bool wait_fd(int fd, short events, double deadline)
{
	struct pollfd pf = { .fd = fd, .events = events };
	int n;
	while ((n = poll(&pf, 1, ms_left(deadline))) < 0 && errno == EINTR)
		;
	return n > 0;
}

static CURLcode tls_handshake(struct kube_conn_pool *p, struct conn *c, double deadline, struct kube_conn_response *r)
{
	SSL_CTX *ctx = current_ctx(p);
	if (!ctx)
		return fail(r, CURLE_SSL_CERTPROBLEM, "unable to load the changed TLS certificate or key files");
	c->ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	BIO *bio = c->ssl ? BIO_new(nosig_method) : NULL;
	if (!bio) {
		ERR_clear_error();
		return fail(r, CURLE_OUT_OF_MEMORY, "out of memory");
	}
	BIO_set_data(bio, (void *)(intptr_t)c->fd);
	SSL_set_bio(c->ssl, bio, bio);
	if (!p->files.insecure) {
		/* the name the certificate must hold: the URL's host, as libcurl checks it */
		if (p->host_is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), p->host) != 1
				  : SSL_set1_host(c->ssl, p->host) != 1) {
			ERR_clear_error();
			return fail(r, CURLE_OUT_OF_MEMORY, "out of memory");
		}
	}
	if (!p->host_is_ip)
		SSL_set_tlsext_host_name(c->ssl, p->host);
	double cdeadline = mono_now() + CONNECT_TIMEOUT_MS / 1000.0;
	if (deadline > 0 && deadline < cdeadline)
		cdeadline = deadline;
	for (;;) {
		ERR_clear_error();
		int ret = SSL_connect(c->ssl);
		if (ret == 1)
			return CURLE_OK;
		int e = SSL_get_error(c->ssl, ret);
		if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
		    wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, cdeadline))
			continue;
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return fail(r, CURLE_OPERATION_TIMEDOUT, "SSL connection timeout");
		long v = SSL_get_verify_result(c->ssl);
		if (v != X509_V_OK) {
			ERR_clear_error();
			return fail(r, CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: %s",
				    X509_verify_cert_error_string(v));
		}
		char why[256];
		unsigned long ec = ERR_get_error();
		if (ec)
			ERR_error_string_n(ec, why, sizeof why);
		else
			snprintf(why, sizeof why, "%s", e == SSL_ERROR_SYSCALL ? "Connection reset or closed by peer" : "error");
		ERR_clear_error();
		return fail(r, CURLE_SSL_CONNECT_ERROR, "OpenSSL SSL_connect: %s in connection to %s:%s", why, p->host,
			    p->port);
	}
}

static struct conn *conn_open(struct kube_conn_pool *p, double deadline, struct kube_conn_response *r, CURLcode *rc)
{
	struct conn *c = calloc(1, sizeof *c);
	if (!c) {
		*rc = fail(r, CURLE_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	c->fd = tcp_connect(p, deadline, r, rc);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	if (p->tls && (*rc = tls_handshake(p, c, deadline, r)) != CURLE_OK) {
		conn_close(c);
		return NULL;
	}
	pthread_mutex_lock(&p->mu);
	p->opened++;
	pthread_mutex_unlock(&p->mu);
	return c;
}

/* An idle connection still open: no byte (nor end of stream) waits on it. A TLS record that is
 * no application data (a session ticket) is consumed and the connection kept. */
static bool conn_alive(struct conn *c)
{
	struct pollfd pf = { .fd = c->fd, .events = POLLIN };
	if (poll(&pf, 1, 0) == 0)
		return true;
	if (!c->ssl || (pf.revents & (POLLERR | POLLHUP)))
		return false;
	char b;
	int n = SSL_peek(c->ssl, &b, 1);
	bool alive = n <= 0 && SSL_get_error(c->ssl, n) == SSL_ERROR_WANT_READ;
	ERR_clear_error();
	return alive;
}

static struct conn *conn_take_idle(struct kube_conn_pool *p)
{
	for (;;) {
		pthread_mutex_lock(&p->mu);
		struct conn *c = p->nidle > 0 ? p->idle[--p->nidle] : NULL;
		pthread_mutex_unlock(&p->mu);
		if (!c || conn_alive(c))
			return c;
		conn_close(c);
	}
}

static void conn_put_idle(struct kube_conn_pool *p, struct conn *c)
{
	pthread_mutex_lock(&p->mu);
	if (p->nidle < IDLE_MAX) {
		p->idle[p->nidle++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	conn_close(c);
}

/* ---------- I/O ---------- */

enum io { IO_OK, IO_EOF, IO_TIMEOUT, IO_ERROR };

/* Writes all of buf. *wrote counts bytes accepted by the socket. */
static enum io conn_write(struct conn *c, const char *buf, size_t n, double deadline, size_t *wrote, int *err)
{
	while (n > 0) {
		ssize_t w;
		if (c->ssl) {
			int ret = SSL_write(c->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
			if (ret <= 0) {
				int e = SSL_get_error(c->ssl, ret);
				*err = errno;
				if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
					ERR_clear_error();
				if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
					if (!wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline))
						return IO_TIMEOUT;
					continue;
				}
				return IO_ERROR;
			}
			w = ret;
		} else {
			w = send(c->fd, buf, n, MSG_NOSIGNAL);
			if (w < 0) {
				*err = errno;
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK) {
					if (!wait_fd(c->fd, POLLOUT, deadline))
						return IO_TIMEOUT;
					continue;
				}
				return IO_ERROR;
			}
		}
		buf += w;
		n -= (size_t)w;
		*wrote += (size_t)w;
	}
	return IO_OK;
}

/* Reads what is there (waiting for at least one byte) into buf. */
static enum io conn_read(struct conn *c, char *buf, size_t cap, double deadline, size_t *got, int *err)
{
	for (;;) {
		if (c->ssl) {
			int ret = SSL_read(c->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
			if (ret > 0) {
				*got = (size_t)ret;
				return IO_OK;
			}
			int e = SSL_get_error(c->ssl, ret);
			*err = errno;
			if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
				ERR_clear_error();
			if (e == SSL_ERROR_ZERO_RETURN)
				return IO_EOF;
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
				if (!wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline))
					return IO_TIMEOUT;
				continue;
			}
			/* a peer that closes without close_notify: the end of a close-delimited answer */
			return e == SSL_ERROR_SYSCALL && *err == 0 ? IO_EOF : IO_ERROR;
		}
		ssize_t r = recv(c->fd, buf, cap, 0);
		if (r > 0) {
			*got = (size_t)r;
			return IO_OK;
		}
		if (r == 0)
			return IO_EOF;
		*err = errno;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (!wait_fd(c->fd, POLLIN, deadline))
				return IO_TIMEOUT;
			continue;
		}
		return IO_ERROR;
	}
}

/* ---------- the answer ---------- */

struct rbuf { char *p; size_t len, cap; };

static bool rbuf_reserve(struct rbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t ncap = b->cap ? b->cap : READ_CHUNK;
	while (ncap < b->len + more + 1)
		ncap *= 2;
	char *np = realloc(b->p, ncap);
	if (!np)
		return false;
	b->p = np;
	b->cap = ncap;
	return true;
}

/* The state of one answer while it is read: reader_start lends it the connection's buffer,
 * reader_end gives the buffer back (or frees one grown past READ_KEEP). */
struct reader {
	struct conn *c;
	struct rbuf b;
	double deadline;
	size_t total;                 /* bytes received for this answer */
	bool trailing;                /* bytes came after the answer: the connection is not reused */
	bool pipelined;               /* more answers follow on c: bytes after this one are theirs */
	size_t next;                  /* pipelined: where the next answer starts in b */
	struct kube_conn_response *r;
	int timeout_s;
};

/* Reads more into rd->b (at least one byte). CURLE_OK, or the error as libcurl words it. */
static CURLcode read_more(struct reader *rd, size_t want)
{
	if (!rbuf_reserve(&rd->b, want < READ_MIN ? READ_MIN : want))
		return fail(rd->r, CURLE_OUT_OF_MEMORY, "out of memory");
	size_t got = 0;
	int err = 0;
	enum io io = conn_read(rd->c, rd->b.p + rd->b.len, rd->b.cap - rd->b.len - 1, rd->deadline, &got, &err);
	if (io == IO_OK) {
		rd->b.len += got;
		rd->b.p[rd->b.len] = 0;
		rd->total += got;
		return CURLE_OK;
	}
	if (io == IO_TIMEOUT)
		return fail(rd->r, CURLE_OPERATION_TIMEDOUT, "Operation timed out after %ld milliseconds with %zu bytes received",
			    (long)rd->timeout_s * 1000, rd->total);
	if (io == IO_EOF)
		return rd->total == 0 ? fail(rd->r, CURLE_GOT_NOTHING, "Empty reply from server")
				      : fail(rd->r, CURLE_PARTIAL_FILE, "transfer closed with outstanding read data remaining");
	return fail(rd->r, CURLE_RECV_ERROR, "Recv failure: %s", strerror(err ? err : ECONNRESET));
}

static bool header_is(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
	size_t n = strlen(name);
	if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0)
		return false;
	const char *v = line + n + 1, *end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*value = v;
	*vlen = (size_t)(end - v);
	return true;
}

static bool token_in(const char *v, size_t vlen, const char *tok)
{
	size_t n = strlen(tok);
	for (size_t i = 0; i + n <= vlen; i++)
		if (strncasecmp(v + i, tok, n) == 0)
			return true;
	return false;
}

struct head {
	long code;
	int minor;                    /* HTTP/1.<minor> */
	bool has_length, chunked, close, keep_alive;
	unsigned long long length;
};

/* Parses the header block b[0..end) (end after the blank line). */
static CURLcode parse_head(struct reader *rd, size_t end, struct head *h)
{
	const char *s = rd->b.p;
	memset(h, 0, sizeof *h);
	if (end < 12 || strncmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
	    s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9')
		return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "Unsupported HTTP version or malformed status line in response");
	h->minor = s[7] - '0';
	h->code = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	const char *line = memchr(s, '\n', end);
	for (line = line ? line + 1 : s + end; line < s + end;) {
		const char *nl = memchr(line, '\n', (size_t)(s + end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(s + end - line);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		const char *v;
		size_t vlen;
		if (header_is(line, len, "Content-Length", &v, &vlen)) {
			char *e;
			char tmp[24];
			if (vlen == 0 || vlen >= sizeof tmp)
				return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "Invalid Content-Length: value");
			memcpy(tmp, v, vlen);
			tmp[vlen] = 0;
			unsigned long long n = strtoull(tmp, &e, 10);
			if (*e || tmp[0] == '-' || (h->has_length && n != h->length))
				return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "Invalid Content-Length: value");
			h->has_length = true;
			h->length = n;
		} else if (header_is(line, len, "Transfer-Encoding", &v, &vlen)) {
			h->chunked = token_in(v, vlen, "chunked");
		} else if (header_is(line, len, "Connection", &v, &vlen)) {
			h->close |= token_in(v, vlen, "close");
			h->keep_alive |= token_in(v, vlen, "keep-alive");
		} else if (header_is(line, len, "Retry-After", &v, &vlen)) {
			char tmp[32], *e;   /* seconds only, as rest.c's libcurl header callback reads it */
			size_t n = vlen < sizeof tmp - 1 ? vlen : sizeof tmp - 1;
			memcpy(tmp, v, n);
			tmp[n] = 0;
			long secs = strtol(tmp, &e, 10);
			if (e != tmp && secs >= 0)
				rd->r->retry_after = (double)secs;
		}
		line = nl ? nl + 1 : s + end;
	}
	return CURLE_OK;
}

/* Where the header block that starts at b[from] ends (after its blank line), or 0 while it is
 * incomplete. Lines end in CRLF or, as libcurl also reads them, a bare LF. */
static size_t head_end(const struct rbuf *b, size_t from)
{
	if (!b->p || b->len <= from)
		return 0;
	for (const char *p = b->p + from, *end = b->p + b->len; (p = memchr(p, '\n', (size_t)(end - p))); p++) {
		const char *q = p + 1;
		if (q < end && *q == '\r')
			q++;
		if (q < end && *q == '\n')
			return (size_t)(q + 1 - b->p);
	}
	return 0;
}

/* Reads until b holds a whole header block; *end is where the body starts. */
static CURLcode read_head(struct reader *rd, size_t from, size_t *end)
{
	for (;;) {
		if ((*end = head_end(&rd->b, from)) != 0)
			return CURLE_OK;
		if (rd->b.len - from > HEADER_MAX)
			return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "Too large response headers");
		CURLcode rc = read_more(rd, 0);
		if (rc)
			return rc;
	}
}

/* Decodes a chunked body that starts at b[pos], in place: the data ends at b[*out_end], the
 * chunked encoding (trailers included) at b[*raw_end]. */
static CURLcode read_chunked(struct reader *rd, size_t pos, size_t *out_end, size_t *raw_end)
{
	size_t out = pos;
	for (;;) {
		char *nl;
		while (!(nl = memchr(rd->b.p + pos, '\n', rd->b.len - pos))) {
			if (rd->b.len - pos > 1024)
				return fail(rd->r, CURLE_RECV_ERROR, "chunk hex-length char not a hex digit");
			CURLcode rc = read_more(rd, 0);
			if (rc)
				return rc;
		}
		char *e;
		errno = 0;
		unsigned long long size = strtoull(rd->b.p + pos, &e, 16);
		if (e == rd->b.p + pos || errno || (*e != '\r' && *e != '\n' && *e != ';' && *e != ' ') || size > SIZE_MAX / 2)
			return fail(rd->r, CURLE_RECV_ERROR, "chunk hex-length char not a hex digit");
		size_t data = (size_t)(nl - rd->b.p) + 1;
		if (size == 0) {
			/* trailers up to the blank line */
			size_t end = 0;
			for (size_t line = data;;) {
				char *tnl;
				while (!(tnl = memchr(rd->b.p + line, '\n', rd->b.len - line))) {
					if (rd->b.len - line > HEADER_MAX)
						return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "Too large trailers");
					CURLcode rc = read_more(rd, 0);
					if (rc)
						return rc;
				}
				size_t llen = (size_t)(tnl - (rd->b.p + line));
				if (llen == 0 || (llen == 1 && rd->b.p[line] == '\r')) {
					end = (size_t)(tnl - rd->b.p) + 1;
					break;
				}
				line = (size_t)(tnl - rd->b.p) + 1;
			}
			rd->trailing = end != rd->b.len;
			*out_end = out;
			*raw_end = end;
			return CURLE_OK;
		}
		while (rd->b.len < data + size + 2) {
			CURLcode rc = read_more(rd, data + size + 2 - rd->b.len);
			if (rc)
				return rc;
		}
		if (rd->b.p[data + size] != '\r' || rd->b.p[data + size + 1] != '\n')
			return fail(rd->r, CURLE_RECV_ERROR, "chunk data not followed by CRLF");
		memmove(rd->b.p + out, rd->b.p + data, (size_t)size);
		out += (size_t)size;
		pos = data + (size_t)size + 2;
		if (pos - out > (1u << 16)) {
			/* keep what is still to decode right after what is decoded */
			memmove(rd->b.p + out, rd->b.p + pos, rd->b.len - pos);
			rd->b.len -= pos - out;
			pos = out;
		}
	}
}

/* Reads one whole answer on c. *keep: c may carry the next request. */
static CURLcode read_answer(struct reader *rd, const char *method, bool *keep)
{
	struct head h;
	size_t body = 0;
	*keep = false;
	for (;;) {
		CURLcode rc = read_head(rd, 0, &body);
		if (rc)
			return rc;
		if ((rc = parse_head(rd, body, &h)))
			return rc;
		if (h.code >= 200 || h.code == 101)
			break;
		/* an interim answer (100 Continue, 103): drop it, the real one follows */
		memmove(rd->b.p, rd->b.p + body, rd->b.len - body);
		rd->b.len -= body;
		rd->r->retry_after = -1;
	}
	if (h.code == 101)
		return fail(rd->r, CURLE_WEIRD_SERVER_REPLY, "unexpected protocol switch");
	rd->r->code = h.code;
	size_t end = body;
	bool persistent = !h.close && (h.minor == 1 || h.keep_alive);
	/* bytes after the answer end the connection, unless they are the next pipelined answer's */
	if (strcmp(method, "HEAD") == 0 || h.code == 204 || h.code == 304) {
		end = rd->next = body;
		if (rd->b.len != body && !rd->pipelined)
			persistent = false;
	} else if (h.chunked) {
		CURLcode rc = read_chunked(rd, body, &end, &rd->next);
		if (rc)
			return rc;
		if (rd->trailing && !rd->pipelined)
			persistent = false;
	} else if (h.has_length) {
		if (h.length > SIZE_MAX / 2)
			return fail(rd->r, CURLE_OUT_OF_MEMORY, "out of memory");
		end = rd->next = body + (size_t)h.length;
		while (rd->b.len < end) {
			CURLcode rc = read_more(rd, end - rd->b.len);
			if (rc)
				return rc;
		}
		if (rd->b.len != end && !rd->pipelined)
			persistent = false;
	} else {
		/* delimited by the connection's end */
		persistent = false;
		for (;;) {
			CURLcode rc = read_more(rd, 0);
			if (rc == CURLE_PARTIAL_FILE)
				break;
			if (rc)
				return rc;
		}
		end = rd->next = rd->b.len;
	}
	*keep = persistent;
	size_t blen = end - body;
	if (blen > 0 && (rd->b.cap <= READ_KEEP || rd->pipelined)) {
		/* the buffer goes back to the connection: the body is copied out at its size */
		char *out = malloc(blen + 1);
		if (!out)
			return fail(rd->r, CURLE_OUT_OF_MEMORY, "out of memory");
		memcpy(out, rd->b.p + body, blen);
		out[blen] = 0;
		rd->r->body = out;
		rd->r->body_len = blen;
	} else if (blen > 0) {
		/* a big body (a list) keeps the buffer it was read into */
		memmove(rd->b.p, rd->b.p + body, blen);
		rd->b.p[blen] = 0;
		rd->r->body = rd->b.p;
		rd->r->body_len = blen;
		rd->b.p = NULL;
		rd->b.cap = 0;
	}
	return CURLE_OK;
}

static struct reader reader_start(struct conn *c, double deadline, struct kube_conn_response *r, int timeout_s)
{
	struct reader rd = { .c = c, .b = { .p = c->rbuf, .cap = c->rcap }, .deadline = deadline, .r = r,
			     .timeout_s = timeout_s };
	c->rbuf = NULL;
	c->rcap = 0;
	return rd;
}

/* reader_start left the connection without a buffer, so this one (if any) takes the place. */
static void reader_end(struct reader *rd)
{
	if (rd->b.cap <= READ_KEEP) {
		rd->c->rbuf = rd->b.p;
		rd->c->rcap = rd->b.cap;
	} else {
		free(rd->b.p);
	}
	rd->b.p = NULL;
}

/* ---------- one request ---------- */

static bool idempotent(const char *m)
{
	return !strcmp(m, "GET") || !strcmp(m, "HEAD") || !strcmp(m, "PUT") || !strcmp(m, "DELETE");
}

static bool needs_length(const char *m) { return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH"); }

static void put(char **w, const char *s, size_t n)
{
	memcpy(*w, s, n);
	*w += n;
}

/* The request's bytes: request line, Host, the caller's headers, Content-Length, body. */
static char *build_request(struct kube_conn_pool *p, const struct kube_conn_request *q, size_t *len)
{
	size_t ml = strlen(q->method), pl = strlen(p->prefix), tl = strlen(q->path);
	size_t ql = q->query && *q->query ? strlen(q->query) : 0, al = strlen(p->authority);
	size_t n = ml + 1 + pl + tl + (ql ? ql + 1 : 0) + 11 + 6 + al + 2 + q->head_len + 40 + 2 + q->body_len;
	char *buf = malloc(n);
	if (!buf)
		return NULL;
	char *w = buf;
	put(&w, q->method, ml);
	*w++ = ' ';
	put(&w, p->prefix, pl);
	put(&w, q->path, tl);
	if (ql) {
		*w++ = '?';
		put(&w, q->query, ql);
	}
	put(&w, " HTTP/1.1\r\nHost: ", 17);
	put(&w, p->authority, al);
	put(&w, "\r\n", 2);
	put(&w, q->head, q->head_len);
	if (q->body || needs_length(q->method)) {
		char num[32];
		int k = snprintf(num, sizeof num, "Content-Length: %zu\r\n", q->body ? q->body_len : 0);
		put(&w, num, (size_t)k);
	}
	put(&w, "\r\n", 2);
	if (q->body)
		put(&w, q->body, q->body_len);
	*len = (size_t)(w - buf);
	return buf;
}

CURLcode kube_conn_do(struct kube_conn_pool *p, const struct kube_conn_request *q, struct kube_conn_response *r)
{
	memset(r, 0, sizeof *r);
	r->retry_after = -1;
	/* SSL_get_error reads this thread's error queue: start it empty (every failure below empties
	 * it again, so the calls in between need not, and it is not cheap) */
	if (p->tls)
		ERR_clear_error();
	double deadline = q->timeout_s > 0 ? mono_now() + q->timeout_s : 0;
	size_t len = 0;
	char *req = build_request(p, q, &len);
	if (!req)
		return fail(r, CURLE_OUT_OF_MEMORY, "out of memory");
	CURLcode rc = CURLE_OK;
	for (int tries = 0;; tries++) {
		struct conn *c = tries == 0 ? conn_take_idle(p) : NULL;
		bool reused = c != NULL;
		if (!c && !(c = conn_open(p, deadline, r, &rc)))
			break;
		size_t wrote = 0;
		int err = 0;
		enum io io = conn_write(c, req, len, deadline, &wrote, &err);
		if (io == IO_ERROR && wrote > 0) {
			/* The server stopped reading: it may have answered first (413 for a body over
			 * its limit) and closed. That answer is the request's, as libcurl reports it. */
			double soon = mono_now() + 1;
			struct reader rd = reader_start(c, deadline > 0 && deadline < soon ? deadline : soon, r, q->timeout_s);
			bool keep;
			CURLcode arc = read_answer(&rd, q->method, &keep);
			reader_end(&rd);
			if (arc == CURLE_OK) {
				conn_close(c);
				r->sent = true;
				rc = CURLE_OK;
				break;
			}
			free(r->body);
			r->body = NULL;
			r->body_len = 0;
			r->code = 0;
			r->retry_after = -1;
		}
		if (io != IO_OK) {
			conn_close(c);
			if (io == IO_TIMEOUT) {
				r->sent = wrote > 0;
				rc = fail(r, CURLE_OPERATION_TIMEDOUT, "Operation timed out after %ld milliseconds with 0 bytes received",
					  (long)q->timeout_s * 1000);
				break;
			}
			/* the request is not all written, so nothing was done: a reused connection that
			 * the server had closed is replaced for every verb */
			if (reused)
				continue;
			rc = fail(r, CURLE_SEND_ERROR, "Send failure: %s", strerror(err ? err : EPIPE));
			break;
		}
		r->sent = true;
		struct reader rd = reader_start(c, deadline, r, q->timeout_s);
		bool keep = false;
		rc = read_answer(&rd, q->method, &keep);
		reader_end(&rd);
		if (rc == CURLE_OK) {
			c->uses++;
			if (keep)
				conn_put_idle(p, c);
			else
				conn_close(c);
			break;
		}
		conn_close(c);
		/* A kept-alive connection that died before the first byte of the answer: the server
		 * closed it as the request went out. Sent again at once only when that is safe. */
		if (reused && rd.total == 0 && rc != CURLE_OPERATION_TIMEDOUT && idempotent(q->method)) {
			r->retry_after = -1;
			continue;
		}
		break;
	}
	explicit_bzero(req, len - q->body_len);   /* the head holds the Authorization header */
	free(req);
	return rc;
}

/* ---------- requests in a pipeline ---------- */

/* Answers [from, n) fail with rc and msg; sent as given. */
static void fail_rest(struct kube_conn_response *r, size_t from, size_t n, CURLcode rc, const char *msg, bool sent)
{
	for (size_t i = from; i < n; i++) {
		r[i].result = fail(&r[i], rc, "%s", msg);
		r[i].sent = sent;
	}
}

void kube_conn_do_pipelined(struct kube_conn_pool *p, const struct kube_conn_request *q, size_t n,
			    struct kube_conn_response *r)
{
	for (size_t i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].retry_after = -1;
	}
	if (n == 0)
		return;
	if (p->tls)
		ERR_clear_error();
	int timeout_s = q[0].timeout_s;
	double deadline = timeout_s > 0 ? mono_now() + timeout_s : 0;
	/* every request's bytes in one buffer, written at once; at[i] is where request i starts */
	size_t total = 0, *at = calloc(n + 1, sizeof *at);
	char *all = NULL;
	if (!at)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *one = build_request(p, &q[i], &len);
		char *grown = one ? realloc(all, total + len) : NULL;
		if (!grown) {
			if (one) {
				explicit_bzero(one, len - q[i].body_len);
				free(one);
			}
			goto oom;
		}
		all = grown;
		memcpy(all + total, one, len);
		explicit_bzero(one, len - q[i].body_len);
		free(one);
		at[i] = total;
		total += len;
	}
	at[n] = total;
	char msg[CURL_ERROR_SIZE];
	for (int tries = 0; tries < 2; tries++) {
		struct conn *c = tries == 0 ? conn_take_idle(p) : NULL;
		bool reused = c != NULL;
		CURLcode rc = CURLE_OK;
		if (!c && !(c = conn_open(p, deadline, &r[0], &rc))) {
			snprintf(msg, sizeof msg, "%s", r[0].errbuf);
			fail_rest(r, 0, n, rc, msg, false);
			break;
		}
		size_t wrote = 0;
		int err = 0;
		enum io io = conn_write(c, all, total, deadline, &wrote, &err);
		if (io != IO_OK) {
			conn_close(c);
			if (io != IO_TIMEOUT && wrote == 0 && reused)
				continue; /* the idle connection was gone: nothing was sent, send it all again */
			if (io == IO_TIMEOUT)
				snprintf(msg, sizeof msg, "Operation timed out after %ld milliseconds with 0 bytes received",
					 (long)timeout_s * 1000);
			else
				snprintf(msg, sizeof msg, "Send failure: %s", strerror(err ? err : EPIPE));
			fail_rest(r, 0, n, io == IO_TIMEOUT ? CURLE_OPERATION_TIMEDOUT : CURLE_SEND_ERROR, msg, false);
			/* a request written in part or whole may have been applied: not sent again blindly */
			for (size_t i = 0; i < n; i++)
				r[i].sent = at[i] < wrote;
			break;
		}
		struct reader rd = reader_start(c, deadline, &r[0], timeout_s);
		bool keep = false;
		size_t i = 0;
		for (; i < n; i++) {
			r[i].sent = true;
			rd.r = &r[i];
			rd.pipelined = i + 1 < n;
			rd.total = rd.b.len; /* bytes already here are this answer's */
			rd.trailing = false;
			rd.next = 0;
			CURLcode arc = read_answer(&rd, q[i].method, &keep);
			if (arc != CURLE_OK) {
				/* the rest were sent and their fate is unknown */
				r[i].result = arc;
				snprintf(msg, sizeof msg, "%s", r[i].errbuf);
				fail_rest(r, i + 1, n, arc == CURLE_OPERATION_TIMEDOUT ? arc : CURLE_RECV_ERROR, msg, true);
				break;
			}
			r[i].done = mono_now();
			/* the next answer's bytes move to the front of the buffer */
			memmove(rd.b.p, rd.b.p + rd.next, rd.b.len - rd.next);
			rd.b.len -= rd.next;
			if (!keep && i + 1 < n) {
				fail_rest(r, i + 1, n, CURLE_RECV_ERROR, "Recv failure: connection closed by the server", true);
				break;
			}
		}
		rd.b.len = 0;
		reader_end(&rd);
		if (i == n && keep) {
			c->uses += n;
			conn_put_idle(p, c);
		} else {
			conn_close(c);
		}
		break;
	}
	explicit_bzero(all, total); /* the heads hold the Authorization header */
	free(all);
	free(at);
	return;
oom:
	if (all)
		explicit_bzero(all, total);
	free(all);
	free(at);
	fail_rest(r, 0, n, CURLE_OUT_OF_MEMORY, "out of memory", false);
}
