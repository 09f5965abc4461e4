/* Tests for the request head `kubectl schedkit dashboard` sends to the API server
 * (scheduler/decisions/kubectl_dashboard.c): a table of browser heads and the exact head that
 * goes upstream (prefix, Host, credentials, hop-by-hop headers dropped, an upgrade kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/decisions/kubectl_dashboard.h"

#define PFX "/api/v1/namespaces/schedkit-system/services/https:schedkit-scheduler:10259/proxy"

struct head_case {
	const char *name;
	const char *head, *method, *target, *authz;
	bool upgrade;
	const char *want;
};

static void test_forward_head(void **state)
{
	(void)state;
	static const struct head_case cases[] = {
		{ "page, token", "GET /debug/schedkit/v1/dashboard/ HTTP/1.1\r\nHost: 127.0.0.1:8001\r\nAccept: text/html\r\n"
				 "Connection: keep-alive\r\nCookie: a=b\r\nUser-Agent: x\r\n\r\n",
		  "GET", "/debug/schedkit/v1/dashboard/", "Bearer t0k", false,
		  "GET " PFX "/debug/schedkit/v1/dashboard/ HTTP/1.1\r\nHost: api:6443\r\nAuthorization: Bearer t0k\r\n"
		  "Connection: close\r\nAccept: text/html\r\nUser-Agent: x\r\n\r\n" },
		{ "the browser's credentials are not sent", "GET /debug/schedkit/v1/summary?x=1 HTTP/1.1\r\nauthorization: Basic Zm9v\r\n"
							   "Keep-Alive: 5\r\nProxy-Connection: keep-alive\r\n\r\n",
		  "GET", "/debug/schedkit/v1/summary?x=1", NULL, false,
		  "GET " PFX "/debug/schedkit/v1/summary?x=1 HTTP/1.1\r\nHost: api:6443\r\nConnection: close\r\n\r\n" },
		{ "websocket", "GET /debug/schedkit/v1/dashboard/ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
			       "Sec-WebSocket-Key: k==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: schedkit.v1\r\n\r\n",
		  "GET", "/debug/schedkit/v1/dashboard/ws", "Bearer t", true,
		  "GET " PFX "/debug/schedkit/v1/dashboard/ws HTTP/1.1\r\nHost: api:6443\r\nAuthorization: Bearer t\r\n"
		  "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k==\r\nSec-WebSocket-Version: 13\r\n"
		  "Sec-WebSocket-Protocol: schedkit.v1\r\n\r\n" },
		{ "an Upgrade header without upgrading is dropped", "HEAD /debug/schedkit/v1/dashboard/app.js HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
		  "HEAD", "/debug/schedkit/v1/dashboard/app.js", NULL, false,
		  "HEAD " PFX "/debug/schedkit/v1/dashboard/app.js HTTP/1.1\r\nHost: api:6443\r\nConnection: close\r\n\r\n" },
		{ "a header named like a dropped one is kept", "GET /debug/schedkit/v1/x HTTP/1.1\r\nHosting: yes\r\nCookies: 1\r\n\r\n",
		  "GET", "/debug/schedkit/v1/x", NULL, false,
		  "GET " PFX "/debug/schedkit/v1/x HTTP/1.1\r\nHost: api:6443\r\nConnection: close\r\nHosting: yes\r\nCookies: 1\r\n\r\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct head_case *c = &cases[i];
		print_message("case: %s\n", c->name);
		char *got = sk_dash_forward_head(c->head, c->method, c->target, PFX, "api:6443", c->authz, c->upgrade);
		assert_non_null(got);
		assert_string_equal(got, c->want);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_head),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
