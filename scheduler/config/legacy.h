/* The old ways of configuring kube-scheduler, translated to kubescheduler.config.k8s.io/v1: the
 * pre-1.23 Policy API (predicates and priorities), the algorithm providers, the plugin names that
 * left the API (NodeResourcesLeastAllocated, NodeLabel, ...) and old KubeSchedulerConfiguration
 * versions (v1beta1/2/3). Two steps, both pure (cJSON in, cJSON out, no I/O except the *_file
 * helpers):
 *   1. Policy or provider -> the v1.22 framework profile upstream built from it, with the plugin
 *      names of that time (pkg/scheduler/factory.go createFromConfig, pkg/scheduler/framework/
 *      plugins/legacy_registry.go, pkg/scheduler/algorithmprovider/registry.go);
 *   2. such a profile -> a v1 profile, every plugin that left the API replaced by its v1 form or
 *      named, with the reason, in a list of notes (docs/config.md, "Legacy Policy and convert").
 * Notes are lines a user reads ("priority NodePreferAvoidPodsPriority: not carried over: ...");
 * errors make the input unusable. */
#ifndef SK_CONFIG_LEGACY_H
#define SK_CONFIG_LEGACY_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "schedkit/args.h"

/* A v1.22 profile in upstream's internal shape: {"schedulerName", "plugins": {"queueSort":
 * {"enabled": [{"name", "weight"?}]}, ...}, "pluginConfig": [{"name", "args"}]}. */

/* The Policy translated as upstream v1.22 did (step 1). policy is the decoded document (JSON or
 * YAML). On success returns 0 with *legacy_profile (schedulerName default-scheduler), *extenders
 * (the Policy's extenders in the v1 Extender shape, or NULL when it has none) and
 * *always_check_all; both results are the caller's (cJSON_Delete). On failure returns -1 with every
 * error in errs, each naming its field ("predicates[2].name: predicate type not found for
 * \"Foo\""). notes gets what the translation alone cannot keep (may be NULL). */
int sk_policy_translate(const cJSON *policy, cJSON **legacy_profile, cJSON **extenders, bool *always_check_all,
			struct sk_errors *notes, struct sk_errors *errs);

/* DefaultProvider or ClusterAutoscalerProvider as a v1.22 profile (step 1; the v1.21-v1.22
 * content, DefaultPodTopologySpread on, VolumeCapacityPriority off). NULL for another name. */
cJSON *sk_provider_profile(const char *provider);
/* "DefaultProvider", "ClusterAutoscalerProvider", NULL. */
extern const char *const sk_provider_names[];

/* Step 2: a profile whose plugin sets are complete (a step-1 result, or an old version's profile
 * merged with its defaults) as a v1 profile: schedulerName kept, plugins.multiPoint disabling
 * every default and each extension point listing its plugins, pluginConfig in v1 kinds. Returns
 * the new profile (caller frees), NULL on OOM or when errs got an error. notes gets one line per
 * plugin, argument or weight that could not be carried over exactly. */
cJSON *sk_legacy_profile_to_v1(const cJSON *legacy_profile, struct sk_errors *notes, struct sk_errors *errs);

/* mergePluginSet as every version had it (pkg/scheduler/apis/config/v1beta2/default_plugins.go):
 * a PluginSet {enabled} from a default set and a user set {enabled, disabled} ("*" drops every
 * default; a user entry of a default's name replaces it in place; the others are appended).
 * Either may be NULL. Caller frees; NULL on OOM. */
cJSON *sk_plugin_set_merge(const cJSON *defaults, const cJSON *user);

/* A Policy file read and translated into one v1 profile, merged into config (a decoded v1
 * KubeSchedulerConfiguration, modified in place): the profile becomes config.profiles (a config
 * that already has profiles is an error, as upstream's "profiles and policy config both set"), the
 * Policy's extenders become config.extenders (an error when the config has extenders too). Notes
 * are prefixed with the file name. Returns 0 or -1 with errs. */
int sk_policy_merge_file(cJSON *config, const char *policy_path, struct sk_errors *notes, struct sk_errors *errs);
/* The same for a Policy's text (JSON or YAML: a file the caller read, a ConfigMap's policy.cfg);
 * where names it in messages ("policy file \"/etc/p.json\"", "policy config map kube-system/p"). */
int sk_policy_merge_text(cJSON *config, const char *text, size_t len, const char *where, struct sk_errors *notes,
			 struct sk_errors *errs);
/* The same for a Policy already decoded; where names the Policy in messages. */
int sk_policy_merge(cJSON *config, const cJSON *policy, const char *where, struct sk_errors *notes,
		    struct sk_errors *errs);

/* `schedkit-scheduler convert`: an old KubeSchedulerConfiguration (v1beta1, v1beta2, v1beta3 or
 * v1) and an optional Policy (policy may be NULL; a config with algorithmSource.policy needs one)
 * as a v1 KubeSchedulerConfiguration. Returns the new document (caller frees) or NULL with errs;
 * notes lists everything not carried over. */
cJSON *sk_convert_config(const cJSON *old_config, const cJSON *policy, struct sk_errors *notes, struct sk_errors *errs);
/* The subcommand: argv[0] = "convert". Writes the v1 YAML to --output (or out), each note as a
 * "# not carried over: ..." line at its top and on errout. Exit code 0, 1 (input errors) or 2
 * (usage). */
int sk_convert_main(int argc, char **argv, FILE *out, FILE *errout);

#endif
