/* The extender request bodies (staging/src/k8s.io/kube-scheduler/extender/v1/types.go): the
 * capitalised Go field names, with the pod and the nodes as the API server served them (the
 * objects kept by scheduler/api/raw.c), written straight into one buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/api/raw.h"
#include "scheduler/framework/extender_priv.h"

const cJSON *sk_extender_rget(const cJSON *o, const char *k)
{
	if (!cJSON_IsObject(o))
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return v ? v : cJSON_GetObjectItem(o, k);
}

static cJSON *labels_json(const struct sk_labels *l)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; o && i < l->n; i++)
		if (!cJSON_AddStringToObject(o, l->items[i].key, l->items[i].value)) {
			cJSON_Delete(o);
			return NULL;
		}
	return o;
}

/* The fallback when no object was kept (a pod built by hand in a test or by simulate input). */
cJSON *sk_extender_pod_json(const struct sk_pod *pod)
{
	cJSON *o = cJSON_CreateObject(), *md = cJSON_CreateObject(), *spec = cJSON_CreateObject();
	if (!o || !md || !spec) {
		cJSON_Delete(o);
		cJSON_Delete(md);
		cJSON_Delete(spec);
		return NULL;
	}
	cJSON_AddItemToObject(o, "metadata", md);
	cJSON_AddItemToObject(o, "spec", spec);
	bool ok = cJSON_AddStringToObject(md, "name", pod->name ? pod->name : "") &&
		  cJSON_AddStringToObject(md, "namespace", pod->ns ? pod->ns : "") &&
		  cJSON_AddStringToObject(md, "uid", pod->uid ? pod->uid : "");
	if (ok && pod->labels.n > 0) {
		cJSON *l = labels_json(&pod->labels);
		ok = l && cJSON_AddItemToObject(md, "labels", l);
	}
	if (ok && pod->scheduler_name)
		ok = cJSON_AddStringToObject(spec, "schedulerName", pod->scheduler_name) != NULL;
	if (ok && pod->node_name)
		ok = cJSON_AddStringToObject(spec, "nodeName", pod->node_name) != NULL;
	if (ok)
		ok = cJSON_AddNumberToObject(spec, "priority", pod->priority) != NULL;
	if (ok && pod->node_selector.n > 0) {
		cJSON *l = labels_json(&pod->node_selector);
		ok = l && cJSON_AddItemToObject(spec, "nodeSelector", l);
	}
	if (ok && pod->nominated_node_name && *pod->nominated_node_name) {
		cJSON *st = cJSON_AddObjectToObject(o, "status");
		ok = st && cJSON_AddStringToObject(st, "nominatedNodeName", pod->nominated_node_name);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int write_json(FILE *f, const cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	int rc = s && fputs(s, f) >= 0 ? 0 : -1;
	free(s);
	return rc;
}

int sk_extender_write_pod(FILE *f, const struct sk_pod *pod)
{
	char *raw = sk_pod_raw_json(pod);
	if (raw) {
		int rc = fputs(raw, f) >= 0 ? 0 : -1;
		free(raw);
		return rc;
	}
	cJSON *o = sk_extender_pod_json(pod);
	int rc = write_json(f, o);
	cJSON_Delete(o);
	return rc;
}

static int write_node(FILE *f, const struct sk_node_info *ni)
{
	const struct sk_obj_raw *r = ni->node ? sk_node_raw(ni->node) : NULL;
	if (r && r->json)
		return fwrite(r->json, 1, r->len, f) == r->len ? 0 : -1;
	cJSON *o = cJSON_CreateObject();
	cJSON *md = o ? cJSON_AddObjectToObject(o, "metadata") : NULL;
	bool ok = md && cJSON_AddStringToObject(md, "name", sk_ni_name(ni));
	if (ok && ni->node && ni->node->labels.n > 0) {
		cJSON *l = labels_json(&ni->node->labels);
		ok = l && cJSON_AddItemToObject(md, "labels", l);
	}
	int rc = ok ? write_json(f, o) : -1;
	cJSON_Delete(o);
	return rc;
}

/* A JSON string literal: written as it is when nothing needs escaping (node names never do),
 * else through cJSON's printer. */
static int write_str(FILE *f, const char *s)
{
	const char *p = s;
	while (*p && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	if (!*p)
		return fputc('"', f) != EOF && fputs(s, f) >= 0 && fputc('"', f) != EOF ? 0 : -1;
	cJSON *o = cJSON_CreateString(s);
	int rc = write_json(f, o);
	cJSON_Delete(o);
	return rc;
}

char *sk_extender_args_body(const struct sk_extender *e, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = fputs("{\"Pod\":", f) >= 0 ? 0 : -1;
	if (rc == 0)
		rc = sk_extender_write_pod(f, pod);
	if (rc == 0 && e->node_cache_capable) {
		rc = fputs(",\"Nodes\":null,\"NodeNames\":[", f) >= 0 ? 0 : -1;
		for (int i = 0; rc == 0 && i < n; i++)
			rc = (i && fputc(',', f) == EOF) ? -1 : write_str(f, sk_ni_name(nodes[i]));
		if (rc == 0)
			rc = fputs("]}", f) >= 0 ? 0 : -1;
	} else if (rc == 0) {
		rc = fputs(",\"Nodes\":{\"metadata\":{},\"items\":[", f) >= 0 ? 0 : -1;
		for (int i = 0; rc == 0 && i < n; i++)
			rc = (i && fputc(',', f) == EOF) ? -1 : write_node(f, nodes[i]);
		if (rc == 0)
			rc = fputs("]},\"NodeNames\":null}", f) >= 0 ? 0 : -1;
	}
	if (fclose(f) != 0)
		rc = -1;
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

cJSON *sk_extender_args_json(const struct sk_extender *e, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n)
{
	char *body = sk_extender_args_body(e, pod, nodes, n);
	cJSON *o = body ? cJSON_Parse(body) : NULL;
	free(body);
	return o;
}
