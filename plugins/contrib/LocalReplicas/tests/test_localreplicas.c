/* Tests for plugins/contrib/LocalReplicas, linked from the module's own objects (not dlopen'd):
 * owners of each kind and non-controller references, the limit with assumed and terminating
 * pods, maxReplicasPerNode, args errors with their paths, and the pod-delete hint. */
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

#define REASON "node(s) already run the maximum number of replicas of this workload"

/* A pod named name (uid "uid-<name>") owned by kind/uid ("" kind: no owner); controller says
 * whether the reference is the controller one. node NULL: unbound. */
static struct sk_pod *pod(const char *name, const char *kind, const char *uid, bool controller, const char *node,
			  bool terminating)
{
	char owner[256] = "", buf[1024];
	if (*kind)
		snprintf(owner, sizeof(owner),
			 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\",\"name\":\"o\",\"uid\":\"%s\""
			 ",\"controller\":%s}]",
			 kind, uid, controller ? "true" : "false");
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"%s%s},"
		 "\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\"}]}}",
		 name, name, owner, terminating ? ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"" : "",
		 node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
	return fx_pod(buf);
}

static const char *profile(int max)
{
	static char buf[512];
	snprintf(buf, sizeof(buf),
		 "- plugins:\n    multiPoint:\n      enabled: [{name: LocalReplicas}]\n%s", max ? "  pluginConfig:\n"
		 "  - name: LocalReplicas\n    args: {maxReplicasPerNode: " : "");
	if (max)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%d}\n", max);
	return buf;
}

/* The pods already on node "n": kind/uid of their owner, and how they got there. */
enum placed { BOUND, ASSUMED, TERMINATING, SELF };
struct existing {
	const char *kind, *uid;
	enum placed how;
};

struct lr_case {
	const char *name;
	int max;                 /* 0: the default (1) */
	const char *kind, *uid;  /* the pod's owner ("" none) */
	bool controller;
	struct existing on_node[3];
	int n_on_node;
	enum sk_code want;
};

static const struct lr_case cases[] = {
	{ "no owner: PreFilter skips", 0, "", "", true, { { "ReplicaSet", "rs-1", BOUND } }, 1, SK_SKIP },
	{ "DaemonSet owner: not limited", 0, "DaemonSet", "ds-1", true, { { "DaemonSet", "ds-1", BOUND } }, 1, SK_SKIP },
	{ "custom owner kind: not limited", 0, "Foo", "foo-1", true, { { "Foo", "foo-1", BOUND } }, 1, SK_SKIP },
	{ "non-controller reference: not limited", 0, "ReplicaSet", "rs-1", false, { { "ReplicaSet", "rs-1", BOUND } },
	  1, SK_SKIP },
	{ "ReplicaSet, empty node", 0, "ReplicaSet", "rs-1", true, { { 0 } }, 0, SK_SUCCESS },
	{ "ReplicaSet, a replica there", 0, "ReplicaSet", "rs-1", true, { { "ReplicaSet", "rs-1", BOUND } }, 1,
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "ReplicaSet, another ReplicaSet's pod there", 0, "ReplicaSet", "rs-1", true,
	  { { "ReplicaSet", "rs-2", BOUND }, { "", "", BOUND } }, 2, SK_SUCCESS },
	{ "StatefulSet, a replica there", 0, "StatefulSet", "sts-1", true, { { "StatefulSet", "sts-1", BOUND } }, 1,
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "ReplicationController, a replica there", 0, "ReplicationController", "rc-1", true,
	  { { "ReplicationController", "rc-1", BOUND } }, 1, SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "Job, a replica there", 0, "Job", "job-1", true, { { "Job", "job-1", BOUND } }, 1,
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "same uid, other kind there (not limited kind)", 0, "ReplicaSet", "x-1", true, { { "DaemonSet", "x-1", BOUND } },
	  1, SK_SUCCESS },
	{ "an assumed replica counts", 0, "ReplicaSet", "rs-1", true, { { "ReplicaSet", "rs-1", ASSUMED } }, 1,
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "a terminating replica still counts", 0, "ReplicaSet", "rs-1", true,
	  { { "ReplicaSet", "rs-1", TERMINATING } }, 1, SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "the pod itself is not counted", 0, "ReplicaSet", "rs-1", true, { { "ReplicaSet", "rs-1", SELF } }, 1,
	  SK_SUCCESS },
	{ "max 2, one replica there", 2, "ReplicaSet", "rs-1", true, { { "ReplicaSet", "rs-1", BOUND } }, 1, SK_SUCCESS },
	{ "max 2, one bound and one assumed", 2, "ReplicaSet", "rs-1", true,
	  { { "ReplicaSet", "rs-1", BOUND }, { "ReplicaSet", "rs-1", ASSUMED } }, 2, SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "max 3, two replicas and a stranger", 3, "Job", "job-1", true,
	  { { "Job", "job-1", BOUND }, { "Job", "job-1", BOUND }, { "Job", "job-2", BOUND } }, 3, SK_SUCCESS },
};

static struct sk_node_info *node_with(const struct lr_case *c)
{
	struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"), NULL);
	for (int i = 0; i < c->n_on_node; i++) {
		const struct existing *e = &c->on_node[i];
		char name[32];
		snprintf(name, sizeof(name), "%s%d", e->how == SELF ? "" : "e", i);
		struct sk_pod *p;
		if (e->how == ASSUMED) {
			/* as the cache assumes: the unbound pod copied with its node set */
			struct sk_pod *unbound = pod(name, e->kind, e->uid, true, NULL, false);
			p = sk_pod_with_node(unbound, "n");
			sk_pod_unref(unbound);
		} else {
			p = pod(e->how == SELF ? "p" : name, e->kind, e->uid, true, "n", e->how == TERMINATING);
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
		const struct lr_case *c = &cases[i];
		struct ph *h = ph_new(profile(c->max));
		struct sk_plugin *pl = ph_plugin(h, "LocalReplicas");
		struct sk_node_info *ni = node_with(c);
		struct sk_pod *p = pod("p", c->kind, c->uid, c->controller, NULL, false);
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		char *m = ph_message(&s);
		bool ok = code == c->want && (code != SK_UNSCHEDULABLE_AND_UNRESOLVABLE || !strcmp(m, REASON));
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

/* Filter reads the owner PreFilter stored; without it (PreFilter not enabled) it is an error. */
static void test_filter_without_prefilter(void **state)
{
	(void)state;
	struct ph *h = ph_new(profile(0));
	struct sk_plugin *pl = ph_plugin(h, "LocalReplicas");
	struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"), NULL);
	struct sk_pod *p = pod("p", "ReplicaSet", "rs-1", true, NULL, false);
	struct sk_status s = pl->desc->filter(pl, h->cs, p, ni);
	assert_int_equal(s.code, SK_ERROR);
	sk_status_reset(&s);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static char *load_errors(const char *args_yaml)
{
	char *text = NULL;
	assert_true(asprintf(&text,
			     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
			     "- plugins:\n    multiPoint:\n      enabled: [{name: LocalReplicas}]\n  pluginConfig:\n"
			     "  - name: LocalReplicas\n    args: %s\n",
			     args_yaml) >= 0);
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
		{ "{maxReplicasPerNode: 4}", "" },
		{ "{kind: LocalReplicasArgs, apiVersion: kubescheduler.config.k8s.io/v1, maxReplicasPerNode: 1}", "" },
		{ "{maxReplicasPerNode: 0}",
		  "profiles[0].pluginConfig[0].args.maxReplicasPerNode: Invalid value: 0: must be greater than or equal to 1" },
		{ "{maxReplicasPerNode: -3}", "profiles[0].pluginConfig[0].args.maxReplicasPerNode" },
		{ "{maxReplicasPerNode: two}", "profiles[0].pluginConfig[0].args.maxReplicasPerNode" },
		{ "{maxReplicas: 2}", "unknown field \"profiles[0].pluginConfig[0].args.maxReplicas\"" },
		{ "{kind: FooArgs}", "args were not of type LocalReplicasArgs, got FooArgs" },
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

	/* The defaulted args, as /configz shows them. */
	struct ph *h = ph_new(profile(0));
	struct sk_plugin *pl = ph_plugin(h, "LocalReplicas");
	void *args = NULL;
	struct sk_errors e = { 0 };
	assert_int_equal(pl->desc->args_decode(NULL, &args, &e, "args"), 0);
	cJSON *j = pl->desc->args_encode(args);
	char *txt = cJSON_PrintUnformatted(j);
	assert_string_equal(txt, "{\"kind\":\"LocalReplicasArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
				 "\"maxReplicasPerNode\":1}");
	free(txt);
	cJSON_Delete(j);
	pl->desc->args_free(args);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(profile(0));
	struct sk_plugin *pl = ph_plugin(h, "LocalReplicas");
	uint32_t actions = 0;
	sk_hint_fn on_delete = ph_find_hint(pl, SK_EV_ASSIGNED_POD, &actions);
	assert_int_equal(actions, SK_ACT_DELETE);
	struct sk_pod *waiting = pod("p", "ReplicaSet", "rs-1", true, NULL, false);
	struct sk_pod *stranger = pod("w", "", "", true, NULL, false);
	struct sk_pod *same = pod("a", "ReplicaSet", "rs-1", true, "n", false);
	struct sk_pod *other = pod("b", "ReplicaSet", "rs-2", true, "n", false);
	struct sk_pod *plain = pod("c", "", "", true, "n", false);
	assert_int_equal(on_delete(pl, waiting, same, NULL), SK_QUEUE);
	assert_int_equal(on_delete(pl, waiting, other, NULL), SK_QUEUE_SKIP);
	assert_int_equal(on_delete(pl, waiting, plain, NULL), SK_QUEUE_SKIP);
	assert_int_equal(on_delete(pl, stranger, plain, NULL), SK_QUEUE_SKIP);
	/* a new node holds no replica: always queued (no hint) */
	assert_null(ph_find_hint(pl, SK_EV_NODE, &actions));
	assert_int_equal(actions, SK_ACT_ADD);
	sk_pod_unref(waiting);
	sk_pod_unref(stranger);
	sk_pod_unref(same);
	sk_pod_unref(other);
	sk_pod_unref(plain);
	ph_free(h);
}

int main(void)
{
	ph_use_module(sk_module_init);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_table),
		cmocka_unit_test(test_filter_without_prefilter),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
