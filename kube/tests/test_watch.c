/* Tests for kube/watch.c: incremental decoding across chunk boundaries and stream endings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/watch.h"
#include "kube/tests/fake_apiserver.h"

struct seen {
	int n;
	enum kube_watch_event_type types[64];
	char names[64][32];
	int stop_after;   /* > 0: ask to stop after this many events */
};

static int record(void *ctx, enum kube_watch_event_type t, cJSON *obj)
{
	struct seen *s = ctx;
	if (s->n < 64) {
		s->types[s->n] = t;
		const cJSON *meta = cJSON_GetObjectItem(obj, "metadata");
		const cJSON *name = cJSON_GetObjectItem(meta, "name");
		const cJSON *rv = cJSON_GetObjectItem(meta, "resourceVersion");
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s",
			 cJSON_IsString(name) ? name->valuestring : cJSON_IsString(rv) ? rv->valuestring : "-");
	}
	s->n++;
	cJSON_Delete(obj);
	return s->stop_after > 0 && s->n >= s->stop_after;
}

static const char STREAM[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"},\"spec\":{\"x\":\"line\\nbreak\"}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"12\"}}}\r\n"
	"\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"15\"}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"16\"}}}\n";

static void check_stream_events(const struct seen *s)
{
	assert_int_equal(s->n, 4);
	assert_int_equal(s->types[0], KUBE_WATCH_ADDED);
	assert_string_equal(s->names[0], "a");
	assert_int_equal(s->types[1], KUBE_WATCH_MODIFIED);
	assert_string_equal(s->names[1], "b");
	assert_int_equal(s->types[2], KUBE_WATCH_BOOKMARK);
	assert_string_equal(s->names[2], "15");
	assert_int_equal(s->types[3], KUBE_WATCH_DELETED);
	assert_string_equal(s->names[3], "a");
}

/* Every split of the stream into three feeds decodes to the same events. */
static void test_decoder_all_splits(void **state)
{
	(void)state;
	size_t len = strlen(STREAM);
	for (size_t i = 0; i <= len; i += 3)
		for (size_t j = i; j <= len; j += 7) {
			struct kube_watch_decoder *d = kube_watch_decoder_new();
			struct seen s = {0};
			assert_int_equal(kube_watch_decoder_feed(d, STREAM, i, record, &s, NULL), 0);
			assert_int_equal(kube_watch_decoder_feed(d, STREAM + i, j - i, record, &s, NULL), 0);
			assert_int_equal(kube_watch_decoder_feed(d, STREAM + j, len - j, record, &s, NULL), 0);
			check_stream_events(&s);
			assert_int_equal(kube_watch_decoder_pending(d), 0);
			kube_watch_decoder_free(d);
		}
}

static void test_decoder_byte_at_a_time_and_pending(void **state)
{
	(void)state;
	struct kube_watch_decoder *d = kube_watch_decoder_new();
	struct seen s = {0};
	size_t len = strlen(STREAM);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(kube_watch_decoder_feed(d, STREAM + i, 1, record, &s, NULL), 0);
	check_stream_events(&s);
	/* a partial event stays pending until its newline arrives */
	const char *part = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"z\"}}}";
	assert_int_equal(kube_watch_decoder_feed(d, part, strlen(part), record, &s, NULL), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(kube_watch_decoder_pending(d), strlen(part));
	assert_int_equal(kube_watch_decoder_feed(d, "\n", 1, record, &s, NULL), 0);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.names[4], "z");
	kube_watch_decoder_free(d);
}

static void test_decoder_errors_and_stop(void **state)
{
	(void)state;
	static const struct { const char *in; const char *want_err; } cases[] = {
		{"{not json}\n", "invalid JSON"},
		{"{\"type\":\"SPLIT\",\"object\":{}}\n", "unknown event type"},
		{"{\"type\":\"ADDED\"}\n", "event without object"},
		{"{\"type\":\"ADDED\",\"object\":7}\n", "event without object"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_watch_decoder *d = kube_watch_decoder_new();
		struct seen s = {0};
		char *err = NULL;
		assert_int_equal(kube_watch_decoder_feed(d, cases[i].in, strlen(cases[i].in), record, &s, &err), -1);
		assert_non_null(err);
		assert_non_null(strstr(err, cases[i].want_err));
		free(err);
		assert_int_equal(s.n, 0);
		kube_watch_decoder_free(d);
	}
	/* the callback's stop request ends the feed and leaves later events unread */
	struct kube_watch_decoder *d = kube_watch_decoder_new();
	struct seen s = {.stop_after = 2};
	assert_int_equal(kube_watch_decoder_feed(d, STREAM, strlen(STREAM), record, &s, NULL), 1);
	assert_int_equal(s.n, 2);
	kube_watch_decoder_free(d);
}


/* ---------- events as bytes (kube_watch_decoder_feed_events) ---------- */

struct rec_ev {
	int n, fast;                 /* events; of them framed without a tree */
	enum kube_watch_event_type types[16];
	char *objs[16];              /* each event's object, printed from a tree */
};

static int record_tree(void *ctx, enum kube_watch_event_type t, cJSON *obj)
{
	struct rec_ev *r = ctx;
	if (r->n < 16) {
		r->types[r->n] = t;
		r->objs[r->n] = cJSON_PrintUnformatted(obj);
	}
	r->n++;
	cJSON_Delete(obj);
	return 0;
}

static int record_ev(void *ctx, struct kube_watch_event *ev)
{
	struct rec_ev *r = ctx;
	if (r->n < 16) {
		r->types[r->n] = ev->type;
		if (ev->obj) {
			r->objs[r->n] = cJSON_PrintUnformatted(ev->obj);
		} else {
			/* framed: the bytes are the object, exactly, and parse */
			cJSON *o = cJSON_ParseWithLength(ev->json, ev->len);
			assert_non_null(o);
			assert_true(cJSON_IsObject(o));
			r->objs[r->n] = cJSON_PrintUnformatted(o);
			cJSON_Delete(o);
			r->fast++;
		}
		if (ev->json) { /* json, when given, is the object whichever way it came */
			size_t len = 0;
			assert_ptr_equal(kube_watch_event_object_json(&len), ev->json);
			assert_int_equal(len, ev->len);
		}
	}
	r->n++;
	return 0;
}

static void rec_free(struct rec_ev *r)
{
	for (int i = 0; i < r->n && i < 16; i++)
		free(r->objs[i]);
}

/* Both decoders accept and refuse the same lines, with the same events and objects; the strict
 * lines are framed without a tree, the rest go through cJSON as before. */
static void test_decoder_events_match_trees(void **state)
{
	(void)state;
	static const struct { const char *in; int rc; int events, fast; } cases[] = {
		{ STREAM, 0, 4, 4 },
		{ "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"},\"n\":[1,2.5e3,-0,true,null],"
		  "\"s\":\"\\u00e9\\\"\\\\\"}}\n", 0, 1, 1 },
		{ "{\"object\":{\"metadata\":{\"name\":\"b\"}},\"type\":\"ADDED\"}\n", 0, 1, 1 },          /* members in any order */
		{ "  {\"type\":\"DELETED\",\"object\":{}}  \r\n", 0, 1, 1 },
		{ "{\"type\":\"ADDED\",\"object\":{\"n\":01}}\n", 0, 1, 0 },                              /* only cJSON takes it */
		{ "{\"type\":\"ADDED\",\"object\":{\"s\":\"\\u0000x\"}}\n", 0, 1, 0 },
		{ "{\"typ\\u0065\":\"ADDED\",\"object\":{\"a\":1}}\n", 0, 1, 0 },                         /* an escaped key */
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":1}} trailing\n", 0, 1, 0 },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n", 0, 1, 0 },      /* always a tree */
		{ "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{\"a\":1}}\n", 0, 1, 1 },           /* the first, as cJSON */
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":1},\"object\":{\"b\":2}}\n", 0, 1, 1 },
		{ "{not json}\n", -1, 0, 0 },
		{ "{\"type\":\"SPLIT\",\"object\":{}}\n", -1, 0, 0 },
		{ "{\"type\":\"ADDED\"}\n", -1, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":7}\n", -1, 0, 0 },
		{ "{\"type\":7,\"object\":{}}\n", -1, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":[1,}}\n", -1, 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":\"unterminated}}\n", -1, 0, 0 },
		{ "[{\"type\":\"ADDED\",\"object\":{}}]\n", -1, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *in = cases[i].in;
		size_t len = strlen(in);
		struct rec_ev a = { 0 }, b = { 0 };
		char *ea = NULL, *eb = NULL;
		struct kube_watch_decoder *da = kube_watch_decoder_new(), *db = kube_watch_decoder_new();
		int rca = kube_watch_decoder_feed(da, in, len, record_tree, &a, &ea);
		/* byte by byte for the events decoder: the framing does not depend on chunks */
		int rcb = 0;
		for (size_t k = 0; k < len && rcb == 0; k++)
			rcb = kube_watch_decoder_feed_events(db, in + k, 1, record_ev, &b, &eb);
		if (rca != cases[i].rc || rcb != rca || a.n != b.n || a.n != cases[i].events || b.fast != cases[i].fast)
			fail_msg("case %zu: rc %d/%d events %d/%d fast %d", i, rca, rcb, a.n, b.n, b.fast);
		for (int k = 0; k < a.n; k++) {
			assert_int_equal(a.types[k], b.types[k]);
			assert_string_equal(a.objs[k], b.objs[k]);
		}
		assert_true((ea == NULL) == (eb == NULL));
		if (ea)
			assert_string_equal(ea, eb);
		free(ea);
		free(eb);
		rec_free(&a);
		rec_free(&b);
		kube_watch_decoder_free(da);
		kube_watch_decoder_free(db);
	}
}

/* A callee that takes the tree keeps it; the decoder frees what it leaves. */
static int take_tree(void *ctx, struct kube_watch_event *ev)
{
	cJSON **kept = ctx;
	if (ev->obj) {
		*kept = ev->obj;
		ev->obj = NULL;
	}
	return 0;
}

static void test_decoder_events_take_tree(void **state)
{
	(void)state;
	const char *line = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500}}\n";
	struct kube_watch_decoder *d = kube_watch_decoder_new();
	cJSON *kept = NULL;
	assert_int_equal(kube_watch_decoder_feed_events(d, line, strlen(line), take_tree, &kept, NULL), 0);
	assert_non_null(kept);
	assert_int_equal(cJSON_GetObjectItem(kept, "code")->valueint, 500);
	cJSON_Delete(kept);
	kube_watch_decoder_free(d);
}

/* ---------- against the fake server ---------- */

struct env { struct fake_apiserver *fs; struct kube_client *c; };

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->fs = fake_apiserver_start(false);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	assert_int_equal(kube_client_new(&cfg, &e->c, NULL), 0);
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

static struct kube_watch *new_watch(struct env *e, const char *rv)
{
	struct kube_watch_opts o = {
		.path = "/api/v1/namespaces/ns/pods", .resource_version = rv,
		.label_selector = "app=web", .field_selector = "spec.nodeName=n1", .timeout_seconds = 30,
	};
	struct kube_watch *w = NULL;
	assert_int_equal(kube_watch_new(e->c, &o, &w), 0);
	return w;
}

static void test_watch_chunks_and_query(void **state)
{
	struct env *e = *state;
	/* chunks cut inside events and holding several events */
	size_t len = strlen(STREAM);
	char *c1 = strndup(STREAM, 30), *c2 = strndup(STREAM + 30, 150), *c3 = strdup(STREAM + 180);
	assert_true(len > 180);
	const char *chunks[] = {c1, c2, c3};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1", 1, chunks, 3, 5, FAKE_END_CLEAN);
	struct kube_watch *w = new_watch(e, "10");
	struct seen s = {0};
	struct kube_error err;
	assert_int_equal(kube_watch_run(w, record, &s, &err), KUBE_WATCH_END_CLOSED);
	check_stream_events(&s);
	assert_string_equal(kube_watch_resource_version(w), "16");
	assert_int_equal(kube_watch_event_count(w), 4);
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/namespaces/ns/pods");
	assert_string_equal(r->path, "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=10&allowWatchBookmarks=true"
				     "&timeoutSeconds=30&labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1");
	fake_request_free(r);
	/* running again resumes from the last resourceVersion */
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=16", 1, NULL, 0, 0, FAKE_END_CLEAN);
	assert_int_equal(kube_watch_run(w, record, &s, &err), KUBE_WATCH_END_CLOSED);
	assert_int_equal(fake_apiserver_count(e->fs, "GET", "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=16"), 1);
	kube_watch_free(w);
	free(c1); free(c2); free(c3);
}

static void test_watch_endings(void **state)
{
	struct env *e = *state;
	static const struct {
		const char *name;
		int http_status;       /* 0 = stream the body */
		const char *body;
		enum fake_stream_end end;
		enum kube_watch_end want;
		int want_code; const char *want_reason;
		int want_events; const char *want_rv;
	} cases[] = {
		{"ERROR event 410 Expired", 0,
		 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"21\"}}}\n"
		 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		 "\"message\":\"too old resource version: 10 (20)\",\"reason\":\"Expired\",\"code\":410}}\n",
		 FAKE_END_CLEAN, KUBE_WATCH_END_EXPIRED, 410, "Expired", 2, "21"},
		{"ERROR event Gone without code", 0,
		 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"reason\":\"Gone\",\"message\":\"gone\"}}\n",
		 FAKE_END_CLEAN, KUBE_WATCH_END_EXPIRED, 410, "Gone", 1, "10"},
		{"ERROR event 500", 0,
		 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"reason\":\"InternalError\",\"message\":\"etcd\",\"code\":500}}\n",
		 FAKE_END_CLEAN, KUBE_WATCH_END_ERROR, 500, "InternalError", 1, "10"},
		{"HTTP 410", 410,
		 "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old\",\"reason\":\"Expired\",\"code\":410}",
		 FAKE_END_CLEAN, KUBE_WATCH_END_EXPIRED, 410, "Expired", 0, "10"},
		{"HTTP 403", 403,
		 "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"forbidden\",\"reason\":\"Forbidden\",\"code\":403}",
		 FAKE_END_CLEAN, KUBE_WATCH_END_ERROR, 403, "Forbidden", 0, "10"},
		{"connection dropped mid-event", 0,
		 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"21\"}}}\n"
		 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourc",
		 FAKE_END_ABORT, KUBE_WATCH_END_ERROR, 0, "", 1, "21"},
		{"escaped resourceVersion, a BOOKMARK's too", 0,
		 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\\u0032\"}}}\n"
		 "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"\\u0031\\u0033\"}}}\n",
		 FAKE_END_CLEAN, KUBE_WATCH_END_CLOSED, 0, "", 2, "13"},
		{"garbage line", 0, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"21\"}}}\nnope\n",
		 FAKE_END_CLEAN, KUBE_WATCH_END_ERROR, 200, "", 1, "21"},
	};
	/* each case with trees (kube_watch_run) and with events as bytes (kube_watch_run_events) */
	for (size_t run = 0; run < 2 * (sizeof(cases) / sizeof(cases[0])); run++) {
		size_t i = run / 2;
		bool bytes = run % 2;
		fake_apiserver_clear_routes(e->fs);
		if (cases[i].http_status)
			fake_apiserver_reply(e->fs, "GET", "/api/v1/namespaces/ns/pods", 1, cases[i].http_status, NULL, cases[i].body);
		else
			fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods", 1, &cases[i].body, 1, 0, cases[i].end);
		struct kube_watch *w = new_watch(e, "10");
		struct seen s = {0};
		struct rec_ev r = {0};
		struct kube_error err;
		enum kube_watch_end end = bytes ? kube_watch_run_events(w, record_ev, &r, &err) : kube_watch_run(w, record, &s, &err);
		if (bytes)
			s.n = r.n;
		rec_free(&r);
		print_message("case: %s%s -> %s (%d %s)\n", cases[i].name, bytes ? " (bytes)" : "", kube_watch_end_name(end),
			      err.http_code, err.reason);
		assert_int_equal(end, cases[i].want);
		assert_int_equal(err.http_code, cases[i].want_code);
		assert_string_equal(err.reason, cases[i].want_reason);
		assert_int_equal(s.n, cases[i].want_events);
		assert_string_equal(kube_watch_resource_version(w), cases[i].want_rv);
		kube_watch_free(w);
	}
}

struct stopper { struct kube_watch *w; struct fake_apiserver *fs; };
static void *stop_later(void *arg)
{
	struct stopper *st = arg;
	while (fake_apiserver_count(st->fs, "GET", "/api/v1/namespaces/ns/pods") == 0)
		usleep(1000);
	usleep(20000);
	kube_watch_stop(st->w);
	return NULL;
}

static void test_watch_stop(void **state)
{
	struct env *e = *state;
	const char *one[] = {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"21\"}}}\n"};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods", 1, one, 1, 0, FAKE_END_HANG);
	struct kube_watch *w = new_watch(e, "");
	struct stopper st = {w, e->fs};
	pthread_t th;
	pthread_create(&th, NULL, stop_later, &st);
	struct seen s = {0};
	assert_int_equal(kube_watch_run(w, record, &s, NULL), KUBE_WATCH_END_STOPPED);
	pthread_join(th, NULL);
	assert_int_equal(s.n, 1);
	assert_string_equal(kube_watch_resource_version(w), "21");
	/* stop is sticky */
	assert_int_equal(kube_watch_run(w, record, &s, NULL), KUBE_WATCH_END_STOPPED);
	kube_watch_free(w);
	/* no resourceVersion parameter when starting from "" */
	struct fake_request *r = fake_apiserver_last(e->fs, "GET", "/api/v1/namespaces/ns/pods");
	assert_null(strstr(r->path, "resourceVersion"));
	fake_request_free(r);

	/* the callback can stop the watch */
	fake_apiserver_stream(e->fs, "GET", "/api/v1/namespaces/ns/pods", 1, (const char *[]){STREAM}, 1, 0, FAKE_END_HANG);
	w = new_watch(e, "1");
	struct seen s2 = {.stop_after = 1};
	assert_int_equal(kube_watch_run(w, record, &s2, NULL), KUBE_WATCH_END_STOPPED);
	assert_int_equal(s2.n, 1);
	kube_watch_free(w);
}

static void test_watch_timeout(void **state)
{
	struct env *e = *state;
	/* the server honours timeoutSeconds=1: the stream ends after a second */
	const char *late[] = {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"30\"}}}\n"};
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1", 1, late, 1, 1100, FAKE_END_CLEAN);
	struct kube_watch_opts o = {.path = "/api/v1/pods", .resource_version = "20", .timeout_seconds = 1};
	struct kube_watch *w = NULL;
	assert_int_equal(kube_watch_new(e->c, &o, &w), 0);
	struct seen s = {0};
	struct kube_error err;
	assert_int_equal(kube_watch_run(w, record, &s, &err), KUBE_WATCH_END_TIMEOUT);
	assert_string_equal(kube_watch_resource_version(w), "30");
	/* an early close is CLOSED */
	fake_apiserver_stream(e->fs, "GET", "/api/v1/pods?watch=1", 1, NULL, 0, 0, FAKE_END_CLEAN);
	assert_int_equal(kube_watch_run(w, record, &s, &err), KUBE_WATCH_END_CLOSED);
	kube_watch_free(w);
	assert_string_equal(kube_watch_end_name(KUBE_WATCH_END_TIMEOUT), "timeout");
	assert_string_equal(kube_watch_event_type_name(KUBE_WATCH_BOOKMARK), "BOOKMARK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoder_all_splits),
		cmocka_unit_test(test_decoder_byte_at_a_time_and_pending),
		cmocka_unit_test(test_decoder_errors_and_stop),
		cmocka_unit_test(test_decoder_events_match_trees),
		cmocka_unit_test(test_decoder_events_take_tree),
		cmocka_unit_test_setup_teardown(test_watch_chunks_and_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_endings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_timeout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
