/* Tests for plugins/contrib/FitIPResource, linked from the module's own objects (not dlopen'd):
 * capacity from status.allocatable and from podCIDR(s) (edge prefixes, dual stack, reserved
 * addresses, unparsable ranges), pods that hold no address (hostNetwork, finished), assumed pods,
 * args errors with their paths, and the hints. */
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
#include "schedkit/module.h"

#define REASON "Insufficient pod IPs"

/* node_spec: the JSON members of spec ("" none); alloc: of status.allocatable ("" none). */
static struct sk_node *node(const char *spec, const char *alloc)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"n\"},\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"%s%s}}}",
		 spec, *alloc ? "," : "", alloc);
	return fx_node(buf);
}

static struct sk_pod *pod(const char *name, const char *node_name, bool host_network, const char *phase)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
		 "\"spec\":{%s%s%s\"hostNetwork\":%s,\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"%s\"}}",
		 name, name, node_name ? "\"nodeName\":\"" : "", node_name ? node_name : "", node_name ? "\"," : "",
		 host_network ? "true" : "false", phase);
	return fx_pod(buf);
}

static const char *profile(const char *args)
{
	static char buf[512];
	snprintf(buf, sizeof(buf), "- plugins:\n    multiPoint:\n      enabled: [{name: FitIPResource}]\n%s%s%s",
		 args ? "  pluginConfig:\n  - name: FitIPResource\n    args: " : "", args ? args : "", args ? "\n" : "");
	return buf;
}

struct fip_case {
	const char *name;
	const char *args;   /* NULL: the defaults */
	const char *spec, *alloc;
	int bound, assumed; /* pods holding an address */
	int host_network, finished;
	bool pod_host_network;
	enum sk_code want;
};

#define CIDR(c) "\"podCIDR\":\"" c "\""
#define CIDRS(a, b) "\"podCIDR\":\"" a "\",\"podCIDRs\":[\"" a "\",\"" b "\"]"
#define IPS(n) "\"schedkit.io/pod-ips\":\"" #n "\""

static const struct fip_case cases[] = {
	/* status.allocatable */
	{ "allocatable 2, one pod", NULL, "", IPS(2), 1, 0, 0, 0, false, SK_SUCCESS },
	{ "allocatable 2, two pods", NULL, "", IPS(2), 2, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "allocatable 2, one bound one assumed", NULL, "", IPS(2), 1, 1, 0, 0, false, SK_UNSCHEDULABLE },
	{ "allocatable 0 takes no pod", NULL, "", IPS(0), 0, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "allocatable wins over the podCIDR", NULL, CIDR("10.0.0.0/30"), IPS(5), 3, 0, 0, 0, false, SK_SUCCESS },
	{ "another resourceName is read", "{resourceName: example.com/ips}", "", "\"example.com/ips\":\"1\"", 1, 0, 0, 0,
	  false, SK_UNSCHEDULABLE },
	{ "the default resource is ignored under another resourceName", "{resourceName: example.com/ips}", "", IPS(1), 5,
	  0, 0, 0, false, SK_SUCCESS },
	/* podCIDR sizes minus the 3 reserved addresses */
	{ "/24: 253 addresses, 252 used", NULL, CIDR("10.0.1.0/24"), "", 252, 0, 0, 0, false, SK_SUCCESS },
	{ "/24: 253 addresses, 253 used", NULL, CIDR("10.0.1.0/24"), "", 252, 1, 0, 0, false, SK_UNSCHEDULABLE },
	{ "/30: 1 address, empty", NULL, CIDR("10.0.0.4/30"), "", 0, 0, 0, 0, false, SK_SUCCESS },
	{ "/30: 1 address, used", NULL, CIDR("10.0.0.4/30"), "", 1, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "/31: fewer addresses than reserved", NULL, CIDR("10.0.0.2/31"), "", 0, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "/32", NULL, CIDR("10.0.0.1/32"), "", 0, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "reservedAddresses 0: /30 holds 4", "{reservedAddresses: 0}", CIDR("10.0.0.4/30"), "", 3, 0, 0, 0, false,
	  SK_SUCCESS },
	{ "reservedAddresses 0: /30 full at 4", "{reservedAddresses: 0}", CIDR("10.0.0.4/30"), "", 4, 0, 0, 0, false,
	  SK_UNSCHEDULABLE },
	{ "IPv6 /120: 253 addresses", NULL, CIDR("fd00::/120"), "", 253, 0, 0, 0, false, SK_UNSCHEDULABLE },
	{ "IPv6 /64: practically unlimited", NULL, CIDR("fd00:1::/64"), "", 200, 0, 0, 0, false, SK_SUCCESS },
	{ "dual stack: the smaller family bounds", NULL, CIDRS("10.0.0.0/29", "fd00::/64"), "", 5, 0, 0, 0, false,
	  SK_UNSCHEDULABLE },
	{ "dual stack: room in both", NULL, CIDRS("10.0.0.0/29", "fd00::/64"), "", 4, 0, 0, 0, false, SK_SUCCESS },
	{ "unparsable podCIDR: not limited", NULL, CIDR("10.0.0.0/33"), "", 50, 0, 0, 0, false, SK_SUCCESS },
	{ "podCIDR without a prefix: not limited", NULL, CIDR("10.0.0.0"), "", 50, 0, 0, 0, false, SK_SUCCESS },
	{ "no capacity source: not limited", NULL, "", "", 300, 0, 0, 0, false, SK_SUCCESS },
	/* pods that hold no address */
	{ "hostNetwork pods hold none", NULL, CIDR("10.0.0.4/30"), "", 0, 0, 3, 0, false, SK_SUCCESS },
	{ "finished pods hold none", NULL, CIDR("10.0.0.4/30"), "", 0, 0, 0, 2, false, SK_SUCCESS },
	{ "a hostNetwork pod skips a full node", NULL, CIDR("10.0.0.4/30"), "", 1, 0, 0, 0, true, SK_SKIP },
};

static struct sk_node_info *node_with(const struct fip_case *c)
{
	struct sk_node_info *ni = fx_node_info(node(c->spec, c->alloc), NULL);
	int k = 0;
	for (int i = 0; i < c->bound + c->assumed + c->host_network + c->finished; i++, k++) {
		char name[32];
		snprintf(name, sizeof(name), "e%d", k);
		struct sk_pod *p;
		if (i < c->bound) {
			p = pod(name, "n", false, "Running");
		} else if (i < c->bound + c->assumed) {
			struct sk_pod *unbound = pod(name, NULL, false, "Pending");
			p = sk_pod_with_node(unbound, "n"); /* as the cache assumes */
			sk_pod_unref(unbound);
		} else if (i < c->bound + c->assumed + c->host_network) {
			p = pod(name, "n", true, "Running");
		} else {
			p = pod(name, "n", false, k % 2 ? "Succeeded" : "Failed");
		}
		assert_int_equal(sk_node_info_add_pod(ni, p), 0);
		sk_pod_unref(p);
	}
	return ni;
}

static void test_filter_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fip_case *c = &cases[i];
		struct ph *h = ph_new(profile(c->args));
		struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
		struct sk_node_info *ni = node_with(c);
		ph_set_snapshot(h, fx_snapshot(sk_node_info_clone(ni), NULL));
		struct sk_pod *p = pod("p", NULL, c->pod_host_network, "Pending");
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		char *m = ph_message(&s);
		bool ok = code == c->want && (code != SK_UNSCHEDULABLE || !strcmp(m, REASON));
		if (!ok) {
			print_error("case \"%s\": got %s \"%s\", want %s\n", c->name, sk_code_string(code), m ? m : "",
				    sk_code_string(c->want));
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
		ph_free(h);
	}
}

/* Preemption's dry run removes a victim from a clone of the node info: Filter counts the clone, so
 * the node fits again (and Unschedulable told preemption it might). */
static void test_victim_removed(void **state)
{
	(void)state;
	struct ph *h = ph_new(profile(NULL));
	struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
	struct sk_pod *victim = pod("v", "n", false, "Running");
	struct sk_node_info *ni = fx_node_info(node(CIDR("10.0.0.4/30"), ""), sk_pod_ref(victim), NULL);
	struct sk_pod *p = pod("p", NULL, false, "Pending");
	struct sk_status s = ph_filter(h, pl, p, ni);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	sk_status_reset(&s);
	struct sk_node_info *dry = sk_node_info_clone(ni);
	assert_int_equal(sk_node_info_remove_pod(dry, victim), 0);
	s = ph_filter(h, pl, p, dry);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_node_info_free(dry);
	sk_node_info_free(ni);
	sk_pod_unref(victim);
	sk_pod_unref(p);
	ph_free(h);
}

/* Several nodes in one snapshot: Filter decides from the capacities the PreFilter took for the
 * snapshot's numbering (and from the smallest capacity, below which any node has room), and must
 * say what the node itself says: each node is filtered as the snapshot holds it (numbered) and as
 * an unnumbered copy (capacity from the node). A later snapshot where a node's capacity shrank
 * (a node update) is taken again. */
static struct sk_node_info *named(const char *name, const char *spec, const char *alloc, int pods)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"%s%s}}}",
		 name, spec, *alloc ? "," : "", alloc);
	struct sk_node_info *ni = fx_node_info(fx_node(buf), NULL);
	for (int i = 0; i < pods; i++) {
		char pn[64];
		snprintf(pn, sizeof(pn), "%s-%d", name, i);
		struct sk_pod *p = pod(pn, name, false, "Running");
		assert_int_equal(sk_node_info_add_pod(ni, p), 0);
		sk_pod_unref(p);
	}
	return ni;
}

static void test_snapshot_capacities(void **state)
{
	(void)state;
	static const struct {
		const char *name, *spec, *alloc;
		int pods;
		enum sk_code want, want_after; /* in the first snapshot; after "a" shrank to 1 address */
	} nodes[] = {
		{ "a", "", IPS(2), 1, SK_SUCCESS, SK_UNSCHEDULABLE },
		{ "b", "", IPS(2), 2, SK_UNSCHEDULABLE, SK_UNSCHEDULABLE },
		{ "c", CIDR("10.0.0.4/30"), "", 0, SK_SUCCESS, SK_SUCCESS },
		{ "d", "", "", 300, SK_SUCCESS, SK_SUCCESS },
		{ "e", CIDR("10.0.1.0/24"), "", 40, SK_SUCCESS, SK_SUCCESS },
		{ "f", "", IPS(1), 1, SK_UNSCHEDULABLE, SK_UNSCHEDULABLE },
	};
	enum { N = sizeof(nodes) / sizeof(nodes[0]) };
	struct ph *h = ph_new(profile(NULL));
	struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
	struct sk_pod *p = pod("p", NULL, false, "Pending");
	for (int round = 0; round < 2; round++) {
		struct sk_node_info *nis[N];
		for (int i = 0; i < N; i++)
			nis[i] = named(nodes[i].name, nodes[i].spec, round && !strcmp(nodes[i].name, "a") ? IPS(1) : nodes[i].alloc,
				       nodes[i].pods);
		ph_set_snapshot(h, fx_snapshot_of(nis, N));
		const struct sk_snapshot *snap = h->snap;
		for (int i = 0; i < N; i++) {
			const struct sk_node_info *ni = sk_snapshot_get(snap, nodes[i].name);
			assert_non_null(ni);
			assert_true(ni->index > 0);
			struct sk_node_info *plain = sk_node_info_clone(ni);
			plain->index = 0;
			plain->index_serial = 0;
			enum sk_code want = round ? nodes[i].want_after : nodes[i].want;
			const struct sk_node_info *views[] = { ni, plain };
			for (int v = 0; v < 2; v++) {
				struct sk_status s = ph_filter(h, pl, p, views[v]);
				if (s.code != want)
					fail_msg("round %d, node %s (%s): got %s, want %s", round, nodes[i].name,
						 v ? "unnumbered" : "numbered", sk_code_string(s.code), sk_code_string(want));
				sk_status_reset(&s);
			}
			sk_node_info_free(plain);
		}
	}
	sk_pod_unref(p);
	ph_free(h);
}

/* The same snapshot object updated from the cache, as the scheduler's is: a node whose
 * allocatable addresses shrink keeps its number and serial, and Filter must still see the new
 * capacity (the snapshot's nodes_version changed, so PreFilter took the capacities again). */
static void test_node_update_in_place(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	struct sk_snapshot *snap = sk_snapshot_new();
	static const char *const allocs[] = { IPS(3), IPS(1), IPS(4) };
	static const enum sk_code want[] = { SK_SUCCESS, SK_UNSCHEDULABLE, SK_SUCCESS };
	struct ph *h = ph_new(profile(NULL));
	struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
	struct sk_pod *bound = pod("b", "a", false, "Running"), *p = pod("p", NULL, false, "Pending");
	assert_int_equal(sk_cache_add_pod(c, bound, NULL), 0);
	uint32_t serial = 0;
	for (int i = 0; i < 3; i++) {
		char buf[512];
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"%d\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\",%s}}}",
			 i + 1, allocs[i]);
		struct sk_node *n = fx_node(buf);
		assert_int_equal(i ? sk_cache_update_node(c, n, NULL) : sk_cache_add_node(c, n, NULL), 0);
		sk_node_unref(n);
		assert_int_equal(sk_cache_update_snapshot(c, snap, NULL), 0);
		if (i == 0)
			ph_set_snapshot(h, snap); /* the harness owns it from here; the cache keeps updating it */
		const struct sk_node_info *ni = sk_snapshot_get(snap, "a");
		if (i == 0)
			serial = ni->index_serial;
		assert_int_equal(ni->index_serial, serial);
		struct sk_status s = ph_filter(h, pl, p, ni);
		if (s.code != want[i])
			fail_msg("update %d: got %s, want %s", i, sk_code_string(s.code), sk_code_string(want[i]));
		sk_status_reset(&s);
	}
	ph_free(h); /* frees the snapshot */
	sk_cache_free(c);
	sk_pod_unref(bound);
	sk_pod_unref(p);
}

static char *load_errors(const char *args_yaml)
{
	char *text = NULL;
	assert_true(asprintf(&text,
			     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n%s",
			     profile(args_yaml)) >= 0);
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
	char *all = cfg ? strdup("") : sk_errors_join(&e, "\n");
	sk_config_free(cfg);
	sk_errors_free(&e);
	free(text);
	return all;
}

static void test_args(void **state)
{
	(void)state;
	static const struct {
		const char *args, *want; /* want "": accepted */
	} cases[] = {
		{ "{}", "" },
		{ "{resourceName: example.com/ips, reservedAddresses: 0}", "" },
		{ "{resourceName: pods}",
		  "profiles[0].pluginConfig[0].args.resourceName: Invalid value: \"pods\": must be an extended resource "
		  "name (<domain>/<name>)" },
		{ "{resourceName: /ips}", "profiles[0].pluginConfig[0].args.resourceName: Invalid value: \"/ips\"" },
		{ "{resourceName: \"example.com/bad name\"}", "profiles[0].pluginConfig[0].args.resourceName" },
		{ "{reservedAddresses: -1}", "profiles[0].pluginConfig[0].args.reservedAddresses" },
		{ "{reservedAddresses: 70000}", "profiles[0].pluginConfig[0].args.reservedAddresses" },
		{ "{resourceName: 3}", "profiles[0].pluginConfig[0].args.resourceName" },
		{ "{resource: x}", "unknown field \"profiles[0].pluginConfig[0].args.resource\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = load_errors(cases[i].args);
		bool ok = *cases[i].want ? strstr(got, cases[i].want) != NULL : *got == '\0';
		if (!ok) {
			print_error("args %s: got errors \"%s\", want \"%s\"\n", cases[i].args, got, cases[i].want);
			free(got);
			fail();
		}
		free(got);
	}

	struct ph *h = ph_new(profile(NULL));
	struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
	void *args = NULL;
	struct sk_errors e = { 0 };
	assert_int_equal(pl->desc->args_decode(NULL, &args, &e, "args"), 0);
	cJSON *j = pl->desc->args_encode(args);
	char *txt = cJSON_PrintUnformatted(j);
	assert_string_equal(txt, "{\"kind\":\"FitIPResourceArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
				 "\"resourceName\":\"schedkit.io/pod-ips\",\"reservedAddresses\":3}");
	free(txt);
	cJSON_Delete(j);
	pl->desc->args_free(args);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(profile(NULL));
	struct sk_plugin *pl = ph_plugin(h, "FitIPResource");
	uint32_t actions = 0;
	sk_hint_fn on_delete = ph_find_hint(pl, SK_EV_ASSIGNED_POD, &actions);
	assert_int_equal(actions, SK_ACT_DELETE);
	struct sk_pod *waiting = pod("p", NULL, false, "Pending");
	struct sk_pod *gone = pod("a", "n", false, "Running");
	struct sk_pod *gone_host = pod("b", "n", true, "Running");
	assert_int_equal(on_delete(pl, waiting, gone, NULL), SK_QUEUE);
	assert_int_equal(on_delete(pl, waiting, gone_host, NULL), SK_QUEUE_SKIP);

	sk_hint_fn on_node = ph_find_hint(pl, SK_EV_NODE, &actions);
	assert_int_equal(actions, SK_ACT_ADD | SK_ACT_UPDATE_NODE_ALLOCATABLE);
	struct sk_node *small = node("", IPS(2)), *big = node("", IPS(4)), *cidr = node(CIDR("10.0.0.0/24"), "");
	assert_int_equal(on_node(pl, waiting, NULL, small), SK_QUEUE);
	assert_int_equal(on_node(pl, waiting, small, big), SK_QUEUE);
	assert_int_equal(on_node(pl, waiting, big, small), SK_QUEUE_SKIP);
	assert_int_equal(on_node(pl, waiting, big, big), SK_QUEUE_SKIP);
	assert_int_equal(on_node(pl, waiting, small, cidr), SK_QUEUE); /* 2 -> 253 */
	assert_int_equal(on_node(pl, waiting, big, NULL), SK_QUEUE_SKIP);
	sk_node_unref(small);
	sk_node_unref(big);
	sk_node_unref(cidr);
	sk_pod_unref(waiting);
	sk_pod_unref(gone);
	sk_pod_unref(gone_host);
	ph_free(h);
}

/* The fields this plugin reads, as the core decodes them (scheduler/api/decode.c). */
static void test_decoded_fields(void **state)
{
	(void)state;
	struct sk_node *n = node(CIDRS("10.0.0.0/24", "fd00::/64"), "");
	assert_int_equal(n->npod_cidrs, 2);
	assert_string_equal(n->pod_cidrs[0], "10.0.0.0/24");
	assert_string_equal(n->pod_cidrs[1], "fd00::/64");
	sk_node_unref(n);
	n = node(CIDR("10.0.3.0/24"), "");
	assert_int_equal(n->npod_cidrs, 1);
	assert_string_equal(n->pod_cidrs[0], "10.0.3.0/24");
	sk_node_unref(n);
	n = node("", "");
	assert_int_equal(n->npod_cidrs, 0);
	sk_node_unref(n);
	char *err = fx_node_error("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"podCIDRs\":[3]}}");
	assert_non_null(err);
	assert_non_null(strstr(err, "spec.podCIDRs[0]: must be a string"));
	free(err);
	struct sk_pod *p = pod("p", NULL, true, "Pending");
	assert_true(p->host_network);
	sk_pod_unref(p);
	err = fx_pod_error("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"hostNetwork\":\"yes\"}}");
	assert_non_null(err);
	assert_non_null(strstr(err, "spec.hostNetwork: must be a boolean"));
	free(err);
}

int main(void)
{
	ph_use_module(sk_module_init);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_table),
		cmocka_unit_test(test_victim_removed),
		cmocka_unit_test(test_snapshot_capacities),
		cmocka_unit_test(test_node_update_in_place),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_decoded_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
