/* The plugin registry, core side: the in-tree tables (built by plugins/registry.c from its one list
 * of plugins, so the core names no plugin), the upstream default plugin set, lookups, out-of-tree
 * registration and "did you mean" suggestions (scheduler/framework/registry.c). Not for plugins. */
#ifndef SK_FRAMEWORK_REGISTRY_H
#define SK_FRAMEWORK_REGISTRY_H

#include <stdint.h>

#include "schedkit/plugin.h"

/* Every in-tree plugin's descriptor, in upstream's default-set order; NULL-terminated. */
extern const struct sk_plugin_desc *const sk_in_tree_plugins[];
/* Upstream default plugins not available in this build (not implemented yet), in default-set
 * order; NULL-terminated. */
extern const char *const sk_unavailable_default_plugins[];

/* One plugin of upstream's default set (pkg/scheduler/apis/config/v1/default_plugins.go), all
 * enabled through multiPoint. */
struct sk_default_plugin {
	const char *name;                  /* upstream name */
	const struct sk_plugin_desc *desc; /* NULL when not built (then in sk_unavailable_default_plugins) */
	int32_t weight;                    /* default Score weight; 0 = unset */
};
extern const struct sk_default_plugin sk_default_plugins[]; /* in order */
extern const int sk_ndefault_plugins;

/* Lookup in-tree + registered out-of-tree plugins. NULL when unknown. */
const struct sk_plugin_desc *sk_registry_lookup(const char *name);
/* Adds an out-of-tree plugin (dlopen loader, tests). -1 if the name is taken or the ABI mismatches. */
int sk_registry_register(const struct sk_plugin_desc *desc, char **err);
/* Nearest known plugin name by edit distance, for "did you mean" (NULL if nothing is close). */
const char *sk_registry_suggest(const char *name);

#endif
