/* patch.h — the three PATCH flavours the local API server accepts: RFC 7386 JSON merge patch,
 * RFC 6902 JSON patch and Kubernetes strategic merge patch (for built-in kinds, with a merge-key
 * table derived from the patchMergeKey/patchStrategy tags of core/v1, apps/v1, ... types).
 * All functions work on cJSON trees; no global state, thread-safe. */
#ifndef SK_APISERVER_PATCH_H
#define SK_APISERVER_PATCH_H

#include <cjson/cJSON.h>

/* RFC 7386 JSON merge patch. *target may be replaced (when patch is not an object, or *target is
 * NULL/not an object). Returns 0, or -1 on allocation failure (*target then still valid). */
int apis_merge_patch(cJSON **target, const cJSON *patch);

/* RFC 6902 JSON patch (add, remove, replace, move, copy, test). Atomic: on error *target is
 * untouched and *err (caller frees) says which op failed and why. Returns 0 or -1. */
int apis_json_patch(cJSON **target, const cJSON *ops, char **err);

/* Strategic merge patch for built-in kinds (merge keys: containers/initContainers/
 * ephemeralContainers by name, ports by containerPort, env by name, volumes by name,
 * volumeMounts by mountPath, tolerations replace, conditions by type, ownerReferences by uid,
 * ... as upstream's struct tags), directives $patch: replace|delete|merge, $retainKeys,
 * $deleteFromPrimitiveList/<field>, $setElementOrder/<field>. kind like "Pod", "Deployment",
 * "ConfigMap"; an unknown kind (or NULL) behaves like a JSON merge patch that also understands
 * the directives. Atomic: on error *target is untouched and *err (caller frees) explains.
 * Returns 0 or -1. */
int apis_strategic_merge_patch(cJSON **target, const cJSON *patch, const char *kind, char **err);

/* True when kind has a strategic-merge table (built-in kinds). Custom resources do not:
 * the server answers 415 for strategic merge patches to them, as upstream does. */
int apis_strategic_kind_known(const char *kind);

#endif
