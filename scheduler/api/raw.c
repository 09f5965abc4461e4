/* Kept API objects for the extenders (raw.h). */
#include "scheduler/api/raw.h"

#include <stdlib.h>
#include <string.h>

/* Prints obj without metadata.managedFields: a wrapper object of references to obj's members
 * (nothing copied, obj untouched), with metadata replaced by references to its members. */
static char *print_stripped(const cJSON *obj)
{
	cJSON *top = cJSON_CreateObject();
	if (!top)
		return NULL;
	bool ok = true;
	for (cJSON *m = obj->child; ok && m; m = m->next) {
		if (!m->string)
			continue;
		if (strcmp(m->string, "metadata") == 0 && cJSON_IsObject(m)) {
			cJSON *md = cJSON_AddObjectToObject(top, "metadata");
			ok = md != NULL;
			for (cJSON *f = m->child; ok && f; f = f->next)
				if (f->string && strcmp(f->string, "managedFields") != 0)
					ok = cJSON_AddItemReferenceToObject(md, f->string, f);
		} else {
			ok = cJSON_AddItemReferenceToObject(top, m->string, m);
		}
	}
	char *s = ok ? cJSON_PrintUnformatted(top) : NULL;
	cJSON_Delete(top); /* references: the referenced items are not freed */
	return s;
}

static int add_limit_names(struct sk_obj_raw *r, const cJSON *containers)
{
	for (const cJSON *c = cJSON_IsArray(containers) ? containers->child : NULL; c; c = c->next) {
		const cJSON *lim = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "resources"), "limits");
		for (const cJSON *l = cJSON_IsObject(lim) ? lim->child : NULL; l; l = l->next) {
			if (!l->string)
				continue;
			const char *name = sk_intern(l->string);
			if (!name)
				return -1;
			bool seen = false;
			for (int i = 0; i < r->nlimit_names && !seen; i++)
				seen = r->limit_names[i] == name;
			if (seen)
				continue;
			const char **x = realloc(r->limit_names, (size_t)(r->nlimit_names + 1) * sizeof(*x));
			if (!x)
				return -1;
			r->limit_names = x;
			x[r->nlimit_names++] = name;
		}
	}
	return 0;
}

static _Thread_local const cJSON *offered_obj;
static _Thread_local struct kube_text *offered_text;
static _Thread_local bool offered_none; /* offered_obj keeps no JSON (sk_obj_raw_offer_none) */

void sk_obj_raw_offer(const cJSON *obj, struct kube_text *t)
{
	offered_obj = obj;
	offered_text = t;
	offered_none = false;
}

void sk_obj_raw_offer_none(const cJSON *obj)
{
	offered_obj = obj;
	offered_text = NULL;
	offered_none = obj != NULL;
}

int sk_obj_raw_keep(struct sk_obj_raw *r, const cJSON *obj, bool pod)
{
	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(obj))
		return 0;
	if (obj == offered_obj && offered_none) {
		/* a view nobody sends: json stays NULL, the rest as for any pod */
	} else if (obj == offered_obj && offered_text) {
		r->shared = kube_text_ref(offered_text);
		r->json = r->shared->s;
		r->len = r->shared->len;
	} else if ((r->json = print_stripped(obj))) {
		r->len = strlen(r->json);
	} else {
		return -1;
	}
	if (!pod)
		return 0;
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const cJSON *nn = cJSON_GetObjectItemCaseSensitive(spec, "nodeName");
	if (cJSON_IsString(nn) && *nn->valuestring && !(r->node_name = sk_intern(nn->valuestring)))
		goto oom;
	if (add_limit_names(r, cJSON_GetObjectItemCaseSensitive(spec, "initContainers")) != 0 ||
	    add_limit_names(r, cJSON_GetObjectItemCaseSensitive(spec, "containers")) != 0)
		goto oom;
	return 0;
oom:
	sk_obj_raw_free(r);
	return -1;
}

void sk_obj_raw_free(struct sk_obj_raw *r)
{
	if (r->shared)
		kube_text_unref(r->shared);
	else
		free(r->json);
	free(r->limit_names);
	memset(r, 0, sizeof(*r));
}

char *sk_pod_raw_json(const struct sk_pod *p)
{
	const struct sk_obj_raw *r = sk_pod_raw(p);
	if (!r || !r->json)
		return NULL;
	if (p->node_name == r->node_name || !p->node_name)
		return strdup(r->json);
	/* an assumed copy: the object with spec.nodeName set, as the assumed pod upstream */
	cJSON *o = cJSON_ParseWithLength(r->json, r->len);
	cJSON *spec = o ? cJSON_GetObjectItemCaseSensitive(o, "spec") : NULL;
	if (o && !spec)
		spec = cJSON_AddObjectToObject(o, "spec");
	char *s = NULL;
	if (spec) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
		if (cJSON_AddStringToObject(spec, "nodeName", p->node_name))
			s = cJSON_PrintUnformatted(o);
	}
	cJSON_Delete(o);
	return s;
}

bool sk_pod_limits_name(const struct sk_pod *p, const char *name)
{
	const struct sk_obj_raw *r = sk_pod_raw(p);
	for (int i = 0; r && i < r->nlimit_names; i++)
		if (strcmp(r->limit_names[i], name) == 0)
			return true;
	return false;
}
