/* Compact cluster descriptions shared by the PodTopologySpread and InterPodAffinity tests
 * (plugins/tests/test_pod_topology_spread.c, test_inter_pod_affinity.c). Header-only: every
 * function is static.
 *
 *   nodes: "node-a zone=zone1,node=node-a; node-b zone=zone1 taint=k:NoSchedule"
 *   pods:  "node-a foo; node-a foo=x,bar @ns1 !; node-b foo ^rs1 {JSON spec fields}"
 *          (node, labels as k or k=v, then optional @namespace, ! = terminating,
 *           ^uid = controlled by ReplicaSet uid, {...} = extra spec fields without the braces'
 *           own braces, e.g. {"affinity":{...}}; each pod is named p<index>)
 * Labels given as "k" get the value "". */
#ifndef SK_TEST_PTS_UTIL_H
#define SK_TEST_PTS_UTIL_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/tests/harness.h"
#include "scheduler/backend/cache.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/tests/fixtures.h"

#define TU_MAX 32

/* "a,b=c" -> "\"a\":\"\",\"b\":\"c\"" into out */
static inline void tu_labels_json(const char *csv, char *out, size_t n)
{
	out[0] = '\0';
	size_t len = 0;
	const char *p = csv;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		char item[256];
		snprintf(item, sizeof(item), "%.*s", (int)l, p);
		char *eq = strchr(item, '=');
		const char *v = "";
		if (eq) {
			*eq = '\0';
			v = eq + 1;
		}
		len += (size_t)snprintf(out + len, n - len, "%s\"%s\":\"%s\"", len ? "," : "", item, v);
		p = end ? end + 1 : NULL;
	}
}

/* Splits s at ';' into trimmed items (modifies s). Returns the count. */
static inline int tu_split(char *s, char **items, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ";"); tok && n < max; tok = strtok(NULL, ";")) {
		while (isspace((unsigned char)*tok))
			tok++;
		char *e = tok + strlen(tok);
		while (e > tok && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (*tok)
			items[n++] = tok;
	}
	return n;
}

static inline struct sk_node *tu_node(const char *desc)
{
	char name[128] = "", labels[512] = "", taint[512] = "";
	sscanf(desc, "%127s %511s %511s", name, labels, taint);
	if (!strncmp(labels, "taint=", 6)) {
		snprintf(taint, sizeof(taint), "%s", labels);
		labels[0] = '\0';
	}
	if (!strcmp(labels, "-"))
		labels[0] = '\0';
	char lj[1024], tj[512] = "";
	tu_labels_json(labels, lj, sizeof(lj));
	if (taint[0]) {
		char k[128] = "", eff[64] = "";
		sscanf(taint + 6, "%127[^:]:%63s", k, eff);
		snprintf(tj, sizeof(tj), ",\"spec\":{\"taints\":[{\"key\":\"%s\",\"effect\":\"%s\"}]}", k, eff);
	}
	char buf[2048];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}%s}", name, lj, tj);
	return fx_node(buf);
}

/* A pod: name, namespace (NULL = default), node (NULL = unbound), labels csv, owner (NULL = none: the
 * name and uid of the apps/v1 ReplicaSet controlling it),
 * terminating, extra spec fields ("" = none). */
static inline struct sk_pod *tu_pod(const char *name, const char *ns, const char *node, const char *labels, const char *owner,
			     bool terminating, const char *spec)
{
	char lj[1024], buf[8192], own[256] = "", nn[256] = "";
	tu_labels_json(labels, lj, sizeof(lj));
	if (owner)
		snprintf(own, sizeof(own),
			 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"%s\","
			 "\"uid\":\"%s\",\"controller\":true}]",
			 owner, owner);
	if (node)
		snprintf(nn, sizeof(nn), "\"nodeName\":\"%s\"%s", node, spec && *spec ? "," : "");
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"labels\":{%s}%s%s},"
		 "\"spec\":{%s%s}}",
		 name, ns ? ns : "default", lj, own,
		 terminating ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "", nn, spec ? spec : "");
	return fx_pod(buf);
}

/* Parses one pods item: "node labels [@ns] [!] [^uid] [{spec}]" */
static inline struct sk_pod *tu_pod_desc(int idx, const char *desc)
{
	char d[4096];
	snprintf(d, sizeof(d), "%s", desc);
	char *spec = strchr(d, '{');
	char specbuf[4096] = "";
	if (spec) {
		char *end = strrchr(spec, '}');
		snprintf(specbuf, sizeof(specbuf), "%.*s", (int)(end - spec - 1), spec + 1);
		*spec = '\0';
	}
	char node[128] = "", labels[512] = "", ns[128] = "", owner[128] = "";
	bool term = false;
	char *save = NULL;
	int field = 0;
	for (char *t = strtok_r(d, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (t[0] == '@')
			snprintf(ns, sizeof(ns), "%s", t + 1);
		else if (!strcmp(t, "!"))
			term = true;
		else if (t[0] == '^')
			snprintf(owner, sizeof(owner), "%s", t + 1);
		else if (field == 0 && ++field)
			snprintf(node, sizeof(node), "%s", t);
		else if (field == 1 && ++field)
			snprintf(labels, sizeof(labels), "%s", strcmp(t, "-") ? t : "");
	}
	char name[32];
	snprintf(name, sizeof(name), "p%d", idx);
	return tu_pod(name, ns[0] ? ns : NULL, node, labels, owner[0] ? owner : NULL, term, specbuf);
}

/* Builds the snapshot of nodes + pods (the pods placed on their nodes) and installs it in h. */
static inline void tu_cluster(struct ph *h, const char *nodes, const char *pods)
{
	char nb[4096], pb[16384];
	char *nitems[TU_MAX], *pitems[64];
	snprintf(nb, sizeof(nb), "%s", nodes);
	snprintf(pb, sizeof(pb), "%s", pods ? pods : "");
	int nn = tu_split(nb, nitems, TU_MAX);
	struct sk_node_info *nis[TU_MAX];
	for (int i = 0; i < nn; i++)
		nis[i] = fx_node_info(tu_node(nitems[i]), NULL);
	/* pods are split after nodes: strtok is not reentrant */
	int np = tu_split(pb, pitems, 64);
	for (int i = 0; i < np; i++) {
		struct sk_pod *p = tu_pod_desc(i, pitems[i]);
		int k = 0;
		while (k < nn && strcmp(nis[k]->node->name, p->node_name))
			k++;
		assert_true(k < nn);
		assert_int_equal(sk_node_info_add_pod(nis[k], p), 0);
		sk_pod_unref(p);
	}
	ph_set_snapshot(h, fx_snapshot_of(nis, nn));
}

/* PreScore over the candidate nodes (names separated by spaces; NULL = every node), Score and
 * NormalizeScore for them; out[i] follows the candidates' order. Returns the PreScore code. */
static inline enum sk_code tu_scores(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, const char *candidates,
			      int64_t *out, int *nout)
{
	const struct sk_node_info *cand[TU_MAX];
	int n = 0;
	for (int i = 0; i < h->snap->nnodes; i++) {
		const char *name = h->snap->nodes[i]->node->name;
		if (candidates) {
			char pat[160];
			snprintf(pat, sizeof(pat), " %s ", name);
			char hay[1024];
			snprintf(hay, sizeof(hay), " %s ", candidates);
			if (!strstr(hay, pat))
				continue;
		}
		cand[n++] = h->snap->nodes[i];
	}
	*nout = n;
	ph_reset_state(h);
	struct sk_status s = pl->desc->pre_score(pl, h->cs, pod, cand, n);
	if (s.code == SK_SKIP) {
		for (int i = 0; i < n; i++)
			out[i] = 0;
		return SK_SKIP;
	}
	assert_int_equal(s.code, SK_SUCCESS);
	struct sk_node_score scores[TU_MAX];
	for (int i = 0; i < n; i++) {
		scores[i].name = cand[i]->node->name;
		s = pl->desc->score(pl, h->cs, pod, cand[i], &scores[i].score);
		assert_int_equal(s.code, SK_SUCCESS);
	}
	s = pl->desc->normalize_score(pl, h->cs, pod, scores, n);
	assert_int_equal(s.code, SK_SUCCESS);
	for (int i = 0; i < n; i++)
		out[i] = scores[i].score;
	return SK_SUCCESS;
}

/* PreFilter once, then Filter on every node; codes[i] is one letter per node: S success,
 * U Unschedulable, X UnschedulableAndUnresolvable, K PreFilter Skip. reasons[i] (may be NULL) gets
 * the message (caller frees). */
static inline void tu_filter_all(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, char *codes, char **reasons)
{
	ph_reset_state(h);
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
	free(r.names);
	int n = h->snap->nnodes;
	if (s.code == SK_SKIP) {
		for (int i = 0; i < n; i++) {
			codes[i] = 'K';
			if (reasons)
				reasons[i] = strdup("");
		}
		codes[n] = '\0';
		return;
	}
	assert_int_equal(s.code, SK_SUCCESS);
	for (int i = 0; i < n; i++) {
		s = pl->desc->filter(pl, h->cs, pod, h->snap->nodes[i]);
		codes[i] = s.code == SK_SUCCESS ? 'S' : s.code == SK_UNSCHEDULABLE ? 'U'
			 : s.code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE ? 'X' : 'E';
		char *m = ph_message(&s);
		if (reasons)
			reasons[i] = m;
		else
			free(m);
	}
	codes[n] = '\0';
}

/* A big cluster for the parallel tests: n nodes in 5 zones with hostnames, and pods labelled
 * "foo" (and "bar" on every third) spread unevenly (node i gets i % 4 pods). */
static inline void tu_big_cluster(struct ph *h, int n)
{
	struct sk_node_info **nis = calloc((size_t)n, sizeof(*nis));
	assert_non_null(nis);
	for (int i = 0; i < n; i++) {
		char desc[256];
		snprintf(desc, sizeof(desc), "n%03d zone=z%d,kubernetes.io/hostname=n%03d", i, i % 5, i);
		nis[i] = fx_node_info(tu_node(desc), NULL);
		for (int k = 0; k < i % 4; k++) {
			char name[32], node[16];
			snprintf(name, sizeof(name), "p%03d-%d", i, k);
			snprintf(node, sizeof(node), "n%03d", i);
			struct sk_pod *p = tu_pod(name, NULL, node, (i + k) % 3 ? "foo" : "foo,bar", NULL, false,
						  (i + k) % 7 ? "" :
						  "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
						  "[{\"labelSelector\":{\"matchLabels\":{\"bar\":\"\"}},\"topologyKey\":\"kubernetes.io/hostname\"}],"
						  "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":3,\"podAffinityTerm\":"
						  "{\"labelSelector\":{\"matchLabels\":{\"foo\":\"\"}},\"topologyKey\":\"zone\"}}]}}");
			assert_int_equal(sk_node_info_add_pod(nis[i], p), 0);
			sk_pod_unref(p);
		}
	}
	ph_set_snapshot(h, fx_snapshot_of(nis, n));
	free(nis);
}

static inline const struct sk_snapshot *tu_snap_of(void *ctx) { return ((struct ph *)ctx)->snap; }

/* Runs PreFilter + Filter on every node and PreScore + Score + NormalizeScore over every node for
 * plugin `name`, once serially (h's framework) and once with a 4-thread pool, and checks that both
 * give the same codes and scores. The pool is forced (SK_POOL_EAGER_FORCE): left adaptive it keeps
 * these short loops on the caller, and the comparison could not catch a data race; its counters
 * must show that worker threads ran part of the plugin's parallel loops. */
static inline void tu_compare_parallel(struct ph *h, const char *name, const struct sk_pod *pod)
{
	char *err = NULL;
	setenv("SK_POOL_THREADS", "4", 1);
	struct sk_pool *pool = sk_pool_new(4, &err);
	unsetenv("SK_POOL_THREADS");
	assert_non_null(pool);
	assert_int_equal(sk_pool_threads(pool), 4);
	sk_pool_set_eager(pool, SK_POOL_EAGER_FORCE);
	struct sk_framework_env env = { .ctx = h, .pool = pool, .snapshot = tu_snap_of };
	struct sk_framework *fw = sk_framework_new(h->cfg, &h->cfg->profiles[0], &env, &err);
	assert_non_null(fw);
	struct sk_plugin *par = NULL;
	for (int i = 0; i < sk_framework_nplugins(fw); i++)
		if (!strcmp(sk_framework_instance(fw, i)->desc->name, name))
			par = sk_framework_instance(fw, i);
	assert_non_null(par);
	struct sk_plugin *ser = ph_plugin(h, name);
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	assert_non_null(cs);
	int n = h->snap->nnodes;
	char *c1 = malloc((size_t)n + 1), *c2 = malloc((size_t)n + 1);
	assert_non_null(c1);
	assert_non_null(c2);
	tu_filter_all(h, ser, pod, c1, NULL);
	struct sk_prefilter_result r = { .all = true };
	struct sk_status s = par->desc->pre_filter(par, cs, pod, &r);
	free(r.names);
	for (int i = 0; i < n; i++) {
		if (s.code == SK_SKIP) {
			c2[i] = 'K';
			continue;
		}
		struct sk_status f = par->desc->filter(par, cs, pod, h->snap->nodes[i]);
		c2[i] = f.code == SK_SUCCESS ? 'S' : f.code == SK_UNSCHEDULABLE ? 'U'
		      : f.code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE ? 'X' : 'E';
		sk_status_reset(&f);
	}
	c2[n] = '\0';
	assert_string_equal(c1, c2);
	assert_non_null(strchr(c1, 'S')); /* the case must not be trivial */
	assert_non_null(strchr(c1, 'U'));
	free(c1);
	free(c2);

	int64_t *s1 = calloc((size_t)n, sizeof(int64_t));
	struct sk_node_score *s2 = calloc((size_t)n, sizeof(*s2));
	assert_non_null(s1);
	assert_non_null(s2);
	assert_int_equal(ph_scores(h, ser, pod, s1), SK_SUCCESS);
	s = par->desc->pre_score(par, cs, pod, (const struct sk_node_info *const *)h->snap->nodes, n);
	assert_int_equal(s.code, SK_SUCCESS);
	bool varied = false;
	for (int i = 0; i < n; i++) {
		s2[i].name = h->snap->nodes[i]->node->name;
		s = par->desc->score(par, cs, pod, h->snap->nodes[i], &s2[i].score);
		assert_int_equal(s.code, SK_SUCCESS);
	}
	s = par->desc->normalize_score(par, cs, pod, s2, n);
	assert_int_equal(s.code, SK_SUCCESS);
	for (int i = 0; i < n; i++) {
		assert_int_equal(s1[i], s2[i].score);
		varied |= s1[i] != s1[0];
	}
	assert_true(varied);
	free(s1);
	free(s2);
	struct sk_pool_stats st;
	sk_pool_get_stats(pool, &st);
	assert_true(st.loops >= 1);                 /* the plugin used the pool... */
	assert_true(st.worker_chunks >= st.loops);  /* ...and a worker ran part of every loop */
	assert_true(st.worker_items > 0);
	sk_cycle_state_free(cs);
	sk_framework_unref(fw);
	sk_pool_free(pool);
}

#endif
