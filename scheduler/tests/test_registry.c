/* Tests for scheduler/framework/registry.c and the in-tree list (plugins/registry.c): the in-tree
 * table and its order, the default set built from the same list, lookups, out-of-tree
 * registration rules, "did you mean" suggestions, and the unavailable defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedkit/plugin.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/registry.h"

static void test_in_tree_order(void **state)
{
	(void)state;
	const char *const want[] = { "SchedulingGates",  "PrioritySort", "NodeUnschedulable", "NodeName",
				     "TaintToleration",  "NodeAffinity", "NodePorts",         "NodeResourcesFit",
				     "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DefaultPreemption",
				     "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", NULL };
	int i = 0;
	for (; sk_in_tree_plugins[i]; i++) {
		assert_non_null(want[i]);
		assert_string_equal(sk_in_tree_plugins[i]->name, want[i]);
		assert_int_equal(sk_in_tree_plugins[i]->abi_major, SK_ABI_MAJOR);
		assert_int_equal(sk_in_tree_plugins[i]->abi_minor, SK_ABI_MINOR);
		assert_int_equal(sk_in_tree_plugins[i]->size, sizeof(struct sk_plugin_desc));
		assert_ptr_equal(sk_registry_lookup(want[i]), sk_in_tree_plugins[i]);
	}
	assert_null(want[i]);
}

/* The tables plugins/registry.c builds from its one list agree with each other and with upstream. */
static void test_default_set(void **state)
{
	(void)state;
	/* pkg/scheduler/apis/config/v1/default_plugins.go (v1.34), every plugin through multiPoint */
	const struct {
		const char *name;
		int32_t weight;
		bool built;
	} want[] = {
		{ "SchedulingGates", 0, true }, { "PrioritySort", 0, true },
		{ "NodeUnschedulable", 0, true }, { "NodeName", 0, true },
		{ "TaintToleration", 3, true }, { "NodeAffinity", 2, true },
		{ "NodePorts", 0, true }, { "NodeResourcesFit", 1, true },
		{ "VolumeRestrictions", 0, true }, { "NodeVolumeLimits", 0, true },
		{ "VolumeBinding", 0, true }, { "VolumeZone", 0, true },
		{ "PodTopologySpread", 2, true }, { "InterPodAffinity", 2, true },
		{ "DynamicResources", 0, false }, { "DefaultPreemption", 0, true },
		{ "NodeResourcesBalancedAllocation", 1, true }, { "ImageLocality", 1, true },
		{ "DefaultBinder", 0, true },
	};
	int n = (int)(sizeof(want) / sizeof(want[0])), nbuilt = 0, nmissing = 0;
	assert_int_equal(sk_ndefault_plugins, n);
	for (int i = 0; i < n; i++) {
		const struct sk_default_plugin *d = &sk_default_plugins[i];
		assert_string_equal(d->name, want[i].name);
		assert_int_equal(d->weight, want[i].weight);
		if (want[i].built) {
			assert_non_null(d->desc);
			/* the list's Name is the descriptor's name, and the in-tree table keeps the order */
			assert_string_equal(d->desc->name, want[i].name);
			assert_ptr_equal(sk_in_tree_plugins[nbuilt++], d->desc);
			assert_ptr_equal(sk_registry_lookup(want[i].name), d->desc);
		} else {
			assert_null(d->desc);
			assert_string_equal(sk_unavailable_default_plugins[nmissing++], want[i].name);
		}
	}
	assert_null(sk_in_tree_plugins[nbuilt]);
	assert_null(sk_unavailable_default_plugins[nmissing]);
}

static void test_extension_points(void **state)
{
	(void)state;
	/* pkg/scheduler/framework/plugins/registry.go */
	const struct {
		const char *name;
		enum sk_ext_point eps[6];
		int n;
	} t[] = {
		{ "SchedulingGates", { SK_EP_PRE_ENQUEUE }, 1 },
		{ "PrioritySort", { SK_EP_QUEUE_SORT }, 1 },
		{ "NodeUnschedulable", { SK_EP_FILTER }, 1 },
		{ "NodeName", { SK_EP_FILTER }, 1 },
		{ "TaintToleration", { SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE }, 3 },
		{ "NodeAffinity", { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE }, 4 },
		{ "NodePorts", { SK_EP_PRE_FILTER, SK_EP_FILTER }, 2 },
		{ "NodeResourcesFit", { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE }, 4 },
		{ "VolumeRestrictions", { SK_EP_PRE_FILTER, SK_EP_FILTER }, 2 },
		{ "NodeVolumeLimits", { SK_EP_PRE_FILTER, SK_EP_FILTER }, 2 },
		{ "VolumeBinding", { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE, SK_EP_RESERVE, SK_EP_PRE_BIND }, 6 },
		{ "VolumeZone", { SK_EP_PRE_FILTER, SK_EP_FILTER }, 2 },
		{ "PodTopologySpread", { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE }, 4 },
		{ "InterPodAffinity", { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_SCORE, SK_EP_SCORE }, 4 },
		{ "DefaultPreemption", { SK_EP_POST_FILTER }, 1 },
		{ "NodeResourcesBalancedAllocation", { SK_EP_PRE_SCORE, SK_EP_SCORE }, 2 },
		{ "ImageLocality", { SK_EP_SCORE }, 1 },
		{ "DefaultBinder", { SK_EP_BIND }, 1 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct sk_plugin_desc *d = sk_registry_lookup(t[i].name);
		assert_non_null(d);
		for (int ep = 0; ep < SK_EP_COUNT; ep++) {
			bool want = false;
			for (int k = 0; k < t[i].n; k++)
				want |= t[i].eps[k] == (enum sk_ext_point)ep;
			if (sk_desc_implements(d, (enum sk_ext_point)ep) != want) {
				print_error("%s at %s: want %d\n", t[i].name, sk_ext_point_field((enum sk_ext_point)ep), want);
				fail();
			}
		}
	}
	/* NormalizeScore exactly where upstream has it */
	assert_non_null(sk_registry_lookup("TaintToleration")->normalize_score);
	assert_non_null(sk_registry_lookup("NodeAffinity")->normalize_score);
	assert_null(sk_registry_lookup("NodeResourcesFit")->normalize_score);
	assert_null(sk_registry_lookup("ImageLocality")->normalize_score);
	/* both with the PreFilter extensions (AddPod/RemovePod) and NormalizeScore (pkg/scheduler/framework/plugins/registry.go) */
	const char *const spread_affinity[] = { "PodTopologySpread", "InterPodAffinity" };
	for (int i = 0; i < 2; i++) {
		const struct sk_plugin_desc *d = sk_registry_lookup(spread_affinity[i]);
		assert_non_null(d->pre_filter_add_pod);
		assert_non_null(d->pre_filter_remove_pod);
		assert_non_null(d->normalize_score);
		assert_non_null(d->events_to_register);
	}
	/* args kinds */
	assert_string_equal(sk_registry_lookup("NodeResourcesFit")->args_kind, "NodeResourcesFitArgs");
	assert_string_equal(sk_registry_lookup("NodeAffinity")->args_kind, "NodeAffinityArgs");
	assert_string_equal(sk_registry_lookup("NodeResourcesBalancedAllocation")->args_kind,
			    "NodeResourcesBalancedAllocationArgs");
	assert_null(sk_registry_lookup("PrioritySort")->args_kind);
}

static const struct sk_plugin_desc my_plugin = { SK_PLUGIN_HEADER, .name = "MyPlugin" };
static const struct sk_plugin_desc old_abi = { .abi_major = 0, .abi_minor = 3, .size = sizeof(struct sk_plugin_desc), .name = "OldPlugin" };
static const struct sk_plugin_desc taken = { SK_PLUGIN_HEADER, .name = "NodeName" };
static const struct sk_plugin_desc upstream = { SK_PLUGIN_HEADER, .name = "DynamicResources" };

static struct sk_status one_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score)
{
	(void)self, (void)cs, (void)pod, (void)ni;
	*score = 1;
	return sk_ok();
}
static struct sk_status batch_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	(void)self, (void)cs, (void)pod, (void)nodes, (void)failed;
	for (int i = 0; i < n; i++)
		scores[i] = 1;
	return sk_ok();
}
static const struct sk_plugin_desc batch_only = { SK_PLUGIN_HEADER, .name = "BatchOnly", .score_batch = batch_score };
static const struct sk_plugin_desc batch_and_one = { SK_PLUGIN_HEADER, .name = "BatchAndOne", .score = one_score,
						     .score_batch = batch_score };

static void test_register(void **state)
{
	(void)state;
	char *err = NULL;
	assert_null(sk_registry_lookup("MyPlugin"));
	assert_int_equal(sk_registry_register(&my_plugin, &err), 0);
	assert_null(err);
	assert_ptr_equal(sk_registry_lookup("MyPlugin"), &my_plugin);
	assert_int_equal(sk_registry_register(&my_plugin, &err), -1);
	assert_string_equal(err, "a plugin named MyPlugin already exists");
	free(err);
	assert_int_equal(sk_registry_register(&taken, &err), -1);
	free(err);
	assert_int_equal(sk_registry_register(&upstream, &err), -1);
	free(err);
	assert_int_equal(sk_registry_register(&old_abi, &err), -1);
	char want[128];
	snprintf(want, sizeof(want), "plugin \"OldPlugin\": ABI 0.3 is not supported by this scheduler (ABI %d.%d)", SK_ABI_MAJOR,
		 SK_ABI_MINOR);
	assert_string_equal(err, want);
	free(err);
	/* score_batch (ABI 1.1) needs score beside it */
	assert_int_equal(sk_registry_register(&batch_only, &err), -1);
	assert_string_equal(err, "plugin \"BatchOnly\": score_batch is set without score (a batch plugin also scores one node)");
	free(err);
	err = NULL;
	assert_int_equal(sk_registry_register(&batch_and_one, &err), 0);
	assert_null(err);
	assert_int_equal(sk_registry_register(NULL, NULL), -1);
	/* registered plugins take part in suggestions */
	assert_string_equal(sk_registry_suggest("MyPlugn"), "MyPlugin");
}

static void test_suggest(void **state)
{
	(void)state;
	assert_string_equal(sk_registry_suggest("NodeResourceFit"), "NodeResourcesFit");
	assert_string_equal(sk_registry_suggest("nodeaffinity"), "NodeAffinity");
	assert_string_equal(sk_registry_suggest("TaintTolerations"), "TaintToleration");
	assert_string_equal(sk_registry_suggest("PodTopologySpred"), "PodTopologySpread");
	assert_string_equal(sk_registry_suggest("DefaultBinding"), "DefaultBinder");
	assert_null(sk_registry_suggest("Completely"));
	assert_null(sk_registry_suggest(""));
	assert_null(sk_registry_suggest(NULL));
}

static void test_unavailable(void **state)
{
	(void)state;
	const char *const want[] = { "DynamicResources", NULL };
	for (int i = 0; want[i]; i++) {
		assert_string_equal(sk_unavailable_default_plugins[i], want[i]);
		assert_null(sk_registry_lookup(want[i]));
		const struct sk_plugin_desc *stub = sk_unavailable_plugin_desc(want[i]);
		assert_non_null(stub);
		assert_string_equal(stub->name, want[i]);
		assert_null(stub->filter);
	}
	assert_null(sk_unavailable_default_plugins[1]);
	/* built plugins have no stub: the real descriptor wins */
	assert_null(sk_unavailable_plugin_desc("PodTopologySpread"));
	assert_null(sk_unavailable_plugin_desc("InterPodAffinity"));
	assert_null(sk_unavailable_plugin_desc("DefaultPreemption"));
	assert_non_null(sk_registry_lookup("DefaultPreemption"));
	assert_non_null(sk_registry_lookup("DefaultPreemption")->post_filter);
	assert_non_null(sk_registry_lookup("PodTopologySpread"));
	assert_non_null(sk_registry_lookup("InterPodAffinity"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_tree_order), cmocka_unit_test(test_default_set),
		cmocka_unit_test(test_extension_points), cmocka_unit_test(test_register),
		cmocka_unit_test(test_suggest),       cmocka_unit_test(test_unavailable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
