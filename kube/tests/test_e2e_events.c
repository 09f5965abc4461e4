/* test_e2e_events.c — kube/events.c end to end against the local API server (e2e/apiserver,
 * in-process on port 0): the recorder creates events.k8s.io/v1 Events naming the regarding
 * object; repeats of the same (type, reason, action, regarding) PATCH that one Event's series
 * (count 2 at once, later counts on flush) instead of creating more; other reasons create other
 * Events; cluster-scoped objects' Events land in "default"; a series whose Event was deleted on
 * the server is created again carrying its count; injected 500s on creates are retried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e/apiserver/server.h"
#include "kube/events.h"
#include "kube/rest.h"

static const char EVENTS[] = "/apis/events.k8s.io/v1/namespaces/default/events";

struct env {
	struct apis_server *srv;
	struct kube_client *c;
	struct kube_event_recorder *rec;
	cJSON *pod;
};

static cJSON *jsonf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *jsonf(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	return j;
}

static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, tok);
	return o;
}

static const char *str_at(const cJSON *o, const char *path)
{
	const cJSON *s = at(o, path);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static int int_at(const cJSON *o, const char *path)
{
	const cJSON *n = at(o, path);
	return cJSON_IsNumber(n) ? n->valueint : -1;
}

static int start(struct env *v, const struct apis_opts *o)
{
	if (apis_server_start(o, &v->srv))
		return -1;
	struct kube_config *cfg = kube_config_new(apis_server_url(v->srv));
	if (!cfg)
		return -1;
	int rc = kube_client_new(cfg, &v->c, NULL);
	kube_config_free(cfg);
	if (rc || kube_event_recorder_new(v->c, "schedkit-scheduler", "schedkit-scheduler-host1", &v->rec))
		return -1;
	cJSON *pod = jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\"},"
			   "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}");
	struct kube_error e;
	for (int i = 0; i < 50; i++) {   /* faults may be injected: retry */
		if (kube_create(v->c, "/api/v1/namespaces/default/pods", pod, &v->pod, &e) == 0 || !e.retriable)
			break;
		usleep(20000);
	}
	cJSON_Delete(pod);
	return v->pod ? 0 : -1;
}

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof *v);
	if (!v)
		return -1;
	*state = v;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	return start(v, &o);
}

static int teardown(void **state)
{
	struct env *v = *state;
	kube_event_recorder_free(v->rec);
	cJSON_Delete(v->pod);
	kube_client_free(v->c);
	apis_server_stop(v->srv);
	free(v);
	return 0;
}

static cJSON *list_events(struct kube_client *c, const char *path, const char *fs)
{
	cJSON *l = NULL;
	struct kube_error e;
	for (int i = 0; i < 50; i++) {
		if (kube_list(c, path, NULL, fs, &l, &e) == 0)
			return l;
		if (!e.retriable)
			break;
		usleep(20000);
	}
	fail_msg("list %s: %d %s", path, e.http_code, e.message);
	return NULL;
}

static const cJSON *only_item(const cJSON *l)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
	if (cJSON_GetArraySize(items) != 1)
		fail_msg("%d events, want 1", cJSON_GetArraySize(items));
	return cJSON_GetArrayItem(items, 0);
}

static void test_create_and_series(void **state)
{
	struct env *v = *state;
	kube_event_record(v->rec, v->pod, "Warning", "FailedScheduling", "Scheduling",
			  "0/%d nodes are available: %d Insufficient cpu.", 3, 3);
	kube_event_recorder_flush(v->rec);
	struct kube_event_stats st;
	kube_event_recorder_stats(v->rec, &st);
	assert_int_equal(st.recorded, 1);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.failed, 0);

	cJSON *l = list_events(v->c, EVENTS, NULL);
	const cJSON *ev = only_item(l);
	assert_string_equal(str_at(ev, "apiVersion"), "events.k8s.io/v1");
	assert_string_equal(str_at(ev, "type"), "Warning");
	assert_string_equal(str_at(ev, "reason"), "FailedScheduling");
	assert_string_equal(str_at(ev, "action"), "Scheduling");
	assert_string_equal(str_at(ev, "note"), "0/3 nodes are available: 3 Insufficient cpu.");
	assert_string_equal(str_at(ev, "reportingController"), "schedkit-scheduler");
	assert_string_equal(str_at(ev, "reportingInstance"), "schedkit-scheduler-host1");
	assert_string_equal(str_at(ev, "regarding.kind"), "Pod");
	assert_string_equal(str_at(ev, "regarding.name"), "web-1");
	assert_string_equal(str_at(ev, "regarding.namespace"), "default");
	assert_string_equal(str_at(ev, "regarding.uid"), str_at(v->pod, "metadata.uid"));
	assert_non_null(str_at(ev, "eventTime"));
	assert_null(at(ev, "series"));
	assert_int_equal(strncmp(str_at(ev, "metadata.name"), "web-1.", 6), 0);
	char name[128], rv1[32];
	snprintf(name, sizeof name, "%s", str_at(ev, "metadata.name"));
	snprintf(rv1, sizeof rv1, "%s", str_at(ev, "metadata.resourceVersion"));
	cJSON_Delete(l);

	/* a repeat (another note: the note is not part of the key) PATCHes the same Event: count 2 */
	kube_event_record(v->rec, v->pod, "Warning", "FailedScheduling", "Scheduling", "0/4 nodes are available");
	kube_event_recorder_flush(v->rec);
	l = list_events(v->c, EVENTS, NULL);
	ev = only_item(l);
	assert_string_equal(str_at(ev, "metadata.name"), name);
	assert_string_not_equal(str_at(ev, "metadata.resourceVersion"), rv1);
	assert_int_equal(int_at(ev, "series.count"), 2);
	assert_non_null(str_at(ev, "series.lastObservedTime"));
	assert_string_equal(str_at(ev, "note"), "0/3 nodes are available: 3 Insufficient cpu.");
	cJSON_Delete(l);
	kube_event_recorder_stats(v->rec, &st);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.patched, 1);

	/* three more: one PATCH on flush brings the count to 5 */
	for (int i = 0; i < 3; i++)
		kube_event_record(v->rec, v->pod, "Warning", "FailedScheduling", "Scheduling", "again %d", i);
	kube_event_recorder_flush(v->rec);
	l = list_events(v->c, EVENTS, NULL);
	ev = only_item(l);
	assert_int_equal(int_at(ev, "series.count"), 5);
	cJSON_Delete(l);
	kube_event_recorder_stats(v->rec, &st);
	assert_int_equal(st.recorded, 5);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.patched, 2);

	/* another reason is another Event; the first keeps its count */
	kube_event_record(v->rec, v->pod, "Normal", "Scheduled", "Binding", "Successfully assigned default/web-1 to n1");
	kube_event_recorder_flush(v->rec);
	l = list_events(v->c, EVENTS, "reason=Scheduled");
	ev = only_item(l);
	assert_string_equal(str_at(ev, "type"), "Normal");
	assert_null(at(ev, "series"));
	cJSON_Delete(l);
	l = list_events(v->c, EVENTS, "reason=FailedScheduling");
	assert_int_equal(int_at(only_item(l), "series.count"), 5);
	cJSON_Delete(l);

	/* the same Event through the core/v1 API (kubectl describe reads those) */
	l = list_events(v->c, "/api/v1/namespaces/default/events", "involvedObject.name=web-1,reason=Scheduled");
	ev = only_item(l);
	assert_string_equal(str_at(ev, "message"), "Successfully assigned default/web-1 to n1");
	cJSON_Delete(l);
}

static void test_cluster_scoped_and_related(void **state)
{
	struct env *v = *state;
	cJSON *node = jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"u-n1\"}}");
	kube_event_record_related(v->rec, v->pod, node, "Normal", "Preempted", "Preempting", "by %s", "other");
	kube_event_record(v->rec, node, "Normal", "NodeReady", "Watching", "node is ready");
	kube_event_recorder_flush(v->rec);
	cJSON_Delete(node);
	cJSON *l = list_events(v->c, EVENTS, "regarding.kind=Node");
	const cJSON *ev = only_item(l);
	assert_string_equal(str_at(ev, "metadata.namespace"), "default");
	assert_string_equal(str_at(ev, "regarding.name"), "n1");
	assert_null(at(ev, "regarding.namespace"));
	cJSON_Delete(l);
	l = list_events(v->c, EVENTS, "reason=Preempted");
	ev = only_item(l);
	assert_string_equal(str_at(ev, "related.kind"), "Node");
	assert_string_equal(str_at(ev, "related.name"), "n1");
	assert_string_equal(str_at(ev, "regarding.name"), "web-1");
	cJSON_Delete(l);
}

static void test_series_recreated_after_delete(void **state)
{
	struct env *v = *state;
	for (int i = 0; i < 2; i++)
		kube_event_record(v->rec, v->pod, "Warning", "BackOff", "Pulling", "back-off");
	kube_event_recorder_flush(v->rec);
	cJSON *l = list_events(v->c, EVENTS, NULL);
	const cJSON *ev = only_item(l);
	assert_int_equal(int_at(ev, "series.count"), 2);
	char path[300];
	snprintf(path, sizeof path, "%s/%s", EVENTS, str_at(ev, "metadata.name"));
	cJSON_Delete(l);
	struct kube_error e;
	assert_int_equal(kube_delete(v->c, path, &e), 0);   /* as the TTL would */

	kube_event_record(v->rec, v->pod, "Warning", "BackOff", "Pulling", "back-off");
	kube_event_recorder_flush(v->rec);
	l = list_events(v->c, EVENTS, NULL);
	ev = only_item(l);
	assert_int_equal(int_at(ev, "series.count"), 3);
	assert_string_equal(str_at(ev, "reason"), "BackOff");
	cJSON_Delete(l);
	struct kube_event_stats st;
	kube_event_recorder_stats(v->rec, &st);
	assert_int_equal(st.created, 2);
	assert_int_equal(st.failed, 0);
}

static void test_many_objects_under_faults(void **state)
{
	(void)state;
	struct env *v = calloc(1, sizeof *v);
	assert_non_null(v);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.fault_error_rate = 0.1;
	o.fault_seed = 7;
	assert_int_equal(start(v, &o), 0);
	enum { N = 40 };
	for (int i = 0; i < N; i++) {
		cJSON *p = jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\",\"namespace\":\"default\","
				 "\"uid\":\"uid-%d\"}}", i, i);
		for (int k = 0; k < 3; k++)
			kube_event_record(v->rec, p, "Normal", "Pulled", "Pulling", "pulled image %d", k);
		cJSON_Delete(p);
	}
	kube_event_recorder_flush(v->rec);
	struct kube_event_stats st;
	kube_event_recorder_stats(v->rec, &st);
	print_message("events under 10%% faults: created=%llu patched=%llu failed=%llu\n",
		      (unsigned long long)st.created, (unsigned long long)st.patched, (unsigned long long)st.failed);
	assert_int_equal(st.recorded, 3 * N);
	cJSON *l = list_events(v->c, EVENTS, "reason=Pulled");
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
	/* at most one Event per object, and every create the recorder counted is there */
	assert_int_equal(cJSON_GetArraySize(items), (int)st.created);
	assert_true(st.created >= N * 9 / 10);
	const cJSON *ev;
	int at_three = 0;
	cJSON_ArrayForEach(ev, items) {
		int c = int_at(ev, "series.count");
		assert_true(c == -1 || c == 2 || c == 3);
		at_three += c == 3;
	}
	assert_true(at_three > 0);
	cJSON_Delete(l);
	teardown((void **)&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_and_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster_scoped_and_related, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_recreated_after_delete, setup, teardown),
		cmocka_unit_test(test_many_objects_under_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
