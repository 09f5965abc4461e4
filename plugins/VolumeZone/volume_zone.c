/* VolumeZone (pkg/scheduler/framework/plugins/volumezone/volume_zone.go, v1.34): PreFilter,
 * Filter, EnqueueExtensions. The zone and region labels of the PVs bound to the pod's claims
 * (topology.kubernetes.io/zone|region and the failure-domain.beta labels; a value may list several
 * zones joined by "__") must match the node's labels; a node with none of these labels takes
 * any pod. Unbound claims of a WaitForFirstConsumer class are skipped (VolumeBinding decides). */
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"
#include "schedkit/volume.h"

#define REASON_CONFLICT "node(s) had no available volume zone"

static const char *const topology_labels[] = {
	"failure-domain.beta.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region",
	"topology.kubernetes.io/zone",
	"topology.kubernetes.io/region",
};
#define NTOPOLOGY 4

/* One topology label of one PV: the label key and its value ("z1__z2" lists several zones). */
struct pv_topology {
	const char *key;
	const char *value;
};

struct vz_state {
	int n, cap;
	struct pv_topology *items;
};

static void vz_state_free(void *p)
{
	struct vz_state *s = p;
	if (s)
		free(s->items);
	free(s);
}

static const struct sk_state_ops vz_ops = { vz_state_free, NULL };

static const char *translate_to_ga(const char *key)
{
	if (strcmp(key, "failure-domain.beta.kubernetes.io/region") == 0)
		return "topology.kubernetes.io/region";
	if (strcmp(key, "failure-domain.beta.kubernetes.io/zone") == 0)
		return "topology.kubernetes.io/zone";
	return key;
}

/* LabelZonesToSet: "a__b" -> {a, b}, spaces trimmed; an empty element makes the label invalid. */
static bool zones_valid(const char *value)
{
	const char *p = value;
	for (;;) {
		const char *end = strstr(p, "__");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		size_t a = 0, b = len;
		while (a < b && p[a] == ' ')
			a++;
		while (b > a && p[b - 1] == ' ')
			b--;
		if (a == b)
			return false;
		if (!end)
			return true;
		p = end + 2;
	}
}

static bool zones_have(const char *value, const char *v)
{
	const char *p = value;
	size_t vl = strlen(v);
	for (;;) {
		const char *end = strstr(p, "__");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		size_t a = 0, b = len;
		while (a < b && p[a] == ' ')
			a++;
		while (b > a && p[b - 1] == ' ')
			b--;
		if (b - a == vl && strncmp(p + a, v, vl) == 0)
			return true;
		if (!end)
			return false;
		p = end + 2;
	}
}

static int add_topologies(struct vz_state *s, const struct sk_pv *pv)
{
	for (int i = 0; i < NTOPOLOGY; i++) {
		const char *v = sk_labels_get(&pv->labels, topology_labels[i]);
		if (!v || !zones_valid(v))
			continue;
		if (s->n == s->cap) {
			int nc = s->cap ? s->cap * 2 : 4;
			struct pv_topology *ni = realloc(s->items, sizeof *ni * (size_t)nc);
			if (!ni)
				return -1;
			s->items = ni;
			s->cap = nc;
		}
		s->items[s->n++] = (struct pv_topology){ topology_labels[i], v };
	}
	return 0;
}

/* getPVbyPod: the topologies of the PVs of the pod's persistentVolumeClaim volumes. */
static struct sk_status get_pv_by_pod(struct sk_plugin *self, const struct sk_pod *pod, struct vz_state *s)
{
	for (int i = 0; i < pod->nvolumes; i++) {
		const struct sk_pod_volume *v = &pod->volumes[i];
		if (v->source != SK_VOL_PVC)
			continue;
		if (!v->claim || !*v->claim)
			return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name");
		struct sk_pvc *pvc = sk_handle_get_pvc(self->handle, pod->ns, v->claim);
		if (!pvc)
			return sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"%s\" not found", v->claim);
		const char *pv_name = pvc->volume_name;
		if (!pv_name) {
			const char *sc_name = pvc->class_name;
			struct sk_status st = sk_ok();
			if (!sc_name || !*sc_name) {
				st = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
					       "PersistentVolumeClaim had no pv name and storageClass name");
			} else {
				struct sk_storage_class *sc = sk_handle_get_storage_class(self->handle, sc_name);
				if (!sc)
					st = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
							"storageclass.storage.k8s.io \"%s\" not found", sc_name);
				else if (!sc->binding_mode_set)
					st = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
							"VolumeBindingMode not set for StorageClass \"%s\"", sc_name);
				else if (!sc->wait_for_first_consumer)
					st = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name");
				sk_vobj_unref(sc);
			}
			sk_vobj_unref(pvc);
			if (!sk_is_success(&st))
				return st;
			continue; /* an unbound WaitForFirstConsumer claim */
		}
		struct sk_pv *pv = sk_handle_get_pv(self->handle, pv_name);
		if (!pv) {
			struct sk_status st = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
							 "persistentvolume \"%s\" not found", pv_name);
			sk_vobj_unref(pvc);
			return st;
		}
		int rc = add_topologies(s, pv);
		sk_vobj_unref(pv);
		sk_vobj_unref(pvc);
		if (rc != 0)
			return sk_status(SK_ERROR, "out of memory");
	}
	return sk_ok();
}

static struct sk_status vz_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	(void)result;
	struct vz_state *s = calloc(1, sizeof *s);
	if (!s)
		return sk_status(SK_ERROR, "out of memory");
	struct sk_status st = get_pv_by_pod(self, pod, s);
	if (!sk_is_success(&st)) {
		vz_state_free(s);
		return st;
	}
	if (s->n == 0) {
		vz_state_free(s);
		return sk_status(SK_SKIP, NULL);
	}
	sk_cycle_state_put(cs, self->slot, s, &vz_ops);
	return sk_ok();
}

static struct sk_status check_node(const struct vz_state *s, const struct sk_node *node)
{
	bool constrained = false;
	for (int i = 0; i < NTOPOLOGY && !constrained; i++)
		constrained = sk_labels_get(&node->labels, topology_labels[i]) != NULL;
	if (!constrained)
		return sk_ok(); /* a node without zone labels (a single-zone cluster) takes any pod */
	for (int i = 0; i < s->n; i++) {
		const char *v = sk_labels_get(&node->labels, s->items[i].key);
		if (!v)
			v = sk_labels_get(&node->labels, translate_to_ga(s->items[i].key));
		if (!v || !zones_have(s->items[i].value, v))
			return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT);
	}
	return sk_ok();
}

static struct sk_status vz_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	if (pod->nvolumes == 0)
		return sk_ok();
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const struct vz_state *s = sk_cycle_state_get(cs, self->slot);
	if (s)
		return check_node(s, ni->node);
	/* No PreFilter state: compute it here, as upstream's fallback. */
	struct vz_state tmp = { 0 };
	struct sk_status st = get_pv_by_pod(self, pod, &tmp);
	if (sk_is_success(&st))
		st = check_node(&tmp, ni->node);
	free(tmp.items);
	return st;
}

/* isPVCRequestedFromPod */
static bool pvc_requested(const struct sk_pvc *pvc, const struct sk_pod *pod)
{
	if (!pvc || strcmp(pvc->meta.ns, pod->ns) != 0)
		return false;
	for (int i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SK_VOL_PVC && pod->volumes[i].claim &&
		    strcmp(pod->volumes[i].claim, pvc->meta.name) == 0)
			return true;
	return false;
}

static enum sk_hint vz_hint_pvc(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				const void *new_obj)
{
	(void)self;
	if (!old_obj && !new_obj)
		return SK_QUEUE;
	return pvc_requested(new_obj, pod) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static enum sk_hint vz_hint_storage_class(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					  const void *new_obj)
{
	(void)self;
	(void)pod;
	(void)old_obj;
	const struct sk_storage_class *sc = new_obj;
	if (!sc)
		return SK_QUEUE;
	return sc->binding_mode_set && sc->wait_for_first_consumer ? SK_QUEUE : SK_QUEUE_SKIP;
}

static bool same_topologies(const struct sk_pv *a, const struct sk_pv *b)
{
	struct vz_state x = { 0 }, y = { 0 };
	bool same = add_topologies(&x, a) == 0 && add_topologies(&y, b) == 0 && x.n == y.n;
	for (int i = 0; same && i < x.n; i++)
		same = strcmp(x.items[i].key, y.items[i].key) == 0 && strcmp(x.items[i].value, y.items[i].value) == 0;
	free(x.items);
	free(y.items);
	return same;
}

static enum sk_hint vz_hint_pv(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
			       const void *new_obj)
{
	(void)self;
	(void)pod;
	if (!old_obj || !new_obj)
		return SK_QUEUE; /* a new PV (or no objects) */
	return same_topologies(old_obj, new_obj) ? SK_QUEUE_SKIP : SK_QUEUE;
}

static int vz_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	const struct sk_event_registration regs[] = {
		{ { SK_EV_STORAGE_CLASS, SK_ACT_ADD, "StorageClassAdd" }, vz_hint_storage_class },
		{ { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL, "NodeAdd|UpdateNodeLabel" }, NULL },
		{ { SK_EV_PVC, SK_ACT_ADD | SK_ACT_UPDATE, "PersistentVolumeClaimAdd|Update" }, vz_hint_pvc },
		{ { SK_EV_PV, SK_ACT_ADD | SK_ACT_UPDATE, "PersistentVolumeAdd|Update" }, vz_hint_pv },
	};
	int n = 0;
	for (size_t i = 0; i < sizeof regs / sizeof regs[0] && n < max; i++)
		out[n++] = regs[i];
	return n;
}

const struct sk_plugin_desc sk_plugin_volume_zone = {
	SK_PLUGIN_HEADER,
	.name = "VolumeZone",
	.pre_filter = vz_pre_filter,
	.filter = vz_filter,
	.events_to_register = vz_events,
};
