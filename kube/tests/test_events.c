/* Tests for kube/events.c: event shape, series de-duplication (create, PATCH on repeat, refresh),
 * bounded queue that never blocks the caller, flush on free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/events.h"
#include "kube/tests/fake_apiserver.h"

#define EVENTS "/apis/events.k8s.io/v1/namespaces/"

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool closed;    /* while closed, POSTs block */
	int fail_posts; /* answer the next N POSTs with fail_status */
	int fail_status;
	int patch_404;  /* answer the next N PATCHes with 404 (the Event expired) */
};

static bool event_handler(void *ctx, const struct fake_request *req, struct fake_conn *c)
{
	struct gate *g = ctx;
	pthread_mutex_lock(&g->mu);
	while (g->closed && strcmp(req->method, "POST") == 0)
		pthread_cond_wait(&g->cond, &g->mu);
	bool fail = strcmp(req->method, "POST") == 0 && g->fail_posts > 0;
	if (fail)
		g->fail_posts--;
	bool gone = strcmp(req->method, "PATCH") == 0 && g->patch_404 > 0;
	if (gone)
		g->patch_404--;
	int status = g->fail_status;
	pthread_mutex_unlock(&g->mu);
	if (fail)
		return fake_conn_reply(c, status, NULL, "{\"kind\":\"Status\",\"message\":\"no\",\"code\":0}") == 0;
	if (gone)
		return fake_conn_reply(c, 404, NULL, "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}") == 0;
	return fake_conn_reply(c, strcmp(req->method, "POST") == 0 ? 201 : 200, NULL, req->body) == 0;
}

struct env {
	struct fake_apiserver *fs;
	struct kube_client *c;
	struct kube_event_recorder *rec;
	struct gate gate;
	cJSON *pod, *node;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	pthread_mutex_init(&e->gate.mu, NULL);
	pthread_cond_init(&e->gate.cond, NULL);
	e->fs = fake_apiserver_start(false);
	fake_apiserver_handle(e->fs, NULL, EVENTS, 0, event_handler, &e->gate);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	assert_int_equal(kube_client_new(&cfg, &e->c, NULL), 0);
	kube_client_set_max_retries(e->c, 0);
	assert_int_equal(kube_event_recorder_new(e->c, "default-scheduler", "default-scheduler-host1", &e->rec), 0);
	e->pod = cJSON_Parse("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\","
			     "\"uid\":\"u-1\",\"resourceVersion\":\"42\",\"labels\":{\"a\":\"b\"}},\"spec\":{}}");
	e->node = cJSON_Parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\",\"uid\":\"u-n\"}}");
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_event_recorder_free(e->rec);
	kube_client_free(e->c);
	fake_apiserver_stop(e->fs);
	cJSON_Delete(e->pod);
	cJSON_Delete(e->node);
	pthread_mutex_destroy(&e->gate.mu);
	pthread_cond_destroy(&e->gate.cond);
	free(e);
	return 0;
}

static const char *sget(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(o, a);
	if (b)
		v = cJSON_GetObjectItem(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool matches(const char *re_s, const char *s)
{
	regex_t re;
	assert_int_equal(regcomp(&re, re_s, REG_EXTENDED | REG_NOSUB), 0);
	bool m = s && regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

static void test_event_shape(void **state)
{
	struct env *e = *state;
	kube_event_record(e->rec, e->pod, "Normal", "Scheduled", "Binding", "Successfully assigned %s/%s to %s", "shop",
			  "web-0", "n1");
	kube_event_recorder_flush(e->rec);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS "shop/events"), 1);
	struct fake_request *r = fake_apiserver_last(e->fs, "POST", EVENTS "shop/events");
	cJSON *ev = cJSON_Parse(r->body);
	fake_request_free(r);
	assert_string_equal(sget(ev, "apiVersion", NULL), "events.k8s.io/v1");
	assert_string_equal(sget(ev, "kind", NULL), "Event");
	assert_true(matches("^web-0\\.[0-9a-f]{12,}$", sget(ev, "metadata", "name")));
	assert_string_equal(sget(ev, "metadata", "namespace"), "shop");
	assert_true(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$", sget(ev, "eventTime", NULL)));
	assert_string_equal(sget(ev, "reportingController", NULL), "default-scheduler");
	assert_string_equal(sget(ev, "reportingInstance", NULL), "default-scheduler-host1");
	assert_string_equal(sget(ev, "type", NULL), "Normal");
	assert_string_equal(sget(ev, "reason", NULL), "Scheduled");
	assert_string_equal(sget(ev, "action", NULL), "Binding");
	assert_string_equal(sget(ev, "note", NULL), "Successfully assigned shop/web-0 to n1");
	static const char *const ref[][2] = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"namespace", "shop"},
					     {"name", "web-0"}, {"uid", "u-1"}, {"resourceVersion", "42"}};
	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++)
		assert_string_equal(sget(ev, "regarding", ref[i][0]), ref[i][1]);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "regarding"), "labels"));
	assert_null(cJSON_GetObjectItem(ev, "series"));
	assert_null(cJSON_GetObjectItem(ev, "related"));
	cJSON_Delete(ev);

	/* cluster-scoped regarding object: the event lives in "default"; related reference */
	kube_event_record_related(e->rec, e->node, e->pod, "Warning", "Pressure", "Checking", "%s", "x");
	kube_event_recorder_flush(e->rec);
	r = fake_apiserver_last(e->fs, "POST", EVENTS "default/events");
	assert_non_null(r);
	ev = cJSON_Parse(r->body);
	fake_request_free(r);
	assert_string_equal(sget(ev, "related", "name"), "web-0");
	assert_null(sget(ev, "regarding", "namespace"));
	cJSON_Delete(ev);

	/* long notes are truncated to 1024 bytes */
	char big[2000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "%s", big);
	kube_event_recorder_flush(e->rec);
	r = fake_apiserver_last(e->fs, "POST", EVENTS "shop/events");
	ev = cJSON_Parse(r->body);
	fake_request_free(r);
	assert_int_equal(strlen(sget(ev, "note", NULL)), 1024);
	cJSON_Delete(ev);
}

static void test_series_dedupe(void **state)
{
	struct env *e = *state;
	for (int i = 0; i < 4; i++)
		kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "0/%d nodes are available", 3);
	/* a new note for the same (type, action, reason, regarding) joins the series (client-go v1.34) */
	kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "0/%d nodes are available", 4);
	kube_event_recorder_flush(e->rec);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 1);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 2);   /* count 2 at once, count 5 on flush */
	struct fake_request *first = fake_apiserver_request(e->fs, 0);
	cJSON *created = cJSON_Parse(first->body);
	fake_request_free(first);
	assert_string_equal(sget(created, "note", NULL), "0/3 nodes are available");
	struct fake_request *p = fake_apiserver_request(e->fs, 1);
	char path[256];
	snprintf(path, sizeof(path), EVENTS "shop/events/%s", sget(created, "metadata", "name"));
	assert_string_equal(p->method, "PATCH");
	assert_string_equal(p->path, path);
	char ct[128];
	assert_string_equal(fake_request_header(p, "Content-Type", ct, sizeof(ct)), "application/strategic-merge-patch+json");
	cJSON *patch = cJSON_Parse(p->body);
	fake_request_free(p);
	assert_int_equal(cJSON_GetArraySize(patch), 1);   /* only the series changes */
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "series"), "count")->valueint, 2);
	cJSON_Delete(patch);
	p = fake_apiserver_last(e->fs, "PATCH", EVENTS);
	assert_string_equal(p->path, path);
	patch = cJSON_Parse(p->body);
	fake_request_free(p);
	const cJSON *series = cJSON_GetObjectItem(patch, "series");
	assert_int_equal(cJSON_GetObjectItem(series, "count")->valueint, 5);
	assert_true(matches("^[0-9-]+T[0-9:]+\\.[0-9]{6}Z$", sget(series, "lastObservedTime", NULL)));
	cJSON_Delete(patch);
	cJSON_Delete(created);

	struct kube_event_stats st;
	kube_event_recorder_stats(e->rec, &st);
	assert_int_equal(st.recorded, 5);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.patched, 2);
	assert_int_equal(st.dropped, 0);
	/* nothing pending: another flush sends nothing */
	kube_event_recorder_flush(e->rec);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 2);
	/* another reason, type or regarding object is another event */
	kube_event_record(e->rec, e->pod, "Warning", "Other", "Scheduling", "0/%d nodes are available", 3);
	kube_event_record(e->rec, e->pod, "Normal", "FailedScheduling", "Scheduling", "0/%d nodes are available", 3);
	kube_event_record(e->rec, e->node, "Warning", "FailedScheduling", "Scheduling", "0/%d nodes are available", 3);
	kube_event_recorder_flush(e->rec);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 4);
}

/* A burst queued while the sender waits on the server goes out in pipelines of up to 16
 * creates; a repeat of a series in the same burst waits for its create, then PATCHes it. */
static void test_burst_pipelined(void **state)
{
	struct env *e = *state;
	pthread_mutex_lock(&e->gate.mu);
	e->gate.closed = true;
	pthread_mutex_unlock(&e->gate.mu);
	kube_event_record(e->rec, e->pod, "Normal", "Scheduled", "Binding", "first");
	while (fake_apiserver_count(e->fs, "POST", EVENTS) < 1) /* the sender waits on this one */
		usleep(1000);
	cJSON *pods[20];
	for (int i = 0; i < 20; i++) {
		char text[256];
		snprintf(text, sizeof text, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p-%d\","
					    "\"namespace\":\"shop\",\"uid\":\"u-%d\"}}", i, i);
		pods[i] = cJSON_Parse(text);
	}
	for (int k = 0; k < 40; k++)
		kube_event_record(e->rec, pods[k % 20], "Normal", "Scheduled", "Binding", "to n%d", k % 20);
	pthread_mutex_lock(&e->gate.mu);
	e->gate.closed = false;
	pthread_cond_broadcast(&e->gate.cond);
	pthread_mutex_unlock(&e->gate.mu);
	kube_event_recorder_flush(e->rec);
	struct kube_event_stats st;
	kube_event_recorder_stats(e->rec, &st);
	/* pods 0..15 in one pipeline, 16..19 in the next run (cut by pod 0's repeat) */
	assert_int_equal(st.pipelined, 20);
	assert_int_equal(st.created, 21);
	assert_int_equal(st.patched, 20);   /* each second occurrence starts its series */
	assert_int_equal(st.failed, 0);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 21);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 20);
	/* each create is its pod's, in the order recorded */
	for (int i = 0; i < 20; i++) {
		struct fake_request *r = fake_apiserver_request(e->fs, 1 + i);
		char want[64];
		snprintf(want, sizeof want, "\"name\":\"p-%d\"", i);
		assert_string_equal(r->method, "POST");
		assert_non_null(strstr(r->body, want));
		fake_request_free(r);
		cJSON_Delete(pods[i]);
	}
}

/* Which fields make a repeat join the first occurrence's series (client-go's getKey: type,
 * action, reason, regarding, related; not the note). One pod per case, so cases do not meet. */
static void test_series_key_fields(void **state)
{
	struct env *e = *state;
	static const struct {
		const char *name, *type, *reason, *action, *note;
		bool other_regarding, related;
		int posts; /* after the first occurrence and this one */
	} cases[] = {
		{ "same", "Warning", "FailedScheduling", "Scheduling", "n", false, false, 1 },
		{ "other note", "Warning", "FailedScheduling", "Scheduling", "another note", false, false, 1 },
		{ "other type", "Normal", "FailedScheduling", "Scheduling", "n", false, false, 2 },
		{ "other reason", "Warning", "Preempted", "Scheduling", "n", false, false, 2 },
		{ "other action", "Warning", "FailedScheduling", "Binding", "n", false, false, 2 },
		{ "other regarding", "Warning", "FailedScheduling", "Scheduling", "n", true, false, 2 },
		{ "with related", "Warning", "FailedScheduling", "Scheduling", "n", false, true, 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char js[256];
		snprintf(js, sizeof(js), "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p-%zu\","
			 "\"namespace\":\"shop\",\"uid\":\"u-%zu\",\"resourceVersion\":\"1\"}}", i, i);
		cJSON *pod = cJSON_Parse(js);
		snprintf(js, sizeof(js), "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"q-%zu\","
			 "\"namespace\":\"shop\",\"uid\":\"v-%zu\"}}", i, i);
		cJSON *other = cJSON_Parse(js);
		int before = fake_apiserver_count(e->fs, "POST", EVENTS);
		kube_event_record(e->rec, pod, "Warning", "FailedScheduling", "Scheduling", "n");
		if (cases[i].related)
			kube_event_record_related(e->rec, pod, e->node, cases[i].type, cases[i].reason, cases[i].action, "%s",
						  cases[i].note);
		else
			kube_event_record(e->rec, cases[i].other_regarding ? other : pod, cases[i].type, cases[i].reason,
					  cases[i].action, "%s", cases[i].note);
		kube_event_recorder_flush(e->rec);
		int posts = fake_apiserver_count(e->fs, "POST", EVENTS) - before;
		if (posts != cases[i].posts)
			print_error("case %s: %d POSTs, want %d\n", cases[i].name, posts, cases[i].posts);
		assert_int_equal(posts, cases[i].posts);
		if (cases[i].posts == 1) { /* joined: the series was started with a PATCH to count 2 */
			struct fake_request *r = fake_apiserver_last(e->fs, "PATCH", EVENTS);
			assert_non_null(r);
			assert_non_null(strstr(r->path, "/events/p-"));
			assert_non_null(strstr(r->body, "\"count\":2"));
			fake_request_free(r);
		}
		cJSON_Delete(pod);
		cJSON_Delete(other);
	}
}

static void test_expired_series_is_recreated(void **state)
{
	struct env *e = *state;
	kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "x");
	kube_event_recorder_flush(e->rec);
	e->gate.patch_404 = 1;
	kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "x");
	kube_event_recorder_flush(e->rec);
	/* the PATCH found no Event: it is created again, carrying the series */
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 1);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 2);
	struct fake_request *r = fake_apiserver_last(e->fs, "POST", EVENTS);
	cJSON *ev = cJSON_Parse(r->body);
	fake_request_free(r);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "series"), "count")->valueint, 2);
	assert_string_equal(sget(ev, "note", NULL), "x");
	cJSON_Delete(ev);
	/* later PATCHes go to the new Event */
	char path[256];
	struct fake_request *post = fake_apiserver_last(e->fs, "POST", EVENTS);
	cJSON *pe = cJSON_Parse(post->body);
	snprintf(path, sizeof(path), EVENTS "shop/events/%s", sget(pe, "metadata", "name"));
	fake_request_free(post);
	cJSON_Delete(pe);
	kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "x");
	kube_event_recorder_flush(e->rec);
	r = fake_apiserver_last(e->fs, "PATCH", EVENTS);
	assert_string_equal(r->path, path);
	assert_non_null(strstr(r->body, "\"count\":3"));
	fake_request_free(r);
}

static void test_refresh_patches_counts(void **state)
{
	struct env *e = *state;
	kube_event_recorder_set_refresh_interval(e->rec, 0.05);
	for (int i = 0; i < 3; i++)
		kube_event_record(e->rec, e->pod, "Warning", "FailedScheduling", "Scheduling", "same");
	/* the third occurrence is sent by the periodic refresh, without a flush */
	for (int i = 0; i < 5000 && fake_apiserver_count(e->fs, "PATCH", EVENTS) < 2; i++)
		usleep(1000);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 2);
	struct fake_request *p = fake_apiserver_last(e->fs, "PATCH", EVENTS);
	assert_non_null(strstr(p->body, "\"count\":3"));
	fake_request_free(p);
}

static void test_bounded_queue_never_blocks(void **state)
{
	struct env *e = *state;
	kube_event_recorder_set_queue_size(e->rec, 2);
	pthread_mutex_lock(&e->gate.mu);
	e->gate.closed = true;
	pthread_mutex_unlock(&e->gate.mu);
	/* distinct reasons: distinct events (notes alone would form one series) */
	kube_event_record(e->rec, e->pod, "Normal", "R0", "A", "event %d", 0);
	/* wait until the sender is stuck in the first POST */
	for (int i = 0; i < 5000 && fake_apiserver_count(e->fs, "POST", EVENTS) == 0; i++)
		usleep(1000);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 1);
	for (int i = 1; i < 10; i++) {   /* returns at once although the server does not answer */
		char reason[16];
		snprintf(reason, sizeof(reason), "R%d", i);
		kube_event_record(e->rec, e->pod, "Normal", reason, "A", "event %d", i);
	}
	struct kube_event_stats st;
	kube_event_recorder_stats(e->rec, &st);
	assert_int_equal(st.recorded, 10);
	assert_int_equal(st.dropped, 7);
	pthread_mutex_lock(&e->gate.mu);
	e->gate.closed = false;
	pthread_cond_broadcast(&e->gate.cond);
	pthread_mutex_unlock(&e->gate.mu);
	kube_event_recorder_flush(e->rec);
	kube_event_recorder_stats(e->rec, &st);
	assert_int_equal(st.created, 3);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 3);
}

static void test_failures_counted_and_free_flushes(void **state)
{
	struct env *e = *state;
	/* a rejected event (422) is not retried */
	e->gate.fail_posts = 1;
	e->gate.fail_status = 422;
	kube_event_record(e->rec, e->pod, "Normal", "R", "A", "one");
	kube_event_recorder_flush(e->rec);
	struct kube_event_stats st;
	kube_event_recorder_stats(e->rec, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.created, 0);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 1);
	/* a server error is retried; a failed create is not cached, so the repeat is created anew */
	e->gate.fail_posts = 1;
	e->gate.fail_status = 503;
	kube_event_record(e->rec, e->pod, "Normal", "R", "A", "one");
	kube_event_recorder_flush(e->rec);
	kube_event_recorder_stats(e->rec, &st);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.failed, 1);
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 3);
	/* free flushes what is queued */
	kube_event_record(e->rec, e->node, "Normal", "R", "A", "two");
	kube_event_recorder_free(e->rec);
	e->rec = NULL;
	assert_int_equal(fake_apiserver_count(e->fs, "POST", EVENTS), 4);
	assert_int_equal(fake_apiserver_count(e->fs, "PATCH", EVENTS), 0);
	kube_event_recorder_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_event_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_dedupe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_key_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_series_is_recreated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refresh_patches_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded_queue_never_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures_counted_and_free_flushes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
