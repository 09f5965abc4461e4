/* The plugin API's lister functions (schedkit/plugin.h, "listers"): the handle's view of the
 * Service, controller and Namespace listers its framework was built with (env.listers), computed
 * by scheduler/api/workloads.c. */
#include <stdlib.h>

#include "kube/selector.h"
#include "schedkit/plugin.h"
#include "schedkit/selector.h"
#include "scheduler/api/workloads.h"
#include "scheduler/framework/runtime.h"

struct kube_label_selector *sk_handle_default_selector(struct sk_handle *h, const struct sk_pod *pod)
{
	struct kube_label_selector *s = NULL;
	if (!pod || sk_default_selector(sk_handle_env(h)->listers, pod, &s) != 0)
		return NULL;
	return s;
}

struct sk_labels *sk_handle_namespace_labels(struct sk_handle *h, const char *ns)
{
	return sk_namespace_labels(sk_handle_env(h)->listers, ns);
}

int sk_handle_namespaces_matching(struct sk_handle *h, const struct kube_label_selector *sel, const char ***out)
{
	return sk_namespaces_matching(sk_handle_env(h)->listers, sel, out);
}
