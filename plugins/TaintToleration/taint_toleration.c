/* TaintToleration (Filter, PreScore, Score, NormalizeScore): rejects nodes with a NoSchedule or
 * NoExecute taint the pod does not tolerate; scores nodes by their untolerated PreferNoSchedule
 * taints, fewer is better (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
 *
 * Reason string: the v1.34 patch releases after upstream PR 135023 (and v1.35) report the fixed
 * `node(s) had untolerated taint(s)`; v1.34.0/1.34.1 printed the taint. We follow the latest 1.34
 * patch (docs/config.md). */
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"

#define ERR_REASON_UNTOLERATED "node(s) had untolerated taint(s)"

static bool tolerated_by_any(const struct sk_toleration *tols, int n, const struct sk_taint *taint)
{
	for (int i = 0; i < n; i++)
		if (sk_toleration_tolerates(&tols[i], taint))
			return true;
	return false;
}

/* FindMatchingUntoleratedTaint with the DoNotSchedule filter (NoSchedule, NoExecute). */
static const struct sk_taint *first_untolerated(const struct sk_node *node, const struct sk_pod *pod)
{
	for (int i = 0; i < node->ntaints; i++) {
		const struct sk_taint *t = &node->taints[i];
		if (t->effect != SK_EFFECT_NO_SCHEDULE && t->effect != SK_EFFECT_NO_EXECUTE)
			continue;
		if (!tolerated_by_any(pod->tolerations, pod->ntolerations, t))
			return t;
	}
	return NULL;
}

static struct sk_status taint_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *ni)
{
	(void)self;
	(void)cs;
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	if (ni->node->ntaints && first_untolerated(ni->node, pod))
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED);
	return sk_ok();
}

/* taint_filter over a run of nodes (filter_batch, docs/plugins.md "Batch filtering"). */
static void taint_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			       const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	(void)self;
	(void)cs;
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		const struct sk_node *node = nodes[i]->node;
		if (!node) {
			ok[i] = 0;
			st[i] = sk_status(SK_ERROR, "node not found");
		} else if (node->ntaints && first_untolerated(node, pod)) {
			ok[i] = 0;
			st[i] = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED);
		}
	}
}

/* PreScore state: the pod's tolerations with an empty or PreferNoSchedule effect. */
struct taint_prescore {
	int n;
	struct sk_toleration tols[];
};

static void prescore_free(void *p) { free(p); }
static const struct sk_state_ops prescore_ops = { .free = prescore_free, .clone = NULL };

static struct sk_status taint_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const struct sk_node_info *const *nodes, int nnodes)
{
	(void)nodes;
	(void)nnodes;
	struct taint_prescore *st = malloc(sizeof(*st) + (size_t)pod->ntolerations * sizeof(st->tols[0]));
	if (!st)
		return sk_status(SK_ERROR, "out of memory");
	st->n = 0;
	for (int i = 0; i < pod->ntolerations; i++) {
		enum sk_taint_effect e = pod->tolerations[i].effect;
		if (e == SK_EFFECT_NONE || e == SK_EFFECT_PREFER_NO_SCHEDULE)
			st->tols[st->n++] = pod->tolerations[i];
	}
	sk_cycle_state_put(cs, self->slot, st, &prescore_ops);
	return sk_ok();
}

#define ERR_NO_PRESCORE "failed to read \"PreScoreTaintToleration\" from cycleState: not found"

/* countIntolerableTaintsPreferNoSchedule */
static int64_t intolerable_count(const struct taint_prescore *st, const struct sk_node *node)
{
	int64_t count = 0;
	for (int i = 0; i < node->ntaints; i++) {
		const struct sk_taint *t = &node->taints[i];
		if (t->effect == SK_EFFECT_PREFER_NO_SCHEDULE && !tolerated_by_any(st->tols, st->n, t))
			count++;
	}
	return count;
}

static struct sk_status taint_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const struct sk_node_info *ni, int64_t *score)
{
	(void)pod;
	const struct taint_prescore *st = sk_cycle_state_get(cs, self->slot);
	if (!st)
		return sk_status(SK_ERROR, ERR_NO_PRESCORE);
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	*score = intolerable_count(st, ni->node);
	return sk_ok();
}

/* score over a run of nodes (score_batch, docs/plugins.md "Batch scoring"): the PreScore state
 * is read once per run. */
static struct sk_status taint_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					  const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	(void)pod;
	const struct taint_prescore *st = sk_cycle_state_get(cs, self->slot);
	if (!st) {
		*failed = 0;
		return sk_status(SK_ERROR, ERR_NO_PRESCORE);
	}
	for (int i = 0; i < n; i++) {
		if (!nodes[i]->node) {
			*failed = i;
			return sk_status(SK_ERROR, "node not found");
		}
		scores[i] = nodes[i]->node->ntaints ? intolerable_count(st, nodes[i]->node) : 0;
	}
	return sk_ok();
}

/* DefaultNormalizeScore(MaxNodeScore, reverse=true) (pkg/scheduler/framework/plugins/helper/normalize_score.go). */
static struct sk_status taint_normalize(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					struct sk_node_score *scores, int n)
{
	(void)self;
	(void)cs;
	(void)pod;
	int64_t max = 0;
	for (int i = 0; i < n; i++)
		if (scores[i].score > max)
			max = scores[i].score;
	if (max == 0) { /* no node has an intolerable PreferNoSchedule taint: all score the maximum */
		for (int i = 0; i < n; i++)
			scores[i].score = SK_MAX_NODE_SCORE;
		return sk_ok();
	}
	for (int i = 0; i < n; i++)
		scores[i].score = SK_MAX_NODE_SCORE - SK_MAX_NODE_SCORE * scores[i].score / max;
	return sk_ok();
}

/* Queue when the node tolerated-ness turned from untolerated to tolerated (or a tolerated node was added). */
static enum sk_hint taint_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				   const void *new_obj)
{
	(void)self;
	const struct sk_node *old_node = old_obj, *node = new_obj;
	if (!node)
		return SK_QUEUE;
	bool was_untolerated = old_node ? first_untolerated(old_node, pod) != NULL : true;
	bool is_untolerated = first_untolerated(node, pod) != NULL;
	return (was_untolerated && !is_untolerated) ? SK_QUEUE : SK_QUEUE_SKIP;
}

/* Only the rejected pod's own toleration change can help it. */
static enum sk_hint taint_hint_pod_toleration(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					      const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_pod *modified = new_obj;
	if (!modified || !pod->uid || !modified->uid)
		return SK_QUEUE;
	return strcmp(pod->uid, modified->uid) == 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int taint_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	int n = 0;
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_TAINT, "NodeAdd|UpdateNodeTaint" },
			.hint = taint_hint_node,
		};
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_POD, SK_ACT_UPDATE_POD_TOLERATIONS, "UpdatePodToleration" },
			.hint = taint_hint_pod_toleration,
		};
	return n;
}

const struct sk_plugin_desc sk_plugin_taint_toleration = {
	SK_PLUGIN_HEADER,
	.name = "TaintToleration",
	.filter = taint_filter,
	.filter_batch = taint_filter_batch,
	.pre_score = taint_pre_score,
	.score = taint_score,
	.normalize_score = taint_normalize,
	.events_to_register = taint_events,
	.score_batch = taint_score_batch,
};
