/* DefaultBinder (Bind): POSTs the pod's binding through the framework handle (pkg/scheduler/framework/plugins/defaultbinder/default_binder.go).
 * An API error becomes an Error status carrying its message. */
#include <stdlib.h>

#include "schedkit/plugin.h"

static struct sk_status default_binder_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					    const char *node_name)
{
	(void)cs;
	char *err = NULL;
	if (sk_handle_bind_pod(self->handle, pod, node_name, &err) == 0) {
		free(err);
		return sk_ok();
	}
	struct sk_status s = sk_statusf(SK_ERROR, "%s", err ? err : "binding failed");
	free(err);
	return s;
}

const struct sk_plugin_desc sk_plugin_default_binder = {
	SK_PLUGIN_HEADER,
	.name = "DefaultBinder",
	.bind = default_binder_bind,
};
