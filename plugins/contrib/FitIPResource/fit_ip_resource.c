/* FitIPResource (PreFilter, Filter, EnqueueExtensions) and FitIPResourceArgs: a node runs at most
 * as many pods with a pod IP as it has addresses, from status.allocatable[resourceName] or else
 * from the size of spec.podCIDR(s) minus the addresses the CNI reserves. hostNetwork pods take no
 * pod IP. A contrib module (fitipresource.so) built with the SDK alone; semantics in
 * docs/plugins.md ("FitIPResource"). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <schedkit/args.h>
#include <schedkit/log.h>
#include <schedkit/plugin.h>
#include <schedkit/module.h>

#define FIP_NAME "FitIPResource"
#define FIP_ARGS_KIND "FitIPResourceArgs"
#define FIP_REASON "Insufficient pod IPs"
#define FIP_DEFAULT_RESOURCE "schedkit.io/pod-ips"
/* host-local IPAM (the usual CNI address manager) keeps the network address, the gateway (the
 * first address) and the broadcast address of a node's range out of its pool: a /24 gives 253. */
#define FIP_DEFAULT_RESERVED 3
#define FIP_MAX_RESERVED 65536
#define FIP_UNLIMITED INT64_MAX

struct fip_args {
	char *resource_name; /* an extended resource of status.allocatable */
	const char *resource_interned; /* sk_intern(resource_name) */
	int64_t reserved;    /* addresses of each podCIDR the pods cannot have */
};

/* Every node's capacity by the snapshot's node index (sk_node_info.index, plugin ABI 1.2,
 * docs/plugins.md "Per-node plugin data"), computed once per change of the snapshot's nodes
 * (sk_snapshot.nodes_version: a node added, removed or updated) on the scheduling thread, so
 * Filter reads one element of a dense array instead of the node's allocatable and podCIDR size
 * (a cache line of the node no other default Filter reads). at[i] is the node's only when
 * serial matches its index_serial. min_cap is the smallest capacity of all the snapshot's nodes:
 * a node holding fewer pods than that has a free address whatever its own capacity, so Filter
 * decides most nodes from the node info's pod count alone (a line every Filter reads). Immutable
 * once built; the instance holds one reference and each cycle that took it (CycleState) one
 * more. */
struct fip_caps {
	atomic_int refs;
	uint64_t version;
	int64_t min_cap;
	int32_t n;
	struct fip_cap {
		int64_t cap;
		uint32_t serial;
	} *at;
};

struct fip {
	const struct fip_args *args;
	int reported; /* atomic: the "not limited" start-up line was written */
	struct fip_caps *caps; /* scheduling thread only; NULL until the first PreFilter */
};

/* ---------- args ---------- */

static void fip_args_free(void *p)
{
	struct fip_args *a = p;
	if (a)
		free(a->resource_name);
	free(a);
}

/* resourceName must be an extended resource (a qualified name with a domain): those are what the
 * scheduler keeps from status.allocatable beyond cpu, memory, ephemeral-storage and pods. */
static int fip_check_resource(struct sk_errors *e, const char *path, const char *name)
{
	const char *slash = strchr(name, '/');
	if (!slash || slash == name) {
		sk_err_invalid_str(e, path, name, "must be an extended resource name (<domain>/<name>)");
		return -1;
	}
	return sk_validate_label_name(e, path, name);
}

static int fip_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "resourceName", "reservedAddresses", NULL };
	struct fip_args *a = calloc(1, sizeof(*a));
	char *rpath = sk_path_child(path, "resourceName");
	bool present = false;
	int rc = -1;
	if (!a || !rpath) {
		sk_errors_addf(e, "%s: out of memory", path);
		goto out;
	}
	a->reserved = FIP_DEFAULT_RESERVED;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, FIP_ARGS_KIND, path, e) < 0)
		goto out;
	if (json && (sk_json_string(json, "resourceName", path, &a->resource_name, &present, e) < 0 ||
		     sk_json_int(json, "reservedAddresses", path, 0, FIP_MAX_RESERVED, &a->reserved, NULL, e) < 0))
		goto out;
	if (!present && !(a->resource_name = strdup(FIP_DEFAULT_RESOURCE))) {
		sk_errors_addf(e, "%s: out of memory", path);
		goto out;
	}
	rc = fip_check_resource(e, rpath, a->resource_name);
	if (rc == 0 && !(a->resource_interned = sk_intern(a->resource_name))) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
	}
out:
	free(rpath);
	if (rc < 0) {
		fip_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *fip_args_encode(const void *p)
{
	const struct fip_args *a = p;
	cJSON *o = sk_args_json_new(FIP_ARGS_KIND);
	if (!o || !cJSON_AddStringToObject(o, "resourceName", a ? a->resource_name : FIP_DEFAULT_RESOURCE))
		goto fail;
	cJSON *n = sk_json_create_int64(a ? a->reserved : FIP_DEFAULT_RESERVED);
	if (!n)
		goto fail;
	if (!cJSON_AddItemToObject(o, "reservedAddresses", n)) {
		cJSON_Delete(n);
		goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* ---------- capacity ---------- */

/* The strcmp fallback of fip_node_capacity (names not interned), out of line: no call on the
 * common path, so Filter's fast path saves no registers. */
static __attribute__((noinline)) bool fip_scalar_by_name(const struct sk_resource *r, const char *name, int64_t *v)
{
	for (int i = 0; i < r->nscalar; i++)
		if (!strcmp(r->scalar[i].name, name)) {
			*v = r->scalar[i].value;
			return true;
		}
	return false;
}

/* Per call of Filter on every filtered node: the allocatable entry is found by the interned name's
 * pointer (resource names are interned, types.h) with strcmp only as the fallback, and the podCIDR
 * size was computed when the node was decoded (sk_node.pod_cidr_addresses, ABI 1.1). */
static inline __attribute__((always_inline)) int64_t fip_node_capacity(const struct fip_args *a,
								    const struct sk_node *node)
{
	const struct sk_resource *r = &node->allocatable;
	for (int i = 0; i < r->nscalar; i++)
		if (r->scalar[i].name == a->resource_interned)
			return r->scalar[i].value;
	int64_t v;
	if (r->nscalar && fip_scalar_by_name(r, a->resource_name, &v))
		return v;
	int64_t n = node->pod_cidr_addresses;
	if (n <= 0)
		return FIP_UNLIMITED;
	return n > a->reserved ? n - a->reserved : 0;
}

static void fip_caps_unref(void *p)
{
	struct fip_caps *x = p;
	if (!x || atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(x->at);
	free(x);
}

static const struct sk_state_ops fip_state_ops = { .free = fip_caps_unref, .clone = NULL };

/* The capacities of snap's nodes; NULL when it numbers none or on ENOMEM (Filter then reads the
 * nodes). */
static struct fip_caps *fip_caps_build(const struct fip_args *a, const struct sk_snapshot *snap)
{
	if (!snap || snap->index_end <= 0)
		return NULL;
	struct fip_caps *x = calloc(1, sizeof(*x));
	if (!x || !(x->at = calloc((size_t)snap->index_end, sizeof(*x->at)))) {
		free(x);
		return NULL;
	}
	atomic_init(&x->refs, 1);
	x->version = snap->nodes_version;
	x->n = snap->index_end;
	x->min_cap = FIP_UNLIMITED;
	for (int i = 0; i < snap->nnodes; i++) {
		const struct sk_node_info *ni = snap->nodes[i];
		if (!ni->node)
			continue;
		int64_t cap = fip_node_capacity(a, ni->node);
		if (cap < x->min_cap)
			x->min_cap = cap;
		if (ni->index > 0 && ni->index < x->n)
			x->at[ni->index] = (struct fip_cap){ .cap = cap, .serial = ni->index_serial };
	}
	return x;
}

static bool fip_uses_ip(const struct sk_pod *p)
{
	/* Finished pods gave their address back (the daemon drops them from its cache too). */
	return !p->host_network && !(p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed")));
}

/* ---------- instance ---------- */

static int fip_init(struct sk_plugin *self, const void *args, char **err)
{
	struct fip *f = calloc(1, sizeof(*f));
	if (!f || !args) {
		free(f);
		*err = strdup(args ? "out of memory" : FIP_NAME ": no args (" FIP_ARGS_KIND " expected)");
		return -1;
	}
	f->args = args;
	self->priv = f;
	return 0;
}

static void fip_fini(struct sk_plugin *self)
{
	struct fip *f = self->priv;
	if (f)
		fip_caps_unref(f->caps);
	free(f);
	self->priv = NULL;
}

/* Once per instance (at start-up and after each reload), with the first cluster it sees: how many
 * nodes have no capacity source, since those are silently not limited. */
static void fip_report_unlimited(struct fip *f, struct sk_handle *h)
{
	const struct sk_snapshot *snap = sk_handle_snapshot(h);
	if (!snap || snap->nnodes == 0 || __atomic_exchange_n(&f->reported, 1, __ATOMIC_RELAXED))
		return;
	int n = 0;
	const char *first = NULL;
	for (int i = 0; i < snap->nnodes; i++) {
		const struct sk_node *node = snap->nodes[i]->node;
		if (node && fip_node_capacity(f->args, node) == FIP_UNLIMITED) {
			first = first ? first : node->name;
			n++;
		}
	}
	if (n > 0)
		sk_log_info(0, "FitIPResource: nodes without a pod IP capacity are not limited",
			    " nodes=%d of=%d first=\"%s\" resourceName=\"%s\"", n, snap->nnodes, first,
			    f->args->resource_name);
}

/* hostNetwork pods need no address: they skip Filter. Others take the capacities of the
 * snapshot's nodes (rebuilt when its nodes changed) into the CycleState. */
static struct sk_status fip_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result)
{
	(void)result;
	struct fip *f = self->priv;
	fip_report_unlimited(f, self->handle);
	if (pod->host_network)
		return sk_status(SK_SKIP, NULL);
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	if (snap && (!f->caps || f->caps->version != snap->nodes_version || f->caps->n != snap->index_end)) {
		fip_caps_unref(f->caps);
		f->caps = fip_caps_build(f->args, snap);
	}
	if (f->caps) {
		atomic_fetch_add_explicit(&f->caps->refs, 1, memory_order_relaxed);
		sk_cycle_state_put(cs, self->slot, f->caps, &fip_state_ops);
	}
	return sk_ok();
}

/* The slow path of fip_filter, out of line so the common one (fewer pods than addresses) saves
 * no registers: walks the node's pods, counting those that hold an address. */
static __attribute__((noinline)) struct sk_status fip_filter_count(const struct sk_pod *pod,
								     const struct sk_node_info *ni, int64_t cap)
{
	int64_t used = 0;
	for (int i = 0; i < ni->npods; i++) {
		const struct sk_pod *p = ni->pods[i].pod;
		if (strcmp(p->uid, pod->uid) != 0 && fip_uses_ip(p))
			used++;
	}
	return used < cap ? sk_ok() : sk_status(SK_UNSCHEDULABLE, FIP_REASON);
}

/* Counts the node's pods that hold an address (assumed ones included), from the node info itself:
 * dry runs on clones (nominated pods, preemption victims removed) are exact, and preemption may
 * free an address, hence Unschedulable rather than UnschedulableAndUnresolvable. */
static struct sk_status fip_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni)
{
	const struct fip *f = self->priv;
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	if (pod->host_network)
		return sk_ok();
	const struct fip_caps *x = sk_cycle_state_get(cs, self->slot);
	if (x && ni->npods < x->min_cap)
		return sk_ok(); /* fewer pods than any node of the snapshot has addresses */
	uint32_t i = (uint32_t)ni->index;
	int64_t cap = x && i < (uint32_t)x->n && ni->index_serial && x->at[i].serial == ni->index_serial
			      ? x->at[i].cap
			      : fip_node_capacity(f->args, ni->node);
	if (cap == FIP_UNLIMITED)
		return sk_ok();
	/* Fewer pods than addresses: whatever they hold, one is free (the walk below reads every pod,
	 * a cache miss each; this test reads only the node info and node the other filters read). */
	if (ni->npods < cap)
		return sk_ok();
	return fip_filter_count(pod, ni, cap);
}

/* ---------- queueing hints ---------- */

static enum sk_hint fip_hint_pod_delete(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					const void *new_obj)
{
	(void)self;
	(void)new_obj;
	const struct sk_pod *gone = old_obj;
	return !pod->host_network && gone && !gone->host_network ? SK_QUEUE : SK_QUEUE_SKIP;
}

/* A new node, or a node whose capacity grew (allocatable), may take the pod. */
static enum sk_hint fip_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				  const void *new_obj)
{
	(void)pod;
	const struct fip *f = self->priv;
	const struct sk_node *o = old_obj, *n = new_obj;
	if (!n)
		return SK_QUEUE_SKIP;
	if (!o)
		return SK_QUEUE;
	return fip_node_capacity(f->args, n) > fip_node_capacity(f->args, o) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int fip_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 2)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" },
		.hint = fip_hint_pod_delete,
	};
	out[1] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_ALLOCATABLE, "NodeAdd|UpdateNodeAllocatable" },
		.hint = fip_hint_node,
	};
	return 2;
}

static const struct sk_plugin_desc fit_ip_resource_plugin = {
	SK_PLUGIN_HEADER,
	.name = FIP_NAME,
	.args_kind = FIP_ARGS_KIND,
	.args_decode = fip_args_decode,
	.args_encode = fip_args_encode,
	.args_free = fip_args_free,
	.init = fip_init,
	.fini = fip_fini,
	.pre_filter = fip_pre_filter,
	.filter = fip_filter,
	.events_to_register = fip_events,
};

SK_MODULE("fitipresource", &fit_ip_resource_plugin);
