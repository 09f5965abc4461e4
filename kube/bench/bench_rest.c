/* bench_rest: the client's per-request cost for the two POSTs every scheduled pod makes, the
 * binding (`POST pods/<name>/binding`, answered by a Status) and the "Scheduled" event (`POST
 * events` through the recorder's sender thread), against the local API server started in process
 * (HTTPS as e2e/bench/workloads.sh runs it; plain HTTP with BENCH_REST_TLS=0; the pods are
 * created first, untimed). Prints requests/s; for instruction counts run
 * it under callgrind with --toggle-collect=bench_binding_post (one binding: body, path and the
 * POST) or --toggle-collect=kube_create*, and --toggle-collect=sender_main for the events
 * (docs/benchmarks.md, "The client's per-request cost"). BENCH_REST_N sets the count (2000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"
#include "kube/jsonw.h"
#include "kube/rest.h"
#include "e2e/apiserver/server.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One binding as the scheduler daemon's DefaultBinder sends it (scheduler/daemon/env.c fw_bind:
 * the path, the Binding as JSON text, kube_create_text without parsing the answer). */
__attribute__((noinline)) int bench_binding_post(struct kube_client *c, const char *ns, const char *name,
						 const char *uid, const char *node)
{
	char *path = kube_path("", "v1", "pods", ns, name, "binding");
	static const char *const text[] = { "{\"metadata\":{\"name\":", ",\"namespace\":", ",\"uid\":",
					    "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":" };
	const char *vals[] = { name, ns, uid, node };
	struct kube_jsonw w = {0};
	for (int i = 0; i < 4; i++) {
		kube_jsonw_raw(&w, text[i]);
		kube_jsonw_str(&w, vals[i]);
	}
	kube_jsonw_raw(&w, "},\"apiVersion\":\"v1\",\"kind\":\"Binding\"}");
	char *body = kube_jsonw_finish(&w);
	struct kube_error ke = {0};
	int rc = path && body ? kube_create_text(c, path, body, NULL, &ke) : -1;
	free(path);
	free(body);
	return rc;
}

int main(void)
{
	const char *ns = getenv("BENCH_REST_N");
	int n = ns && atoi(ns) > 0 ? atoi(ns) : 2000;
	const char *tls_env = getenv("BENCH_REST_TLS");
	bool tls = !tls_env || *tls_env != '0';
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.tls = tls;
	struct apis_server *srv = NULL;
	if (apis_server_start(&o, &srv)) {
		fprintf(stderr, "bench_rest: cannot start the local API server\n");
		return 1;
	}
	struct kube_config *cfg = kube_config_new(apis_server_url(srv));
	cfg->qps = 0;
	if (tls)
		cfg->ca_data = strdup(apis_server_ca_pem(srv));
	struct kube_client *c = NULL;
	char *err = NULL;
	if (kube_client_new(cfg, &c, &err)) {
		fprintf(stderr, "bench_rest: %s\n", err);
		return 1;
	}
	kube_config_free(cfg);
	char **uids = calloc((size_t)n, sizeof *uids);
	cJSON *nsobj = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench\"}}");
	kube_create(c, "/api/v1/namespaces", nsobj, NULL, NULL);
	cJSON_Delete(nsobj);
	for (int i = 0; i < n; i++) {
		char pod[512];
		snprintf(pod, sizeof pod,
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%06d\",\"namespace\":\"bench\"},"
			 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}", i);
		cJSON *p = cJSON_Parse(pod), *created = NULL;
		struct kube_error ke;
		if (kube_create(c, "/api/v1/namespaces/bench/pods", p, &created, &ke)) {
			fprintf(stderr, "bench_rest: creating pod %d: %s\n", i, ke.message);
			return 1;
		}
		const cJSON *uid = cJSON_GetObjectItem(cJSON_GetObjectItem(created, "metadata"), "uid");
		uids[i] = strdup(cJSON_IsString(uid) ? uid->valuestring : "");
		cJSON_Delete(created);
		cJSON_Delete(p);
	}

	int failed = 0;
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		char name[32], node[32];
		snprintf(name, sizeof name, "pod-%06d", i);
		snprintf(node, sizeof node, "node-%04d", i % 5000);
		failed += bench_binding_post(c, "bench", name, uids[i], node) != 0;
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
			 "\"uid\":\"%s\",\"resourceVersion\":\"%d\"}}", i, uids[i], i + 10);
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
	for (int i = 0; i < n; i++)
		free(uids[i]);
	free(uids);
	kube_client_free(c);
	apis_server_stop(srv);
	return failed || st.failed ? 1 : 0;
}
