/* PodDisruptionBudget decoding for preemption (struct sk_pdb in schedkit/plugin.h): namespace,
 * name, spec.selector, status.disruptionsAllowed and the keys of status.disruptedPods. The core
 * decodes (the daemon's and simulate's PDB sources); DefaultPreemption reads the result. */
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/selector.h"
#include "schedkit/plugin.h"

void sk_pdb_free(struct sk_pdb *p)
{
	if (!p)
		return;
	free(p->ns);
	free(p->name);
	kube_label_selector_free(p->selector);
	for (int i = 0; i < p->ndisrupted; i++)
		free(p->disrupted_pods[i]);
	free(p->disrupted_pods);
	free(p);
}

void sk_pdb_list_free(struct sk_pdb **list, int n)
{
	if (!list)
		return;
	for (int i = 0; i < n; i++)
		sk_pdb_free(list[i]);
	free(list);
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

struct sk_pdb *sk_pdb_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	if (!cJSON_IsObject(obj)) {
		if (err)
			*err = strdup("PodDisruptionBudget: not an object");
		return NULL;
	}
	struct sk_pdb *p = calloc(1, sizeof(*p));
	if (!p)
		goto oom;
	p->ns = dup_or_empty(kube_meta_namespace(obj));
	p->name = dup_or_empty(kube_meta_name(obj));
	if (!p->ns || !p->name)
		goto oom;
	const cJSON *sel = kube_obj_get(obj, "spec.selector");
	if (sel && !cJSON_IsNull(sel)) {
		char *e = NULL;
		if (kube_label_selector_from_json(sel, &p->selector, &e) != 0)
			p->selector = NULL; /* invalid: matches nothing */
		free(e);
	}
	int64_t v = 0;
	const cJSON *da = kube_obj_get(obj, "status.disruptionsAllowed");
	if (da && kube_json_get_int64(da, &v) == 0)
		p->disruptions_allowed = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
	const cJSON *dp = kube_obj_get(obj, "status.disruptedPods");
	if (cJSON_IsObject(dp)) {
		int n = cJSON_GetArraySize(dp);
		p->disrupted_pods = calloc((size_t)(n ? n : 1), sizeof(char *));
		if (!p->disrupted_pods)
			goto oom;
		for (const cJSON *c = dp->child; c; c = c->next) {
			if (!c->string)
				continue;
			p->disrupted_pods[p->ndisrupted] = strdup(c->string);
			if (!p->disrupted_pods[p->ndisrupted])
				goto oom;
			p->ndisrupted++;
		}
	}
	return p;
oom:
	sk_pdb_free(p);
	if (err)
		*err = strdup("PodDisruptionBudget: out of memory");
	return NULL;
}
