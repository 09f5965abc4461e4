/* Where the daemon's legacy Policy comes from (docs/config.md "Legacy Policy"): the
 * --policy-config-file, or the ConfigMap named by --policy-configmap in
 * --policy-configmap-namespace (default kube-system), data key "policy.cfg", read through the API
 * as upstream v1.22 did (pkg/scheduler/scheduler.go, initPolicyFromConfigMap; the ConfigMap must
 * exist at start). Both are read again at every configuration check (reload.c), so a changed
 * Policy alone reloads, through the same path as a changed --config (a bad Policy is rejected
 * and the running configuration stays). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/rest.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"

#define POLICY_KEY "policy.cfg"

bool sk_dm_policy_configured(const struct sk_daemon_opts *o)
{
	return (o->policy_configmap && *o->policy_configmap) || o->policy_path;
}

static const char *cm_ns(const struct sk_daemon_opts *o)
{
	return o->policy_configmap_ns && *o->policy_configmap_ns ? o->policy_configmap_ns : "kube-system";
}

int sk_dm_policy_read(const struct sk_daemon_opts *o, struct kube_client *c, char **text, size_t *len,
		      char where[SK_DM_POLICY_WHERE], char **err)
{
	*text = NULL;
	*len = 0;
	where[0] = '\0';
	if (o->policy_path) { /* the file wins over the ConfigMap, as upstream's deprecated options */
		snprintf(where, SK_DM_POLICY_WHERE, "policy file \"%s\"", o->policy_path);
		int e = 0;
		if (!(*text = kube_read_file(o->policy_path, 0, len, &e)))
			return kube_errf(err, "failed to read policy file \"%s\": %s", o->policy_path, strerror(e));
		return 0;
	}
	if (!o->policy_configmap || !*o->policy_configmap)
		return 0;
	const char *ns = cm_ns(o);
	snprintf(where, SK_DM_POLICY_WHERE, "policy config map %s/%s", ns, o->policy_configmap);
	if (!c)
		return kube_errf(err, "%s: no API client", where);
	char *path = kube_path(NULL, "v1", "configmaps", ns, o->policy_configmap, NULL);
	cJSON *cm = NULL;
	struct kube_error ke = { 0 };
	if (!path)
		return kube_errf(err, "out of memory");
	int rc = kube_get(c, path, &cm, &ke);
	free(path);
	if (rc != 0)
		return kube_errf(err, "failed to get policy config map %s/%s: %s", ns, o->policy_configmap,
				 *ke.message ? ke.message : *ke.reason ? ke.reason : "request failed");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cm, "data"), POLICY_KEY);
	if (!cJSON_IsString(v)) {
		cJSON_Delete(cm);
		return kube_errf(err, "%s: missing policy config map value at key \"%s\"", where, POLICY_KEY);
	}
	*text = strdup(v->valuestring);
	cJSON_Delete(cm);
	if (!*text)
		return kube_errf(err, "out of memory");
	*len = strlen(*text);
	return 0;
}
