/* bench_apiserver.c — throughput of schedkit-apiserver on this machine, the server in a child
 * process (so its CPU time is its own): pod creates/s, binding POSTs/s with 5 concurrent
 * keep-alive clients, GETs/s with 5 clients, watch events/s delivered to 10 watchers while the
 * bindings run, and the scheduler's pattern ("schedule": per pod a binding POST and an
 * events.k8s.io Event POST from 16 clients, while one pod watch, one node watch and the
 * scheduler's 14 other watches are open), with the server's CPU seconds and context switches
 * per phase. Under callgrind the child zeroes its counts at the start of the "schedule" phase
 * and dumps them at its end (valgrind --tool=callgrind --callgrind-out-file=F.%p: the child's
 * file, part 1, is that phase alone). Prints figures only. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <valgrind/callgrind.h>

#include "e2e/apiserver/server.h"

#define CLIENTS 5
#define WATCHERS 10

static int npods = 20000;
static char base[200];
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
	atomic_long *count;         /* newline-terminated events received */
	char url[512];
};

static size_t count_lines(char *p, size_t sz, size_t n, void *u)
{
	struct watcher *w = u;
	long k = 0;
	for (size_t i = 0; i < sz * n; i++)
		if (p[i] == '\n')
			k++;
	atomic_fetch_add(w->count, k);
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
	curl_easy_setopt(c, CURLOPT_URL, w->url);
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

/* The current resourceVersion (of a one-item pod list). */
static void current_rv(char rv[32])
{
	char url[512];
	rv[0] = 0;
	CURL *c = handle();
	snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods?limit=1", base);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, grab_rv);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, rv);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
}

static double run_n(void *(*fn)(void *), struct worker *w, int n, long *ok, long *fail)
{
	pthread_t t[64];
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].id = i;
		pthread_create(&t[i], NULL, fn, &w[i]);
	}
	*ok = *fail = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		*ok += w[i].ok;
		*fail += w[i].fail;
	}
	return now_s() - t0;
}

static double run(void *(*fn)(void *), struct worker *w, long *ok, long *fail)
{
	return run_n(fn, w, CLIENTS, ok, fail);
}

/* ---------------- the server process ---------------- */

static int cmd_fd = -1, reply_fd = -1;
static pid_t server_pid;

/* The child: serves until 'q'; 'u' answers its rusage, 'z'/'d' zero/dump callgrind's counts. */
static void server_main(int cmd, int reply, int history)
{
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.history_events = history;
	struct apis_server *s;
	if (apis_server_start(&o, &s) < 0)
		_exit(1);
	int port = apis_server_port(s);
	if (write(reply, &port, sizeof port) != (ssize_t)sizeof port)
		_exit(1);
	char ch;
	while (read(cmd, &ch, 1) == 1 && ch != 'q') {
		if (ch == 'u') {
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			if (write(reply, &ru, sizeof ru) != (ssize_t)sizeof ru)
				break;
			continue;
		}
		if (ch == 'z')
			CALLGRIND_ZERO_STATS;
		else if (ch == 'd')
			CALLGRIND_DUMP_STATS_AT("schedule");
		if (write(reply, "k", 1) != 1)
			break;
	}
	apis_server_stop(s);
	_exit(0);
}

static int server_spawn(int history)
{
	int c[2], r[2];
	if (pipe(c) < 0 || pipe(r) < 0)
		return -1;
	server_pid = fork();
	if (server_pid < 0)
		return -1;
	if (server_pid == 0) {
		close(c[1]);
		close(r[0]);
		server_main(c[0], r[1], history);
	}
	close(c[0]);
	close(r[1]);
	cmd_fd = c[1];
	reply_fd = r[0];
	int port;
	if (read(reply_fd, &port, sizeof port) != (ssize_t)sizeof port)
		return -1;
	snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
	return 0;
}

static void server_cmd(char ch, void *reply, size_t n)
{
	char ack;
	if (write(cmd_fd, &ch, 1) != 1 || read(reply_fd, reply ? reply : &ack, reply ? n : 1) <= 0)
		fprintf(stderr, "bench: the server process is gone\n");
}

struct server_usage {
	double cpu;                 /* user + system seconds, all threads */
	long csw;                   /* voluntary + involuntary context switches */
	long vcsw;                  /* voluntary ones (the thread blocked) */
};

static struct server_usage server_usage(void)
{
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	server_cmd('u', &ru, sizeof ru);
	return (struct server_usage){
		.cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6,
		.csw = ru.ru_nvcsw + ru.ru_nivcsw,
		.vcsw = ru.ru_nvcsw,
	};
}

static void print_usage(const char *phase, struct server_usage a, struct server_usage b, long n)
{
	printf("apiserver:   server %-14s CPU %.3f s (%.1f us per request), %ld context switches (%.2f per request)\n",
	       phase, b.cpu - a.cpu, n > 0 ? (b.cpu - a.cpu) * 1e6 / (double)n : 0, b.csw - a.csw,
	       n > 0 ? (double)(b.csw - a.csw) / (double)n : 0);
}

/* ---------------- the scheduler's pattern ---------------- */

#define SCHED_CLIENTS 16
static int nsched = 10000;
static double sched_rate = 5000; /* pods/s over all clients (SK_BENCH_SCHED_RATE; 0 = as fast as they go) */
static double sched_t0;

static void *schedule_worker(void *arg)
{
	struct worker *w = arg;
	CURL *c = handle();
	char body[1024], path[256];
	for (int i = w->id; i < nsched; i += SCHED_CLIENTS) {
		/* the scheduler's binders bind pods as the scheduling loop hands them over: pace them */
		double due = sched_rate > 0 ? sched_t0 + (double)i / sched_rate : 0, now = now_s();
		if (due > now)
			usleep((useconds_t)((due - now) * 1e6));
		snprintf(path, sizeof path, "/api/v1/namespaces/sched/pods/s%d/binding", i);
		snprintf(body, sizeof body,
			 "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s%d\",\"namespace\":\"sched\"},"
			 "\"target\":{\"kind\":\"Node\",\"name\":\"node-%d\"}}",
			 i, i % 100);
		if (post(c, path, body) == 201)
			w->ok++;
		else
			w->fail++;
		snprintf(body, sizeof body,
			 "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"s%d.%x\","
			 "\"namespace\":\"sched\"},\"eventTime\":\"2026-12-02T06:00:00.000000Z\",\"reportingController\":"
			 "\"default-scheduler\",\"reportingInstance\":\"default-scheduler-bench\",\"action\":\"Binding\","
			 "\"reason\":\"Scheduled\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"sched\",\"name\":\"s%d\","
			 "\"apiVersion\":\"v1\"},\"note\":\"Successfully assigned sched/s%d to node-%d\",\"type\":\"Normal\"}",
			 i, (unsigned)i * 2654435761u, i, i, i % 100);
		if (post(c, "/apis/events.k8s.io/v1/namespaces/sched/events", body) == 201)
			w->ok++;
		else
			w->fail++;
	}
	curl_easy_cleanup(c);
	return NULL;
}

/* The watches schedkit-scheduler keeps besides pods and nodes (scheduler/daemon: PDBs, the
 * volume informers, the listers). */
static const char *const IDLE_WATCHES[] = {
	"/apis/policy/v1/poddisruptionbudgets", "/api/v1/persistentvolumeclaims", "/api/v1/persistentvolumes",
	"/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csinodes",
	"/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csistoragecapacities",
	"/apis/storage.k8s.io/v1/volumeattachments", "/api/v1/services", "/api/v1/replicationcontrollers",
	"/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets", "/api/v1/namespaces", "/api/v1/configmaps",
};
#define NIDLE (sizeof IDLE_WATCHES / sizeof IDLE_WATCHES[0])

static void schedule_phase(void)
{
	CURL *c = handle();
	post(c, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"sched\"}}");
	for (int i = 0; i < nsched; i++) {
		char b[512];
		snprintf(b, sizeof b,
			 "{\"metadata\":{\"name\":\"s%d\",\"labels\":{\"app\":\"sched\"}},\"spec\":{\"containers\":[{\"name\":"
			 "\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}",
			 i);
		post(c, "/api/v1/namespaces/sched/pods", b);
	}
	curl_easy_cleanup(c);
	char rv[32];
	current_rv(rv);
	static atomic_long pod_events, other_events;
	struct watcher ws[2 + NIDLE];
	pthread_t wt[2 + NIDLE];
	for (size_t i = 0; i < 2 + NIDLE; i++) {
		const char *path = i == 0 ? "/api/v1/pods" : i == 1 ? "/api/v1/nodes" : IDLE_WATCHES[i - 2];
		ws[i].count = i == 0 ? &pod_events : &other_events;
		snprintf(ws[i].url, sizeof ws[i].url, "%s%s?watch=true&resourceVersion=%s&timeoutSeconds=600", base, path,
			 rv);
		pthread_create(&wt[i], NULL, watch_worker, &ws[i]);
	}
	usleep(300000);
	server_cmd('z', NULL, 0);
	struct server_usage u0 = server_usage();
	struct worker w[SCHED_CLIENTS];
	long ok, fail;
	double t0 = now_s();
	sched_t0 = t0;
	run_n(schedule_worker, w, SCHED_CLIENTS, &ok, &fail);
	double deadline = now_s() + 60;
	while (atomic_load(&pod_events) < nsched && now_s() < deadline)
		usleep(1000);
	double dt = now_s() - t0;
	struct server_usage u1 = server_usage();
	server_cmd('d', NULL, 0);
	printf("apiserver: schedule         %8.0f pods/s (%d pods paced at %.0f/s: %ld of %d POSTs ok, %ld failed, %d clients; pod "
	       "watch got %ld events, %d other watches)\n",
	       (double)nsched / dt, nsched, sched_rate, ok, 2 * nsched, fail, SCHED_CLIENTS, atomic_load(&pod_events),
	       (int)NIDLE + 1);
	printf("apiserver:   server CPU per pod %.1f us (binding + event + watch delivery), %.2f context switches per pod "
	       "(%.2f voluntary)\n",
	       (u1.cpu - u0.cpu) * 1e6 / nsched, (double)(u1.csw - u0.csw) / nsched, (double)(u1.vcsw - u0.vcsw) / nsched);
	atomic_store(&stop_watch, 1);
	for (size_t i = 0; i < 2 + NIDLE; i++)
		pthread_join(wt[i], NULL);
	atomic_store(&stop_watch, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		npods = atoi(argv[1]);
	if (getenv("SK_BENCH_PODS"))
		npods = atoi(getenv("SK_BENCH_PODS"));
	if (npods <= 0)
		npods = 20000;
	if (getenv("SK_BENCH_SCHED_PODS"))
		nsched = atoi(getenv("SK_BENCH_SCHED_PODS"));
	if (nsched <= 0)
		nsched = 10000;
	if (getenv("SK_BENCH_SCHED_RATE"))
		sched_rate = atof(getenv("SK_BENCH_SCHED_RATE"));
	const char *only = getenv("SK_BENCH_ONLY"); /* "schedule": that phase alone */
	bool sched_only = only && !strcmp(only, "schedule");
	signal(SIGPIPE, SIG_IGN);
	/* fork before any thread exists (libcurl's resolver, the server's) */
	if (server_spawn(npods * 2 + nsched * 3 + 1000) < 0) {
		fprintf(stderr, "cannot start server\n");
		return 1;
	}
	curl_global_init(CURL_GLOBAL_ALL);
	CURL *c = handle();
	for (int i = 0; i < 100; i++) {
		char b[256];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"node-%d\"},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"500\"}}}", i);
		post(c, "/api/v1/nodes", b);
	}
	curl_easy_cleanup(c);
	if (sched_only) {
		schedule_phase();
		goto out;
	}
	struct worker w[CLIENTS];
	long ok, fail;
	struct server_usage u0 = server_usage();
	double dt = run(create_worker, w, &ok, &fail);
	struct server_usage u1 = server_usage();
	printf("apiserver: pod creates      %8.0f /s  (%ld ok, %ld failed, %d clients)\n", (double)ok / dt, ok, fail, CLIENTS);
	print_usage("pod creates", u0, u1, ok + fail);

	/* watchers start from the current resourceVersion */
	char rv[32];
	current_rv(rv);
	static atomic_long watch_events[WATCHERS];
	struct watcher ws[WATCHERS];
	pthread_t wt[WATCHERS];
	for (int i = 0; i < WATCHERS; i++) {
		ws[i].count = &watch_events[i];
		snprintf(ws[i].url, sizeof ws[i].url,
			 "%s/api/v1/namespaces/default/pods?watch=true&resourceVersion=%s&timeoutSeconds=600", base, rv);
		pthread_create(&wt[i], NULL, watch_worker, &ws[i]);
	}
	usleep(200000);
	u0 = server_usage();
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
	u1 = server_usage();
	printf("apiserver: watch events     %8.0f /s  delivered (%ld of %ld to %d watchers in %.2f s)\n", (double)got / wdt,
	       got, want, WATCHERS, wdt);
	print_usage("bindings", u0, u1, ok + fail);
	atomic_store(&stop_watch, 1);
	for (int i = 0; i < WATCHERS; i++)
		pthread_join(wt[i], NULL);
	atomic_store(&stop_watch, 0);
	u0 = server_usage();
	dt = run(get_worker, w, &ok, &fail);
	u1 = server_usage();
	printf("apiserver: GETs             %8.0f /s  (%ld ok, %ld failed, %d keep-alive clients)\n", (double)ok / dt, ok, fail,
	       CLIENTS);
	print_usage("GETs", u0, u1, ok + fail);
	schedule_phase();
out:
	if (write(cmd_fd, "q", 1) != 1)
		fprintf(stderr, "bench: the server process is gone\n");
	waitpid(server_pid, NULL, 0);
	curl_global_cleanup();
	return 0;
}
