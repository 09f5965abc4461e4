/* The dense node numbering of a snapshot (snapshot_index.h). */
#include "scheduler/backend/snapshot_index.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/backend/cache.h"

static atomic_uint serial_counter;

/* never 0 (0 = not numbered), also after the counter wraps */
static uint32_t next_serial(void)
{
	uint32_t v;
	while ((v = atomic_fetch_add_explicit(&serial_counter, 1, memory_order_relaxed) + 1) == 0)
		;
	return v;
}

struct sk_node_info *sk_snap_node_info_alloc(void)
{
	size_t align = 64, size = (sizeof(struct sk_node_info) + align - 1) / align * align;
	struct sk_node_info *ni = aligned_alloc(align, size);
	if (ni)
		memset(ni, 0, sizeof(*ni));
	return ni;
}

void sk_snap_index_assign(struct sk_snap_index *x, struct sk_snapshot *s, struct sk_node_info *ni)
{
	if (s->index_end < 1)
		s->index_end = 1; /* 0 means "not numbered" */
	ni->index = x->nfree > 0 ? x->free[--x->nfree] : s->index_end++;
	ni->index_serial = next_serial();
	s->index_version = s->nodes_version = (uint64_t)sk_next_generation();
}

void sk_snap_node_replaced(struct sk_snapshot *s)
{
	s->nodes_version = (uint64_t)sk_next_generation();
}

void sk_snap_index_release(struct sk_snap_index *x, struct sk_snapshot *s, const struct sk_node_info *ni)
{
	s->index_version = s->nodes_version = (uint64_t)sk_next_generation();
	if (ni->index < 1 || ni->index >= s->index_end)
		return;
	if (x->nfree == x->capfree) {
		int cap = x->capfree ? x->capfree * 2 : 64;
		int32_t *nf = realloc(x->free, (size_t)cap * sizeof(*nf));
		if (!nf)
			return; /* the index is simply not reused */
		x->free = nf;
		x->capfree = cap;
	}
	x->free[x->nfree++] = ni->index;
}

void sk_snap_index_reset(struct sk_snap_index *x, struct sk_snapshot *s)
{
	x->nfree = 0;
	s->index_end = 1;
	s->index_version = s->nodes_version = (uint64_t)sk_next_generation();
}

void sk_snap_index_free(struct sk_snap_index *x)
{
	free(x->free);
	*x = (struct sk_snap_index){ 0 };
}
