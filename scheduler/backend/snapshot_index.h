/* The dense node numbering of a snapshot (sk_node_info.index, index_serial; sk_snapshot.index_end,
 * index_version, nodes_version; plugin ABI 1.2, docs/plugins.md "Per-node plugin data"): indexes from 1 up, a
 * removed node's index reused by a later node, a serial from a process-wide 32-bit counter of
 * arrivals and a version from the process-wide generation counter. Owned by the snapshot's private part (cache.c); scheduling
 * thread only, as the snapshot. */
#ifndef SK_SNAPSHOT_INDEX_H
#define SK_SNAPSHOT_INDEX_H

#include <stdint.h>

#include "schedkit/types.h"

struct sk_snap_index {
	int32_t *free;  /* released indexes, reused last-in first-out */
	int nfree, capfree;
};

/* A zeroed node info for a snapshot, 64-byte aligned (sk_node_info.index shares a line with the
 * fields the default plugins read); freed with free (sk_node_info_free). NULL on ENOMEM. */
struct sk_node_info *sk_snap_node_info_alloc(void);
/* Numbers ni (a node entering s): a released index or s->index_end++, a new serial; bumps
 * s->index_version. Needs no memory. */
void sk_snap_index_assign(struct sk_snap_index *x, struct sk_snapshot *s, struct sk_node_info *ni);
/* A node of s got a new object (sk_node_info.node): nodes_version changes. */
void sk_snap_node_replaced(struct sk_snapshot *s);
/* ni leaves s: its index can be reused (when the free list cannot grow it is not), the version
 * changes. */
void sk_snap_index_release(struct sk_snap_index *x, struct sk_snapshot *s, const struct sk_node_info *ni);
/* Every node left s (all node infos freed): numbering starts over, the version changes. */
void sk_snap_index_reset(struct sk_snap_index *x, struct sk_snapshot *s);
void sk_snap_index_free(struct sk_snap_index *x);

#endif
