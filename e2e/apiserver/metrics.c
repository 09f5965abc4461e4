/* metrics.c — metrics.k8s.io/v1beta1 as metrics-server serves it (NodeMetrics and PodMetrics,
 * get and list, label and field selectors), computed at each request from what the simulated
 * kubelet runs: a Running pod's containers use their requests times the load factor of their node
 * (annotation schedkit.io/simulated-load, a decimal, default 1), and a node uses an idle base
 * plus its pods, capped at its capacity. Nothing is stored; served only with --simulate-kubelet. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/selector.h"
#include "e2e/apiserver/internal.h"

/* What a node with no pods uses (the kubelet, the runtime, system daemons). */
#define IDLE_CPU_NANO 100000000LL        /* 100m */
#define IDLE_MEM_BYTES (256LL << 20)     /* 256Mi */
#define WINDOW "30s"

struct node_use {
	char *name;
	cJSON *labels;                       /* copy or NULL */
	double factor;
	int64_t cap_cpu_nano, cap_mem;       /* 0 = no capacity given: no cap */
	int64_t cpu_nano, mem;               /* idle base + running pods */
};

struct collect {
	struct apis_server *s;
	struct node_use *nodes;
	int nnodes;
	bool oom;
	/* pods only: the PodMetrics wanted (namespace "" = all, name NULL = list) */
	bool want_pods;
	const char *ns, *name;
	const struct kube_label_selector *ls;
	const struct kube_field_selector *fs;
	cJSON *items;
};

double apis_metrics_load_factor(const cJSON *annotations)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(annotations, APIS_LOAD_ANNOTATION));
	char *end = NULL;
	double f = v ? strtod(v, &end) : 1.0;
	if (v && (end == v || *end || !isfinite(f) || f < 0))
		return 1.0; /* not a non-negative decimal: as if absent */
	return f;
}

/* A quantity string's value, rounded up (milli: MilliValue); 0 when absent or invalid. */
static int64_t qty(const cJSON *map, const char *res, bool milli)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(map, res));
	struct kube_quantity q;
	char *err = NULL;
	if (!v || kube_quantity_parse(v, &q, &err) != 0) {
		free(err);
		return 0;
	}
	return milli ? kube_quantity_milli_value(&q) : kube_quantity_value(&q);
}

static void add_node(void *u, struct apis_obj *o)
{
	struct collect *c = u;
	cJSON *n = apis_obj_parse(o);
	struct node_use *nn = realloc(c->nodes, (size_t)(c->nnodes + 1) * sizeof *nn);
	char *name = strdup(o->name);
	if (!n || !nn || !name) {
		if (nn)
			c->nodes = nn;
		free(name);
		cJSON_Delete(n);
		c->oom = true;
		return;
	}
	c->nodes = nn;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(n, "status");
	const cJSON *cap = cJSON_GetObjectItemCaseSensitive(st, "capacity");
	if (!cap)
		cap = cJSON_GetObjectItemCaseSensitive(st, "allocatable");
	struct node_use *u2 = &c->nodes[c->nnodes++];
	*u2 = (struct node_use){
		.name = name,
		.labels = o->labels ? cJSON_Duplicate(o->labels, true) : NULL,
		.factor = apis_metrics_load_factor(kube_obj_get(n, "metadata.annotations")),
		.cap_cpu_nano = qty(cap, "cpu", true) * 1000000,
		.cap_mem = qty(cap, "memory", false),
		.cpu_nano = IDLE_CPU_NANO,
		.mem = IDLE_MEM_BYTES,
	};
	cJSON_Delete(n);
}

static struct node_use *find_node(struct collect *c, const char *name)
{
	for (int i = 0; i < c->nnodes; i++)
		if (!strcmp(c->nodes[i].name, name))
			return &c->nodes[i];
	return NULL;
}

static void fmt_cpu(char buf[32], int64_t nano)
{
	snprintf(buf, 32, "%lldn", (long long)nano);
}

static void fmt_mem(char buf[32], int64_t bytes)
{
	snprintf(buf, 32, "%lldKi", (long long)((bytes + 1023) / 1024));
}

/* metadata, timestamp and window of a NodeMetrics/PodMetrics. */
static cJSON *metrics_object(const char *kind, const char *ns, const char *name, const cJSON *labels)
{
	char now[32];
	apis_now_rfc3339(now);
	cJSON *o = cJSON_CreateObject();
	cJSON *md = o ? cJSON_CreateObject() : NULL;
	if (!md) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddStringToObject(o, "apiVersion", "metrics.k8s.io/v1beta1");
	cJSON_AddItemToObject(o, "metadata", md);
	cJSON_AddStringToObject(md, "name", name);
	if (ns)
		cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddStringToObject(md, "creationTimestamp", now);
	if (labels)
		cJSON_AddItemToObject(md, "labels", cJSON_Duplicate(labels, true));
	cJSON_AddStringToObject(o, "timestamp", now);
	cJSON_AddStringToObject(o, "window", WINDOW);
	return o;
}

static cJSON *usage(int64_t cpu_nano, int64_t mem)
{
	char cpu[32], m[32];
	fmt_cpu(cpu, cpu_nano);
	fmt_mem(m, mem);
	cJSON *u = cJSON_CreateObject();
	if (u) {
		cJSON_AddStringToObject(u, "cpu", cpu);
		cJSON_AddStringToObject(u, "memory", m);
	}
	return u;
}

static const char *pod_field(const void *ctx, const char *field)
{
	const struct apis_obj *o = ctx;
	if (!strcmp(field, "metadata.name"))
		return o->name;
	if (!strcmp(field, "metadata.namespace"))
		return o->ns;
	return NULL;
}

static bool pod_wanted(const struct collect *c, const struct apis_obj *o)
{
	if (!c->want_pods || (*c->ns && strcmp(c->ns, o->ns)) || (c->name && strcmp(c->name, o->name)))
		return false;
	if (c->ls && !kube_label_selector_matches_json(c->ls, o->labels))
		return false;
	return !c->fs || kube_field_selector_matches(c->fs, pod_field, o);
}

/* A Running pod bound to a known node: its containers' usage joins the node's, and its
 * PodMetrics the answer when asked for. */
static void add_pod(void *u, struct apis_obj *o)
{
	struct collect *c = u;
	const char *node = apis_obj_field(o, "spec.nodeName");
	const char *phase = apis_obj_field(o, "status.phase");
	struct node_use *nu = node && phase && !strcmp(phase, "Running") ? find_node(c, node) : NULL;
	if (!nu || c->oom)
		return;
	cJSON *pod = apis_obj_parse(o);
	if (!pod) {
		c->oom = true;
		return;
	}
	bool want = pod_wanted(c, o);
	cJSON *pm = want ? metrics_object("PodMetrics", o->ns, o->name, o->labels) : NULL;
	cJSON *cs = pm ? cJSON_AddArrayToObject(pm, "containers") : NULL;
	const cJSON *ct;
	cJSON_ArrayForEach(ct, kube_obj_get(pod, "spec.containers")) {
		const cJSON *req = kube_obj_get(ct, "resources.requests");
		int64_t cpu = (int64_t)llround((double)qty(req, "cpu", true) * 1e6 * nu->factor);
		int64_t mem = (int64_t)llround((double)qty(req, "memory", false) * nu->factor);
		nu->cpu_nano += cpu;
		nu->mem += mem;
		cJSON *e = cs ? cJSON_CreateObject() : NULL;
		if (e) {
			cJSON_AddStringToObject(e, "name", kube_obj_get_string(ct, "name") ? kube_obj_get_string(ct, "name") : "");
			cJSON_AddItemToObject(e, "usage", usage(cpu, mem));
			cJSON_AddItemToArray(cs, e);
		}
	}
	if (pm && !cJSON_AddItemToArray(c->items, pm)) {
		cJSON_Delete(pm);
		c->oom = true;
	}
	cJSON_Delete(pod);
}

static bool node_wanted(const struct collect *c, const struct node_use *n)
{
	if (c->name && strcmp(c->name, n->name))
		return false;
	if (c->ls && !kube_label_selector_matches_json(c->ls, n->labels))
		return false;
	if (!c->fs)
		return true;
	struct apis_obj o = { .name = n->name, .ns = "" };
	return kube_field_selector_matches(c->fs, pod_field, &o);
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct node_use *)a)->name, ((const struct node_use *)b)->name);
}

static int pod_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int d = strcmp(kube_meta_namespace(x), kube_meta_namespace(y));
	return d ? d : strcmp(kube_meta_name(x), kube_meta_name(y));
}

/* The store is a hash table: lists go out by name (pods: namespace, name), as the API server's. */
static int sort_pods(cJSON *items)
{
	int n = cJSON_GetArraySize(items);
	if (n < 2)
		return 0;
	cJSON **v = malloc((size_t)n * sizeof *v);
	if (!v)
		return -1;
	for (int i = 0; i < n; i++)
		v[i] = cJSON_DetachItemFromArray(items, 0);
	qsort(v, (size_t)n, sizeof *v, pod_cmp);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(items, v[i]);
	free(v);
	return 0;
}

static void node_items(struct collect *c)
{
	if (c->nnodes > 1)
		qsort(c->nodes, (size_t)c->nnodes, sizeof *c->nodes, node_cmp);
	for (int i = 0; i < c->nnodes && !c->oom; i++) {
		struct node_use *n = &c->nodes[i];
		if (!node_wanted(c, n))
			continue;
		int64_t cpu = n->cap_cpu_nano && n->cpu_nano > n->cap_cpu_nano ? n->cap_cpu_nano : n->cpu_nano;
		int64_t mem = n->cap_mem && n->mem > n->cap_mem ? n->cap_mem : n->mem;
		cJSON *nm = metrics_object("NodeMetrics", NULL, n->name, n->labels);
		if (!nm || !cJSON_AddItemToObject(nm, "usage", usage(cpu, mem)) || !cJSON_AddItemToArray(c->items, nm)) {
			cJSON_Delete(nm);
			c->oom = true;
		}
	}
}

static void collect_free(struct collect *c)
{
	for (int i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		cJSON_Delete(c->nodes[i].labels);
	}
	free(c->nodes);
	cJSON_Delete(c->items);
}

static int parse_selectors(struct apis_conn *conn, const struct apis_req *r, struct kube_label_selector **ls,
			   struct kube_field_selector **fs)
{
	const char *l = apis_query(r, "labelSelector"), *f = apis_query(r, "fieldSelector");
	char *err = NULL;
	if ((l && *l && kube_label_selector_parse(l, ls, &err) != 0) ||
	    (f && *f && kube_field_selector_parse(f, fs, &err) != 0)) {
		apis_respond_status(conn, 400, "BadRequest", err ? err : "invalid selector", NULL);
		free(err);
		return -1;
	}
	return 0;
}

void apis_metrics_serve(struct apis_server *s, struct apis_conn *conn, const struct apis_req *r,
			const struct apis_rdef *rd, const char *ns, const char *name)
{
	bool pods = rd->namespaced;
	struct kube_label_selector *ls = NULL;
	struct kube_field_selector *fs = NULL;
	if (parse_selectors(conn, r, &ls, &fs) != 0)
		return;
	struct collect c = { .s = s, .want_pods = pods, .ns = ns ? ns : "", .name = name, .ls = ls, .fs = fs,
			     .items = cJSON_CreateArray() };
	c.oom = !c.items;
	pthread_rwlock_rdlock(&s->lock);
	if (!c.oom)
		apis_store_each(s->rd_nodes, NULL, add_node, &c);
	if (!c.oom)
		apis_store_each(s->rd_pods, NULL, add_pod, &c);
	pthread_rwlock_unlock(&s->lock);
	if (!pods && !c.oom)
		node_items(&c);
	else if (!c.oom && sort_pods(c.items) != 0)
		c.oom = true;
	kube_label_selector_free(ls);
	kube_field_selector_free(fs);
	if (c.oom) {
		apis_respond_status(conn, 500, "InternalError", "out of memory", NULL);
	} else if (name) {
		cJSON *one = cJSON_DetachItemFromArray(c.items, 0);
		if (one) {
			apis_respond_json(conn, 200, one);
		} else {
			char msg[600];
			snprintf(msg, sizeof msg, "%s \"%s\" not found", pods ? "podmetrics.metrics.k8s.io" :
				 "nodemetrics.metrics.k8s.io", name);
			apis_respond_status(conn, 404, "NotFound", msg, NULL);
		}
		cJSON_Delete(one);
	} else {
		cJSON *list = cJSON_CreateObject();
		if (list && cJSON_AddStringToObject(list, "kind", pods ? "PodMetricsList" : "NodeMetricsList") &&
		    cJSON_AddStringToObject(list, "apiVersion", "metrics.k8s.io/v1beta1") &&
		    cJSON_AddObjectToObject(list, "metadata") && cJSON_AddItemToObject(list, "items", c.items)) {
			c.items = NULL;
			apis_respond_json(conn, 200, list);
		} else {
			apis_respond_status(conn, 500, "InternalError", "out of memory", NULL);
		}
		cJSON_Delete(list);
	}
	collect_free(&c);
}
