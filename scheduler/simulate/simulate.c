/* `schedkit-scheduler simulate` (simulate.h): loads cluster objects into a private cache, runs
 * the real scheduler (schedule_one.h) with inline binding and a fake clock, and renders each
 * attempt's outcome as a JSON line or an --explain table. */
#include "scheduler/simulate/simulate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/featuregate.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/api/workloads.h"
#include "scheduler/backend/cache.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/simulate/node_metrics.h"
#include "scheduler/simulate/sim_volumes.h"
#include "scheduler/schedule_one.h"

struct sim_class {
	const char *name; /* borrowed from the parsed documents */
	int64_t value;
	bool global_default;
	const char *preemption_policy;
};

struct sim_pending {      /* a pod of ours given to the queue */
	struct sk_pod *pod;
	bool attempted;
};

struct sim {
	const struct sk_config *cfg;
	const struct sk_simulate_opts *opts;
	FILE *out;
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_nominator *nom;
	struct sk_pool *pool;
	struct sk_scheduler *sched;
	atomic_llong clock_ns;
	int npending, cappending;
	struct sim_pending *pending;
	enum sk_result last_result;
	const struct sk_pod *last_pod; /* the pending pod of the last attempt (owned by pending[]) */
	int write_error; /* ENOMEM while rendering */
	/* preemption: PodDisruptionBudget documents (borrowed from the parsed input) and the victims
	 * evicted during the running attempt ("ns/name", owned; reported and cleared by sim_observe) */
	int npdbs;
	const cJSON **pdbs;
	int nvictims, capvictims;
	char **victims;
	/* sk_handle_patch_pod_annotation calls of the running attempt (key -> value), printed with
	 * it as "annotations" and cleared; NULL when none. */
	cJSON *annotations;
	/* NodeMetrics and PodMetrics of the cluster file, answered to sk_handle_api_get. */
	struct sk_sim_metrics *metrics;
	/* PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes and CSIDrivers of the
	 * cluster file (the volume plugins' listers). */
	struct sk_sim_volumes *volumes;
	/* Services, ReplicationControllers, ReplicaSets, StatefulSets and Namespaces of the cluster
	 * file (borrowed from the parsed input), the framework's listers (scheduler/api/workloads.h). */
	int nworkloads;
	const cJSON **workloads;
	struct sk_object_listers listers;
};

/* ---------- environment callbacks ---------- */

/* A fake monotonic clock: strictly increasing, so queue timestamps follow document order. */
static int64_t sim_now(void *ctx)
{
	struct sim *s = ctx;
	return atomic_fetch_add(&s->clock_ns, 1000) + 1000;
}

static const struct sk_snapshot *sim_fw_snapshot(void *ctx)
{
	struct sim *s = ctx;
	return sk_scheduler_snapshot(s->sched);
}

/* In-memory binding: the assumed pod becomes a bound pod of the cache right away, and the
 * queue hears AssignedPodAdd as it would from the informer. */
static int sim_bind(void *ctx, const struct sk_pod *pod, const char *node_name, char **err)
{
	struct sim *s = ctx;
	struct sk_pod *bound = sk_pod_with_node(pod, node_name);
	if (!bound) {
		if (err)
			*err = strdup("out of memory");
		return -1;
	}
	int rc = sk_cache_add_pod(s->cache, bound, err);
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(s->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, bound);
	sk_pod_unref(bound);
	return rc;
}

static const struct sk_snapshot *sim_update_snapshot(void *ctx, char **err)
{
	struct sim *s = ctx;
	if (sk_cache_update_snapshot(s->cache, s->snap, err) != 0)
		return NULL;
	return s->snap;
}

static int sim_assume(void *ctx, struct sk_pod *assumed, char **err)
{
	return sk_cache_assume_pod(((struct sim *)ctx)->cache, assumed, err);
}

static int sim_forget(void *ctx, const struct sk_pod *assumed, char **err)
{
	return sk_cache_forget_pod(((struct sim *)ctx)->cache, assumed, err);
}

static int sim_finish_binding(void *ctx, const struct sk_pod *assumed, char **err)
{
	return sk_cache_finish_binding(((struct sim *)ctx)->cache, assumed, err);
}

static bool sim_is_assumed(void *ctx, const char *uid)
{
	return sk_cache_is_assumed(((struct sim *)ctx)->cache, uid);
}

/* Preemption: a victim leaves the cluster at once (its deletion is not graceful here), and the
 * queue hears AssignedPodDelete as it would from the informer. */
static int sim_preempt_victim(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim,
			      const char *node_name, const char *condition_message, char **err)
{
	struct sim *s = ctx;
	(void)preemptor;
	(void)node_name;
	(void)condition_message;
	char key[512];
	sk_pod_key(victim, key, sizeof key);
	if (s->nvictims == s->capvictims) {
		int nc = s->capvictims ? s->capvictims * 2 : 8;
		char **v = realloc(s->victims, (size_t)nc * sizeof *v);
		if (!v)
			goto oom;
		s->victims = v;
		s->capvictims = nc;
	}
	if (!(s->victims[s->nvictims] = strdup(key)))
		goto oom;
	s->nvictims++;
	struct sk_pod *held = sk_pod_ref((struct sk_pod *)victim);
	int rc = sk_cache_remove_pod(s->cache, held, err);
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(s->sched), &SK_EVENT_ASSIGNED_POD_DELETE, held, NULL);
	sk_pod_unref(held);
	return rc;
oom:
	if (err)
		*err = strdup("out of memory");
	return -1;
}

/* simulate evicts victims inside the cycle, as with SchedulerAsyncPreemption=false: its clock is
 * its own and one thread runs the queue, so an eviction on a worker (plugins/DefaultPreemption
 * dp_async.c) would race the run; the victims and the nominated node are the same either way
 * (docs/simulate.md). Every other gate has its v1.34 default. */
static bool sim_feature_enabled(void *ctx, const char *gate)
{
	(void)ctx;
	if (strcmp(gate, "SchedulerAsyncPreemption") == 0)
		return false;
	return kube_feature_gate_enabled(NULL, gate);
}

static int sim_list_pdbs(void *ctx, struct sk_pdb ***out, char **err)
{
	struct sim *s = ctx;
	*out = NULL;
	if (s->npdbs == 0)
		return 0;
	struct sk_pdb **list = calloc((size_t)s->npdbs, sizeof *list);
	if (!list) {
		if (err)
			*err = strdup("out of memory");
		return -1;
	}
	for (int i = 0; i < s->npdbs; i++) {
		list[i] = sk_pdb_decode(s->pdbs[i], err);
		if (!list[i]) {
			sk_pdb_list_free(list, i);
			return -1;
		}
	}
	*out = list;
	return s->npdbs;
}

static void clear_victims(struct sim *s)
{
	for (int i = 0; i < s->nvictims; i++)
		free(s->victims[i]);
	s->nvictims = 0;
	cJSON_Delete(s->annotations);
	s->annotations = NULL;
}

/* env.patch_pod_annotation: nothing to patch offline; the attempt's line shows what would be. */
static int sim_patch_annotation(void *ctx, const struct sk_pod *pod, const char *key, const char *value, char **err)
{
	struct sim *s = ctx;
	(void)pod;
	if (!s->annotations && !(s->annotations = cJSON_CreateObject()))
		return kube_errf(err, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(s->annotations, key);
	if (!cJSON_AddStringToObject(s->annotations, key, value))
		return kube_errf(err, "out of memory");
	return 0;
}

/* env.api_patch: the storage objects of the cluster file (sim_volumes.c). */
static int sim_api_patch(void *ctx, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err)
{
	struct sim *s = ctx;
	return sk_sim_volumes_patch(s->volumes, path, patch, out, conflict, err);
}

/* env.api_get: metrics.k8s.io from the cluster file; nothing else exists offline. */
static int sim_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	return sk_sim_metrics_get(((struct sim *)ctx)->metrics, path, out, err);
}

/* ---------- rendering ---------- */

static void mark_attempted(struct sim *s, const struct sk_pod *pod)
{
	for (int i = 0; i < s->npending; i++)
		if (!strcmp(s->pending[i].pod->uid, pod->uid)) {
			s->pending[i].attempted = true;
			s->last_pod = s->pending[i].pod;
			return;
		}
}

static cJSON *outcome_json(const struct sk_outcome *o, char *const *vict, int nvict, const cJSON *annotations)
{
	char key[512];
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON *filter = cJSON_CreateObject(), *score = cJSON_CreateObject(), *victims = cJSON_CreateArray();
	bool ok = filter && score && victims;
	for (int i = 0; ok && i < nvict; i++)
		ok = cJSON_AddItemToArray(victims, cJSON_CreateString(vict[i]));
	ok = ok && cJSON_AddStringToObject(j, "pod", sk_pod_key(o->pod, key, sizeof key));
	ok = ok && cJSON_AddStringToObject(j, "profile", o->profile ? o->profile : "");
	ok = ok && cJSON_AddStringToObject(j, "result", sk_result_string(o->result));
	ok = ok && cJSON_AddStringToObject(j, "node", o->node ? o->node : "");
	ok = ok && cJSON_AddStringToObject(j, "message", o->message ? o->message : "");
	for (int i = 0; ok && i < o->nfilter; i++) {
		const struct sk_outcome_filter *f = &o->filter[i];
		cJSON *per = cJSON_GetObjectItemCaseSensitive(filter, f->node);
		if (!per)
			per = cJSON_AddObjectToObject(filter, f->node);
		char *msg = f->status ? sk_status_message(f->status) : NULL;
		ok = per && cJSON_AddStringToObject(per, f->plugin ? f->plugin : "", msg ? msg : "");
		free(msg);
	}
	if (ok && o->scores && o->score_nodes) {
		const struct sk_score_table *t = o->scores;
		for (int i = 0; ok && i < t->nnodes; i++) {
			cJSON *per = cJSON_AddObjectToObject(score, o->score_nodes[i]);
			ok = per != NULL;
			for (int p = 0; ok && p < t->nplugins; p++)
				ok = cJSON_AddItemToObject(per, t->plugin[p],
							   kube_json_create_int64(t->scores[(size_t)p * t->nnodes + i]));
			ok = ok && cJSON_AddItemToObject(per, "total", kube_json_create_int64(t->total[i]));
		}
	}
	if (ok) {
		cJSON_AddItemToObject(j, "filter", filter);
		cJSON_AddItemToObject(j, "score", score);
		filter = score = NULL;
		ok = cJSON_AddStringToObject(j, "nominatedNode", o->nominated_node ? o->nominated_node : "") != NULL;
	}
	if (ok) {
		cJSON_AddItemToObject(j, "victims", victims);
		victims = NULL;
	}
	/* only when a plugin annotated the pod, so lines of other attempts keep their shape */
	if (ok && annotations)
		ok = cJSON_AddItemToObject(j, "annotations", cJSON_Duplicate(annotations, 1));
	cJSON_Delete(filter);
	cJSON_Delete(score);
	cJSON_Delete(victims);
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static int imax(int a, int b) { return a > b ? a : b; }

/* One readable block per attempt: header, message, then one row per scored node (scores per
 * plugin with weights, total, the chosen node marked) and one per rejected node (plugin: reason). */
static void explain(struct sim *s, const struct sk_outcome *o)
{
	FILE *f = s->out;
	char key[512];
	fprintf(f, "Pod %s (profile %s): %s", sk_pod_key(o->pod, key, sizeof key), o->profile ? o->profile : "",
		sk_result_string(o->result));
	if (o->node)
		fprintf(f, " on %s", o->node);
	if (o->nominated_node && *o->nominated_node)
		fprintf(f, " (nominated node %s)", o->nominated_node);
	fputc('\n', f);
	if (o->message && *o->message)
		fprintf(f, "  %s\n", o->message);
	for (int i = 0; i < s->nvictims; i++)
		fprintf(f, "  preempted %s\n", s->victims[i]);
	const cJSON *an;
	cJSON_ArrayForEach(an, s->annotations)
		fprintf(f, "  annotated %s=%s\n", an->string, cJSON_IsString(an) ? an->valuestring : "");
	const struct sk_score_table *t = o->scores && o->score_nodes ? o->scores : NULL;
	int wnode = 4;
	for (int i = 0; t && i < t->nnodes; i++)
		wnode = imax(wnode, (int)strlen(o->score_nodes[i]));
	for (int i = 0; i < o->nfilter; i++)
		wnode = imax(wnode, (int)strlen(o->filter[i].node));
	if (t && t->nnodes > 0) {
		int *w = calloc((size_t)t->nplugins + 1, sizeof *w);
		if (!w) {
			s->write_error = ENOMEM;
			return;
		}
		char head[256];
		fprintf(f, "  %-*s  %-8s", wnode, "NODE", "RESULT");
		for (int p = 0; p < t->nplugins; p++) {
			snprintf(head, sizeof head, "%s(x%" PRId32 ")", t->plugin[p], t->weight[p]);
			w[p] = imax((int)strlen(head), 5);
			fprintf(f, "  %-*s", w[p], head);
		}
		fprintf(f, "  TOTAL\n");
		for (int i = 0; i < t->nnodes; i++) {
			bool chosen = o->node && !strcmp(o->node, o->score_nodes[i]);
			fprintf(f, "  %-*s  %-8s", wnode, o->score_nodes[i], chosen ? "chosen" : "feasible");
			for (int p = 0; p < t->nplugins; p++)
				fprintf(f, "  %-*" PRId64, w[p], t->scores[(size_t)p * t->nnodes + i]);
			fprintf(f, "  %" PRId64 "\n", t->total[i]);
		}
		free(w);
	} else if (o->node) {
		fprintf(f, "  %-*s  %-8s  (only feasible node: not scored)\n", wnode, o->node, "chosen");
	}
	if (o->nfilter > 0 && !(t && t->nnodes > 0) && !o->node)
		fprintf(f, "  %-*s  %s\n", wnode, "NODE", "REJECTED BY");
	for (int i = 0; i < o->nfilter; i++) {
		char *msg = o->filter[i].status ? sk_status_message(o->filter[i].status) : NULL;
		const char *pl = o->filter[i].plugin && *o->filter[i].plugin ? o->filter[i].plugin : "PreFilter";
		fprintf(f, "  %-*s  %s: %s\n", wnode, o->filter[i].node, pl, msg ? msg : "");
		free(msg);
	}
	fputc('\n', f);
}

static void sim_observe(void *ctx, const struct sk_outcome *o)
{
	struct sim *s = ctx;
	mark_attempted(s, o->pod);
	s->last_result = o->result;
	if (s->opts->explain) {
		explain(s, o);
		clear_victims(s);
		return;
	}
	cJSON *j = outcome_json(o, s->victims, s->nvictims, s->annotations);
	clear_victims(s);
	char *line = j ? kube_json_print(j) : NULL;
	if (!line)
		s->write_error = ENOMEM;
	else
		fprintf(s->out, "%s\n", line);
	free(line);
	cJSON_Delete(j);
}

/* A line for a pod that never reached an attempt (gated by PreEnqueue). */
static void report_never_attempted(struct sim *s, const struct sk_pod *pod, const char *profile)
{
	const char *msg = pod->nscheduling_gates > 0 ? "Scheduling is blocked due to non-empty scheduling gates"
						     : "the pod was never attempted";
	struct sk_outcome o = { .pod = pod, .profile = profile, .result = SK_RESULT_UNSCHEDULABLE, .message = msg };
	sim_observe(s, &o);
}

/* ---------- loading the cluster ---------- */

/* Flattens documents and `kind: List` items into one array of borrowed objects. */
static int collect(const cJSON *docs, const cJSON ***out, int *n, int *cap)
{
	const cJSON *d;
	cJSON_ArrayForEach(d, docs) {
		const char *kind = kube_obj_get_string(d, "kind");
		if (kind && !strcmp(kind, "List")) {
			const cJSON *items = cJSON_GetObjectItemCaseSensitive(d, "items");
			if (cJSON_IsArray(items) && collect(items, out, n, cap) != 0)
				return -1;
			continue;
		}
		if (*n == *cap) {
			int nc = *cap ? *cap * 2 : 64;
			const cJSON **p = realloc(*out, (size_t)nc * sizeof *p);
			if (!p)
				return -1;
			*out = p;
			*cap = nc;
		}
		(*out)[(*n)++] = d;
	}
	return 0;
}

static const struct sim_class *find_class(const struct sim_class *c, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (name ? !strcmp(c[i].name, name) : c[i].global_default)
			return &c[i];
	return NULL;
}

static bool pod_is_ours(struct sim *s, const char *scheduler_name)
{
	struct sk_framework *fw = sk_scheduler_framework(s->sched, scheduler_name);
	sk_framework_unref(fw);
	return fw != NULL;
}

/* Fills what the API server would have: namespace, uid, priority from the PriorityClass. Returns
 * NULL, or a message (static) when admission would refuse the pod. */
static const char *admit_pod(cJSON *pod, const struct sim_class *classes, int nclasses, char **uid_out)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	if (!cJSON_IsObject(meta)) {
		meta = cJSON_AddObjectToObject(pod, "metadata");
		if (!meta)
			return "out of memory";
	}
	if (!kube_meta_namespace(pod) && !cJSON_AddStringToObject(meta, "namespace", "default"))
		return "out of memory";
	if (!kube_meta_uid(pod)) {
		const char *name = kube_meta_name(pod);
		if (asprintf(uid_out, "%s/%s", kube_meta_namespace(pod), name ? name : "") < 0)
			return "out of memory";
		if (!cJSON_AddStringToObject(meta, "uid", *uid_out))
			return "out of memory";
	}
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	if (!cJSON_IsObject(spec) || cJSON_GetObjectItemCaseSensitive(spec, "priority"))
		return NULL;
	const char *pcn = kube_obj_get_string(spec, "priorityClassName");
	const struct sim_class *c = find_class(classes, nclasses, pcn && *pcn ? pcn : NULL);
	if (pcn && *pcn && !c)
		return "no PriorityClass with the pod's priorityClassName was found";
	if (!c)
		return NULL;
	if (!cJSON_AddItemToObject(spec, "priority", kube_json_create_int64(c->value)))
		return "out of memory";
	if (c->preemption_policy && !cJSON_GetObjectItemCaseSensitive(spec, "preemptionPolicy"))
		cJSON_AddStringToObject(spec, "preemptionPolicy", c->preemption_policy);
	return NULL;
}

static int add_pending(struct sim *s, struct sk_pod *pod)
{
	if (s->npending == s->cappending) {
		int nc = s->cappending ? s->cappending * 2 : 64;
		struct sim_pending *p = realloc(s->pending, (size_t)nc * sizeof *p);
		if (!p)
			return -1;
		s->pending = p;
		s->cappending = nc;
	}
	s->pending[s->npending++] = (struct sim_pending){ .pod = sk_pod_ref(pod) };
	return 0;
}

static int load(struct sim *s, const cJSON *const *objs, int n, char **err)
{
	/* PriorityClasses first: pods may precede their class in the file. */
	struct sim_class *classes = calloc((size_t)n + 1, sizeof *classes);
	int nclasses = 0, rc = 0;
	if (!classes)
		return kube_errf(err, "out of memory");
	for (int i = 0; i < n; i++) {
		const char *kind = kube_obj_get_string(objs[i], "kind");
		if (!kind || strcmp(kind, "PriorityClass"))
			continue;
		struct sim_class *c = &classes[nclasses];
		c->name = kube_meta_name(objs[i]);
		int64_t v = 0;
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(objs[i], "value");
		if (!c->name || !val || kube_json_get_int64(val, &v) != 0 || v > INT32_MAX || v < INT32_MIN) {
			rc = kube_errf(err, "object %d (PriorityClass %s): value: must be a 32-bit integer", i + 1,
				  c->name ? c->name : "<no name>");
			goto out;
		}
		c->value = v;
		c->global_default = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(objs[i], "globalDefault"));
		c->preemption_policy = kube_obj_get_string(objs[i], "preemptionPolicy");
		nclasses++;
	}
	/* Nodes, then pods, in document order. */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (int i = 0; i < n && rc == 0; i++) {
			const char *kind = kube_obj_get_string(objs[i], "kind");
			const char *name = kube_meta_name(objs[i]);
			char *derr = NULL;
			if (!kind) {
				if (pass == 0)
					rc = kube_errf(err, "object %d: kind: Required value", i + 1);
				continue;
			}
			if (pass == 0 && !strcmp(kind, "Node")) {
				struct sk_node *node = sk_node_decode(objs[i], &derr);
				if (!node) {
					rc = kube_errf(err, "object %d (Node %s): %s", i + 1, name ? name : "<no name>",
						  derr ? derr : "cannot decode");
				} else {
					struct sk_node_info *dup = sk_cache_node_info(s->cache, node->name);
					if (dup && dup->node)
						rc = kube_errf(err, "object %d (Node %s): duplicate node", i + 1, node->name);
					sk_node_info_free(dup);
					if (rc == 0 && sk_cache_add_node(s->cache, node, &derr) != 0)
						rc = kube_errf(err, "object %d (Node %s): %s", i + 1, node->name,
							  derr ? derr : "cannot add");
					sk_node_unref(node);
				}
			} else if (pass == 1 && !strcmp(kind, "Pod")) {
				cJSON *copy = cJSON_Duplicate(objs[i], true);
				char *uid = NULL;
				const char *refused = copy ? admit_pod(copy, classes, nclasses, &uid) : "out of memory";
				struct sk_pod *pod = copy ? sk_pod_decode(copy, &derr) : NULL;
				if (!pod) {
					rc = kube_errf(err, "object %d (Pod %s): %s", i + 1, name ? name : "<no name>",
						  derr ? derr : "cannot decode");
				} else if (pod->phase && (!strcmp(pod->phase, "Succeeded") || !strcmp(pod->phase, "Failed"))) {
					/* terminated pods hold no resources */
				} else if (sk_cache_get_pod_by_key(s->cache, pod->ns, pod->name)) {
					struct sk_pod *dup = sk_cache_get_pod_by_key(s->cache, pod->ns, pod->name);
					sk_pod_unref(dup);
					rc = kube_errf(err, "object %d (Pod %s/%s): duplicate pod", i + 1, pod->ns, pod->name);
				} else if (pod->node_name) {
					if (sk_cache_add_pod(s->cache, pod, &derr) != 0)
						rc = kube_errf(err, "object %d (Pod %s/%s): %s", i + 1, pod->ns, pod->name,
							  derr ? derr : "cannot add");
				} else if (pod_is_ours(s, pod->scheduler_name)) {
					for (int k = 0; k < s->npending && rc == 0; k++)
						if (!strcmp(s->pending[k].pod->uid, pod->uid))
							rc = kube_errf(err, "object %d (Pod %s/%s): duplicate pod (uid %s)", i + 1,
								  pod->ns, pod->name, pod->uid);
					if (rc == 0 && refused) {
						/* Admission would have refused it: one Error line, never queued. */
						char *msg = NULL;
						const char *pcn = kube_obj_get_string(copy, "spec.priorityClassName");
						if (asprintf(&msg, "no PriorityClass with name %s was found", pcn ? pcn : "")
						    < 0)
							msg = NULL;
						struct sk_outcome o = { .pod = pod, .profile = pod->scheduler_name,
									.result = SK_RESULT_ERROR,
									.message = msg ? msg : refused };
						sim_observe(s, &o);
						free(msg);
					} else if (rc == 0) {
						if (add_pending(s, pod) != 0)
							rc = kube_errf(err, "out of memory");
						else
							sk_nominator_add(s->nom, pod, NULL);
					}
				}
				sk_pod_unref(pod);
				cJSON_Delete(copy);
				free(uid);
			} else if (pass == 0 && !strcmp(kind, "PodDisruptionBudget")) {
				const cJSON **np = realloc(s->pdbs, (size_t)(s->npdbs + 1) * sizeof *np);
				if (!np) {
					rc = kube_errf(err, "out of memory");
				} else {
					s->pdbs = np;
					s->pdbs[s->npdbs++] = objs[i];
				}
			} else if (pass == 0 && sk_sim_is_storage_kind(kind)) {
				char *verr = NULL;
				if (sk_sim_volumes_add(s->volumes, objs[i], &verr) != 0)
					rc = kube_errf(err, "object %d (%s %s): %s", i + 1, kind, name ? name : "",
						       verr ? verr : "out of memory");
				free(verr);
			} else if (pass == 0 && sk_lister_kind_of(kube_obj_get_string(objs[i], "apiVersion"), kind) >= 0) {
				const cJSON **nw = realloc(s->workloads, (size_t)(s->nworkloads + 1) * sizeof *nw);
				if (!nw) {
					rc = kube_errf(err, "out of memory");
				} else {
					s->workloads = nw;
					s->workloads[s->nworkloads++] = objs[i];
				}
			} else if (pass == 0 && strcmp(kind, "Node") && strcmp(kind, "Pod") && strcmp(kind, "PriorityClass") &&
				   strcmp(kind, "NodeMetrics") && strcmp(kind, "PodMetrics")) {
				klog_warning("simulate: ignoring object", " index=%d kind=%s name=%s", i + 1, kind,
					     name ? name : "");
			}
			free(derr);
		}
	}
out:
	free(classes);
	return rc;
}

/* ---------- the run ---------- */

static void sim_free(struct sim *s)
{
	sk_scheduler_free(s->sched);
	sk_pool_free(s->pool);
	for (int i = 0; i < s->npending; i++)
		sk_pod_unref(s->pending[i].pod);
	free(s->pending);
	clear_victims(s);
	free(s->victims);
	free(s->pdbs);
	sk_sim_volumes_free(s->volumes);
	free(s->workloads);
	sk_nominator_free(s->nom);
	sk_snapshot_free(s->snap);
	sk_cache_free(s->cache);
}

int sk_simulate(const struct sk_config *cfg, const char *cluster, size_t len, const struct sk_simulate_opts *opts,
		FILE *out, char **err)
{
	if (err)
		*err = NULL;
	char *perr = NULL;
	cJSON *docs = kube_yaml_parse(cluster, len, &perr);
	if (!docs) {
		kube_errf(err, "cluster: %s", perr ? perr : "cannot parse");
		free(perr);
		return -1;
	}
	struct sim s = { .cfg = cfg, .opts = opts, .out = out };
	atomic_init(&s.clock_ns, 1000000000LL);
	const cJSON **objs = NULL;
	int nobjs = 0, capobjs = 0, rc = -1;
	struct sk_framework **fws = NULL;
	s.cache = sk_cache_new(0);
	s.snap = sk_snapshot_new();
	s.nom = sk_nominator_new();
	s.volumes = sk_sim_volumes_new();
	if (!s.cache || !s.snap || !s.nom || !s.volumes || collect(docs, &objs, &nobjs, &capobjs) != 0) {
		kube_errf(err, "out of memory");
		goto done;
	}
	/* Before the frameworks: a plugin may read metrics from its init. */
	s.metrics = sk_sim_metrics_new(objs, nobjs, (int64_t)time(NULL), err);
	if (!s.metrics)
		goto done;
	s.pool = sk_pool_new(cfg->parallelism, &perr);
	if (!s.pool) {
		kube_errf(err, "worker pool: %s", perr ? perr : "cannot start");
		goto done;
	}
	struct sk_sched_env env = {
		.ctx = &s,
		.update_snapshot = sim_update_snapshot,
		.assume = sim_assume,
		.forget = sim_forget,
		.finish_binding = sim_finish_binding,
		.is_assumed = sim_is_assumed,
		.observe = sim_observe,
		.want_details = true,
		.seed = opts->seed,
		.binder_threads = 0,
		.nominator = s.nom,
		.queue = {
			.initial_backoff_ns = cfg->pod_initial_backoff_seconds * 1000000000LL,
			.max_backoff_ns = cfg->pod_max_backoff_seconds * 1000000000LL,
		},
	};
	s.sched = sk_scheduler_new(&env, &perr);
	if (!s.sched) {
		kube_errf(err, "scheduler: %s", perr ? perr : "cannot create");
		goto done;
	}
	struct sk_framework_env fenv = {
		.ctx = &s, .now_ns = sim_now, .pool = s.pool, .nominator = s.nom,
		.snapshot = sim_fw_snapshot, .bind = sim_bind,
		.list_pdbs = sim_list_pdbs, .preempt_victim = sim_preempt_victim, .feature_enabled = sim_feature_enabled,
		.patch_pod_annotation = sim_patch_annotation, .api_get = sim_api_get,
		.volumes = s.volumes ? sk_sim_volumes_store(s.volumes) : NULL, .api_patch = sim_api_patch,
		.listers = &s.listers.listers,
	};
	sk_object_listers_init(&s.listers, NULL, 0);
	fws = calloc((size_t)cfg->nprofiles + 1, sizeof *fws);
	if (!fws) {
		kube_errf(err, "out of memory");
		goto done;
	}
	for (int i = 0; i < cfg->nprofiles; i++) {
		fws[i] = sk_framework_new(cfg, &cfg->profiles[i], &fenv, &perr);
		if (!fws[i]) {
			kube_errf(err, "profile %s: %s", cfg->profiles[i].scheduler_name, perr ? perr : "cannot build");
			goto done;
		}
	}
	if (sk_scheduler_set_frameworks(s.sched, fws, cfg->nprofiles) != 0) {
		kube_errf(err, "out of memory");
		goto done;
	}
	if (load(&s, objs, nobjs, err) != 0)
		goto done;
	sk_object_listers_init(&s.listers, s.workloads, s.nworkloads); /* the loaded objects, borrowed */

	struct sk_queue *q = sk_scheduler_queue(s.sched);
	for (int i = 0; i < s.npending; i++)
		if (sk_queue_add(q, s.pending[i].pod) != 0) {
			kube_errf(err, "out of memory");
			goto done;
		}
	/* Attempts until nothing is poppable. Backoff never delays a pod whose retry an event asked
	 * for: when only backing-off pods remain, the fake clock jumps past their expiry. */
	long budget = 20L * (s.npending + 1) + 1000; /* guards against a requeue loop in a plugin */
	for (;;) {
		s.last_pod = NULL;
		int r = sk_schedule_one(s.sched, false);
		if (r < 0)
			break;
		if (r == 0) {
			struct sk_queue_counts c;
			sk_queue_counts(q, &c);
			if (c.backoff == 0 && c.active == 0)
				break;
			atomic_fetch_add(&s.clock_ns, (cfg->pod_max_backoff_seconds + 2) * 1000000000LL);
			sk_queue_flush_backoff(q, atomic_load(&s.clock_ns));
			sk_queue_counts(q, &c);
			if (c.active == 0)
				break;
			continue;
		}
		if (--budget <= 0) {
			klog_warning("simulate: attempt budget exhausted; stopping");
			break;
		}
		sk_scheduler_wait_bindings(s.sched);
		/* An Error attempt is final here: the pod is not retried. */
		if (s.last_pod && s.last_result == SK_RESULT_ERROR && sk_queue_where_is(q, s.last_pod->uid) != SK_Q_NONE)
			sk_queue_delete(q, s.last_pod);
	}
	for (int i = 0; i < s.npending; i++)
		if (!s.pending[i].attempted)
			report_never_attempted(&s, s.pending[i].pod, s.pending[i].pod->scheduler_name);
	fflush(out);
	if (s.write_error)
		kube_errf(err, "out of memory while writing the output");
	else
		rc = 0;
done:
	free(perr);
	sim_free(&s);
	if (fws)
		for (int i = 0; i < cfg->nprofiles; i++)
			sk_framework_unref(fws[i]);
	free(fws);
	/* After the last framework: a plugin's refresh thread may GET metrics until its fini. */
	sk_sim_metrics_free(s.metrics);
	free(objs);
	cJSON_Delete(docs);
	return rc;
}

/* ---------- the subcommand ---------- */

static char *read_file(const char *path, size_t *len, char **err)
{
	int e;
	char *buf = kube_read_file(path, 0, len, &e);
	if (!buf)
		kube_errf(err, "%s: %s", path, strerror(e));
	return buf;
}

static void sim_usage(FILE *f)
{
	fprintf(f, "Usage: schedkit-scheduler simulate --config FILE --cluster FILE [--explain] [--seed N]\n"
		   "                                   [--plugin-dir DIR]... [--policy-config-file FILE]\n"
		   "  --config FILE    KubeSchedulerConfiguration (YAML or JSON); default profile when omitted\n"
		   "  --cluster FILE   multi-document YAML of Nodes, Pods and PriorityClasses ('-' = stdin)\n"
		   "  --explain        a readable table per attempt instead of JSON lines\n"
		   "  --seed N         seed of the tie-break among equal top scores (default 1)\n"
		   "  --plugin-dir DIR load every *.so plugin module of DIR (repeatable)\n"
		   "  --policy-config-file FILE  a legacy Policy, translated into the one profile\n");
}

/* Returns the value of --name / --name=value at argv[*i] (advancing *i), NULL if argv[*i] is
 * not that flag; sets *missing when the value is absent. */
static const char *flag_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

int sk_simulate_main(int argc, char **argv, FILE *out, FILE *errout)
{
	signal(SIGPIPE, SIG_IGN); /* an extender closing its connection must not kill the run */
	const char *config_path = NULL, *cluster_path = NULL, *policy_path = NULL;
	struct sk_simulate_opts opts = { .seed = 1 };
	const char *dirs[64];
	int ndirs = 0;
	for (int i = 1; i < argc; i++) {
		bool missing = false;
		const char *v;
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			sim_usage(out);
			return 0;
		} else if (!strcmp(a, "--explain") || !strcmp(a, "--explain=true")) {
			opts.explain = true;
		} else if (!strcmp(a, "--explain=false")) {
			opts.explain = false;
		} else if ((v = flag_value(argc, argv, &i, "--config", &missing)) || missing) {
			config_path = v;
		} else if ((v = flag_value(argc, argv, &i, "--policy-config-file", &missing)) || missing) {
			policy_path = v;
		} else if ((v = flag_value(argc, argv, &i, "--cluster", &missing)) || missing) {
			cluster_path = v;
		} else if ((v = flag_value(argc, argv, &i, "--plugin-dir", &missing)) || missing) {
			if (v && ndirs == (int)(sizeof dirs / sizeof dirs[0])) {
				fprintf(errout, "error: at most %d --plugin-dir flags\n", ndirs);
				return 2;
			}
			if (v)
				dirs[ndirs++] = v;
		} else if ((v = flag_value(argc, argv, &i, "--seed", &missing)) || missing) {
			char *end = NULL;
			errno = 0;
			unsigned long long x = v ? strtoull(v, &end, 10) : 0;
			if (!v || !*v || *end || errno || *v == '-') {
				fprintf(errout, "error: invalid argument \"%s\" for \"--seed\" flag: want an unsigned integer\n",
					v ? v : "");
				return 2;
			}
			opts.seed = x;
		} else {
			fprintf(errout, "error: unknown flag: %s\n", a);
			sim_usage(errout);
			return 2;
		}
		if (missing) {
			fprintf(errout, "error: flag needs an argument: %s\n", a);
			return 2;
		}
	}
	if (!cluster_path) {
		fprintf(errout, "error: --cluster is required\n");
		sim_usage(errout);
		return 2;
	}
	struct sk_module_set *mods = NULL;
	char *lerr = NULL;
	if (sk_module_set_load(dirs, ndirs, &mods, &lerr) != 0) {
		fprintf(errout, "error: %s\n", lerr ? lerr : "loading plugins failed");
		free(lerr);
		return 1;
	}
	struct sk_errors errs = { 0 };
	struct sk_config *cfg;
	struct sk_config_opts co = { .modules = mods, .policy_path = policy_path };
	if (config_path) {
		cfg = sk_config_load_file_opts(config_path, &co, &errs);
	} else {
		static const char def[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
		cfg = sk_config_load_opts(def, sizeof def - 1, &co, &errs);
	}
	sk_module_set_unref(mods); /* the config holds it */
	if (!cfg) {
		for (int i = 0; i < errs.n; i++)
			fprintf(errout, "error: %s\n", errs.msgs[i]);
		if (errs.n == 0)
			fprintf(errout, "error: %s: cannot load the configuration\n", config_path ? config_path : "default");
		sk_errors_free(&errs);
		return 1;
	}
	sk_errors_free(&errs);
	char *err = NULL;
	size_t len = 0;
	char *text = NULL;
	if (!strcmp(cluster_path, "-")) {
		text = read_file("/dev/stdin", &len, &err);
	} else {
		text = read_file(cluster_path, &len, &err);
	}
	int rc = 1;
	if (text && sk_simulate(cfg, text, len, &opts, out, &err) == 0)
		rc = 0;
	if (rc)
		fprintf(errout, "error: %s%s%s\n", text ? cluster_path : "", text ? ": " : "", err ? err : "failed");
	free(err);
	free(text);
	sk_config_free(cfg);
	return rc;
}
