/* Tests for kube/informer.c: list+watch, handlers in order, resume from the last RV after a
 * dropped connection, relist on 410 with synthesized deletes, indexes, has-synced, stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/informer.h"
#include "kube/tests/fake_apiserver.h"

/* ---------- handler log ---------- */

struct log {
	pthread_mutex_t mu;
	char lines[128][96];
	int n;
};

static const char *rv_of(const cJSON *o)
{
	const cJSON *rv = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion");
	return cJSON_IsString(rv) ? rv->valuestring : "?";
}

static void log_line(struct log *l, const char *fmt, const char *a, const char *b, const char *c)
{
	pthread_mutex_lock(&l->mu);
	if (l->n < 128)
		snprintf(l->lines[l->n], sizeof(l->lines[0]), fmt, a, b, c);
	l->n++;
	pthread_mutex_unlock(&l->mu);
}

static void on_add(void *ctx, const cJSON *o)
{
	char key[128];
	log_line(ctx, "add %s %s%s", kube_object_key(o, key, sizeof(key)), rv_of(o), "");
}
static void on_update(void *ctx, const cJSON *old, const cJSON *o)
{
	char key[128];
	log_line(ctx, "update %s %s->%s", kube_object_key(o, key, sizeof(key)), rv_of(old), rv_of(o));
}
static void on_delete(void *ctx, const cJSON *o)
{
	char key[128];
	log_line(ctx, "delete %s %s%s", kube_object_key(o, key, sizeof(key)), rv_of(o), "");
}

static int log_count(struct log *l)
{
	pthread_mutex_lock(&l->mu);
	int n = l->n;
	pthread_mutex_unlock(&l->mu);
	return n;
}

/* Polls until the log holds n lines (generous deadline; not a timing assertion). */
static void wait_lines(struct log *l, int n)
{
	for (int i = 0; i < 5000 && log_count(l) < n; i++)
		usleep(2000);
	assert_int_equal(log_count(l), n);
}

static void assert_log(struct log *l, const char *const *want, int n)
{
	wait_lines(l, n);
	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < n; i++) {
		if (strcmp(l->lines[i], want[i]) != 0)
			print_error("line %d: got \"%s\" want \"%s\"\n", i, l->lines[i], want[i]);
		assert_string_equal(l->lines[i], want[i]);
	}
	pthread_mutex_unlock(&l->mu);
}

/* ---------- fixture ---------- */

struct env {
	struct fake_apiserver *fs;
	struct kube_client *c;
	struct kube_informer *inf;
	struct log log;
};

static int node_index(const cJSON *obj, const char **out, int max, void *u)
{
	(void)u;
	const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "nodeName");
	if (max < 1 || !cJSON_IsString(n))
		return 0;
	out[0] = n->valuestring;
	return 1;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	pthread_mutex_init(&e->log.mu, NULL);
	e->fs = fake_apiserver_start(false);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	assert_int_equal(kube_client_new(&cfg, &e->c, NULL), 0);
	kube_client_set_max_retries(e->c, 0);
	struct kube_informer_opts o = {.group = "", .version = "v1", .resource = "pods"};
	assert_int_equal(kube_informer_new(e->c, &o, &e->inf), 0);
	struct kube_informer_handlers h = {on_add, on_update, on_delete, &e->log};
	kube_informer_add_handlers(e->inf, &h);
	assert_int_equal(kube_informer_add_index(e->inf, "node", node_index, NULL), 0);
	assert_int_equal(kube_informer_add_index(e->inf, "node", node_index, NULL), -1);
	kube_informer_set_backoff(e->inf, 0.01, 0.05);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	kube_client_free(e->c);
	fake_apiserver_stop(e->fs);
	pthread_mutex_destroy(&e->log.mu);
	free(e);
	return 0;
}

#define POD(name, rv, node) \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"resourceVersion\":\"" rv \
	"\"},\"spec\":{\"nodeName\":\"" node "\"}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define LIST(rv, items) "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\"},\"items\":[" items "]}"

static const char *const HANG[] = {""};

static void idle_watch(struct env *e)
{
	/* fallback: any later watch just hangs until stopped */
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1", 0, HANG, 0, 0, FAKE_END_HANG);
}

static void count_obj(const cJSON *o, void *u)
{
	(void)o;
	(*(int *)u)++;
}

static void test_list_watch_handlers_and_store(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     LIST("10", POD("a", "1", "n1") "," POD("b", "2", "n1")));
	const char *chunks[] = {
		EV("MODIFIED", POD("a", "11", "n2")) EV("ADDED", POD("c", "12", "n2")),
		EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"12\"}}"),
		EV("DELETED", POD("b", "13", "n1")),
	};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&allowWatchBookmarks=true", 1,
			      chunks, 3, 1, FAKE_END_HANG);
	idle_watch(e);
	assert_false(kube_informer_has_synced(e->inf));
	assert_int_equal(kube_informer_start(e->inf), 0);
	assert_int_equal(kube_informer_start(e->inf), -1);
	assert_true(kube_informer_wait_for_sync(e->inf, 5000));
	assert_true(kube_informer_has_synced(e->inf));
	const char *want[] = {"add ns/a 1", "add ns/b 2", "update ns/a 1->11", "add ns/c 12", "delete ns/b 13"};
	assert_log(&e->log, want, 5);

	assert_int_equal(kube_store_len(e->inf), 2);
	cJSON *a = kube_store_get(e->inf, "ns/a");
	assert_string_equal(rv_of(a), "11");
	cJSON_Delete(a);
	assert_null(kube_store_get(e->inf, "ns/b"));
	cJSON *list = kube_store_list(e->inf);
	assert_int_equal(cJSON_GetArraySize(list), 2);
	cJSON_Delete(list);
	cJSON *on_n2 = NULL, *on_n1 = NULL;
	assert_int_equal(kube_store_by_index(e->inf, "node", "n2", &on_n2), 0);
	assert_int_equal(cJSON_GetArraySize(on_n2), 2);   /* a moved to n2, c added there */
	assert_int_equal(kube_store_by_index(e->inf, "node", "n1", &on_n1), 0);
	assert_int_equal(cJSON_GetArraySize(on_n1), 0);   /* b deleted, a moved away */
	cJSON_Delete(on_n2);
	cJSON_Delete(on_n1);
	assert_int_equal(kube_store_by_index(e->inf, "nope", "n1", &on_n1), -1);
	/* the same through the callback variant (no copies) */
	int seen = 0;
	assert_int_equal(kube_store_by_index_with(e->inf, "node", "n2", count_obj, &seen), 0);
	assert_int_equal(seen, 2);
	seen = 0;
	assert_int_equal(kube_store_by_index_with(e->inf, "node", "n1", count_obj, &seen), 0);
	assert_int_equal(seen, 0);
	assert_int_equal(kube_store_by_index_with(e->inf, "nope", "n1", count_obj, &seen), -1);
	assert_int_equal(kube_informer_list_count(e->inf), 1);
}

static void test_resume_after_drop(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("10", POD("a", "1", "n1")));
	/* first watch: one event, then the connection dies in the middle of the next one */
	const char *w1[] = {EV("MODIFIED", POD("a", "11", "n1")) "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"meta"};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, w1, 1, 0, FAKE_END_ABORT);
	/* the resumed watch must start after 11 and gets the event again in full */
	const char *w2[] = {EV("ADDED", POD("b", "12", "n1")) EV("MODIFIED", POD("a", "13", "n1"))};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=11&", 1, w2, 1, 0, FAKE_END_CLEAN);
	/* a normal close: resume from 13 */
	const char *w3[] = {EV("DELETED", POD("a", "14", "n1"))};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=13&", 1, w3, 1, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {"add ns/a 1", "update ns/a 1->11", "add ns/b 12", "update ns/a 11->13", "delete ns/a 14"};
	assert_log(&e->log, want, 5);
	assert_int_equal(kube_informer_list_count(e->inf), 1);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=11&"), 1);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=13&"), 1);
	assert_int_equal(kube_store_len(e->inf), 1);
}

static void test_relist_on_410(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     LIST("10", POD("a", "1", "n1") "," POD("b", "2", "n1") "," POD("keep", "3", "n1")));
	const char *w1[] = {EV("ERROR", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
				      "\"message\":\"too old resource version: 10 (50)\",\"reason\":\"Expired\",\"code\":410}")};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, w1, 1, 0, FAKE_END_CLEAN);
	/* relist: a changed, b gone while we were not watching, c new, keep unchanged */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     LIST("60", POD("a", "55", "n1") "," POD("keep", "3", "n1") "," POD("c", "56", "n1")));
	/* the watch after the relist is rejected with HTTP 410 -> relist again */
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=60&", 1, 410, NULL,
			     "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Gone\",\"code\":410}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("70", POD("keep", "3", "n1")));
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=70&", 1, HANG, 0, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {
		"add ns/a 1", "add ns/b 2", "add ns/keep 3",
		"update ns/a 1->55", "add ns/c 56", "delete ns/b 2",
		"delete ns/a 55", "delete ns/c 56",
	};
	assert_log(&e->log, want, 8);
	for (int i = 0; i < 5000 && fake_apiserver_count(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=70&") == 0; i++)
		usleep(2000);
	assert_int_equal(kube_informer_list_count(e->inf), 3);
	assert_int_equal(kube_store_len(e->inf), 1);
	cJSON *k = kube_store_get(e->inf, "ns/keep");
	assert_non_null(k);
	cJSON_Delete(k);
	/* lists are consistent reads (no resourceVersion=0) */
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/pods?limit=500");
	assert_null(strstr(r->path, "resourceVersion"));
	fake_request_free(r);
}

static void test_list_failure_backoff_and_stop(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 2, 500, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"InternalError\",\"code\":500}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("5", ""));
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	assert_true(kube_informer_wait_for_sync(e->inf, 5000));
	assert_int_equal(kube_informer_list_count(e->inf), 3);
	assert_int_equal(kube_store_len(e->inf), 0);
	for (int i = 0; i < 5000 && kube_informer_watch_count(e->inf) == 0; i++)
		usleep(2000);
	/* stop while the watch hangs: returns (joins) without waiting for the server */
	kube_informer_stop(e->inf);
	kube_informer_stop(e->inf);
	assert_int_equal(log_count(&e->log), 0);
}

static void test_wait_for_sync_times_out(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 0, 403, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"code\":403}");
	assert_int_equal(kube_informer_start(e->inf), 0);
	assert_false(kube_informer_wait_for_sync(e->inf, 50));
	assert_false(kube_informer_has_synced(e->inf));
}

static void get_rv(const cJSON *o, void *u) { snprintf(u, 16, "%s", o ? rv_of(o) : "none"); }

static void test_resync_and_with_readers(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	struct kube_informer_opts o = {.group = "", .version = "v1", .resource = "pods", .ns = "ns", .resync_seconds = 1,
				       .label_selector = "app=web"};
	assert_int_equal(kube_informer_new(e->c, &o, &e->inf), 0);
	struct kube_informer_handlers h = {on_add, on_update, on_delete, &e->log};
	kube_informer_add_handlers(e->inf, &h);
	fake_apiserver_reply(e->fs, "GET", "/api/v1/namespaces/ns/pods?limit=500&labelSelector=app%3Dweb", 1, 200, NULL,
			     LIST("10", POD("a", "1", "n1")));
	/* a bookmark after the resync period gives the informer thread a chance to resync */
	const char *w[] = {EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"20\"}}")};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=10&", 1, w, 1, 1100, FAKE_END_HANG);
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1", 0, HANG, 0, 0, FAKE_END_HANG);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {"add ns/a 1", "update ns/a 1->1"};
	assert_log(&e->log, want, 2);
	int n = 0;
	kube_store_list_with(e->inf, count_obj, &n);
	assert_int_equal(n, 1);
	char rv[16];
	kube_store_get_with(e->inf, "ns/a", get_rv, rv);
	assert_string_equal(rv, "1");
	kube_store_get_with(e->inf, "ns/zz", get_rv, rv);
	assert_string_equal(rv, "none");
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1");
	assert_non_null(strstr(r->path, "timeoutSeconds=1"));
	assert_non_null(strstr(r->path, "labelSelector=app%3Dweb"));
	fake_request_free(r);
}

static void test_object_key(void **state)
{
	(void)state;
	static const struct { const char *obj; const char *want; } cases[] = {
		{"{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"}}", "ns/a"},
		{"{\"metadata\":{\"name\":\"node-1\"}}", "node-1"},
		{"{\"metadata\":{\"name\":\"a\",\"namespace\":\"\"}}", "a"},
		{"{\"metadata\":{\"namespace\":\"ns\"}}", NULL},
		{"{}", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *o = cJSON_Parse(cases[i].obj);
		char buf[64];
		char *k = kube_object_key(o, buf, sizeof(buf));
		if (cases[i].want)
			assert_string_equal(k, cases[i].want);
		else
			assert_null(k);
		cJSON_Delete(o);
	}
	cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"long-name\",\"namespace\":\"ns\"}}");
	char small[4];
	assert_null(kube_object_key(o, small, sizeof(small)));
	cJSON_Delete(o);
}

/* The list goes into the store page by page; the watch starts from the first page's RV; a
 * listing that starts over (expired continue token) forgets what its first pages held, so an
 * object only they listed is deleted. */
static void test_paged_list_restart(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500&continue=", 1, 410, NULL,
			     "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"continue expired\",\"code\":410}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"c1\"},\"items\":[" POD("x", "1", "n1") "]}");
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods", 1, 200, NULL, LIST("20", POD("a", "2", "n1")));
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=20&", 1, HANG, 0, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	assert_true(kube_informer_wait_for_sync(e->inf, 5000));
	const char *want[] = {"add ns/x 1", "add ns/a 2", "delete ns/x 1"};
	assert_log(&e->log, want, 3);
	assert_int_equal(kube_store_len(e->inf), 1);
	cJSON *on_n1 = NULL;
	assert_int_equal(kube_store_by_index(e->inf, "node", "n1", &on_n1), 0);
	assert_int_equal(cJSON_GetArraySize(on_n1), 1);
	cJSON_Delete(on_n1);
	for (int i = 0; i < 5000 && fake_apiserver_count(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=20&") < 1; i++)
		usleep(1000);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=20&"), 1);
	assert_int_equal(kube_informer_list_count(e->inf), 1);
}

/* The transform: what kube_transform_strip_managed_fields leaves of each object. */
static void test_strip_managed_fields(void **state)
{
	(void)state;
	static const struct { const char *in, *want; bool changed; } cases[] = {
		{ "{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":\"kubectl\"}]},\"spec\":{}}",
		  "{\"metadata\":{\"name\":\"a\"},\"spec\":{}}", true },
		{ "{\"metadata\":{\"name\":\"a\"}}", "{\"metadata\":{\"name\":\"a\"}}", false },
		{ "{\"spec\":{\"managedFields\":1}}", "{\"spec\":{\"managedFields\":1}}", false }, /* only metadata's */
		{ "{\"metadata\":5}", "{\"metadata\":5}", false },
		{ "[]", "[]", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *o = cJSON_Parse(cases[i].in);
		assert_non_null(o);
		assert_int_equal(kube_transform_strip_managed_fields(o, NULL), cases[i].changed);
		char *got = cJSON_PrintUnformatted(o);
		assert_string_equal(got, cases[i].want);
		free(got);
		cJSON_Delete(o);
	}
}

/* Handlers of the text store test: every object they see must lack managedFields. */
static void no_mf_add(void *ctx, const cJSON *o)
{
	if (cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "managedFields"))
		(*(int *)ctx)++;
}
static void no_mf_update(void *ctx, const cJSON *old, const cJSON *o)
{
	no_mf_add(ctx, old);
	no_mf_add(ctx, o);
}

/* Handlers that ask for the store's text of what they are given (kube_informer_text_of). */
struct text_probe { struct kube_informer **inf; int new_ok, new_bad, old_null, old_bad; };
static void probe_check(struct text_probe *tp, const cJSON *o)
{
	struct kube_text *t = kube_informer_text_of(*tp->inf, o);
	char *printed = cJSON_PrintUnformatted(o);
	if (t && strcmp(t->s, printed) == 0 && t->len == strlen(printed))
		tp->new_ok++;
	else
		tp->new_bad++;
	free(printed);
	kube_text_unref(t);
}
static void probe_add(void *ctx, const cJSON *o) { probe_check(ctx, o); }
/* An old or deleted object has no text to share. */
static void probe_none(void *ctx, const cJSON *o)
{
	struct text_probe *tp = ctx;
	struct kube_text *t = kube_informer_text_of(*tp->inf, o);
	if (t)
		tp->old_bad++;
	else
		tp->old_null++;
	kube_text_unref(t);
}
static void probe_update(void *ctx, const cJSON *old, const cJSON *o)
{
	probe_none(ctx, old);
	probe_check(ctx, o);
}

#define POD_MF(name, rv, node) \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"resourceVersion\":\"" rv \
	"\",\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:spec\":{}}}]},\"spec\":{\"nodeName\":\"" node "\"}}"

/* The store holds each object as its compact text, transformed; reads parse it back; indexes
 * follow updates and deletes without the old tree. */
static void test_text_store_and_transform(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	struct kube_informer_opts o = {.group = "", .version = "v1", .resource = "pods"};
	assert_int_equal(kube_informer_new(e->c, &o, &e->inf), 0);
	int seen_mf = 0;
	kube_informer_add_handlers(e->inf, &(struct kube_informer_handlers){on_add, on_update, on_delete, &e->log});
	kube_informer_add_handlers(e->inf, &(struct kube_informer_handlers){no_mf_add, no_mf_update, no_mf_add, &seen_mf});
	struct text_probe tp = { .inf = &e->inf };
	kube_informer_add_handlers(e->inf, &(struct kube_informer_handlers){probe_add, probe_update, probe_none, &tp});
	assert_int_equal(kube_informer_add_index(e->inf, "node", node_index, NULL), 0);
	kube_informer_set_transform(e->inf, kube_transform_strip_managed_fields, NULL);
	kube_informer_set_backoff(e->inf, 0.01, 0.05);
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL,
			     LIST("10", POD_MF("a", "1", "n1") "," POD_MF("b", "2", "n1")));
	const char *chunks[] = {
		EV("MODIFIED", POD_MF("a", "11", "n2")) EV("DELETED", POD_MF("b", "12", "n1"))
			EV("ADDED", POD_MF("c", "13", "n2")),
	};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, chunks, 1, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {"add ns/a 1", "add ns/b 2", "update ns/a 1->11", "delete ns/b 12", "add ns/c 13"};
	assert_log(&e->log, want, 5);
	assert_int_equal(seen_mf, 0);
	/* the new object of every add and update has the stored text; old and deleted ones none */
	assert_int_equal(tp.new_ok, 4);
	assert_int_equal(tp.new_bad, 0);
	assert_int_equal(tp.old_null, 2);
	assert_int_equal(tp.old_bad, 0);
	assert_null(kube_informer_text_of(e->inf, NULL));

	static const struct { const char *key, *json; } stored[] = {
		{ "ns/a", "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"11\"},"
			  "\"spec\":{\"nodeName\":\"n2\"}}" },
		{ "ns/b", NULL },
		{ "ns/c", "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"resourceVersion\":\"13\"},"
			  "\"spec\":{\"nodeName\":\"n2\"}}" },
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof(stored) / sizeof(stored[0]); i++) {
		size_t len = 99;
		char *js = kube_store_get_json(e->inf, stored[i].key, &len);
		if (!stored[i].json) {
			assert_null(js);
			assert_int_equal(len, 0);
			continue;
		}
		assert_string_equal(js, stored[i].json);
		assert_int_equal(len, strlen(stored[i].json));
		total += len;
		cJSON *t = kube_store_get(e->inf, stored[i].key);
		char *printed = cJSON_PrintUnformatted(t);
		assert_string_equal(printed, stored[i].json);
		free(printed);
		cJSON_Delete(t);
		free(js);
	}
	assert_int_equal(kube_store_bytes(e->inf), total);
	cJSON *on_n1 = NULL, *on_n2 = NULL;
	assert_int_equal(kube_store_by_index(e->inf, "node", "n1", &on_n1), 0);
	assert_int_equal(kube_store_by_index(e->inf, "node", "n2", &on_n2), 0);
	assert_int_equal(cJSON_GetArraySize(on_n1), 0);
	assert_int_equal(cJSON_GetArraySize(on_n2), 2);
	cJSON_Delete(on_n1);
	cJSON_Delete(on_n2);
}

/* A handler set that takes the old object on demand: it gets NULL and asks kube_informer_old. */
struct lazy_log { struct kube_informer **inf; struct log *log; int null_old, old_text_same, old_text_null, old_text_bad; };
static void lazy_update(void *ctx, const cJSON *old, const cJSON *o)
{
	struct lazy_log *ll = ctx;
	if (!old)
		ll->null_old++;
	char key[128];
	/* kube_informer_old_text: the previous object's stored text (what kube_informer_old parses),
	 * NULL on a resync; counted here, asserted on the test's thread */
	struct kube_text *ot = kube_informer_old_text(*ll->inf, o);
	const cJSON *prev = kube_informer_old(*ll->inf, o);
	if (!ot) {
		ll->old_text_null += prev == o ? 1 : 0;
		ll->old_text_bad += prev == o ? 0 : 1;
	} else {
		char *printed = cJSON_PrintUnformatted(prev);
		cJSON *reparsed = cJSON_ParseWithLength(ot->s, ot->len);
		char *again = cJSON_PrintUnformatted(reparsed);
		bool same = prev != o && printed && again && strcmp(printed, again) == 0;
		ll->old_text_same += same ? 1 : 0;
		ll->old_text_bad += same ? 0 : 1;
		free(printed);
		free(again);
		cJSON_Delete(reparsed);
		kube_text_unref(ot);
	}
	struct kube_text *none = kube_informer_old_text(*ll->inf, NULL);
	ll->old_text_bad += none ? 1 : 0;
	kube_text_unref(none);
	log_line(ll->log, "lazy %s %s->%s", kube_object_key(o, key, sizeof(key)), rv_of(prev), rv_of(o));
}

/* Watched objects the transform leaves alone are stored as the bytes the server sent (here with
 * spaces and a 1.50 cJSON would print as 1.5); the old object is parsed for the handler sets
 * that want it up front, and only on request for an on-demand set (and is the new one on a
 * resync). */
static void test_verbatim_text_and_old_on_demand(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	struct kube_informer_opts o = {.group = "", .version = "v1", .resource = "pods", .resync_seconds = 1};
	assert_int_equal(kube_informer_new(e->c, &o, &e->inf), 0);
	struct log lazy = {0};
	pthread_mutex_init(&lazy.mu, NULL);
	struct lazy_log ll = { .inf = &e->inf, .log = &lazy };
	kube_informer_add_handlers(e->inf, &(struct kube_informer_handlers){on_add, on_update, on_delete, &e->log});
	kube_informer_add_handlers_old_on_demand(e->inf, &(struct kube_informer_handlers){NULL, lazy_update, NULL, &ll});
	kube_informer_set_transform(e->inf, kube_transform_strip_managed_fields, NULL);
	kube_informer_set_backoff(e->inf, 0.01, 0.05);
#define RAW_A "{\"kind\":\"Pod\", \"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"11\"},\"spec\":{\"x\":1.50}}"
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("10", POD("a", "1", "n1")));
	const char *chunks[] = { EV("MODIFIED", RAW_A) EV("MODIFIED", POD_MF("a", "12", "n1")) };
	/* the bookmark after the resync period lets the informer resync */
	const char *later[] = { EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"20\"}}") };
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, chunks, 1, 0, FAKE_END_CLEAN);
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=12&", 1, later, 1, 1100, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {"add ns/a 1", "update ns/a 1->11", "update ns/a 11->12", "update ns/a 12->12"};
	assert_log(&e->log, want, 4);
	const char *want_lazy[] = {"lazy ns/a 1->11", "lazy ns/a 11->12", "lazy ns/a 12->12"};
	assert_log(&lazy, want_lazy, 3);
	assert_int_equal(ll.null_old, 3);
	assert_int_equal(ll.old_text_same, 2);
	assert_int_equal(ll.old_text_null, 1);
	assert_int_equal(ll.old_text_bad, 0);
	kube_informer_stop(e->inf);
	/* the last event had managedFields: stored as the print without them */
	char *js = kube_store_get_json(e->inf, "ns/a", NULL);
	assert_non_null(js);
	assert_null(strstr(js, "managedFields"));
	assert_string_equal(js, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"12\"},"
				"\"spec\":{\"nodeName\":\"n1\"}}");
	free(js);
	pthread_mutex_destroy(&lazy.mu);
}

static void test_verbatim_text(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("10", ""));
	const char *chunks[] = { EV("ADDED", RAW_A) };
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, chunks, 1, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {"add ns/a 11"};
	assert_log(&e->log, want, 1);
	size_t len = 0;
	char *js = kube_store_get_json(e->inf, "ns/a", &len);
	assert_string_equal(js, RAW_A);   /* the server's bytes, spaces and 1.50 included */
	assert_int_equal(len, strlen(RAW_A));
	free(js);
	cJSON *t = kube_store_get(e->inf, "ns/a");
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "spec"), "x")->valuedouble == 1.5);
	cJSON_Delete(t);
}


/* ---------- the text hook (kube_informer_add_handlers_with_text) ---------- */

/* Counted on the informer thread, asserted on the test's (cmocka asserts only there). */
struct text_hook { struct kube_informer **inf; struct log *log; int hooks, resync_updates, bad_text, no_text; };

static const char *const hook_name[] = { "metadata", "name", NULL };
static const char *const hook_rv[] = { "metadata", "resourceVersion", NULL };
static const char *const hook_x[] = { "spec", "x", NULL };
static const char *const *const hook_paths[] = { hook_name, hook_rv, hook_x };

/* Takes the update when spec.x is "take" (and checks the text is the stored one and the members
 * point into it). */
static bool hook_text(void *ctx, struct kube_text *t, const struct kube_json_member *m)
{
	struct text_hook *th = ctx;
	th->hooks++;
	for (int i = 0; i < 3; i++)
		if (m[i].val.p && (m[i].val.p < t->s || m[i].val.p + m[i].val.len > t->s + t->len))
			th->bad_text++;
	char key[64], rv[16];
	snprintf(key, sizeof(key), "ns/%.*s", m[0].val.p ? (int)m[0].val.len - 2 : 1, m[0].val.p ? m[0].val.p + 1 : "?");
	snprintf(rv, sizeof(rv), "%.*s", m[1].val.p ? (int)m[1].val.len - 2 : 1, m[1].val.p ? m[1].val.p + 1 : "?");
	size_t n = 0;
	char *stored = kube_store_get_json(*th->inf, key, &n);
	if (!stored || n != t->len || memcmp(stored, t->s, n) != 0)
		th->bad_text++;
	free(stored);
	bool take = m[2].val.p && m[2].val.len == 6 && memcmp(m[2].val.p, "\"take\"", 6) == 0;
	log_line(th->log, "text %s %s %s", key, rv, take ? "taken" : "declined");
	return take;
}

static void hook_update(void *ctx, const cJSON *old, const cJSON *o)
{
	struct text_hook *th = ctx;
	char key[128];
	bool resync = kube_informer_old(*th->inf, o) == o;
	if (resync)
		th->resync_updates++;
	/* the tree handed out is the stored object's (a resync's is a reader's copy) */
	struct kube_text *t = kube_informer_text_of(*th->inf, o);
	if (!t && !resync)
		th->no_text++;
	kube_text_unref(t);
	(void)old;
	log_line(th->log, "tree %s %s->%s", kube_object_key(o, key, sizeof(key)), rv_of(kube_informer_old(*th->inf, o)), rv_of(o));
}

/* Updates go to a set's text hook first (before its on_update, in set order); a declined one gets
 * on_update with the tree as before; adds, deletes and resyncs never reach the hook; watched
 * objects are stored as sent, or as the print without managedFields. */
static void test_text_hook(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	struct kube_informer_opts o = {.group = "", .version = "v1", .resource = "pods", .resync_seconds = 1};
	assert_int_equal(kube_informer_new(e->c, &o, &e->inf), 0);
	struct text_hook th = { .inf = &e->inf, .log = &e->log };
	kube_informer_add_handlers(e->inf, &(struct kube_informer_handlers){on_add, on_update, on_delete, &e->log});
	kube_informer_add_handlers_with_text(e->inf, &(struct kube_informer_handlers){NULL, hook_update, NULL, &th}, hook_text,
					     hook_paths, 3);
	kube_informer_set_transform(e->inf, kube_transform_strip_managed_fields, NULL);
	kube_informer_set_backoff(e->inf, 0.01, 0.05);
#define TAKE_A(rv) "{\"kind\":\"Pod\", \"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"x\":\"take\"}}"
#define MF_TAKE_A "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"13\",\"managedFields\":[{}]},\"spec\":{\"x\":\"take\"}}"
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("10", POD("a", "1", "n1")));
	const char *chunks[] = { EV("MODIFIED", TAKE_A("11")) EV("MODIFIED", POD("a", "12", "n1")) EV("MODIFIED", MF_TAKE_A)
				 EV("ADDED", POD("b", "14", "n1")) EV("DELETED", POD("b", "15", "n1")) };
	const char *later[] = { EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"20\"}}") };
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, chunks, 1, 0, FAKE_END_CLEAN);
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=15&", 1, later, 1, 1100, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = {
		"add ns/a 1",
		"update ns/a 1->11", "text ns/a 11 taken",
		"update ns/a 11->12", "text ns/a 12 declined", "tree ns/a 11->12",
		"update ns/a 12->13", "text ns/a 13 taken",
		"add ns/b 14", "delete ns/b 15",
		"update ns/a 13->13", "tree ns/a 13->13", /* the resync: no hook */
	};
	assert_log(&e->log, want, 12);
	kube_informer_stop(e->inf);
	assert_int_equal(th.hooks, 3);
	assert_int_equal(th.resync_updates, 1);
	assert_int_equal(th.bad_text, 0);
	assert_int_equal(th.no_text, 0);
	/* a watched object is kept as the server sent it (spacing and all) unless the transform
	 * changed it */
	char *js = kube_store_get_json(e->inf, "ns/a", NULL);
	assert_string_equal(js, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"13\"},"
				"\"spec\":{\"x\":\"take\"}}");
	free(js);
	assert_int_equal(kube_store_len(e->inf), 1);
}

/* Objects the text path cannot key from their bytes (an escaped name, no name) take the tree's
 * way: the same store and handlers as before. */
static void test_text_path_falls_back(void **state)
{
	struct env *e = *state;
	fake_apiserver_reply(e->fs, "GET", "/api/v1/pods?limit=500", 1, 200, NULL, LIST("10", ""));
	const char *chunks[] = { EV("ADDED", "{\"metadata\":{\"name\":\"\\u0061b\",\"namespace\":\"ns\",\"resourceVersion\":\"11\"}}")
				 EV("ADDED", "{\"metadata\":{\"namespace\":\"ns\",\"resourceVersion\":\"12\"}}")
				 EV("ADDED", "{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"13\"}}") };
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1&resourceVersion=10&", 1, chunks, 1, 0, FAKE_END_HANG);
	idle_watch(e);
	assert_int_equal(kube_informer_start(e->inf), 0);
	const char *want[] = { "add ns/ab 11", "add c 13" };
	assert_log(&e->log, want, 2);
	kube_informer_stop(e->inf);
	char *js = kube_store_get_json(e->inf, "ns/ab", NULL);
	assert_string_equal(js, "{\"metadata\":{\"name\":\"\\u0061b\",\"namespace\":\"ns\",\"resourceVersion\":\"11\"}}");
	free(js);
	assert_int_equal(kube_store_len(e->inf), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object_key),
		cmocka_unit_test(test_strip_managed_fields),
		cmocka_unit_test_setup_teardown(test_verbatim_text_and_old_on_demand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbatim_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_path_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paged_list_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_store_and_transform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_watch_handlers_and_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_on_410, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_failure_backoff_and_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_for_sync_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync_and_with_readers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
