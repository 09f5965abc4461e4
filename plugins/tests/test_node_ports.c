/* Tests for plugins/NodePorts: conflict rules from upstream node_ports_test (protocol, port, host
 * IP and 0.0.0.0), PreFilter Skip, Filter without PreFilter state, and the pod-delete hint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

/* ports: "proto/ip/port" entries separated by spaces; ip "-" means empty */
static struct sk_pod *pod_with_ports(const char *name, const char *node, const char *ports)
{
	char buf[2048], list[1536] = "";
	char *copy = strdup(ports), *save = NULL;
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char proto[8], ip[64];
		int port;
		assert_int_equal(sscanf(tok, "%7[^/]/%63[^/]/%d", proto, ip, &port), 3);
		char one[256];
		snprintf(one, sizeof(one), "%s{\"containerPort\":%d,\"hostPort\":%d,\"protocol\":\"%s\"%s%s%s}",
			 list[0] ? "," : "", port, port, proto, strcmp(ip, "-") ? ",\"hostIP\":\"" : "",
			 strcmp(ip, "-") ? ip : "", strcmp(ip, "-") ? "\"" : "");
		strcat(list, one);
	}
	free(copy);
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s\"containers\":[{\"ports\":[%s]}]}}",
		 name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "", list);
	return fx_pod(buf);
}

struct port_case {
	const char *name, *want, *used;
	bool fits;
};

static const struct port_case cases[] = {
	{ "same udp port", "UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080", false },
	{ "same tcp port", "TCP/127.0.0.1/8080", "TCP/127.0.0.1/8080", false },
	{ "different host ip", "TCP/127.0.0.2/8080", "TCP/127.0.0.1/8080", true },
	{ "different protocol", "UDP/127.0.0.1/8080", "TCP/127.0.0.1/8080", true },
	{ "second port conflicts", "TCP/127.0.0.1/8000 UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080", false },
	{ "wanted 0.0.0.0 conflicts with any ip", "TCP/0.0.0.0/8001", "TCP/127.0.0.1/8001", false },
	{ "used 0.0.0.0 conflicts with any ip", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001", false },
	{ "empty host ip is 0.0.0.0", "TCP/-/8001", "TCP/127.0.0.1/8001", false },
	{ "0.0.0.0 other protocol", "UDP/0.0.0.0/8001", "TCP/127.0.0.1/8001", true },
	{ "different ports", "TCP/0.0.0.0/8001", "TCP/0.0.0.0/8002", true },
};

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodePorts");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct port_case *c = &cases[i];
		struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"),
						       pod_with_ports("existing", "n", c->used), NULL);
		struct sk_pod *p = pod_with_ports("p", NULL, c->want);
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		char *m = ph_message(&s);
		bool ok = c->fits ? code == SK_SUCCESS
				  : (code == SK_UNSCHEDULABLE &&
				     !strcmp(m, "node(s) didn't have free ports for the requested pod ports"));
		if (!ok) {
			print_error("case %s: got %s \"%s\"\n", c->name, sk_code_string(code), m);
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
	}
	ph_free(h);
}

static void test_prefilter_and_state(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodePorts");
	struct sk_pod *none = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, none, &r);
	assert_int_equal(s.code, SK_SKIP);
	sk_pod_unref(none);

	struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"), NULL);
	struct sk_pod *p = pod_with_ports("p", NULL, "TCP/-/80");
	ph_reset_state(h);
	s = pl->desc->filter(pl, h->cs, p, ni);
	assert_int_equal(s.code, SK_ERROR);
	char *m = ph_message(&s);
	assert_string_equal(m, "reading \"PreFilterNodePorts\" from cycleState: not found");
	free(m);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodePorts");
	struct sk_event_registration regs[4];
	int n = pl->desc->events_to_register(pl, regs, 4);
	assert_int_equal(n, 2);
	assert_int_equal(regs[0].event.resource, SK_EV_POD);
	assert_int_equal(regs[0].event.action, SK_ACT_DELETE);
	assert_int_equal(regs[1].event.resource, SK_EV_NODE);
	assert_int_equal(regs[1].event.action, SK_ACT_ADD);
	struct sk_pod *p = pod_with_ports("p", NULL, "TCP/-/80");
	struct sk_pod *holder = pod_with_ports("h", "n", "TCP/-/80"), *other = pod_with_ports("o", "n", "TCP/-/81");
	struct sk_pod *unbound = pod_with_ports("u", NULL, "TCP/-/80");
	assert_int_equal(regs[0].hint(pl, p, holder, NULL), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, p, other, NULL), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, p, unbound, NULL), SK_QUEUE_SKIP);
	sk_pod_unref(p);
	sk_pod_unref(holder);
	sk_pod_unref(other);
	sk_pod_unref(unbound);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_prefilter_and_state),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
