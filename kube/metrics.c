/* Prometheus registry and text exposition (format 0.0.4).
 *
 * Storage: each series keeps its numbers in KUBE_STRIPES cache-line-aligned stripes of 64-bit
 * atomic cells; a thread always writes the stripe picked for it on first use, readers add the
 * stripes up. Counters keep an integer cell (fast path for whole increments, as client_golang)
 * and a double cell (bit pattern, CAS-added); histograms keep one count per bucket (the last is
 * +Inf) and a double sum; gauges keep one double cell (set must be a single store).
 * Series of a labelled metric live in insert-only hash chains read with acquire loads, so lookup
 * never locks; metric->mu serialises insertions only. reg->mu guards the metric list. */
#include "kube/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"

#define KUBE_STRIPES 4
#define CELLS_PER_LINE 16 /* 128 bytes: a cache line pair, as adjacent-line prefetchers share them */
#define SERIES_BUCKETS 64

typedef _Atomic uint64_t cell_t;

struct kube_metric_series {
	struct kube_metric_series *_Atomic next; /* hash chain, written before publication */
	struct kube_metric *metric;
	uint64_t hash;
	char **values; /* metric->nlabels copies */
	cell_t *cells; /* stripes * metric->stride cells, 64-byte aligned */
};

struct kube_metric {
	enum kube_metric_type type;
	char *name;
	char *help;
	int nlabels;
	char **label_names;
	int *label_order; /* label indices sorted by name: rendering order */
	double *bounds;   /* histograms: nb finite upper bounds */
	char (*le)[32];   /* histograms: bounds formatted once for the le label */
	int nb;
	int stripes;
	int stride;              /* cells per stripe, a multiple of CELLS_PER_LINE */
	pthread_mutex_t mu;      /* serialises series insertion */
	_Atomic int nseries;     /* guarded by mu for writes */
	atomic_bool warned_negative;
	struct kube_metric_series *_Atomic heads[SERIES_BUCKETS];
};

struct kube_metrics_registry {
	pthread_mutex_t mu; /* guards metrics, n, cap */
	struct kube_metric **metrics; /* sorted by name */
	int n, cap;
	void (*collect)(void *ctx); /* kube_metrics_set_collector: run before each render */
	void *collect_ctx;
};

void kube_metrics_set_collector(struct kube_metrics_registry *reg, void (*fn)(void *ctx), void *ctx)
{
	reg->collect = fn;
	reg->collect_ctx = ctx;
}

static const double default_buckets[] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

/* ---- small helpers ---- */

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bitsd(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static void cell_add_double(cell_t *c, double v)
{
	uint64_t old = atomic_load_explicit(c, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(c, &old, dbits(bitsd(old) + v), memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static int this_thread_stripe(void)
{
	static atomic_uint next_stripe;
	static _Thread_local int stripe = -1;
	if (stripe < 0)
		stripe = (int)(atomic_fetch_add_explicit(&next_stripe, 1, memory_order_relaxed) % KUBE_STRIPES);
	return stripe;
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

static bool valid_metric_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
			  (p != s && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

static bool valid_label_name(const char *s)
{
	if (!s || !*s || (s[0] == '_' && s[1] == '_'))
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (p != s && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

/* ---- float formatting (Go's strconv.FormatFloat(v, 'g', -1, 64)) ---- */

char *kube_metrics_format_float(double v, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return buf;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return buf;
	}
	if (v == 0) {
		snprintf(buf, len, "0"); /* -0 too, as expfmt's writeFloat */
		return buf;
	}
	/* Whole numbers below 1e6 print as integers in Go's shortest form; most samples are these. */
	if (v > -1e6 && v < 1e6 && v == (double)(long long)v) {
		snprintf(buf, len, "%lld", (long long)v);
		return buf;
	}
	/* Shortest digit count that reads back exactly. */
	char e[40];
	int digits = 1;
	for (; digits <= 17; digits++) {
		snprintf(e, sizeof(e), "%.*e", digits - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	if (digits > 17)
		digits = 17;
	char *ep = strchr(e, 'e');
	int exp = ep ? atoi(ep + 1) : 0;
	/* The shortest form switches to exponent notation when exp < -4 || exp >= 6 ("1e+06");
	 * %e's mantissa and two-digit exponent are then exactly Go's. */
	if (exp < -4 || exp >= 6) {
		snprintf(buf, len, "%s", e);
		return buf;
	}
	int decimals = digits - 1 - exp;
	if (decimals < 0)
		decimals = 0;
	snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}

/* ---- growable string buffer for rendering ---- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_reserve(struct sbuf *b, size_t extra)
{
	if (b->oom || b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_putc(struct sbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

/* HELP escapes \ and newline; label values also escape ". */
static void sb_escaped(struct sbuf *b, const char *s, bool quote)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			sb_puts(b, "\\\\");
		else if (*p == '\n')
			sb_puts(b, "\\n");
		else if (quote && *p == '"')
			sb_puts(b, "\\\"");
		else
			sb_putc(b, *p);
	}
}

static void sb_float(struct sbuf *b, double v)
{
	char num[40];
	sb_puts(b, kube_metrics_format_float(v, num, sizeof(num)));
}

/* ---- registry ---- */

struct kube_metrics_registry *kube_metrics_registry_new(void)
{
	struct kube_metrics_registry *reg = calloc(1, sizeof(*reg));
	if (!reg)
		return NULL;
	pthread_mutex_init(&reg->mu, NULL);
	return reg;
}

static void series_free(struct kube_metric_series *s, int nlabels)
{
	if (!s)
		return;
	if (s->values)
		for (int i = 0; i < nlabels; i++)
			free(s->values[i]);
	free(s->values);
	free(s->cells);
	free(s);
}

static void metric_free(struct kube_metric *m)
{
	if (!m)
		return;
	for (int b = 0; b < SERIES_BUCKETS; b++) {
		struct kube_metric_series *s = atomic_load_explicit(&m->heads[b], memory_order_acquire);
		while (s) {
			struct kube_metric_series *next = atomic_load_explicit(&s->next, memory_order_relaxed);
			series_free(s, m->nlabels);
			s = next;
		}
	}
	if (m->label_names)
		for (int i = 0; i < m->nlabels; i++)
			free(m->label_names[i]);
	free(m->label_names);
	free(m->label_order);
	free(m->bounds);
	free(m->le);
	free(m->name);
	free(m->help);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

void kube_metrics_registry_free(struct kube_metrics_registry *reg)
{
	if (!reg)
		return;
	for (int i = 0; i < reg->n; i++)
		metric_free(reg->metrics[i]);
	free(reg->metrics);
	pthread_mutex_destroy(&reg->mu);
	free(reg);
}

static const char *type_name(enum kube_metric_type t)
{
	switch (t) {
	case KUBE_METRIC_COUNTER:
		return "counter";
	case KUBE_METRIC_GAUGE:
		return "gauge";
	case KUBE_METRIC_HISTOGRAM:
		return "histogram";
	}
	return "untyped";
}

static bool same_shape(const struct kube_metric *m, enum kube_metric_type type, int nlabels,
		       const char *const *label_names, const double *bounds, int nb)
{
	if (m->type != type || m->nlabels != nlabels || m->nb != nb)
		return false;
	for (int i = 0; i < nlabels; i++)
		if (strcmp(m->label_names[i], label_names[i]) != 0)
			return false;
	for (int i = 0; i < nb; i++)
		if (m->bounds[i] != bounds[i])
			return false;
	return true;
}

static struct kube_metric_series *series_new(struct kube_metric *m, const char *const *values, uint64_t hash);

static struct kube_metric *metric_register(struct kube_metrics_registry *reg, enum kube_metric_type type,
					   const char *name, const char *help, int nlabels,
					   const char *const *label_names, const double *buckets, int nbuckets)
{
	if (!reg)
		return NULL;
	if (!valid_metric_name(name)) {
		klog_error("Invalid metric", " metric=\"%s\" field=name", name ? name : "");
		return NULL;
	}
	if (nlabels < 0 || (nlabels > 0 && !label_names)) {
		klog_error("Invalid metric", " metric=\"%s\" field=labelNames nlabels=%d", name, nlabels);
		return NULL;
	}
	for (int i = 0; i < nlabels; i++) {
		if (!valid_label_name(label_names[i]) ||
		    (type == KUBE_METRIC_HISTOGRAM && strcmp(label_names[i], "le") == 0)) {
			klog_error("Invalid metric label name", " metric=\"%s\" field=labelNames[%d] label=\"%s\"", name,
				   i, label_names[i] ? label_names[i] : "");
			return NULL;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(label_names[i], label_names[j]) == 0) {
				klog_error("Duplicate metric label name", " metric=\"%s\" field=labelNames[%d] label=\"%s\"",
					   name, i, label_names[i]);
				return NULL;
			}
	}
	const double *bounds = NULL;
	int nb = 0;
	if (type == KUBE_METRIC_HISTOGRAM) {
		bounds = buckets;
		nb = nbuckets;
		if (!bounds || nb <= 0) {
			bounds = default_buckets;
			nb = (int)(sizeof(default_buckets) / sizeof(default_buckets[0]));
		}
		if (isinf(bounds[nb - 1]) && bounds[nb - 1] > 0)
			nb--;
		for (int i = 0; i < nb; i++) {
			if (isnan(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) {
				klog_error("Histogram buckets must be strictly increasing", " metric=\"%s\" field=buckets[%d]",
					   name, i);
				return NULL;
			}
		}
	}

	pthread_mutex_lock(&reg->mu);
	int lo = 0, hi = reg->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(reg->metrics[mid]->name, name);
		if (c == 0) {
			struct kube_metric *m = reg->metrics[mid];
			pthread_mutex_unlock(&reg->mu);
			if (same_shape(m, type, nlabels, label_names, bounds, nb))
				return m;
			klog_error("Metric already registered with a different type, labels or buckets",
				   " metric=\"%s\" type=%s", name, type_name(m->type));
			return NULL;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}

	struct kube_metric *m = calloc(1, sizeof(*m));
	if (!m)
		goto oom;
	pthread_mutex_init(&m->mu, NULL);
	m->type = type;
	m->name = xstrdup(name);
	m->help = xstrdup(help);
	m->nlabels = nlabels;
	m->label_names = calloc((size_t)nlabels + 1, sizeof(char *));
	m->label_order = calloc((size_t)nlabels + 1, sizeof(int));
	if (!m->name || !m->help || !m->label_names || !m->label_order)
		goto oom;
	for (int i = 0; i < nlabels; i++) {
		if (!(m->label_names[i] = xstrdup(label_names[i])))
			goto oom;
		m->label_order[i] = i;
	}
	for (int i = 1; i < nlabels; i++) /* insertion sort: a handful of labels */
		for (int j = i; j > 0 && strcmp(m->label_names[m->label_order[j - 1]],
						 m->label_names[m->label_order[j]]) > 0; j--) {
			int t = m->label_order[j];
			m->label_order[j] = m->label_order[j - 1];
			m->label_order[j - 1] = t;
		}
	int cells;
	if (type == KUBE_METRIC_HISTOGRAM) {
		m->nb = nb;
		m->bounds = calloc((size_t)nb + 1, sizeof(double));
		if (!m->bounds)
			goto oom;
		memcpy(m->bounds, bounds, (size_t)nb * sizeof(double));
		m->le = calloc((size_t)nb + 1, sizeof(*m->le));
		if (!m->le)
			goto oom;
		for (int i = 0; i < nb; i++)
			kube_metrics_format_float(bounds[i], m->le[i], sizeof(m->le[i]));
		cells = nb + 2; /* bucket counts incl. +Inf, then the sum */
		m->stripes = KUBE_STRIPES;
	} else if (type == KUBE_METRIC_COUNTER) {
		cells = 2; /* integer part, double part */
		m->stripes = KUBE_STRIPES;
	} else {
		cells = 1;
		m->stripes = 1;
	}
	m->stride = (cells + CELLS_PER_LINE - 1) / CELLS_PER_LINE * CELLS_PER_LINE;
	if (nlabels == 0 && !series_new(m, NULL, 0))
		goto oom;

	if (reg->n == reg->cap) {
		int cap = reg->cap ? reg->cap * 2 : 16;
		struct kube_metric **p = realloc(reg->metrics, (size_t)cap * sizeof(*p));
		if (!p)
			goto oom;
		reg->metrics = p;
		reg->cap = cap;
	}
	memmove(&reg->metrics[lo + 1], &reg->metrics[lo], (size_t)(reg->n - lo) * sizeof(*reg->metrics));
	reg->metrics[lo] = m;
	reg->n++;
	pthread_mutex_unlock(&reg->mu);
	return m;
oom:
	pthread_mutex_unlock(&reg->mu);
	metric_free(m);
	klog_error("Out of memory registering metric", " metric=\"%s\"", name);
	return NULL;
}

struct kube_metric *kube_counter_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				     int nlabels, const char *const *label_names)
{
	return metric_register(reg, KUBE_METRIC_COUNTER, name, help, nlabels, label_names, NULL, 0);
}

struct kube_metric *kube_gauge_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				   int nlabels, const char *const *label_names)
{
	return metric_register(reg, KUBE_METRIC_GAUGE, name, help, nlabels, label_names, NULL, 0);
}

struct kube_metric *kube_histogram_new(struct kube_metrics_registry *reg, const char *name, const char *help,
				       int nlabels, const char *const *label_names, const double *buckets,
				       int nbuckets)
{
	return metric_register(reg, KUBE_METRIC_HISTOGRAM, name, help, nlabels, label_names, buckets, nbuckets);
}

struct kube_metric *kube_metrics_lookup(struct kube_metrics_registry *reg, const char *name)
{
	if (!reg || !name)
		return NULL;
	struct kube_metric *found = NULL;
	pthread_mutex_lock(&reg->mu);
	int lo = 0, hi = reg->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(reg->metrics[mid]->name, name);
		if (c == 0) {
			found = reg->metrics[mid];
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	pthread_mutex_unlock(&reg->mu);
	return found;
}

enum kube_metric_type kube_metric_type_of(const struct kube_metric *m)
{
	return m ? m->type : KUBE_METRIC_COUNTER;
}

/* ---- series lookup ---- */

static uint64_t hash_values(const struct kube_metric *m, const char *const *values)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (int i = 0; i < m->nlabels; i++) {
		const char *v = values[i] ? values[i] : "";
		for (; *v; v++) {
			h ^= (unsigned char)*v;
			h *= 1099511628211ULL;
		}
		h ^= 0xff; /* separator: ("ab","") != ("a","b") */
		h *= 1099511628211ULL;
	}
	return h;
}

static bool series_matches(const struct kube_metric_series *s, const struct kube_metric *m, uint64_t hash,
			   const char *const *values)
{
	if (s->hash != hash)
		return false;
	for (int i = 0; i < m->nlabels; i++)
		if (strcmp(s->values[i], values[i] ? values[i] : "") != 0)
			return false;
	return true;
}

static struct kube_metric_series *series_find(struct kube_metric *m, const char *const *values, uint64_t hash)
{
	struct kube_metric_series *s = atomic_load_explicit(&m->heads[hash % SERIES_BUCKETS], memory_order_acquire);
	for (; s; s = atomic_load_explicit(&s->next, memory_order_acquire))
		if (series_matches(s, m, hash, values))
			return s;
	return NULL;
}

/* Allocates and publishes a series; caller holds m->mu (or owns m exclusively). */
static struct kube_metric_series *series_new(struct kube_metric *m, const char *const *values, uint64_t hash)
{
	struct kube_metric_series *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->metric = m;
	s->hash = hash;
	s->values = calloc((size_t)m->nlabels + 1, sizeof(char *));
	size_t bytes = (size_t)m->stripes * (size_t)m->stride * sizeof(cell_t);
	s->cells = aligned_alloc(128, bytes);
	if (!s->values || !s->cells) {
		series_free(s, 0);
		return NULL;
	}
	for (size_t i = 0; i < (size_t)m->stripes * (size_t)m->stride; i++)
		atomic_init(&s->cells[i], 0);
	for (int i = 0; i < m->nlabels; i++) {
		if (!(s->values[i] = xstrdup(values[i]))) {
			series_free(s, m->nlabels);
			return NULL;
		}
	}
	struct kube_metric_series *_Atomic *head = &m->heads[hash % SERIES_BUCKETS];
	atomic_store_explicit(&s->next, atomic_load_explicit(head, memory_order_relaxed), memory_order_relaxed);
	atomic_store_explicit(head, s, memory_order_release);
	atomic_fetch_add_explicit(&m->nseries, 1, memory_order_relaxed);
	return s;
}

struct kube_metric_series *kube_metric_with(struct kube_metric *m, const char *const *label_values)
{
	if (!m)
		return NULL;
	if (m->nlabels == 0)
		return atomic_load_explicit(&m->heads[0], memory_order_acquire);
	if (!label_values)
		return NULL;
	uint64_t hash = hash_values(m, label_values);
	struct kube_metric_series *s = series_find(m, label_values, hash);
	if (s)
		return s;
	pthread_mutex_lock(&m->mu);
	s = series_find(m, label_values, hash);
	if (!s) {
		s = series_new(m, label_values, hash);
		if (!s)
			klog_error("Out of memory creating metric series", " metric=\"%s\"", m->name);
	}
	pthread_mutex_unlock(&m->mu);
	return s;
}

/* ---- updates ---- */

static cell_t *my_stripe(struct kube_metric_series *s)
{
	struct kube_metric *m = s->metric;
	int stripe = m->stripes > 1 ? this_thread_stripe() : 0;
	return s->cells + (size_t)stripe * (size_t)m->stride;
}

void kube_series_add(struct kube_metric_series *s, double v)
{
	if (!s || s->metric->type != KUBE_METRIC_COUNTER)
		return;
	if (!(v >= 0)) {
		if (!atomic_exchange(&s->metric->warned_negative, true))
			klog_error("Counter cannot decrease; ignoring", " metric=\"%s\"", s->metric->name);
		return;
	}
	cell_t *c = my_stripe(s);
	if (v < 9007199254740992.0 && v == (double)(uint64_t)v)
		atomic_fetch_add_explicit(&c[0], (uint64_t)v, memory_order_relaxed);
	else
		cell_add_double(&c[1], v);
}

void kube_counter_add(struct kube_metric *m, double v, const char *const *label_values)
{
	kube_series_add(kube_metric_with(m, label_values), v);
}

void kube_counter_inc(struct kube_metric *m, const char *const *label_values)
{
	kube_series_add(kube_metric_with(m, label_values), 1);
}

void kube_series_set(struct kube_metric_series *s, double v)
{
	if (!s || s->metric->type != KUBE_METRIC_GAUGE)
		return;
	atomic_store_explicit(&s->cells[0], dbits(v), memory_order_relaxed);
}

void kube_series_gauge_add(struct kube_metric_series *s, double v)
{
	if (!s || s->metric->type != KUBE_METRIC_GAUGE)
		return;
	cell_add_double(&s->cells[0], v);
}

void kube_gauge_set(struct kube_metric *m, double v, const char *const *label_values)
{
	kube_series_set(kube_metric_with(m, label_values), v);
}

void kube_gauge_add(struct kube_metric *m, double v, const char *const *label_values)
{
	kube_series_gauge_add(kube_metric_with(m, label_values), v);
}

void kube_series_observe(struct kube_metric_series *s, double v)
{
	if (!s || s->metric->type != KUBE_METRIC_HISTOGRAM || isnan(v))
		return;
	const struct kube_metric *m = s->metric;
	/* First bucket whose upper bound is >= v (le semantics); nb means +Inf. */
	int lo = 0, hi = m->nb;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (v <= m->bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	cell_t *c = my_stripe(s);
	atomic_fetch_add_explicit(&c[lo], 1, memory_order_relaxed);
	cell_add_double(&c[m->nb + 1], v);
}

void kube_histogram_observe(struct kube_metric *m, double v, const char *const *label_values)
{
	kube_series_observe(kube_metric_with(m, label_values), v);
}

/* ---- reads ---- */

static double series_counter_value(const struct kube_metric_series *s)
{
	const struct kube_metric *m = s->metric;
	uint64_t ival = 0;
	double fval = 0;
	for (int i = 0; i < m->stripes; i++) {
		cell_t *c = s->cells + (size_t)i * (size_t)m->stride;
		ival += atomic_load_explicit(&c[0], memory_order_relaxed);
		fval += bitsd(atomic_load_explicit(&c[1], memory_order_relaxed));
	}
	return (double)ival + fval;
}

/* Non-cumulative bucket counts (nb + 1 of them) into out; returns the total count. */
static uint64_t series_hist_counts(const struct kube_metric_series *s, uint64_t *out, double *sum)
{
	const struct kube_metric *m = s->metric;
	uint64_t total = 0;
	double sm = 0;
	for (int b = 0; b <= m->nb; b++)
		out[b] = 0;
	for (int i = 0; i < m->stripes; i++) {
		cell_t *c = s->cells + (size_t)i * (size_t)m->stride;
		for (int b = 0; b <= m->nb; b++) {
			uint64_t n = atomic_load_explicit(&c[b], memory_order_relaxed);
			out[b] += n;
			total += n;
		}
		sm += bitsd(atomic_load_explicit(&c[m->nb + 1], memory_order_relaxed));
	}
	if (sum)
		*sum = sm;
	return total;
}

static struct kube_metric_series *series_peek(struct kube_metric *m, const char *const *label_values)
{
	if (!m)
		return NULL;
	if (m->nlabels == 0)
		return atomic_load_explicit(&m->heads[0], memory_order_acquire);
	if (!label_values)
		return NULL;
	return series_find(m, label_values, hash_values(m, label_values));
}

double kube_metric_value(struct kube_metric *m, const char *const *label_values)
{
	struct kube_metric_series *s = series_peek(m, label_values);
	if (!s)
		return 0;
	switch (m->type) {
	case KUBE_METRIC_COUNTER:
		return series_counter_value(s);
	case KUBE_METRIC_GAUGE:
		return bitsd(atomic_load_explicit(&s->cells[0], memory_order_relaxed));
	case KUBE_METRIC_HISTOGRAM: {
		uint64_t counts[m->nb + 1];
		return (double)series_hist_counts(s, counts, NULL);
	}
	}
	return 0;
}

double kube_histogram_sum(struct kube_metric *m, const char *const *label_values)
{
	struct kube_metric_series *s = series_peek(m, label_values);
	if (!s || m->type != KUBE_METRIC_HISTOGRAM)
		return 0;
	uint64_t counts[m->nb + 1];
	double sum = 0;
	series_hist_counts(s, counts, &sum);
	return sum;
}

double kube_histogram_bucket_count(struct kube_metric *m, const char *const *label_values, double le)
{
	struct kube_metric_series *s = series_peek(m, label_values);
	if (!s || m->type != KUBE_METRIC_HISTOGRAM)
		return 0;
	uint64_t counts[m->nb + 1];
	series_hist_counts(s, counts, NULL);
	uint64_t cum = 0;
	for (int b = 0; b <= m->nb; b++) {
		if (b < m->nb && m->bounds[b] > le)
			break;
		if (b == m->nb && !isinf(le))
			break;
		cum += counts[b];
	}
	return (double)cum;
}

double kube_metrics_value(struct kube_metrics_registry *reg, const char *name, const char *const *label_values)
{
	return kube_metric_value(kube_metrics_lookup(reg, name), label_values);
}

/* ---- rendering ---- */

static int series_cmp(const void *a, const void *b)
{
	const struct kube_metric_series *x = *(struct kube_metric_series *const *)a;
	const struct kube_metric_series *y = *(struct kube_metric_series *const *)b;
	const struct kube_metric *m = x->metric;
	for (int i = 0; i < m->nlabels; i++) {
		int idx = m->label_order[i];
		int c = strcmp(x->values[idx], y->values[idx]);
		if (c)
			return c;
	}
	return 0;
}

/* {a="x",b="y"[,le="..."]} or nothing when there are no labels at all. */
static void render_labels(struct sbuf *b, const struct kube_metric_series *s, const char *le)
{
	const struct kube_metric *m = s->metric;
	if (m->nlabels == 0 && !le)
		return;
	char sep = '{';
	for (int i = 0; i < m->nlabels; i++) {
		int idx = m->label_order[i];
		sb_putc(b, sep);
		sb_puts(b, m->label_names[idx]);
		sb_puts(b, "=\"");
		sb_escaped(b, s->values[idx], true);
		sb_putc(b, '"');
		sep = ',';
	}
	if (le) {
		sb_putc(b, sep);
		sb_puts(b, "le=\"");
		sb_puts(b, le);
		sb_putc(b, '"');
	}
	sb_putc(b, '}');
}

static void render_sample(struct sbuf *b, const struct kube_metric_series *s, const char *suffix, const char *le,
			  double v)
{
	sb_puts(b, s->metric->name);
	sb_puts(b, suffix);
	render_labels(b, s, le);
	sb_putc(b, ' ');
	sb_float(b, v);
	sb_putc(b, '\n');
}

static void render_metric(struct sbuf *b, struct kube_metric *m)
{
	int cap = atomic_load_explicit(&m->nseries, memory_order_acquire);
	if (cap == 0)
		return;
	/* Series may be added concurrently; collect at most what exists now plus headroom. */
	cap += 16;
	struct kube_metric_series **list = malloc((size_t)cap * sizeof(*list));
	uint64_t *counts = malloc(((size_t)m->nb + 1) * sizeof(uint64_t));
	if (!list || !counts) {
		free(list);
		free(counts);
		b->oom = true;
		return;
	}
	int n = 0;
	for (int h = 0; h < SERIES_BUCKETS && n < cap; h++)
		for (struct kube_metric_series *s = atomic_load_explicit(&m->heads[h], memory_order_acquire);
		     s && n < cap; s = atomic_load_explicit(&s->next, memory_order_acquire))
			list[n++] = s;
	qsort(list, (size_t)n, sizeof(*list), series_cmp);

	sb_puts(b, "# HELP ");
	sb_puts(b, m->name);
	sb_putc(b, ' ');
	sb_escaped(b, m->help, false);
	sb_puts(b, "\n# TYPE ");
	sb_puts(b, m->name);
	sb_putc(b, ' ');
	sb_puts(b, type_name(m->type));
	sb_putc(b, '\n');
	for (int i = 0; i < n; i++) {
		struct kube_metric_series *s = list[i];
		if (m->type == KUBE_METRIC_COUNTER) {
			render_sample(b, s, "", NULL, series_counter_value(s));
		} else if (m->type == KUBE_METRIC_GAUGE) {
			render_sample(b, s, "", NULL, bitsd(atomic_load_explicit(&s->cells[0], memory_order_relaxed)));
		} else {
			double sum = 0;
			uint64_t total = series_hist_counts(s, counts, &sum);
			uint64_t cum = 0;
			for (int k = 0; k < m->nb; k++) {
				cum += counts[k];
				render_sample(b, s, "_bucket", m->le[k], (double)cum);
			}
			render_sample(b, s, "_bucket", "+Inf", (double)total);
			render_sample(b, s, "_sum", NULL, sum);
			render_sample(b, s, "_count", NULL, (double)total);
		}
	}
	free(list);
	free(counts);
}

char *kube_metrics_render(struct kube_metrics_registry *reg)
{
	if (!reg)
		return NULL;
	if (reg->collect)
		reg->collect(reg->collect_ctx); /* outside reg->mu: it sets series */
	struct sbuf b = {0};
	sb_reserve(&b, 0);
	if (b.p)
		b.p[0] = 0; /* an empty registry renders as "" */
	pthread_mutex_lock(&reg->mu);
	for (int i = 0; i < reg->n; i++)
		render_metric(&b, reg->metrics[i]);
	pthread_mutex_unlock(&reg->mu);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---- bucket helpers ---- */

int kube_exponential_buckets(double start, double factor, int count, double *out)
{
	if (count < 1 || !(start > 0) || !(factor > 1) || !out)
		return -1;
	for (int i = 0; i < count; i++) {
		out[i] = start;
		start *= factor;
	}
	return 0;
}

int kube_linear_buckets(double start, double width, int count, double *out)
{
	if (count < 1 || !(width > 0) || !out)
		return -1;
	for (int i = 0; i < count; i++) {
		out[i] = start;
		start += width;
	}
	return 0;
}
