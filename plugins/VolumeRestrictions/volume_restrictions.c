/* VolumeRestrictions (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go,
 * v1.34): PreFilter (with AddPod/RemovePod), Filter, EnqueueExtensions.
 *
 * - In-tree disk conflicts, per node: the same GCE PD (unless both read-only), AWS EBS volume ID,
 *   iSCSI IQN (unless both read-only) or RBD image (a shared monitor, same pool and image, unless
 *   both read-only) already used by a pod on the node: Unschedulable "node(s) had no available disk".
 * - ReadWriteOncePod: PreFilter counts the pod's RWOP claims that some pod of the snapshot already
 *   uses (any node); a count > 0 rejects every node with plain Unschedulable, so preemption may
 *   evict the holder: the dry run's RemovePod takes the victim's uses off the count.
 * - A claim the pod names that does not exist: PreFilter UU with the lister's text. */
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"
#include "schedkit/volume.h"

#define REASON_DISK_CONFLICT "node(s) had no available disk"
#define REASON_RWOP_CONFLICT "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

/* CycleState: the pod's RWOP claim names (in its namespace) and how many uses by other pods. */
struct vr_state {
	int nclaims;
	const char **claims;      /* interned; owned array */
	int conflicting;          /* conflictingPVCRefCount */
};

static void vr_state_free(void *p)
{
	struct vr_state *s = p;
	if (s)
		free(s->claims);
	free(s);
}

static void *vr_state_clone(const void *p)
{
	const struct vr_state *s = p;
	struct vr_state *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	*c = *s;
	c->claims = s->nclaims ? malloc(sizeof(char *) * (size_t)s->nclaims) : NULL;
	if (s->nclaims && !c->claims) {
		free(c);
		return NULL;
	}
	if (s->nclaims)
		memcpy(c->claims, s->claims, sizeof(char *) * (size_t)s->nclaims);
	return c;
}

static const struct sk_state_ops vr_ops = { vr_state_free, vr_state_clone };

static bool needs_restrictions_check(const struct sk_pod_volume *v)
{
	return v->source == SK_VOL_GCE_PD || v->source == SK_VOL_AWS_EBS || v->source == SK_VOL_RBD ||
	       v->source == SK_VOL_ISCSI;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool have_overlap(const struct sk_pod_volume *a, const struct sk_pod_volume *b)
{
	for (int i = 0; i < a->nmonitors; i++)
		for (int j = 0; j < b->nmonitors; j++)
			if (str_eq(a->monitors[i], b->monitors[j]))
				return true;
	return false;
}

/* isVolumeConflict: volume v of the incoming pod against every volume of an existing pod. */
static bool is_volume_conflict(const struct sk_pod_volume *v, const struct sk_pod *existing)
{
	for (int i = 0; i < existing->nvolumes; i++) {
		const struct sk_pod_volume *e = &existing->volumes[i];
		if (e->source != v->source)
			continue;
		bool both_ro = v->read_only && e->read_only;
		switch (v->source) {
		case SK_VOL_GCE_PD:
		case SK_VOL_ISCSI:
			if (str_eq(v->id, e->id) && !both_ro)
				return true;
			break;
		case SK_VOL_AWS_EBS:
			if (str_eq(v->id, e->id))
				return true;
			break;
		case SK_VOL_RBD:
			if (have_overlap(v, e) && str_eq(v->pool, e->pool) && str_eq(v->id, e->id) && !both_ro)
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

/* satisfyVolumeConflicts */
static bool satisfy_volume_conflicts(const struct sk_pod *pod, const struct sk_node_info *ni)
{
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (!needs_restrictions_check(v))
			continue;
		for (int k = 0; k < ni->npods; k++)
			if (is_volume_conflict(v, ni->pods[k].pod))
				return false;
	}
	return true;
}

static bool has_claim(const struct vr_state *s, const char *claim)
{
	for (int i = 0; i < s->nclaims; i++)
		if (str_eq(s->claims[i], claim))
			return true;
	return false;
}

/* conflictingPVCRefCountForPod: uses of our RWOP claims by pod (persistentVolumeClaim volumes). */
static int conflicts_of(const struct vr_state *s, const struct sk_pod *pod, const char *ns)
{
	if (!str_eq(pod->ns, ns))
		return 0;
	int n = 0;
	for (int i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SK_VOL_PVC && has_claim(s, pod->volumes[i].claim))
			n++;
	return n;
}

/* IsPVCUsedByPods over the snapshot: any pod (bound or assumed) naming ns/claim through a
 * persistentVolumeClaim or generic ephemeral volume (NodeInfo.PVCRefCounts). */
static bool pvc_used_by_pods(const struct sk_snapshot *snap, const char *ns, const char *claim)
{
	for (int n = 0; snap && n < snap->nnodes; n++) {
		const struct sk_node_info *ni = snap->nodes[n];
		for (int k = 0; k < ni->npods; k++) {
			const struct sk_pod *p = ni->pods[k].pod;
			if (!str_eq(p->ns, ns))
				continue;
			for (int i = 0; i < p->npvcs; i++)
				if (str_eq(p->pvc_names[i], claim))
					return true;
		}
	}
	return false;
}

static struct sk_status vr_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	(void)result;
	bool needs_check = false;
	for (int i = 0; i < pod->nvolumes && !needs_check; i++)
		needs_check = needs_restrictions_check(&pod->volumes[i]);
	struct vr_state *s = calloc(1, sizeof *s);
	if (!s || (pod->nvolumes && !(s->claims = calloc((size_t)pod->nvolumes, sizeof(char *))))) {
		vr_state_free(s);
		return sk_status(SK_ERROR, "out of memory");
	}
	/* readWriteOncePodPVCsForPod */
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC)
			continue;
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		if (!pvc) {
			vr_state_free(s);
			return sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"%s\" not found",
					  v->claim ? v->claim : "");
		}
		if ((pvc->access_modes & SK_ACCESS_RWOP) && !has_claim(s, v->claim))
			s->claims[s->nclaims++] = v->claim;
		sk_vobj_unref(pvc);
	}
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	for (int i = 0; i < s->nclaims; i++)
		if (pvc_used_by_pods(snap, pod->ns, s->claims[i]))
			s->conflicting++;
	if (!needs_check && s->conflicting == 0) {
		vr_state_free(s);
		return sk_status(SK_SKIP, NULL);
	}
	sk_cycle_state_put(cs, self->slot, s, &vr_ops);
	return sk_ok();
}

static struct sk_status vr_update(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_pod *other, int sign)
{
	struct vr_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_statusf(SK_ERROR, "error reading \"PreFilter%s\" from cycleState: not found", self->desc->name);
	s->conflicting += sign * conflicts_of(s, other, pod->ns);
	return sk_ok();
}

static struct sk_status vr_add_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_pod *to_add, const struct sk_node_info *ni)
{
	(void)ni;
	return vr_update(self, cs, pod, to_add, 1);
}

static struct sk_status vr_remove_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_pod *to_remove, const struct sk_node_info *ni)
{
	(void)ni;
	return vr_update(self, cs, pod, to_remove, -1);
}

static struct sk_status vr_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	if (!satisfy_volume_conflicts(pod, ni))
		return sk_status(SK_UNSCHEDULABLE, REASON_DISK_CONFLICT);
	const struct vr_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_statusf(SK_ERROR, "error reading \"PreFilter%s\" from cycleState: not found", self->desc->name);
	if (s->conflicting > 0)
		return sk_status(SK_UNSCHEDULABLE, REASON_RWOP_CONFLICT);
	return sk_ok();
}

/* isSchedulableAfterPodDeleted: the deleted pod held a disk the pod conflicts with, or names one of
 * the pod's claims (the access mode is not looked up, as upstream). */
static enum sk_hint vr_hint_pod_deleted(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					const void *new_obj)
{
	(void)self;
	(void)new_obj;
	const struct sk_pod *deleted = old_obj;
	if (!deleted)
		return SK_QUEUE;
	if (!str_eq(deleted->ns, pod->ns))
		return SK_QUEUE_SKIP;
	for (int i = 0; i < pod->nvolumes; i++)
		if (needs_restrictions_check(&pod->volumes[i]) && is_volume_conflict(&pod->volumes[i], deleted))
			return SK_QUEUE;
	for (int i = 0; i < pod->nvolumes; i++) {
		if (pod->volumes[i].source != SK_VOL_PVC)
			continue;
		for (int k = 0; k < deleted->nvolumes; k++)
			if (deleted->volumes[k].source == SK_VOL_PVC && str_eq(deleted->volumes[k].claim, pod->volumes[i].claim))
				return SK_QUEUE;
	}
	return SK_QUEUE_SKIP;
}

/* isSchedulableAfterPersistentVolumeClaimAdded: the new claim is one the pod names. */
static enum sk_hint vr_hint_pvc_added(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				      const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_pvc *pvc = new_obj;
	if (!pvc)
		return SK_QUEUE;
	if (!str_eq(pvc->meta.ns, pod->ns))
		return SK_QUEUE_SKIP;
	for (int i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SK_VOL_PVC && str_eq(pod->volumes[i].claim, pvc->meta.name))
			return SK_QUEUE;
	return SK_QUEUE_SKIP;
}

static int vr_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	const struct sk_event_registration regs[] = {
		{ { SK_EV_POD, SK_ACT_DELETE, "PodDelete" }, vr_hint_pod_deleted },
		/* every new node may make the pod schedulable: no hint, as upstream */
		{ { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" }, NULL },
		{ { SK_EV_PVC, SK_ACT_ADD, "PersistentVolumeClaimAdd" }, vr_hint_pvc_added },
	};
	int n = 0;
	for (size_t i = 0; i < sizeof regs / sizeof regs[0] && n < max; i++)
		out[n++] = regs[i];
	return n;
}

const struct sk_plugin_desc sk_plugin_volume_restrictions = {
	SK_PLUGIN_HEADER,
	.name = "VolumeRestrictions",
	.pre_filter = vr_pre_filter,
	.pre_filter_add_pod = vr_add_pod,
	.pre_filter_remove_pod = vr_remove_pod,
	.filter = vr_filter,
	.events_to_register = vr_events,
};
