/* Tests for the guard of kube/httpserver.c (kube_http_set_guard) and its TLS options: the guard
 * sees method, path and the Authorization header and runs off the service thread (a slow guard
 * does not hold up an open path); 401/403 come back as v1 Status JSON; open paths without a
 * header skip it; a header on an open path still goes through it; HEAD; a client that leaves
 * before the answer; and HTTPS from an in-memory certificate with a minimum TLS version and a
 * cipher list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>

#include "kube/httpserver.h"
#include "kube/servingcert.h"

static atomic_int guard_calls;

static int guard(void *ctx, const char *method, const char *path, const char *authz, char *msg, size_t n)
{
	(void)ctx;
	atomic_fetch_add(&guard_calls, 1);
	if (!strcmp(path, "/slow"))
		usleep(800 * 1000);
	if (!strcmp(authz, "Bearer good"))
		return 0;
	if (!*authz) {
		snprintf(msg, n, "forbidden: User \"system:anonymous\" cannot %s path \"%s\"", method, path);
		return 403;
	}
	return 401;
}

static void big(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	char *b = malloc(20001);
	for (int i = 0; i < 20000; i++)
		b[i] = (char)('a' + i % 26);
	b[20000] = 0;
	kube_http_respond(resp, 200, "text/plain", NULL);
	resp->body = b;
	resp->body_len = 20000;
	resp->body_owned = true;
}

static void hello(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)ctx;
	kube_http_respondf(resp, 200, "text/plain", "hello %s", req->path);
}

struct reply {
	long code;
	char body[32768];
	size_t len;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t k = sz * n;
	if (r->len + k < sizeof r->body) {
		memcpy(r->body + r->len, p, k);
		r->len += k;
		r->body[r->len] = 0;
	}
	return k;
}

static CURLcode get(const char *scheme, int port, const char *path, const char *authz, bool head, long tls_max,
		    struct reply *r)
{
	char url[200];
	snprintf(url, sizeof url, "%s://127.0.0.1:%d%s", scheme, port, path);
	memset(r, 0, sizeof *r);
	CURL *h = curl_easy_init();
	struct curl_slist *hd = NULL;
	if (authz) {
		char line[200];
		snprintf(line, sizeof line, "Authorization: %s", authz);
		hd = curl_slist_append(hd, line);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	if (tls_max)
		curl_easy_setopt(h, CURLOPT_SSLVERSION, tls_max);
	if (head)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
	curl_easy_cleanup(h);
	curl_slist_free_all(hd);
	return rc;
}

static struct kube_http_server *start(const struct kube_http_server_opts *o)
{
	struct kube_http_server *srv;
	char *err = NULL;
	if (kube_http_server_new(o, &srv, &err) != 0)
		fail_msg("new: %s", err);
	static const char *const open_paths[] = {"/healthz", "/open/*", NULL};
	assert_int_equal(kube_http_set_guard(srv, guard, NULL, open_paths), 0);
	assert_int_equal(kube_http_route(srv, "GET", "/metrics", hello, NULL), 0);
	assert_int_equal(kube_http_route(srv, "GET", "/healthz", hello, NULL), 0);
	assert_int_equal(kube_http_route(srv, "GET", "/open/x", hello, NULL), 0);
	assert_int_equal(kube_http_route(srv, "GET", "/slow", hello, NULL), 0);
	assert_int_equal(kube_http_route(srv, "GET", "/open/big", big, NULL), 0);
	assert_int_equal(kube_http_server_start(srv, &err), 0);
	return srv;
}

static void test_guard_decisions(void **state)
{
	(void)state;
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1"};
	struct kube_http_server *srv = start(&o);
	int port = kube_http_server_port(srv);
	static const struct {
		const char *path, *authz;
		long code;
		const char *body; /* substring */
		bool guarded;
	} cases[] = {
		{"/metrics", "Bearer good", 200, "hello /metrics", true},
		{"/metrics", NULL, 403, "\"reason\":\"Forbidden\"", true},
		{"/metrics", NULL, 403, "cannot GET path \\\"/metrics\\\"", true},
		{"/metrics", "Bearer bad", 401, "\"reason\":\"Unauthorized\"", true},
		{"/healthz", NULL, 200, "hello /healthz", false},
		{"/open/x", NULL, 200, "hello /open/x", false},
		{"/healthz", "Bearer bad", 401, "\"code\":401", true}, /* a bad token is never anonymous */
		{"/nope", "Bearer good", 404, "404 page not found", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct reply r;
		int before = atomic_load(&guard_calls);
		assert_int_equal(get("http", port, cases[i].path, cases[i].authz, false, 0, &r), CURLE_OK);
		if (r.code != cases[i].code || !strstr(r.body, cases[i].body))
			fail_msg("case %zu %s: %ld \"%s\"", i, cases[i].path, r.code, r.body);
		assert_int_equal(atomic_load(&guard_calls) - before, cases[i].guarded ? 1 : 0);
		if (r.code == 401 || r.code == 403) {
			cJSON *j = cJSON_Parse(r.body);
			assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "kind")), "Status");
			assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "code")), r.code);
			cJSON_Delete(j);
		}
	}
	struct reply r;
	assert_int_equal(get("http", port, "/metrics", "Bearer good", true, 0, &r), CURLE_OK); /* HEAD */
	assert_int_equal(r.code, 200);
	assert_int_equal(r.len, 0);
	kube_http_server_free(srv);
}

static void *slow_client(void *arg)
{
	struct reply r;
	get("http", *(int *)arg, "/slow", "Bearer good", false, 0, &r);
	return NULL;
}

static void test_slow_guard_does_not_block(void **state)
{
	(void)state;
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1"};
	struct kube_http_server *srv = start(&o);
	int port = kube_http_server_port(srv);
	pthread_t t;
	pthread_create(&t, NULL, slow_client, &port);
	usleep(200 * 1000);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct reply r;
	assert_int_equal(get("http", port, "/healthz", NULL, false, 0, &r), CURLE_OK);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_int_equal(r.code, 200);
	/* served while the guard sleeps on the other request (it would take >= 0.6 s otherwise) */
	assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 500);
	pthread_join(t, NULL);
	/* a client that hangs up before the guard answers: the answer is dropped, the server goes on */
	char url[100];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/slow", port);
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 100L);
	assert_int_not_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	usleep(900 * 1000);
	assert_int_equal(get("http", port, "/metrics", "Bearer good", false, 0, &r), CURLE_OK);
	assert_int_equal(r.code, 200);
	kube_http_server_free(srv);
}

static void test_tls_in_memory(void **state)
{
	(void)state;
	static const char *const ips[] = {"127.0.0.1", NULL};
	char *cert, *key, *err = NULL;
	assert_int_equal(kube_selfsigned_generate("localhost", ips, &cert, &key, &err), 0);
	struct kube_http_server_opts o = {.bind_address = "127.0.0.1", .tls_cert_pem = cert, .tls_key_pem = key,
					  .tls_min_version = 0x0304};
	struct kube_http_server *srv = start(&o);
	int port = kube_http_server_port(srv);
	struct reply r;
	assert_int_equal(get("https", port, "/metrics", "Bearer good", false, 0, &r), CURLE_OK);
	assert_int_equal(r.code, 200);
	/* a body larger than one TLS write (4096 bytes) arrives whole, directly and after the guard */
	assert_int_equal(get("https", port, "/open/big", NULL, false, 0, &r), CURLE_OK);
	assert_int_equal(r.len, 20000);
	assert_int_equal(get("https", port, "/open/big", "Bearer good", false, 0, &r), CURLE_OK);
	assert_int_equal(r.len, 20000);
	/* TLS 1.2 at most: refused by the 1.3 minimum */
	assert_int_not_equal(get("https", port, "/healthz", NULL, false, CURL_SSLVERSION_MAX_TLSv1_2 | CURL_SSLVERSION_TLSv1_2, &r),
			     CURLE_OK);
	/* plain HTTP on the TLS port fails */
	assert_true(get("http", port, "/healthz", NULL, false, 0, &r) != CURLE_OK || r.code != 200);
	kube_http_server_free(srv);
	free(cert);
	free(key);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_decisions),
		cmocka_unit_test(test_slow_guard_does_not_block),
		cmocka_unit_test(test_tls_in_memory),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
