/* JSON of decision records (store.h); the format is documented in docs/explain.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/object.h"
#include "scheduler/decisions/store.h"

static cJSON *str(const char *s) { return cJSON_CreateString(s ? s : ""); }

/* RFC 3339 with microseconds, UTC. */
static cJSON *time_json(int64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000LL);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char buf[64];
	size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof buf - n, ".%06dZ", (int)((ns % 1000000000LL) / 1000));
	return cJSON_CreateString(buf);
}

/* The packed reasons joined by ", " (the simulate and FitError wording). */
static char *joined(const struct sk_dec_filter *f)
{
	size_t len = 1;
	const char *p = f->reasons;
	for (int i = 0; p && i < f->nreasons; i++, p += strlen(p) + 1)
		len += strlen(p) + 2;
	char *out = malloc(len), *w = out;
	if (!out)
		return NULL;
	p = f->reasons;
	for (int i = 0; p && i < f->nreasons; i++, p += strlen(p) + 1) {
		if (i) {
			memcpy(w, ", ", 2);
			w += 2;
		}
		size_t l = strlen(p);
		memcpy(w, p, l);
		w += l;
	}
	*w = '\0';
	return out;
}

static bool identity(cJSON *j, const struct sk_decision *r)
{
	cJSON *pod = cJSON_CreateObject();
	bool ok = kube_json_add(j, "seq", kube_json_create_int64((int64_t)r->seq)) && kube_json_add(j, "time", time_json(r->time_ns)) &&
		  kube_json_add(j, "pod", pod) && kube_json_add(pod, "namespace", str(r->ns)) && kube_json_add(pod, "name", str(r->name)) &&
		  kube_json_add(pod, "uid", str(r->uid)) && kube_json_add(j, "profile", str(r->profile)) &&
		  kube_json_add(j, "result", str(sk_result_string(r->result))) && kube_json_add(j, "node", str(r->node)) &&
		  kube_json_add(j, "message", str(r->message)) && kube_json_add(j, "attempts", cJSON_CreateNumber(r->attempts));
	return ok;
}

static cJSON *filter_json(const struct sk_decision *r)
{
	cJSON *a = cJSON_CreateArray();
	bool ok = a != NULL;
	for (int i = 0; ok && i < r->nfilter; i++) {
		const struct sk_dec_filter *f = &r->filter[i];
		cJSON *e = cJSON_CreateObject();
		char *msg = joined(f);
		ok = e && cJSON_AddItemToArray(a, e) && msg && kube_json_add(e, "node", str(f->node)) &&
		     kube_json_add(e, "plugin", str(f->plugin)) && kube_json_add(e, "code", str(f->code)) && kube_json_add(e, "message", str(msg));
		free(msg);
		cJSON *rs = ok ? cJSON_AddArrayToObject(e, "reasons") : NULL;
		ok = rs != NULL;
		const char *p = f->reasons;
		for (int k = 0; ok && p && k < f->nreasons; k++, p += strlen(p) + 1)
			ok = cJSON_AddItemToArray(rs, str(p));
	}
	if (!ok) {
		cJSON_Delete(a);
		return NULL;
	}
	return a;
}

/* Row i of one of the record's score tables: raw (0), normalized (1) or weighted (2). */
static cJSON *score_row(const struct sk_decision *r, int i, int kind)
{
	cJSON *a = cJSON_CreateArray();
	for (int p = 0; a && p < r->nplugins; p++) {
		int64_t v = kind == 0 ? sk_decision_raw(r, p, i) : sk_decision_norm(r, p, i) * (kind == 2 ? r->weight[p] : 1);
		if (!cJSON_AddItemToArray(a, kube_json_create_int64(v))) {
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* score: plugins with weights, then one row per scored node: raw (when kept), normalized and
 * weighted scores in plugin order, the extenders' part and the total. */
static cJSON *score_json(const struct sk_decision *r)
{
	cJSON *s = cJSON_CreateObject();
	cJSON *pl = s ? cJSON_AddArrayToObject(s, "plugins") : NULL;
	cJSON *nodes = pl ? cJSON_AddArrayToObject(s, "nodes") : NULL;
	bool ok = nodes != NULL;
	for (int p = 0; ok && p < r->nplugins; p++) {
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(pl, e) && kube_json_add(e, "name", str(r->plugin[p])) &&
		     kube_json_add(e, "weight", cJSON_CreateNumber(r->weight[p]));
	}
	for (int i = 0; ok && i < r->nnodes; i++) {
		cJSON *e = cJSON_CreateObject();
		int64_t weighted = 0;
		for (int p = 0; p < r->nplugins; p++)
			weighted += sk_decision_norm(r, p, i) * r->weight[p];
		ok = e && cJSON_AddItemToArray(nodes, e) && kube_json_add(e, "node", str(r->nodes[i])) &&
		     (!r->has_raw || kube_json_add(e, "raw", score_row(r, i, 0))) && kube_json_add(e, "normalized", score_row(r, i, 1)) &&
		     kube_json_add(e, "weighted", score_row(r, i, 2)) &&
		     kube_json_add(e, "extenders", kube_json_create_int64(r->total[i] - weighted)) &&
		     kube_json_add(e, "total", kube_json_create_int64(r->total[i]));
	}
	if (!ok) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* The winner and how many other scored nodes had the same total (the random tie-break). */
static cJSON *chosen_json(const struct sk_decision *r)
{
	cJSON *c = cJSON_CreateObject();
	int64_t best = 0;
	bool have = false;
	for (int i = 0; i < r->nnodes; i++)
		if (r->node && !strcmp(r->nodes[i], r->node)) {
			best = r->total[i];
			have = true;
		}
	int ties = 0;
	for (int i = 0; have && i < r->nnodes; i++)
		if (r->total[i] == best && strcmp(r->nodes[i], r->node))
			ties++;
	bool ok = c && kube_json_add(c, "node", str(r->node)) && kube_json_add(c, "scored", cJSON_CreateBool(r->nnodes > 0)) &&
		  kube_json_add(c, "tiedWith", cJSON_CreateNumber(ties));
	if (!ok) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

/* Children are added to their parent as soon as they are made, so one cJSON_Delete of the
 * record frees everything on any failure. */
static cJSON *details_json(cJSON *j, const struct sk_decision *r)
{
	bool ok = kube_json_add(j, "numAllNodes", cJSON_CreateNumber(r->num_all_nodes)) &&
		  kube_json_add(j, "durationSeconds", cJSON_CreateNumber(r->duration_s));
	cJSON *pre = ok ? cJSON_AddObjectToObject(j, "preFilter") : NULL;
	ok = pre && kube_json_add(pre, "nodes", r->prefilter_nodes < 0 ? cJSON_CreateString("all")
							     : cJSON_CreateNumber(r->prefilter_nodes)) &&
	     kube_json_add(pre, "message", str(r->prefilter_message));
	if (ok && r->nominated_path) {
		cJSON *nom = cJSON_AddObjectToObject(j, "nominatedNodePath");
		ok = nom && kube_json_add(nom, "node", str(r->nominated_path)) &&
		     kube_json_add(nom, "result", str(r->nominated_path_fit ? "Chosen" : "Rejected"));
	} else if (ok) {
		ok = kube_json_add(j, "nominatedNodePath", cJSON_CreateNull());
	}
	ok = ok && kube_json_add(j, "filter", filter_json(r)) && kube_json_add(j, "score", score_json(r)) &&
	     kube_json_add(j, "chosen", chosen_json(r)) && kube_json_add(j, "reasons", sk_decision_reasons_json(r, 0));
	cJSON *pe = ok ? cJSON_AddObjectToObject(j, "preemption") : NULL;
	cJSON *vict = pe ? cJSON_AddArrayToObject(pe, "victims") : NULL;
	ok = vict && kube_json_add(pe, "nominatedNode", str(r->nominated_node)) &&
	     kube_json_add(pe, "victimsTotal", cJSON_CreateNumber(r->victims_total));
	for (int i = 0; ok && i < r->nvictims; i++)
		ok = cJSON_AddItemToArray(vict, str(r->victims[i]));
	cJSON *cands = ok ? cJSON_AddArrayToObject(pe, "candidates") : NULL;
	ok = cands && kube_json_add(pe, "candidatesTotal", cJSON_CreateNumber(r->candidates_total));
	for (int i = 0; ok && i < r->ncandidates; i++) {
		const struct sk_dec_candidate *c = &r->candidates[i];
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(cands, e) && kube_json_add(e, "node", str(c->node)) &&
		     kube_json_add(e, "victims", cJSON_CreateNumber(c->victims)) &&
		     kube_json_add(e, "pdbViolations", kube_json_create_int64(c->pdb_violations)) &&
		     kube_json_add(e, "droppedByExtenders", cJSON_CreateBool(c->dropped));
	}
	double waited = 0;
	for (int i = 0; i < r->ntimes; i++)
		if (!strcmp(r->times[i].point, "WaitOnPermit"))
			waited = r->times[i].seconds;
	cJSON *pm = ok ? cJSON_AddObjectToObject(j, "permit") : NULL;
	ok = pm && kube_json_add(pm, "waited", cJSON_CreateBool(r->permit_wait)) &&
	     kube_json_add(pm, "waitSeconds", cJSON_CreateNumber(waited));
	cJSON *times = ok ? cJSON_AddArrayToObject(j, "timings") : NULL;
	ok = times != NULL;
	for (int i = 0; ok && i < r->ntimes; i++) {
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(times, e) && kube_json_add(e, "point", str(r->times[i].point)) &&
		     kube_json_add(e, "seconds", cJSON_CreateNumber(r->times[i].seconds)) &&
		     kube_json_add(e, "runs", cJSON_CreateNumber(r->times[i].runs));
	}
	return ok ? j : NULL;
}

cJSON *sk_decision_json(const struct sk_decision *r)
{
	cJSON *j = cJSON_CreateObject();
	if (!j || !identity(j, r) || !details_json(j, r)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

cJSON *sk_decision_summary_json(const struct sk_decision *r)
{
	cJSON *j = cJSON_CreateObject();
	if (!j || !identity(j, r) || !kube_json_add(j, "reasons", sk_decision_reasons_json(r, 3))) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

struct rcount {
	const char *reason;
	int count;
};

static int cmp_rcount(const void *a, const void *b)
{
	const struct rcount *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

cJSON *sk_decision_reasons_json(const struct sk_decision *r, int max)
{
	int cap = 0;
	for (int i = 0; i < r->nfilter; i++)
		cap += r->filter[i].nreasons;
	struct rcount *rc = calloc((size_t)(cap ? cap : 1), sizeof *rc);
	cJSON *a = cJSON_CreateArray();
	if (!rc || !a) {
		free(rc);
		cJSON_Delete(a);
		return NULL;
	}
	int n = 0;
	for (int i = 0; i < r->nfilter; i++) {
		const char *p = r->filter[i].reasons;
		for (int k = 0; p && k < r->filter[i].nreasons; k++, p += strlen(p) + 1) {
			int x = 0;
			while (x < n && strcmp(rc[x].reason, p))
				x++;
			if (x == n)
				rc[n++].reason = p;
			rc[x].count++;
		}
	}
	qsort(rc, (size_t)n, sizeof *rc, cmp_rcount);
	bool ok = true;
	for (int i = 0; ok && i < n && (max <= 0 || i < max); i++) {
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(a, e) && kube_json_add(e, "reason", str(rc[i].reason)) &&
		     kube_json_add(e, "count", cJSON_CreateNumber(rc[i].count));
	}
	free(rc);
	if (!ok) {
		cJSON_Delete(a);
		return NULL;
	}
	return a;
}

cJSON *sk_decisions_stats_json(const struct sk_decisions_stats *st)
{
	cJSON *j = cJSON_CreateObject();
	bool ok = j && kube_json_add(j, "records", cJSON_CreateNumber(st->records)) && kube_json_add(j, "pods", cJSON_CreateNumber(st->pods)) &&
		  kube_json_add(j, "bytes", kube_json_create_int64(st->bytes)) &&
		  kube_json_add(j, "added", kube_json_create_int64((int64_t)st->added)) &&
		  kube_json_add(j, "evicted", kube_json_create_int64((int64_t)st->evicted)) &&
		  kube_json_add(j, "perPod", cJSON_CreateNumber(st->per_pod)) &&
		  kube_json_add(j, "maxRecords", cJSON_CreateNumber(st->max_records)) &&
		  kube_json_add(j, "maxBytes", kube_json_create_int64(st->max_bytes));
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}
