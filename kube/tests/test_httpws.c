/* Tests for the WebSocket channel (kube/httpws.c) on a real server, with a raw RFC 6455 client
 * written here: the handshake (path, subprotocol, guard; a table), the retained message first,
 * order of published messages, a message longer than a frame arriving whole from continuation
 * frames, the client count, and a client that does not read losing its oldest messages without
 * the rest being cut. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
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

#include "kube/httpserver.h"
#include "kube/httpws.h"

static int guard(void *ctx, const char *method, const char *path, const char *authz, char *msg, size_t n)
{
	(void)ctx;
	if (!strcmp(authz, "Bearer good"))
		return 0;
	if (!*authz) {
		snprintf(msg, n, "forbidden: User \"system:anonymous\" cannot %s path \"%s\"", method, path);
		return 403;
	}
	return 401;
}

struct fixture {
	struct kube_http_server *srv;
	struct kube_ws_channel *ch;
	int port;
};

static struct fixture *start(const char *const *open_paths)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct kube_http_server_opts o = { .bind_address = "127.0.0.1", .port = 0, .name = "wstest" };
	char *err = NULL;
	assert_int_equal(kube_http_server_new(&o, &f->srv, &err), 0);
	assert_int_equal(kube_http_set_guard(f->srv, guard, NULL, open_paths), 0);
	assert_int_equal(kube_http_add_websocket(f->srv, "/ws", &f->ch), 0);
	assert_int_equal(kube_http_add_websocket(f->srv, "/other", NULL), -1); /* one channel */
	assert_int_equal(kube_http_server_start(f->srv, &err), 0);
	f->port = kube_http_server_port(f->srv);
	return f;
}

static void stop(struct fixture *f)
{
	kube_http_server_free(f->srv);
	free(f);
}

/* ---- a minimal client ---- */

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

static int read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Sends the upgrade; returns the status code of the answer (its headers are consumed). */
static int handshake(int fd, const char *path, const char *proto, const char *authz)
{
	char req[1024];
	int n = snprintf(req, sizeof req,
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s%s%s%s%s%s\r\n",
			 path, proto ? "Sec-WebSocket-Protocol: " : "", proto ? proto : "", proto ? "\r\n" : "",
			 authz ? "Authorization: " : "", authz ? authz : "", authz ? "\r\n" : "");
	assert_int_equal(send(fd, req, (size_t)n, 0), n);
	char head[4096];
	size_t len = 0;
	while (len + 1 < sizeof head) {
		if (read_full(fd, head + len, 1, 3000) != 0)
			break;
		len++;
		if (len >= 4 && !memcmp(head + len - 4, "\r\n\r\n", 4))
			break;
	}
	head[len] = 0;
	int code = 0;
	if (sscanf(head, "HTTP/1.1 %d", &code) != 1)
		return -1;
	if (code == 101) {
		/* the accept value for the RFC's sample key */
		assert_non_null(strstr(head, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
		assert_non_null(strstr(head, KUBE_WS_SUBPROTOCOL));
	}
	return code;
}

struct frame_msg {
	int opcode;      /* 1 text, 8 close */
	char *data;      /* whole message, NUL-terminated */
	size_t len;
	int close_code;
	int frames;      /* frames it came in */
};

/* Reads one whole message (continuations joined). 0, or -1 on timeout/EOF. */
static int read_message(int fd, struct frame_msg *m, int timeout_ms)
{
	memset(m, 0, sizeof *m);
	for (;;) {
		unsigned char h[2];
		if (read_full(fd, h, 2, timeout_ms) != 0)
			return -1;
		assert_int_equal(h[1] & 0x80, 0); /* a server never masks */
		uint64_t n = h[1] & 0x7f;
		if (n == 126) {
			unsigned char e[2];
			assert_int_equal(read_full(fd, e, 2, timeout_ms), 0);
			n = ((uint64_t)e[0] << 8) | e[1];
		} else if (n == 127) {
			unsigned char e[8];
			assert_int_equal(read_full(fd, e, 8, timeout_ms), 0);
			n = 0;
			for (int i = 0; i < 8; i++)
				n = (n << 8) | e[i];
		}
		int op = h[0] & 0x0f;
		if (op != 0)
			m->opcode = op;
		m->data = realloc(m->data, m->len + n + 1);
		assert_int_equal(read_full(fd, m->data + m->len, n, timeout_ms), 0);
		m->len += n;
		m->data[m->len] = 0;
		m->frames++;
		if (h[0] & 0x80)
			break;
	}
	if (m->opcode == 8 && m->len >= 2) {
		m->close_code = ((unsigned char)m->data[0] << 8) | (unsigned char)m->data[1];
		memmove(m->data, m->data + 2, m->len - 2);
		m->len -= 2;
		m->data[m->len] = 0;
	}
	return 0;
}

static void wait_clients(struct kube_ws_channel *ch, int want)
{
	for (int i = 0; i < 300 && kube_ws_clients(ch) != want; i++)
		usleep(10 * 1000);
	assert_int_equal(kube_ws_clients(ch), want);
}

/* ---- tests ---- */

struct hs_case {
	const char *name;
	bool open;          /* the path is an open path of the guard */
	const char *path, *proto, *authz;
	int code;           /* expected status of the upgrade */
	const char *first;  /* the first message: text, or "close:<code>:<reason part>" */
};

static void test_handshakes(void **state)
{
	(void)state;
	static const struct hs_case cases[] = {
		{ "open path, anonymous", true, "/ws", KUBE_WS_SUBPROTOCOL, NULL, 101, "{\"retained\":1}" },
		{ "query string ignored", true, "/ws?x=1", KUBE_WS_SUBPROTOCOL, NULL, 101, "{\"retained\":1}" },
		{ "guarded, good token", false, "/ws", KUBE_WS_SUBPROTOCOL, "Bearer good", 101, "{\"retained\":1}" },
		{ "guarded, anonymous", false, "/ws", KUBE_WS_SUBPROTOCOL, NULL, 101,
		  "close:1008:forbidden: User \"system:anonymous\" cannot GET path \"/ws\"" },
		{ "guarded, bad token", false, "/ws", KUBE_WS_SUBPROTOCOL, "Bearer bad", 101, "close:1008:Unauthorized" },
		{ "open path, a token still goes to the guard", true, "/ws", KUBE_WS_SUBPROTOCOL, "Bearer bad", 101,
		  "close:1008:Unauthorized" },
		{ "unknown path", true, "/nope", KUBE_WS_SUBPROTOCOL, NULL, 0, NULL },
		{ "no subprotocol", true, "/ws", NULL, NULL, 0, NULL },
		{ "another subprotocol", true, "/ws", "chat", NULL, 0, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct hs_case *c = &cases[i];
		print_message("case: %s\n", c->name);
		struct fixture *f = start(c->open ? (const char *const[]){ "/ws", NULL } : (const char *const[]){ NULL });
		assert_int_equal(kube_ws_publish(f->ch, "{\"retained\":1}", 14, true), 0);
		int fd = dial(f->port);
		int code = handshake(fd, c->path, c->proto, c->authz);
		if (c->code != 101) {
			assert_true(code != 101); /* refused (lws closes or answers an error) */
		} else {
			assert_int_equal(code, 101);
			struct frame_msg m;
			assert_int_equal(read_message(fd, &m, 3000), 0);
			if (!strncmp(c->first, "close:", 6)) {
				assert_int_equal(m.opcode, 8);
				assert_int_equal(m.close_code, atoi(c->first + 6));
				assert_string_equal(m.data, strchr(c->first + 6, ':') + 1);
				assert_int_equal(kube_ws_clients(f->ch), 0);
			} else {
				assert_int_equal(m.opcode, 1);
				assert_string_equal(m.data, c->first);
				wait_clients(f->ch, 1);
			}
			free(m.data);
		}
		close(fd);
		if (c->code == 101 && strncmp(c->first, "close:", 6))
			wait_clients(f->ch, 0);
		stop(f);
	}
}

static void test_order_and_long_messages(void **state)
{
	(void)state;
	struct fixture *f = start((const char *const[]){ "/ws", NULL });
	int fd = dial(f->port);
	assert_int_equal(handshake(fd, "/ws", KUBE_WS_SUBPROTOCOL, NULL), 101);
	wait_clients(f->ch, 1);
	/* no retained message yet: the first one is the first published */
	size_t big_len = 3 * KUBE_WS_FRAME + 123;
	char *big = malloc(big_len);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(kube_ws_publish(f->ch, "one", 3, false), 0);
	assert_int_equal(kube_ws_publish(f->ch, big, big_len, true), 0);
	assert_int_equal(kube_ws_publish(f->ch, "three", 5, false), 0);
	struct frame_msg m;
	assert_int_equal(read_message(fd, &m, 3000), 0);
	assert_string_equal(m.data, "one");
	free(m.data);
	assert_int_equal(read_message(fd, &m, 3000), 0);
	assert_int_equal(m.opcode, 1);
	assert_int_equal(m.len, big_len);
	assert_int_equal(m.frames, 4);
	assert_memory_equal(m.data, big, big_len);
	free(m.data);
	assert_int_equal(read_message(fd, &m, 3000), 0);
	assert_string_equal(m.data, "three");
	free(m.data);
	/* a second client starts from the retained (long) message */
	int fd2 = dial(f->port);
	assert_int_equal(handshake(fd2, "/ws", KUBE_WS_SUBPROTOCOL, NULL), 101);
	assert_int_equal(read_message(fd2, &m, 3000), 0);
	assert_int_equal(m.len, big_len);
	free(m.data);
	wait_clients(f->ch, 2);
	close(fd);
	close(fd2);
	wait_clients(f->ch, 0);
	assert_int_equal(kube_ws_dropped(f->ch), 0);
	free(big);
	stop(f);
}

static void test_slow_client_drops_oldest(void **state)
{
	(void)state;
	struct fixture *f = start((const char *const[]){ "/ws", NULL });
	int fd = dial(f->port);
	assert_int_equal(handshake(fd, "/ws", KUBE_WS_SUBPROTOCOL, NULL), 101);
	wait_clients(f->ch, 1);
	enum { N = 400, LEN = 40000 };
	char *buf = malloc(LEN);
	for (int i = 0; i < N; i++) {
		memset(buf, 'x', LEN);
		int k = snprintf(buf, 32, "%06d:", i);
		buf[k] = 'x';
		assert_int_equal(kube_ws_publish(f->ch, buf, LEN, false), 0);
	}
	for (int i = 0; i < 300 && kube_ws_dropped(f->ch) == 0; i++)
		usleep(10 * 1000);
	assert_true(kube_ws_dropped(f->ch) > 0);
	/* what arrives is whole messages in increasing order, the last one included */
	int last = -1, got = 0;
	struct frame_msg m;
	while (last != N - 1 && read_message(fd, &m, 3000) == 0) {
		assert_int_equal(m.opcode, 1);
		assert_int_equal(m.len, LEN);
		int seq = atoi(m.data);
		assert_true(seq > last);
		last = seq;
		got++;
		free(m.data);
	}
	assert_int_equal(last, N - 1);
	assert_int_equal((uint64_t)got + kube_ws_dropped(f->ch), N);
	free(buf);
	close(fd);
	stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshakes),
		cmocka_unit_test(test_order_and_long_messages),
		cmocka_unit_test(test_slow_client_drops_oldest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
