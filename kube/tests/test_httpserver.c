/* Tests for kube/httpserver: real HTTP(S) requests with libcurl against a running server:
 * health endpoints (plain, verbose, exclude, failing, per-check), 404/405, HEAD, /metrics,
 * custom routes, large bodies, keep-alive, bind errors, TLS with a generated certificate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/httpserver.h"
#include "kube/log.h"
#include "kube/metrics.h"

struct reply {
	long status;
	char *body;
	size_t len;
	char ctype[128];
	char allow[128];
	char nosniff[128];
	long http_version;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *r = ud;
	char *b = realloc(r->body, r->len + sz * n + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, p, sz * n);
	r->body = b;
	r->len += sz * n;
	b[r->len] = 0;
	return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t len = sz * n;
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
		{"content-type:", offsetof(struct reply, ctype)},
		{"allow:", offsetof(struct reply, allow)},
		{"x-content-type-options:", offsetof(struct reply, nosniff)},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t nl = strlen(want[i].name);
		if (len > nl && strncasecmp(p, want[i].name, nl) == 0) {
			const char *v = p + nl;
			size_t vl = len - nl;
			while (vl && (*v == ' '))
				v++, vl--;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
				vl--;
			char *dst = (char *)r + want[i].off;
			snprintf(dst, 128, "%.*s", (int)vl, v); /* every field is char[128] */
		}
	}
	return len;
}

/* One request; reuses `h` when given (keep-alive), else a fresh handle. */
static struct reply request(CURL *h, const char *scheme, int port, const char *method, const char *path)
{
	struct reply r = {0};
	bool own = !h;
	if (own)
		h = curl_easy_init();
	assert_non_null(h);
	char url[512];
	snprintf(url, sizeof(url), "%s://127.0.0.1:%d%s", scheme, port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(h, CURLOPT_NOBODY, strcmp(method, "HEAD") == 0 ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "HEAD") == 0 ? NULL : method);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	CURLcode rc = curl_easy_perform(h);
	if (rc != CURLE_OK)
		fail_msg("%s %s: %s", method, url, curl_easy_strerror(rc));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
	curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &r.http_version);
	if (!r.body)
		r.body = calloc(1, 1);
	if (own)
		curl_easy_cleanup(h);
	return r;
}

/* ---- fixtures ---- */

static int check_ok(void *ctx, char *reason, size_t len)
{
	(void)ctx, (void)reason, (void)len;
	return 0;
}

static int check_flag(void *ctx, char *reason, size_t len)
{
	if (*(int *)ctx) {
		snprintf(reason, len, "broken");
		return 1;
	}
	return 0;
}

static void configz(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	kube_http_respondf(resp, 200, "application/json", "{\"ctx\":\"%s\",\"query\":\"%s\"}", (const char *)ctx,
			   req->query);
}

static void big(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req, (void)ctx;
	size_t n = 300000;
	char *b = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + i % 26);
	b[n] = 0;
	resp->status = 200;
	resp->body = b;
	resp->body_len = n;
	resp->body_owned = true;
}

struct fixture {
	struct kube_http_server *srv;
	struct kube_metrics_registry *reg;
	int failing;
	int port;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->reg = kube_metrics_registry_new();
	struct kube_metric *c = kube_counter_new(f->reg, "test_requests_total", "Requests.", 1, KUBE_LABELS("code"));
	kube_counter_add(c, 3, KUBE_LABELS("200"));
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1", .port = 0, .name = "test"};
	char *err = NULL;
	if (kube_http_server_new(&o, &f->srv, &err) != 0)
		fail_msg("new: %s", err);
	assert_int_equal(kube_http_add_health(f->srv, "ok1", check_ok, NULL), 0);
	assert_int_equal(kube_http_add_health(f->srv, "flag", check_flag, &f->failing), 0);
	assert_int_equal(kube_http_add_check(f->srv, KUBE_READYZ, "readyonly", NULL, NULL), 0);
	assert_int_equal(kube_http_add_metrics(f->srv, f->reg), 0);
	assert_int_equal(kube_http_route(f->srv, "GET", "/configz", configz, "cfg"), 0);
	assert_int_equal(kube_http_route(f->srv, "PUT", "/configz", configz, "put"), 0);
	assert_int_equal(kube_http_route(f->srv, "GET", "/big", big, NULL), 0);
	if (kube_http_server_start(f->srv, &err) != 0)
		fail_msg("start: %s", err);
	f->port = kube_http_server_port(f->srv);
	assert_true(f->port > 0);
	/* Registration after start is refused. */
	kube_log_set_fd(-1);
	assert_int_equal(kube_http_route(f->srv, "GET", "/late", configz, NULL), -1);
	kube_log_set_fd(2);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kube_http_server_free(f->srv);
	kube_metrics_registry_free(f->reg);
	free(f);
	return 0;
}

struct case_ {
	const char *method, *path;
	long status;
	const char *body;  /* exact, or NULL to skip */
	const char *ctype; /* exact, or NULL to skip */
	const char *allow; /* exact, or NULL to skip */
};

static void run_cases(struct fixture *f, const struct case_ *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct case_ *c = &cases[i];
		struct reply r = request(NULL, "http", f->port, c->method, c->path);
		if (r.status != c->status)
			fail_msg("%s %s: status %ld, want %ld (body %s)", c->method, c->path, r.status, c->status, r.body);
		if (c->body && strcmp(r.body, c->body) != 0)
			fail_msg("%s %s: body\n%s\nwant\n%s", c->method, c->path, r.body, c->body);
		if (c->ctype && strcmp(r.ctype, c->ctype) != 0)
			fail_msg("%s %s: content-type %s, want %s", c->method, c->path, r.ctype, c->ctype);
		if (c->allow && strcmp(r.allow, c->allow) != 0)
			fail_msg("%s %s: allow %s, want %s", c->method, c->path, r.allow, c->allow);
		free(r.body);
	}
}

#define TEXT "text/plain; charset=utf-8"

static void test_health_passing(void **state)
{
	struct fixture *f = *state;
	f->failing = 0;
	static const struct case_ cases[] = {
		{"GET", "/healthz", 200, "ok", TEXT, NULL},
		{"GET", "/livez", 200, "ok", TEXT, NULL},
		{"GET", "/readyz", 200, "ok", TEXT, NULL},
		{"GET", "/healthz?verbose", 200, "[+]ok1 ok\n[+]flag ok\nhealthz check passed\n", TEXT, NULL},
		{"GET", "/healthz?verbose=false", 200, "[+]ok1 ok\n[+]flag ok\nhealthz check passed\n", TEXT, NULL},
		{"GET", "/readyz?verbose", 200, "[+]ok1 ok\n[+]flag ok\n[+]readyonly ok\nreadyz check passed\n", TEXT,
		 NULL},
		{"GET", "/livez?verbose&exclude=flag", 200, "[+]ok1 ok\n[+]flag excluded: ok\nlivez check passed\n", TEXT,
		 NULL},
		{"GET", "/healthz?exclude=nope&verbose", 200,
		 "[+]ok1 ok\n[+]flag ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\n"
		 "healthz check passed\n",
		 TEXT, NULL},
		{"GET", "/healthz?verbose&exclude=zz&exclude=ok1&exclude=aa&exclude=zz", 200,
		 "[+]ok1 excluded: ok\n[+]flag ok\nwarn: some health checks cannot be excluded: no matches for "
		 "\"aa\",\"zz\"\nhealthz check passed\n",
		 TEXT, NULL},
		{"GET", "/healthz/flag", 200, "ok", TEXT, NULL},
		{"GET", "/readyz/readyonly", 200, "ok", TEXT, NULL},
		{"GET", "/livez/readyonly", 404, "404 page not found\n", TEXT, NULL},
		{"HEAD", "/healthz", 200, "", TEXT, NULL},
	};
	run_cases(f, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_health_failing(void **state)
{
	struct fixture *f = *state;
	f->failing = 1;
	kube_log_set_fd(-1);
	static const struct case_ cases[] = {
		{"GET", "/healthz", 500, "[+]ok1 ok\n[-]flag failed: reason withheld\nhealthz check failed\n", TEXT, NULL},
		{"GET", "/readyz?verbose", 500,
		 "[+]ok1 ok\n[-]flag failed: reason withheld\n[+]readyonly ok\nreadyz check failed\n", TEXT, NULL},
		{"GET", "/livez?exclude=flag", 200, "ok", TEXT, NULL},
		{"GET", "/healthz/flag", 500, "internal server error: broken\n", TEXT, NULL},
		{"GET", "/healthz/ok1", 200, "ok", TEXT, NULL},
	};
	run_cases(f, cases, sizeof(cases) / sizeof(cases[0]));
	kube_log_set_fd(2);
	f->failing = 0;
}

static void test_routes_404_405(void **state)
{
	struct fixture *f = *state;
	static const struct case_ cases[] = {
		{"GET", "/nope", 404, "404 page not found\n", TEXT, NULL},
		{"GET", "/", 404, "404 page not found\n", TEXT, NULL},
		{"GET", "/healthz/", 404, NULL, NULL, NULL},
		{"POST", "/healthz", 405, "Method Not Allowed\n", TEXT, "GET, HEAD"},
		{"DELETE", "/metrics", 405, NULL, NULL, "GET, HEAD"},
		{"POST", "/configz", 405, NULL, NULL, "GET, HEAD, PUT"},
		{"GET", "/configz", 200, "{\"ctx\":\"cfg\",\"query\":\"\"}", "application/json", NULL},
		{"PUT", "/configz", 200, "{\"ctx\":\"put\",\"query\":\"\"}", "application/json", NULL},
		{"GET", "/configz?a=1&b=x%20y", 200, "{\"ctx\":\"cfg\",\"query\":\"a=1&b=x y\"}", NULL, NULL},
	};
	run_cases(f, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_metrics_endpoint(void **state)
{
	struct fixture *f = *state;
	struct reply r = request(NULL, "http", f->port, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(r.nosniff, "nosniff");
	assert_string_equal(r.body, "# HELP test_requests_total Requests.\n# TYPE test_requests_total counter\n"
				    "test_requests_total{code=\"200\"} 3\n");
	free(r.body);
}

static void test_large_body_and_keepalive(void **state)
{
	struct fixture *f = *state;
	CURL *h = curl_easy_init();
	for (int i = 0; i < 5; i++) {
		struct reply r = request(h, "http", f->port, "GET", "/big");
		assert_int_equal(r.status, 200);
		assert_int_equal(r.len, 300000);
		for (size_t k = 0; k < r.len; k += 9973)
			assert_int_equal(r.body[k], 'a' + k % 26);
		free(r.body);
		r = request(h, "http", f->port, "GET", "/healthz");
		assert_string_equal(r.body, "ok");
		free(r.body);
	}
	long reused = 0;
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &reused);
	assert_int_equal(reused, 0); /* the last request reused the connection */
	curl_easy_cleanup(h);
}

static void test_bind_errors(void **state)
{
	struct fixture *f = *state;
	kube_log_set_fd(-1);
	struct kube_http_server *s2 = NULL;
	char *err = NULL;
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1", .port = f->port, .name = "dup"};
	assert_int_equal(kube_http_server_new(&o, &s2, &err), -1);
	assert_null(s2);
	assert_non_null(err);
	assert_non_null(strstr(err, "cannot listen on 127.0.0.1:"));
	free(err);
	/* Not an IP, and an IP this host does not have: refused (lws alone would listen everywhere). */
	static const char *const bad_addrs[] = {"localhost", "192.0.2.1", "::ffff:192.0.2.1", "1.2.3"};
	for (size_t i = 0; i < sizeof(bad_addrs) / sizeof(bad_addrs[0]); i++) {
		struct kube_http_server_opts ba = {.bind_address = bad_addrs[i]};
		if (kube_http_server_new(&ba, &s2, &err) != -1)
			fail_msg("bind address %s accepted", bad_addrs[i]);
		assert_null(s2);
		assert_non_null(strstr(err, bad_addrs[i]));
		free(err);
	}
	struct kube_http_server_opts bad = {.port = 70000};
	assert_int_equal(kube_http_server_new(&bad, &s2, &err), -1);
	assert_non_null(strstr(err, "port 70000"));
	free(err);
	struct kube_http_server_opts tls = {.port = 0, .tls_cert_file = "/nonexistent.crt", .tls_key_file = "/x.key"};
	assert_int_equal(kube_http_server_new(&tls, &s2, &err), -1);
	assert_non_null(strstr(err, "/nonexistent.crt"));
	free(err);
	/* Readable but not PEM: lws refuses the vhost; the message still names the listener. */
	struct kube_http_server_opts garbage = {.port = 0, .tls_cert_file = "/etc/hostname", .tls_key_file = "/etc/hostname"};
	assert_int_equal(kube_http_server_new(&garbage, &s2, &err), -1);
	assert_null(s2);
	assert_non_null(strstr(err, "TLS certificate/key or cipher list could not be used"));
	free(err);
	struct kube_http_server_opts half = {.port = 0, .tls_cert_file = "/etc/hostname"};
	assert_int_equal(kube_http_server_new(&half, &s2, &err), -1);
	free(err);
	kube_log_set_fd(2);
	kube_http_server_free(NULL);
}

/* A self-signed certificate for 127.0.0.1 written to cert/key files. */
static void make_cert(const char *cert_path, const char *key_path)
{
	EVP_PKEY *pkey = EVP_EC_gen("P-256");
	assert_non_null(pkey);
	X509 *x = X509_new();
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24);
	X509_set_pubkey(x, pkey);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0);
	X509_set_issuer_name(x, name);
	assert_true(X509_sign(x, pkey, EVP_sha256()) > 0);
	FILE *fc = fopen(cert_path, "w"), *fk = fopen(key_path, "w");
	assert_non_null(fc);
	assert_non_null(fk);
	assert_int_equal(PEM_write_X509(fc, x), 1);
	assert_int_equal(PEM_write_PrivateKey(fk, pkey, NULL, NULL, 0, NULL, NULL), 1);
	fclose(fc);
	fclose(fk);
	X509_free(x);
	EVP_PKEY_free(pkey);
}

static void test_tls(void **state)
{
	(void)state;
	char dir[] = "/tmp/kube-httpserver-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cert[128], key[128];
	snprintf(cert, sizeof(cert), "%s/tls.crt", dir);
	snprintf(key, sizeof(key), "%s/tls.key", dir);
	make_cert(cert, key);
	struct kube_http_server *srv = NULL;
	char *err = NULL;
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1", .tls_cert_file = cert, .tls_key_file = key,
					  .name = "tls"};
	if (kube_http_server_new(&o, &srv, &err) != 0)
		fail_msg("new: %s", err);
	assert_int_equal(kube_http_add_health(srv, "ping", NULL, NULL), 0);
	if (kube_http_server_start(srv, &err) != 0)
		fail_msg("start: %s", err);
	int port = kube_http_server_port(srv);
	struct reply r = request(NULL, "https", port, "GET", "/healthz?verbose");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "[+]ping ok\nhealthz check passed\n");
	print_message("TLS response over HTTP/%s\n", r.http_version == CURL_HTTP_VERSION_2_0 ? "2" : "1.1");
	free(r.body);
	r = request(NULL, "https", port, "GET", "/nope");
	assert_int_equal(r.status, 404);
	free(r.body);
	kube_http_server_stop(srv);
	kube_http_server_stop(srv); /* idempotent */
	kube_http_server_free(srv);
	unlink(cert);
	unlink(key);
	rmdir(dir);
}

static void test_default_ping_and_unstarted_free(void **state)
{
	(void)state;
	struct kube_http_server *srv = NULL;
	char *err = NULL;
	/* Never started: free must not hang or leak. */
	assert_int_equal(kube_http_server_new(NULL, &srv, &err), 0);
	assert_true(kube_http_server_port(srv) > 0);
	kube_http_server_free(srv);

	/* A readyz-only check: /healthz and /livez get "ping". */
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1"};
	assert_int_equal(kube_http_server_new(&o, &srv, &err), 0);
	assert_int_equal(kube_http_add_check(srv, KUBE_READYZ, "synced", check_ok, NULL), 0);
	assert_int_equal(kube_http_server_start(srv, &err), 0);
	int port = kube_http_server_port(srv);
	struct reply r = request(NULL, "http", port, "GET", "/livez?verbose");
	assert_string_equal(r.body, "[+]ping ok\nlivez check passed\n");
	free(r.body);
	r = request(NULL, "http", port, "GET", "/readyz?verbose");
	assert_string_equal(r.body, "[+]synced ok\nreadyz check passed\n");
	free(r.body);
	kube_http_server_free(srv);
}

static int connect_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	struct timeval tv = {.tv_sec = 20};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Stopping with an idle keep-alive connection and a half-sent request closes both cleanly. */
static void test_free_with_open_connections(void **state)
{
	(void)state;
	struct kube_http_server *srv = NULL;
	char *err = NULL;
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1"};
	assert_int_equal(kube_http_server_new(&o, &srv, &err), 0);
	assert_int_equal(kube_http_add_health(srv, "ping", NULL, NULL), 0);
	assert_int_equal(kube_http_server_start(srv, &err), 0);
	int port = kube_http_server_port(srv);
	int idle = connect_loopback(port), half = connect_loopback(port);
	const char *full = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(write(idle, full, strlen(full)), (ssize_t)strlen(full));
	char buf[1024] = "";
	ssize_t n = 0, got;
	while (!strstr(buf, "\r\n\r\nok") && (got = read(idle, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0) {
		n += got;
		buf[n] = 0;
	}
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	assert_int_equal(write(half, "GET /healthz HTTP/1.1\r\nHo", 26), 26);
	kube_http_server_free(srv);
	assert_int_equal(read(idle, buf, sizeof(buf)), 0); /* closed by the server */
	assert_true(read(half, buf, sizeof(buf)) <= 0);
	close(idle);
	close(half);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_passing),
		cmocka_unit_test(test_health_failing),
		cmocka_unit_test(test_routes_404_405),
		cmocka_unit_test(test_metrics_endpoint),
		cmocka_unit_test(test_large_body_and_keepalive),
		cmocka_unit_test(test_bind_errors),
	};
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_default_ping_and_unstarted_free),
		cmocka_unit_test(test_free_with_open_connections),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	rc += cmocka_run_group_tests(standalone, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
