/* VolumeBinding's storage capacity check for dynamic provisioning (hasEnoughCapacity,
 * capacitySufficient, nodeHasAccess of pkg/scheduler/framework/plugins/volumebinding/binder.go):
 * a claim to provision with a CSI driver that opts in (CSIDriver spec.storageCapacity: true) needs
 * a CSIStorageCapacity of its StorageClass whose nodeTopology matches the node's labels and whose
 * maximumVolumeSize (else capacity) holds the requested size. */
#include <string.h>

#include "binder.h"
#include "schedkit/log.h"

/* nodeHasAccess: a capacity without nodeTopology is available nowhere; {} matches every node. */
static bool node_has_access(const struct sk_node *node, const struct sk_csi_storage_capacity *cap)
{
	if (!cap->node_topology)
		return false;
	return kube_label_selector_matches(cap->node_topology, sk_labels_get, &node->labels);
}

int vb_has_enough_capacity(struct sk_plugin *self, const char *provisioner, const struct sk_pvc *claim,
			   const char *class_name, const struct sk_node *node, bool *sufficient)
{
	*sufficient = true;
	if (!claim->has_request_storage)
		return 0; /* no capacity to check for */
	struct sk_csi_driver *drv = sk_handle_get_csi_driver(self->handle, provisioner);
	bool opted_in = drv && drv->storage_capacity;
	sk_vobj_unref(drv);
	if (!opted_in)
		return 0; /* not a CSI driver, or one that does not track capacity */
	struct sk_csi_storage_capacity **caps = NULL;
	int n = sk_handle_list_csi_storage_capacities(self->handle, &caps);
	if (n < 0)
		return -1;
	*sufficient = false;
	for (int i = 0; i < n && !*sufficient; i++) {
		int64_t limit;
		*sufficient = strcmp(caps[i]->class_name, class_name) == 0 &&
			      sk_csi_storage_capacity_limit(caps[i], &limit) && limit >= claim->request_storage &&
			      node_has_access(node, caps[i]);
	}
	sk_vobj_list_free(caps, n);
	if (!*sufficient)
		sk_log_info(4, "Node has no accessible CSIStorageCapacity with enough capacity for PVC",
			    " node=%s PVC=%s/%s size=%lld storageClass=%s", node->name, claim->meta.ns, claim->meta.name,
			    (long long)claim->request_storage, class_name);
	return 0;
}
