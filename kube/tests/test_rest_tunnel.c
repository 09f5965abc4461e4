/* Tests for kube/rest_tunnel.c against a real HTTPS server (kube/httpserver.c with an in-memory
 * self-signed certificate): the credential header and host it hands back, a plain request and
 * its whole answer, a WebSocket upgrade through the tunnel (101, then the channel's message), and
 * a server that is not there (an error naming it, nothing leaked). */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/config.h"
#include "kube/httpserver.h"
#include "kube/httpws.h"
#include "kube/rest_tunnel.h"
#include "kube/servingcert.h"

static void hello(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)ctx;
	kube_http_respondf(resp, 200, "text/plain", "hello %s", req->path);
}

struct fixture {
	struct kube_http_server *srv;
	struct kube_ws_channel *ch;
	struct kube_client *client;
	int port;
	char *cert, *key;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	char *err = NULL;
	assert_int_equal(kube_selfsigned_generate("localhost", (const char *const[]){ "127.0.0.1", NULL }, &f->cert, &f->key, &err), 0);
	struct kube_http_server_opts o = { .bind_address = "127.0.0.1", .tls_cert_pem = f->cert, .tls_key_pem = f->key,
					   .name = "tunnel" };
	assert_int_equal(kube_http_server_new(&o, &f->srv, &err), 0);
	assert_int_equal(kube_http_route(f->srv, "GET", "/hello", hello, NULL), 0);
	assert_int_equal(kube_http_add_websocket(f->srv, "/ws", &f->ch), 0);
	assert_int_equal(kube_http_server_start(f->srv, &err), 0);
	f->port = kube_http_server_port(f->srv);
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d", f->port);
	struct kube_config *kc = kube_config_new(url);
	kc->insecure_skip_tls_verify = true;
	kc->token = strdup("sekret");
	assert_int_equal(kube_client_new(kc, &f->client, &err), 0);
	kube_config_free(kc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kube_client_free(f->client);
	kube_http_server_free(f->srv);
	free(f->cert);
	free(f->key);
	free(f);
	return 0;
}

/* Reads until the stream ends or `until` appears; returns what was read (caller frees). */
static char *read_all(struct kube_tunnel *t, const char *until)
{
	size_t cap = 65536, len = 0;
	char *b = malloc(cap + 1);
	for (int spins = 0; spins < 500;) {
		ssize_t n = kube_tunnel_recv(t, b + len, cap - len);
		if (n == -2) {
			struct pollfd p = { .fd = kube_tunnel_fd(t), .events = POLLIN };
			if (poll(&p, 1, 20) == 0)
				spins++;
			continue;
		}
		if (n <= 0)
			break;
		len += (size_t)n;
		b[len] = 0;
		if (until && memmem(b, len, until, strlen(until)))
			break;
	}
	b[len] = 0;
	return b;
}

static void test_plain_request(void **state)
{
	struct fixture *f = *state;
	struct kube_tunnel *t = NULL;
	char *authz = NULL, *host = NULL;
	struct kube_error e;
	assert_int_equal(kube_tunnel_open(f->client, &t, &authz, &host, &e), 0);
	assert_string_equal(authz, "Bearer sekret");
	char want_host[32];
	snprintf(want_host, sizeof want_host, "127.0.0.1:%d", f->port);
	assert_string_equal(host, want_host);
	char req[256];
	int n = snprintf(req, sizeof req, "GET /hello HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
	assert_int_equal(kube_tunnel_send(t, req, (size_t)n), 0);
	char *got = read_all(t, "hello /hello");
	assert_non_null(strstr(got, "HTTP/1.1 200"));
	assert_non_null(strstr(got, "hello /hello"));
	free(got);
	kube_tunnel_close(t);
	free(authz);
	free(host);
}

static void test_websocket_through_tunnel(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(kube_ws_publish(f->ch, "{\"state\":42}", 12, true), 0);
	struct kube_tunnel *t = NULL;
	char *authz = NULL, *host = NULL;
	struct kube_error e;
	assert_int_equal(kube_tunnel_open(f->client, &t, &authz, &host, &e), 0);
	char req[512];
	int n = snprintf(req, sizeof req,
			 "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
			 "Sec-WebSocket-Protocol: " KUBE_WS_SUBPROTOCOL "\r\n\r\n", host);
	assert_int_equal(kube_tunnel_send(t, req, (size_t)n), 0);
	char *got = read_all(t, "{\"state\":42}");
	assert_non_null(strstr(got, "HTTP/1.1 101"));
	assert_non_null(strstr(got, "{\"state\":42}"));
	free(got);
	kube_tunnel_close(t);
	free(authz);
	free(host);
}

static void test_no_server(void **state)
{
	(void)state;
	struct kube_config *kc = kube_config_new("https://127.0.0.1:1");
	struct kube_client *c = NULL;
	char *err = NULL;
	assert_int_equal(kube_client_new(kc, &c, &err), 0);
	struct kube_tunnel *t = (void *)1;
	char *authz = (void *)1, *host = (void *)1;
	struct kube_error e;
	assert_int_equal(kube_tunnel_open(c, &t, &authz, &host, &e), -1);
	assert_null(t);
	assert_null(authz);
	assert_null(host);
	assert_true(e.message[0] != 0);
	kube_client_free(c);
	kube_config_free(kc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_request),
		cmocka_unit_test(test_websocket_through_tunnel),
		cmocka_unit_test(test_no_server),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
