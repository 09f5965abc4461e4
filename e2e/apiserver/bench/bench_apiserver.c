/* bench_apiserver.c — throughput of schedkit-apiserver run in-process on this machine:
 * pod creates/s, binding POSTs/s with 5 concurrent keep-alive clients, GETs/s with 5 clients,
 * and watch events/s delivered to 10 watchers while the bindings run. Prints figures only. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include <curl/curl.h>

#include "e2e/apiserver/server.h"

#define CLIENTS 5
#define WATCHERS 10

static int npods = 20000;
static char base[200];
static atomic_long watch_events[WATCHERS];
static atomic_int stop_watch;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t sz, size_t n, void *u)
{
	(void)p;
	(void)u;
	return sz * n;
}

static CURL *handle(void)
{
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	return c;
}

static long post(CURL *c, const char *path, const char *body)
{
	char url[512];
	snprintf(url, sizeof url, "%s%s", base, path);
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	long code = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	return code;
}

struct worker {
	int id;
	long ok, fail;
	double seconds;
};

static void *create_worker(void *arg)
{
	struct worker *w = arg;
	CURL *c = handle();
	char body[512];
	for (int i = w->id; i < npods; i += CLIENTS) {
		snprintf(body, sizeof body,
			 "{\"metadata\":{\"name\":\"p%d\",\"labels\":{\"app\":\"bench\"}},\"spec\":{\"schedulerName\":\"bench\","
			 "\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}",
			 i);
		if (post(c, "/api/v1/namespaces/default/pods", body) == 201)
			w->ok++;
		else
			w->fail++;
	}
	curl_easy_cleanup(c);
	return NULL;
}

static void *bind_worker(void *arg)
{
	struct worker *w = arg;
	CURL *c = handle();
	char body[512], path[256];
	for (int i = w->id; i < npods; i += CLIENTS) {
		snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p%d/binding", i);
		snprintf(body, sizeof body,
			 "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p%d\",\"namespace\":\"default\"},"
			 "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-%d\"}}",
			 i, i % 100);
		if (post(c, path, body) == 201)
			w->ok++;
		else
			w->fail++;
	}
	curl_easy_cleanup(c);
	return NULL;
}

static double get_seconds = 2.0;

static void *get_worker(void *arg)
{
	struct worker *w = arg;
	CURL *c = handle();
	char url[512];
	double end = now_s() + get_seconds;
	int i = w->id;
	while (now_s() < end) {
		snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods/p%d", base, i % npods);
		curl_easy_setopt(c, CURLOPT_URL, url);
		long code = 0;
		if (curl_easy_perform(c) == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200)
			w->ok++;
		else {
			w->fail++;
			if (getenv("SK_BENCH_DEBUG"))
				fprintf(stderr, "GET %s -> %ld\n", url, code);
		}
		i += CLIENTS;
	}
	curl_easy_cleanup(c);
	return NULL;
}

struct watcher {
	int id;
	char rv[32];
};

static size_t count_lines(char *p, size_t sz, size_t n, void *u)
{
	struct watcher *w = u;
	long k = 0;
	for (size_t i = 0; i < sz * n; i++)
		if (p[i] == '\n')
			k++;
	atomic_fetch_add(&watch_events[w->id], k);
	return sz * n;
}

static int progress(void *u, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)u; (void)a; (void)b; (void)c; (void)d;
	return atomic_load(&stop_watch) ? 1 : 0;
}

static void *watch_worker(void *arg)
{
	struct watcher *w = arg;
	CURL *c = curl_easy_init();
	char url[512];
	snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods?watch=true&resourceVersion=%s&timeoutSeconds=600", base, w->rv);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, count_lines);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	return NULL;
}

static size_t grab_rv(char *p, size_t sz, size_t n, void *u)
{
	char *rv = u;
	char *k = memmem(p, sz * n, "\"resourceVersion\":\"", 19);
	if (k && !*rv) {
		k += 19;
		size_t i = 0;
		while (i < 31 && k[i] != '"' && k + i < p + sz * n) {
			rv[i] = k[i];
			i++;
		}
		rv[i] = 0;
	}
	return sz * n;
}

static double run(void *(*fn)(void *), struct worker *w, long *ok, long *fail)
{
	pthread_t t[CLIENTS];
	double t0 = now_s();
	for (int i = 0; i < CLIENTS; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].id = i;
		pthread_create(&t[i], NULL, fn, &w[i]);
	}
	*ok = *fail = 0;
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(t[i], NULL);
		*ok += w[i].ok;
		*fail += w[i].fail;
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		npods = atoi(argv[1]);
	if (getenv("SK_BENCH_PODS"))
		npods = atoi(getenv("SK_BENCH_PODS"));
	if (npods <= 0)
		npods = 20000;
	curl_global_init(CURL_GLOBAL_ALL);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.history_events = npods * 2 + 1000;
	struct apis_server *s;
	if (apis_server_start(&o, &s) < 0) {
		fprintf(stderr, "cannot start server\n");
		return 1;
	}
	snprintf(base, sizeof base, "%s", apis_server_url(s));
	CURL *c = handle();
	for (int i = 0; i < 100; i++) {
		char b[256];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"node-%d\"},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"500\"}}}", i);
		post(c, "/api/v1/nodes", b);
	}
	struct worker w[CLIENTS];
	long ok, fail;
	double dt = run(create_worker, w, &ok, &fail);
	printf("apiserver: pod creates      %8.0f /s  (%ld ok, %ld failed, %d clients)\n", (double)ok / dt, ok, fail, CLIENTS);

	/* watchers start from the current resourceVersion */
	char rv[32] = "";
	char url[512];
	curl_easy_cleanup(c);
	c = handle();
	snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods?limit=1", base);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, grab_rv);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, rv);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	struct watcher ws[WATCHERS];
	pthread_t wt[WATCHERS];
	for (int i = 0; i < WATCHERS; i++) {
		ws[i].id = i;
		snprintf(ws[i].rv, sizeof ws[i].rv, "%s", rv);
		pthread_create(&wt[i], NULL, watch_worker, &ws[i]);
	}
	usleep(200000);
	double t0 = now_s();
	dt = run(bind_worker, w, &ok, &fail);
	printf("apiserver: binding POSTs    %8.0f /s  (%ld ok, %ld failed, %d keep-alive clients, %d watchers)\n",
	       (double)ok / dt, ok, fail, CLIENTS, WATCHERS);
	/* wait until every watcher saw every binding (or 30 s) */
	long want = (long)ok * WATCHERS, got = 0;
	double deadline = now_s() + 30;
	while (now_s() < deadline) {
		got = 0;
		for (int i = 0; i < WATCHERS; i++)
			got += atomic_load(&watch_events[i]);
		if (got >= want)
			break;
		usleep(2000);
	}
	double wdt = now_s() - t0;
	printf("apiserver: watch events     %8.0f /s  delivered (%ld of %ld to %d watchers in %.2f s)\n", (double)got / wdt,
	       got, want, WATCHERS, wdt);
	atomic_store(&stop_watch, 1);
	for (int i = 0; i < WATCHERS; i++)
		pthread_join(wt[i], NULL);
	dt = run(get_worker, w, &ok, &fail);
	printf("apiserver: GETs             %8.0f /s  (%ld ok, %ld failed, %d keep-alive clients)\n", (double)ok / dt, ok, fail,
	       CLIENTS);
	apis_server_stop(s);
	curl_global_cleanup();
	return 0;
}
