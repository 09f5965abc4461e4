/* `kubectl schedkit` (bin/kubectl-schedkit, docs/explain.md): explain, why-pending and simulate
 * against the live cluster. The scheduler is reached through the API server's service proxy,
 * /api/v1/namespaces/NS/services/SCHEME:NAME:PORT/proxy/..., with the user's kubeconfig, so the
 * same command works on a real cluster and on the local API server (e2e/apiserver/proxy.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/config/config.h"
#include "scheduler/decisions/explain.h"
#include "scheduler/decisions/kubectl_dashboard.h"
#include "scheduler/simulate/simulate.h"

/* Service proxy answers come from one endpoint picked by the API server; only the leader has
 * records (a standby answers 503 "not the leading scheduler"), so that is retried this many
 * times. */
#define LEADER_TRIES 12

struct opts {
	const char *cmd;
	const char *arg;          /* explain: the pod */
	const char *kubeconfig, *context, *ns;
	bool all_namespaces, all_records, json, explain;
	const char *profile;
	const char *sched_ns, *sched_svc, *sched_port, *sched_scheme;
	const char *config;       /* simulate: a config file instead of the running one */
	const char *seed;
	const char *address, *port; /* dashboard: where to listen */
	bool open;                  /* dashboard: start a browser */
};

static void usage(FILE *f)
{
	fprintf(f, "kubectl schedkit: ask the running schedkit scheduler why.\n"
		   "\n"
		   "Usage:\n"
		   "  kubectl schedkit explain POD [-n NS] [--all] [-o json]\n"
		   "      The decision record of the pod's last attempt (--all: every record kept),\n"
		   "      in the layout of `schedkit-scheduler simulate --explain`.\n"
		   "  kubectl schedkit why-pending [--profile NAME] [-n NS | -A]\n"
		   "      The pending pods of a profile with the top reasons of their last attempt.\n"
		   "  kubectl schedkit simulate [--config FILE] [--explain] [--seed N]\n"
		   "      Runs `schedkit-scheduler simulate` on a snapshot of the live cluster (nodes, pods,\n"
		   "      PriorityClasses, PodDisruptionBudgets) with the running scheduler's configuration\n"
		   "      (its /debug/schedkit/v1/config, the /configz body) unless --config names one.\n"
		   "  kubectl schedkit dashboard [--address 127.0.0.1] [--port 0] [--open]\n"
		   "      Serves the scheduler's live web view on a local URL (printed), forwarded through\n"
		   "      the API server's service proxy with your credentials (--open: start $BROWSER).\n"
		   "\n"
		   "Flags:\n"
		   "  --kubeconfig FILE, --context NAME, -n/--namespace NS (default: the context's)\n"
		   "  --scheduler-namespace NS   the scheduler Service's namespace (default schedkit-system)\n"
		   "  --scheduler-service NAME   the scheduler Service (default schedkit-scheduler)\n"
		   "  --scheduler-port PORT      its port (default 10259)\n"
		   "  --scheduler-scheme SCHEME  https (the default: the scheduler serves HTTPS) or http\n");
}

static int parse(int argc, char **argv, struct opts *o, FILE *errout)
{
	*o = (struct opts){ .sched_ns = "schedkit-system", .sched_svc = "schedkit-scheduler", .sched_port = "10259",
			    .sched_scheme = "https", .seed = "1", .address = "127.0.0.1", .port = "0" };
	static const struct {
		const char *name;
		size_t off;
	} vals[] = {
		{ "--kubeconfig", offsetof(struct opts, kubeconfig) },
		{ "--context", offsetof(struct opts, context) },
		{ "--namespace", offsetof(struct opts, ns) },
		{ "-n", offsetof(struct opts, ns) },
		{ "--profile", offsetof(struct opts, profile) },
		{ "--scheduler-namespace", offsetof(struct opts, sched_ns) },
		{ "--scheduler-service", offsetof(struct opts, sched_svc) },
		{ "--scheduler-port", offsetof(struct opts, sched_port) },
		{ "--scheduler-scheme", offsetof(struct opts, sched_scheme) },
		{ "--config", offsetof(struct opts, config) },
		{ "--seed", offsetof(struct opts, seed) },
		{ "--address", offsetof(struct opts, address) },
		{ "--port", offsetof(struct opts, port) },
	};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		if (!strcmp(a, "-A") || !strcmp(a, "--all-namespaces")) {
			o->all_namespaces = true;
			continue;
		}
		if (!strcmp(a, "--all")) {
			o->all_records = true;
			continue;
		}
		if (!strcmp(a, "--explain")) {
			o->explain = true;
			continue;
		}
		if (!strcmp(a, "--open")) {
			o->open = true;
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "-o=", 3) || !strncmp(a, "--output=", 9)) {
			const char *v = strchr(a, '=') ? strchr(a, '=') + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || strcmp(v, "json")) {
				fprintf(errout, "error: unsupported output format %s (only json)\n", v ? v : "\"\"");
				return 2;
			}
			o->json = true;
			continue;
		}
		bool matched = false;
		for (size_t k = 0; k < sizeof vals / sizeof vals[0] && !matched; k++) {
			size_t l = strlen(vals[k].name);
			const char *v = NULL;
			if (!strcmp(a, vals[k].name)) {
				if (i + 1 >= argc) {
					fprintf(errout, "error: flag needs an argument: %s\n", a);
					return 2;
				}
				v = argv[++i];
			} else if (!strncmp(a, vals[k].name, l) && a[l] == '=') {
				v = a + l + 1;
			} else {
				continue;
			}
			*(const char **)((char *)o + vals[k].off) = v;
			matched = true;
		}
		if (matched)
			continue;
		if (a[0] == '-') {
			fprintf(errout, "error: unknown flag: %s\n", a);
			return 2;
		}
		if (!o->cmd)
			o->cmd = a;
		else if (!o->arg)
			o->arg = a;
		else {
			fprintf(errout, "error: unexpected argument %s\n", a);
			return 2;
		}
	}
	if (!o->cmd)
		return 1;
	if (strcmp(o->sched_scheme, "http") && strcmp(o->sched_scheme, "https")) {
		fprintf(errout, "error: --scheduler-scheme must be http or https, not %s\n", o->sched_scheme);
		return 2;
	}
	return 0;
}

/* /api/v1/namespaces/NS/services/SCHEME:NAME:PORT/proxy<path> (caller frees). */
static char *proxy_path(const struct opts *o, const char *path)
{
	char *p = NULL;
	if (asprintf(&p, "/api/v1/namespaces/%s/services/%s:%s:%s/proxy%s", o->sched_ns, o->sched_scheme, o->sched_svc,
		     o->sched_port, path) < 0)
		return NULL;
	return p;
}

/* GET of a scheduler endpoint through the proxy; with want_leader, retried while the answer
 * says it came from a scheduler that is not leading. */
static int sched_get(struct kube_client *c, const struct opts *o, const char *path, const char *query, bool want_leader,
		     cJSON **out, FILE *errout)
{
	char *p = proxy_path(o, path);
	if (!p)
		return -1;
	int rc = -1;
	for (int t = 0; t < (want_leader ? LEADER_TRIES : 1); t++) {
		struct kube_error e = { 0 };
		cJSON *j = NULL;
		if (kube_request(c, "GET", p, query, NULL, NULL, &j, &e) != 0) {
			/* a standby answered (503, "not the leading scheduler"): ask again */
			if (want_leader && e.http_code == 503 && strstr(e.message, "not the leading") && t + 1 < LEADER_TRIES)
				continue;
			if (e.http_code == 404 && !strcmp(e.reason, "NotFound") && strstr(e.message, "no decision"))
				fprintf(errout, "error: %s\n", e.message);
			else
				fprintf(errout, "error: the scheduler at service %s/%s (port %s) did not answer %s: %s%s%s\n",
					o->sched_ns, o->sched_svc, o->sched_port, path, e.message,
					e.http_code ? "" : " (is the scheduler serving? see --secure-port)",
					e.http_code == 404 && !strstr(e.message, "no decision") ? " (see --scheduler-service)" : "");
			break;
		}
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "leading");
		if (want_leader && cJSON_IsFalse(l) && t + 1 < LEADER_TRIES) {
			cJSON_Delete(j);
			continue;
		}
		*out = j;
		rc = 0;
		break;
	}
	free(p);
	return rc;
}

static int cmd_explain(struct kube_client *c, const struct opts *o, const char *ns, FILE *out, FILE *errout)
{
	if (!o->arg) {
		fprintf(errout, "error: explain needs a pod name: kubectl schedkit explain POD [-n NS]\n");
		return 2;
	}
	char *qns = kube_urlencode(ns), *qname = kube_urlencode(o->arg), *q = NULL;
	if (!qns || !qname || asprintf(&q, "namespace=%s&name=%s", qns, qname) < 0)
		q = NULL;
	free(qns);
	free(qname);
	cJSON *j = NULL;
	int rc = q && sched_get(c, o, "/debug/schedkit/v1/decisions", q, true, &j, errout) == 0 ? 0 : 1;
	free(q);
	if (rc)
		return rc;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
	if (o->json) {
		char *s = cJSON_Print(o->all_records ? j : cJSON_GetArrayItem(items, 0));
		fprintf(out, "%s\n", s ? s : "");
		free(s);
	} else {
		const cJSON *r;
		cJSON_ArrayForEach(r, items) {
			sk_decision_explain(out, r);
			if (!o->all_records)
				break;
		}
	}
	cJSON_Delete(j);
	return 0;
}

static int cmd_dashboard(struct kube_client *c, const struct opts *o, int port, FILE *out, FILE *errout)
{
	char *prefix = proxy_path(o, "");
	if (!prefix)
		return 1;
	int rc = sk_kubectl_dashboard(c, prefix, o->address, port, o->open, out, errout);
	free(prefix);
	return rc;
}

/* Is the pod still waiting (exists, not bound, not finished)? */
static bool still_pending(struct kube_client *c, const cJSON *item)
{
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(item, "pod");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(pod, "namespace"), *nm = cJSON_GetObjectItemCaseSensitive(pod, "name");
	if (!cJSON_IsString(ns) || !cJSON_IsString(nm))
		return false;
	char *path = kube_path("", "v1", "pods", ns->valuestring, nm->valuestring, NULL);
	cJSON *obj = NULL;
	struct kube_error e = { 0 };
	bool pending = path && kube_get(c, path, &obj, &e) == 0;
	free(path);
	if (pending) {
		const cJSON *node = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "nodeName");
		pending = !(cJSON_IsString(node) && *node->valuestring);
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "uid");
		const cJSON *ruid = cJSON_GetObjectItemCaseSensitive(pod, "uid");
		if (cJSON_IsString(uid) && cJSON_IsString(ruid) && strcmp(uid->valuestring, ruid->valuestring))
			pending = false; /* another pod of the same name: its record is not this one's */
	}
	cJSON_Delete(obj);
	return pending;
}

static int cmd_why_pending(struct kube_client *c, const struct opts *o, const char *ns, FILE *out, FILE *errout)
{
	char q[1024];
	char *qp = o->profile ? kube_urlencode(o->profile) : NULL, *qns = kube_urlencode(ns);
	snprintf(q, sizeof q, "result=Unschedulable&latest=true&limit=10000%s%s%s%s", qp ? "&profile=" : "", qp ? qp : "",
		 o->all_namespaces ? "" : "&namespace=", o->all_namespaces ? "" : (qns ? qns : ""));
	free(qp);
	free(qns);
	cJSON *j = NULL;
	if (sched_get(c, o, "/debug/schedkit/v1/decisions", q, true, &j, errout) != 0)
		return 1;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, "items");
	int n = cJSON_GetArraySize(items), k = 0;
	const cJSON **keep = calloc((size_t)(n ? n : 1), sizeof *keep);
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
		if (keep && still_pending(c, it))
			keep[k++] = it;
	if (o->json) {
		cJSON *arr = cJSON_CreateArray();
		for (int i = 0; arr && i < k; i++)
			cJSON_AddItemToArray(arr, cJSON_Duplicate(keep[i], 1));
		char *s = cJSON_Print(arr);
		fprintf(out, "%s\n", s ? s : "[]");
		free(s);
		cJSON_Delete(arr);
	} else {
		sk_decisions_why_pending(out, keep, k);
	}
	free(keep);
	cJSON_Delete(j);
	return 0;
}

/* Appends the items of a list of path to arr (with apiVersion and kind set, as `kubectl get -o
 * yaml` writes them); a missing API (404) adds nothing. */
static int add_list(struct kube_client *c, const char *path, const char *api_version, const char *kind, cJSON *arr,
		    FILE *errout)
{
	cJSON *l = NULL;
	struct kube_error e = { 0 };
	if (kube_list(c, path, NULL, NULL, &l, &e) != 0) {
		if (e.http_code == 404)
			return 0;
		fprintf(errout, "error: listing %s: %s\n", path, e.message);
		return -1;
	}
	cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(l, "items"), *it;
	while (items && (it = cJSON_DetachItemFromArray(items, 0))) {
		cJSON_DeleteItemFromObjectCaseSensitive(it, "apiVersion");
		cJSON_DeleteItemFromObjectCaseSensitive(it, "kind");
		cJSON_AddStringToObject(it, "apiVersion", api_version);
		cJSON_AddStringToObject(it, "kind", kind);
		cJSON_AddItemToArray(arr, it);
	}
	cJSON_Delete(items);
	cJSON_Delete(l);
	return 0;
}

static int write_file(const char *path, const char *text, FILE *errout)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(errout, "error: writing %s\n", path);
		return -1;
	}
	return 0;
}

static int cmd_simulate(struct kube_client *c, const struct opts *o, FILE *out, FILE *errout)
{
	char dir[] = "/tmp/kubectl-schedkit.XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(errout, "error: cannot make a temporary directory\n");
		return 1;
	}
	char cluster[64], config[64];
	snprintf(cluster, sizeof cluster, "%s/cluster.json", dir);
	snprintf(config, sizeof config, "%s/config.json", dir);
	int rc = 1;
	cJSON *list = cJSON_CreateObject(), *items = cJSON_CreateArray();
	cJSON_AddStringToObject(list, "apiVersion", "v1");
	cJSON_AddStringToObject(list, "kind", "List");
	cJSON_AddItemToObject(list, "items", items);
	if (add_list(c, "/api/v1/nodes", "v1", "Node", items, errout) != 0 ||
	    add_list(c, "/api/v1/pods", "v1", "Pod", items, errout) != 0 ||
	    add_list(c, "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", items,
		     errout) != 0 ||
	    add_list(c, "/apis/policy/v1/poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", items, errout) != 0)
		goto out;
	char *text = cJSON_Print(list);
	int w = text ? write_file(cluster, text, errout) : -1;
	free(text);
	if (w != 0)
		goto out;
	const char *cfg_path = o->config;
	if (!cfg_path) {
		cJSON *cz = NULL;
		if (sched_get(c, o, "/debug/schedkit/v1/config", NULL, true, &cz, errout) != 0)
			goto out;
		const cJSON *cc = cJSON_GetObjectItemCaseSensitive(cz, "componentconfig");
		char *ct = cc ? cJSON_Print(cc) : NULL;
		w = ct ? write_file(config, ct, errout) : -1;
		if (!ct)
			fprintf(errout, "error: the scheduler's configuration has no componentconfig\n");
		free(ct);
		cJSON_Delete(cz);
		if (w != 0)
			goto out;
		cfg_path = config;
	}
	char *args[] = { "simulate", "--config", (char *)cfg_path, "--cluster", cluster, "--seed", (char *)o->seed,
			 o->explain ? "--explain" : NULL, NULL };
	int n = o->explain ? 8 : 7;
	fflush(out);
	rc = sk_simulate_main(n, args, out, errout);
out:
	cJSON_Delete(list);
	unlink(cluster);
	unlink(config);
	rmdir(dir);
	return rc;
}

int sk_kubectl_schedkit_main(int argc, char **argv, FILE *out, FILE *errout)
{
	struct opts o;
	int rc = parse(argc, argv, &o, errout);
	if (rc == 1) {
		usage(out);
		return 0;
	}
	if (rc)
		return rc;
	bool explain = !strcmp(o.cmd, "explain"), why = !strcmp(o.cmd, "why-pending"), sim = !strcmp(o.cmd, "simulate");
	bool dash = !strcmp(o.cmd, "dashboard");
	if (!explain && !why && !sim && !dash) {
		fprintf(errout, "error: unknown command \"%s\" (explain, why-pending, simulate, dashboard)\n", o.cmd);
		return 2;
	}
	char *endp = NULL;
	long lport = strtol(o.port, &endp, 10);
	if (dash && (!*o.port || *endp || lport < 0 || lport > 65535)) {
		fprintf(errout, "error: --port %s: not a port number (0-65535)\n", o.port);
		return 2;
	}
	struct kube_config *kc = NULL;
	char *err = NULL;
	if (kube_config_load(o.kubeconfig, o.context, &kc, &err) != 0) {
		fprintf(errout, "error: %s\n", err ? err : "no kubeconfig");
		free(err);
		return 1;
	}
	struct kube_client *c = NULL;
	if (kube_client_new(kc, &c, &err) != 0) {
		fprintf(errout, "error: %s\n", err ? err : "cannot build a client");
		free(err);
		kube_config_free(kc);
		return 1;
	}
	kube_client_set_max_retries(c, 1);
	const char *ns = o.ns ? o.ns : (kc->namespace ? kc->namespace : "default");
	if (explain)
		rc = cmd_explain(c, &o, ns, out, errout);
	else if (why)
		rc = cmd_why_pending(c, &o, ns, out, errout);
	else if (dash)
		rc = cmd_dashboard(c, &o, (int)lport, out, errout);
	else
		rc = cmd_simulate(c, &o, out, errout);
	kube_client_free(c);
	kube_config_free(kc);
	return rc;
}
