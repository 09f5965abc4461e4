/* The daemon's listers (scheduler/api/workloads.h): one informer per kind upstream's plugins list
 * (Services, ReplicationControllers, ReplicaSets, StatefulSets for PodTopologySpread's default
 * selector; Namespaces for InterPodAffinity's namespaceSelector), read under each store's lock.
 * Namespaced kinds are indexed by namespace (client-go's NamespaceIndex), so a namespace's list
 * reads only its objects. The scheduling loop starts once they have synced (sk_dm_listers_synced),
 * as upstream's WaitForCacheSync waits for every informer the plugins asked the factory for. */
#include <stdio.h>
#include <string.h>

#include "kube/informer.h"
#include "kube/object.h"
#include "scheduler/daemon/internal.h"

struct list_filter {
	const char *ns; /* NULL: every namespace */
	sk_lister_fn fn;
	void *u;
};

static void filtered(const cJSON *obj, void *u)
{
	const struct list_filter *f = u;
	if (f->ns) {
		const char *ns = kube_meta_namespace(obj);
		if (!ns || strcmp(ns, f->ns))
			return;
	}
	f->fn(obj, f->u);
}

#define NS_INDEX "namespace"

static int namespace_key(const cJSON *obj, const char **out, int max, void *u)
{
	(void)u;
	const char *ns = kube_meta_namespace(obj);
	if (!ns || max < 1)
		return 0;
	out[0] = ns;
	return 1;
}

static void informer_list(void *ctx, enum sk_lister_kind kind, const char *ns, sk_lister_fn fn, void *u)
{
	struct sk_daemon *d = ctx;
	if ((unsigned)kind >= SK_LISTER_NKINDS || !d->workloads[kind])
		return;
	if (ns && sk_lister_resource(kind)->namespaced &&
	    kube_store_by_index_with(d->workloads[kind], NS_INDEX, ns, fn, u) == 0)
		return;
	struct list_filter f = { sk_lister_resource(kind)->namespaced ? ns : NULL, fn, u };
	kube_store_list_with(d->workloads[kind], filtered, &f);
}

static void informer_get(void *ctx, enum sk_lister_kind kind, const char *ns, const char *name, sk_lister_fn fn, void *u)
{
	struct sk_daemon *d = ctx;
	if ((unsigned)kind >= SK_LISTER_NKINDS || !d->workloads[kind] || !name)
		return;
	char key[512];
	if (sk_lister_resource(kind)->namespaced)
		snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", name);
	else
		snprintf(key, sizeof key, "%s", name);
	kube_store_get_with(d->workloads[kind], key, fn, u);
}

int sk_dm_listers_new(struct sk_daemon *d)
{
	for (int k = 0; k < SK_LISTER_NKINDS; k++) {
		const struct sk_lister_resource *r = sk_lister_resource((enum sk_lister_kind)k);
		struct kube_informer_opts o = { .group = *r->group ? r->group : NULL, .version = r->version,
						.resource = r->resource };
		if (kube_informer_new(d->client, &o, &d->workloads[k]) != 0)
			return -1;
		if (r->namespaced && kube_informer_add_index(d->workloads[k], NS_INDEX, namespace_key, NULL) != 0)
			return -1;
	}
	d->listers = (struct sk_listers){ .ctx = d, .list = informer_list, .get = informer_get };
	return 0;
}

int sk_dm_listers_start(struct sk_daemon *d)
{
	for (int k = 0; k < SK_LISTER_NKINDS; k++)
		if (d->workloads[k] && kube_informer_start(d->workloads[k]) != 0)
			return -1;
	return 0;
}

bool sk_dm_listers_synced(struct sk_daemon *d)
{
	for (int k = 0; k < SK_LISTER_NKINDS; k++)
		if (d->workloads[k] && !kube_informer_has_synced(d->workloads[k]))
			return false;
	return true;
}

void sk_dm_listers_stop(struct sk_daemon *d)
{
	for (int k = 0; k < SK_LISTER_NKINDS; k++)
		if (d->workloads[k])
			kube_informer_stop(d->workloads[k]);
}

void sk_dm_listers_free(struct sk_daemon *d)
{
	for (int k = 0; k < SK_LISTER_NKINDS; k++) {
		kube_informer_free(d->workloads[k]);
		d->workloads[k] = NULL;
	}
}
