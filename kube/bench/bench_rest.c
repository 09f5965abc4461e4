/* bench_rest: the client's per-request cost for the two POSTs every scheduled pod makes, the
 * binding (`POST pods/<name>/binding`, answered by a Status) and the "Scheduled" event (`POST
 * events` through the recorder's sender thread), against the scripted fake API server on
 * 127.0.0.1 (plain, or TLS with BENCH_REST_TLS=1). Prints requests/s; for instruction counts run
 * it under callgrind with --toggle-collect=bench_binding_post (one binding: body, path and the
 * POST) or --toggle-collect=kube_create*, and --toggle-collect=sender_main for the events
 * (docs/benchmarks.md, "The client's per-request cost"). BENCH_REST_N sets the count (2000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"
#include "kube/rest.h"
#include "kube/tests/fake_apiserver.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the local API server answers a binding with. */
static const char binding_answer[] =
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}";

/* One binding as the scheduler daemon's DefaultBinder sends it (scheduler/daemon/env.c). */
__attribute__((noinline)) int bench_binding_post(struct kube_client *c, const char *ns, const char *name,
						 const char *uid, const char *node)
{
	char *path = kube_path("", "v1", "pods", ns, name, "binding");
	cJSON *b = cJSON_CreateObject();
	cJSON *m = cJSON_AddObjectToObject(b, "metadata");
	cJSON *t = cJSON_AddObjectToObject(b, "target");
	cJSON_AddStringToObject(b, "apiVersion", "v1");
	cJSON_AddStringToObject(b, "kind", "Binding");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "namespace", ns);
	cJSON_AddStringToObject(m, "uid", uid);
	cJSON_AddStringToObject(t, "apiVersion", "v1");
	cJSON_AddStringToObject(t, "kind", "Node");
	cJSON_AddStringToObject(t, "name", node);
	struct kube_error ke = {0};
	int rc = kube_create(c, path, b, NULL, &ke);
	free(path);
	cJSON_Delete(b);
	return rc;
}

int main(void)
{
	const char *ns = getenv("BENCH_REST_N");
	int n = ns && atoi(ns) > 0 ? atoi(ns) : 2000;
	const char *tls_env = getenv("BENCH_REST_TLS");
	bool tls = tls_env && *tls_env == '1';
	struct fake_apiserver *fs = fake_apiserver_start(tls);
	if (!fs) {
		fprintf(stderr, "bench_rest: cannot start the fake API server\n");
		return 1;
	}
	fake_apiserver_reply(fs, "POST", "/api/v1/namespaces/bench/pods/", 0, 201, NULL, binding_answer);
	fake_apiserver_reply(fs, "POST", "/apis/events.k8s.io/v1/namespaces/bench/events", 0, 201, NULL,
			     "{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\",\"metadata\":{\"name\":\"x\"}}");
	struct kube_config *cfg = kube_config_new(fake_apiserver_url(fs));
	cfg->qps = 0;
	cfg->token = strdup("bench-token-0123456789abcdef0123456789abcdef");
	if (tls)
		cfg->ca_data = strdup(fake_apiserver_ca_pem(fs));
	struct kube_client *c = NULL;
	char *err = NULL;
	if (kube_client_new(cfg, &c, &err)) {
		fprintf(stderr, "bench_rest: %s\n", err);
		return 1;
	}
	kube_config_free(cfg);

	int failed = 0;
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		char name[32], uid[48], node[32];
		snprintf(name, sizeof name, "pod-%06d", i);
		snprintf(uid, sizeof uid, "6c1e9f70-1111-4d2a-9a8e-%012d", i);
		snprintf(node, sizeof node, "node-%04d", i % 5000);
		failed += bench_binding_post(c, "bench", name, uid, node) != 0;
	}
	double t_bind = now_s() - t0;

	struct kube_event_recorder *rec = NULL;
	if (kube_event_recorder_new(c, "default-scheduler", "default-scheduler-bench", &rec)) {
		fprintf(stderr, "bench_rest: cannot start the event recorder\n");
		return 1;
	}
	kube_event_recorder_set_queue_size(rec, (size_t)n + 1);
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		char pod[512];
		snprintf(pod, sizeof pod,
			 "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pod-%06d\",\"namespace\":\"bench\","
			 "\"uid\":\"6c1e9f70-1111-4d2a-9a8e-%012d\",\"resourceVersion\":\"%d\"}}", i, i, i + 10);
		cJSON *p = cJSON_Parse(pod);
		kube_event_record(rec, p, "Normal", "Scheduled", "Binding", "Successfully assigned bench/pod-%06d to node-%04d",
				  i, i % 5000);
		cJSON_Delete(p);
	}
	kube_event_recorder_flush(rec);
	double t_ev = now_s() - t0;
	struct kube_event_stats st;
	kube_event_recorder_stats(rec, &st);
	kube_event_recorder_free(rec);

	printf("bench_rest (%s): %d binding POSTs in %.3f s (%.0f/s, %d failed); %d events in %.3f s (%.0f/s, %llu created, "
	       "%llu failed)\n",
	       tls ? "https" : "http", n, t_bind, n / t_bind, failed, n, t_ev, n / t_ev,
	       (unsigned long long)st.created, (unsigned long long)st.failed);
	kube_client_free(c);
	fake_apiserver_stop(fs);
	return failed || st.failed ? 1 : 0;
}
