/* bench_watch: a fake peer streams 200,000 watch events (~1 KB pod objects); prints events/s
 * decoded by the bare decoder (trees, and events as bytes), by kube/watch over HTTP, and through
 * an informer store (handlers given trees, and a text hook that takes every update: no tree). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/informer.h"
#include "kube/watch.h"
#include "kube/tests/fake_apiserver.h"

#define NEVENTS 200000
#define NPODS 2000          /* distinct pods: the informer store stays realistic in size */
#define BATCH 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One ~1 KB pod watch event line. */
static int event_line(char *buf, size_t len, long i)
{
	long pod = i % NPODS;
	return snprintf(buf, len,
		"{\"type\":\"%s\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-%05ld\","
		"\"namespace\":\"bench\",\"uid\":\"6c1e9f70-1111-4d2a-9a8e-%012ld\",\"resourceVersion\":\"%ld\","
		"\"creationTimestamp\":\"2025-01-31T10:00:00Z\",\"labels\":{\"app\":\"web\",\"tier\":\"frontend\","
		"\"pod-template-hash\":\"7d9f8b6c5d\"},\"annotations\":{\"kubernetes.io/psp\":\"restricted\"},"
		"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f8b6c5d\","
		"\"uid\":\"0b8e2c3a-2222-4f1b-8c7d-333333333333\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
		"\"spec\":{\"schedulerName\":\"default-scheduler\",\"nodeName\":\"node-%03ld\",\"priority\":0,"
		"\"containers\":[{\"name\":\"web\",\"image\":\"registry.local/web:1.2.3\",\"ports\":[{\"containerPort\":8080,"
		"\"protocol\":\"TCP\"}],\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"256Mi\"},\"limits\":"
		"{\"cpu\":\"500m\",\"memory\":\"512Mi\"}}}],\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\","
		"\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"podIP\":\"10.0.%ld.%ld\",\"conditions\":[{\"type\":"
		"\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"2025-01-31T10:00:01Z\"},{\"type\":\"Ready\","
		"\"status\":\"True\",\"lastTransitionTime\":\"2025-01-31T10:00:05Z\"}]}}}\n",
		i < NPODS ? "ADDED" : "MODIFIED", pod, pod, i + 2, pod % 100, (pod / 250) % 256, pod % 250);
}

static bool stream_handler(void *ctx, const struct fake_request *req, struct fake_conn *c)
{
	(void)ctx;
	(void)req;
	if (fake_conn_stream_begin(c, 200, NULL))
		return false;
	char *buf = malloc(BATCH * 2048);
	for (long i = 0; buf && i < NEVENTS; i += BATCH) {
		size_t len = 0;
		for (long k = i; k < i + BATCH && k < NEVENTS; k++)
			len += (size_t)event_line(buf + len, 2048, k);
		if (fake_conn_chunk(c, buf, len)) {
			free(buf);
			return false;
		}
	}
	free(buf);
	fake_conn_wait_closed(c);   /* then hang like a live watch until the client goes */
	return false;
}

static int count_event(void *ctx, enum kube_watch_event_type t, cJSON *obj)
{
	(void)t;
	size_t *n = ctx;
	cJSON_Delete(obj);
	return ++*n >= NEVENTS;   /* stop once everything arrived */
}

static int count_bytes(void *ctx, struct kube_watch_event *ev)
{
	size_t *n = ctx;
	(void)ev;
	return ++*n >= NEVENTS;
}

static atomic_long handled;
static bool take_text(void *ctx, struct kube_text *t, const struct kube_json_member *m)
{
	(void)ctx;
	(void)t;
	(void)m;
	atomic_fetch_add(&handled, 1);
	return true;
}
static void on_add(void *ctx, const cJSON *o) { (void)ctx; (void)o; atomic_fetch_add(&handled, 1); }
static void on_update(void *ctx, const cJSON *a, const cJSON *b) { (void)ctx; (void)a; (void)b; atomic_fetch_add(&handled, 1); }

int main(void)
{
	/* 1. bare decoder, in memory */
	char *all = malloc((size_t)NEVENTS * 2048);
	size_t total = 0;
	for (long i = 0; i < NEVENTS; i++)
		total += (size_t)event_line(all + total, 2048, i);
	struct kube_watch_decoder *d = kube_watch_decoder_new();
	size_t n = 0;
	double t0 = now_s();
	for (size_t off = 0; off < total; off += 16384)   /* 16 KB reads, as from a socket */
		kube_watch_decoder_feed(d, all + off, total - off < 16384 ? total - off : 16384, count_event, &n, NULL);
	double t_dec = now_s() - t0;
	kube_watch_decoder_free(d);
	printf("bench_watch: %d events, %.0f bytes/event average\n", NEVENTS, (double)total / NEVENTS);
	printf("decoder (in memory, 16 KB feeds): %zu events in %.3f s = %.0f events/s (%.1f MB/s)\n", n, t_dec, n / t_dec,
	       total / t_dec / 1e6);
	d = kube_watch_decoder_new();
	n = 0;
	t0 = now_s();
	for (size_t off = 0; off < total; off += 16384)
		kube_watch_decoder_feed_events(d, all + off, total - off < 16384 ? total - off : 16384, count_bytes, &n, NULL);
	t_dec = now_s() - t0;
	kube_watch_decoder_free(d);
	printf("decoder, events as bytes (in memory, 16 KB feeds): %zu events in %.3f s = %.0f events/s (%.1f MB/s)\n", n,
	       t_dec, n / t_dec, total / t_dec / 1e6);
	free(all);

	struct fake_apiserver *fs = fake_apiserver_start(false);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(fs);
	struct kube_client *c = NULL;
	if (!fs || kube_client_new(&cfg, &c, NULL)) {
		fprintf(stderr, "bench_watch: cannot start\n");
		return 1;
	}

	/* 2. kube/watch over HTTP (chunked, loopback) */
	fake_apiserver_handle(fs, "GET", "/api/v1/namespaces/bench/pods?watch=1", 0, stream_handler, NULL);
	struct kube_watch_opts wo = {.path = "/api/v1/namespaces/bench/pods", .resource_version = "1"};
	struct kube_watch *w = NULL;
	kube_watch_new(c, &wo, &w);
	n = 0;
	t0 = now_s();
	enum kube_watch_end end = kube_watch_run(w, count_event, &n, NULL);
	double t_watch = now_s() - t0;
	printf("kube/watch over HTTP: %zu events in %.3f s = %.0f events/s (end=%s)\n", n, t_watch, n / t_watch,
	       kube_watch_end_name(end));
	kube_watch_free(w);

	/* 3. through an informer: decode + store update (indexed by node) + handlers */
	fake_apiserver_reply(fs, "GET", "/api/v1/namespaces/bench/pods?limit=500", 0, 200, NULL,
			     "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
	struct kube_informer_opts io = {.group = "", .version = "v1", .resource = "pods", .ns = "bench"};
	struct kube_informer *inf = NULL;
	kube_informer_new(c, &io, &inf);
	struct kube_informer_handlers h = {on_add, on_update, NULL, NULL};
	kube_informer_add_handlers(inf, &h);
	t0 = now_s();
	kube_informer_start(inf);
	while (atomic_load(&handled) < NEVENTS && now_s() - t0 < 120)
		usleep(1000);
	double t_inf = now_s() - t0;
	long got = atomic_load(&handled);
	printf("informer (list + watch + store + handlers): %ld events in %.3f s = %.0f events/s, store %zu objects\n", got,
	       t_inf, got / t_inf, kube_store_len(inf));
	kube_informer_free(inf);

	/* 4. the same with a text hook that takes every update: the updates build no tree */
	atomic_store(&handled, 0);
	kube_informer_new(c, &io, &inf);
	kube_informer_add_handlers_with_text(inf, &h, take_text, NULL, 0);
	t0 = now_s();
	kube_informer_start(inf);
	while (atomic_load(&handled) < NEVENTS && now_s() - t0 < 120)
		usleep(1000);
	t_inf = now_s() - t0;
	long got_text = atomic_load(&handled);
	printf("informer, updates taken as text: %ld events in %.3f s = %.0f events/s, store %zu objects\n", got_text, t_inf,
	       got_text / t_inf, kube_store_len(inf));
	kube_informer_free(inf);
	kube_client_free(c);
	fake_apiserver_stop(fs);
	return got == NEVENTS && got_text == NEVENTS && n == NEVENTS ? 0 : 1;
}
