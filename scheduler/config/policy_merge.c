/* A Policy merged into a v1 KubeSchedulerConfiguration document: the one profile it makes replaces
 * config.profiles and its extenders become config.extenders, as upstream v1.22 ran a Policy with
 * the rest of its component config (pkg/scheduler/factory.go createFromConfig: "profiles and policy
 * config both set" is an error). Used by --policy-config-file (daemon, --validate, simulate) and
 * by the operator's spec.legacyPolicy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/config/legacy.h"

static void prefixed(struct sk_errors *dst, const char *where, const struct sk_errors *src)
{
	for (int i = 0; dst && i < src->n; i++)
		sk_errors_addf(dst, "%s: %s", where, src->msgs[i] ? src->msgs[i] : "out of memory");
}

static bool non_empty(const cJSON *config, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, key);
	return v && !cJSON_IsNull(v) && !(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0);
}

int sk_policy_merge(cJSON *config, const cJSON *policy, const char *where, struct sk_errors *notes,
		    struct sk_errors *errs)
{
	struct sk_errors e = { 0 }, n = { 0 };
	cJSON *legacy = NULL, *ext = NULL, *v1 = NULL;
	bool always = false;
	int rc = -1;
	if (!cJSON_IsObject(config)) {
		sk_errors_addf(errs, "%s: the configuration is not an object", where);
		return -1;
	}
	if (non_empty(config, "profiles"))
		sk_errors_addf(&e, "profiles and policy config both set: the Policy makes the one profile "
				   "\"default-scheduler\"; remove profiles from the configuration");
	if (non_empty(config, "extenders") && policy && non_empty(policy, "extenders"))
		sk_errors_addf(&e, "extenders: set in both the configuration and the Policy; keep one list");
	if (e.n == 0 && sk_policy_translate(policy, &legacy, &ext, &always, &n, &e) == 0)
		v1 = sk_legacy_profile_to_v1(legacy, &n, &e);
	if (v1) {
		cJSON *profiles = cJSON_CreateArray();
		if (profiles && cJSON_AddItemToArray(profiles, v1)) {
			v1 = NULL;
			cJSON_DeleteItemFromObjectCaseSensitive(config, "profiles");
			cJSON_AddItemToObject(config, "profiles", profiles);
			if (ext) {
				cJSON_DeleteItemFromObjectCaseSensitive(config, "extenders");
				cJSON_AddItemToObject(config, "extenders", ext);
				ext = NULL;
			}
			rc = 0;
		} else {
			cJSON_Delete(profiles);
			sk_errors_addf(&e, "out of memory");
		}
	}
	prefixed(errs, where, &e);
	prefixed(notes, where, &n);
	if (rc < 0 && e.n == 0)
		sk_errors_addf(errs, "%s: cannot translate the Policy", where);
	sk_errors_free(&e);
	sk_errors_free(&n);
	cJSON_Delete(legacy);
	cJSON_Delete(ext);
	cJSON_Delete(v1);
	return rc;
}

int sk_policy_merge_text(cJSON *config, const char *text, size_t len, const char *where, struct sk_errors *notes,
			 struct sk_errors *errs)
{
	char *perr = NULL;
	cJSON *policy = kube_yaml_parse_one(text, len, &perr);
	if (!policy) {
		sk_errors_addf(errs, "%s: %s", where, perr ? perr : "cannot parse");
		free(perr);
		return -1;
	}
	int rc = sk_policy_merge(config, policy, where, notes, errs);
	cJSON_Delete(policy);
	return rc;
}

int sk_policy_merge_file(cJSON *config, const char *policy_path, struct sk_errors *notes, struct sk_errors *errs)
{
	size_t len;
	int err;
	char *buf = kube_read_file(policy_path, 0, &len, &err);
	if (!buf) {
		sk_errors_addf(errs, "failed to read policy file \"%s\": %s", policy_path, strerror(err));
		return -1;
	}
	char where[512];
	snprintf(where, sizeof where, "policy file \"%s\"", policy_path);
	int rc = sk_policy_merge_text(config, buf, len, where, notes, errs);
	free(buf);
	return rc;
}
