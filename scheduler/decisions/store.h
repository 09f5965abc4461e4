/* Decision records (docs/explain.md): a bounded in-memory store of what the framework knew at
 * each scheduling attempt of the profiles that record (decisionRecords.enabled), and their JSON.
 *
 * Bounds: at most per_pod records per pod (namespace/name; the oldest of the pod goes first), at
 * most max_records in all and at most max_bytes of accounted memory (the oldest record of the
 * store goes first). A record's accounted size is its one allocation (every array and string of
 * it) plus its share of the pod entry.
 *
 * Threads: sk_decisions_add is called by the scheduling thread and the binder threads (the
 * scheduler's observer), readers run on the HTTP thread. One mutex guards the index; a record is
 * immutable once added and reference counted, so readers render it without the lock. */
#ifndef SK_DECISIONS_STORE_H
#define SK_DECISIONS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "scheduler/schedule_one.h"

#define SK_DECISIONS_DEFAULT_PER_POD 4
#define SK_DECISIONS_DEFAULT_MAX 2000
#define SK_DECISIONS_DEFAULT_MAX_BYTES (64u << 20)

struct sk_decisions_opts {
	int per_pod;      /* <= 0: SK_DECISIONS_DEFAULT_PER_POD */
	int max_records;  /* <= 0: SK_DECISIONS_DEFAULT_MAX */
	int64_t max_bytes; /* <= 0: SK_DECISIONS_DEFAULT_MAX_BYTES */
	/* wall clock for the records' time (Unix ns); NULL: CLOCK_REALTIME */
	int64_t (*wall_ns)(void *ctx);
	void *ctx;
};

/* One rejected node. */
struct sk_dec_filter {
	const char *node;    /* interned */
	const char *plugin;  /* interned; "" when no plugin is named */
	const char *code;    /* static: sk_code_string */
	const char *reasons; /* nreasons strings packed "r1\0r2\0" (in the record's allocation) */
	int nreasons;
};

/* One preemption candidate (record.h's sk_rec_candidate). */
struct sk_dec_candidate {
	const char *node; /* interned */
	int victims;
	int64_t pdb_violations;
	bool dropped;
};

struct sk_dec_time {
	const char *point; /* static */
	double seconds;
	int runs;
};

/* The record of one attempt: one allocation (arrays and strings follow the struct), except the
 * node names and totals when they were taken from the attempt (sk_outcome.take_scores). */
struct sk_decision {
	uint64_t seq;             /* increasing over the store's life */
	int64_t time_ns;          /* wall clock when recorded */
	size_t bytes;             /* accounted size */
	const char *ns, *name, *uid, *profile, *message, *nominated_node;
	const char *node;         /* chosen node or NULL */
	enum sk_result result;
	int attempts;
	double duration_s;
	int num_all_nodes;
	int prefilter_nodes;      /* -1: all */
	const char *prefilter_message;
	const char *nominated_path;
	bool nominated_path_fit, permit_wait;
	int nfilter;
	struct sk_dec_filter *filter;
	/* scores of the scored nodes: read them with sk_decision_norm / sk_decision_raw */
	int nplugins, nnodes;
	const char **plugin;
	int32_t *weight;
	const char **nodes;
	int64_t *total;
	uint8_t *norm;            /* normalised (0-100), [plugin][node] */
	bool has_raw;             /* the raw scores were kept */
	int16_t *raw_row;         /* per plugin: its row of raw, or -1 when equal to the normalised
				     scores (no NormalizeScore, or one that changed nothing) */
	int64_t *raw;             /* the rows of raw scores that differ, [row][node] */
	int ntimes;
	struct sk_dec_time *times;
	int nvictims, victims_total;
	const char **victims;
	int ncandidates, candidates_total;
	struct sk_dec_candidate *candidates;
	/* private */
	bool owns_scores;                  /* nodes and total were taken from the attempt */
	int refs;
	struct sk_decision *gnext, *gprev; /* store order, oldest first */
	struct sk_decision *pnext;         /* the pod's records, oldest first */
	struct dec_pod *pod;
};

static inline int64_t sk_decision_norm(const struct sk_decision *r, int p, int i)
{
	return r->norm[(size_t)p * (size_t)r->nnodes + (size_t)i];
}
static inline int64_t sk_decision_raw(const struct sk_decision *r, int p, int i)
{
	return r->raw_row[p] < 0 ? sk_decision_norm(r, p, i) : r->raw[(size_t)r->raw_row[p] * (size_t)r->nnodes + (size_t)i];
}

struct sk_decisions;

struct sk_decisions *sk_decisions_new(const struct sk_decisions_opts *opts);
void sk_decisions_free(struct sk_decisions *d); /* NULL ok */

/* Copies the outcome (with its details: sk_sched_env.want_details, or a recording profile) into
 * a record, evicting what the bounds ask; the per-node score arrays are taken when the outcome
 * offers them (take_scores). Returns the record's seq, or 0 when out of memory. */
uint64_t sk_decisions_add(struct sk_decisions *d, const struct sk_outcome *o);
/* Adds a built record (takes a reference of its own); 0 when r is NULL or out of memory. r must
 * not be in a store already. */
uint64_t sk_decisions_insert(struct sk_decisions *d, struct sk_decision *r);
/* The store's wall clock (opts.wall_ns, else CLOCK_REALTIME), for sk_decision_build. */
int64_t sk_decisions_now_ns(const struct sk_decisions *d);
/* Builds the record alone (refs 1, in no store), for tests and annotations; NULL on OOM. */
struct sk_decision *sk_decision_build(const struct sk_outcome *o, uint64_t seq, int64_t time_ns);
void sk_decision_unref(struct sk_decision *r); /* NULL ok */

struct sk_decisions_stats {
	int records, pods;
	int64_t bytes;
	uint64_t added, evicted;
	int per_pod, max_records;
	int64_t max_bytes;
};
void sk_decisions_stats(struct sk_decisions *d, struct sk_decisions_stats *out);

/* The records of one pod, newest first (references the caller drops with sk_decision_unref,
 * and the array it frees). Returns the count (0: none; -1: out of memory). */
int sk_decisions_pod(struct sk_decisions *d, const char *ns, const char *name, struct sk_decision ***out);

/* Recent records, newest first, that match the filter (NULL fields match all). */
struct sk_decisions_filter {
	const char *profile;
	const char *result;    /* "Scheduled", "Unschedulable", "Error" */
	const char *ns;
	int limit;             /* <= 0: 100 */
	bool latest_per_pod;   /* only each pod's newest record */
};
int sk_decisions_recent(struct sk_decisions *d, const struct sk_decisions_filter *f, struct sk_decision ***out);

/* ---------- JSON (decisions_json.c; the format is docs/explain.md's) ---------- */

/* The full record. */
cJSON *sk_decision_json(const struct sk_decision *r);
/* The short form of a list item: identity, result, node, message and the top reasons. */
cJSON *sk_decision_summary_json(const struct sk_decision *r);
/* {"reason": count} over the rejected nodes (the FitError histogram), top `max` by count then
 * name, as [{"reason":..,"count":..}]. */
cJSON *sk_decision_reasons_json(const struct sk_decision *r, int max);
cJSON *sk_decisions_stats_json(const struct sk_decisions_stats *st);

#endif
