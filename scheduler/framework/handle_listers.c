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

struct counted {
	void (*fn)(const cJSON *obj, void *u);
	void *u;
	int n;
};

static void count_call(const cJSON *obj, void *u)
{
	struct counted *c = u;
	c->n++;
	c->fn(obj, c->u);
}

int sk_handle_list_objects(struct sk_handle *h, const char *kind, const char *ns,
			   void (*fn)(const cJSON *obj, void *u), void *u)
{
	int k = sk_lister_kind_named(kind);
	if (k < 0 || !fn)
		return -1;
	const struct sk_listers *l = sk_handle_env(h)->listers;
	struct counted c = { fn, u, 0 };
	if (l && l->list)
		l->list(l->ctx, (enum sk_lister_kind)k, ns, count_call, &c);
	return c.n;
}

int sk_handle_get_object(struct sk_handle *h, const char *kind, const char *ns, const char *name,
			 void (*fn)(const cJSON *obj, void *u), void *u)
{
	int k = sk_lister_kind_named(kind);
	if (k < 0 || !fn)
		return -1;
	const struct sk_listers *l = sk_handle_env(h)->listers;
	struct counted c = { fn, u, 0 };
	if (l && l->get && name)
		l->get(l->ctx, (enum sk_lister_kind)k, ns, name, count_call, &c);
	return c.n;
}
