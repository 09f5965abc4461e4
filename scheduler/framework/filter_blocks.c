/* The plain Filter loop over blocks of nodes, for lists with a plugin that filters in batches
 * (sk_plugin_desc.filter_batch, ABI 1.3; docs/plugins.md, "Batch filtering"): each plugin in
 * order over the block's nodes still passing, so every node sees the plugins in order and stops
 * at the first that rejects it, as in sk_fw_run_filter (upstream's RunFilterPlugins,
 * pkg/scheduler/framework/runtime/framework.go). A block never holds more nodes than feasible
 * ones are still wanted, so the run stops at exactly the node the node-by-node loop stops at and
 * no node past it is filtered. */
#include <stdint.h>
#include <string.h>

#include "scheduler/framework/runtime.h"

#define BLOCK 16

/* The block's 16 pass flags as two words (slots past the block stay 0). */
static inline bool same_flags(const uint8_t *a, const uint8_t *b)
{
	uint64_t a0, a1, b0, b1;
	memcpy(&a0, a, 8);
	memcpy(&a1, a + 8, 8);
	memcpy(&b0, b, 8);
	memcpy(&b1, b + 8, 8);
	return a0 == b0 && a1 == b1;
}

/* Asked for while a block is filtered: the node infos two blocks ahead, and the nodes of the next
 * block, whose node infos were asked for a block ago (the first read of each is otherwise a cache
 * miss: docs/benchmarks.md, "Prefetching the Filter loop's nodes"). */
static void prefetch_ahead(const struct sk_node_info *const *nodes, int next, int n)
{
	int far_end = next + 2 * BLOCK < n ? next + 2 * BLOCK : n;
	for (int i = next + BLOCK; i < far_end; i++) {
		__builtin_prefetch(nodes[i]);
		__builtin_prefetch((const char *)nodes[i] + 64);
	}
	int near_end = next + BLOCK < n ? next + BLOCK : n;
	for (int i = next; i < near_end; i++) {
		const struct sk_node *node = nodes[i]->node;
		if (node) {
			__builtin_prefetch(node);
			__builtin_prefetch((const char *)node + 64);
			__builtin_prefetch((const char *)node + 128);
		}
	}
}

/* One plugin over the block's passing nodes (alive of them); returns how many it rejected. */
static int block_plugin(struct sk_plugin *pl, struct sk_cycle_state *cs, const struct sk_pod *pod,
			const struct sk_node_info *const *blk, int b, uint8_t *ok, struct sk_status *st, int alive,
			uint32_t *evals)
{
	if (evals) /* each passing node is one evaluation, as a call of filter is */
		evals[pl->slot] += (uint32_t)alive;
	int rejected = 0;
	if (!pl->desc->filter_batch) {
		for (int i = 0; i < b; i++) {
			if (!ok[i])
				continue;
			struct sk_status s = pl->desc->filter(pl, cs, pod, blk[i]);
			if (s.code != SK_SUCCESS) {
				st[i] = sk_fw_filter_failed(pl, &s);
				ok[i] = 0;
				rejected++;
			}
		}
		return rejected;
	}
	uint8_t was[BLOCK];
	memcpy(was, ok, BLOCK);
	pl->desc->filter_batch(pl, cs, pod, blk, b, ok, st);
	if (same_flags(was, ok)) /* the common case: nobody rejected */
		return 0;
	for (int i = 0; i < b; i++) {
		if (!was[i]) {
			ok[i] = 0; /* a plugin does not bring a rejected node back */
			continue;
		}
		if (ok[i])
			continue;
		if (st[i].code == SK_SUCCESS)
			st[i] = sk_status(SK_ERROR, "filter_batch rejected the node without a status");
		st[i] = sk_fw_filter_failed(pl, &st[i]);
		rejected++;
	}
	return rejected;
}

int sk_fw_filter_blocks(struct sk_plugin *const *pts, int nf, struct sk_cycle_state *cs, const struct sk_pod *pod,
			const struct sk_node_info *const *nodes, int n, int max_feasible, uint8_t *res,
			struct sk_status *st, int *ran, uint32_t *evals)
{
	int left = max_feasible, k = 0;
	while (k < n && left > 0) {
		int b = n - k < BLOCK ? n - k : BLOCK;
		if (b > left)
			b = left;
		prefetch_ahead(nodes, k + b, n);
		uint8_t ok[BLOCK] = { 0 };
		memset(ok, 1, (size_t)b);
		int alive = b;
		for (int p = 0; p < nf && alive > 0; p++)
			alive -= block_plugin(pts[p], cs, pod, nodes + k, b, ok, st + k, alive, evals);
		if (alive == b) { /* every node passed */
			memset(res + k, SK_FW_FEASIBLE, (size_t)b);
			left -= b;
			k += b;
			continue;
		}
		for (int i = 0; i < b; i++) {
			if (ok[i]) {
				res[k + i] = SK_FW_FEASIBLE;
				left--;
			} else {
				res[k + i] = st[k + i].code == SK_ERROR ? SK_FW_FAILED : SK_FW_REJECTED;
			}
		}
		k += b;
	}
	*ran = k;
	return max_feasible - left;
}
