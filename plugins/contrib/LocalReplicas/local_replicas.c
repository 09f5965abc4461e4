/* LocalReplicas (PreFilter, Filter, EnqueueExtensions) and LocalReplicasArgs: at most
 * maxReplicasPerNode pods of one controller (ReplicaSet, StatefulSet, ReplicationController, Job:
 * the controller ownerReference's uid) on a node, assumed pods included. A contrib module
 * (localreplicas.so) built with the SDK alone; semantics in docs/plugins.md ("LocalReplicas"). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <schedkit/args.h>
#include <schedkit/plugin.h>
#include <schedkit/module.h>

#define LR_NAME "LocalReplicas"
#define LR_ARGS_KIND "LocalReplicasArgs"
#define LR_DEFAULT_MAX 1
#define LR_REASON "node(s) already run the maximum number of replicas of this workload"

struct lr_args {
	int64_t max_per_node; /* >= 1 */
};

/* The controllers whose replicas are interchangeable copies, the ones worth spreading. A DaemonSet
 * already runs one pod per node, and other owners (operators' custom kinds) carry no such promise,
 * so their pods are left alone. */
static const char *const lr_kinds[] = { "ReplicaSet", "StatefulSet", "ReplicationController", "Job", NULL };

/* ---------- args ---------- */

static void lr_args_free(void *p)
{
	free(p);
}

static int lr_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "maxReplicasPerNode", NULL };
	struct lr_args *a = calloc(1, sizeof(*a));
	if (!a) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	a->max_per_node = LR_DEFAULT_MAX;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, LR_ARGS_KIND, path, e) < 0 ||
	    (json && sk_json_int(json, "maxReplicasPerNode", path, INT32_MIN, INT32_MAX, &a->max_per_node, NULL, e) < 0))
		goto fail;
	if (a->max_per_node < 1) {
		char *mpath = sk_path_child(path, "maxReplicasPerNode");
		sk_err_invalid_int(e, mpath ? mpath : path, a->max_per_node, "must be greater than or equal to 1");
		free(mpath);
		goto fail;
	}
	*out = a;
	return 0;
fail:
	free(a);
	return -1;
}

static cJSON *lr_args_encode(const void *p)
{
	const struct lr_args *a = p;
	cJSON *o = sk_args_json_new(LR_ARGS_KIND);
	cJSON *n = o ? sk_json_create_int64(a ? a->max_per_node : LR_DEFAULT_MAX) : NULL;
	if (!n || !cJSON_AddItemToObject(o, "maxReplicasPerNode", n)) {
		cJSON_Delete(n);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- instance ---------- */

static int lr_init(struct sk_plugin *self, const void *args, char **err)
{
	if (!args) {
		*err = strdup(LR_NAME ": no args (" LR_ARGS_KIND " expected)");
		return -1;
	}
	self->priv = (void *)args; /* the args outlive every framework built from their config */
	return 0;
}

/* The controller uid of a pod this plugin limits, or NULL (no controller, or another kind).
 * Interned, so it lives for the process. */
static const char *lr_owner(const struct sk_pod *pod)
{
	if (!pod->owner_kind || !pod->owner_uid || !*pod->owner_uid)
		return NULL;
	for (int i = 0; lr_kinds[i]; i++)
		if (!strcmp(pod->owner_kind, lr_kinds[i]))
			return pod->owner_uid;
	return NULL;
}

static bool lr_same_owner(const struct sk_pod *p, const char *uid)
{
	const char *o = lr_owner(p);
	return o && (o == uid || !strcmp(o, uid));
}

/* The CycleState value is the pod's owner uid itself (interned: nothing to free, clones share it). */
static const struct sk_state_ops lr_state_ops = { .free = NULL, .clone = NULL };

/* Pods without a limited controller skip Filter: most pods of a cluster cost nothing. */
static struct sk_status lr_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	(void)result;
	const char *uid = lr_owner(pod);
	if (!uid)
		return sk_status(SK_SKIP, NULL);
	sk_cycle_state_put(cs, self->slot, (void *)uid, &lr_state_ops);
	return sk_ok();
}

/* Counts from the node info itself rather than from PreFilter state, so the dry runs (nominated
 * pods added to a clone, preemption victims removed from one) are exact without AddPod/RemovePod.
 * Terminating replicas still run, so they count. */
static struct sk_status lr_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	const struct lr_args *a = self->priv;
	const char *uid = sk_cycle_state_get(cs, self->slot);
	if (!uid)
		return sk_status(SK_ERROR, "reading \"PreFilter" LR_NAME "\" from cycleState: not found");
	int64_t n = 0;
	for (int i = 0; i < ni->npods; i++) {
		const struct sk_pod *p = ni->pods[i].pod;
		if (strcmp(p->uid, pod->uid) != 0 && lr_same_owner(p, uid))
			n++;
	}
	if (n < a->max_per_node)
		return sk_ok();
	/* Evicting a replica of the same workload (the same priority) to place another helps nobody,
	 * so preemption is not tried on this node. */
	return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, LR_REASON);
}

/* ---------- queueing hints ---------- */

/* A replica deleted (or finished) on some node frees a place for the pods of its controller only. */
static enum sk_hint lr_hint_pod_delete(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				       const void *new_obj)
{
	(void)self;
	(void)new_obj;
	const struct sk_pod *gone = old_obj;
	const char *uid = lr_owner(pod);
	return gone && uid && lr_same_owner(gone, uid) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int lr_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 2)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" },
		.hint = lr_hint_pod_delete,
	};
	/* A new node has no replica yet: every pod this plugin rejected may fit there. */
	out[1] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" },
		.hint = NULL,
	};
	return 2;
}

static const struct sk_plugin_desc local_replicas_plugin = {
	SK_PLUGIN_HEADER,
	.name = LR_NAME,
	.args_kind = LR_ARGS_KIND,
	.args_decode = lr_args_decode,
	.args_encode = lr_args_encode,
	.args_free = lr_args_free,
	.init = lr_init,
	.pre_filter = lr_pre_filter,
	.filter = lr_filter,
	.events_to_register = lr_events,
};

SK_MODULE("localreplicas", &local_replicas_plugin);
