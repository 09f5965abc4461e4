/* Process, build and REST client metrics (kube/procmetrics.h). */
#include "kube/procmetrics.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kube/metrics.h"
#include "kube/rest.h"
#include "kube/version.h"

#define MAX_CLIENTS 8
#define MAX_COUNTS 64

struct seen_count {
	char verb[8];
	int code;
	uint64_t count;
};

struct kube_std_metrics {
	struct kube_metric *cpu, *open_fds, *max_fds, *vmem, *vmem_max, *rss, *start, *build, *requests, *latency;
	struct kube_metric *req_size, *resp_size, *rate_limiter, *retries;
	struct kube_client *clients[MAX_CLIENTS];
	int nclients;
	char *host;
	pthread_mutex_t mu; /* guards cpu_seen and seen */
	double cpu_seen;
	struct seen_count seen[MAX_CLIENTS][MAX_COUNTS];
	int nseen[MAX_CLIENTS];
};

#if defined(__clang__)
#define COMPILER "clang"
#elif defined(__GNUC__)
#define COMPILER "gcc"
#else
#define COMPILER "cc"
#endif
#if defined(__x86_64__)
#define PLATFORM "linux/amd64"
#elif defined(__aarch64__)
#define PLATFORM "linux/arm64"
#else
#define PLATFORM "linux/unknown"
#endif

static void observe_latency(void *ctx, const char *verb, int code, double seconds)
{
	(void)code;
	struct kube_std_metrics *m = ctx;
	kube_histogram_observe(m->latency, seconds, KUBE_LABELS(m->host, verb));
}

/* rest_client_request_size_bytes, _response_size_bytes, _rate_limiter_duration_seconds and
 * _request_retries_total (k8s.io/client-go/rest: request.go observes the sizes and the limiter's
 * wait per attempt, and counts a retry with the code that caused it). */
static void observe_detail(void *ctx, const struct kube_request_observation *ob)
{
	struct kube_std_metrics *m = ctx;
	kube_histogram_observe(m->req_size, (double)ob->request_bytes, KUBE_LABELS(m->host, ob->verb));
	kube_histogram_observe(m->resp_size, (double)ob->response_bytes, KUBE_LABELS(m->host, ob->verb));
	kube_histogram_observe(m->rate_limiter, ob->rate_limiter_seconds, KUBE_LABELS(m->host, ob->verb));
	if (ob->retry) {
		char code[16];
		if (ob->code)
			snprintf(code, sizeof code, "%d", ob->code);
		else
			snprintf(code, sizeof code, "<error>");
		kube_counter_inc(m->retries, KUBE_LABELS(code, m->host, ob->verb));
	}
}

struct kube_std_metrics *kube_std_metrics_new(struct kube_metrics_registry *reg, struct kube_client *const *clients,
					      const char *host)
{
	struct kube_std_metrics *m = calloc(1, sizeof *m);
	if (!m || !(m->host = strdup(host ? host : ""))) {
		free(m);
		return NULL;
	}
	for (int i = 0; clients && clients[i] && m->nclients < MAX_CLIENTS; i++)
		m->clients[m->nclients++] = clients[i];
	m->cpu = kube_counter_new(reg, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", 0, NULL);
	m->open_fds = kube_gauge_new(reg, "process_open_fds", "Number of open file descriptors.", 0, NULL);
	m->max_fds = kube_gauge_new(reg, "process_max_fds", "Maximum number of open file descriptors.", 0, NULL);
	m->vmem = kube_gauge_new(reg, "process_virtual_memory_bytes", "Virtual memory size in bytes.", 0, NULL);
	m->vmem_max = kube_gauge_new(reg, "process_virtual_memory_max_bytes",
				     "Maximum amount of virtual memory available in bytes.", 0, NULL);
	m->rss = kube_gauge_new(reg, "process_resident_memory_bytes", "Resident memory size in bytes.", 0, NULL);
	m->start = kube_gauge_new(reg, "process_start_time_seconds",
				  "Start time of the process since unix epoch in seconds.", 0, NULL);
	m->build = kube_gauge_new(reg, "kubernetes_build_info",
				  "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
				  9, KUBE_LABELS("build_date", "compiler", "git_commit", "git_tree_state", "git_version", "go_version",
						 "major", "minor", "platform"));
	m->requests = kube_counter_new(reg, "rest_client_requests_total",
				       "Number of HTTP requests, partitioned by status code, method, and host.", 3,
				       KUBE_LABELS("code", "host", "method"));
	static const double lat_buckets[] = {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
	m->latency = kube_histogram_new(reg, "rest_client_request_duration_seconds",
					"Request latency in seconds. Broken down by verb, and host.", 2, KUBE_LABELS("host", "verb"),
					lat_buckets, 12);
	static const double size_buckets[] = {64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};
	m->req_size = kube_histogram_new(reg, "rest_client_request_size_bytes",
					 "Request size in bytes. Broken down by verb and host.", 2, KUBE_LABELS("host", "verb"),
					 size_buckets, 11);
	m->resp_size = kube_histogram_new(reg, "rest_client_response_size_bytes",
					  "Response size in bytes. Broken down by verb and host.", 2, KUBE_LABELS("host", "verb"),
					  size_buckets, 11);
	m->rate_limiter = kube_histogram_new(reg, "rest_client_rate_limiter_duration_seconds",
					     "Client side rate limiter latency in seconds. Broken down by verb, and host.", 2,
					     KUBE_LABELS("host", "verb"), lat_buckets, 12);
	m->retries = kube_counter_new(reg, "rest_client_request_retries_total",
				      "Number of request retries, partitioned by status code, verb, and host.", 3,
				      KUBE_LABELS("code", "host", "verb"));
	if (!m->req_size || !m->resp_size || !m->rate_limiter || !m->retries)
		m->cpu = NULL; /* fail below */
	if (!m->cpu || !m->open_fds || !m->max_fds || !m->vmem || !m->vmem_max || !m->rss || !m->start || !m->build ||
	    !m->requests || !m->latency) {
		free(m->host);
		free(m);
		return NULL;
	}
	/* schedkit builds are reproducible: no build date or commit is compiled in */
	kube_gauge_set(m->build, 1, KUBE_LABELS("1970-01-01T00:00:00Z", COMPILER, "", "", SCHEDKIT_KUBE_VERSION, "",
						SCHEDKIT_KUBE_MAJOR, SCHEDKIT_KUBE_MINOR, PLATFORM));
	pthread_mutex_init(&m->mu, NULL);
	if (m->nclients) {
		kube_client_set_observer(m->clients[0], observe_latency, m);
		kube_client_set_detail_observer(m->clients[0], observe_detail, m);
	}
	kube_metrics_set_collector(reg, kube_std_metrics_collect, m);
	kube_std_metrics_collect(m);
	return m;
}

void kube_std_metrics_free(struct kube_std_metrics *m)
{
	if (!m)
		return;
	if (m->nclients) {
		kube_client_set_observer(m->clients[0], NULL, NULL);
		kube_client_set_detail_observer(m->clients[0], NULL, NULL);
	}
	pthread_mutex_destroy(&m->mu);
	free(m->host);
	free(m);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory stream's own descriptor */
}

/* /proc/self/stat fields 14-15 (utime, stime), 22 (starttime), 23 (vsize), 24 (rss pages). */
static int read_stat(double *cpu_s, double *start_ticks, double *vsize, double *rss_pages)
{
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return -1;
	char buf[2048];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return -1;
	unsigned long long v[24] = {0};
	int k = 0;
	for (char *t = strtok(p + 2, " "); t && k < 24; t = strtok(NULL, " "))
		v[k++] = strtoull(t, NULL, 10);
	if (k < 22)
		return -1;
	/* v[0] is field 3 (state): field N is v[N - 3] */
	double hz = (double)sysconf(_SC_CLK_TCK);
	*cpu_s = (double)(v[11] + v[12]) / hz;
	*start_ticks = (double)v[19] / hz;
	*vsize = (double)v[20];
	*rss_pages = (double)v[21];
	return 0;
}

static double boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	double bt = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "btime ", 6)) {
			bt = strtod(line + 6, NULL);
			break;
		}
	if (f)
		fclose(f);
	return bt;
}

static void collect_rest(struct kube_std_metrics *m)
{
	for (int c = 0; c < m->nclients; c++) {
		struct kube_request_count now[MAX_COUNTS];
		size_t n = kube_client_request_counts(m->clients[c], now, MAX_COUNTS);
		if (n > MAX_COUNTS)
			n = MAX_COUNTS;
		for (size_t i = 0; i < n; i++) {
			int j = 0;
			while (j < m->nseen[c] && (m->seen[c][j].code != now[i].code || strcmp(m->seen[c][j].verb, now[i].verb)))
				j++;
			if (j == m->nseen[c]) {
				if (j == MAX_COUNTS)
					continue;
				m->nseen[c]++;
				m->seen[c][j] = (struct seen_count){ .code = now[i].code };
				memcpy(m->seen[c][j].verb, now[i].verb, sizeof m->seen[c][j].verb);
				m->seen[c][j].verb[sizeof m->seen[c][j].verb - 1] = 0;
			}
			uint64_t delta = now[i].count - m->seen[c][j].count;
			m->seen[c][j].count = now[i].count;
			char code[16];
			if (now[i].code)
				snprintf(code, sizeof code, "%d", now[i].code);
			else
				snprintf(code, sizeof code, "<error>");
			kube_counter_add(m->requests, (double)delta, KUBE_LABELS(code, m->host, now[i].verb));
		}
	}
}

void kube_std_metrics_collect(void *arg)
{
	struct kube_std_metrics *m = arg;
	double cpu, start, vsize, rss;
	pthread_mutex_lock(&m->mu);
	if (read_stat(&cpu, &start, &vsize, &rss) == 0) {
		if (cpu > m->cpu_seen) {
			kube_counter_add(m->cpu, cpu - m->cpu_seen, NULL);
			m->cpu_seen = cpu;
		}
		kube_gauge_set(m->vmem, vsize, NULL);
		kube_gauge_set(m->rss, rss * (double)sysconf(_SC_PAGESIZE), NULL);
		kube_gauge_set(m->start, boot_time() + start, NULL);
	}
	int fds = count_fds();
	if (fds >= 0)
		kube_gauge_set(m->open_fds, fds, NULL);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		kube_gauge_set(m->max_fds, (double)rl.rlim_cur, NULL);
	if (getrlimit(RLIMIT_AS, &rl) == 0)
		kube_gauge_set(m->vmem_max, (double)rl.rlim_cur, NULL); /* unlimited: 2^64-1, as client_golang */
	collect_rest(m);
	pthread_mutex_unlock(&m->mu);
}
