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

/* A growing buffer for the request bodies: the node list is the bulk of an ExtenderArgs (1,000
 * names, or 1,000 kept Node objects of ~6 KB), copied in with memcpy rather than stdio. */
struct wbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void wput(struct wbuf *b, const char *s, size_t k)
{
	if (b->oom)
		return;
	if (b->n + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + k + 1)
			cap *= 2;
		char *x = realloc(b->p, cap);
		if (!x) {
			b->oom = true;
			return;
		}
		b->p = x;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, k);
	b->n += k;
	b->p[b->n] = '\0';
}

static void wputs(struct wbuf *b, const char *s) { wput(b, s, strlen(s)); }

static void wjson(struct wbuf *b, const cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	if (!s)
		b->oom = true;
	else
		wputs(b, s);
	free(s);
}

static void wstr(struct wbuf *b, const char *s)
{
	const char *p = s;
	while (*p && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	if (*p) { /* something to escape: cJSON's printer */
		cJSON *o = cJSON_CreateString(s);
		wjson(b, o);
		cJSON_Delete(o);
		return;
	}
	wput(b, "\"", 1);
	wput(b, s, (size_t)(p - s));
	wput(b, "\"", 1);
}

static void wpod(struct wbuf *b, const struct sk_pod *pod)
{
	const struct sk_obj_raw *r = sk_pod_raw(pod);
	if (r && r->json && (!pod->node_name || pod->node_name == r->node_name)) {
		wput(b, r->json, r->len); /* the kept bytes as they are (not an assumed copy) */
		return;
	}
	char *raw = sk_pod_raw_json(pod);
	if (raw) {
		wputs(b, raw);
		free(raw);
		return;
	}
	cJSON *o = sk_extender_pod_json(pod);
	wjson(b, o);
	cJSON_Delete(o);
}

static void wnode(struct wbuf *b, const struct sk_node_info *ni)
{
	const struct sk_obj_raw *r = ni->node ? sk_node_raw(ni->node) : NULL;
	if (r && r->json) {
		wput(b, r->json, r->len);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *md = o ? cJSON_AddObjectToObject(o, "metadata") : NULL;
	bool ok = md && cJSON_AddStringToObject(md, "name", sk_ni_name(ni));
	if (ok && ni->node && ni->node->labels.n > 0) {
		cJSON *l = labels_json(&ni->node->labels);
		ok = l && cJSON_AddItemToObject(md, "labels", l);
	}
	if (ok)
		wjson(b, o);
	else
		b->oom = true;
	cJSON_Delete(o);
}

char *sk_extender_args_body(const struct sk_extender *e, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n)
{
	struct wbuf b = { 0 };
	/* one allocation in the usual case: the kept objects' sizes are known */
	size_t want = 64;
	const struct sk_obj_raw *pr = sk_pod_raw(pod);
	want += pr && pr->json ? pr->len : 1024;
	for (int i = 0; i < n; i++) {
		const struct sk_obj_raw *r = !e->node_cache_capable && nodes[i]->node ? sk_node_raw(nodes[i]->node) : NULL;
		want += r && r->json ? r->len + 1 : strlen(sk_ni_name(nodes[i])) + 3;
	}
	if (!(b.p = malloc(want)))
		return NULL;
	b.cap = want;
	wputs(&b, "{\"Pod\":");
	wpod(&b, pod);
	if (e->node_cache_capable) {
		wputs(&b, ",\"Nodes\":null,\"NodeNames\":[");
		for (int i = 0; i < n; i++) {
			if (i)
				wput(&b, ",", 1);
			wstr(&b, sk_ni_name(nodes[i]));
		}
		wputs(&b, "]}");
	} else {
		wputs(&b, ",\"Nodes\":{\"metadata\":{},\"items\":[");
		for (int i = 0; i < n; i++) {
			if (i)
				wput(&b, ",", 1);
			wnode(&b, nodes[i]);
		}
		wputs(&b, "]},\"NodeNames\":null}");
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

cJSON *sk_extender_args_json(const struct sk_extender *e, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n)
{
	char *body = sk_extender_args_body(e, pod, nodes, n);
	cJSON *o = body ? cJSON_Parse(body) : NULL;
	free(body);
	return o;
}
