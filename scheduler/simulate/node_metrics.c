/* simulate's metrics.k8s.io (node_metrics.h): checks the cluster file's NodeMetrics and
 * PodMetrics once, keeps defaulted copies, and builds the list or object a GET of
 * metrics-server's paths returns.
 * The answers follow metrics-server's shapes (pkg/api in kubernetes-sigs/metrics-server): lists
 * carry kind NodeMetricsList / PodMetricsList, apiVersion metrics.k8s.io/v1beta1 and items. */
#include "scheduler/simulate/node_metrics.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/util.h"

#define METRICS_PREFIX "/apis/metrics.k8s.io/v1beta1/"
#define METRICS_API_VERSION "metrics.k8s.io/v1beta1"

struct sk_sim_metrics {
	cJSON *nodes; /* array of defaulted NodeMetrics copies, file order */
	cJSON *pods;  /* array of defaulted PodMetrics copies, file order */
};

/* Every value of a usage object must parse as a quantity (what metrics-server would send). */
static int check_usage(const cJSON *usage, int idx, const char *kind, const char *name, const char *path,
		       char **err)
{
	if (!cJSON_IsObject(usage))
		return kube_errf(err, "object %d (%s %s): %s: Required value: a map of resource name to quantity",
				 idx, kind, name, path);
	const cJSON *v;
	cJSON_ArrayForEach(v, usage) {
		struct kube_quantity q;
		char *qerr = NULL;
		if (!cJSON_IsString(v) || kube_quantity_parse(v->valuestring, &q, &qerr) != 0) {
			kube_errf(err, "object %d (%s %s): %s.%s: Invalid value: %s", idx, kind, name, path,
				  v->string, qerr ? qerr : "must be a quantity string");
			free(qerr);
			return -1;
		}
	}
	return 0;
}

static int check_pod_containers(const cJSON *o, int idx, const char *name, char **err)
{
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "containers");
	if (!cJSON_IsArray(cs))
		return kube_errf(err, "object %d (PodMetrics %s): containers: Required value", idx, name);
	int i = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, cs) {
		char path[64];
		snprintf(path, sizeof path, "containers[%d].usage", i);
		if (!kube_obj_get_string(c, "name"))
			return kube_errf(err, "object %d (PodMetrics %s): containers[%d].name: Required value", idx,
					 name, i);
		if (check_usage(cJSON_GetObjectItemCaseSensitive(c, "usage"), idx, "PodMetrics", name, path, err))
			return -1;
		i++;
	}
	return 0;
}

/* Adds a string field when absent; false on ENOMEM. */
static bool default_string(cJSON *o, const char *key, const char *value)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return true;
	return cJSON_AddStringToObject(o, key, value) != NULL;
}

static int add_one(struct sk_sim_metrics *m, const cJSON *src, bool pod, int idx, const char *stamp, char **err)
{
	const char *kind = pod ? "PodMetrics" : "NodeMetrics";
	const char *name = kube_meta_name(src);
	if (!name || !*name)
		return kube_errf(err, "object %d (%s): metadata.name: Required value", idx, kind);
	if (pod ? check_pod_containers(src, idx, name, err)
		: check_usage(cJSON_GetObjectItemCaseSensitive(src, "usage"), idx, kind, name, "usage", err))
		return -1;
	cJSON *copy = cJSON_Duplicate(src, true);
	cJSON *meta = copy ? cJSON_GetObjectItemCaseSensitive(copy, "metadata") : NULL;
	bool ok = meta && default_string(copy, "apiVersion", METRICS_API_VERSION) &&
		  default_string(copy, "timestamp", stamp) && default_string(copy, "window", "30s") &&
		  (!pod || default_string(meta, "namespace", "default"));
	if (ok) {
		/* One object per name (and namespace): the file's later copy would be a second scrape. */
		cJSON *arr = pod ? m->pods : m->nodes;
		const cJSON *it;
		cJSON_ArrayForEach(it, arr) {
			const char *ns = kube_meta_namespace(it);
			if (!strcmp(kube_meta_name(it), name) &&
			    (!pod || !strcmp(ns ? ns : "", kube_meta_namespace(copy))))
				break;
		}
		if (it) {
			cJSON_Delete(copy);
			return kube_errf(err, "object %d (%s %s): duplicate %s", idx, kind, name, kind);
		}
		ok = cJSON_AddItemToArray(arr, copy);
	}
	if (!ok) {
		cJSON_Delete(copy);
		return kube_errf(err, "out of memory");
	}
	return 0;
}

struct sk_sim_metrics *sk_sim_metrics_new(const cJSON *const *objs, int n, int64_t now_unix, char **err)
{
	if (err)
		*err = NULL;
	struct sk_sim_metrics *m = calloc(1, sizeof *m);
	if (!m || !(m->nodes = cJSON_CreateArray()) || !(m->pods = cJSON_CreateArray())) {
		sk_sim_metrics_free(m);
		kube_errf(err, "out of memory");
		return NULL;
	}
	char stamp[32];
	kube_time_rfc3339(stamp, (time_t)now_unix);
	for (int i = 0; i < n; i++) {
		const char *kind = kube_obj_get_string(objs[i], "kind");
		bool node = kind && !strcmp(kind, "NodeMetrics"), pod = kind && !strcmp(kind, "PodMetrics");
		if ((node || pod) && add_one(m, objs[i], pod, i + 1, stamp, err) != 0) {
			sk_sim_metrics_free(m);
			return NULL;
		}
	}
	return m;
}

void sk_sim_metrics_free(struct sk_sim_metrics *m)
{
	if (!m)
		return;
	cJSON_Delete(m->nodes);
	cJSON_Delete(m->pods);
	free(m);
}

int sk_sim_metrics_count(const struct sk_sim_metrics *m)
{
	return m ? cJSON_GetArraySize(m->nodes) + cJSON_GetArraySize(m->pods) : 0;
}

/* A list of the items of arr in namespace ns (NULL = all), or the one named name (NULL = list). */
static int answer(const cJSON *arr, bool pod, const char *ns, const char *name, const char *path, cJSON **out,
		  char **err)
{
	const cJSON *it;
	cJSON *list = NULL, *items = NULL;
	if (!name) {
		list = cJSON_CreateObject();
		items = list ? cJSON_CreateArray() : NULL;
		cJSON *meta = items ? cJSON_CreateObject() : NULL;
		if (!meta || !cJSON_AddStringToObject(list, "kind", pod ? "PodMetricsList" : "NodeMetricsList") ||
		    !cJSON_AddStringToObject(list, "apiVersion", METRICS_API_VERSION) ||
		    !cJSON_AddItemToObject(list, "metadata", meta)) {
			cJSON_Delete(meta);
			goto oom;
		}
	}
	cJSON_ArrayForEach(it, arr) {
		if (ns && strcmp(kube_meta_namespace(it), ns))
			continue;
		if (name && strcmp(kube_meta_name(it), name))
			continue;
		cJSON *copy = cJSON_Duplicate(it, true);
		if (name) {
			if (!copy)
				goto oom;
			*out = copy;
			return 0;
		}
		if (!copy || !cJSON_AddItemToArray(items, copy)) {
			cJSON_Delete(copy);
			goto oom;
		}
	}
	if (name)
		return kube_errf(err, "GET %s: %s \"%s\" not found", path, pod ? "podmetrics.metrics.k8s.io" :
				 "nodemetrics.metrics.k8s.io", name);
	if (!cJSON_AddItemToObject(list, "items", items))
		goto oom;
	*out = list;
	return 0;
oom:
	cJSON_Delete(items);
	cJSON_Delete(list);
	return kube_errf(err, "GET %s: out of memory", path);
}

/* Splits rest ("a/b/c") into at most 4 segments; returns the count, or -1 for more or empty ones. */
static int split(char *rest, char *seg[4])
{
	int n = 0;
	for (char *p = rest; *p;) {
		char *slash = strchr(p, '/');
		if (n == 4 || slash == p)
			return -1;
		seg[n++] = p;
		if (!slash)
			break;
		*slash = 0;
		p = slash + 1;
		if (!*p)
			return -1;
	}
	return n;
}

int sk_sim_metrics_get(const struct sk_sim_metrics *m, const char *path, cJSON **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	if (strchr(path, '?'))
		return kube_errf(err, "GET %s: simulate serves metrics without query parameters", path);
	if (strncmp(path, METRICS_PREFIX, strlen(METRICS_PREFIX)))
		goto not_found;
	char *rest = strdup(path + strlen(METRICS_PREFIX)), *seg[4];
	if (!rest)
		return kube_errf(err, "GET %s: out of memory", path);
	int n = split(rest, seg), rc = 1;
	if (n >= 1 && n <= 2 && !strcmp(seg[0], "nodes"))
		rc = answer(m->nodes, false, NULL, n == 2 ? seg[1] : NULL, path, out, err);
	else if (n == 1 && !strcmp(seg[0], "pods"))
		rc = answer(m->pods, true, NULL, NULL, path, out, err);
	else if (n >= 3 && !strcmp(seg[0], "namespaces") && !strcmp(seg[2], "pods"))
		rc = answer(m->pods, true, seg[1], n == 4 ? seg[3] : NULL, path, out, err);
	free(rest);
	if (rc != 1)
		return rc;
not_found:
	return kube_errf(err, "GET %s: the server could not find the requested resource (simulate serves only "
			 "metrics.k8s.io/v1beta1 nodes and pods from the cluster file)", path);
}
