/* The storage listers and the merge-patch call of the plugin API (schedkit/volume.h): thin
 * wrappers over the env's volume store (scheduler/backend/volume_store.h) and api_patch. */
#include <stdlib.h>

#include "kube/util.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/framework/runtime.h"
#include "schedkit/volume.h"

static struct sk_volume_store *store(struct sk_handle *h)
{
	return sk_framework_env(sk_handle_framework(h))->volumes;
}

struct sk_pvc *sk_handle_get_pvc(struct sk_handle *h, const char *ns, const char *name)
{
	return (struct sk_pvc *)sk_volume_store_get(store(h), SK_VOBJ_PVC, ns, name);
}

struct sk_pv *sk_handle_get_pv(struct sk_handle *h, const char *name)
{
	return (struct sk_pv *)sk_volume_store_get(store(h), SK_VOBJ_PV, NULL, name);
}

struct sk_storage_class *sk_handle_get_storage_class(struct sk_handle *h, const char *name)
{
	return (struct sk_storage_class *)sk_volume_store_get(store(h), SK_VOBJ_STORAGE_CLASS, NULL, name);
}

struct sk_csi_node *sk_handle_get_csi_node(struct sk_handle *h, const char *node_name)
{
	return (struct sk_csi_node *)sk_volume_store_get(store(h), SK_VOBJ_CSI_NODE, NULL, node_name);
}

struct sk_csi_driver *sk_handle_get_csi_driver(struct sk_handle *h, const char *name)
{
	return (struct sk_csi_driver *)sk_volume_store_get(store(h), SK_VOBJ_CSI_DRIVER, NULL, name);
}

int sk_handle_list_pvs(struct sk_handle *h, struct sk_pv ***out)
{
	return sk_volume_store_list(store(h), SK_VOBJ_PV, (struct sk_vobj ***)out);
}

int sk_handle_api_patch(struct sk_handle *h, const char *path, const cJSON *patch, cJSON **out, bool *conflict,
			char **err)
{
	if (err)
		*err = NULL;
	if (out)
		*out = NULL;
	if (conflict)
		*conflict = false;
	const struct sk_framework_env *env = sk_framework_env(sk_handle_framework(h));
	if (!path || path[0] != '/')
		return kube_errf(err, "PATCH %s: an API path starts with '/'", path ? path : "");
	if (!env->api_patch)
		return kube_errf(err, "PATCH %s: profile %s has no API client", path,
				 sk_framework_profile_name(sk_handle_framework(h)));
	bool c = false;
	int rc = env->api_patch(env->ctx, path, patch, out, &c, err);
	if (conflict)
		*conflict = c;
	return rc;
}

int sk_handle_list_csi_storage_capacities(struct sk_handle *h, struct sk_csi_storage_capacity ***out)
{
	return sk_volume_store_list(store(h), SK_VOBJ_CSI_STORAGE_CAPACITY, (struct sk_vobj ***)out);
}

int sk_handle_list_volume_attachments(struct sk_handle *h, const char *node_name,
				      struct sk_volume_attachment ***out)
{
	return sk_volume_store_list_volume_attachments(store(h), node_name, (struct sk_vobj ***)out);
}
