/* NodeAffinity's Filter outcomes by node index (na_memo.h). */
#include "na_memo.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/selector.h"

struct na_memo {
	atomic_int refs;
	int32_t n;                /* indexes [0, n) */
	_Atomic uintptr_t *at;    /* [index]: node pointer | outcome, 0 = none; a reference on the node */
};

#define OUTCOME_MASK ((uintptr_t)3)

bool na_same_shape(const struct sk_pod *a, const struct sk_pod *b)
{
	return a == b || (sk_labels_equal(&a->node_selector, &b->node_selector) &&
			  kube_node_selector_equal(a->required_affinity, b->required_affinity));
}

static struct na_memo *memo_new(int32_t index_end)
{
	struct na_memo *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	/* room for nodes to come: a bigger numbering needs a new memo */
	m->n = index_end + index_end / 8 + 16;
	m->at = calloc((size_t)m->n, sizeof(*m->at));
	if (!m->at) {
		free(m);
		return NULL;
	}
	atomic_init(&m->refs, 1);
	return m;
}

struct na_memo *na_memo_ref(struct na_memo *m)
{
	if (m)
		atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

void na_memo_unref(struct na_memo *m)
{
	if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (int32_t i = 0; i < m->n; i++) {
		uintptr_t w = atomic_load_explicit(&m->at[i], memory_order_relaxed);
		if (w)
			sk_node_unref((struct sk_node *)(w & ~OUTCOME_MASK));
	}
	free(m->at);
	free(m);
}

enum na_outcome na_memo_lookup(const struct na_memo *m, const struct sk_node_info *ni)
{
	int32_t i = ni->index;
	if (i <= 0 || i >= m->n || !ni->node)
		return NA_NONE;
	uintptr_t w = atomic_load_explicit(&m->at[i], memory_order_relaxed);
	/* w's node is alive (the memo's reference), so equal pointers are the same object */
	if ((w & ~OUTCOME_MASK) != (uintptr_t)ni->node)
		return NA_NONE;
	return (enum na_outcome)(w & OUTCOME_MASK);
}

void na_memo_record(struct na_memo *m, const struct sk_node_info *ni, enum na_outcome outcome)
{
	int32_t i = ni->index;
	uintptr_t p = (uintptr_t)ni->node;
	if (i <= 0 || i >= m->n || !p || (p & OUTCOME_MASK) || outcome == NA_NONE)
		return;
	uintptr_t cur = atomic_load_explicit(&m->at[i], memory_order_relaxed);
	if ((cur & ~OUTCOME_MASK) == p)
		return; /* another thread kept it meanwhile */
	sk_node_ref(ni->node);
	if (atomic_compare_exchange_strong_explicit(&m->at[i], &cur, p | (uintptr_t)outcome, memory_order_acq_rel,
						    memory_order_relaxed)) {
		/* the word no longer names the old object: its reference can go */
		if (cur)
			sk_node_unref((struct sk_node *)(cur & ~OUTCOME_MASK));
	} else {
		sk_node_unref(ni->node); /* lost to another writer; the next cycle records again */
	}
}

void na_memos_init(struct na_memos *ms)
{
	memset(ms, 0, sizeof(*ms));
	pthread_mutex_init(&ms->mu, NULL);
}

void na_memos_fini(struct na_memos *ms)
{
	for (int k = 0; k < NA_MEMO_SHAPES; k++) {
		sk_pod_unref(ms->shape[k].key);
		na_memo_unref(ms->shape[k].memo);
	}
	pthread_mutex_destroy(&ms->mu);
}

struct na_memo *na_memo_get(struct na_memos *ms, const struct sk_pod *pod, int32_t index_end)
{
	if (index_end <= 0)
		return NULL;
	pthread_mutex_lock(&ms->mu);
	int k = 0;
	while (k < NA_MEMO_SHAPES && ms->shape[k].key && !na_same_shape(ms->shape[k].key, pod))
		k++;
	struct na_memo *got = NULL;
	if (k < NA_MEMO_SHAPES && ms->shape[k].key) {
		if (!ms->shape[k].memo || ms->shape[k].memo->n < index_end) {
			na_memo_unref(ms->shape[k].memo);
			ms->shape[k].memo = memo_new(index_end);
		}
		got = na_memo_ref(ms->shape[k].memo);
	} else {
		/* a new shape takes the least recently seen one's place */
		k = NA_MEMO_SHAPES - 1;
		sk_pod_unref(ms->shape[k].key);
		na_memo_unref(ms->shape[k].memo);
		ms->shape[k].key = sk_pod_ref((struct sk_pod *)pod);
		ms->shape[k].memo = NULL;
	}
	/* most recent first */
	struct na_shape s = ms->shape[k];
	memmove(&ms->shape[1], &ms->shape[0], (size_t)k * sizeof(ms->shape[0]));
	ms->shape[0] = s;
	pthread_mutex_unlock(&ms->mu);
	return got;
}
