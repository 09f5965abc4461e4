/* The scheduler's /metrics against kube-scheduler v1.34's (pkg/scheduler/metrics/metrics.go,
 * component-base's process, build-info and REST client metrics): every name schedkit exports
 * with its type, label names and buckets, in one table; then the behaviour of the metrics added
 * for issue 13: the algorithm latency only for attempts that found a host, preemption attempts
 * per PostFilter run, victims per nominated preemptor, the unschedulable-pods gauge per rejecting
 * plugin (zeroed when the pod leaves), incoming pods moved by a node event, and the process and
 * REST client metrics read at render time. docs/scheduler.md's metric table lists the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "kube/metrics.h"
#include "kube/procmetrics.h"
#include "kube/rest.h"
#include "scheduler/backend/queue.h"
#include "scheduler/daemon/metrics_sched.h"
#include "scheduler/tests/fixtures.h"

struct expect {
	const char *name, *type;
	const char *labels;   /* the label names of a series as upstream declares them ("" none) */
	const char *buckets;  /* histograms: the le values, comma-separated */
};

static const struct expect table[] = {
	{"scheduler_schedule_attempts_total", "counter", "result,profile", NULL},
	{"scheduler_scheduling_attempt_duration_seconds", "histogram", "result,profile",
	 "0.001,0.002,0.004,0.008,0.016,0.032,0.064,0.128,0.256,0.512,1.024,2.048,4.096,8.192,16.384"},
	{"scheduler_scheduling_algorithm_duration_seconds", "histogram", "",
	 "0.001,0.002,0.004,0.008,0.016,0.032,0.064,0.128,0.256,0.512,1.024,2.048,4.096,8.192,16.384"},
	{"scheduler_pod_scheduling_attempts", "histogram", "", "1,2,4,8,16"},
	{"scheduler_pod_scheduling_sli_duration_seconds", "histogram", "attempts",
	 "0.01,0.02,0.04,0.08,0.16,0.32,0.64,1.28,2.56,5.12,10.24,20.48,40.96,81.92,163.84,327.68,655.36,1310.72,2621.44,5242.88"},
	{"scheduler_pending_pods", "gauge", "queue", NULL},
	{"scheduler_framework_extension_point_duration_seconds", "histogram", "extension_point,status,profile",
	 "0.0001,0.0002,0.0004,0.0008,0.0016,0.0032,0.0064,0.0128,0.0256,0.0512,0.1024,0.2048"},
	{"scheduler_plugin_execution_duration_seconds", "histogram", "plugin,extension_point,status", NULL},
	{"scheduler_queue_incoming_pods_total", "counter", "queue,event", NULL},
	{"scheduler_scheduler_cache_size", "gauge", "type", NULL},
	{"scheduler_preemption_attempts_total", "counter", "", NULL},
	{"scheduler_preemption_victims", "histogram", "", "1,2,4,8,16,32,64"},
	{"scheduler_unschedulable_pods", "gauge", "plugin,profile", NULL},
	{"leader_election_master_status", "gauge", "name", NULL},
	{"leader_election_slowpath_total", "counter", "name", NULL},
	{"scheduler_plugin_evaluation_total", "counter", "plugin,extension_point,profile", NULL},
	{"scheduler_permit_wait_duration_seconds", "histogram", "result",
	 "0.001,0.002,0.004,0.008,0.016,0.032,0.064,0.128,0.256,0.512,1.024,2.048,4.096,8.192,16.384"},
	{"scheduler_goroutines", "gauge", "operation", NULL},
	{"scheduler_event_handling_duration_seconds", "histogram", "event",
	 "0.0001,0.0002,0.0004,0.0008,0.0016,0.0032,0.0064,0.0128,0.0256,0.0512,0.1024,0.2048"},
	{"scheduler_queueing_hint_execution_duration_seconds", "histogram", "plugin,event,hint", NULL},
	{"scheduler_inflight_events", "gauge", "event", NULL},
	{"process_cpu_seconds_total", "counter", "", NULL},
	{"process_open_fds", "gauge", "", NULL},
	{"process_max_fds", "gauge", "", NULL},
	{"process_virtual_memory_bytes", "gauge", "", NULL},
	{"process_virtual_memory_max_bytes", "gauge", "", NULL},
	{"process_resident_memory_bytes", "gauge", "", NULL},
	{"process_start_time_seconds", "gauge", "", NULL},
	{"kubernetes_build_info", "gauge", "build_date,compiler,git_commit,git_tree_state,git_version,go_version,major,minor,platform", NULL},
	{"rest_client_requests_total", "counter", "code,host,method", NULL},
	{"rest_client_request_duration_seconds", "histogram", "host,verb", "0.005,0.025,0.1,0.25,0.5,1,2,4,8,15,30,60"},
	{"rest_client_request_size_bytes", "histogram", "host,verb", "64,256,512,1024,4096,16384,65536,262144,1.048576e+06,4.194304e+06,1.6777216e+07"},
	{"rest_client_response_size_bytes", "histogram", "host,verb", "64,256,512,1024,4096,16384,65536,262144,1.048576e+06,4.194304e+06,1.6777216e+07"},
	{"rest_client_rate_limiter_duration_seconds", "histogram", "host,verb", "0.005,0.025,0.1,0.25,0.5,1,2,4,8,15,30,60"},
};

/* The label names of the first series line of name in text ("" none); NULL when there is none. */
static char *series_labels(const char *text, const char *name, bool histogram)
{
	char prefix[200];
	snprintf(prefix, sizeof prefix, "\n%s%s", name, histogram ? "_count" : "");
	const char *p = strstr(text, prefix);
	if (!p)
		return NULL;
	p += strlen(prefix);
	char *out = calloc(1, 512);
	if (*p != '{')
		return out;
	size_t k = 0;
	for (p++; *p && *p != '}';) {
		const char *eq = strchr(p, '=');
		if (!eq)
			break;
		k += (size_t)snprintf(out + k, 512 - k, "%s%.*s", k ? "," : "", (int)(eq - p), p);
		p = eq + 2;
		while (*p && !(*p == '"' && p[-1] != '\\'))
			p++;
		p++;
		if (*p == ',')
			p++;
	}
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "b,a,c" -> "a,b,c": the exposition format lists labels by name (as client_golang does). */
static char *sorted_csv(const char *csv)
{
	char *copy = strdup(csv), *parts[16], *out = calloc(1, strlen(csv) + 1);
	int n = 0;
	for (char *t = strtok(copy, ","); t && n < 16; t = strtok(NULL, ","))
		parts[n++] = t;
	qsort(parts, (size_t)n, sizeof parts[0], cmp_str);
	for (int i = 0; i < n; i++)
		strcat(strcat(out, i ? "," : ""), parts[i]);
	free(copy);
	return out;
}

static char *buckets_of(const char *text, const char *name)
{
	char *out = calloc(1, 1024);
	size_t k = 0;
	char prefix[200];
	snprintf(prefix, sizeof prefix, "\n%s_bucket{", name);
	const char *first = strstr(text, prefix), *p = first;
	const char *series_end = first ? strchr(first + strlen(prefix), '}') : NULL;
	if (!first || !series_end)
		return out;
	/* the bucket lines of the first series: same labels but le */
	while (p && !strncmp(p, prefix, strlen(prefix))) {
		const char *le = strstr(p, ",le=\"");
		if (!le || le > strchr(p + 1, '\n'))
			le = strstr(p, "{le=\"");
		if (!le)
			break;
		le += 5;
		size_t n = strcspn(le, "\"");
		if (strncmp(le, "+Inf", 4))
			k += (size_t)snprintf(out + k, 1024 - k, "%s%.*s", k ? "," : "", (int)n, le);
		else
			break;
		p = strchr(p + 1, '\n');
	}
	return out;
}

/* Feeds one observation into every labelled series, so that a line exists for each metric. */
static void feed(struct sk_sched_metrics *m, struct sk_pod *pod)
{
	struct sk_outcome o = { .pod = pod, .profile = "prof", .result = SK_RESULT_SCHEDULED, .attempts = 1,
				.node = "n1", .duration_s = 0.5, .algorithm_s = 0.01 };
	sk_sched_metrics_attempt(m, &o, 1000000000LL);
	sk_sched_metrics_observe_point(m, "prof", "Filter", NULL, SK_SUCCESS, 0.001);
	sk_sched_metrics_observe_point(m, "prof", "Filter", "NodeResourcesFit", SK_SUCCESS, 0.0001);
	sk_sched_metrics_incoming(m, "active", "PodAdd");
	sk_sched_metrics_cache_size(m, 1, 2, 0);
	sk_sched_metrics_leader(m, "lease", true);
	sk_sched_metrics_victim(m, pod->uid);
	sk_sched_metrics_leader_slowpath(m, "lease");
	sk_sched_metrics_plugin_evaluated(m, "prof", "Filter", "NodeResourcesFit", 16);
	sk_sched_metrics_permit_waited(m, SK_SUCCESS, 0.003);
	sk_sched_metrics_goroutines(m, "binding", 1);
	sk_sched_metrics_event_handled(m, "NodeAdd", 0.0005);
	sk_sched_metrics_queue_hint(m, "NodeAffinity", "NodeAdd", "Queue", 0.00002);
	sk_sched_metrics_queue_inflight(m, "PodPopped", 1);
}

/* A local API server on a free port. */
static struct apis_server *start_api(void)
{
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	struct apis_server *api;
	assert_int_equal(apis_server_start(&ao, &api), 0);
	return api;
}

static void test_names_labels_buckets(void **state)
{
	(void)state;
	struct apis_server *api = start_api();
	struct kube_config *kc = kube_config_new(apis_server_url(api));
	struct kube_client *c;
	assert_int_equal(kube_client_new(kc, &c, NULL), 0);
	kube_config_free(kc);
	assert_int_equal(kube_get(c, "/api/v1/namespaces", NULL, NULL), 0);

	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct sk_sched_metrics *m = sk_sched_metrics_new(reg);
	struct kube_client *clients[] = {c, NULL};
	struct kube_std_metrics *std = kube_std_metrics_new(reg, clients, "api:6443");
	assert_non_null(m);
	assert_non_null(std);
	assert_int_equal(kube_get(c, "/api/v1/namespaces", NULL, NULL), 0); /* timed by the observer */
	struct sk_pod *pod = fx_pod("{metadata: {name: p1, uid: u1}, spec: {schedulerName: prof, containers: [{name: c}]}}");
	feed(m, pod);
	kube_gauge_set(kube_metrics_lookup(reg, "scheduler_unschedulable_pods"), 1, KUBE_LABELS("X", "prof"));
	char *text = kube_metrics_render(reg);
	assert_non_null(text);
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		const struct expect *e = &table[i];
		char type[300];
		snprintf(type, sizeof type, "# TYPE %s %s\n", e->name, e->type);
		if (!strstr(text, type))
			fail_msg("%s: no \"%s\"", e->name, type);
		char *labels = series_labels(text, e->name, !strcmp(e->type, "histogram"));
		if (!labels)
			fail_msg("%s: no series", e->name);
		char *want = sorted_csv(e->labels);
		if (strcmp(labels, want))
			fail_msg("%s: labels \"%s\", upstream \"%s\"", e->name, labels, want);
		free(want);
		free(labels);
		if (e->buckets) {
			char *b = buckets_of(text, e->name);
			if (strcmp(b, e->buckets))
				fail_msg("%s: buckets \"%s\", upstream \"%s\"", e->name, b, e->buckets);
			free(b);
		}
	}
	/* the REST counts are read at render time: the GET above is there */
	assert_true(kube_metrics_value(reg, "rest_client_requests_total", KUBE_LABELS("200", "api:6443", "GET")) >= 2);
	assert_int_equal((int)kube_metric_value(kube_metrics_lookup(reg, "rest_client_request_duration_seconds"),
						KUBE_LABELS("api:6443", "GET")), 1);
	/* the sizes and the limiter's wait of that GET: a request without a body, a NamespaceList back */
	struct kube_metric *req = kube_metrics_lookup(reg, "rest_client_request_size_bytes");
	struct kube_metric *resp = kube_metrics_lookup(reg, "rest_client_response_size_bytes");
	assert_int_equal((int)kube_metric_value(req, KUBE_LABELS("api:6443", "GET")), 1);
	assert_int_equal((int)kube_histogram_sum(req, KUBE_LABELS("api:6443", "GET")), 0);
	assert_true(kube_histogram_sum(resp, KUBE_LABELS("api:6443", "GET")) > 20);
	assert_int_equal((int)kube_metric_value(kube_metrics_lookup(reg, "rest_client_rate_limiter_duration_seconds"),
						KUBE_LABELS("api:6443", "GET")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "kubernetes_build_info",
						 KUBE_LABELS("1970-01-01T00:00:00Z", "gcc", "", "", "v1.34.0", "", "1", "34", "linux/amd64")) +
				 (int)kube_metrics_value(reg, "kubernetes_build_info",
							 KUBE_LABELS("1970-01-01T00:00:00Z", "clang", "", "", "v1.34.0", "", "1", "34", "linux/amd64")),
			 1);
	assert_true(kube_metrics_value(reg, "process_start_time_seconds", NULL) > 1.5e9);
	/* the values fed above, under upstream's label values */
	assert_int_equal((int)kube_metrics_value(reg, "leader_election_slowpath_total", KUBE_LABELS("lease")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_plugin_evaluation_total",
						 KUBE_LABELS("NodeResourcesFit", "Filter", "prof")), 16);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_permit_wait_duration_seconds", KUBE_LABELS("Success")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_goroutines", KUBE_LABELS("binding")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_goroutines", KUBE_LABELS("Filter")), 0); /* present at 0 */
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_event_handling_duration_seconds", KUBE_LABELS("NodeAdd")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_queueing_hint_execution_duration_seconds",
						 KUBE_LABELS("NodeAffinity", "NodeAdd", "Queue")), 1);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_inflight_events", KUBE_LABELS("PodPopped")), 1);
	assert_true(kube_metrics_value(reg, "process_open_fds", NULL) >= 3);
	free(text);
	sk_pod_unref(pod);
	kube_std_metrics_free(std);
	sk_sched_metrics_free(m);
	kube_metrics_registry_free(reg);
	kube_client_free(c);
	apis_server_stop(api);
}

static void test_algorithm_and_preemption(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct sk_sched_metrics *m = sk_sched_metrics_new(reg);
	struct sk_pod *pod = fx_pod("{metadata: {name: p1, uid: u1}, spec: {containers: [{name: c}]}}");
	struct kube_metric *algo = kube_metrics_lookup(reg, "scheduler_scheduling_algorithm_duration_seconds");
	struct kube_metric *victims = kube_metrics_lookup(reg, "scheduler_preemption_victims");
	static const struct {
		enum sk_result result;
		double algorithm_s;
		const char *nominated;
		int victims;
		int algo_count, victim_count, victim_sum;
	} steps[] = {
		/* unschedulable, PostFilter preempted 3 victims and nominated a node */
		{SK_RESULT_UNSCHEDULABLE, 0, "n1", 3, 0, 1, 3},
		/* unschedulable again, no nomination: victims counted nowhere */
		{SK_RESULT_UNSCHEDULABLE, 0, NULL, 2, 0, 1, 3},
		/* scheduled: the algorithm latency is observed */
		{SK_RESULT_SCHEDULED, 0.02, NULL, 0, 1, 1, 3},
	};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		sk_sched_metrics_observe_point(m, "prof", "PostFilter", NULL, SK_UNSCHEDULABLE, 0.001);
		for (int v = 0; v < steps[i].victims; v++)
			sk_sched_metrics_victim(m, "u1");
		struct sk_outcome o = { .pod = pod, .profile = "prof", .result = steps[i].result, .attempts = (int)i + 1,
					.duration_s = 0.1, .algorithm_s = steps[i].algorithm_s, .nominated_node = steps[i].nominated };
		sk_sched_metrics_attempt(m, &o, 1000000000LL * (int64_t)(i + 1));
		assert_int_equal((int)kube_metric_value(algo, NULL), steps[i].algo_count);
		assert_int_equal((int)kube_metric_value(victims, NULL), steps[i].victim_count);
		assert_int_equal((int)kube_histogram_sum(victims, NULL), steps[i].victim_sum);
		assert_int_equal((int)kube_metrics_value(reg, "scheduler_preemption_attempts_total", NULL), (int)i + 1);
	}
	/* a plugin's own PostFilter observation (sampled) is not another attempt */
	sk_sched_metrics_observe_point(m, "prof", "PostFilter", "DefaultPreemption", SK_UNSCHEDULABLE, 0.001);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_preemption_attempts_total", NULL), 3);
	sk_pod_unref(pod);
	sk_sched_metrics_free(m);
	kube_metrics_registry_free(reg);
}

static bool less(void *ctx, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)ctx;
	return a->timestamp_ns < b->timestamp_ns;
}

/* The client-side limiter's wait and the retry counter move: qps 4 / burst 1 makes the 2nd and
 * 3rd GET wait about 0.25 s each; a GET to a closed port is retried once (transport error). */
static void test_rest_limiter_and_retries(void **state)
{
	(void)state;
	struct apis_server *api = start_api();
	struct kube_config *kc = kube_config_new(apis_server_url(api));
	kc->qps = 4;
	kc->burst = 1;
	struct kube_client *c, *dead;
	assert_int_equal(kube_client_new(kc, &c, NULL), 0);
	kube_config_free(kc);
	kc = kube_config_new("http://127.0.0.1:1");
	assert_int_equal(kube_client_new(kc, &dead, NULL), 0);
	kube_config_free(kc);
	kube_client_set_max_retries(dead, 1);
	struct kube_metrics_registry *reg = kube_metrics_registry_new(), *reg2 = kube_metrics_registry_new();
	struct kube_client *clients[] = {c, NULL}, *clients2[] = {dead, NULL};
	struct kube_std_metrics *std = kube_std_metrics_new(reg, clients, "api:6443");
	struct kube_std_metrics *std2 = kube_std_metrics_new(reg2, clients2, "dead:1");
	for (int i = 0; i < 3; i++)
		assert_int_equal(kube_get(c, "/api/v1/namespaces", NULL, NULL), 0);
	struct kube_metric *rl = kube_metrics_lookup(reg, "rest_client_rate_limiter_duration_seconds");
	assert_int_equal((int)kube_metric_value(rl, KUBE_LABELS("api:6443", "GET")), 3);
	assert_true(kube_histogram_sum(rl, KUBE_LABELS("api:6443", "GET")) > 0.3);
	assert_true(kube_histogram_bucket_count(rl, KUBE_LABELS("api:6443", "GET"), 0.005) >= 1); /* the first: no wait */
	struct kube_metric *retries = kube_metrics_lookup(reg, "rest_client_request_retries_total");
	assert_non_null(retries);
	assert_int_equal((int)kube_metric_value(retries, KUBE_LABELS("200", "api:6443", "GET")), 0); /* no retry */
	assert_int_not_equal(kube_get(dead, "/api/v1/namespaces", NULL, NULL), 0);
	struct kube_metric *retries2 = kube_metrics_lookup(reg2, "rest_client_request_retries_total");
	assert_int_equal((int)kube_metric_value(retries2, KUBE_LABELS("<error>", "dead:1", "GET")), 1);
	char *text = kube_metrics_render(reg2);
	assert_non_null(strstr(text, "rest_client_request_retries_total{code=\"<error>\",host=\"dead:1\",verb=\"GET\"} 1\n"));
	free(text);
	kube_std_metrics_free(std);
	kube_std_metrics_free(std2);
	kube_metrics_registry_free(reg);
	kube_metrics_registry_free(reg2);
	kube_client_free(c);
	kube_client_free(dead);
	apis_server_stop(api);
}

static void test_unschedulable_and_moves(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct sk_sched_metrics *m = sk_sched_metrics_new(reg);
	struct sk_queue_ops ops = { .less = less };
	struct sk_queue_options qo = { .initial_backoff_ns = 1, .max_backoff_ns = 1, .disable_queueing_hints = true,
				       .moved = sk_sched_metrics_queue_moved, .moved_ctx = m };
	struct sk_queue *q = sk_queue_new(&ops, &qo);
	assert_non_null(q);
	static const char *const plugins[][2] = { {"NodeResourcesFit", NULL}, {"NodeResourcesFit", "TaintToleration"} };
	for (int i = 0; i < 2; i++) {
		char text[200];
		snprintf(text, sizeof text, "{metadata: {name: p%d, uid: u%d}, spec: {schedulerName: prof, containers: [{name: c}]}}", i, i);
		struct sk_pod *p = fx_pod(text);
		assert_int_equal(sk_queue_add(q, p), 0);
		sk_pod_unref(p);
		struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
		assert_non_null(qp);
		for (int k = 0; k < 2 && plugins[i][k]; k++)
			qp->unschedulable_plugins[qp->nunschedulable_plugins++] = plugins[i][k];
		sk_queue_add_unschedulable(q, qp, NULL);
	}
	sk_sched_metrics_unschedulable(m, q);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_unschedulable_pods", KUBE_LABELS("NodeResourcesFit", "prof")), 2);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_unschedulable_pods", KUBE_LABELS("TaintToleration", "prof")), 1);
	/* a node event moves both out of unschedulablePods: counted with the event's label */
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	double moved = kube_metrics_value(reg, "scheduler_queue_incoming_pods_total", KUBE_LABELS("active", SK_EVENT_NODE_ADD.label)) +
		       kube_metrics_value(reg, "scheduler_queue_incoming_pods_total", KUBE_LABELS("backoff", SK_EVENT_NODE_ADD.label));
	assert_int_equal((int)moved, 2);
	/* popped again (no longer waiting after a rejection): the series drop to 0 */
	for (int i = 0; i < 2; i++) {
		struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
		if (qp)
			sk_queue_done(q, qp);
	}
	sk_sched_metrics_unschedulable(m, q);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_unschedulable_pods", KUBE_LABELS("NodeResourcesFit", "prof")), 0);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_unschedulable_pods", KUBE_LABELS("TaintToleration", "prof")), 0);
	sk_queue_free(q);
	sk_sched_metrics_free(m);
	kube_metrics_registry_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_labels_buckets),
		cmocka_unit_test(test_algorithm_and_preemption),
		cmocka_unit_test(test_unschedulable_and_moves),
		cmocka_unit_test(test_rest_limiter_and_retries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
