/* Tests for kube/rest.c against the scripted fake API server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "kube/rest.h"
#include "kube/tests/fake_apiserver.h"
#include "kube/tests/fake_clock.h"

struct env {
	struct fake_apiserver *fs;
	struct kube_client *c;
	struct fake_clock clock;
};

static struct kube_client *client_for(const char *server, struct fake_clock *fc)
{
	struct kube_config cfg = {0};
	cfg.server = (char *)server;
	cfg.qps = 0;   /* no limiting unless a test asks */
	struct kube_client *c = NULL;
	char *err = NULL;
	assert_int_equal(kube_client_new(&cfg, &c, &err), 0);
	assert_null(err);
	fake_clock_install(c, fc);
	return c;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->fs = fake_apiserver_start(false);
	assert_non_null(e->fs);
	e->c = client_for(fake_apiserver_url(e->fs), &e->clock);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_client_free(e->c);
	fake_apiserver_stop(e->fs);
	free(e);
	return 0;
}

/* ---------- path builder and encoding ---------- */

static void test_kube_path(void **state)
{
	(void)state;
	static const struct {
		const char *g, *v, *r, *ns, *name, *sub, *want;
	} cases[] = {
		{"", "v1", "pods", NULL, NULL, NULL, "/api/v1/pods"},
		{NULL, "v1", "pods", "shop", NULL, NULL, "/api/v1/namespaces/shop/pods"},
		{"", "v1", "pods", "shop", "web-0", "binding", "/api/v1/namespaces/shop/pods/web-0/binding"},
		{"", "v1", "nodes", NULL, "n1", NULL, "/api/v1/nodes/n1"},
		{"coordination.k8s.io", "v1", "leases", "kube-system", "sched", NULL,
		 "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched"},
		{"schedkit.io", "v1alpha1", "schedulerprofiles", NULL, "p", "status",
		 "/apis/schedkit.io/v1alpha1/schedulerprofiles/p/status"},
		{"", "v1", "namespaces", NULL, "shop", NULL, "/api/v1/namespaces/shop"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = kube_path(cases[i].g, cases[i].v, cases[i].r, cases[i].ns, cases[i].name, cases[i].sub);
		assert_string_equal(p, cases[i].want);
		free(p);
	}
}

static void test_urlencode(void **state)
{
	(void)state;
	static const struct { const char *in, *want; } cases[] = {
		{"app=web", "app%3Dweb"},
		{"env in (a,b)", "env%20in%20%28a%2Cb%29"},
		{"status.phase!=Succeeded", "status.phase%21%3DSucceeded"},
		{"a-b_c.d~e", "a-b_c.d~e"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = kube_urlencode(cases[i].in);
		assert_string_equal(s, cases[i].want);
		free(s);
	}
}

/* ---------- Status -> kube_error ---------- */

static void test_status_mapping(void **state)
{
	struct env *e = *state;
	static const struct {
		int status; const char *body;
		int want_code; const char *want_reason; const char *want_msg; bool retriable;
	} cases[] = {
		{404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		      "\"message\":\"pods \\\"web-0\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"web-0\",\"kind\":\"pods\"},\"code\":404}",
		 404, "NotFound", "pods \"web-0\" not found", false},
		{409, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled on leases \\\"x\\\": the object has been modified\","
		      "\"reason\":\"Conflict\",\"code\":409}",
		 409, "Conflict", "Operation cannot be fulfilled on leases \"x\": the object has been modified", false},
		{409, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods \\\"a\\\" already exists\",\"reason\":\"AlreadyExists\",\"code\":409}",
		 409, "AlreadyExists", "pods \"a\" already exists", false},
		{410, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old resource version: 1 (5)\",\"reason\":\"Expired\",\"code\":410}",
		 410, "Expired", "too old resource version: 1 (5)", false},
		{422, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Pod \\\"p\\\" is invalid\",\"reason\":\"Invalid\",\"code\":422}",
		 422, "Invalid", "Pod \"p\" is invalid", false},
		/* not a Status: reason from the HTTP code, body as message */
		{404, "404 page not found\n", 404, "NotFound", "404 page not found", false},
		{403, NULL, 403, "Forbidden", "the server responded with HTTP 403", false},
		{418, "teapot", 418, "", "teapot", false},
		{503, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"down\",\"reason\":\"ServiceUnavailable\",\"code\":503}",
		 503, "ServiceUnavailable", "down", true},
		{429, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"slow down\",\"reason\":\"TooManyRequests\",\"code\":429}",
		 429, "TooManyRequests", "slow down", true},
	};
	kube_client_set_max_retries(e->c, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_apiserver_clear_routes(e->fs);
		fake_apiserver_reply(e->fs, "GET", "/api/v1/x", 0, cases[i].status, NULL, cases[i].body);
		struct kube_error err;
		cJSON *out = (cJSON *)1;
		assert_int_equal(kube_request(e->c, "GET", "/api/v1/x", NULL, NULL, NULL, &out, &err), -1);
		assert_null(out);
		assert_int_equal(err.http_code, cases[i].want_code);
		assert_string_equal(err.reason, cases[i].want_reason);
		assert_string_equal(err.message, cases[i].want_msg);
		assert_int_equal(err.retriable, cases[i].retriable);
	}
	struct kube_error g = {.http_code = 410};
	strcpy(g.reason, "Gone");
	assert_true(kube_error_is_gone(&g));
	struct kube_error nf = {.http_code = 404};
	strcpy(nf.reason, "NotFound");
	assert_true(kube_error_is_not_found(&nf));
	assert_false(kube_error_is_conflict(&nf));
}

static void test_success_and_empty_body(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/namespaces/a/pods/p", 1, 200, NULL,
			     "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
	fake_apiserver_reply(e->fs, "DELETE", "/api/v1/namespaces/a/pods/p", 1, 200, NULL, "");
	cJSON *out = NULL;
	struct kube_error err;
	assert_int_equal(kube_get(e->c, "/api/v1/namespaces/a/pods/p", &out, &err), 0);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "name")->valuestring, "p");
	cJSON_Delete(out);
	assert_int_equal(kube_delete(e->c, "/api/v1/namespaces/a/pods/p", &err), 0);
	struct fake_request *r = fake_apiserver_last(e->fs, "DELETE", "/api/v1");
	assert_non_null(r);
	assert_non_null(strstr(r->body, "\"propagationPolicy\":\"Background\""));
	fake_request_free(r);
	/* a 2xx body that is not JSON is an error */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/bad", 1, 200, NULL, "not json");
	assert_int_equal(kube_get(e->c, "/api/v1/bad", &out, &err), -1);
	assert_null(out);
}

/* ---------- retries ---------- */

static void test_retry_5xx_then_success(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/r", 2, 503, NULL, "{\"kind\":\"Status\",\"reason\":\"ServiceUnavailable\",\"code\":503}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/r", 1, 200, NULL, "{\"ok\":true}");
	cJSON *out = NULL;
	struct kube_error err;
	assert_int_equal(kube_get(e->c, "/api/v1/r", &out, &err), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(out, "ok")));
	cJSON_Delete(out);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/r"), 3);
	/* two backoff sleeps, exponential with jitter in [base, 2*base] */
	assert_int_equal(e->clock.nsleeps, 2);
	assert_true(e->clock.sleeps[0] >= 0.1 && e->clock.sleeps[0] <= 0.2);
	assert_true(e->clock.sleeps[1] >= 0.2 && e->clock.sleeps[1] <= 0.4);
	assert_int_equal(kube_client_request_count(e->c, "GET", 503), 2);
	assert_int_equal(kube_client_request_count(e->c, "GET", 200), 1);
}

static void test_retry_after_honoured(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "PUT", "/api/v1/r", 1, 429, "Retry-After: 7\r\n",
			     "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}");
	fake_apiserver_reply(e->fs, "PUT", "/api/v1/r", 1, 200, NULL, "{}");
	cJSON *body = cJSON_Parse("{\"a\":1}");
	cJSON *out = NULL;
	struct kube_error err;
	assert_int_equal(kube_update(e->c, "/api/v1/r", body, &out, &err), 0);
	cJSON_Delete(out);
	cJSON_Delete(body);
	assert_int_equal(e->clock.nsleeps, 1);
	assert_true(e->clock.sleeps[0] == 7.0);
}

/* 429 means the request was turned away unprocessed: POST and PATCH are retried too. */
static void test_retry_429_any_verb(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "POST", "/api/v1/r", 1, 429, "Retry-After: 2\r\n",
			     "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}");
	fake_apiserver_reply(e->fs, "POST", "/api/v1/r", 1, 201, NULL, "{\"created\":true}");
	fake_apiserver_reply(e->fs, "PATCH", "/api/v1/r", 1, 429, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}");
	fake_apiserver_reply(e->fs, "PATCH", "/api/v1/r", 1, 200, NULL, "{}");
	cJSON *body = cJSON_Parse("{\"a\":1}");
	cJSON *out = NULL;
	struct kube_error err;
	assert_int_equal(kube_create(e->c, "/api/v1/r", body, &out, &err), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(out, "created")));
	cJSON_Delete(out);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", "/api/v1/r"), 2);
	assert_int_equal(kube_patch(e->c, "/api/v1/r", KUBE_PATCH_MERGE, body, NULL, &err), 0);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", "/api/v1/r"), 2);
	cJSON_Delete(body);
	assert_int_equal(e->clock.nsleeps, 2);
	assert_true(e->clock.sleeps[0] == 2.0);
	assert_true(e->clock.sleeps[1] >= 0.1 && e->clock.sleeps[1] <= 0.2);   /* no Retry-After: backoff */
}

static void test_retry_gives_up(void **state)
{
	struct env *e = *state;
	kube_client_set_max_retries(e->c, 3);
	fake_apiserver_reply(e->fs, "GET", "/api/v1/r", 0, 500, NULL, "{\"kind\":\"Status\",\"reason\":\"InternalError\",\"message\":\"boom\",\"code\":500}");
	struct kube_error err;
	assert_int_equal(kube_get(e->c, "/api/v1/r", NULL, &err), -1);
	assert_int_equal(err.http_code, 500);
	assert_string_equal(err.message, "boom");
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/r"), 4);
}

static void test_no_retry_post_after_response(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "POST", "/api/v1/r", 0, 500, NULL, "{\"kind\":\"Status\",\"reason\":\"InternalError\",\"code\":500}");
	fake_apiserver_reply(e->fs, "PATCH", "/api/v1/r", 0, 503, NULL, "{\"kind\":\"Status\",\"reason\":\"ServiceUnavailable\",\"code\":503}");
	cJSON *body = cJSON_Parse("{}");
	struct kube_error err;
	assert_int_equal(kube_create(e->c, "/api/v1/r", body, NULL, &err), -1);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", "/api/v1/r"), 1);
	assert_int_equal(kube_patch(e->c, "/api/v1/r", KUBE_PATCH_MERGE, body, NULL, &err), -1);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", "/api/v1/r"), 1);
	assert_int_equal(e->clock.nsleeps, 0);
	/* the server reads the POST and drops the connection: it may have been applied, no retry.
	 * A fresh client: on a reused keep-alive connection libcurl itself re-sends once when the
	 * connection turns out dead before any response byte (indistinguishable from a stale one). */
	fake_apiserver_close(e->fs, "POST", "/api/v1/c", 0);
	struct kube_client *fresh = client_for(fake_apiserver_url(e->fs), &e->clock);
	assert_int_equal(kube_create(fresh, "/api/v1/c", body, NULL, &err), -1);
	kube_client_free(fresh);
	assert_int_equal(err.http_code, 0);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", "/api/v1/c"), 1);
	cJSON_Delete(body);
}

static void test_retry_post_when_connect_fails(void **state)
{
	(void)state;
	/* a port nobody listens on: the connection fails before anything was sent */
	struct fake_apiserver *fs = fake_apiserver_start(false);
	char url[64];
	snprintf(url, sizeof(url), "%s", fake_apiserver_url(fs));
	fake_apiserver_stop(fs);
	struct fake_clock fc = {0};
	struct kube_client *c = client_for(url, &fc);
	kube_client_set_max_retries(c, 2);
	cJSON *body = cJSON_Parse("{}");
	struct kube_error err;
	assert_int_equal(kube_create(c, "/api/v1/r", body, NULL, &err), -1);
	assert_int_equal(err.http_code, 0);
	assert_true(err.retriable);
	assert_true(strlen(err.message) > 0);
	assert_int_equal(fc.nsleeps, 2);
	assert_int_equal(kube_client_request_count(c, "POST", 0), 3);
	cJSON_Delete(body);
	kube_client_free(c);
}

/* ---------- rate limiter ---------- */

static void test_rate_limiter_math(void **state)
{
	(void)state;
	static const struct { double now; double want_wait; } steps[] = {
		{0.0, 0.0}, {0.0, 0.0},          /* burst 2 */
		{0.0, 0.1}, {0.0, 0.2},          /* queued reservations at 10 qps */
		{1.0, 0.0},                      /* 1 s later: -2 + 10 capped at 2 -> 1 left after this */
		{1.0, 0.0}, {1.0, 0.1},
		{1.05, 0.15},                    /* half a token refilled, 1.5 owed */
	};
	struct kube_rate_limiter rl;
	kube_rate_limiter_init(&rl, 10, 2, 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		double w = kube_rate_limiter_reserve(&rl, steps[i].now);
		assert_true(w > steps[i].want_wait - 1e-9 && w < steps[i].want_wait + 1e-9);
	}
	kube_rate_limiter_init(&rl, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(kube_rate_limiter_reserve(&rl, 0) == 0);
}

static void test_client_rate_limited(void **state)
{
	struct env *e = *state;
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	cfg.qps = 1;
	cfg.burst = 1;
	struct kube_client *c;
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	struct fake_clock fc = {0};
	struct kube_clock k = {fake_clock_now, fake_clock_sleep, &fc};
	kube_client_set_clock(c, &k);
	fake_apiserver_reply(e->fs, "GET", "/api/v1/q", 0, 200, NULL, "{}");
	for (int i = 0; i < 5; i++)
		assert_int_equal(kube_get(c, "/api/v1/q", NULL, NULL), 0);
	assert_int_equal(fc.nsleeps, 4);
	for (int i = 0; i < 4; i++)
		assert_true(fc.sleeps[i] > 0.999 && fc.sleeps[i] < 1.001);
	kube_client_free(c);
}

/* ---------- auth ---------- */

static void test_bearer_token_and_rotation(void **state)
{
	struct env *e = *state;
	char dir[] = "/tmp/sk_rest_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/token", dir);
	FILE *f = fopen(path, "w");
	fputs("tok-one\n", f);
	fclose(f);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	cfg.token_file = path;
	struct kube_client *c;
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	fake_apiserver_reply(e->fs, "GET", "/api/v1/t", 0, 200, NULL, "{}");
	char hv[128];
	assert_int_equal(kube_get(c, "/api/v1/t", NULL, NULL), 0);
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/t");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer tok-one");
	fake_request_free(r);
	/* rotate: new content and a different mtime */
	f = fopen(path, "w");
	fputs("tok-two", f);
	fclose(f);
	struct timespec ts[2] = {{1000, 0}, {1000, 0}};
	utimensat(AT_FDCWD, path, ts, 0);
	assert_int_equal(kube_get(c, "/api/v1/t", NULL, NULL), 0);
	r = fake_apiserver_last(e->fs, "GET", "/api/v1/t");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer tok-two");
	fake_request_free(r);
	kube_client_free(c);
	unlink(path);
	rmdir(dir);

	/* literal token; and User-Agent / Accept */
	cfg.token_file = NULL;
	cfg.token = "literal";
	cfg.user_agent = "test-agent/1";
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/api/v1/t", NULL, NULL), 0);
	r = fake_apiserver_last(e->fs, "GET", "/api/v1/t");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer literal");
	assert_string_equal(fake_request_header(r, "User-Agent", hv, sizeof(hv)), "test-agent/1");
	assert_string_equal(fake_request_header(r, "Accept", hv, sizeof(hv)), "application/json");
	fake_request_free(r);
	kube_client_free(c);

	/* token file unreadable: the literal token is the fallback */
	cfg.token_file = "/nonexistent/token";
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/api/v1/t", NULL, NULL), 0);
	r = fake_apiserver_last(e->fs, "GET", "/api/v1/t");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer literal");
	fake_request_free(r);
	kube_client_free(c);
}

/* ---------- verbs, bodies, content types, keep-alive ---------- */

static void test_verbs_and_content_types(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, NULL, "/api/v1/namespaces/a/pods", 0, 200, NULL, "{\"kind\":\"Pod\"}");
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");
	cJSON *out = NULL;
	static const struct { enum kube_patch_type t; const char *ct; } patches[] = {
		{KUBE_PATCH_MERGE, "application/merge-patch+json"},
		{KUBE_PATCH_JSON, "application/json-patch+json"},
		{KUBE_PATCH_STRATEGIC, "application/strategic-merge-patch+json"},
	};
	char hv[128];
	assert_int_equal(kube_create(e->c, "/api/v1/namespaces/a/pods", obj, &out, NULL), 0);
	cJSON_Delete(out);
	struct fake_request *r = fake_apiserver_last(e->fs, "POST", "/api/v1/namespaces/a/pods");
	assert_string_equal(r->body, "{\"metadata\":{\"name\":\"p\"}}");
	assert_string_equal(fake_request_header(r, "Content-Type", hv, sizeof(hv)), "application/json");
	fake_request_free(r);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(kube_patch(e->c, "/api/v1/namespaces/a/pods/p", patches[i].t, obj, &out, NULL), 0);
		cJSON_Delete(out);
		r = fake_apiserver_last(e->fs, "PATCH", "/api/v1/namespaces/a/pods/p");
		assert_string_equal(fake_request_header(r, "Content-Type", hv, sizeof(hv)), patches[i].ct);
		fake_request_free(r);
	}
	assert_int_equal(kube_update(e->c, "/api/v1/namespaces/a/pods/p", obj, &out, NULL), 0);
	cJSON_Delete(out);
	assert_int_equal(fake_apiserver_count(e->fs, "PUT", "/api/v1/namespaces/a/pods/p"), 1);
	cJSON_Delete(obj);
	/* all on one kept-alive connection */
	size_t n = fake_apiserver_request_count(e->fs);
	struct fake_request *first = fake_apiserver_request(e->fs, 0), *last = fake_apiserver_request(e->fs, n - 1);
	assert_int_equal(first->conn_id, last->conn_id);
	fake_request_free(first);
	fake_request_free(last);
	struct kube_request_count counts[16];
	size_t nc = kube_client_request_counts(e->c, counts, 16);
	assert_int_equal(nc, 3);   /* POST 200, PATCH 200, PUT 200 */
	assert_int_equal(kube_client_request_count(e->c, "PATCH", 200), 3);
}

/* ---------- list pagination ---------- */

static void test_list_pages(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500&labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3D&continue=tok%2B1", 1, 200, NULL,
			     "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[{\"metadata\":{\"name\":\"c\"}}]}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"tok+1\"},"
			     "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}");
	cJSON *out = NULL;
	struct kube_error err;
	assert_int_equal(kube_list(e->c, "/api/v1/pods", "app=web", "spec.nodeName=", &out, &err), 0);
	cJSON *items = cJSON_GetObjectItem(out, "items");
	assert_int_equal(cJSON_GetArraySize(items), 3);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "metadata"), "name")->valuestring, "c");
	cJSON *meta = cJSON_GetObjectItem(out, "metadata");
	assert_string_equal(cJSON_GetObjectItem(meta, "resourceVersion")->valuestring, "20");
	assert_null(cJSON_GetObjectItem(meta, "continue"));
	cJSON_Delete(out);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/pods"), 2);
	/* an expired continue token: one more list without paging (client-go's pager) */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/nodes?limit=500&continue=", 1, 410, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"continue expired\",\"code\":410}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/nodes?limit=500", 1, 200, NULL,
			     "{\"metadata\":{\"continue\":\"x\"},\"items\":[{\"metadata\":{\"name\":\"stale\"}}]}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/nodes", 1, 200, NULL,
			     "{\"metadata\":{\"resourceVersion\":\"31\"},\"items\":[{\"metadata\":{\"name\":\"n1\"}},"
			     "{\"metadata\":{\"name\":\"n2\"}}]}");
	assert_int_equal(kube_list(e->c, "/api/v1/nodes", NULL, NULL, &out, &err), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(out, "items")), 2);   /* not the stale page */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "resourceVersion")->valuestring, "31");
	cJSON_Delete(out);
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/nodes");
	assert_string_equal(r->path, "/api/v1/nodes");
	fake_request_free(r);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/nodes"), 3);
	/* a 410 on a first page (or on the unpaged retry) is returned as is */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/services", 1, 410, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"too old\",\"code\":410}");
	assert_int_equal(kube_list(e->c, "/api/v1/services", NULL, NULL, &out, &err), -1);
	assert_null(out);
	assert_true(kube_error_is_gone(&err));
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/services"), 1);
}

/* ---------- TLS ---------- */

static void test_tls_ca_and_client_cert(void **state)
{
	(void)state;
	struct fake_apiserver *fs = fake_apiserver_start(true);
	assert_non_null(fs);
	fake_apiserver_reply(fs, "GET", "/version", 0, 200, NULL, "{\"major\":\"1\"}");
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(fs);
	struct kube_client *c;
	struct kube_error err;

	/* CA data verifies the server; no client cert presented */
	cfg.ca_data = (char *)fake_apiserver_ca_pem(fs);
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/version", NULL, &err), 0);
	struct fake_request *r = fake_apiserver_last(fs, "GET", "/version");
	assert_false(r->client_cert);
	fake_request_free(r);
	kube_client_free(c);

	/* without the CA the server is not trusted; not retriable */
	cfg.ca_data = NULL;
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/version", NULL, &err), -1);
	assert_int_equal(err.http_code, 0);
	assert_false(err.retriable);
	kube_client_free(c);

	/* insecure-skip-tls-verify */
	cfg.insecure_skip_tls_verify = true;
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/version", NULL, &err), 0);
	kube_client_free(c);
	cfg.insecure_skip_tls_verify = false;

	/* CA file + client certificate and key as PEM blobs */
	char dir[] = "/tmp/sk_tls_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char ca[64], cert[64], key[64];
	snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
	snprintf(cert, sizeof(cert), "%s/client.crt", dir);
	snprintf(key, sizeof(key), "%s/client.key", dir);
	FILE *f = fopen(ca, "w"); fputs(fake_apiserver_ca_pem(fs), f); fclose(f);
	f = fopen(cert, "w"); fputs(fake_apiserver_client_cert_pem(fs), f); fclose(f);
	f = fopen(key, "w"); fputs(fake_apiserver_client_key_pem(fs), f); fclose(f);
	cfg.ca_file = ca;
	cfg.client_cert_data = (char *)fake_apiserver_client_cert_pem(fs);
	cfg.client_key_data = (char *)fake_apiserver_client_key_pem(fs);
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/version", NULL, &err), 0);
	r = fake_apiserver_last(fs, "GET", "/version");
	assert_true(r->client_cert);
	fake_request_free(r);
	kube_client_free(c);

	/* client certificate and key files */
	cfg.client_cert_data = cfg.client_key_data = NULL;
	cfg.client_cert_file = cert;
	cfg.client_key_file = key;
	assert_int_equal(kube_client_new(&cfg, &c, NULL), 0);
	assert_int_equal(kube_get(c, "/version", NULL, &err), 0);
	r = fake_apiserver_last(fs, "GET", "/version");
	assert_true(r->client_cert);
	fake_request_free(r);
	kube_client_free(c);

	unlink(ca); unlink(cert); unlink(key); rmdir(dir);
	fake_apiserver_stop(fs);
}

static void test_bad_config(void **state)
{
	(void)state;
	struct kube_config cfg = {0};
	struct kube_client *c = (struct kube_client *)1;
	char *err = NULL;
	assert_int_equal(kube_client_new(&cfg, &c, &err), -1);
	assert_null(c);
	assert_non_null(strstr(err, "no server"));
	free(err);
	cfg.server = "ftp://x";
	assert_int_equal(kube_client_new(&cfg, &c, &err), -1);
	assert_non_null(strstr(err, "ftp://x"));
	free(err);
	kube_client_free(NULL);
}

/* ---------- streaming + cancel ---------- */

struct collect { char buf[4096]; size_t len; };
static int collect_data(const char *b, size_t n, void *ctx)
{
	struct collect *c = ctx;
	if (c->len + n < sizeof(c->buf)) {
		memcpy(c->buf + c->len, b, n);
		c->len += n;
	}
	return 0;
}

struct canceller { struct kube_cancel *k; struct fake_apiserver *fs; };
static void *cancel_later(void *arg)
{
	struct canceller *cc = arg;
	/* wait until the stream's request reached the server, then cancel */
	while (fake_apiserver_count(cc->fs, "GET", "/api/v1/hang") == 0)
		usleep(1000);
	usleep(20000);
	kube_cancel_fire(cc->k);
	return NULL;
}

static void test_stream_and_cancel(void **state)
{
	struct env *e = *state;
	const char *chunks[] = {"hello ", "world"};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/s", 1, chunks, 2, 0, FAKE_END_CLEAN);
	struct collect col = {0};
	struct kube_error err;
	assert_int_equal(kube_request_stream(e->c, "/api/v1/s", "watch=1", collect_data, &col, NULL, &err), 200);
	assert_int_equal(col.len, 11);
	assert_memory_equal(col.buf, "hello world", 11);
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/s");
	assert_string_equal(r->path, "/api/v1/s?watch=1");
	fake_request_free(r);

	/* non-2xx: Status mapped, no data delivered */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/gone", 1, 410, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"too old\",\"code\":410}");
	col.len = 0;
	assert_int_equal(kube_request_stream(e->c, "/api/v1/gone", NULL, collect_data, &col, NULL, &err), -1);
	assert_int_equal(col.len, 0);
	assert_true(kube_error_is_gone(&err));
	assert_string_equal(err.message, "too old");

	/* a hanging stream is cancelled promptly from another thread */
	const char *one[] = {"x"};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/hang", 1, one, 1, 0, FAKE_END_HANG);
	struct canceller cc = {kube_cancel_new(), e->fs};
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, &cc);
	assert_int_equal(kube_request_stream(e->c, "/api/v1/hang", NULL, collect_data, &col, cc.k, &err), -2);
	pthread_join(th, NULL);
	assert_true(kube_cancel_fired(cc.k));
	/* a fired token makes the next stream return at once */
	assert_int_equal(kube_request_stream(e->c, "/api/v1/hang", NULL, collect_data, &col, cc.k, &err), -2);
	kube_cancel_free(cc.k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kube_path),
		cmocka_unit_test(test_urlencode),
		cmocka_unit_test(test_rate_limiter_math),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_retry_post_when_connect_fails),
		cmocka_unit_test(test_tls_ca_and_client_cert),
		cmocka_unit_test_setup_teardown(test_status_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_success_and_empty_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_5xx_then_success, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_after_honoured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_429_any_verb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_gives_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_retry_post_after_response, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_rate_limited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bearer_token_and_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbs_and_content_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_and_cancel, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
