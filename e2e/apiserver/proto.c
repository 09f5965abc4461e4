/* proto.c — a small decoder for Kubernetes' protobuf request bodies ("k8s\0" + runtime.Unknown),
 * enough for the objects kubectl's `create <generator>` commands send with
 * Content-Type application/vnd.kubernetes.protobuf: Namespace, ConfigMap, Secret and
 * ServiceAccount (ObjectMeta with labels, annotations, owner references and finalizers), and the
 * SelfSubjectAccessReview of `kubectl auth can-i`.
 * Other kinds are refused with a message naming the kind. Pure function, no global state. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/internal.h"

struct pb {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t varint(struct pb *b)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end) {
			b->bad = true;
			return 0;
		}
		unsigned char c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = true;
	return 0;
}

/* Next field: returns false at the end (or on error, with b->bad). For wire type 2 the
 * payload is returned in *sub; for varints in *v; fixed-size fields are skipped. */
static bool next(struct pb *b, int *field, int *wt, struct pb *sub, uint64_t *v)
{
	if (b->bad || b->p >= b->end)
		return false;
	uint64_t key = varint(b);
	*field = (int)(key >> 3);
	*wt = (int)(key & 7);
	switch (*wt) {
	case 0:
		*v = varint(b);
		break;
	case 1:
		if (b->end - b->p < 8)
			b->bad = true;
		else
			b->p += 8;
		break;
	case 5:
		if (b->end - b->p < 4)
			b->bad = true;
		else
			b->p += 4;
		break;
	case 2: {
		uint64_t len = varint(b);
		if (b->bad || len > (uint64_t)(b->end - b->p)) {
			b->bad = true;
			return false;
		}
		sub->p = b->p;
		sub->end = b->p + len;
		sub->bad = false;
		b->p += len;
		break;
	}
	default:
		b->bad = true;
	}
	return !b->bad;
}

static cJSON *str(const struct pb *s)
{
	char *t = strndup((const char *)s->p, (size_t)(s->end - s->p));
	cJSON *j = t ? cJSON_CreateString(t) : NULL;
	free(t);
	return j;
}

static void add(cJSON *o, const char *k, cJSON *v)
{
	if (!v)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddItemToObject(o, k, v);
}

/* map<string,string> (or bytes -> base64 when b64) entry into obj */
static void map_entry(cJSON *obj, struct pb *e, bool b64)
{
	int f, wt;
	struct pb sub;
	uint64_t v;
	char *key = NULL;
	cJSON *val = NULL;
	while (next(e, &f, &wt, &sub, &v)) {
		if (f == 1 && wt == 2) {
			free(key);
			key = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
		} else if (f == 2 && wt == 2) {
			cJSON_Delete(val);
			if (b64) {
				char *t = apis_b64(sub.p, (size_t)(sub.end - sub.p));
				val = t ? cJSON_CreateString(t) : NULL;
				free(t);
			} else {
				val = str(&sub);
			}
		}
	}
	if (key && !e->bad) {
		add(obj, key, val ? val : cJSON_CreateString(""));
		val = NULL;
	}
	free(key);
	cJSON_Delete(val);
}

static cJSON *owner_ref(struct pb *m)
{
	cJSON *o = cJSON_CreateObject();
	int f, wt;
	struct pb sub;
	uint64_t v;
	while (o && next(m, &f, &wt, &sub, &v)) {
		if (wt == 2 && f == 1)
			add(o, "kind", str(&sub));
		else if (wt == 2 && f == 3)
			add(o, "name", str(&sub));
		else if (wt == 2 && f == 4)
			add(o, "uid", str(&sub));
		else if (wt == 2 && f == 5)
			add(o, "apiVersion", str(&sub));
		else if (wt == 0 && f == 6)
			add(o, "controller", cJSON_CreateBool(v != 0));
		else if (wt == 0 && f == 7)
			add(o, "blockOwnerDeletion", cJSON_CreateBool(v != 0));
	}
	return o;
}

static cJSON *object_meta(struct pb *m)
{
	cJSON *md = cJSON_CreateObject();
	int f, wt;
	struct pb sub;
	uint64_t v;
	while (md && next(m, &f, &wt, &sub, &v)) {
		if (wt == 2 && f == 1)
			add(md, "name", str(&sub));
		else if (wt == 2 && f == 2)
			add(md, "generateName", str(&sub));
		else if (wt == 2 && f == 3)
			add(md, "namespace", str(&sub));
		else if (wt == 2 && f == 6)
			add(md, "resourceVersion", str(&sub));
		else if (wt == 2 && (f == 11 || f == 12)) {
			const char *k = f == 11 ? "labels" : "annotations";
			cJSON *map = cJSON_GetObjectItemCaseSensitive(md, k);
			if (!map)
				map = cJSON_AddObjectToObject(md, k);
			if (map)
				map_entry(map, &sub, false);
		} else if (wt == 2 && f == 13) {
			cJSON *arr = cJSON_GetObjectItemCaseSensitive(md, "ownerReferences");
			if (!arr)
				arr = cJSON_AddArrayToObject(md, "ownerReferences");
			if (arr)
				cJSON_AddItemToArray(arr, owner_ref(&sub));
		} else if (wt == 2 && f == 14) {
			cJSON *arr = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
			if (!arr)
				arr = cJSON_AddArrayToObject(md, "finalizers");
			if (arr)
				cJSON_AddItemToArray(arr, str(&sub));
		}
		if (sub.bad)
			m->bad = true;
	}
	return md;
}

/* authorization.k8s.io/v1 ResourceAttributes (sub = false) or NonResourceAttributes (true). */
static cJSON *access_attributes(struct pb *m, bool non_resource)
{
	static const char *const res[] = {NULL, "namespace", "verb", "group", "version", "resource", "subresource", "name"};
	static const char *const nonres[] = {NULL, "path", "verb"};
	cJSON *o = cJSON_CreateObject();
	int f, wt;
	struct pb sub;
	uint64_t v;
	while (o && next(m, &f, &wt, &sub, &v))
		if (wt == 2 && f >= 1 && f <= (non_resource ? 2 : 7))
			add(o, (non_resource ? nonres : res)[f], str(&sub));
	return o;
}

/* SelfSubjectAccessReviewSpec: 1 resourceAttributes, 2 nonResourceAttributes. */
static cJSON *ssar_spec(struct pb *m)
{
	cJSON *spec = cJSON_CreateObject();
	int f, wt;
	struct pb sub;
	uint64_t v;
	while (spec && next(m, &f, &wt, &sub, &v))
		if (wt == 2 && (f == 1 || f == 2))
			add(spec, f == 1 ? "resourceAttributes" : "nonResourceAttributes", access_attributes(&sub, f == 2));
	return spec;
}

static cJSON *decode_kind(const char *kind, struct pb *raw, char **err)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int f, wt;
	struct pb sub;
	uint64_t v;
	bool cm = !strcmp(kind, "ConfigMap"), sec = !strcmp(kind, "Secret"), ns = !strcmp(kind, "Namespace"),
	     sa = !strcmp(kind, "ServiceAccount"), ev = !strcmp(kind, "Eviction"),
	     ssar = !strcmp(kind, "SelfSubjectAccessReview");
	while (next(raw, &f, &wt, &sub, &v)) {
		if (f == 1 && wt == 2) {
			add(o, "metadata", object_meta(&sub));
			if (sub.bad)
				raw->bad = true;
		} else if ((cm || sec) && wt == 2 && (f == 2 || (cm && f == 3) || (sec && f == 4))) {
			const char *k = f == 2 ? "data" : cm ? "binaryData" : "stringData";
			cJSON *map = cJSON_GetObjectItemCaseSensitive(o, k);
			if (!map)
				map = cJSON_AddObjectToObject(o, k);
			if (map)
				map_entry(map, &sub, (sec && f == 2) || (cm && f == 3));
		} else if (cm && f == 4 && wt == 0) {
			add(o, "immutable", cJSON_CreateBool(v != 0));
		} else if (sec && f == 3 && wt == 2) {
			add(o, "type", str(&sub));
		} else if (sec && f == 5 && wt == 0) {
			add(o, "immutable", cJSON_CreateBool(v != 0));
		} else if (ssar && f == 2 && wt == 2) {
			add(o, "spec", ssar_spec(&sub));
		} else if (sa && f == 4 && wt == 0) {
			add(o, "automountServiceAccountToken", cJSON_CreateBool(v != 0));
		} else if (ev && f == 2 && wt == 2) {
			cJSON *d = cJSON_CreateObject();
			int f2, wt2;
			struct pb s2;
			uint64_t v2;
			while (d && next(&sub, &f2, &wt2, &s2, &v2)) {
				if (f2 == 1 && wt2 == 0)
					add(d, "gracePeriodSeconds", cJSON_CreateNumber((double)(int64_t)v2));
				else if (f2 == 4 && wt2 == 2)
					add(d, "propagationPolicy", str(&s2));
			}
			add(o, "deleteOptions", d);
		} else if (ns && f == 2 && wt == 2) {
			cJSON *spec = cJSON_CreateObject();
			cJSON *fins = cJSON_CreateArray();
			int f2, wt2;
			struct pb s2;
			uint64_t v2;
			while (spec && fins && next(&sub, &f2, &wt2, &s2, &v2))
				if (f2 == 1 && wt2 == 2)
					cJSON_AddItemToArray(fins, str(&s2));
			if (spec && fins && fins->child) {
				cJSON_AddItemToObject(spec, "finalizers", fins);
				fins = NULL;
			}
			cJSON_Delete(fins);
			add(o, "spec", spec);
		}
	}
	if (raw->bad) {
		cJSON_Delete(o);
		*err = strdup("malformed protobuf body");
		return NULL;
	}
	return o;
}

cJSON *apis_proto_decode(const unsigned char *p, size_t n, char **err)
{
	*err = NULL;
	if (n < 4 || memcmp(p, "k8s\0", 4) != 0) {
		*err = strdup("protobuf body without the k8s envelope");
		return NULL;
	}
	struct pb b = { p + 4, p + n, false }, sub, raw = { 0 };
	int f, wt;
	uint64_t v;
	char api_version[128] = "", kind[128] = "";
	bool have_raw = false;
	while (next(&b, &f, &wt, &sub, &v)) {
		if (f == 1 && wt == 2) {
			int f2, wt2;
			struct pb s2;
			uint64_t v2;
			while (next(&sub, &f2, &wt2, &s2, &v2)) {
				size_t l = (size_t)(s2.end - s2.p);
				char *dst = f2 == 1 ? api_version : f2 == 2 ? kind : NULL;
				if (dst && wt2 == 2 && l < 128) {
					memcpy(dst, s2.p, l);
					dst[l] = 0;
				}
			}
		} else if (f == 2 && wt == 2) {
			raw = sub;
			have_raw = true;
		}
	}
	if (b.bad || !have_raw) {
		*err = strdup("malformed protobuf body");
		return NULL;
	}
	if (strcmp(kind, "ConfigMap") && strcmp(kind, "Secret") && strcmp(kind, "Namespace") &&
	    strcmp(kind, "ServiceAccount") && strcmp(kind, "Eviction") && strcmp(kind, "SelfSubjectAccessReview")) {
		if (asprintf(err, "protobuf bodies are not supported for kind \"%.100s\"; send JSON", kind) < 0)
			*err = NULL;
		return NULL;
	}
	cJSON *o = decode_kind(kind, &raw, err);
	if (!o)
		return NULL;
	cJSON *av = cJSON_CreateString(*api_version ? api_version : "v1");
	cJSON *k = cJSON_CreateString(kind);
	if (av) {
		av->string = strdup("apiVersion");
		if (!av->string || !cJSON_InsertItemInArray(o, 0, av))
			cJSON_Delete(av);
	}
	if (k) {
		k->string = strdup("kind");
		if (!k->string || !cJSON_InsertItemInArray(o, 0, k))
			cJSON_Delete(k);
	}
	return o;
}
