/* Tests for the prioritize verb of several extenders at once (scheduler/framework/extender_parallel.c,
 * upstream prioritizeNodes in pkg/scheduler/schedule_one.go). The scripted server here is a
 * rendezvous: a thread per connection, and a prioritize request is answered only once `need`
 * requests are in flight together (else, after a timeout, with HTTP 500: no scores). So two
 * extenders' scores both arrive only when their calls overlapped; called one after the other, the
 * first would time out. The server records the most requests it saw in flight at once. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/framework/extender.h"
#include "scheduler/tests/fixtures.h"

#define NN 3

static struct {
	int lfd, port;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int need;        /* requests that must be in flight together before any is answered */
	int wait_ms;     /* then 500 */
	int in_flight, max_in_flight, served, timed_out;
} rv = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Reads one request (headers and Content-Length body); its path into path. -1 at EOF. */
static int read_request(int fd, char *path, size_t cap)
{
	char buf[65536];
	size_t n = 0;
	char *end = NULL;
	while (!end) {
		if (n == sizeof(buf) - 1)
			return -1;
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	char fmt[32];
	snprintf(fmt, sizeof(fmt), "%%*s %%%zus", cap - 1);
	if (sscanf(buf, fmt, path) != 1)
		return -1;
	size_t clen = 0;
	const char *cl = strcasestr(buf, "\r\nContent-Length:");
	if (cl && cl < end)
		clen = strtoul(cl + 17, NULL, 10);
	size_t have = n - (size_t)(end + 4 - buf);
	while (have < clen) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return 0;
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char path[256];
	while (read_request(fd, path, sizeof(path)) == 0) {
		pthread_mutex_lock(&rv.mu);
		rv.in_flight++;
		if (rv.in_flight > rv.max_in_flight)
			rv.max_in_flight = rv.in_flight;
		pthread_cond_broadcast(&rv.cv);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += rv.wait_ms / 1000;
		until.tv_nsec += (long)(rv.wait_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		bool met = true;
		while (rv.max_in_flight < rv.need)
			if (pthread_cond_timedwait(&rv.cv, &rv.mu, &until) != 0) {
				met = rv.max_in_flight >= rv.need;
				break;
			}
		if (!met)
			rv.timed_out++;
		else
			rv.served++;
		rv.in_flight--;
		pthread_mutex_unlock(&rv.mu);
		/* /a/... scores n1, /b/... n2, /c/... n3 */
		char body[128];
		snprintf(body, sizeof(body), "[{\"Host\":\"n%c\",\"Score\":%d}]", path[1] - 'a' + '1', path[1] - 'a' + 1);
		char reply[512];
		int k = met ? snprintf(reply, sizeof(reply),
				       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
				       strlen(body), body)
			    : snprintf(reply, sizeof(reply), "HTTP/1.1 500 Error\r\nContent-Length: 0\r\n\r\n");
		if (write(fd, reply, (size_t)k) != k)
			break;
	}
	close(fd);
	return NULL;
}

static void *accept_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(rv.lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		pthread_t t;
		if (pthread_create(&t, NULL, conn_main, (void *)(intptr_t)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
}

static struct sk_node_info *nodes[NN];
static struct sk_pod *pod;

static int setup(void **state)
{
	(void)state;
	rv.lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (rv.lfd < 0 || bind(rv.lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(rv.lfd, 16) != 0 ||
	    getsockname(rv.lfd, (struct sockaddr *)&sa, &sl) != 0)
		return -1;
	rv.port = ntohs(sa.sin_port);
	if (pthread_create(&rv.th, NULL, accept_main, NULL) != 0)
		return -1;
	for (int i = 0; i < NN; i++) {
		char text[128];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"n%d\"}}", i + 1);
		struct sk_node *n = fx_node(text);
		nodes[i] = n ? sk_node_info_new(n) : NULL;
		sk_node_unref(n);
		if (!nodes[i])
			return -1;
	}
	pod = fx_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	return pod ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	shutdown(rv.lfd, SHUT_RDWR);
	close(rv.lfd);
	pthread_join(rv.th, NULL);
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nodes[i]);
	sk_pod_unref(pod);
	return 0;
}

static struct sk_extender *ext(const char *prefix, int weight, bool prioritizer)
{
	char cfg[256];
	snprintf(cfg, sizeof(cfg), "{\"urlPrefix\":\"http://127.0.0.1:%d/%s\",%s\"weight\":%d,\"httpTimeout\":\"10s\"}",
		 rv.port, prefix, prioritizer ? "\"prioritizeVerb\":\"prioritize\"," : "\"filterVerb\":\"filter\",", weight);
	cJSON *j = cJSON_Parse(cfg);
	char *err = NULL;
	struct sk_extender *e = sk_extender_new(j, "extenders[0]", &err);
	cJSON_Delete(j);
	assert_non_null(e);
	return e;
}

static void reset(int need, int wait_ms)
{
	pthread_mutex_lock(&rv.mu);
	rv.need = need;
	rv.wait_ms = wait_ms;
	rv.in_flight = rv.max_in_flight = rv.served = rv.timed_out = 0;
	pthread_mutex_unlock(&rv.mu);
}

struct pcase {
	const char *name;
	int nprio;     /* prioritizers a, b, c (weights 1, 2, 3) */
	bool filter;   /* plus a filter-only extender (never called by prioritize) */
	int need;      /* in flight together before answering */
	int64_t want[NN];
	int max_in_flight, timed_out;
};

static const struct pcase CASES[] = {
	/* two slow extenders: each answers only once the other's request is in flight */
	{ "two prioritizers overlap", 2, false, 2, { 10, 2 * 2 * 10, 0 }, 2, 0 },
	{ "three prioritizers overlap", 3, true, 3, { 10, 40, 3 * 3 * 10 }, 3, 0 },
	/* one alone: runs on the calling thread */
	{ "one prioritizer", 1, true, 1, { 10, 0, 0 }, 1, 0 },
	/* the server waits for a partner that never comes: 500 for the only call, nothing added */
	{ "one prioritizer never met", 1, false, 2, { 0, 0, 0 }, 1, 1 },
};

static void test_prioritize_in_parallel(void **state)
{
	(void)state;
	static const char *const prefixes[] = { "a", "b", "c" };
	for (size_t c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const struct pcase *tc = &CASES[c];
		const struct sk_extender *es[4];
		int ne = 0;
		if (tc->filter)
			es[ne++] = ext("f", 1, false);
		for (int i = 0; i < tc->nprio; i++)
			es[ne++] = ext(prefixes[i], i + 1, true);
		reset(tc->need, tc->need > tc->nprio ? 300 : 5000);
		int64_t totals[NN] = { 0 };
		sk_extenders_prioritize(es, ne, pod, (const struct sk_node_info *const *)nodes, NN, totals);
		for (int k = 0; k < NN; k++)
			if (totals[k] != tc->want[k])
				fail_msg("%s: node n%d total %lld, want %lld", tc->name, k + 1, (long long)totals[k],
					 (long long)tc->want[k]);
		pthread_mutex_lock(&rv.mu);
		int mif = rv.max_in_flight, to = rv.timed_out;
		pthread_mutex_unlock(&rv.mu);
		if (mif != tc->max_in_flight || to != tc->timed_out)
			fail_msg("%s: %d in flight at most, %d timed out; want %d, %d", tc->name, mif, to, tc->max_in_flight,
				 tc->timed_out);
		for (int i = 0; i < ne; i++)
			sk_extender_free((struct sk_extender *)es[i]);
	}
}

/* A filter-only list and an empty node list make no call. */
static void test_no_call(void **state)
{
	(void)state;
	reset(1, 1000);
	const struct sk_extender *es[2] = { ext("f", 1, false), ext("a", 1, true) };
	int64_t totals[NN] = { 1, 2, 3 };
	sk_extenders_prioritize(es, 1, pod, (const struct sk_node_info *const *)nodes, NN, totals);
	sk_extenders_prioritize(es, 2, pod, (const struct sk_node_info *const *)nodes, 0, totals);
	assert_int_equal(totals[0], 1);
	assert_int_equal(totals[2], 3);
	pthread_mutex_lock(&rv.mu);
	assert_int_equal(rv.served + rv.timed_out, 0);
	pthread_mutex_unlock(&rv.mu);
	sk_extender_free((struct sk_extender *)es[0]);
	sk_extender_free((struct sk_extender *)es[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prioritize_in_parallel),
		cmocka_unit_test(test_no_call),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
