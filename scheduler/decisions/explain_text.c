/* A decision record (its JSON, as GET /debug/schedkit/v1/decisions serves it) as readable text:
 * the `simulate --explain` layout (docs/simulate.md) for `kubectl schedkit explain`, and the
 * why-pending table. */
#include "scheduler/decisions/explain.h"

#include <stdlib.h>
#include <string.h>

static const char *sget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double nget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int imax(int a, int b) { return a > b ? a : b; }

static void pod_key(const cJSON *rec, char *buf, size_t len)
{
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(rec, "pod");
	snprintf(buf, len, "%s/%s", sget(pod, "namespace"), sget(pod, "name"));
}

int sk_decision_explain(FILE *f, const cJSON *rec)
{
	if (!cJSON_IsObject(rec))
		return -1;
	char key[600];
	pod_key(rec, key, sizeof key);
	const char *node = sget(rec, "node");
	fprintf(f, "Pod %s (profile %s): %s", key, sget(rec, "profile"), sget(rec, "result"));
	if (*node)
		fprintf(f, " on %s", node);
	const cJSON *pe = cJSON_GetObjectItemCaseSensitive(rec, "preemption");
	const char *nominated = sget(pe, "nominatedNode");
	if (*nominated)
		fprintf(f, " (nominated node %s)", nominated);
	fputc('\n', f);
	if (*sget(rec, "message"))
		fprintf(f, "  %s\n", sget(rec, "message"));
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(pe, "victims"))
		if (cJSON_IsString(v))
			fprintf(f, "  preempted %s\n", v->valuestring);

	const cJSON *score = cJSON_GetObjectItemCaseSensitive(rec, "score");
	const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(score, "plugins");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(score, "nodes");
	const cJSON *filter = cJSON_GetObjectItemCaseSensitive(rec, "filter");
	int nscored = cJSON_GetArraySize(nodes), np = cJSON_GetArraySize(plugins);
	int wnode = 4;
	cJSON_ArrayForEach(v, nodes)
		wnode = imax(wnode, (int)strlen(sget(v, "node")));
	cJSON_ArrayForEach(v, filter)
		wnode = imax(wnode, (int)strlen(sget(v, "node")));
	if (nscored > 0) {
		int *w = calloc((size_t)np + 1, sizeof *w);
		if (!w)
			return -1;
		char head[256];
		fprintf(f, "  %-*s  %-8s", wnode, "NODE", "RESULT");
		int p = 0;
		cJSON_ArrayForEach(v, plugins) {
			snprintf(head, sizeof head, "%s(x%d)", sget(v, "name"), (int)nget(v, "weight"));
			w[p] = imax((int)strlen(head), 5);
			fprintf(f, "  %-*s", w[p], head);
			p++;
		}
		fprintf(f, "  TOTAL\n");
		cJSON_ArrayForEach(v, nodes) {
			const char *nn = sget(v, "node");
			fprintf(f, "  %-*s  %-8s", wnode, nn, !strcmp(nn, node) ? "chosen" : "feasible");
			const cJSON *s;
			p = 0;
			cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(v, "normalized")) {
				fprintf(f, "  %-*.0f", w[p < np ? p : np], s->valuedouble);
				p++;
			}
			fprintf(f, "  %.0f\n", nget(v, "total"));
		}
		free(w);
	} else if (*node) {
		fprintf(f, "  %-*s  %-8s  (only feasible node: not scored)\n", wnode, node, "chosen");
	}
	if (cJSON_GetArraySize(filter) > 0 && nscored == 0 && !*node)
		fprintf(f, "  %-*s  %s\n", wnode, "NODE", "REJECTED BY");
	cJSON_ArrayForEach(v, filter) {
		const char *pl = *sget(v, "plugin") ? sget(v, "plugin") : "PreFilter";
		fprintf(f, "  %-*s  %s: %s\n", wnode, sget(v, "node"), pl, sget(v, "message"));
	}
	fputc('\n', f);
	return 0;
}

/* "3 Insufficient cpu, 2 node(s) had untolerated taint(s)" from a record's reasons. */
static void reasons_text(const cJSON *rec, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(rec, "reasons")) {
		int n = snprintf(buf + off, len - off, "%s%d %s", off ? ", " : "", (int)nget(r, "count"), sget(r, "reason"));
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	if (!*buf)
		snprintf(buf, len, "%s", sget(rec, "message"));
}

void sk_decisions_why_pending(FILE *f, const cJSON *const *items, int n)
{
	if (n == 0) {
		fprintf(f, "No pending pods with a recorded decision.\n");
		return;
	}
	int wns = 9, wname = 4, wprof = 7;
	for (int i = 0; i < n; i++) {
		const cJSON *pod = cJSON_GetObjectItemCaseSensitive(items[i], "pod");
		wns = imax(wns, (int)strlen(sget(pod, "namespace")));
		wname = imax(wname, (int)strlen(sget(pod, "name")));
		wprof = imax(wprof, (int)strlen(sget(items[i], "profile")));
	}
	fprintf(f, "%-*s  %-*s  %-*s  %-8s  %-27s  %s\n", wns, "NAMESPACE", wname, "NAME", wprof, "PROFILE", "ATTEMPTS",
		"LAST ATTEMPT", "TOP REASONS");
	for (int i = 0; i < n; i++) {
		const cJSON *pod = cJSON_GetObjectItemCaseSensitive(items[i], "pod");
		char reasons[1024];
		reasons_text(items[i], reasons, sizeof reasons);
		fprintf(f, "%-*s  %-*s  %-*s  %-8d  %-27s  %s\n", wns, sget(pod, "namespace"), wname, sget(pod, "name"),
			wprof, sget(items[i], "profile"), (int)nget(items[i], "attempts"), sget(items[i], "time"), reasons);
	}
}
