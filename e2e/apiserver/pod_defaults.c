/* API defaulting of a pod's resources (pkg/apis/core/v1/defaults.go, SetDefaults_Pod): in every
 * container and init container whose resources.limits is set, each limit missing from
 * resources.requests is copied there. So a pod that only sets limits is scheduled on (and seen
 * by extenders with) the same requests as with kube-apiserver. */
#include <string.h>

#include "e2e/apiserver/internal.h"

static void default_list(cJSON *containers)
{
	cJSON *c;
	cJSON_ArrayForEach(c, containers)
	{
		cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
		cJSON *lim = cJSON_GetObjectItemCaseSensitive(res, "limits");
		if (!cJSON_IsObject(lim) || !lim->child)
			continue;
		cJSON *req = cJSON_GetObjectItemCaseSensitive(res, "requests");
		if (!cJSON_IsObject(req)) {
			cJSON_DeleteItemFromObjectCaseSensitive(res, "requests");
			req = cJSON_AddObjectToObject(res, "requests");
			if (!req)
				return;
		}
		cJSON *l;
		cJSON_ArrayForEach(l, lim)
		{
			if (!l->string || cJSON_GetObjectItemCaseSensitive(req, l->string))
				continue;
			cJSON *v = cJSON_Duplicate(l, 1);
			if (v)
				cJSON_AddItemToObject(req, l->string, v);
		}
	}
}

void apis_default_pod_requests(cJSON *spec)
{
	default_list(cJSON_GetObjectItemCaseSensitive(spec, "containers"));
	default_list(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"));
}
