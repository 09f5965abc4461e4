/* test_http.c — schedkit-apiserver's connection handling (e2e/apiserver/http.c) over raw
 * sockets, on a server with a one-worker minimum: watch streams each hold a worker and the pool
 * grows so that requests on other connections are still served (idle extra workers retire, but
 * never the last one waiting for events); keep-alive connections
 * alternate between idle (in the epoll set) and served; pipelined requests are answered in
 * order; and stop ends streams and closes idle connections without hanging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "e2e/apiserver/tests/raw_conn.h"

static struct apis_server *srv;

static int start(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.workers = 1;
	o.worker_idle_ms = 50;
	return apis_server_start(&o, &srv);
}

static int connect_srv(void) { return apis_test_connect(apis_server_port(srv), 0); }

static void send_all(int fd, const char *s)
{
	assert_int_equal(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s));
}

/* Reads one whole Content-Length response into buf; returns its status code. */
static int read_response(int fd, char *buf, size_t n)
{
	size_t got = 0;
	for (;;) {
		buf[got] = 0;
		char *end = strstr(buf, "\r\n\r\n");
		if (end) {
			const char *cl = strstr(buf, "Content-Length: ");
			assert_non_null(cl);
			size_t want = (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10);
			if (got >= want) {
				assert_int_equal(got, want); /* no bytes of a later response yet: callers read in turn */
				break;
			}
		}
		assert_true(got + 1 < n);
		ssize_t r = recv(fd, buf + got, 1, 0); /* byte by byte: stop exactly at the end */
		assert_true(r == 1);
		got++;
	}
	int code = 0;
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &code), 1);
	return code;
}

/* Waits until fd's stream carries text (a watch event), up to 5 s. */
static void expect_stream_text(int fd, const char *text)
{
	char buf[65536];
	size_t got = 0;
	while (got + 1 < sizeof buf) {
		ssize_t r = recv(fd, buf + got, sizeof buf - got - 1, 0);
		assert_true(r > 0);
		got += (size_t)r;
		buf[got] = 0;
		if (strstr(buf, text))
			return;
	}
	fail_msg("stream never carried %s", text);
}

static void test_streams_hold_workers_others_served(void **state)
{
	(void)state;
	enum { WATCHES = 6 };
	int w[WATCHES];
	for (int i = 0; i < WATCHES; i++) {
		w[i] = connect_srv();
		send_all(w[i], "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n");
	}
	for (int i = 0; i < WATCHES; i++)
		expect_stream_text(w[i], "200 OK");
	/* the extra workers idle past worker_idle_ms retire, but never the last one waiting: a new
	 * connection is still accepted and served while every other worker holds a stream */
	usleep(300000);
	/* two keep-alive clients, each going idle between its requests */
	int a = connect_srv(), b = connect_srv();
	char buf[65536];
	for (int i = 0; i < 20; i++) {
		int fd = i % 2 ? b : a;
		send_all(fd, "GET /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\n\r\n");
		assert_int_equal(read_response(fd, buf, sizeof buf), 200);
		assert_non_null(strstr(buf, "\"name\":\"default\""));
		if (i % 5 == 0)
			usleep(20000); /* long enough for the connection to be back in the epoll set */
	}
	/* pipelined: two requests in one write, answered in order on the same connection */
	send_all(a, "GET /api/v1/namespaces/kube-system HTTP/1.1\r\nHost: x\r\n\r\n"
		    "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
		    "Content-Length: 29\r\n\r\n{\"metadata\":{\"name\":\"piped\"}}");
	assert_int_equal(read_response(a, buf, sizeof buf), 200);
	assert_non_null(strstr(buf, "\"name\":\"kube-system\""));
	assert_int_equal(read_response(a, buf, sizeof buf), 201);
	assert_non_null(strstr(buf, "\"name\":\"piped\""));
	/* every stream got the create */
	for (int i = 0; i < WATCHES; i++)
		expect_stream_text(w[i], "\"name\":\"piped\"");
	/* stop with the streams and the idle keep-alive connections open: everything is closed */
	apis_server_stop(srv);
	srv = NULL;
	for (int i = 0; i < WATCHES; i++) {
		ssize_t r;
		while ((r = recv(w[i], buf, sizeof buf, 0)) > 0)
			;
		assert_int_equal(r, 0);
		close(w[i]);
	}
	assert_int_equal(recv(a, buf, sizeof buf, 0), 0);
	assert_int_equal(recv(b, buf, sizeof buf, 0), 0);
	close(a);
	close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_streams_hold_workers_others_served, start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
