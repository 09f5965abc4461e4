/* Long file: the scheduling and binding cycles share the attempt, the scratch arrays and the binders.
 * One scheduling attempt (scheduling cycle + asynchronous binding cycle + failure handling) and the
 * FitError message; see schedule_one.h. Filtering is parallel but serial-order equivalent: chunks
 * are claimed in scan order and the feasible list is rebuilt from the processed prefix, so the
 * result (feasible nodes, statuses, next start index) is what a single thread would produce. */
#include "scheduler/schedule_one.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/util.h"
#include "scheduler/framework/extender.h"

#define MAX_PLUGIN_NAMES 32
#define EVENT_NOTE_LIMIT 1024

const char *sk_result_string(enum sk_result r)
{
	switch (r) {
	case SK_RESULT_SCHEDULED: return "Scheduled";
	case SK_RESULT_UNSCHEDULABLE: return "Unschedulable";
	case SK_RESULT_ERROR: return "Error";
	}
	return "Error";
}

struct bind_job;

struct sk_scheduler {
	struct sk_sched_env env;
	struct sk_queue *q;
	pthread_mutex_t profiles_mu; /* guards fws, nfws */
	struct sk_framework **fws;
	int nfws;
	const struct sk_snapshot *snapshot; /* scheduling thread only */
	int next_start;                     /* scheduling thread only */
	uint64_t rng;                       /* scheduling thread only: tie-break */
	uint64_t sample_rng;                /* scheduling thread only: plugin-metrics sampling */
	/* filter scratch (scheduling thread only) */
	int cap;
	uint8_t *res;
	struct sk_status *st;
	int *chunk_found; /* per chunk of a Filter loop: 0 while not finished, else 1 + its feasible nodes */
	/* binder */
	pthread_mutex_t bind_mu; /* guards the job list, pending, stop, idle_binders */
	pthread_cond_t bind_cv, idle_cv;
	struct bind_job *head, *tail;
	int pending;
	int idle_binders;        /* binders waiting on bind_cv */
	bool stop;
	int nbinders;
	pthread_t *binders;
};

/* Per-attempt details kept until the attempt ends (binding included). */
struct attempt {
	struct sk_filter_diagnosis diag;   /* nodes[] owned (statuses owned) */
	int cap_nodes;
	const char *pending_plugins[8];
	int npending;
	/* the last (plugin, code) add_plugin_status recorded: a failing pass repeats it on every node */
	const char *last_plugin;
	enum sk_code last_code;
	struct sk_status nominated_status; /* the nominated node's rejection, if any */
	const struct sk_node_info *nominated_ni;
	struct sk_status absent;           /* status of nodes left out (PreFilter) */
	bool has_absent;
	struct sk_prefilter_result pre;    /* narrowed set (sorted names) */
	const char *absent_plugin;
	struct sk_score_table scores;
	bool scored;
	const char **score_nodes;
	char *message;
	const char *nominated_node;
	bool nominate;
	bool fit; /* message is a FitError: its plugins drive requeueing */
	double algorithm_s; /* schedulePod's duration when it found a host (SchedulingAlgorithmLatency), else 0 */
	/* outcome details captured on the scheduling thread (names are interned: safe anywhere) */
	int nfilters;
	struct sk_outcome_filter *filters;
	/* decision records (docs/explain.md): details wanted (simulate, or the profile records) */
	bool details, record, annotate, nominated_fit, permit_wait;
	struct sk_rec_trace trace;
};

struct bind_job {
	struct bind_job *next;
	struct sk_framework *fw;
	struct sk_cycle_state *cs;
	struct sk_queued_pod *qp;
	struct sk_pod *assumed;
	const char *node;
	int64_t start_ns;
	struct attempt *att;
};

static uint64_t next_rand(struct sk_scheduler *s)
{
	if (s->env.rand)
		return s->env.rand(s->env.ctx);
	/* xorshift64* */
	uint64_t x = s->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ---------- FitError ---------- */

struct reason_count {
	const char *reason;
	int count;
};

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* *last: the entry this call counted (sk_fit_error_message tries it first: a failing pass gives
 * most nodes the same reason). */
static void count_reason(struct reason_count **rc, int *n, int *cap, int *last, const char *reason, int k)
{
	/* plugins' common reasons are static strings: the same pointer on every node */
	for (int i = 0; i < *n; i++)
		if ((*rc)[i].reason == reason || strcmp((*rc)[i].reason, reason) == 0) {
			(*rc)[i].count += k;
			*last = i;
			return;
		}
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 16;
		struct reason_count *x = realloc(*rc, (size_t)c * sizeof(*x));
		if (!x)
			return;
		*rc = x;
		*cap = c;
	}
	(*rc)[*n].reason = reason;
	(*rc)[*n].count = k;
	*last = *n;
	(*n)++;
}

char *sk_fit_error_message(int num_all, const struct sk_node_status *statuses, int n, const struct sk_status *absent,
			   const char *prefilter_msg, const char *postfilter_msg)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	fprintf(f, "0/%d nodes are available:", num_all);
	if (prefilter_msg && *prefilter_msg) {
		fprintf(f, " %s.", prefilter_msg);
	} else {
		struct reason_count *rc = NULL;
		int nrc = 0, cap = 0, last = 0;
		for (int i = 0; i < n; i++) {
			const struct sk_status *st = &statuses[i].status;
			/* fewer reasons than the inline slots: no overflow block, the slots are all of them */
			int nr = st->nreasons < SK_STATUS_MAX_REASONS ? st->nreasons : sk_status_reason_count(st);
			for (int r = 0; r < nr; r++) {
				const char *reason = r < st->nreasons ? st->reasons[r] : sk_status_reason(st, r);
				if (last < nrc && rc[last].reason == reason)
					rc[last].count++;
				else
					count_reason(&rc, &nrc, &cap, &last, reason, 1);
			}
		}
		if (absent && n < num_all)
			for (int r = 0; r < sk_status_reason_count(absent); r++)
				count_reason(&rc, &nrc, &cap, &last, sk_status_reason(absent, r), num_all - n);
		char **items = calloc((size_t)(nrc ? nrc : 1), sizeof(char *));
		int nitems = 0;
		for (int i = 0; items && i < nrc; i++)
			if (asprintf(&items[nitems], "%d %s", rc[i].count, rc[i].reason) >= 0)
				nitems++;
		if (items)
			qsort(items, (size_t)nitems, sizeof(char *), cmp_cstr);
		/* upstream adds the " <histogram>." piece only when it has entries */
		for (int i = 0; i < nitems; i++) {
			fprintf(f, "%s%s", i ? ", " : " ", items[i]);
			free(items[i]);
		}
		if (nitems > 0)
			fputc('.', f);
		free(items);
		free(rc);
	}
	if (postfilter_msg && *postfilter_msg)
		fprintf(f, " %s", postfilter_msg);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *sk_truncate_event_message(const char *msg)
{
	size_t l = strlen(msg);
	if (l <= EVENT_NOTE_LIMIT)
		return strdup(msg);
	char *out = malloc(EVENT_NOTE_LIMIT + 1);
	if (!out)
		return NULL;
	memcpy(out, msg, EVENT_NOTE_LIMIT - 4);
	memcpy(out + EVENT_NOTE_LIMIT - 4, " ...", 5);
	return out;
}

/* ---------- attempt bookkeeping ---------- */

static void attempt_free(struct attempt *a)
{
	if (!a)
		return;
	/* a failing node's status mostly holds static reasons only (owned == 0): nothing to free */
	for (int i = 0; i < a->diag.n; i++)
		if (a->diag.nodes[i].status.owned)
			sk_status_reset(&a->diag.nodes[i].status);
	free(a->diag.nodes);
	free(a->diag.prefilter_msg);
	sk_status_reset(&a->nominated_status);
	sk_status_reset(&a->absent);
	free(a->pre.names);
	sk_score_table_free(&a->scores);
	free(a->score_nodes);
	free(a->message);
	free(a->filters);
	sk_rec_trace_reset(&a->trace);
	free(a);
}

static bool list_has(const char *const *l, int n, const char *x)
{
	for (int i = 0; i < n; i++)
		if (l[i] == x || strcmp(l[i], x) == 0) /* plugin names: usually the same pointer */
			return true;
	return false;
}

static void add_unschedulable_plugin(struct attempt *a, const char *plugin)
{
	if (!list_has(a->diag.unschedulable_plugins, a->diag.nunschedulable_plugins, plugin) &&
	    a->diag.nunschedulable_plugins < MAX_PLUGIN_NAMES)
		a->diag.unschedulable_plugins[a->diag.nunschedulable_plugins++] = plugin;
}

/* Diagnosis.AddPluginStatus: a rejecting plugin (Pending included) goes to UnschedulablePlugins;
 * a Pending one to PendingPlugins as well. */
static void record_plugin_status(struct attempt *a, const struct sk_status *st)
{
	if (!st->plugin || !*st->plugin || !sk_is_rejected(st))
		return;
	add_unschedulable_plugin(a, st->plugin);
	if (st->code == SK_PENDING && !list_has(a->pending_plugins, a->npending, st->plugin) && a->npending < 8)
		a->pending_plugins[a->npending++] = st->plugin;
	a->last_plugin = st->plugin;
	a->last_code = st->code;
}

/* Recording the same (plugin, code) again changes neither list: a failing pass repeats it on
 * every node, so the repeat is tested here, inline, and only a new pair takes the call. */
static inline void add_plugin_status(struct attempt *a, const struct sk_status *st)
{
	if (st->plugin != a->last_plugin || st->code != a->last_code)
		record_plugin_status(a, st);
}

/* Takes ownership of st (inlined: a call per failing node copied st's 64 bytes to the stack). */
static inline __attribute__((always_inline)) int add_node_status(struct attempt *a, const struct sk_node_info *ni,
								 struct sk_status st)
{
	if (a->diag.n == a->cap_nodes) {
		/* the first failure sizes the array for every node (a preemptor fails on all of them) */
		int c = a->cap_nodes ? a->cap_nodes * 2 : a->diag.num_all_nodes > 16 ? a->diag.num_all_nodes : 16;
		struct sk_node_status *x = realloc(a->diag.nodes, (size_t)c * sizeof(*x));
		if (!x) {
			sk_status_reset(&st);
			return -1;
		}
		a->diag.nodes = x;
		a->cap_nodes = c;
	}
	add_plugin_status(a, &st);
	a->diag.nodes[a->diag.n].node = ni;
	a->diag.nodes[a->diag.n].status = st;
	a->diag.n++;
	return 0;
}

static bool in_sorted(const struct sk_prefilter_result *r, const char *name)
{
	int lo = 0, hi = r->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(r->names[mid], name);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

static const char *node_name(const struct sk_node_info *ni) { return ni->node ? ni->node->name : ""; }

/* ---------- filtering ---------- */

/* Filter over the candidate nodes in chunks (sk_parallel_for_range): chunks are claimed in scan
 * order and the serial result is rebuilt from res afterwards (pass_filters), so which thread
 * ran a chunk, and how far past the cut-off the loop ran, never shows in the result.
 *
 * The cut-off is the (want+1)-th feasible node in scan order. A chunk all of whose predecessors
 * have finished (the "head": it starts at done_end) knows the feasible count before it
 * (done_feasible) and stops right after that node, in the middle of the chunk, instead of
 * finishing it: on one thread, that is every chunk, so Filter evaluates exactly the nodes up to
 * the cut-off instead of up to the end of its chunk (501 nodes per pod instead of 560 at 5,000
 * nodes, SchedulingBasic). Chunks finish under mu (a few per cycle), which advances done_end over every finished
 * chunk in order. */
struct filter_job {
	struct sk_framework *fw;
	struct sk_cycle_state *cs;
	const struct sk_pod *pod;
	const struct sk_node_info *const *nodes;
	int n, start, want, chunk;
	uint8_t *res;          /* SK_FW_FEASIBLE, SK_FW_REJECTED, SK_FW_FAILED (runtime.h) */
	struct sk_status *st;
	int *chunk_found;      /* all 0 on entry; see struct sk_scheduler */
	atomic_int feasible;   /* in every finished chunk */
	atomic_int cancel;
	atomic_int hi;         /* end of the highest chunk run: res is zero from there on */
	pthread_mutex_t mu;    /* guards chunk_found and the writes of done_end, done_feasible */
	atomic_int done_end;   /* every chunk below has finished */
	atomic_int done_feasible; /* feasible nodes below done_end (written before done_end) */
};

/* Records the chunk at begin, with `found` feasible nodes, as finished and advances done_end. */
static void filter_chunk_done(struct filter_job *j, int begin, int found)
{
	pthread_mutex_lock(&j->mu);
	j->chunk_found[begin / j->chunk] = 1 + found;
	int de = atomic_load_explicit(&j->done_end, memory_order_relaxed);
	int df = atomic_load_explicit(&j->done_feasible, memory_order_relaxed);
	while (de < j->n && j->chunk_found[de / j->chunk]) {
		df += j->chunk_found[de / j->chunk] - 1;
		de = de + j->chunk < j->n ? de + j->chunk : j->n;
	}
	atomic_store_explicit(&j->done_feasible, df, memory_order_relaxed);
	atomic_store_explicit(&j->done_end, de, memory_order_release);
	pthread_mutex_unlock(&j->mu);
}

/* Nodes a chunk filters between two looks at whether it became the head (below): the cut-off
 * stays exact for the head, and a chunk that becomes the head in the middle of a run evaluates at
 * most this many nodes past it, whose statuses pass_filters drops. */
#define FILTER_RUN 16

static void filter_range(int begin, int end, void *arg)
{
	struct filter_job *j = arg;
	int found = 0; /* counted per chunk: one shared atomic add per node would bounce its cache line */
	/* Once this chunk is the head it stays so (done_end cannot pass an unfinished chunk), and
	 * then its (stop)-th feasible node is the cut-off. */
	bool head = false;
	int stop = 0;
	/* sk_fw_run_filter_with_nominated's common case, decided once per chunk: nobody is nominated
	 * (the count is read without the lock there too). Otherwise per node: the nodes nobody is
	 * nominated to still run in batches, as in the plain case. */
	struct sk_nominator *nom = sk_framework_env(j->fw)->nominator;
	bool plain = !nom || sk_nominator_count(nom) == 0;
	int idx = j->start + begin;
	if (idx >= j->n)
		idx -= j->n;
	sk_fw_filter_chunk_begin(j->fw); /* scheduler_plugin_evaluation_total, summed per chunk */
	for (int i = begin; i < end;) {
		if (!head && atomic_load_explicit(&j->done_end, memory_order_acquire) == begin) {
			head = true;
			stop = j->want + 1 - atomic_load_explicit(&j->done_feasible, memory_order_relaxed);
		}
		if (head && found >= stop) {
			/* the cut-off is behind: the rest of the chunk cannot be in the result */
			atomic_store(&j->cancel, 1);
			break;
		}
		if (!plain && sk_fw_nominated_maybe_on(nom, j->nodes[idx])) {
			const struct sk_node_info *ni = j->nodes[idx];
			if (++idx == j->n)
				idx = 0;
			struct sk_status st = sk_fw_run_filter_with_nominated(j->fw, j->cs, j->pod, ni);
			if (st.code == SK_SUCCESS) {
				j->res[i] = SK_FW_FEASIBLE;
				found++;
			} else {
				j->res[i] = st.code == SK_ERROR ? SK_FW_FAILED : SK_FW_REJECTED;
				j->st[i] = st;
				if (st.code == SK_ERROR)
					atomic_store(&j->cancel, 1);
			}
			i++;
			continue;
		}
		/* a run ends at the chunk's end, at the wrap of the scan, and, until this chunk is
		 * the head, after FILTER_RUN nodes */
		int len = end - i;
		if (len > j->n - idx)
			len = j->n - idx;
		if (!head && len > FILTER_RUN)
			len = FILTER_RUN;
		if (!plain) /* up to the next node somebody may be nominated to */
			for (int k = 1; k < len; k++)
				if (sk_fw_nominated_maybe_on(nom, j->nodes[idx + k])) {
					len = k;
					break;
				}
		int ran = 0;
		int ok = sk_fw_run_filter_nodes(j->fw, j->cs, j->pod, j->nodes + idx, len, head ? stop - found : INT_MAX,
						j->res + i, j->st + i, &ran);
		found += ok;
		for (int k = i; ok < ran && k < i + ran; k++)
			if (j->res[k] == SK_FW_FAILED)
				atomic_store(&j->cancel, 1);
		i += ran;
		idx += ran;
		if (idx == j->n)
			idx = 0;
	}
	sk_fw_filter_chunk_end(j->fw);
	if (found && atomic_fetch_add(&j->feasible, found) + found > j->want)
		atomic_store(&j->cancel, 1);
	filter_chunk_done(j, begin, found);
	int hi = atomic_load_explicit(&j->hi, memory_order_relaxed);
	while (end > hi && !atomic_compare_exchange_weak_explicit(&j->hi, &hi, end, memory_order_relaxed,
								   memory_order_relaxed))
		;
}

static int ensure_scratch(struct sk_scheduler *s, int n)
{
	if (n <= s->cap)
		return 0;
	uint8_t *res = realloc(s->res, (size_t)n);
	if (!res)
		return -1;
	memset(res + s->cap, 0, (size_t)(n - s->cap)); /* res is all zero between cycles */
	s->res = res;
	struct sk_status *st = realloc(s->st, (size_t)n * sizeof(*st));
	if (!st)
		return -1;
	s->st = st;
	int *cf = realloc(s->chunk_found, (size_t)n * sizeof(*cf)); /* at most n chunks */
	if (!cf)
		return -1;
	memset(cf + s->cap, 0, (size_t)(n - s->cap) * sizeof(*cf)); /* all zero between cycles */
	s->chunk_found = cf;
	s->cap = n;
	return 0;
}

/* The length of the run of SK_FW_FEASIBLE entries of res from i (res[i] is one), up to lim:
 * eight entries a step while they last (the feasible nodes of a cycle mostly come in one run). */
static int feasible_run(const uint8_t *res, int i, int lim)
{
	const uint64_t ones = 0x0101010101010101u;
	int r = i + 1;
	for (uint64_t w; r + 8 <= lim && (memcpy(&w, res + r, 8), w == ones);)
		r += 8;
	while (r < lim && res[r] == SK_FW_FEASIBLE)
		r++;
	return r - i;
}

/* findNodesThatPassFilters. feasible receives up to `want` nodes (caller-allocated, size >= want).
 * Returns the feasible count, sets *processed, or -1 with *err set (Error status). */
static int pass_filters(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
			const struct sk_pod *pod, struct attempt *a, const struct sk_node_info *const *nodes, int n,
			int want, const struct sk_node_info **feasible, int *processed, struct sk_status *err)
{
	*processed = 0;
	if (n == 0)
		return 0;
	int start = s->next_start % n;
	if (!sk_framework_has(fw, SK_EP_FILTER)) {
		int k = want < n ? want : n;
		for (int i = 0; i < k; i++)
			feasible[i] = nodes[(start + i) % n];
		*processed = k;
		return k;
	}
	if (ensure_scratch(s, n) != 0) {
		*err = sk_status(SK_ERROR, "filtering nodes: out of memory");
		return -1;
	}
	const struct sk_framework_env *fenv = sk_framework_env(fw);
	struct filter_job j = { .fw = fw, .cs = cs, .pod = pod, .nodes = nodes, .n = n, .start = start,
				.want = want, .chunk = sk_pool_chunk_size(n, sk_pool_parallelism(fenv->pool)),
				.res = s->res, .st = s->st, .chunk_found = s->chunk_found };
	atomic_init(&j.feasible, 0);
	atomic_init(&j.cancel, 0);
	atomic_init(&j.hi, 0);
	atomic_init(&j.done_end, 0);
	atomic_init(&j.done_feasible, 0);
	pthread_mutex_init(&j.mu, NULL);
	sk_parallel_for_range(fenv->pool, n, j.chunk, filter_range, &j, &j.cancel);
	pthread_mutex_destroy(&j.mu);

	/* Serial order: stop at the (want+1)-th feasible node or at the first error, as a single
	 * worker would (upstream cancels the other workers in both cases). */
	int nf = 0, i = 0, rc = 0, added = 0;
	uint8_t *const res = s->res;
	while (i < n && res[i]) {
		int idx = start + i < n ? start + i : start + i - n;
		if (res[i] == SK_FW_FEASIBLE) {
			if (nf == want)
				break; /* the (want+1)-th: upstream cancels here and drops it */
			int run = feasible_run(res, i, n < i + want - nf ? n : i + want - nf);
			int first = run < n - idx ? run : n - idx; /* the scan wraps at n */
			memcpy(feasible + nf, nodes + idx, (size_t)first * sizeof(*feasible));
			memcpy(feasible + nf + first, nodes, (size_t)(run - first) * sizeof(*feasible));
			nf += run;
			i += run;
			continue;
		}
		if (res[i] == SK_FW_FAILED) {
			*err = s->st[i];
			res[i] = 0;
			rc = -1;
			i++;
			break;
		} else {
			add_node_status(a, nodes[idx], s->st[i]);
			added++;
			res[i] = 0;
		}
		i++;
	}
	/* Statuses computed past the serial cut-off (other threads' chunks) are dropped; only the
	 * chunks that ran (below hi) were written, and res goes back to all zero for the next cycle. */
	int hi = atomic_load(&j.hi);
	for (int k = i; k < hi; k++)
		if (s->res[k] >= SK_FW_REJECTED)
			sk_status_reset(&s->st[k]);
	memset(s->res, 0, (size_t)hi);
	memset(s->chunk_found, 0, (size_t)((hi + j.chunk - 1) / j.chunk) * sizeof(*s->chunk_found));
	/* upstream advances nextStartNodeIndex by what was processed even when a Filter errored */
	*processed = nf + added;
	return rc ? -1 : nf;
}

/* ---------- extenders (pkg/scheduler/extender.go and staging/src/k8s.io/kube-scheduler/extender/v1/types.go) ---------- */

/* Adds an extender's rejection of `name` to the diagnosis (findNodesThatPassExtenders): an
 * UnschedulableAndUnresolvable one replaces the node's status keeping its reasons; an
 * Unschedulable one appends to an existing status. */
static void add_extender_status(struct attempt *a, const struct sk_snapshot *snap, const struct sk_extender_failed *f)
{
	const struct sk_node_info *ni = sk_snapshot_get(snap, f->node);
	if (!ni)
		return; /* not a node of this snapshot: nothing to key it by */
	for (int i = 0; i < a->diag.n; i++) {
		struct sk_status *st = &a->diag.nodes[i].status;
		if (a->diag.nodes[i].node != ni)
			continue;
		if (f->unresolvable)
			st->code = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
		sk_status_addf(st, "%s", f->message);
		return;
	}
	struct sk_status st = sk_statusf(f->unresolvable ? SK_UNSCHEDULABLE_AND_UNRESOLVABLE : SK_UNSCHEDULABLE, "%s",
					 f->message);
	st.plugin = SK_EXTENDER_NAME;
	add_node_status(a, ni, st);
}

/* Runs the filter extenders in order over feasible[0..*nf) (narrowed in place). record: put the
 * rejections in the diagnosis. 0, or -1 and *err (Error) when a non-ignorable extender failed. */
static int pass_extenders(struct sk_framework *fw, const struct sk_pod *pod, struct attempt *a,
			  const struct sk_snapshot *snap, const struct sk_node_info **feasible, int *nf, bool record,
			  struct sk_status *err)
{
	int next = sk_framework_nextenders(fw);
	for (int i = 0; i < next && *nf > 0; i++) {
		const struct sk_extender *e = sk_framework_extender(fw, i);
		if (!sk_extender_is_filter(e) || !sk_extender_is_interested(e, pod))
			continue;
		struct sk_extender_filter_result r;
		char *msg = NULL;
		if (sk_extender_filter(e, pod, (const struct sk_node_info *const *)feasible, *nf, &r, &msg) != 0) {
			if (sk_extender_is_ignorable(e)) {
				klog_info(2, "Skipping extender as it returned error and has ignorable flag set",
					  " pod=%s/%s extender=%s err=\"%s\"", pod->ns, pod->name, sk_extender_name(e),
					  msg ? msg : "");
				free(msg);
				continue;
			}
			*err = sk_statusf(SK_ERROR, "%s", msg ? msg : "extender filter failed");
			free(msg);
			return -1;
		}
		if (record)
			for (int k = 0; k < r.nfailed; k++)
				add_extender_status(a, snap, &r.failed[k]);
		memcpy(feasible, r.nodes, (size_t)r.n * sizeof(*feasible));
		*nf = r.n;
		sk_extender_filter_result_free(&r);
	}
	return 0;
}

/* Prioritize extenders, all at once as upstream (sk_extenders_prioritize, extender_parallel.c):
 * adds Score × weight × 10 to totals. Errors are ignored, as upstream does. */
static void run_prioritize_extenders(struct sk_framework *fw, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int n, int64_t *totals)
{
	int next = sk_framework_nextenders(fw);
	const struct sk_extender *list[16], **es = next <= 16 ? list : malloc((size_t)next * sizeof(*es));
	if (!es)
		return;
	for (int i = 0; i < next; i++)
		es[i] = sk_framework_extender(fw, i);
	sk_extenders_prioritize(es, next, pod, nodes, n, totals);
	if (es != list)
		free(es);
}

/* extendersBinding: the first interested binder binds. Returns false when no extender bound
 * (then the Bind plugins run); else true with *st Success or Error. */
static bool extenders_bind(struct sk_framework *fw, const struct sk_pod *pod, const char *node, struct sk_status *st)
{
	int next = sk_framework_nextenders(fw);
	for (int i = 0; i < next; i++) {
		const struct sk_extender *e = sk_framework_extender(fw, i);
		if (!sk_extender_is_binder(e) || !sk_extender_is_interested(e, pod))
			continue;
		char *msg = NULL;
		if (sk_extender_bind(e, pod, node, &msg) != 0) {
			if (sk_extender_is_ignorable(e)) {
				klog_info(2, "Skipping extender in bind as it returned error and has ignorable flag set",
					  " pod=%s/%s extender=%s err=\"%s\"", pod->ns, pod->name, sk_extender_name(e),
					  msg ? msg : "");
				free(msg);
				continue;
			}
			*st = sk_statusf(SK_ERROR, "%s", msg ? msg : "extender bind failed");
			free(msg);
			return true;
		}
		*st = sk_ok();
		return true;
	}
	return false;
}

/* ---------- scheduling algorithm (pkg/scheduler/schedule_one.go: schedulePod) ---------- */

enum algo_result { ALGO_HOST, ALGO_FIT_ERROR, ALGO_ERROR, ALGO_NO_NODES };

/* evaluateNominatedNode: a nominated node (earlier preemption) is tried alone first, Filters then
 * filter extenders. Returns it when it fits; else NULL, keeping its rejection for the diagnosis (an
 * error is logged, and the full pass runs either way). */
static const struct sk_node_info *evaluate_nominated_node(struct sk_framework *fw, struct sk_cycle_state *cs,
							  const struct sk_pod *pod, struct attempt *a,
							  const struct sk_snapshot *snap)
{
	const struct sk_node_info *ni = sk_snapshot_get(snap, pod->nominated_node_name);
	if (!ni)
		return NULL;
	struct sk_status fs = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	if (fs.code == SK_SUCCESS) {
		/* the extenders see it too; an extender error or rejection falls through to the full pass */
		const struct sk_node_info *one[1] = { ni };
		int n1 = 1;
		struct sk_status xe = sk_ok();
		if (pass_extenders(fw, pod, a, snap, one, &n1, false, &xe) == 0 && n1 == 1)
			return ni;
		if (xe.code == SK_ERROR) {
			char *m = sk_status_message(&xe);
			klog_info(2, "Evaluation failed on nominated node", " pod=%s/%s node=%s err=\"%s\"", pod->ns,
				  pod->name, node_name(ni), m ? m : "");
			free(m);
			sk_status_reset(&xe);
		}
	}
	if (fs.code == SK_ERROR) {
		klog_info(2, "Evaluation failed on nominated node", " pod=%s/%s node=%s", pod->ns, pod->name,
			  node_name(ni));
		sk_status_reset(&fs);
	} else {
		a->nominated_status = fs;
		a->nominated_ni = ni;
	}
	return NULL;
}

/* NodeToStatus.SetAbsentNodesStatus for a narrowing PreFilterResult. v1.32+: the nodes left out
 * count as UU in the histogram, naming the narrowing plugins sorted. */
static void set_absent_nodes_status(struct attempt *a, const char *const *narrowing, int nnarrowing)
{
	const char *sorted[MAX_PLUGIN_NAMES];
	memcpy(sorted, narrowing, (size_t)nnarrowing * sizeof(*sorted));
	qsort(sorted, (size_t)nnarrowing, sizeof(*sorted), cmp_cstr);
	char buf[1024];
	size_t off = 0;
	buf[off++] = '[';
	for (int i = 0; i < nnarrowing && off < sizeof(buf) - 2; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - 2 - off, "%s%s", i ? " " : "", sorted[i]);
	if (off > sizeof(buf) - 2)
		off = sizeof(buf) - 2;
	buf[off++] = ']';
	buf[off] = '\0';
	a->absent = sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) %s", buf);
	a->has_absent = true;
	a->absent_plugin = nnarrowing ? narrowing[0] : "";
}

/* The snapshot's nodes that the PreFilterResult kept, in snapshot order, into *list (the caller
 * frees it); a name the snapshot does not hold is left out, as upstream's findNodesThatFitPod
 * (pkg/scheduler/schedule_one.go) does. Returns their count, or -1 when out of memory. */
static int nodes_in_prefilter_result(const struct attempt *a, const struct sk_snapshot *snap,
				     const struct sk_node_info ***list)
{
	const struct sk_node_info **l = malloc((size_t)(a->pre.n ? a->pre.n : 1) * sizeof(*l));
	if (!l)
		return -1;
	int n = 0;
	if (a->pre.n == 1) { /* a DaemonSet pod's one node: looked up, not searched for among 15,000 */
		const struct sk_node_info *ni = sk_snapshot_get(snap, a->pre.names[0]);
		if (ni)
			l[n++] = ni;
	} else {
		for (int i = 0; i < snap->nnodes && n < a->pre.n; i++)
			if (in_sorted(&a->pre, node_name(snap->nodes[i])))
				l[n++] = snap->nodes[i];
	}
	*list = l;
	return n;
}

/* numFeasibleNodesToFind over n candidate nodes; *ext_filter tells whether a filter extender is
 * configured (findNodesThatPassExtenders then runs). */
static int num_nodes_to_find(struct sk_framework *fw, int n, bool *ext_filter)
{
	const struct sk_config *cfg = sk_framework_config(fw);
	int want = cfg ? sk_num_feasible_nodes_to_find(cfg, sk_framework_profile(fw), n) : n;
	bool ext_score = false;
	*ext_filter = false;
	for (int i = 0; i < sk_framework_nextenders(fw); i++) {
		*ext_filter |= sk_extender_is_filter(sk_framework_extender(fw, i));
		ext_score |= sk_extender_is_prioritizer(sk_framework_extender(fw, i));
	}
	/* one node is enough only when nothing scores and no extender filters */
	if (!sk_framework_has(fw, SK_EP_SCORE) && !ext_score && !*ext_filter)
		want = 1;
	return want < 1 ? 1 : want;
}

/* The nominated node's status stays unless the full pass produced one for it; upstream counts
 * every entry of its NodeToStatus map as processed, so *processed grows when it is added. */
static void keep_nominated_status(struct attempt *a, const struct sk_node_info *const *feasible, int nf,
				  int *processed)
{
	if (!a->nominated_ni)
		return;
	for (int i = 0; i < a->diag.n; i++)
		if (a->diag.nodes[i].node == a->nominated_ni)
			return;
	for (int i = 0; i < nf; i++)
		if (feasible[i] == a->nominated_ni)
			return;
	add_node_status(a, a->nominated_ni, a->nominated_status);
	a->nominated_status = sk_ok();
	(*processed)++;
}

/* RunPreFilterPlugins as findNodesThatFitPod handles it. Returns 0 to go on filtering, 1 when
 * PreFilter rejected the pod (the diagnosis says why), -1 with *err on an error. */
static int run_pre_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			  struct attempt *a, const char **narrowing, int *nnarrowing, struct sk_status *err)
{
	struct sk_status st = sk_fw_run_pre_filter(fw, cs, pod, &a->pre, narrowing, MAX_PLUGIN_NAMES, nnarrowing);
	/* Upstream's RunPreFilterPlugins hands back the plugins that narrowed (PreFilterResult) as the
	 * diagnosis' UnschedulablePlugins, except when one plugin returned UU on its own (nil set). So
	 * the events of a narrowing plugin (NodeAffinity: node label changes) requeue the pod. */
	if (st.code != SK_ERROR && !(st.code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE && st.plugin))
		for (int i = 0; i < *nnarrowing; i++)
			add_unschedulable_plugin(a, narrowing[i]);
	if (st.code == SK_SUCCESS)
		return 0;
	if (!sk_is_rejected(&st)) {
		*err = st;
		return -1;
	}
	a->diag.prefilter_msg = sk_status_message(&st);
	/* Every node carries the PreFilter status: plain Unschedulable leaves them all as
	 * preemption candidates (pkg/scheduler/framework/preemption/preemption.go (SelectVictimsOnNode)). */
	a->diag.absent_unschedulable = st.code == SK_UNSCHEDULABLE;
	add_plugin_status(a, &st);
	a->absent = st;
	a->has_absent = true;
	a->absent_plugin = st.plugin;
	return 1;
}

/* findNodesThatFitPod: PreFilter, the nominated node, Filter over the candidate nodes, then the
 * filter extenders. Returns the feasible count with *feasible (the caller frees it; NULL when
 * the count is 0), or -1 with *err (Error status). */
static int find_nodes_that_fit_pod(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
				   const struct sk_pod *pod, struct attempt *a, const struct sk_snapshot *snap,
				   const struct sk_node_info ***feasible, struct sk_status *err)
{
	const char *narrowing[MAX_PLUGIN_NAMES];
	int nnarrowing = 0;
	*feasible = NULL;
	int rc = run_pre_filter(fw, cs, pod, a, narrowing, &nnarrowing, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;

	if (pod->nominated_node_name && *pod->nominated_node_name) {
		const struct sk_node_info *ni = evaluate_nominated_node(fw, cs, pod, a, snap);
		if (ni) {
			a->nominated_fit = true;
			if (!(*feasible = malloc(sizeof(**feasible)))) {
				*err = sk_status(SK_ERROR, "filtering nodes: out of memory");
				return -1;
			}
			(*feasible)[0] = ni;
			return 1;
		}
	}

	const struct sk_node_info *const *nodes = (const struct sk_node_info *const *)snap->nodes;
	const struct sk_node_info **list = NULL;
	int n = snap->nnodes;
	if (!a->pre.all) {
		if ((n = nodes_in_prefilter_result(a, snap, &list)) < 0) {
			*err = sk_status(SK_ERROR, "filtering nodes: out of memory");
			return -1;
		}
		nodes = list;
		set_absent_nodes_status(a, narrowing, nnarrowing);
	}

	bool ext_filter;
	int want = num_nodes_to_find(fw, n, &ext_filter);
	const struct sk_node_info **fs = malloc((size_t)want * sizeof(*fs));
	if (!fs) {
		*err = sk_status(SK_ERROR, "filtering nodes: out of memory");
		free(list);
		return -1;
	}
	int processed = 0;
	int64_t t0 = a->record ? kube_mono_ns() : 0;
	int nf = pass_filters(s, fw, cs, pod, a, nodes, n, want, fs, &processed, err);
	if (t0)
		sk_rec_time("Filter", (double)(kube_mono_ns() - t0) / 1e9);
	free(list);
	keep_nominated_status(a, fs, nf, &processed);
	/* upstream advances nextStartNodeIndex whether or not an error occurred */
	s->next_start = (s->next_start + processed) % snap->nnodes;
	if (nf >= 0 && ext_filter) {
		int before = nf;
		if (pass_extenders(fw, pod, a, snap, fs, &nf, true, err) != 0)
			nf = -1;
		else if (nf != before)
			add_unschedulable_plugin(a, SK_EXTENDER_NAME);
	}
	if (nf <= 0) {
		free(fs);
		fs = NULL;
	}
	*feasible = fs;
	return nf;
}

/* prioritizeNodes: the total score of each feasible node, in feasible order. Returns
 * a->scores.total, or *ones (the caller frees it) when no Score plugin runs; NULL with *err on
 * an error. */
static const int64_t *prioritize_nodes(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
				       const struct sk_pod *pod, struct attempt *a,
				       const struct sk_node_info *const *feasible, int nf, int64_t **ones,
				       struct sk_status *err)
{
	(void)s;
	int next = sk_framework_nextenders(fw);
	*ones = NULL;
	if (!sk_framework_has(fw, SK_EP_SCORE)) {
		/* no Score plugins: every node scores 1 without extenders, 0 + extender scores with */
		int64_t *t = malloc((size_t)nf * sizeof(*t));
		if (!t) {
			*err = sk_status(SK_ERROR, "scoring nodes: out of memory");
			return NULL;
		}
		for (int i = 0; i < nf; i++)
			t[i] = next > 0 ? 0 : 1;
		if (next > 0)
			run_prioritize_extenders(fw, pod, feasible, nf, t);
		*ones = t;
		return t;
	}
	struct sk_status st = sk_fw_run_pre_score(fw, cs, pod, feasible, nf);
	if (st.code == SK_SUCCESS)
		st = sk_fw_run_score(fw, cs, pod, feasible, nf, &a->scores);
	if (st.code != SK_SUCCESS) {
		*err = st;
		return NULL;
	}
	a->scored = true;
	if (next > 0)
		run_prioritize_extenders(fw, pod, feasible, nf, a->scores.total);
	if (a->details) {
		a->score_nodes = malloc((size_t)nf * sizeof(char *));
		for (int i = 0; a->score_nodes && i < nf; i++)
			a->score_nodes[i] = node_name(feasible[i]);
	}
	return a->scores.total;
}

/* selectHost: the index of a highest total. Ties are broken uniformly by reservoir sampling (the
 * k-th tied node replaces the pick with probability 1/k), as upstream does. */
static int select_host(struct sk_scheduler *s, const int64_t *totals, int n)
{
	int best = 0, cnt = 1;
	if (s->env.rand) { /* an injected source (simulate, tests) */
		for (int i = 1; i < n; i++) {
			if (totals[i] > totals[best]) {
				best = i;
				cnt = 1;
			} else if (totals[i] == totals[best]) {
				cnt++;
				if (next_rand(s) % (uint64_t)cnt == 0)
					best = i;
			}
		}
		return best;
	}
	/* next_rand's xorshift64* with its state and the best total in registers: the same draws,
	 * one per tie, in the same order */
	uint64_t x = s->rng;
	int64_t top = n > 0 ? totals[0] : 0;
	for (int i = 1; i < n; i++) {
		if (totals[i] > top) {
			top = totals[i];
			best = i;
			cnt = 1;
		} else if (totals[i] == top) {
			cnt++;
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			if (x * 0x2545F4914F6CDD1DULL % (uint64_t)cnt == 0)
				best = i;
		}
	}
	s->rng = x;
	return best;
}

/* schedulePod: snapshot, findNodesThatFitPod, then (for more than one feasible node)
 * prioritizeNodes and selectHost. */
static enum algo_result schedule_pod(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
				     const struct sk_pod *pod, struct attempt *a, const char **host,
				     struct sk_status *err, int *num_all)
{
	char *e = NULL;
	const struct sk_snapshot *snap = s->env.update_snapshot ? s->env.update_snapshot(s->env.ctx, &e) : NULL;
	if (!snap) {
		*err = sk_statusf(SK_ERROR, "%s", e ? e : "no snapshot");
		free(e);
		return ALGO_ERROR;
	}
	s->snapshot = snap;
	*num_all = snap->nnodes;
	a->diag.num_all_nodes = snap->nnodes;
	if (snap->nnodes == 0) {
		*err = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "no nodes available to schedule pods");
		return ALGO_NO_NODES;
	}

	const struct sk_node_info **feasible = NULL;
	int nf = find_nodes_that_fit_pod(s, fw, cs, pod, a, snap, &feasible, err);
	if (nf < 0)
		return ALGO_ERROR;
	if (nf == 0)
		return ALGO_FIT_ERROR;
	enum algo_result ret = ALGO_HOST;
	if (nf == 1) {
		*host = node_name(feasible[0]);
	} else {
		int64_t *ones = NULL;
		const int64_t *totals = prioritize_nodes(s, fw, cs, pod, a, feasible, nf, &ones, err);
		if (totals)
			*host = node_name(feasible[select_host(s, totals, nf)]);
		else
			ret = ALGO_ERROR;
		free(ones);
	}
	free(feasible);
	return ret;
}

/* ---------- outcome ---------- */

/* Copies the per-node filter details out of the snapshot while the scheduling thread still owns
 * it (binding cycles run later, on other threads, while the snapshot moves on). */
static void capture_details(struct sk_scheduler *s, struct attempt *a)
{
	if (!a->details || a->filters)
		return;
	const struct sk_snapshot *snap = s->snapshot;
	int nabs = a->has_absent && snap ? snap->nnodes : 0;
	a->filters = calloc((size_t)(a->diag.n + nabs + 1), sizeof(*a->filters));
	if (!a->filters)
		return;
	for (int i = 0; i < a->diag.n; i++) {
		struct sk_outcome_filter *f = &a->filters[a->nfilters++];
		f->node = node_name(a->diag.nodes[i].node);
		f->plugin = a->diag.nodes[i].status.plugin ? a->diag.nodes[i].status.plugin : "";
		f->status = &a->diag.nodes[i].status;
	}
	for (int i = 0; i < nabs; i++) {
		const char *nn = node_name(snap->nodes[i]);
		if (!a->pre.all && a->diag.prefilter_msg == NULL && in_sorted(&a->pre, nn))
			continue;
		struct sk_outcome_filter *f = &a->filters[a->nfilters++];
		f->node = nn;
		f->plugin = a->absent_plugin ? a->absent_plugin : "";
		f->status = &a->absent;
	}
}

/* The decision-record part of the outcome (docs/explain.md). */
static void outcome_record_details(struct sk_outcome *o, const struct attempt *a, const struct sk_pod *pod)
{
	o->record = a->record;
	o->annotate = a->annotate;
	o->num_all_nodes = a->diag.num_all_nodes;
	o->prefilter_nodes = a->pre.all ? -1 : a->pre.n;
	o->prefilter_message = a->diag.prefilter_msg;
	o->nominated_path = pod->nominated_node_name && *pod->nominated_node_name ? pod->nominated_node_name : NULL;
	o->nominated_path_fit = a->nominated_fit;
	o->permit_wait = a->permit_wait;
	o->trace = &a->trace;
}

static void deliver(struct sk_scheduler *s, struct sk_framework *fw, const struct sk_pod *pod, int attempts,
		    enum sk_result r, const char *node, const char *msg, struct attempt *a, int64_t start)
{
	if (!s->env.observe)
		return;
	struct sk_outcome o = { .pod = pod, .profile = sk_framework_profile_name(fw), .result = r, .node = node,
				.message = msg, .attempts = attempts,
				.duration_s = (double)(kube_mono_ns() - start) / 1e9 };
	if (a) {
		o.nominated_node = a->nominate && a->nominated_node && *a->nominated_node ? a->nominated_node : NULL;
		o.algorithm_s = a->algorithm_s;
		if (a->details) {
			o.nfilter = a->nfilters;
			o.filter = a->filters;
			if (a->scored && a->score_nodes) {
				o.scores = &a->scores;
				o.score_nodes = a->score_nodes;
				o.take_scores = &a->scores;
				o.take_score_nodes = &a->score_nodes;
			}
			outcome_record_details(&o, a, pod);
		}
	}
	s->env.observe(s->env.ctx, &o);
}

/* ---------- failure handling ---------- */

/* handleSchedulingFailure. Consumes qp (requeued or done). */
static void handle_failure(struct sk_scheduler *s, struct sk_framework *fw, struct sk_queued_pod *qp, bool rejected,
			   const char *message, struct attempt *a, int64_t start)
{
	struct sk_pod *pod = sk_pod_ref(qp->pod);
	int attempts = qp->attempts;
	const char *reason = rejected ? "Unschedulable" : "SchedulerError";
	qp->nunschedulable_plugins = 0;
	qp->npending_plugins = 0;
	if (a && a->fit) {
		for (int i = 0; i < a->diag.nunschedulable_plugins && i < 16; i++)
			qp->unschedulable_plugins[qp->nunschedulable_plugins++] = a->diag.unschedulable_plugins[i];
		for (int i = 0; i < a->npending && i < 8; i++)
			qp->pending_plugins[qp->npending_plugins++] = a->pending_plugins[i];
	}
	if (rejected)
		klog_info(2, "Unable to schedule pod; no fit; waiting", " pod=%s/%s err=\"%s\"", pod->ns, pod->name,
			  message);
	else
		klog_error("Error scheduling pod; retrying", " pod=%s/%s err=\"%s\"", pod->ns, pod->name, message);

	struct sk_pod *fresh = s->env.get_pod ? s->env.get_pod(s->env.ctx, pod) : sk_pod_ref(pod);
	if (!fresh || fresh->node_name) {
		if (!fresh)
			klog_info(0, "Pod doesn't exist in informer cache", " pod=%s/%s", pod->ns, pod->name);
		else
			klog_info(0, "Pod has been assigned to node. Abort adding it back to queue.", " pod=%s/%s node=%s",
				  pod->ns, pod->name, fresh->node_name);
		sk_queue_done(s->q, qp);
		/* upstream still calls AddNominatedPod, which drops the old nomination first and then
		 * refuses a pod that is gone or already bound */
		if (s->env.nominator)
			sk_nominator_delete(s->env.nominator, pod->uid);
	} else {
		sk_queue_add_unschedulable(s->q, qp, fresh);
		if (s->env.nominator)
			sk_nominator_add(s->env.nominator, fresh,
					 a && a->nominate ? (a->nominated_node ? a->nominated_node : "") : NULL);
	}
	sk_pod_unref(fresh);

	const struct sk_framework_env *fenv = sk_framework_env(fw);
	if (fenv->event) {
		char *note = sk_truncate_event_message(message);
		fenv->event(fenv->ctx, pod, "Warning", "FailedScheduling", "Scheduling", note ? note : message);
		free(note);
	}
	if (s->env.patch_failure)
		s->env.patch_failure(s->env.ctx, pod, reason, message, a && a->nominate,
				     a && a->nominated_node ? a->nominated_node : "");
	deliver(s, fw, pod, attempts, rejected ? SK_RESULT_UNSCHEDULABLE : SK_RESULT_ERROR, NULL, message, a, start);
	sk_pod_unref(pod);
}

/* A rejection at Reserve/Permit/WaitOnPermit/PreBind: FitError over one node. */
static char *single_node_fit_error(struct attempt *a, const struct sk_status *st)
{
	struct sk_node_status ns = { .node = NULL, .status = *st };
	a->fit = true;
	a->diag.nunschedulable_plugins = 0;
	a->npending = 0;
	add_plugin_status(a, st);
	return sk_fit_error_message(1, &ns, 1, NULL, NULL, NULL);
}

static char *status_text(const struct sk_status *st)
{
	char *m = sk_status_message(st);
	return m ? m : strdup("");
}

/* ---------- binding cycle ---------- */

static void activate_pods(struct sk_scheduler *s, struct sk_cycle_state *cs)
{
	char **keys = NULL;
	int n = sk_cycle_state_take_pods_to_activate(cs, &keys);
	if (n > 0)
		sk_queue_activate(s->q, keys, n);
	for (int i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static bool not_this_pod(void *uid, const struct sk_pod *pod) { return strcmp(pod->uid, (const char *)uid) != 0; }

static void binding_cycle(struct sk_scheduler *s, struct bind_job *j)
{
	struct sk_framework *fw = j->fw;
	struct attempt *a = j->att;
	struct sk_rec_trace *prev = sk_rec_set_current(a->record ? &a->trace : NULL);
	if (s->env.working)
		s->env.working(s->env.ctx, "binding", 1);
	int64_t w0 = a->permit_wait ? kube_mono_ns() : 0;
	struct sk_status st = sk_fw_wait_on_permit(fw, j->assumed);
	if (w0)
		sk_rec_time("WaitOnPermit", (double)(kube_mono_ns() - w0) / 1e9);
	bool fit = false;
	if (st.code == SK_SUCCESS) {
		st = sk_fw_run_pre_bind(fw, j->cs, j->assumed, j->node);
		/* v1.33+: a rejection at PreBind or Bind is no FitError (upstream calls Done() after
		 * WaitOnPermit): the plain status message, no rejecting plugins, so the pod goes to the
		 * (error) backoff queue whatever its queueing hints say. */
		if (st.code == SK_SUCCESS) {
			if (!extenders_bind(fw, j->assumed, j->node, &st))
				st = sk_fw_run_bind(fw, j->cs, j->assumed, j->node);
			char *e = NULL;
			if (s->env.finish_binding && s->env.finish_binding(s->env.ctx, j->assumed, &e) != 0) {
				klog_error("Scheduler cache FinishBinding failed", " pod=%s/%s err=\"%s\"", j->assumed->ns,
					   j->assumed->name, e ? e : "");
				free(e);
			}
			if (st.code == SK_SUCCESS) {
				const struct sk_framework_env *fenv = sk_framework_env(fw);
				if (fenv->event) {
					char note[1024];
					snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", j->assumed->ns,
						 j->assumed->name, j->node);
					fenv->event(fenv->ctx, j->assumed, "Normal", "Scheduled", "Binding", note);
				}
			}
		}
	} else {
		fit = sk_is_rejected(&st);
	}
	if (st.code == SK_SUCCESS) {
		klog_info(2, "Successfully bound pod to node", " pod=%s/%s node=%s", j->assumed->ns, j->assumed->name,
			  j->node);
		sk_fw_run_post_bind(fw, j->cs, j->assumed, j->node);
		activate_pods(s, j->cs);
		deliver(s, fw, j->qp->pod, j->qp->attempts, SK_RESULT_SCHEDULED, j->node, NULL, a, j->start_ns);
		sk_queue_done(s->q, j->qp);
		goto out;
	}
	/* handleBindingCycleError */
	sk_fw_run_unreserve(fw, j->cs, j->assumed, j->node);
	char *e = NULL;
	bool forgot = !s->env.forget || s->env.forget(s->env.ctx, j->assumed, &e) == 0;
	if (!forgot) {
		klog_error("scheduler cache ForgetPod failed", " pod=%s/%s err=\"%s\"", j->assumed->ns, j->assumed->name,
			   e ? e : "");
		free(e);
	}
	free(a->message);
	a->message = fit ? single_node_fit_error(a, &st) : status_text(&st);
	a->nominate = true;
	a->nominated_node = "";
	a->fit = fit;
	if (!fit) {
		a->diag.nunschedulable_plugins = 0;
		a->npending = 0;
	}
	bool rejected = sk_is_rejected(&st);
	sk_status_reset(&st);
	handle_failure(s, fw, j->qp, rejected, a->message ? a->message : "", a, j->start_ns);
	/* The forgotten pod freed its resources: an AssignedPodDelete for the others. A rejected pod
	 * itself is left out (upstream's preCheck), it would only be retried for nothing. */
	if (forgot)
		sk_queue_move_all_checked(s->q, &SK_EVENT_ASSIGNED_POD_DELETE, j->assumed, NULL,
					  rejected ? not_this_pod : NULL, (void *)j->assumed->uid);
out:
	if (s->env.working)
		s->env.working(s->env.ctx, "binding", -1);
	sk_rec_set_current(prev);
}

static void bind_job_free(struct bind_job *j)
{
	sk_cycle_state_free(j->cs);
	sk_pod_unref(j->assumed);
	attempt_free(j->att);
	sk_framework_unref(j->fw);
	free(j);
}

static void *binder_main(void *arg)
{
	struct sk_scheduler *s = arg;
	pthread_mutex_lock(&s->bind_mu);
	for (;;) {
		while (!s->head && !s->stop) {
			s->idle_binders++;
			pthread_cond_wait(&s->bind_cv, &s->bind_mu);
			s->idle_binders--;
		}
		if (!s->head)
			break;
		struct bind_job *j = s->head;
		s->head = j->next;
		if (!s->head)
			s->tail = NULL;
		pthread_mutex_unlock(&s->bind_mu);
		binding_cycle(s, j);
		bind_job_free(j);
		pthread_mutex_lock(&s->bind_mu);
		if (--s->pending == 0)
			pthread_cond_broadcast(&s->idle_cv);
	}
	pthread_mutex_unlock(&s->bind_mu);
	return NULL;
}

static void submit_binding(struct sk_scheduler *s, struct bind_job *j)
{
	if (s->nbinders == 0) {
		binding_cycle(s, j);
		bind_job_free(j);
		return;
	}
	pthread_mutex_lock(&s->bind_mu);
	j->next = NULL;
	if (s->tail)
		s->tail->next = j;
	else
		s->head = j;
	s->tail = j;
	s->pending++;
	/* Wake a binder only when one waits, and after unlocking: a binder woken under the lock
	 * would block on it at once, and each needless wake-up preempts the scheduling thread
	 * (docs/benchmarks.md, "Where the end-to-end path goes"). */
	bool wake = s->idle_binders > 0;
	pthread_mutex_unlock(&s->bind_mu);
	if (wake)
		pthread_cond_signal(&s->bind_cv);
}

void sk_scheduler_wait_bindings(struct sk_scheduler *s)
{
	pthread_mutex_lock(&s->bind_mu);
	while (s->pending > 0)
		pthread_cond_wait(&s->idle_cv, &s->bind_mu);
	pthread_mutex_unlock(&s->bind_mu);
}

/* ---------- ScheduleOne ---------- */

/* skipPodSchedule: a pod being deleted, or one already assumed (an update of it came in while it
 * was binding). True when the attempt ends here. */
static bool skip_pod_schedule(struct sk_scheduler *s, struct sk_framework *fw, const struct sk_pod *pod)
{
	if (pod->terminating) {
		const struct sk_framework_env *fenv = sk_framework_env(fw);
		if (fenv->event) {
			char note[1100];
			snprintf(note, sizeof(note), "skip schedule deleting pod: %s/%s", pod->ns, pod->name);
			fenv->event(fenv->ctx, pod, "Warning", "FailedScheduling", "Scheduling", note);
		}
		return true;
	}
	return s->env.is_assumed && s->env.is_assumed(s->env.ctx, pod->uid);
}

/* A FitError from schedulePod: PostFilter (preemption) may nominate a node; without PostFilter
 * plugins upstream returns clearNominatedNode. Sets a->message. */
static void post_filter_fit_error(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  struct attempt *a, int num_all)
{
	const struct sk_status *absent = a->has_absent ? &a->absent : NULL;
	a->fit = true;
	if (!sk_framework_has(fw, SK_EP_POST_FILTER)) {
		a->nominate = true;
		a->nominated_node = "";
		a->message = sk_fit_error_message(num_all, a->diag.nodes, a->diag.n, absent, a->diag.prefilter_msg,
						  NULL);
		return;
	}
	struct sk_postfilter_result pr;
	bool have = false;
	struct sk_status ps = sk_fw_run_post_filter(fw, cs, pod, &a->diag, &pr, &have);
	char *pmsg = sk_status_message(&ps);
	if (ps.code == SK_ERROR)
		klog_error("Status after running PostFilter plugins for pod", " pod=%s/%s status=\"%s\"", pod->ns,
			   pod->name, pmsg ? pmsg : "");
	if (have) {
		a->nominate = true;
		a->nominated_node = pr.clear_nominated || !pr.nominated_node ? "" : pr.nominated_node;
	}
	a->message = sk_fit_error_message(num_all, a->diag.nodes, a->diag.n, absent, a->diag.prefilter_msg, pmsg);
	free(pmsg);
	sk_status_reset(&ps);
}

/* Assume, Reserve and Permit on host (schedulingCycle after schedulePod). Returns the assumed
 * pod, or NULL with a->message and *rejected when the attempt failed (everything undone). */
static struct sk_pod *assume_reserve_permit(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
					    const struct sk_pod *pod, struct attempt *a, const char *host,
					    bool *rejected)
{
	struct sk_pod *assumed = sk_pod_with_node(pod, host);
	char *e = NULL;
	*rejected = false;
	if (!assumed || (s->env.assume && s->env.assume(s->env.ctx, assumed, &e) != 0)) {
		a->message = e ? e : strdup("assuming pod: out of memory");
		a->nominate = true;
		a->nominated_node = "";
		sk_pod_unref(assumed);
		return NULL;
	}
	if (s->env.nominator)
		sk_nominator_delete(s->env.nominator, pod->uid);

	struct sk_status st = sk_fw_run_reserve(fw, cs, assumed, host);
	if (st.code == SK_SUCCESS)
		st = sk_fw_run_permit(fw, cs, assumed, host);
	if (st.code != SK_SUCCESS && st.code != SK_WAIT) {
		sk_fw_run_unreserve(fw, cs, assumed, host);
		if (s->env.forget && s->env.forget(s->env.ctx, assumed, &e) != 0) {
			klog_error("Scheduler cache ForgetPod failed", " pod=%s/%s err=\"%s\"", pod->ns, pod->name,
				   e ? e : "");
			free(e);
		}
		*rejected = sk_is_rejected(&st);
		a->message = *rejected ? single_node_fit_error(a, &st) : status_text(&st);
		a->nominate = true;
		a->nominated_node = "";
		sk_status_reset(&st);
		sk_pod_unref(assumed);
		return NULL;
	}
	a->permit_wait = st.code == SK_WAIT;
	sk_status_reset(&st);
	activate_pods(s, cs);
	return assumed;
}

/* schedulingCycle: schedulePod, then assume, Reserve and Permit. Returns the assumed pod (on
 * *host) for the binding cycle, or NULL with a->message and *rejected for handleSchedulingFailure. */
static struct sk_pod *scheduling_cycle(struct sk_scheduler *s, struct sk_framework *fw, struct sk_cycle_state *cs,
				       const struct sk_pod *pod, struct attempt *a, const char **host, bool *rejected)
{
	struct sk_status err = sk_ok();
	int num_all = 0;
	int64_t t0 = kube_mono_ns();
	enum algo_result r = schedule_pod(s, fw, cs, pod, a, host, &err, &num_all);
	capture_details(s, a);
	if (r == ALGO_HOST) {
		a->algorithm_s = (double)(kube_mono_ns() - t0) / 1e9;
		*host = sk_intern(*host);
		return assume_reserve_permit(s, fw, cs, pod, a, *host, rejected);
	}
	*rejected = true;
	if (r == ALGO_FIT_ERROR) {
		post_filter_fit_error(fw, cs, pod, a, num_all);
	} else {
		*rejected = sk_is_rejected(&err);
		a->message = status_text(&err);
		a->nominate = true; /* clearNominatedNode */
		a->nominated_node = "";
	}
	sk_status_reset(&err);
	return NULL;
}

/* Ends a failed attempt: handleSchedulingFailure consumes qp; a, cs and the framework reference
 * are released. */
static void fail_attempt(struct sk_scheduler *s, struct sk_framework *fw, struct sk_queued_pod *qp,
			 struct sk_cycle_state *cs, struct attempt *a, bool rejected, int64_t start)
{
	handle_failure(s, fw, qp, rejected, a->message ? a->message : "", a, start);
	attempt_free(a);
	sk_cycle_state_free(cs);
	sk_framework_unref(fw);
}

int sk_schedule_one(struct sk_scheduler *s, bool block)
{
	int64_t cycle = 0;
	struct sk_queued_pod *qp = block ? sk_queue_pop(s->q, &cycle) : sk_queue_try_pop(s->q, &cycle);
	if (!qp)
		return block ? -1 : 0;
	int64_t start = kube_mono_ns();
	struct sk_pod *pod = qp->pod;
	struct sk_framework *fw = sk_scheduler_framework(s, pod->scheduler_name ? pod->scheduler_name : "");
	if (!fw) {
		klog_error("Error occurred", " err=\"profile not found for scheduler name %s\"",
			   pod->scheduler_name ? pod->scheduler_name : "");
		sk_queue_done(s->q, qp);
		return 1;
	}
	if (skip_pod_schedule(s, fw, pod)) {
		sk_queue_done(s->q, qp);
		sk_framework_unref(fw);
		return 1;
	}

	struct attempt *a = calloc(1, sizeof(*a));
	/* Per-plugin metrics in 10% of the cycles; a generator of its own keeps the tie-break
	 * sequence (seeded in simulate) independent of sampling. */
	s->sample_rng ^= s->sample_rng << 13;
	s->sample_rng ^= s->sample_rng >> 7;
	s->sample_rng ^= s->sample_rng << 17;
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, s->sample_rng % 100 < 10);
	if (!a || !cs) {
		free(a);
		sk_cycle_state_free(cs);
		handle_failure(s, fw, qp, false, "scheduling cycle: out of memory", NULL, start);
		sk_framework_unref(fw);
		return 1;
	}
	a->pre.all = true;
	const struct sk_profile_config *pcfg = sk_framework_profile(fw);
	a->record = pcfg && pcfg->records.enabled;
	a->annotate = pcfg && pcfg->records.annotations;
	a->details = s->env.want_details || a->record || a->annotate;
	a->scores.want_raw = a->record;
	const char *host = NULL;
	bool rejected = false;
	struct sk_rec_trace *prev = sk_rec_set_current(a->record ? &a->trace : NULL);
	struct sk_pod *assumed = scheduling_cycle(s, fw, cs, pod, a, &host, &rejected);
	if (!assumed) {
		fail_attempt(s, fw, qp, cs, a, rejected, start);
		sk_rec_set_current(prev);
		return 1;
	}
	sk_rec_set_current(prev);

	struct bind_job *j = calloc(1, sizeof(*j));
	if (!j) {
		/* Cannot bind: undo like a binding failure. */
		sk_fw_run_unreserve(fw, cs, assumed, host);
		if (s->env.forget)
			s->env.forget(s->env.ctx, assumed, NULL);
		a->message = strdup("binding cycle: out of memory");
		sk_pod_unref(assumed);
		fail_attempt(s, fw, qp, cs, a, false, start);
		return 1;
	}
	j->fw = fw;
	j->cs = cs;
	j->qp = qp;
	j->assumed = assumed;
	j->node = host;
	j->start_ns = start;
	j->att = a;
	submit_binding(s, j);
	return 1;
}

/* ---------- the scheduler object ---------- */

static bool q_less(void *ctx, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	struct sk_scheduler *s = ctx;
	bool r;
	pthread_mutex_lock(&s->profiles_mu);
	if (s->nfws > 0) {
		r = sk_fw_less(s->fws[0], a, b);
	} else {
		r = a->pod->priority > b->pod->priority ||
		    (a->pod->priority == b->pod->priority && a->timestamp_ns < b->timestamp_ns);
	}
	pthread_mutex_unlock(&s->profiles_mu);
	return r;
}

static struct sk_framework *find_locked(struct sk_scheduler *s, const char *name)
{
	for (int i = 0; i < s->nfws; i++)
		if (strcmp(sk_framework_profile_name(s->fws[i]), name) == 0)
			return s->fws[i];
	return NULL;
}

static struct sk_status q_pre_enqueue(void *ctx, const struct sk_pod *pod)
{
	struct sk_scheduler *s = ctx;
	pthread_mutex_lock(&s->profiles_mu);
	struct sk_framework *fw = find_locked(s, pod->scheduler_name ? pod->scheduler_name : "");
	struct sk_status st = fw ? sk_fw_run_pre_enqueue(fw, pod) : sk_ok();
	pthread_mutex_unlock(&s->profiles_mu);
	return st;
}

static int q_hint(void *ctx, const struct sk_pod *pod, const char *plugin, const struct sk_cluster_event *ev,
		  const void *old_obj, const void *new_obj)
{
	struct sk_scheduler *s = ctx;
	pthread_mutex_lock(&s->profiles_mu);
	struct sk_framework *fw = find_locked(s, pod->scheduler_name ? pod->scheduler_name : "");
	int h = fw ? sk_fw_queueing_hint(fw, plugin, ev, pod, old_obj, new_obj) : SK_QUEUE;
	pthread_mutex_unlock(&s->profiles_mu);
	return h;
}

static int64_t q_now(void *ctx)
{
	struct sk_scheduler *s = ctx;
	pthread_mutex_lock(&s->profiles_mu);
	int64_t now = s->nfws > 0 ? sk_framework_now_ns(s->fws[0]) : kube_mono_ns();
	pthread_mutex_unlock(&s->profiles_mu);
	return now;
}

struct sk_scheduler *sk_scheduler_new(const struct sk_sched_env *env, char **err)
{
	struct sk_scheduler *s = calloc(1, sizeof(*s));
	if (!s) {
		if (err)
			*err = strdup("scheduler: out of memory");
		return NULL;
	}
	s->env = *env;
	s->rng = env->seed ? env->seed : 0x9E3779B97F4A7C15ULL;
	s->sample_rng = 0x2545F4914F6CDD1DULL ^ s->rng;
	pthread_mutex_init(&s->profiles_mu, NULL);
	pthread_mutex_init(&s->bind_mu, NULL);
	pthread_cond_init(&s->bind_cv, NULL);
	pthread_cond_init(&s->idle_cv, NULL);
	struct sk_queue_ops ops = { .ctx = s, .less = q_less, .pre_enqueue = q_pre_enqueue, .hint = q_hint,
				    .now_ns = q_now };
	struct sk_queue_options qo = env->queue;
	if (qo.initial_backoff_ns == 0 && qo.max_backoff_ns == 0) {
		qo.initial_backoff_ns = 1000000000LL;
		qo.max_backoff_ns = 10000000000LL;
	}
	s->q = sk_queue_new(&ops, &qo);
	if (!s->q) {
		sk_scheduler_free(s);
		if (err)
			*err = strdup("scheduler: out of memory");
		return NULL;
	}
	if (env->binder_threads > 0) {
		s->binders = calloc((size_t)env->binder_threads, sizeof(pthread_t));
		for (int i = 0; s->binders && i < env->binder_threads; i++) {
			if (pthread_create(&s->binders[i], NULL, binder_main, s) != 0)
				break;
			s->nbinders++;
		}
		if (s->nbinders == 0) {
			sk_scheduler_free(s);
			if (err)
				*err = strdup("scheduler: cannot start binder threads");
			return NULL;
		}
	}
	return s;
}

void sk_scheduler_free(struct sk_scheduler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->bind_mu);
	s->stop = true;
	pthread_cond_broadcast(&s->bind_cv);
	pthread_mutex_unlock(&s->bind_mu);
	for (int i = 0; i < s->nbinders; i++)
		pthread_join(s->binders[i], NULL);
	free(s->binders);
	sk_queue_free(s->q);
	for (int i = 0; i < s->nfws; i++)
		sk_framework_unref(s->fws[i]);
	free(s->fws);
	free(s->res);
	free(s->st);
	free(s->chunk_found);
	pthread_cond_destroy(&s->bind_cv);
	pthread_cond_destroy(&s->idle_cv);
	pthread_mutex_destroy(&s->bind_mu);
	pthread_mutex_destroy(&s->profiles_mu);
	free(s);
}

struct sk_queue *sk_scheduler_queue(struct sk_scheduler *s) { return s->q; }

int sk_scheduler_set_frameworks(struct sk_scheduler *s, struct sk_framework *const *fws, int n)
{
	struct sk_framework **nf = calloc((size_t)(n ? n : 1), sizeof(*nf));
	if (!nf)
		return -1;
	for (int i = 0; i < n; i++)
		nf[i] = sk_framework_ref(fws[i]);
	pthread_mutex_lock(&s->profiles_mu);
	struct sk_framework **old = s->fws;
	int nold = s->nfws;
	s->fws = nf;
	s->nfws = n;
	pthread_mutex_unlock(&s->profiles_mu);
	for (int i = 0; i < nold; i++)
		sk_framework_unref(old[i]);
	free(old);
	return 0;
}

struct sk_framework *sk_scheduler_framework(struct sk_scheduler *s, const char *scheduler_name)
{
	pthread_mutex_lock(&s->profiles_mu);
	struct sk_framework *fw = sk_framework_ref(find_locked(s, scheduler_name));
	pthread_mutex_unlock(&s->profiles_mu);
	return fw;
}

const struct sk_snapshot *sk_scheduler_snapshot(struct sk_scheduler *s) { return s->snapshot; }
int sk_scheduler_next_start_index(struct sk_scheduler *s) { return s->next_start; }
