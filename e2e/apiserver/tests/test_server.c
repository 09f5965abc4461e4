/* test_server.c — in-process tests of schedkit-apiserver over real HTTP (libcurl): CRUD,
 * optimistic concurrency, selectors, paging, watch resume/410/bookmarks, binding, eviction vs
 * PDB, garbage collection, finalizers, status subresources, priority admission, namespaces,
 * CRDs, patches, token auth, TLS, and malformed/oversized/random input.
 * Long file: every HTTP-level API test shares the one in-process server and its helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/server.h"
#include "e2e/apiserver/tests/raw_conn.h"

static struct apis_server *srv;
static char base[200];

struct resp {
	long code;
	char *body;
	size_t len;
	char ctype[128];
};

static size_t on_data(char *p, size_t sz, size_t n, void *u)
{
	struct resp *r = u;
	char *nb = realloc(r->body, r->len + sz * n + 1);
	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, sz * n);
	r->len += sz * n;
	r->body[r->len] = 0;
	return sz * n;
}

/* Performs one request against url base b. Returns the parsed JSON body (or NULL). */
static cJSON *doreq_at(const char *b, const char *method, const char *path, const char *ctype, const char *body,
		       const char *token, const char *ca_pem, long *code, struct resp *raw)
{
	CURL *c = curl_easy_init();
	assert_non_null(c);
	char url[1024];
	snprintf(url, sizeof url, "%s%s", b, path);
	struct resp r = {0};
	struct curl_slist *h = NULL;
	char hb[300];
	if (ctype) {
		snprintf(hb, sizeof hb, "Content-Type: %s", ctype);
		h = curl_slist_append(h, hb);
	}
	if (token) {
		snprintf(hb, sizeof hb, "Authorization: Bearer %s", token);
		h = curl_slist_append(h, hb);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (ca_pem) {
		struct curl_blob blob = { .data = (void *)ca_pem, .len = strlen(ca_pem), .flags = CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	CURLcode rc = curl_easy_perform(c);
	long hc = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &hc);
	if (rc != CURLE_OK)
		hc = -1;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (code)
		*code = hc;
	cJSON *j = r.body ? cJSON_Parse(r.body) : NULL;
	if (raw)
		*raw = r;
	else
		free(r.body);
	return j;
}

static cJSON *doreq(const char *method, const char *path, const char *ctype, const char *body, long *code)
{
	return doreq_at(base, method, path, ctype, body, NULL, NULL, code, NULL);
}

static long status_of(const char *method, const char *path, const char *ctype, const char *body)
{
	long code;
	cJSON_Delete(doreq(method, path, ctype, body, &code));
	return code;
}

static const char *jpath(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *cur = o;
	for (char *seg = strtok(buf, "."); seg && cur; seg = strtok(NULL, "."))
		cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
	return cJSON_GetStringValue(cur);
}

static double jnum(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *cur = o;
	for (char *seg = strtok(buf, "."); seg && cur; seg = strtok(NULL, "."))
		cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
	return cJSON_IsNumber(cur) ? cur->valuedouble : -1;
}

#define JSON "application/json"

static int start_default(void **state)
{
	(void)state;
	curl_global_init(CURL_GLOBAL_ALL);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.history_events = 64;
	o.bookmark_interval_ms = 200;
	o.simulate_kubelet = true;
	o.kubelet_delay_ms = 20;
	o.max_body_bytes = 64 * 1024;
	if (apis_server_start(&o, &srv) < 0)
		return -1;
	snprintf(base, sizeof base, "%s", apis_server_url(srv));
	return 0;
}

static int stop_default(void **state)
{
	(void)state;
	apis_server_stop(srv);
	curl_global_cleanup();
	return 0;
}

/* ---------------- CRUD ---------------- */

static void test_crud_and_conflict(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON,
			 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm1\"},\"data\":{\"a\":\"1\"}}", &code);
	assert_int_equal(code, 201);
	assert_string_equal(jpath(o, "metadata.name"), "cm1");
	assert_string_equal(jpath(o, "metadata.namespace"), "default");
	assert_non_null(jpath(o, "metadata.uid"));
	assert_non_null(jpath(o, "metadata.creationTimestamp"));
	char rv1[32];
	snprintf(rv1, sizeof rv1, "%s", jpath(o, "metadata.resourceVersion"));
	cJSON_Delete(o);

	o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":{\"name\":\"cm1\"}}", &code);
	assert_int_equal(code, 409);
	assert_string_equal(jpath(o, "reason"), "AlreadyExists");
	assert_string_equal(jpath(o, "message"), "configmaps \"cm1\" already exists");
	cJSON_Delete(o);

	o = doreq("GET", "/api/v1/namespaces/default/configmaps/cm1", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "data.a"), "1");
	assert_string_equal(jpath(o, "kind"), "ConfigMap");
	cJSON_Delete(o);

	char body[512];
	snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"%s\"},\"data\":{\"a\":\"2\"}}", rv1);
	o = doreq("PUT", "/api/v1/namespaces/default/configmaps/cm1", JSON, body, &code);
	assert_int_equal(code, 200);
	assert_string_not_equal(jpath(o, "metadata.resourceVersion"), rv1);
	cJSON_Delete(o);
	/* same (now stale) resourceVersion again: 409 Conflict */
	o = doreq("PUT", "/api/v1/namespaces/default/configmaps/cm1", JSON, body, &code);
	assert_int_equal(code, 409);
	assert_string_equal(jpath(o, "reason"), "Conflict");
	assert_non_null(strstr(jpath(o, "message"), "the object has been modified"));
	cJSON_Delete(o);

	o = doreq("DELETE", "/api/v1/namespaces/default/configmaps/cm1", JSON, "{\"propagationPolicy\":\"Background\"}", &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "metadata.name"), "cm1");
	cJSON_Delete(o);
	o = doreq("GET", "/api/v1/namespaces/default/configmaps/cm1", NULL, NULL, &code);
	assert_int_equal(code, 404);
	assert_string_equal(jpath(o, "reason"), "NotFound");
	assert_string_equal(jpath(o, "message"), "configmaps \"cm1\" not found");
	cJSON_Delete(o);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/configmaps/cm1", NULL, NULL), 404);
	/* missing namespace */
	assert_int_equal(status_of("POST", "/api/v1/namespaces/nope/configmaps", JSON, "{\"metadata\":{\"name\":\"x\"}}"), 404);
	/* namespace mismatch */
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON,
				   "{\"metadata\":{\"name\":\"x\",\"namespace\":\"kube-system\"}}"), 400);
	/* no name */
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":{}}"), 422);
}

static void test_generate_name(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/secrets", JSON, "{\"metadata\":{\"generateName\":\"tok-\"}}", &code);
	assert_int_equal(code, 201);
	const char *n = jpath(o, "metadata.name");
	assert_non_null(n);
	assert_int_equal(strlen(n), 9);
	assert_memory_equal(n, "tok-", 4);
	for (int i = 4; i < 9; i++)
		assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", n[i]));
	cJSON_Delete(o);
}

static void make_pod(const char *ns, const char *name, const char *labels_json, const char *extra_spec)
{
	char body[1024];
	snprintf(body, sizeof body,
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":%s},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]%s}}",
		 name, labels_json ? labels_json : "{}", extra_spec ? extra_spec : "");
	char path[256];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
	assert_int_equal(status_of("POST", path, JSON, body), 201);
}

static int count_items(const char *path)
{
	long code;
	cJSON *o = doreq("GET", path, NULL, NULL, &code);
	assert_int_equal(code, 200);
	int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "items"));
	cJSON_Delete(o);
	return n;
}

static void test_selectors(void **state)
{
	(void)state;
	assert_int_equal(status_of("POST", "/api/v1/namespaces", JSON, "{\"metadata\":{\"name\":\"sel\"}}"), 201);
	make_pod("sel", "a1", "{\"app\":\"a\",\"tier\":\"web\"}", NULL);
	make_pod("sel", "a2", "{\"app\":\"a\"}", ",\"schedulerName\":\"my-sched\"");
	make_pod("sel", "b1", "{\"app\":\"b\"}", NULL);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods"), 3);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?labelSelector=app%3Da"), 2);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?labelSelector=app%20in%20(a,b),tier"), 1);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?labelSelector=app!%3Da"), 1);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?fieldSelector=spec.schedulerName%3Dmy-sched"), 1);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?fieldSelector=spec.nodeName%3D"), 3);
	assert_int_equal(count_items("/api/v1/namespaces/sel/pods?fieldSelector=metadata.name%3Db1"), 1);
	assert_int_equal(count_items("/api/v1/pods?fieldSelector=metadata.namespace%3Dsel,status.phase%3DPending"), 3);
	assert_int_equal(count_items("/api/v1/pods?fieldSelector=status.phase!%3DPending,metadata.namespace%3Dsel"), 0);
	long code;
	cJSON *o = doreq("GET", "/api/v1/namespaces/sel/pods?fieldSelector=spec.bogus%3D1", NULL, NULL, &code);
	assert_int_equal(code, 400);
	assert_string_equal(jpath(o, "message"), "field label not supported: spec.bogus");
	cJSON_Delete(o);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/sel/pods?labelSelector=a%20in%20(", NULL, NULL), 400);
}

static void test_limit_continue(void **state)
{
	(void)state;
	assert_int_equal(status_of("POST", "/api/v1/namespaces", JSON, "{\"metadata\":{\"name\":\"page\"}}"), 201);
	for (int i = 0; i < 5; i++) {
		char b[128];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"cm%d\"}}", i);
		assert_int_equal(status_of("POST", "/api/v1/namespaces/page/configmaps", JSON, b), 201);
	}
	char path[1024] = "/api/v1/namespaces/page/configmaps?limit=2";
	int total = 0, pages = 0;
	char rv[32] = "";
	for (;;) {
		long code;
		cJSON *o = doreq("GET", path, NULL, NULL, &code);
		assert_int_equal(code, 200);
		total += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "items"));
		pages++;
		/* every page is served from the first page's snapshot */
		if (!*rv)
			snprintf(rv, sizeof rv, "%s", jpath(o, "metadata.resourceVersion"));
		else
			assert_string_equal(jpath(o, "metadata.resourceVersion"), rv);
		if (pages == 1) {
			assert_int_equal(status_of("POST", "/api/v1/namespaces/page/configmaps", JSON, "{\"metadata\":{\"name\":\"zz-late\"}}"), 201);
			assert_int_equal(status_of("DELETE", "/api/v1/namespaces/page/configmaps/cm4", NULL, NULL), 200);
			assert_int_equal(status_of("PATCH", "/api/v1/namespaces/page/configmaps/cm3", "application/merge-patch+json",
						   "{\"data\":{\"late\":\"1\"}}"), 200);
		}
		cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "items"))
		{
			assert_string_not_equal(jpath(it, "metadata.name"), "zz-late");
			assert_null(jpath(it, "data.late"));
		}
		const char *cont = jpath(o, "metadata.continue");
		if (!cont || !*cont) {
			cJSON_Delete(o);
			break;
		}
		char *esc = curl_easy_escape(NULL, cont, 0);
		snprintf(path, sizeof path, "/api/v1/namespaces/page/configmaps?limit=2&continue=%s", esc);
		curl_free(esc);
		cJSON_Delete(o);
		assert_true(pages < 10);
	}
	assert_int_equal(total, 5);
	assert_int_equal(pages, 3);
	assert_int_equal(count_items("/api/v1/namespaces/page/configmaps"), 5); /* now: cm0-3 + zz-late */
	/* an exact resourceVersion reads that snapshot */
	char exact[128];
	snprintf(exact, sizeof exact, "/api/v1/namespaces/page/configmaps?resourceVersion=%s&resourceVersionMatch=Exact", rv);
	long code;
	cJSON *o = doreq("GET", exact, NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "metadata.resourceVersion"), rv);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "items")), 5);
	assert_string_equal(jpath(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "items"), 4), "metadata.name"), "cm4");
	cJSON_Delete(o);
	/* the history still reaches back to the start: the state at RV 1 (one namespace) */
	o = doreq("GET", "/api/v1/namespaces?resourceVersion=1&resourceVersionMatch=Exact", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "items")), 1);
	cJSON_Delete(o);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/page/configmaps?limit=2&continue=garbage", NULL, NULL), 400);
}

/* ---------------- watch ---------------- */

/* Reads a whole watch stream (the server ends it after timeoutSeconds). */
static cJSON *watch_events(const char *path)
{
	struct resp r = {0};
	long code;
	cJSON_Delete(doreq_at(base, "GET", path, NULL, NULL, NULL, NULL, &code, &r));
	assert_int_equal(code, 200);
	cJSON *arr = cJSON_CreateArray();
	char *save = NULL;
	for (char *line = r.body ? strtok_r(r.body, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *e = cJSON_Parse(line);
		assert_non_null(e);
		cJSON_AddItemToArray(arr, e);
	}
	free(r.body);
	return arr;
}

static void test_watch_resume_and_bookmarks(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":{\"name\":\"w1\"}}", &code);
	assert_int_equal(code, 201);
	char rv[32];
	snprintf(rv, sizeof rv, "%s", jpath(o, "metadata.resourceVersion"));
	cJSON_Delete(o);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/configmaps/w1", "application/merge-patch+json",
				   "{\"data\":{\"k\":\"v\"}}"), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/configmaps/w1", NULL, NULL), 200);
	char path[512];
	snprintf(path, sizeof path,
		 "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s&timeoutSeconds=1&allowWatchBookmarks=true", rv);
	cJSON *ev = watch_events(path);
	assert_true(cJSON_GetArraySize(ev) >= 3);
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "type"), "MODIFIED");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "object.data.k"), "v");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 1), "type"), "DELETED");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 1), "object.kind"), "ConfigMap");
	bool bookmark = false;
	cJSON *e;
	cJSON_ArrayForEach(e, ev)
	{
		if (!strcmp(jpath(e, "type"), "BOOKMARK")) {
			bookmark = true;
			assert_non_null(jpath(e, "object.metadata.resourceVersion"));
		}
	}
	assert_true(bookmark);
	cJSON_Delete(ev);

	/* no resourceVersion: synthetic ADDED for current objects */
	ev = watch_events("/api/v1/namespaces?watch=1&timeoutSeconds=1");
	assert_true(cJSON_GetArraySize(ev) >= 4);
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "type"), "ADDED");
	cJSON_Delete(ev);
}

static void test_watch_expired(void **state)
{
	(void)state;
	/* history is 64 events: push well past it, then ask for the very first RV */
	for (int i = 0; i < 80; i++) {
		char b[128];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"churn\"},\"data\":{\"i\":\"%d\"}}", i);
		long code = status_of(i ? "PUT" : "POST", i ? "/api/v1/namespaces/default/configmaps/churn"
							   : "/api/v1/namespaces/default/configmaps", JSON, b);
		assert_int_equal(code, i ? 200 : 201);
	}
	cJSON *ev = watch_events("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2&timeoutSeconds=1");
	assert_int_equal(cJSON_GetArraySize(ev), 1);
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "type"), "ERROR");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "object.reason"), "Expired");
	assert_int_equal((int)jnum(cJSON_GetArrayItem(ev, 0), "object.code"), 410);
	cJSON_Delete(ev);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=abc", NULL, NULL), 400);
	long code;
	cJSON *o = doreq("GET", "/api/v1/namespaces?resourceVersion=2&resourceVersionMatch=Exact", NULL, NULL, &code);
	assert_int_equal(code, 410);
	assert_string_equal(jpath(o, "reason"), "Expired");
	cJSON_Delete(o);
}

static void test_watch_selector_transitions(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON,
			 "{\"metadata\":{\"name\":\"sw\",\"labels\":{\"x\":\"1\"}}}", &code);
	assert_int_equal(code, 201);
	char rv[32];
	snprintf(rv, sizeof rv, "%s", jpath(o, "metadata.resourceVersion"));
	cJSON_Delete(o);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/configmaps/sw", "application/merge-patch+json",
				   "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}"), 200);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/configmaps/sw", "application/merge-patch+json",
				   "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}"), 200);
	char path[300];
	snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=x%%3D1&resourceVersion=%s&timeoutSeconds=1", rv);
	cJSON *ev = watch_events(path);
	assert_int_equal(cJSON_GetArraySize(ev), 2);
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "type"), "DELETED");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 1), "type"), "ADDED");
	cJSON_Delete(ev);
}

/* ---------------- pods ---------------- */

static void make_node(const char *name)
{
	char b[512];
	snprintf(b, sizeof b,
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"4\"},\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"192.168.0.9\"}]}}",
		 name);
	assert_int_equal(status_of("POST", "/api/v1/nodes", JSON, b), 201);
}

static cJSON *wait_for(const char *path, const char *field, const char *want)
{
	for (int i = 0; i < 500; i++) {
		long code;
		cJSON *o = doreq("GET", path, NULL, NULL, &code);
		if (want == NULL && code == 404) {
			cJSON_Delete(o);
			return NULL;
		}
		if (want && code == 200 && jpath(o, field) && !strcmp(jpath(o, field), want))
			return o;
		cJSON_Delete(o);
		usleep(20000);
	}
	fail_msg("%s: %s never became %s", path, field, want ? want : "<gone>");
	return NULL;
}

static void test_binding_twice(void **state)
{
	(void)state;
	make_node("node-b");
	make_pod("default", "bind1", NULL, NULL);
	const char *b = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"bind1\"},\"target\":{\"kind\":\"Node\",\"name\":\"node-b\"}}";
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/pods/bind1/binding", JSON, b, &code);
	assert_int_equal(code, 201);
	assert_string_equal(jpath(o, "status"), "Success");
	cJSON_Delete(o);
	o = doreq("POST", "/api/v1/namespaces/default/pods/bind1/binding", JSON, b, &code);
	assert_int_equal(code, 409);
	assert_string_equal(jpath(o, "reason"), "Conflict");
	assert_string_equal(jpath(o, "details.kind"), "pods/binding");
	assert_string_equal(jpath(o, "message"),
			    "Operation cannot be fulfilled on pods/binding \"bind1\": pod bind1 is already assigned to node \"node-b\"");
	cJSON_Delete(o);
	o = doreq("GET", "/api/v1/namespaces/default/pods/bind1", NULL, NULL, &code);
	assert_string_equal(jpath(o, "spec.nodeName"), "node-b");
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"), "conditions");
	bool sched = false;
	cJSON *c;
	cJSON_ArrayForEach(c, conds)
	{
		if (!strcmp(jpath(c, "type"), "PodScheduled") && !strcmp(jpath(c, "status"), "True"))
			sched = true;
	}
	assert_true(sched);
	cJSON_Delete(o);
	/* the simulated kubelet runs it */
	o = wait_for("/api/v1/namespaces/default/pods/bind1", "status.phase", "Running");
	assert_non_null(jpath(o, "status.podIP"));
	assert_string_equal(jpath(o, "status.hostIP"), "192.168.0.9");
	cJSON_Delete(o);
	/* top-level bindings resource */
	make_pod("default", "bind2", NULL, NULL);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/bindings", JSON,
				   "{\"metadata\":{\"name\":\"bind2\"},\"target\":{\"name\":\"node-b\"}}"), 201);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/pods/missing/binding", JSON, b), 404);
	/* graceful deletion: the pod stays Terminating until the kubelet lets it go */
	o = doreq("DELETE", "/api/v1/namespaces/default/pods/bind2", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_non_null(jpath(o, "metadata.deletionTimestamp"));
	cJSON_Delete(o);
	assert_null(wait_for("/api/v1/namespaces/default/pods/bind2", "x", NULL));
}

static void run_pod(const char *ns, const char *name, const char *labels)
{
	make_pod(ns, name, labels, NULL);
	char path[256];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	assert_int_equal(status_of("PATCH", path, "application/merge-patch+json",
				   "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"), 200);
}

static void test_eviction_pdb(void **state)
{
	(void)state;
	assert_int_equal(status_of("POST", "/api/v1/namespaces", JSON, "{\"metadata\":{\"name\":\"evict\"}}"), 201);
	run_pod("evict", "e1", "{\"app\":\"db\"}");
	run_pod("evict", "e2", "{\"app\":\"db\"}");
	assert_int_equal(status_of("POST", "/apis/policy/v1/namespaces/evict/poddisruptionbudgets", JSON,
				   "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"minAvailable\":2,\"selector\":{\"matchLabels\":{\"app\":\"db\"}}}}"), 201);
	const char *ev = "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"e1\",\"namespace\":\"evict\"}}";
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/evict/pods/e1/eviction", JSON, ev, &code);
	assert_int_equal(code, 429);
	assert_string_equal(jpath(o, "reason"), "TooManyRequests");
	assert_string_equal(jpath(o, "message"), "Cannot evict pod as it would violate the pod's disruption budget.");
	cJSON *cause = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "details"), "causes"), 0);
	assert_string_equal(jpath(cause, "reason"), "DisruptionBudget");
	assert_string_equal(jpath(cause, "message"), "The disruption budget db needs 2 healthy pods and has 2 currently");
	cJSON_Delete(o);
	run_pod("evict", "e3", "{\"app\":\"db\"}");
	o = doreq("POST", "/api/v1/namespaces/evict/pods/e1/eviction", JSON, ev, &code);
	assert_int_equal(code, 201);
	cJSON_Delete(o);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/evict/pods/e1", NULL, NULL), 404);
	/* a pod matching no PDB is simply deleted */
	run_pod("evict", "free", "{\"app\":\"other\"}");
	assert_int_equal(status_of("POST", "/api/v1/namespaces/evict/pods/free/eviction", JSON,
				   "{\"metadata\":{\"name\":\"free\"}}"), 201);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/evict/pods/nothere/eviction", JSON,
				   "{\"metadata\":{\"name\":\"nothere\"}}"), 404);
}

/* ---------------- GC, finalizers, status, admission ---------------- */

static void test_gc_background(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/apis/apps/v1/namespaces/default/deployments", JSON,
			 "{\"metadata\":{\"name\":\"owner\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}",
			 &code);
	assert_int_equal(code, 201);
	char b[1024];
	snprintf(b, sizeof b,
		 "{\"metadata\":{\"name\":\"owned\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"owner\",\"uid\":\"%s\",\"controller\":true}]}}",
		 jpath(o, "metadata.uid"));
	cJSON_Delete(o);
	assert_int_equal(status_of("POST", "/apis/apps/v1/namespaces/default/replicasets", JSON, b), 201);
	assert_int_equal(status_of("DELETE", "/apis/apps/v1/namespaces/default/deployments/owner", JSON,
				   "{\"propagationPolicy\":\"Background\"}"), 200);
	assert_null(wait_for("/apis/apps/v1/namespaces/default/replicasets/owned", "x", NULL));
}

static void test_gc_orphan_and_foreground(void **state)
{
	(void)state;
	long code;
	const char *kinds[2] = { "Orphan", "Foreground" };
	for (int k = 0; k < 2; k++) {
		char b[1024];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"own-%d\"}}", k);
		cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON, b, &code);
		assert_int_equal(code, 201);
		snprintf(b, sizeof b,
			 "{\"metadata\":{\"name\":\"dep-%d\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"own-%d\",\"uid\":\"%s\"}]}}",
			 k, k, jpath(o, "metadata.uid"));
		cJSON_Delete(o);
		assert_int_equal(status_of("POST", "/api/v1/namespaces/default/secrets", JSON, b), 201);
		snprintf(b, sizeof b, "{\"propagationPolicy\":\"%s\"}", kinds[k]);
		char path[200];
		snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps/own-%d", k);
		assert_int_equal(status_of("DELETE", path, JSON, b), 200);
		assert_null(wait_for(path, "x", NULL));
		snprintf(path, sizeof path, "/api/v1/namespaces/default/secrets/dep-%d", k);
		o = doreq("GET", path, NULL, NULL, &code);
		if (k == 0) { /* orphaned: kept, without the reference */
			assert_int_equal(code, 200);
			assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "ownerReferences"));
		} else {
			assert_int_equal(code, 404);
		}
		cJSON_Delete(o);
	}
}

static void test_finalizers(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON,
			 "{\"metadata\":{\"name\":\"fin\",\"finalizers\":[\"example.com/hold\"]}}", &code);
	assert_int_equal(code, 201);
	cJSON_Delete(o);
	o = doreq("DELETE", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_non_null(jpath(o, "metadata.deletionTimestamp"));
	cJSON_Delete(o);
	o = doreq("GET", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_non_null(jpath(o, "metadata.deletionTimestamp"));
	cJSON_Delete(o);
	/* no new finalizers while deleting */
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/configmaps/fin", "application/merge-patch+json",
				   "{\"metadata\":{\"finalizers\":[\"example.com/hold\",\"x/y\"]}}"), 422);
	o = doreq("PATCH", "/api/v1/namespaces/default/configmaps/fin", "application/json-patch+json",
		  "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]", &code);
	assert_int_equal(code, 200);
	cJSON_Delete(o);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL), 404);
}

static void test_status_subresource_and_generation(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/apis/apps/v1/namespaces/default/deployments", JSON,
			 "{\"metadata\":{\"name\":\"gen\"},\"spec\":{\"replicas\":1},\"status\":{\"replicas\":9}}", &code);
	assert_int_equal(code, 201);
	assert_int_equal((int)jnum(o, "metadata.generation"), 1);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "status"));
	cJSON_Delete(o);
	/* status through the main resource is ignored; metadata change: no generation bump */
	o = doreq("PATCH", "/apis/apps/v1/namespaces/default/deployments/gen", "application/merge-patch+json",
		  "{\"metadata\":{\"labels\":{\"l\":\"1\"}},\"status\":{\"replicas\":5}}", &code);
	assert_int_equal(code, 200);
	assert_int_equal((int)jnum(o, "metadata.generation"), 1);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "status"));
	cJSON_Delete(o);
	/* spec change bumps it */
	o = doreq("PATCH", "/apis/apps/v1/namespaces/default/deployments/gen", "application/merge-patch+json",
		  "{\"spec\":{\"replicas\":3}}", &code);
	assert_int_equal((int)jnum(o, "metadata.generation"), 2);
	cJSON_Delete(o);
	/* /status: spec ignored, status kept */
	o = doreq("PATCH", "/apis/apps/v1/namespaces/default/deployments/gen/status", "application/merge-patch+json",
		  "{\"spec\":{\"replicas\":7},\"status\":{\"replicas\":3}}", &code);
	assert_int_equal(code, 200);
	assert_int_equal((int)jnum(o, "spec.replicas"), 3);
	assert_int_equal((int)jnum(o, "status.replicas"), 3);
	assert_int_equal((int)jnum(o, "metadata.generation"), 2);
	cJSON_Delete(o);
	/* scale */
	o = doreq("GET", "/apis/apps/v1/namespaces/default/deployments/gen/scale", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "kind"), "Scale");
	assert_int_equal((int)jnum(o, "spec.replicas"), 3);
	cJSON_Delete(o);
	o = doreq("PATCH", "/apis/apps/v1/namespaces/default/deployments/gen/scale", "application/merge-patch+json",
		  "{\"spec\":{\"replicas\":5}}", &code);
	assert_int_equal(code, 200);
	assert_int_equal((int)jnum(o, "spec.replicas"), 5);
	cJSON_Delete(o);
	o = doreq("GET", "/apis/apps/v1/namespaces/default/deployments/gen", NULL, NULL, &code);
	assert_int_equal((int)jnum(o, "spec.replicas"), 5);
	assert_int_equal((int)jnum(o, "metadata.generation"), 3);
	cJSON_Delete(o);
}

static void test_priority_admission(void **state)
{
	(void)state;
	long code;
	assert_int_equal(status_of("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", JSON,
				   "{\"metadata\":{\"name\":\"high\"},\"value\":1000,\"preemptionPolicy\":\"Never\"}"), 201);
	make_pod("default", "prio", NULL, ",\"priorityClassName\":\"high\"");
	cJSON *o = doreq("GET", "/api/v1/namespaces/default/pods/prio", NULL, NULL, &code);
	assert_int_equal((int)jnum(o, "spec.priority"), 1000);
	assert_string_equal(jpath(o, "spec.preemptionPolicy"), "Never");
	cJSON_Delete(o);
	o = doreq("POST", "/api/v1/namespaces/default/pods", JSON,
		  "{\"metadata\":{\"name\":\"p404\"},\"spec\":{\"priorityClassName\":\"nope\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}", &code);
	assert_int_equal(code, 403);
	assert_string_equal(jpath(o, "message"), "pods \"p404\" is forbidden: no PriorityClass with name nope was found");
	cJSON_Delete(o);
	assert_int_equal(status_of("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", JSON,
				   "{\"metadata\":{\"name\":\"dflt\"},\"value\":7,\"globalDefault\":true}"), 201);
	assert_int_equal(status_of("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", JSON,
				   "{\"metadata\":{\"name\":\"dflt2\"},\"value\":8,\"globalDefault\":true}"), 422);
	make_pod("default", "pdef", NULL, NULL);
	o = doreq("GET", "/api/v1/namespaces/default/pods/pdef", NULL, NULL, &code);
	assert_int_equal((int)jnum(o, "spec.priority"), 7);
	assert_string_equal(jpath(o, "spec.priorityClassName"), "dflt");
	cJSON_Delete(o);
	assert_int_equal(status_of("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/dflt", NULL, NULL), 200);
	/* system classes exist */
	assert_int_equal(status_of("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical", NULL, NULL), 200);
}

static void test_namespace_deletion(void **state)
{
	(void)state;
	assert_int_equal(status_of("POST", "/api/v1/namespaces", JSON, "{\"metadata\":{\"name\":\"gone\"}}"), 201);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/gone/configmaps", JSON, "{\"metadata\":{\"name\":\"c\"}}"), 201);
	long code;
	cJSON *o = doreq("DELETE", "/api/v1/namespaces/gone", NULL, NULL, &code);
	assert_int_equal(code, 200);
	cJSON_Delete(o);
	assert_null(wait_for("/api/v1/namespaces/gone", "x", NULL));
	assert_int_equal(status_of("GET", "/api/v1/namespaces/gone/configmaps/c", NULL, NULL), 404);
}

static void test_crd_lifecycle(void **state)
{
	(void)state;
	const char *crd =
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
		"\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
		"\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\",\"shortNames\":[\"wd\"]},"
		"\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
		"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";
	long code;
	cJSON *o = doreq("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", JSON, crd, &code);
	assert_int_equal(code, 201);
	cJSON_Delete(o);
	o = doreq("GET", "/apis/example.com/v1", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "groupVersion"), "example.com/v1");
	cJSON_Delete(o);
	o = doreq("POST", "/apis/example.com/v1/namespaces/default/widgets", JSON,
		  "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":1},\"status\":{\"x\":1}}", &code);
	assert_int_equal(code, 201);
	assert_int_equal((int)jnum(o, "metadata.generation"), 1);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "status"));
	cJSON_Delete(o);
	/* CR update without resourceVersion is refused */
	assert_int_equal(status_of("PUT", "/apis/example.com/v1/namespaces/default/widgets/w", JSON,
				   "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":2}}"), 422);
	/* strategic merge patch is not for custom resources */
	assert_int_equal(status_of("PATCH", "/apis/example.com/v1/namespaces/default/widgets/w",
				   "application/strategic-merge-patch+json", "{\"spec\":{\"size\":2}}"), 415);
	o = doreq("PATCH", "/apis/example.com/v1/namespaces/default/widgets/w", "application/merge-patch+json",
		  "{\"spec\":{\"size\":2}}", &code);
	assert_int_equal(code, 200);
	assert_int_equal((int)jnum(o, "metadata.generation"), 2);
	cJSON_Delete(o);
	/* updating the CRD updates what is served (discovery short names) */
	assert_int_equal(status_of("PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
				   "application/merge-patch+json", "{\"spec\":{\"names\":{\"shortNames\":[\"wdg\"]}}}"), 200);
	o = doreq("GET", "/apis/example.com/v1", NULL, NULL, &code);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "resources"), 0), "shortNames"), 0)->valuestring, "wdg");
	cJSON_Delete(o);
	o = doreq("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", NULL, NULL, &code);
	assert_string_equal(jpath(o, "status.acceptedNames.kind"), "Widget");
	assert_int_equal((int)jnum(o, "metadata.generation"), 2);
	cJSON_Delete(o);
	/* an invalid CRD is refused */
	o = doreq("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", JSON,
		  "{\"metadata\":{\"name\":\"bad.example.com\"},\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
		  "\"names\":{\"plural\":\"others\",\"kind\":\"Other\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]}}", &code);
	assert_int_equal(code, 422);
	assert_string_equal(jpath(o, "reason"), "Invalid");
	cJSON_Delete(o);
	assert_int_equal(status_of("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", NULL, NULL), 200);
	assert_int_equal(status_of("GET", "/apis/example.com/v1/namespaces/default/widgets/w", NULL, NULL), 404);
	assert_int_equal(status_of("GET", "/apis/example.com/v1", NULL, NULL), 404);
}

static void test_crd_multiple_versions(void **state)
{
	(void)state;
	const char *crd =
		"{\"metadata\":{\"name\":\"gizmos.multi.io\"},\"spec\":{\"group\":\"multi.io\",\"scope\":\"Cluster\","
		"\"names\":{\"plural\":\"gizmos\",\"kind\":\"Gizmo\"},\"versions\":["
		"{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}},"
		"{\"name\":\"v1beta1\",\"served\":true,\"storage\":false,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";
	assert_int_equal(status_of("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", JSON, crd), 201);
	assert_int_equal(status_of("GET", "/apis/multi.io/v1beta1", NULL, NULL), 200);
	long code;
	cJSON *o = doreq("POST", "/apis/multi.io/v1beta1/gizmos", JSON,
			 "{\"apiVersion\":\"multi.io/v1beta1\",\"kind\":\"Gizmo\",\"metadata\":{\"name\":\"g\"},\"spec\":{\"a\":1}}", &code);
	assert_int_equal(code, 201);
	assert_string_equal(jpath(o, "apiVersion"), "multi.io/v1beta1");
	char rv[32];
	snprintf(rv, sizeof rv, "%s", jpath(o, "metadata.resourceVersion"));
	cJSON_Delete(o);
	o = doreq("GET", "/apis/multi.io/v1/gizmos/g", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "apiVersion"), "multi.io/v1");
	cJSON_Delete(o);
	o = doreq("GET", "/apis/multi.io/v1beta1/gizmos", NULL, NULL, &code);
	assert_string_equal(jpath(o, "apiVersion"), "multi.io/v1beta1");
	assert_string_equal(jpath(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "items"), 0), "apiVersion"), "multi.io/v1beta1");
	cJSON_Delete(o);
	assert_int_equal(status_of("PATCH", "/apis/multi.io/v1/gizmos/g", "application/merge-patch+json", "{\"spec\":{\"a\":2}}"), 200);
	char path[256];
	snprintf(path, sizeof path, "/apis/multi.io/v1beta1/gizmos?watch=true&resourceVersion=%s&timeoutSeconds=1", rv);
	cJSON *ev = watch_events(path);
	assert_int_equal(cJSON_GetArraySize(ev), 1);
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "object.apiVersion"), "multi.io/v1beta1");
	cJSON_Delete(ev);
	assert_int_equal(status_of("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.multi.io", NULL, NULL), 200);
	assert_int_equal(status_of("GET", "/apis/multi.io/v1beta1/gizmos", NULL, NULL), 404);
}

static void test_discovery(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("GET", "/api/v1", NULL, NULL, &code);
	assert_int_equal(code, 200);
	bool binding = false, pods = false;
	cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(o, "resources"))
	{
		if (!strcmp(jpath(r, "name"), "pods/binding"))
			binding = true;
		if (!strcmp(jpath(r, "name"), "pods")) {
			pods = true;
			assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "shortNames"), 0)->valuestring, "po");
		}
	}
	assert_true(binding && pods);
	cJSON_Delete(o);
	o = doreq("GET", "/apis", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "groups")) >= 8);
	cJSON_Delete(o);
	o = doreq("GET", "/version", NULL, NULL, &code);
	assert_string_equal(jpath(o, "minor"), "32");
	cJSON_Delete(o);
	assert_int_equal(status_of("GET", "/apis/nope.io/v1", NULL, NULL), 404);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/default/nopes", NULL, NULL), 404);
}

static void test_patch_types(void **state)
{
	(void)state;
	make_pod("default", "pp", "{\"a\":\"1\"}", NULL);
	long code;
	cJSON *o = doreq("PATCH", "/api/v1/namespaces/default/pods/pp", "application/strategic-merge-patch+json",
			 "{\"metadata\":{\"labels\":{\"b\":\"2\"}}}", &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "metadata.labels.a"), "1");
	assert_string_equal(jpath(o, "metadata.labels.b"), "2");
	cJSON_Delete(o);
	o = doreq("PATCH", "/api/v1/namespaces/default/pods/pp", "application/json-patch+json",
		  "[{\"op\":\"test\",\"path\":\"/metadata/labels/a\",\"value\":\"wrong\"}]", &code);
	assert_int_equal(code, 422);
	cJSON_Delete(o);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/pods/pp", "text/plain", "{}"), 415);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/pods/pp", "application/merge-patch+json", "{bad"), 400);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/pods/nothere", "application/merge-patch+json", "{}"), 404);
	/* patch carrying a stale resourceVersion */
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/pods/pp", "application/merge-patch+json",
				   "{\"metadata\":{\"resourceVersion\":\"1\"}}"), 409);
}

static void test_events_both_apis(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/apis/events.k8s.io/v1/namespaces/default/events", JSON,
			 "{\"metadata\":{\"name\":\"p.1\"},\"eventTime\":\"2025-01-31T10:04:05.123456Z\",\"reportingController\":\"my-sched\","
			 "\"reportingInstance\":\"my-sched-h\",\"action\":\"Binding\",\"reason\":\"Scheduled\",\"note\":\"Successfully assigned default/p to n\","
			 "\"type\":\"Normal\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"p\"}}", &code);
	assert_int_equal(code, 201);
	char uid[64];
	snprintf(uid, sizeof uid, "%s", jpath(o, "metadata.uid"));
	cJSON_Delete(o);
	o = doreq("GET", "/api/v1/namespaces/default/events/p.1", NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(o, "message"), "Successfully assigned default/p to n");
	assert_string_equal(jpath(o, "involvedObject.name"), "p");
	assert_string_equal(jpath(o, "reportingComponent"), "my-sched");
	assert_string_equal(jpath(o, "source.component"), "my-sched");
	assert_string_equal(jpath(o, "metadata.uid"), uid);
	assert_string_equal(jpath(o, "apiVersion"), "v1");
	cJSON_Delete(o);
	assert_int_equal(count_items("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp,involvedObject.kind%3DPod"), 1);
	/* core write shows through events.k8s.io */
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/events/p.1", "application/merge-patch+json",
				   "{\"count\":3}"), 200);
	o = doreq("GET", "/apis/events.k8s.io/v1/namespaces/default/events/p.1", NULL, NULL, &code);
	assert_int_equal((int)jnum(o, "deprecatedCount"), 3);
	cJSON_Delete(o);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/events/p.1", NULL, NULL), 200);
	assert_int_equal(status_of("GET", "/apis/events.k8s.io/v1/namespaces/default/events/p.1", NULL, NULL), 404);
}

/* The body of GET path with the values of the fields that differ between runs (uid, timestamps,
 * resourceVersion) replaced by X: the exact bytes clients get, otherwise. Caller frees. */
/* Replaces the values that differ between otherwise equal writes (uids, times, resourceVersions)
 * in body by X. */
static void normalize(char *body)
{
	static const char *const keys[] = { "\"uid\":\"", "\"creationTimestamp\":\"", "\"resourceVersion\":\"",
					    "\"lastTransitionTime\":\"" };
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		for (char *p = strstr(body, keys[k]); p; p = strstr(p, keys[k])) {
			p += strlen(keys[k]);
			char *q = strchr(p, '"');
			assert_non_null(q);
			*p = 'X';
			memmove(p + 1, q, strlen(q) + 1);
		}
	}
}

static char *normalized_get(const char *path)
{
	struct resp r = {0};
	long code;
	cJSON_Delete(doreq_at(base, "GET", path, NULL, NULL, NULL, NULL, &code, &r));
	assert_int_equal(code, 200);
	normalize(r.body);
	return r.body;
}

static void assert_golden(const char *path, const char *want)
{
	char *got = normalized_get(path);
	if (strcmp(got, want))
		fail_msg("GET %s:\n got %s\nwant %s", path, got, want);
	free(got);
}

/* The write paths the scheduler drives (binding, event create and its mirror through the other
 * events API), byte for byte: their cost was cut, their output must not change. */
static void test_write_paths_golden(void **state)
{
	(void)state;
	long code;
	struct resp r = {0};
	cJSON_Delete(doreq_at(base, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", JSON,
			      "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"gold.1\",\"namespace\":"
			      "\"default\"},\"eventTime\":\"2026-12-02T06:00:00.000000Z\",\"reportingController\":\"default-scheduler\","
			      "\"reportingInstance\":\"default-scheduler-h\",\"action\":\"Binding\",\"reason\":\"Scheduled\",\"regarding\":"
			      "{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"gold\",\"uid\":\"u-1\",\"apiVersion\":\"v1\","
			      "\"resourceVersion\":\"7\"},\"note\":\"Successfully assigned default/gold to n\",\"type\":\"Normal\","
			      "\"series\":{\"count\":2,\"lastObservedTime\":\"2026-12-02T06:00:01.000000Z\"}}",
			      NULL, NULL, &code, &r));
	assert_int_equal(code, 201);
	free(r.body);
	assert_golden("/apis/events.k8s.io/v1/namespaces/default/events/gold.1",
		      "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"gold.1\",\"namespace\":\"default\","
		      "\"uid\":\"X\",\"creationTimestamp\":\"X\",\"resourceVersion\":\"X\"},\"eventTime\":\"2026-12-02T06:00:00.000000Z\","
		      "\"reportingController\":\"default-scheduler\",\"reportingInstance\":\"default-scheduler-h\",\"action\":\"Binding\","
		      "\"reason\":\"Scheduled\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"gold\",\"uid\":\"X\","
		      "\"apiVersion\":\"v1\",\"resourceVersion\":\"X\"},\"note\":\"Successfully assigned default/gold to n\",\"type\":"
		      "\"Normal\",\"series\":{\"count\":2,\"lastObservedTime\":\"2026-12-02T06:00:01.000000Z\"}}");
	assert_golden("/api/v1/namespaces/default/events/gold.1",
		      "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gold.1\",\"namespace\":\"default\""
		      ",\"uid\":\"X\",\"creationTimestamp\":\"X\",\"resourceVersion\":\"X\"},\"involvedObject\":{\"kind\":\""
		      "Pod\",\"namespace\":\"default\",\"name\":\"gold\",\"uid\":\"X\",\"apiVersion\":\"v1\",\"resourceVers"
		      "ion\":\"X\"},\"reason\":\"Scheduled\",\"message\":\"Successfully assigned default/gold to n\",\"type"
		      "\":\"Normal\",\"eventTime\":\"2026-12-02T06:00:00.000000Z\",\"series\":{\"count\":2,\"lastObservedTi"
		      "me\":\"2026-12-02T06:00:01.000000Z\"},\"action\":\"Binding\",\"reportingComponent\":\"default-schedu"
		      "ler\",\"reportingInstance\":\"default-scheduler-h\",\"source\":{\"component\":\"default-scheduler\"}"
		      "}");
	/* core/v1 -> events.k8s.io */
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/events", JSON,
				   "{\"metadata\":{\"name\":\"gold.2\"},\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\"},\"reason\":"
				   "\"Ready\",\"message\":\"node is ready\",\"source\":{\"component\":\"kubelet\"},\"count\":3,"
				   "\"firstTimestamp\":\"2026-12-02T06:00:00Z\",\"lastTimestamp\":\"2026-12-02T06:00:02Z\",\"type\":\"Normal\"}"),
			 201);
	assert_golden("/apis/events.k8s.io/v1/namespaces/default/events/gold.2",
		      "{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\",\"metadata\":{\"name\":\"gold.2\",\"namespac"
		      "e\":\"default\",\"uid\":\"X\",\"creationTimestamp\":\"X\",\"resourceVersion\":\"X\"},\"regarding\":{"
		      "\"kind\":\"Node\",\"name\":\"n1\"},\"reason\":\"Ready\",\"note\":\"node is ready\",\"type\":\"Normal"
		      "\",\"deprecatedSource\":{\"component\":\"kubelet\"},\"deprecatedFirstTimestamp\":\"2026-12-02T06:00:"
		      "00Z\",\"deprecatedLastTimestamp\":\"2026-12-02T06:00:02Z\",\"deprecatedCount\":3}");
	/* binding: the 201 Status, then the bound pod (a node that does not exist: no kubelet) */
	make_pod("default", "gold", "{\"app\":\"g\"}", ",\"schedulerName\":\"s\"");
	memset(&r, 0, sizeof r);
	cJSON_Delete(doreq_at(base, "POST", "/api/v1/namespaces/default/pods/gold/binding", JSON,
			      "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gold\",\"namespace\":\"default\"},"
			      "\"target\":{\"kind\":\"Node\",\"name\":\"no-such-node\"}}",
			      NULL, NULL, &code, &r));
	assert_int_equal(code, 201);
	assert_string_equal(r.body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}");
	free(r.body);
	assert_golden("/api/v1/namespaces/default/pods/gold",
		      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gold\",\"labels\":{\"app\":\"g\"},\""
		      "namespace\":\"default\",\"uid\":\"X\",\"creationTimestamp\":\"X\",\"resourceVersion\":\"X\"},\"spec\""
		      ":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],\"schedulerName\":\"s\",\"restartPolicy\":\"Alwa"
		      "ys\",\"dnsPolicy\":\"ClusterFirst\",\"terminationGracePeriodSeconds\":30,\"priority\":0,\"preemption"
		      "Policy\":\"PreemptLowerPriority\",\"nodeName\":\"no-such-node\"},\"status\":{\"phase\":\"Pending\",\""
		      "qosClass\":\"BestEffort\",\"conditions\":[{\"type\":\"PodScheduled\",\"lastTransitionTime\":\"X\",\""
		      "status\":\"True\",\"lastProbeTime\":null}]}}");
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/events/gold.1", NULL, NULL), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/events/gold.2", NULL, NULL), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/pods/gold?gracePeriodSeconds=0", NULL, NULL), 200);
}

/* The index fields of a stored object are looked up by parent once per run of fields under the
 * same parent (store.c field_values): every field of both events APIs, and a pod's, must select
 * its own value and not a neighbour's (each value here is distinct), nor a wrong one. */
static void test_index_fields_each(void **state)
{
	(void)state;
	assert_int_equal(status_of("POST", "/apis/events.k8s.io/v1/namespaces/default/events", JSON,
				   "{\"metadata\":{\"name\":\"idx.1\"},\"eventTime\":\"2026-12-02T06:00:00.000000Z\","
				   "\"reportingController\":\"rc-1\",\"reportingInstance\":\"ri-1\",\"action\":\"Binding\",\"reason\":"
				   "\"reason-1\",\"regarding\":{\"kind\":\"Kind-1\",\"namespace\":\"ns-1\",\"name\":\"name-1\",\"uid\":"
				   "\"uid-1\",\"apiVersion\":\"av-1\",\"resourceVersion\":\"77\",\"fieldPath\":\"fp-1\"},\"note\":\"n\","
				   "\"type\":\"type-1\"}"),
			 201);
	make_pod("default", "idx-p", NULL, ",\"schedulerName\":\"sn-1\",\"restartPolicy\":\"Never\",\"hostNetwork\":true");
	static const struct {
		const char *list, *field, *value;
	} cases[] = {
		{ "/api/v1/namespaces/default/events", "involvedObject.kind", "Kind-1" },
		{ "/api/v1/namespaces/default/events", "involvedObject.namespace", "ns-1" },
		{ "/api/v1/namespaces/default/events", "involvedObject.name", "name-1" },
		{ "/api/v1/namespaces/default/events", "involvedObject.uid", "uid-1" },
		{ "/api/v1/namespaces/default/events", "involvedObject.apiVersion", "av-1" },
		{ "/api/v1/namespaces/default/events", "involvedObject.resourceVersion", "77" },
		{ "/api/v1/namespaces/default/events", "involvedObject.fieldPath", "fp-1" },
		{ "/api/v1/namespaces/default/events", "reason", "reason-1" },
		{ "/api/v1/namespaces/default/events", "reportingComponent", "rc-1" },
		{ "/api/v1/namespaces/default/events", "type", "type-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "regarding.kind", "Kind-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "regarding.namespace", "ns-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "regarding.name", "name-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "regarding.uid", "uid-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "reason", "reason-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "reportingController", "rc-1" },
		{ "/apis/events.k8s.io/v1/namespaces/default/events", "type", "type-1" },
		{ "/api/v1/namespaces/default/pods", "spec.schedulerName", "sn-1" },
		{ "/api/v1/namespaces/default/pods", "spec.restartPolicy", "Never" },
		{ "/api/v1/namespaces/default/pods", "spec.hostNetwork", "true" },
		{ "/api/v1/namespaces/default/pods", "status.phase", "Pending" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[512];
		const char *name = strstr(cases[i].list, "pods") ? "idx-p" : "idx.1";
		snprintf(path, sizeof path, "%s?fieldSelector=metadata.name%%3D%s,%s%%3D%s", cases[i].list, name, cases[i].field,
			 cases[i].value);
		if (count_items(path) != 1)
			fail_msg("case %zu: %s=%s does not select the object", i, cases[i].field, cases[i].value);
		snprintf(path, sizeof path, "%s?fieldSelector=metadata.name%%3D%s,%s%%3D%s-x", cases[i].list, name,
			 cases[i].field, cases[i].value);
		if (count_items(path) != 0)
			fail_msg("case %zu: %s=%s-x selects the object", i, cases[i].field, cases[i].value);
	}
	assert_int_equal(status_of("DELETE", "/apis/events.k8s.io/v1/namespaces/default/events/idx.1", NULL, NULL), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/pods/idx-p?gracePeriodSeconds=0", NULL, NULL), 200);
}

/* An Event's mirror in the other events API is built from the stored bytes
 * (apis_events_mirror_bytes) or by converting the tree and printing it: for each shape, through
 * either API and after an update that leaves metadata.resourceVersion inside metadata, both ways
 * must store the same bytes at the next resourceVersion and index the same field values. */
static void test_event_mirror_bytes_equals_tree(void **state)
{
	(void)state;
#define EV2 "/apis/events.k8s.io/v1/namespaces/default/events"
#define EV1 "/api/v1/namespaces/default/events"
	static const struct {
		const char *api, *mirror; /* where it is written, where its mirror is read */
		const char *body;         /* the members after metadata's name */
		const char *patch;        /* merge patch of the event after its create, or NULL */
	} cases[] = {
		{ EV2, EV1,
		  "},\"eventTime\":\"2026-12-02T06:00:00.000000Z\",\"reportingController\":\"default-scheduler\",\"reportingInstance\":"
		  "\"h\",\"action\":\"Binding\",\"reason\":\"Scheduled\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"default\","
		  "\"name\":\"p\",\"uid\":\"u\",\"apiVersion\":\"v1\",\"resourceVersion\":\"7\",\"fieldPath\":\"spec\"},\"note\":\"n\","
		  "\"type\":\"Normal\",\"series\":{\"count\":2,\"lastObservedTime\":\"2026-12-02T06:00:01.000000Z\"}}",
		  NULL },
		{ EV2, EV1,
		  "},\"reportingController\":\"rc\",\"deprecatedSource\":{\"component\":\"other\",\"host\":\"h\"},\"related\":{\"kind\":"
		  "\"Node\",\"name\":\"n\"},\"deprecatedCount\":3,\"deprecatedFirstTimestamp\":\"2026-12-02T06:00:00Z\",\"note\":null}",
		  NULL },
		{ EV2, EV1, "},\"reason\":\"r\",\"note\":\"q\\\"b\\\\c\\u00e9\\n\\t<&>\",\"regarding\":null,\"type\":\"Warning\"}", NULL },
		{ EV2, EV1, "},\"reportingController\":5,\"reason\":\"a\",\"reason\":\"b\",\"unknown\":{\"x\":1},\"deprecatedCount\":1.5e300}",
		  NULL },
		{ EV2, EV1,
		  ",\"labels\":{\"a\":\"1\"},\"annotations\":{\"k\":\"v\"},\"resourceVersion\":\"42\",\"generateName\":\"g-\"},"
		  "\"reportingController\":\"rc\",\"reason\":\"r\"}",
		  NULL },
		{ EV2, EV1, "},\"reportingController\":\"rc\",\"reason\":\"r\"}",
		  "{\"metadata\":{\"labels\":{\"b\":\"2\"}},\"note\":\"patched\",\"reason\":null}" },
		{ EV2, EV1, "}}", NULL },
		{ EV1, EV2,
		  "},\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\",\"uid\":\"u\",\"fieldPath\":\"f\"},\"reason\":\"Ready\",\"message\":"
		  "\"ready\",\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},\"count\":3,\"firstTimestamp\":\"2026-12-02T06:00:00Z\","
		  "\"lastTimestamp\":\"2026-12-02T06:00:02Z\",\"type\":\"Normal\",\"reportingComponent\":\"kubelet\"}",
		  NULL },
		{ EV1, EV2, "},\"reportingComponent\":\"rc\",\"reportingInstance\":\"ri\",\"action\":null,\"eventTime\":null}", NULL },
		{ EV1, EV2, ",\"labels\":{\"z\":\"\\u2603\"}},\"message\":\"m\"}", "{\"metadata\":{\"annotations\":{\"x\":\"y\"}},\"count\":4}" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got[2], *prim[2];
		for (int way = 0; way < 2; way++) {
			char name[32], path[256], body[2048];
			snprintf(name, sizeof name, "mb%zu-%c", i, way ? 'b' : 'a');
			snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"%s\"%s", name, cases[i].body);
			apis_events_mirror_bytes = way == 0;
			assert_int_equal(status_of("POST", cases[i].api, JSON, body), 201);
			snprintf(path, sizeof path, "%s/%s", cases[i].api, name);
			if (cases[i].patch)
				assert_int_equal(status_of("PATCH", path, "application/merge-patch+json", cases[i].patch), 200);
			apis_events_mirror_bytes = true;
			long code;
			cJSON *po = doreq("GET", path, NULL, NULL, &code);
			assert_int_equal(code, 200);
			char mpath[256];
			snprintf(mpath, sizeof mpath, "%s/%s", cases[i].mirror, name);
			cJSON *mo = doreq("GET", mpath, NULL, NULL, &code);
			assert_int_equal(code, 200);
			assert_non_null(jpath(mo, "metadata.resourceVersion"));
			assert_int_equal(strtoull(jpath(mo, "metadata.resourceVersion"), NULL, 10),
					 strtoull(jpath(po, "metadata.resourceVersion"), NULL, 10) + 1);
			assert_string_equal(jpath(mo, "metadata.uid"), jpath(po, "metadata.uid"));
			/* the mirror's index fields: each selects the value its JSON holds */
			const char *const *fields = !strcmp(cases[i].mirror, EV1) ? (const char *const[]){ "involvedObject.kind",
				"involvedObject.name", "involvedObject.uid", "involvedObject.fieldPath", "reason",
				"reportingComponent", "type", NULL } : (const char *const[]){ "regarding.kind", "regarding.name",
				"regarding.uid", "reason", "reportingController", "type", NULL };
			for (int f = 0; fields[f]; f++) {
				const char *v = jpath(mo, fields[f]);
				if (!v || strpbrk(v, "%&#+ ,=\"\\"))
					continue;
				snprintf(path, sizeof path, "%s?fieldSelector=metadata.name%%3D%s,%s%%3D%s", cases[i].mirror, name,
					 fields[f], v);
				if (count_items(path) != 1)
					fail_msg("case %zu way %d: %s=%s does not select the mirror", i, way, fields[f], v);
			}
			cJSON_Delete(po);
			cJSON_Delete(mo);
			got[way] = normalized_get(mpath);
			snprintf(path, sizeof path, "%s/%s", cases[i].api, name);
			prim[way] = normalized_get(path);
			for (int k = 0; k < 2; k++) {
				char *t = k ? prim[way] : got[way];
				for (char *p = strstr(t, name); p; p = strstr(p + strlen(name), name))
					p[strlen(name) - 1] = 'a'; /* the names differ in their last letter */
			}
			assert_int_equal(status_of("DELETE", path, NULL, NULL), 200);
			assert_int_equal(status_of("GET", mpath, NULL, NULL), 404);
		}
		if (strcmp(got[0], got[1]))
			fail_msg("case %zu:\n bytes %s\n  tree %s", i, got[0], got[1]);
		if (strcmp(prim[0], prim[1]))
			fail_msg("case %zu (the event itself):\n %s\n %s", i, prim[0], prim[1]);
		for (int w = 0; w < 2; w++) {
			free(got[w]);
			free(prim[w]);
		}
	}
#undef EV1
#undef EV2
}

/* A binding edits the pod's JSON in place when it can (apis_binding_splice) and its cJSON tree
 * otherwise: for each shape, binding one pod each way must store the same bytes. */
static void test_binding_spliced_equals_tree(void **state)
{
	(void)state;
	static const struct {
		const char *labels, *spec;   /* make_pod's */
		const char *status_patch;    /* merge patch of /status before the binding, or NULL */
		const char *node, *annotations;
	} cases[] = {
		{ NULL, NULL, NULL, "n1", NULL },
		{ "{\"app\":\"x\",\"tier\":\"a\"}", ",\"schedulerName\":\"s\",\"hostNetwork\":true", NULL, "node-17.zone-a", NULL },
		{ NULL, NULL, "{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"}]}}", "n1", NULL },
		{ NULL, NULL, "{\"status\":{\"conditions\":[]}}", "n1", NULL },
		{ NULL, NULL,
		  "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
		  "\"message\":\"0/3 nodes are available\"}]}}",
		  "n1", NULL },
		{ NULL, NULL, NULL, "n1", "{\"a\":\"1\"}" },
		{ NULL, NULL, NULL, "n\xc3\xb6" "de", NULL },
		{ NULL, ",\"nodeName\":\"\"", NULL, "n1", NULL },
		{ NULL, ",\"schedulingGates\":[]", NULL, "n1", NULL },
		{ NULL, NULL, "{\"status\":{\"nominatedNodeName\":\"n2\"}}", "n1", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got[2];
		for (int way = 0; way < 2; way++) {
			char name[32], path[256], body[512];
			snprintf(name, sizeof name, "bs%zu-%c", i, way ? 'b' : 'a');
			make_pod("default", name, cases[i].labels, cases[i].spec);
			if (cases[i].status_patch) {
				snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", name);
				assert_int_equal(status_of("PATCH", path, "application/merge-patch+json", cases[i].status_patch), 200);
			}
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/binding", name);
			snprintf(body, sizeof body,
				 "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\"%s%s},\"target\":{\"kind\":"
				 "\"Node\",\"name\":\"%s\"}}",
				 name, cases[i].annotations ? ",\"annotations\":" : "",
				 cases[i].annotations ? cases[i].annotations : "", cases[i].node);
			apis_binding_splice = way == 0;
			assert_int_equal(status_of("POST", path, JSON, body), 201);
			apis_binding_splice = true;
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
			got[way] = normalized_get(path);
			for (char *p = strstr(got[way], name); p; p = strstr(p + strlen(name), name))
				p[strlen(name) - 1] = 'a'; /* the names differ in their last letter */
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", name);
			assert_int_equal(status_of("DELETE", path, NULL, NULL), 200);
		}
		if (strcmp(got[0], got[1]))
			fail_msg("case %zu:\n spliced %s\n    tree %s", i, got[0], got[1]);
		char want_node[128];
		snprintf(want_node, sizeof want_node, "\"nodeName\":\"%s\"", cases[i].node);
		assert_non_null(strstr(got[0], want_node));
		assert_non_null(strstr(got[0], "{\"type\":\"PodScheduled\","));
		free(got[0]);
		free(got[1]);
	}
}

/* A PATCH of pods/status whose body is only {"status": ...} patches the stored status alone and
 * splices it into the stored bytes (apis_status_patch_fast); every other patch takes the
 * whole-object path. For each case, one pod patched each way must get the same answer (code and
 * body), store the same bytes and index fields, and a patch that changes nothing must not write
 * (the resourceVersion stays). */
static void test_status_patch_fast_equals_tree(void **state)
{
	(void)state;
#define SMP "application/strategic-merge-patch+json"
#define MERGE "application/merge-patch+json"
	static const char disruption[] =
		"{\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
		"\"PreemptionByScheduler\",\"message\":\"s: preempting to accommodate a higher priority pod\","
		"\"lastTransitionTime\":\"2026-12-02T10:00:00Z\"}]}}";
	static const char unschedulable[] =
		"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
		"\"Unschedulable\",\"message\":\"0/3 nodes are available\",\"lastProbeTime\":null,"
		"\"lastTransitionTime\":\"2026-12-02T10:00:00Z\"}],\"nominatedNodeName\":\"n1\"}}";
	static const struct {
		const char *ctype;
		const char *before; /* a first status patch (same way), or NULL */
		const char *patch;
		long code;
		bool writes;        /* a new resourceVersion after the patch */
		const char *query;  /* of the patch, or NULL */
	} cases[] = {
		/* a victim's DisruptionTarget; again: unchanged, no write */
		{ SMP, NULL, disruption, 200, true, NULL },
		{ SMP, disruption, disruption, 200, false, NULL },
		/* a preemptor's condition and nomination; then the nomination cleared */
		{ SMP, NULL, unschedulable, 200, true, NULL },
		{ SMP, unschedulable, "{\"status\":{\"nominatedNodeName\":null}}", 200, true, NULL },
		{ SMP, unschedulable, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
		  "\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are available\"}]}}", 200, true, NULL },
		/* merge by type beside another condition, then reordered */
		{ SMP, disruption, unschedulable, 200, true, NULL },
		{ SMP, unschedulable, "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"DisruptionTarget\"},"
		  "{\"type\":\"PodScheduled\"}],\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}}",
		  200, true, NULL },
		{ SMP, unschedulable, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"$patch\":\"delete\"}]}}",
		  200, true, NULL },
		{ SMP, unschedulable, "{\"status\":{\"$patch\":\"replace\",\"phase\":\"Failed\"}}", 200, true, NULL },
		{ SMP, NULL, "{\"status\":{}}", 200, false, NULL },
		/* errors: a condition without its merge key, an unknown directive */
		{ SMP, unschedulable, "{\"status\":{\"conditions\":[{\"status\":\"True\"}]}}", 422, false, NULL },
		{ SMP, NULL, "{\"status\":{\"$patch\":\"bogus\"}}", 422, false, NULL },
		/* merge patches: a field, status removed, an empty patch of it */
		{ MERGE, NULL, "{\"status\":{\"phase\":\"Running\",\"hostIP\":\"10.0.0.1\"}}", 200, true, NULL },
		{ MERGE, unschedulable, "{\"status\":null}", 200, true, NULL },
		{ MERGE, unschedulable, "{\"status\":{\"conditions\":[]}}", 200, true, NULL },
		{ MERGE, NULL, "{\"status\":{\"phase\":\"Pending\"}}", 200, false, NULL },
		/* not status-only: the whole-object path both ways (spec and metadata are dropped) */
		{ SMP, NULL, "{\"metadata\":{\"labels\":{\"x\":\"y\"}},\"status\":{\"phase\":\"Running\"}}", 200, true, NULL },
		{ MERGE, NULL, "{\"spec\":{\"nodeName\":\"n9\"}}", 200, false, NULL },
		/* strict field validation and dry runs */
		{ SMP, NULL, unschedulable, 200, true, "?fieldValidation=Strict" },
		{ SMP, NULL, "{\"status\":{\"bogus\":1}}", 200, true, "?fieldValidation=Strict" },
		{ SMP, disruption, unschedulable, 200, false, "?dryRun=All" },
		/* the indexed status fields follow (status.phase, status.podIP, status.nominatedNodeName) */
		{ MERGE, unschedulable, "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.2.3\",\"nominatedNodeName\":\"n7\"}}",
		  200, true, NULL },
		{ MERGE, unschedulable, "{\"status\":{\"phase\":7,\"podIP\":true,\"nominatedNodeName\":null}}", 200, true, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got[2], *answer[2], fields[2][512];
		for (int way = 0; way < 2; way++) {
			char name[32], path[256];
			snprintf(name, sizeof name, "sp%zu-%c", i, way ? 'b' : 'a');
			make_pod("default", name, "{\"app\":\"x\"}", ",\"priority\":0");
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", name);
			apis_status_patch_fast = way == 0;
			if (cases[i].before)
				assert_int_equal(status_of("PATCH", path, cases[i].ctype, cases[i].before), 200);
			long code;
			cJSON *o = doreq("GET", path, NULL, NULL, &code);
			char rv0[32];
			snprintf(rv0, sizeof rv0, "%s", jpath(o, "metadata.resourceVersion"));
			cJSON_Delete(o);
			struct resp r = {0};
			char ppath[300];
			snprintf(ppath, sizeof ppath, "%s%s", path, cases[i].query ? cases[i].query : "");
			cJSON_Delete(doreq_at(base, "PATCH", ppath, cases[i].ctype, cases[i].patch, NULL, NULL, &code, &r));
			apis_status_patch_fast = true;
			/* the index fields field selectors read */
			pthread_rwlock_rdlock(&srv->lock);
			struct apis_obj *so = apis_store_get(srv->rd_pods, "default", name);
			assert_non_null(so);
			fields[way][0] = 0;
			for (int f = 0; f < srv->rd_pods->nfields; f++) {
				const char *v = apis_obj_field(so, srv->rd_pods->fields[f]);
				size_t fl = strlen(fields[way]);
				snprintf(fields[way] + fl, sizeof fields[way] - fl, "%s=%s;", srv->rd_pods->fields[f], v ? v : "(none)");
			}
			pthread_rwlock_unlock(&srv->lock);
			if (code != cases[i].code)
				fail_msg("case %zu way %d: code %ld, want %ld: %s", i, way, code, cases[i].code, r.body);
			o = doreq("GET", path, NULL, NULL, &code);
			bool wrote = strcmp(rv0, jpath(o, "metadata.resourceVersion")) != 0;
			cJSON_Delete(o);
			if (wrote != cases[i].writes)
				fail_msg("case %zu way %d: wrote %d, want %d", i, way, wrote, cases[i].writes);
			normalize(r.body);
			answer[way] = r.body;
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
			got[way] = normalized_get(path);
			for (int k = 0; k < 2; k++) {
				char *t = k ? got[way] : answer[way];
				for (char *p = strstr(t, name); p; p = strstr(p + strlen(name), name))
					p[strlen(name) - 1] = 'a'; /* the names differ in their last letter */
			}
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", name);
			assert_int_equal(status_of("DELETE", path, NULL, NULL), 200);
		}
		if (strcmp(answer[0], answer[1]))
			fail_msg("case %zu answer:\n status alone %s\n  whole tree %s", i, answer[0], answer[1]);
		if (strcmp(got[0], got[1]))
			fail_msg("case %zu stored:\n status alone %s\n  whole tree %s", i, got[0], got[1]);
		if (strcmp(fields[0], fields[1]))
			fail_msg("case %zu fields:\n status alone %s\n  whole tree %s", i, fields[0], fields[1]);
		for (int way = 0; way < 2; way++) {
			free(got[way]);
			free(answer[way]);
		}
	}
#undef SMP
#undef MERGE
}

/* A removal without finalizers edits the resourceVersion in the stored JSON
 * (apis_delete_splice): for each object, deleting one copy each way must answer the same bytes
 * (the DELETED watch event carries the same object) with a new resourceVersion. */
static void test_delete_spliced_equals_tree(void **state)
{
	(void)state;
	static const struct {
		const char *plural; /* in namespace default */
		const char *body;   /* %s: the name */
		const char *options;
	} cases[] = {
		{ "pods", "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
		  NULL },
		{ "pods",
		  "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"resourceVersion\":\"1\"},\"annotations\":{"
		  "\"resourceVersion\":\"\\\"resourceVersion\\\":\\\"7\\\"}\",\"finalizers\":\"[\\\"x\\\"]\"}},"
		  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],\"nodeName\":\"n1\"}}",
		  "{\"gracePeriodSeconds\":0}" },
		/* metadata after a member holding its name; a map of odd strings */
		{ "configmaps",
		  "{\"data\":{\"metadata\":\"{\\\"resourceVersion\\\":\\\"5\\\"}\",\"b\":\"]}\\\\\"},"
		  "\"metadata\":{\"name\":\"%s\"}}",
		  "{\"propagationPolicy\":\"Background\"}" },
		{ "configmaps", "{\"metadata\":{\"name\":\"%s\",\"finalizers\":[]},\"data\":{\"k\":\"\\u00e9\\n\"}}", NULL },
		{ "configmaps", "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"resourceVersion\":\"1\"}}}", NULL },
		{ "secrets", "{\"metadata\":{\"name\":\"%s\",\"ownerReferences\":[]},\"stringData\":{\"a\":\"b\"}}", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *answer[2];
		for (int way = 0; way < 2; way++) {
			char name[32], path[256], body[1024];
			snprintf(name, sizeof name, "ds%zu-%c", i, way ? 'b' : 'a');
			snprintf(body, sizeof body, cases[i].body, name);
			snprintf(path, sizeof path, "/api/v1/namespaces/default/%s", cases[i].plural);
			long code;
			cJSON *o = doreq("POST", path, JSON, body, &code);
			assert_int_equal(code, 201);
			unsigned long long rv0 = strtoull(jpath(o, "metadata.resourceVersion"), NULL, 10);
			cJSON_Delete(o);
			snprintf(path, sizeof path, "/api/v1/namespaces/default/%s/%s", cases[i].plural, name);
			struct resp r = {0};
			apis_delete_splice = way == 0;
			o = doreq_at(base, "DELETE", path, cases[i].options ? JSON : NULL, cases[i].options, NULL, NULL, &code,
				     &r);
			apis_delete_splice = true;
			assert_int_equal(code, 200);
			assert_true(strtoull(jpath(o, "metadata.resourceVersion"), NULL, 10) > rv0);
			cJSON_Delete(o);
			assert_int_equal(status_of("GET", path, NULL, NULL), 404);
			normalize(r.body);
			for (char *p = strstr(r.body, name); p; p = strstr(p + strlen(name), name))
				p[strlen(name) - 1] = 'a'; /* the names differ in their last letter */
			answer[way] = r.body;
		}
		if (strcmp(answer[0], answer[1]))
			fail_msg("case %zu:\n spliced %s\n    tree %s", i, answer[0], answer[1]);
		free(answer[0]);
		free(answer[1]);
	}
}

static void test_strict_field_validation(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", JSON,
			 "{\"metadata\":{\"name\":\"dup\"},\"data\":{\"a\":\"1\",\"a\":\"2\"}}", &code);
	assert_int_equal(code, 400);
	assert_string_equal(jpath(o, "message"), "strict decoding error: duplicate field \"data.a\"");
	cJSON_Delete(o);
	/* without Strict the last value wins silently */
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON,
				   "{\"metadata\":{\"name\":\"dup\"},\"data\":{\"a\":\"1\"}}"), 201);
}

static void test_watch_table_and_initial_events(void **state)
{
	(void)state;
	make_pod("default", "tw", NULL, NULL);
	struct resp r = {0};
	long code;
	CURL *c = curl_easy_init();
	char url[512];
	snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%%3Dtw&timeoutSeconds=1", base);
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	assert_int_equal(code, 200);
	cJSON *e = cJSON_Parse(strtok(r.body, "\n"));
	assert_string_equal(jpath(e, "type"), "ADDED");
	assert_string_equal(jpath(e, "object.kind"), "Table");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "object"), "columnDefinitions"));
	cJSON_Delete(e);
	free(r.body);
	cJSON *ev = watch_events("/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
				 "&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dtw&timeoutSeconds=1");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 0), "type"), "ADDED");
	assert_string_equal(jpath(cJSON_GetArrayItem(ev, 1), "type"), "BOOKMARK");
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ev, 1), "object"), "metadata"),
		"annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, "k8s.io/initial-events-end")), "true");
	cJSON_Delete(ev);
}

/* protobuf: length-delimited field helper */
static size_t pb_field(unsigned char *out, int field, const void *data, size_t len)
{
	out[0] = (unsigned char)(field << 3 | 2);
	out[1] = (unsigned char)len; /* < 128 in this test */
	memcpy(out + 2, data, len);
	return len + 2;
}

static void test_protobuf_body(void **state)
{
	(void)state;
	unsigned char md[64], kv[64], entry[64], cm[256], tm[64], body[512];
	size_t mdl = pb_field(md, 1, "pbcm", 4);            /* ObjectMeta.name */
	size_t kvl = pb_field(kv, 1, "k", 1);
	kvl += pb_field(kv + kvl, 2, "v", 1);                /* map entry k=v */
	size_t el = pb_field(entry, 2, kv, kvl);             /* ConfigMap.data */
	size_t cml = pb_field(cm, 1, md, mdl);               /* ConfigMap.metadata */
	memcpy(cm + cml, entry, el);
	cml += el;
	size_t tml = pb_field(tm, 1, "v1", 2);
	tml += pb_field(tm + tml, 2, "ConfigMap", 9);
	memcpy(body, "k8s\0", 4);
	size_t bl = 4 + pb_field(body + 4, 1, tm, tml);
	bl += pb_field(body + bl, 2, cm, cml);
	CURL *c = curl_easy_init();
	char url[300];
	snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps", base);
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/vnd.kubernetes.protobuf");
	struct resp r = {0};
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)bl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	long code;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	assert_int_equal(code, 201);
	cJSON *o = cJSON_Parse(r.body);
	assert_string_equal(jpath(o, "metadata.name"), "pbcm");
	assert_string_equal(jpath(o, "data.k"), "v");
	cJSON_Delete(o);
	free(r.body);
	/* truncated protobuf: 415 with a message, never a crash */
	memset(&r, 0, sizeof r);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(bl - 3));
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	assert_int_equal(code, 415);
	free(r.body);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}

/* ---------------- robustness ---------------- */

static int raw_connect_buf(int rcvbuf) { return apis_test_connect(apis_server_port(srv), rcvbuf); }

static int raw_connect(void) { return raw_connect_buf(0); }

static void raw_send(const void *p, size_t n, char *out, size_t outn)
{
	int fd = raw_connect();
	ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
	(void)w;
	shutdown(fd, SHUT_WR);
	size_t got = 0;
	ssize_t r;
	while (out && got + 1 < outn && (r = recv(fd, out + got, outn - got - 1, 0)) > 0)
		got += (size_t)r;
	if (out)
		out[got] = 0;
	close(fd);
}

/* A watcher that never reads must not hold up writers or other clients; it is closed once it
 * falls behind the retained history. */
static void test_slow_watcher_closed(void **state)
{
	(void)state;
	int fd = raw_connect_buf(16384);
	const char *req = "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	usleep(100000);
	char *body = malloc(40000);
	for (int i = 0; i < 200; i++) { /* ~6 MB of events, far beyond socket buffers and the 64-event ring */
		int n = snprintf(body, 40000, "{\"metadata\":{\"name\":\"slow-%d\"},\"data\":{\"x\":\"", i);
		memset(body + n, 'x', 30000);
		snprintf(body + n + 30000, 40000 - (size_t)n - 30000, "\"}}");
		assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, body), 201);
	}
	free(body);
	assert_int_equal(status_of("GET", "/api/v1/namespaces/default/configmaps/slow-0", NULL, NULL), 200);
	/* drain: the server ends the stream (EOF) instead of keeping it forever */
	char buf[65536];
	ssize_t r;
	size_t total = 0;
	while ((r = recv(fd, buf, sizeof buf, 0)) > 0)
		total += (size_t)r;
	assert_int_equal(r, 0);
	assert_true(total < 6000000);
	close(fd);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/configmaps", NULL, NULL), 200);
}

/* A watch is woken only by its resource's events: one whose 64-event history was overrun by
 * another resource's writes while it waited (nothing of its own was dropped) still delivers its
 * own events, in order and only those, and ends with the terminating chunk at its timeout. */
static void test_watch_other_resources_overrun(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("GET", "/api/v1/namespaces/default/configmaps?limit=1", NULL, NULL, &code);
	assert_int_equal(code, 200);
	char req[512];
	snprintf(req, sizeof req,
		 "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s&timeoutSeconds=2 HTTP/1.1\r\n"
		 "Host: x\r\n\r\n",
		 jpath(o, "metadata.resourceVersion"));
	cJSON_Delete(o);
	int fd = raw_connect();
	assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	usleep(100000);
	for (int i = 0; i < 150; i++) {
		char b[128];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"ovr-%d\"},\"data\":{\"k\":\"dg==\"}}", i);
		assert_int_equal(status_of("POST", "/api/v1/namespaces/default/secrets", JSON, b), 201);
	}
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":{\"name\":\"ovr-cm\"}}"),
			 201);
	assert_int_equal(status_of("PATCH", "/api/v1/namespaces/default/configmaps/ovr-cm", "application/merge-patch+json",
				   "{\"data\":{\"k\":\"v\"}}"),
			 200);
	size_t cap = 1 << 20, got = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	ssize_t r;
	while (got + 1 < cap && (r = recv(fd, buf + got, cap - got - 1, 0)) > 0)
		got += (size_t)r;
	buf[got] = 0;
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK"));
	assert_true(got >= 5 && !memcmp(buf + got - 5, "0\r\n\r\n", 5)); /* ended, not cut off as a slow watcher */
	/* the events: lines starting with '{' (chunk framing around them) */
	const char *want[][2] = { { "ADDED", NULL }, { "MODIFIED", "v" } };
	int n = 0;
	unsigned long long last_rv = 0;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (*line != '{')
			continue;
		cJSON *e = cJSON_Parse(line);
		assert_non_null(e);
		assert_true(n < 2);
		assert_string_equal(jpath(e, "type"), want[n][0]);
		assert_string_equal(jpath(e, "object.kind"), "ConfigMap");
		assert_string_equal(jpath(e, "object.metadata.name"), "ovr-cm");
		if (want[n][1])
			assert_string_equal(jpath(e, "object.data.k"), want[n][1]);
		unsigned long long rv = strtoull(jpath(e, "object.metadata.resourceVersion"), NULL, 10);
		assert_true(rv > last_rv);
		last_rv = rv;
		cJSON_Delete(e);
		n++;
	}
	assert_int_equal(n, 2);
	free(buf);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/configmaps/ovr-cm", NULL, NULL), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/namespaces/default/secrets", NULL, NULL), 200);
}

static void test_malformed_input(void **state)
{
	(void)state;
	long code;
	cJSON *o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":{\"name\":", &code);
	assert_int_equal(code, 400);
	assert_string_equal(jpath(o, "kind"), "Status");
	assert_string_equal(jpath(o, "reason"), "BadRequest");
	cJSON_Delete(o);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, "[1,2]"), 400);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", "application/yaml", "a: [b"), 400);
	assert_int_equal(status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, "{\"metadata\":5}"), 400);
	/* oversized body (limit 64 KiB here) */
	size_t big = 100 * 1024;
	char *b = malloc(big + 1);
	memset(b, 'a', big);
	b[big] = 0;
	memcpy(b, "{\"x\":\"", 6);
	o = doreq("POST", "/api/v1/namespaces/default/configmaps", JSON, b, &code);
	assert_int_equal(code, 413);
	cJSON_Delete(o);
	free(b);
	/* raw protocol garbage */
	char out[4096];
	raw_send("GARBAGE\r\n\r\n", 11, out, sizeof out);
	assert_non_null(strstr(out, "400"));
	raw_send("GET /api HTTP/1.1\r\nContent-Length: zz\r\n\r\n", 41, out, sizeof out);
	assert_non_null(strstr(out, "400"));
	raw_send("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n", 88, out, sizeof out);
	assert_non_null(strstr(out, "400"));
	/* fuzz: random bytes, random truncations of a valid request, random JSON bodies */
	uint64_t st = 12345;
	const char *valid = "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			    "Content-Length: 60\r\n\r\n{\"metadata\":{\"name\":\"fz\"},\"data\":{\"k\":\"v\",\"n\":[1,2,{}]}}  ";
	for (int i = 0; i < 150; i++) {
		char buf[512];
		size_t n;
		st = st * 6364136223846793005ULL + 1442695040888963407ULL;
		if (i % 3 == 0) {
			n = (st >> 33) % sizeof buf;
			for (size_t k = 0; k < n; k++) {
				st = st * 6364136223846793005ULL + 1;
				buf[k] = (char)(st >> 56);
			}
		} else {
			n = (st >> 33) % strlen(valid);
			memcpy(buf, valid, n);
			if (i % 3 == 2 && n > 10) {
				st = st * 6364136223846793005ULL + 1;
				buf[(st >> 33) % n] = (char)(st >> 20);
			}
		}
		raw_send(buf, n, NULL, 0);
	}
	for (int i = 0; i < 60; i++) {
		const char *doc = "{\"metadata\":{\"name\":\"fj\",\"labels\":{\"a\":\"b\"}},\"data\":{\"x\":\"y\"},\"spec\":[1,{\"z\":null}]}";
		size_t n = strlen(doc);
		char body[256];
		st = st * 6364136223846793005ULL + 1;
		size_t cut = (st >> 33) % n;
		memcpy(body, doc, cut);
		body[cut] = 0;
		long c = status_of("POST", "/api/v1/namespaces/default/configmaps", JSON, body);
		assert_true(c == 400 || c == 201 || c == 409 || c == 422);
		c = status_of("PATCH", "/api/v1/namespaces/default/configmaps/fj", "application/json-patch+json", body);
		assert_true(c >= 200 && c < 500);
	}
	/* odd paths, methods and query strings */
	static const char *const odd[][2] = {
		{ "GET", "/api/v1/namespaces/default/pods?limit=abc&continue=%%%&labelSelector=(((" },
		{ "GET", "/api/v1/namespaces/default/pods?continue=eyJ9" },
		{ "GET", "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=-5&resourceVersion=999999999999" },
		{ "GET", "/api/v1/namespaces//pods" },
		{ "GET", "/api/v1/namespaces/default/pods/x/y/z/w" },
		{ "GET", "/apis/apps" },
		{ "GET", "/apis/apps/v1/deployments/x" },
		{ "DELETE", "/api/v1/namespaces" },
		{ "POST", "/api/v1/namespaces/default/pods/x/status" },
		{ "PUT", "/api/v1/namespaces/default/pods" },
		{ "PATCH", "/api/v1/nodes" },
		{ "OPTIONS", "/api/v1/pods" },
		{ "GET", "/api/v1/watch/namespaces/default/pods/nope?timeoutSeconds=1" },
		{ "GET", "/openapi/v3/apis/nope/v1" },
		{ "GET", "/api/v2/pods" },
		{ "GET", "/%ff%00/x" },
		{ "POST", "/api/v1/namespaces/default/bindings" },
		{ "POST", "/api/v1/namespaces/default/pods/x/eviction" },
		{ "PUT", "/api/v1/namespaces/default/finalize" },
		{ "PUT", "/apis/apps/v1/namespaces/default/deployments/nope/scale" },
	};
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		long c = status_of(odd[i][0], odd[i][1], JSON, !strcmp(odd[i][0], "GET") || !strcmp(odd[i][0], "DELETE") ? NULL : "{\"metadata\":{}}");
		assert_true((c >= 200 && c < 500) || c == 504);
	}
	/* random protobuf envelopes */
	for (int i = 0; i < 60; i++) {
		unsigned char pb[300];
		memcpy(pb, "k8s\0", 4);
		st = st * 6364136223846793005ULL + 1;
		size_t n = 4 + (st >> 33) % 290;
		for (size_t k = 4; k < n; k++) {
			st = st * 6364136223846793005ULL + 1;
			pb[k] = (char)(st >> 56);
		}
		CURL *c = curl_easy_init();
		char url[300];
		snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps", base);
		struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/vnd.kubernetes.protobuf");
		struct resp r = {0};
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, pb);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)n);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
		assert_int_equal(curl_easy_perform(c), CURLE_OK);
		long code;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		assert_true(code == 415 || code == 400 || code == 422 || code == 201 || code == 409);
		free(r.body);
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
	}
	/* still healthy */
	assert_int_equal(status_of("GET", "/api/v1/namespaces/default/configmaps", NULL, NULL), 200);
}

/* ---------------- auth and TLS ---------------- */

static void test_token_auth(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.token = "s3cret";
	char kc[] = "/tmp/apis-test-kc-XXXXXX";
	int fd = mkstemp(kc);
	close(fd);
	o.kubeconfig_path = kc;
	struct apis_server *s;
	assert_int_equal(apis_server_start(&o, &s), 0);
	long code;
	cJSON *j = doreq_at(apis_server_url(s), "GET", "/api/v1/namespaces", NULL, NULL, NULL, NULL, &code, NULL);
	assert_int_equal(code, 401);
	assert_string_equal(jpath(j, "reason"), "Unauthorized");
	cJSON_Delete(j);
	j = doreq_at(apis_server_url(s), "GET", "/api/v1/namespaces", NULL, NULL, "wrong", NULL, &code, NULL);
	assert_int_equal(code, 401);
	cJSON_Delete(j);
	j = doreq_at(apis_server_url(s), "GET", "/api/v1/namespaces", NULL, NULL, "s3cret", NULL, &code, NULL);
	assert_int_equal(code, 200);
	cJSON_Delete(j);
	FILE *f = fopen(kc, "r");
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "token: s3cret"));
	assert_non_null(strstr(buf, apis_server_url(s)));
	unlink(kc);
	apis_server_stop(s);
}

static void test_tls(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.tls = true;
	struct apis_server *s;
	assert_int_equal(apis_server_start(&o, &s), 0);
	assert_non_null(apis_server_ca_pem(s));
	assert_memory_equal(apis_server_url(s), "https://", 8);
	long code;
	cJSON *j = doreq_at(apis_server_url(s), "GET", "/api/v1/namespaces/default", NULL, NULL, NULL, apis_server_ca_pem(s), &code, NULL);
	assert_int_equal(code, 200);
	assert_string_equal(jpath(j, "metadata.name"), "default");
	cJSON_Delete(j);
	/* without the CA the handshake must fail verification */
	CURL *c = curl_easy_init();
	char url[256];
	snprintf(url, sizeof url, "%s/version", apis_server_url(s));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, "/dev/null");
	curl_easy_setopt(c, CURLOPT_CAPATH, "/nonexistent");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	struct resp r = {0};
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	assert_int_not_equal(curl_easy_perform(c), CURLE_OK);
	free(r.body);
	curl_easy_cleanup(c);
	apis_server_stop(s);
}

static void test_fault_injection(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.fault_seed = 7;
	o.fault_error_rate = 0.5;
	int fails[2] = { 0, 0 };
	long seq[2][40];
	for (int run = 0; run < 2; run++) {
		struct apis_server *s;
		assert_int_equal(apis_server_start(&o, &s), 0);
		for (int i = 0; i < 40; i++) {
			long code;
			cJSON_Delete(doreq_at(apis_server_url(s), "GET", "/api/v1/namespaces", NULL, NULL, NULL, NULL, &code, NULL));
			assert_true(code == 200 || code == 500 || code == 429);
			seq[run][i] = code;
			if (code != 200)
				fails[run]++;
		}
		apis_server_stop(s);
	}
	assert_true(fails[0] > 5 && fails[0] < 35);
	assert_memory_equal(seq[0], seq[1], sizeof seq[0]); /* deterministic from the seed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crud_and_conflict),
		cmocka_unit_test(test_generate_name),
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_limit_continue),
		cmocka_unit_test(test_watch_resume_and_bookmarks),
		cmocka_unit_test(test_watch_expired),
		cmocka_unit_test(test_watch_selector_transitions),
		cmocka_unit_test(test_binding_twice),
		cmocka_unit_test(test_eviction_pdb),
		cmocka_unit_test(test_gc_background),
		cmocka_unit_test(test_gc_orphan_and_foreground),
		cmocka_unit_test(test_finalizers),
		cmocka_unit_test(test_status_subresource_and_generation),
		cmocka_unit_test(test_priority_admission),
		cmocka_unit_test(test_namespace_deletion),
		cmocka_unit_test(test_crd_lifecycle),
		cmocka_unit_test(test_crd_multiple_versions),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_patch_types),
		cmocka_unit_test(test_events_both_apis),
		cmocka_unit_test(test_write_paths_golden),
		cmocka_unit_test(test_index_fields_each),
		cmocka_unit_test(test_event_mirror_bytes_equals_tree),
		cmocka_unit_test(test_binding_spliced_equals_tree),
		cmocka_unit_test(test_status_patch_fast_equals_tree),
		cmocka_unit_test(test_delete_spliced_equals_tree),
		cmocka_unit_test(test_strict_field_validation),
		cmocka_unit_test(test_watch_table_and_initial_events),
		cmocka_unit_test(test_protobuf_body),
		cmocka_unit_test(test_slow_watcher_closed),
		cmocka_unit_test(test_watch_other_resources_overrun),
		cmocka_unit_test(test_malformed_input),
		cmocka_unit_test(test_token_auth),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_fault_injection),
	};
	return cmocka_run_group_tests(tests, start_default, stop_default);
}
