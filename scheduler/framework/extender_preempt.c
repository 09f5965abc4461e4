/* The preempt verb (pkg/scheduler/extender.go: ProcessPreemption, convertToVictims) and the loop
 * over the extenders (pkg/scheduler/framework/preemption/preemption.go: callExtenders). */
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/framework/extender_priv.h"

void sk_victims_free(struct sk_victims *list, int n)
{
	for (int i = 0; list && i < n; i++) {
		for (int k = 0; k < list[i].npods; k++)
			sk_pod_unref(list[i].pods[k]);
		free(list[i].pods);
	}
	free(list);
}

bool sk_extender_is_preempter(const struct sk_extender *e) { return e->preempt_verb != NULL; }

/* ExtenderPreemptionArgs: NodeNameToVictims with full pods, or with nodeCacheCapable
 * NodeNameToMetaVictims with UIDs only; the other one null. */
char *sk_extender_preempt_body(const struct sk_extender *e, const struct sk_pod *pod, const struct sk_victims *v,
			       int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = fputs("{\"Pod\":", f) >= 0 ? 0 : -1;
	if (rc == 0)
		rc = sk_extender_write_pod(f, pod);
	if (rc == 0)
		rc = fputs(e->node_cache_capable ? ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
						 : ",\"NodeNameToVictims\":{",
			   f) >= 0 ? 0 : -1;
	for (int i = 0; rc == 0 && i < n; i++) {
		cJSON *key = cJSON_CreateString(v[i].node ? v[i].node : "");
		char *ks = key ? cJSON_PrintUnformatted(key) : NULL;
		cJSON_Delete(key);
		rc = ks && fprintf(f, "%s%s:{\"Pods\":[", i ? "," : "", ks) > 0 ? 0 : -1;
		free(ks);
		for (int k = 0; rc == 0 && k < v[i].npods; k++) {
			if (k && fputc(',', f) == EOF) {
				rc = -1;
				break;
			}
			if (e->node_cache_capable) {
				cJSON *uid = cJSON_CreateString(v[i].pods[k]->uid ? v[i].pods[k]->uid : "");
				char *us = uid ? cJSON_PrintUnformatted(uid) : NULL;
				cJSON_Delete(uid);
				rc = us && fprintf(f, "{\"UID\":%s}", us) > 0 ? 0 : -1;
				free(us);
			} else {
				rc = sk_extender_write_pod(f, v[i].pods[k]);
			}
		}
		if (rc == 0)
			rc = fprintf(f, "],\"NumPDBViolations\":%lld}", (long long)v[i].num_pdb_violations) > 0 ? 0 : -1;
	}
	if (rc == 0)
		rc = fputs(e->node_cache_capable ? "}}" : "},\"NodeNameToMetaVictims\":null}", f) >= 0 ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static struct sk_pod *pod_on_node(const struct sk_node_info *ni, const char *uid)
{
	for (int i = 0; i < ni->npods; i++)
		if (ni->pods[i].pod->uid && strcmp(ni->pods[i].pod->uid, uid) == 0)
			return ni->pods[i].pod;
	return NULL;
}

/* One MetaVictims entry -> Victims, the pods looked up on the node (convertToVictims). */
static int decode_entry(const struct sk_extender *e, const cJSON *x, const struct sk_snapshot *snap,
			struct sk_victims *out, char **err)
{
	memset(out, 0, sizeof(*out));
	const struct sk_node_info *ni = snap ? sk_snapshot_get(snap, x->string) : NULL;
	if (!ni || !ni->node)
		return kube_errf(err, "nodeinfo not found for node name \"%s\"", x->string);
	out->node = ni->node->name;
	const cJSON *pdb = sk_extender_rget(x, "NumPDBViolations");
	if (pdb && !cJSON_IsNull(pdb) && kube_json_get_int64(pdb, &out->num_pdb_violations) != 0)
		return kube_errf(err, "extender %s: preempt: NodeNameToMetaVictims[%s].NumPDBViolations: expected an integer",
				 e->name, x->string);
	const cJSON *pods = sk_extender_rget(x, "Pods");
	if (pods && !cJSON_IsNull(pods) && !cJSON_IsArray(pods))
		return kube_errf(err, "extender %s: preempt: NodeNameToMetaVictims[%s].Pods: expected an array", e->name,
				 x->string);
	int np = cJSON_IsArray(pods) ? cJSON_GetArraySize(pods) : 0;
	if (np > 0 && !(out->pods = calloc((size_t)np, sizeof(*out->pods))))
		return kube_errf(err, "extender %s: out of memory", e->name);
	for (const cJSON *p = np ? pods->child : NULL; p; p = p->next) {
		const cJSON *uid = sk_extender_rget(p, "UID");
		const char *u = cJSON_IsString(uid) ? uid->valuestring : "";
		struct sk_pod *victim = pod_on_node(ni, u);
		if (!victim)
			return kube_errf(err,
					 "extender: %s claims to preempt pod (UID: %s) on node: %s, but the pod is not found on that node",
					 e->name, u, x->string);
		out->pods[out->npods++] = sk_pod_ref(victim);
	}
	return 0;
}

int sk_extender_preempt_decode(const struct sk_extender *e, const cJSON *res, const struct sk_snapshot *snap,
			       struct sk_victims **out, int *nout, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	*nout = 0;
	if (!cJSON_IsObject(res))
		return kube_errf(err, "extender %s: preempt: expected an ExtenderPreemptionResult (object)", e->name);
	const cJSON *m = sk_extender_rget(res, "NodeNameToMetaVictims");
	if (!m || cJSON_IsNull(m))
		return 0;
	if (!cJSON_IsObject(m))
		return kube_errf(err, "extender %s: preempt: NodeNameToMetaVictims: expected an object", e->name);
	int n = cJSON_GetArraySize(m);
	struct sk_victims *v = calloc((size_t)(n ? n : 1), sizeof(*v));
	if (!v)
		return kube_errf(err, "extender %s: out of memory", e->name);
	int k = 0;
	for (const cJSON *x = m->child; x; x = x->next) {
		if (!x->string)
			continue;
		int dup = -1; /* a key given twice: the last wins, as in a Go map */
		for (int i = 0; i < k && dup < 0; i++)
			if (strcmp(v[i].node, x->string) == 0)
				dup = i;
		struct sk_victims one;
		int rc = decode_entry(e, x, snap, &one, err);
		if (rc != 0) {
			for (int j = 0; j < one.npods; j++)
				sk_pod_unref(one.pods[j]);
			free(one.pods);
			sk_victims_free(v, k);
			return -1;
		}
		if (dup >= 0) {
			for (int j = 0; j < v[dup].npods; j++)
				sk_pod_unref(v[dup].pods[j]);
			free(v[dup].pods);
			v[dup] = one;
		} else {
			v[k++] = one;
		}
	}
	*out = v;
	*nout = k;
	return 0;
}

int sk_extender_process_preemption(const struct sk_extender *e, const struct sk_pod *pod,
				   const struct sk_snapshot *snap, const struct sk_victims *in, int nin,
				   struct sk_victims **out, int *nout, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	*nout = 0;
	if (!e->preempt_verb)
		return kube_errf(err, "preempt verb is not defined for extender %s but run into ProcessPreemption", e->name);
	char *body = sk_extender_preempt_body(e, pod, in, nin);
	cJSON *res = sk_extender_post(e, "preempt", e->preempt_verb, body, err);
	free(body);
	if (!res)
		return -1;
	int rc = sk_extender_preempt_decode(e, res, snap, out, nout, err);
	cJSON_Delete(res);
	if (rc != 0)
		sk_extender_observe(e, "preempt", -1, "response");
	return rc;
}

int sk_extenders_call_preempt(struct sk_extender *const *list, int nlist, const struct sk_pod *pod,
			      const struct sk_snapshot *snap, struct sk_victims **io, int *n, char **err)
{
	if (err)
		*err = NULL;
	if (*n == 0)
		return 0;
	struct sk_victims *cur = *io;
	int ncur = *n;
	bool owned = false; /* cur is a result of ours, not the caller's list */
	for (int i = 0; i < nlist && ncur > 0; i++) {
		const struct sk_extender *e = list[i];
		if (!e->preempt_verb || !sk_extender_is_interested(e, pod))
			continue;
		struct sk_victims *next = NULL;
		int nnext = 0;
		char *msg = NULL;
		int rc = sk_extender_process_preemption(e, pod, snap, cur, ncur, &next, &nnext, &msg);
		if (rc == 0) {
			/* a node with no victim: dropped for an ignorable extender, an error otherwise */
			int k = 0;
			for (int j = 0; j < nnext; j++) {
				if (next[j].npods > 0) {
					next[k++] = next[j];
					continue;
				}
				if (!e->ignorable) {
					rc = kube_errf(&msg, "expected at least one victim pod on node \"%s\"", next[j].node);
					for (int m = j; m < nnext; m++) /* keep the rest freeable */
						next[k++] = next[m];
					break;
				}
				klog_info(2, "Ignored node for which the extender didn't report victims", " node=%s extender=%s",
					  next[j].node, e->name);
				free(next[j].pods);
			}
			nnext = k;
		}
		if (rc != 0) {
			sk_victims_free(next, nnext);
			if (e->ignorable) {
				klog_info(2, "Skipped extender as it returned error and has ignorable flag set",
					  " extender=%s err=\"%s\"", e->name, msg ? msg : "");
				free(msg);
				continue;
			}
			if (owned)
				sk_victims_free(cur, ncur);
			if (err)
				*err = msg;
			else
				free(msg);
			return -1;
		}
		if (owned)
			sk_victims_free(cur, ncur);
		cur = next;
		ncur = nnext;
		owned = true;
	}
	if (owned) {
		sk_victims_free(*io, *n);
		*io = cur;
		*n = ncur;
	}
	return 0;
}
