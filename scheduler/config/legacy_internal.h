/* Shared by the legacy translation files (policy.c, legacy_profile.c, legacy_v1.c, convert.c); not
 * a public API (scheduler/config/legacy.h is). */
#ifndef SK_CONFIG_LEGACY_INTERNAL_H
#define SK_CONFIG_LEGACY_INTERNAL_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "schedkit/args.h"
#include "scheduler/config/config.h"

/* A profile being built in upstream's internal shape (legacy.h): root holds schedulerName,
 * plugins and pluginConfig. */
struct legacy_profile {
	cJSON *root;
};
int lp_init(struct legacy_profile *lp, const char *scheduler_name);
void lp_free(struct legacy_profile *lp);
cJSON *lp_take(struct legacy_profile *lp); /* the root, now the caller's */
/* appendToPluginSet (legacy_registry.go): appends name to ep's enabled list unless it is there;
 * for an entry already there, the larger weight is kept. weight NULL = none. 0 or -1 (OOM). */
int lp_append(struct legacy_profile *lp, enum sk_ext_point ep, const char *name, const int32_t *weight);
/* pluginConfig: append {name, args copy} unless an entry for name exists (the producers give one
 * plugin identical args, which dedupPluginConfigs keeps once); set replaces an entry's args in
 * place or appends. get: the args of name, or NULL. 0 or -1 (OOM). */
int lp_config_append(struct legacy_profile *lp, const char *name, const cJSON *args);
int lp_config_set(struct legacy_profile *lp, const char *name, const cJSON *args);
const cJSON *lp_config_get(const struct legacy_profile *lp, const char *name);

/* The Policy's extenders (LegacyExtender: keys case-insensitive, enableHttps, httpTimeout in
 * nanoseconds) as v1 Extender objects. NULL/absent list: *out = NULL. 0, or -1 with errs. */
int legacy_extenders_to_v1(const cJSON *list, cJSON **out, struct sk_errors *notes, struct sk_errors *errs);

/* mergePluginSet of the pre-v1beta3 versions (pkg/scheduler/apis/config/v1beta2/default_plugins.go):
 * a new PluginSet {enabled} from a default set and a user set. NULL on OOM. */
cJSON *legacy_merge_plugin_set(const cJSON *defaults, const cJSON *user);

/* The upstream field name of an extension point ("queueSort", ...); sk_ext_point_field. */
#define LP_FIELD(ep) sk_ext_point_field(ep)

#endif
