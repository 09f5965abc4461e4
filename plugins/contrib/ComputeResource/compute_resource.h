/* ComputeResource's own interface between its files (plugins/contrib/ComputeResource/): the
 * metrics table a refresh builds from a NodeMetricsList and the cycles read, and the quantity and
 * timestamp parsers. Not part of the SDK; everything here is hidden inside the module. */
#ifndef SK_CONTRIB_COMPUTE_RESOURCE_H
#define SK_CONTRIB_COMPUTE_RESOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <schedkit/types.h>

#define CR_NAME "ComputeResource"
#define CR_METRICS_PATH "/apis/metrics.k8s.io/v1beta1/nodes"

/* One node's sample. The usage numbers never change after the table is built; extra_* are the
 * estimates of pods this instance placed on the node after the sample was taken (Reserve adds,
 * Unreserve subtracts), read by Filter and Score on the pool threads. */
struct cr_node_metrics {
	_Alignas(64) const char *name; /* interned; _Alignas: one entry is one cache line */
	int64_t cpu_milli;       /* usage.cpu, millicores */
	int64_t mem_bytes;       /* usage.memory, bytes */
	int64_t sample_unix_ns;  /* timestamp (metrics-server's clock); fetch time when absent */
	int64_t fresh_until_ns;  /* on the handle's monotonic clock: older than this = stale */
	_Atomic int64_t extra_cpu, extra_mem;
	bool over;               /* above a usage threshold when last evaluated (scheduling thread) */
};

/* The table's entries in the order of a snapshot's node numbering (sk_node_info.index, plugin
 * ABI 1.2, docs/plugins.md "Per-node plugin data"): at[i] is the entry of the node numbered i
 * (NULL: the node has no sample), found by name once when built, so Filter and Score read one
 * element instead of hashing the node's name (which also costs a read of the node). serial is the
 * node's index_serial: an element is a node's only when both match. Built on the scheduling thread
 * when the snapshot's numbering changes and never changed after; the table holds one reference,
 * each CycleState that took it one more, so a cycle reads its own while a newer one is built. */
struct cr_by_index {
	atomic_int refs;
	uint64_t version;            /* sk_snapshot.index_version it was built for */
	int32_t n;                   /* elements: the snapshot's index_end */
	struct cr_index_slot {
		struct cr_node_metrics *e;
		uint32_t serial;
	} *at;
};

/* One refresh's result: immutable but for the extras, shared by reference between the instance
 * (its current table) and the CycleStates that took it at PreFilter. */
struct cr_metrics {
	atomic_int refs;
	int n;
	uint32_t mask;           /* nslots - 1 */
	int32_t *slots;          /* open addressing over nodes[], -1 = empty */
	struct cr_node_metrics *nodes;
	uint64_t generation;     /* 1 for the first fetch, +1 per successful refresh */
	int skipped;             /* items without a name or with unparseable usage */
	/* Which nodes are above a usage threshold, evaluated against the snapshot at the first
	 * PreFilter on the table (and again when the number of nodes changes) and kept up to date by
	 * Reserve; read and written on the scheduling thread only. over_count 0 lets PreFilter skip
	 * Filter for the pod. */
	bool evaluated;
	int evaluated_nnodes;
	uint64_t evaluated_version; /* sk_snapshot.index_version */
	int over_count;
	struct cr_by_index *by_index; /* of the last evaluation (one reference); NULL when none */
};

/* Builds a table from a NodeMetricsList (metrics.k8s.io/v1beta1). fetched_mono_ns and
 * fetched_unix_ns are when the list arrived; expiration_ns is metricsExpirationSeconds. A node's
 * age is the time since the fetch plus how far its timestamp lags the newest one of the list, so
 * the rule needs no agreement between the scheduler's clock and metrics-server's. NULL and *err
 * (caller frees) when the body is not a list or on ENOMEM. */
struct cr_metrics *cr_metrics_from_list(const cJSON *list, int64_t fetched_mono_ns, int64_t fetched_unix_ns,
					int64_t expiration_ns, uint64_t generation, char **err);
struct cr_metrics *cr_metrics_empty(void); /* a table with no nodes; NULL on ENOMEM */
struct cr_metrics *cr_metrics_ref(struct cr_metrics *m);
void cr_metrics_unref(struct cr_metrics *m); /* NULL ok */
/* Names are interned (types.h): one pointer per distinct string, so the index hashes and compares
 * pointers, and Filter and Score find a node without walking its name (inline: they call it for
 * every node of every cycle). */
static inline uint32_t cr_name_hash(const char *s)
{
	/* Fibonacci hashing: the upper half of the pointer times 2^64/phi. Interned pointers differ
	 * only in their middle bits (alignment below, one arena above); each bit of the product's
	 * upper half depends on every pointer bit below it, so the bits the table keeps (the low ones
	 * of the result) mix those. One multiply: Score hashes once per scored node. */
	return (uint32_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ULL) >> 32);
}

/* The sample of node `name`, or NULL. name must be interned (sk_intern; node names of the views
 * are). Lock-free; any thread. */
static inline struct cr_node_metrics *cr_metrics_find_in(const struct cr_metrics *m, const char *name);
static inline struct cr_node_metrics *cr_metrics_find(const struct cr_metrics *m, const char *name)
{
	return m && m->n > 0 ? cr_metrics_find_in(m, name) : NULL;
}

/* cr_metrics_find on a table known to hold nodes (Score checks that once per call). */
static inline struct cr_node_metrics *cr_metrics_find_in(const struct cr_metrics *m, const char *name)
{
	for (uint32_t i = cr_name_hash(name) & m->mask;; i = (i + 1) & m->mask) {
		int32_t k = m->slots[i];
		if (k < 0)
			return NULL;
		if (m->nodes[k].name == name)
			return &m->nodes[k];
	}
}

/* Replaces m->by_index with one for snap's numbering (NULL when snap numbers no node); scheduling
 * thread, under the instance's lock. -1 on ENOMEM (m->by_index is then NULL: lookups hash). */
int cr_by_index_build(struct cr_metrics *m, const struct sk_snapshot *snap);
void cr_by_index_unref(struct cr_by_index *x); /* NULL ok */

/* The entry of node info ni (of the snapshot x was built for, or a clone of one of its nodes)
 * through x, else by name in m (m may be NULL: no table). */
static inline struct cr_node_metrics *cr_lookup(const struct cr_by_index *x, const struct cr_metrics *m,
						const struct sk_node_info *ni, const char *name)
{
	uint32_t i = (uint32_t)ni->index;
	if (__builtin_expect(x && i < (uint32_t)x->n && ni->index_serial && x->at[i].serial == ni->index_serial, 1))
		return x->at[i].e;
	return cr_metrics_find(m, name);
}

/* A resource quantity ("250m", "1.5", "123456789n", "512Mi", "1e3") scaled by 10^scale and
 * rounded up, as resource.Quantity's Value (scale 0) and MilliValue (scale 3) do; saturates at
 * INT64_MAX. Negative or malformed: -1. */
int cr_parse_quantity(const char *s, int scale, int64_t *out);
/* RFC 3339 ("2026-12-01T10:00:00Z", fractional seconds and numeric offsets allowed) to Unix ns;
 * 0 or -1. */
int cr_parse_time(const char *s, int64_t *unix_ns);

#endif
