/* The in-tree plugins: one line each, in upstream's default-set order
 * (pkg/scheduler/apis/config/v1/default_plugins.go), with the upstream defaults this build lacks
 * in their places. The tables of scheduler/framework/registry.h are built from this list, so the
 * core never names a plugin; adding one is its folder plus a line here (docs/architecture.md). */
#include <stddef.h>

#include "schedkit/plugin.h"
#include "scheduler/framework/registry.h"

/* PLUGIN(Name, descriptor, weight): built in and enabled by default through multiPoint. Name is the
 * upstream name, the plugin's folder and its descriptor's .name; weight is its default Score
 * weight (0 = unset).
 * NOT_BUILT(Name, weight): an upstream default plugin this build does not have yet; configs naming
 * it are still validated (scheduler/config/config_args.c) and profiles run without it. */
#define SK_PLUGINS(PLUGIN, NOT_BUILT)                                                \
	PLUGIN(SchedulingGates, sk_plugin_scheduling_gates, 0)                       \
	PLUGIN(PrioritySort, sk_plugin_priority_sort, 0)                             \
	PLUGIN(NodeUnschedulable, sk_plugin_node_unschedulable, 0)                   \
	PLUGIN(NodeName, sk_plugin_node_name, 0)                                     \
	PLUGIN(TaintToleration, sk_plugin_taint_toleration, 3)                       \
	PLUGIN(NodeAffinity, sk_plugin_node_affinity, 2)                             \
	PLUGIN(NodePorts, sk_plugin_node_ports, 0)                                   \
	PLUGIN(NodeResourcesFit, sk_plugin_node_resources_fit, 1)                    \
	PLUGIN(VolumeRestrictions, sk_plugin_volume_restrictions, 0)                \
	PLUGIN(NodeVolumeLimits, sk_plugin_node_volume_limits, 0)                   \
	PLUGIN(VolumeBinding, sk_plugin_volume_binding, 0)                          \
	PLUGIN(VolumeZone, sk_plugin_volume_zone, 0)                                \
	PLUGIN(PodTopologySpread, sk_plugin_pod_topology_spread, 2)                  \
	PLUGIN(InterPodAffinity, sk_plugin_inter_pod_affinity, 2)                    \
	NOT_BUILT(DynamicResources, 0) /* a default since DRA went GA in v1.34 */   \
	PLUGIN(DefaultPreemption, sk_plugin_default_preemption, 0)                   \
	PLUGIN(NodeResourcesBalancedAllocation, sk_plugin_node_resources_balanced_allocation, 1) \
	PLUGIN(ImageLocality, sk_plugin_image_locality, 1)                           \
	PLUGIN(DefaultBinder, sk_plugin_default_binder, 0)

#define SKIP_PLUGIN(name, desc, weight)
#define SKIP_NOT_BUILT(name, weight)

#define DECLARE(name, desc, weight) extern const struct sk_plugin_desc desc;
SK_PLUGINS(DECLARE, SKIP_NOT_BUILT)

#define DESC_ENTRY(name, desc, weight) &desc,
const struct sk_plugin_desc *const sk_in_tree_plugins[] = { SK_PLUGINS(DESC_ENTRY, SKIP_NOT_BUILT) NULL };

#define NOT_BUILT_NAME(name, weight) #name,
const char *const sk_unavailable_default_plugins[] = { SK_PLUGINS(SKIP_PLUGIN, NOT_BUILT_NAME) NULL };

#define DEFAULT_BUILT(name, desc, weight) { #name, &desc, weight },
#define DEFAULT_NOT_BUILT(name, weight) { #name, NULL, weight },
const struct sk_default_plugin sk_default_plugins[] = { SK_PLUGINS(DEFAULT_BUILT, DEFAULT_NOT_BUILT) };
const int sk_ndefault_plugins = (int)(sizeof(sk_default_plugins) / sizeof(sk_default_plugins[0]));
