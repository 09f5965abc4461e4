/* SchedulerProfile.spec.legacyPolicy and spec.provider DefaultProvider / ClusterAutoscalerProvider:
 * the profile the scheduler's own legacy translation (scheduler/config/legacy.h) makes of them,
 * named as the SchedulerProfile asks, and a summary of the result for status.translation. Pure. */
#ifndef OP_LEGACY_H
#define OP_LEGACY_H

#include <cjson/cJSON.h>

/* For a spec with a legacyPolicy or an upstream provider name: returns 1 with *profile (a v1
 * KubeSchedulerProfile named scheduler_name) and, when translation is not NULL, *translation =
 * {"source": "legacyPolicy" | "provider <Name>", "plugins": {"<point>": ["Name", "Name:weight"
 * (score)]} (queueSort shows the PrioritySort the profile enables through multiPoint), "notes": ["..."]}; both the caller's. Returns 0 (nothing set) for any other spec, and
 * -1 with *err (caller frees) naming the field: a Policy that does not translate
 * ("spec.legacyPolicy.predicates[0].name: predicate type not found for \"X\""), or fields that
 * cannot go with it (a legacyPolicy is the whole profile: plugins, pluginConfig and another
 * provider are refused, as upstream refused profiles beside a Policy). With an upstream provider,
 * spec.plugins is merged into each extension point's list (mergePluginSet) and spec.pluginConfig
 * over the translated args, field by field. */
int op_render_legacy(const cJSON *spec, const char *scheduler_name, cJSON **profile, cJSON **translation, char **err);

/* The upstream provider names spec.provider accepts beside Default and ClusterAutoscaler. */
int op_is_upstream_provider(const char *provider);

#endif
