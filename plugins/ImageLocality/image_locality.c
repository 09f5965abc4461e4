/* ImageLocality (Score): prefers nodes that already have the pod's container images, weighted by
 * how widely each image is spread over the cluster (pkg/scheduler/framework/plugins/imagelocality/image_locality.go). */
#include "schedkit/plugin.h"

#define MIB 1048576LL
#define MIN_THRESHOLD (23 * MIB)
#define MAX_CONTAINER_THRESHOLD (1000 * MIB)

/* calculatePriority: the score of a node whose images the pod needs add up to sum bytes. */
static int64_t sum_score(const struct sk_pod *pod, int64_t sum)
{
	int64_t max_threshold = MAX_CONTAINER_THRESHOLD * pod->ncontainers;
	if (sum < MIN_THRESHOLD)
		sum = MIN_THRESHOLD;
	else if (sum > max_threshold)
		sum = max_threshold;
	return max_threshold == MIN_THRESHOLD ? 0
					      : SK_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD);
}

/* sumImageScores over the node's images the pod needs. */
static int64_t image_sum(const struct sk_snapshot *snap, const struct sk_pod *pod, const struct sk_node_info *ni)
{
	int total_nodes = snap->nnodes;
	int64_t sum = 0;
	for (int i = 0; i < pod->nimages && total_nodes > 0; i++) {
		const struct sk_image_state *st = sk_snapshot_image_state(snap, ni, pod->images[i]);
		if (st)
			sum += (int64_t)((double)st->size_bytes * ((double)st->num_nodes / (double)total_nodes));
	}
	return sum;
}

static int64_t node_score(const struct sk_snapshot *snap, const struct sk_pod *pod, const struct sk_node_info *ni)
{
	return sum_score(pod, image_sum(snap, pod, ni));
}

static struct sk_status image_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const struct sk_node_info *ni, int64_t *score)
{
	(void)cs;
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	if (!snap)
		return sk_status(SK_ERROR, "no snapshot");
	*score = node_score(snap, pod, ni);
	return sk_ok();
}

/* score over a run of nodes (score_batch, docs/plugins.md "Batch scoring"): the snapshot is
 * looked up once per run. */
static struct sk_status image_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					  const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	(void)cs;
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	if (!snap) {
		*failed = 0;
		return sk_status(SK_ERROR, "no snapshot");
	}
	/* a node without images (or without a Node object) has none of the pod's: sum 0 */
	const int64_t no_images = sum_score(pod, 0);
	for (int i = 0; i < n; i++) {
		const struct sk_node *node = nodes[i]->node;
		scores[i] = node && node->nimages ? node_score(snap, pod, nodes[i]) : no_images;
	}
	return sk_ok();
}

const struct sk_plugin_desc sk_plugin_image_locality = {
	SK_PLUGIN_HEADER,
	.name = "ImageLocality",
	.score = image_score,
	.score_batch = image_score_batch,
};
