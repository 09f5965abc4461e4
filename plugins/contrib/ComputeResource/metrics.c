/* ComputeResource's metrics table: decoding a metrics.k8s.io/v1beta1 NodeMetricsList (quantities,
 * RFC 3339 timestamps) into an immutable, reference-counted table with a name index, so a cycle
 * takes one reference at PreFilter and Filter/Score look nodes up without locks. */
#define _DEFAULT_SOURCE /* timegm */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <schedkit/plugin.h>

#include "compute_resource.h"

/* ---------- quantities ---------- */

/* 10^e for 0 <= e <= 38 as a 128-bit integer (the multiplications of cr_parse_quantity). */
static unsigned __int128 pow10_u128(int e)
{
	unsigned __int128 r = 1;
	while (e-- > 0)
		r *= 10;
	return r;
}

int cr_parse_quantity(const char *s, int scale, int64_t *out)
{
	/* mantissa digits (at most 18 significant ones kept exactly) and a decimal exponent */
	uint64_t mant = 0;
	int exp10 = 0, exp2 = 0, ndigits = 0;
	const char *p = s;
	if (!s || !*s)
		return -1;
	if (*p == '+')
		p++;
	bool any = false, dot = false;
	for (;; p++) {
		if (isdigit((unsigned char)*p)) {
			any = true;
			if (ndigits < 18) {
				if (mant || *p != '0')
					ndigits++;
				mant = mant * 10 + (uint64_t)(*p - '0');
				if (dot)
					exp10--;
			} else if (!dot) {
				exp10++; /* digits past the 18th: the value is too precise to keep, round via exponent */
			}
		} else if (*p == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (!any)
		return -1;
	/* suffix: binary SI, decimal SI or a decimal exponent */
	static const struct { const char *suf; int e10, e2; } sufs[] = {
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
		{ "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },  { "k", 3, 0 },   { "M", 6, 0 },   { "G", 9, 0 },
		{ "T", 12, 0 },  { "P", 15, 0 },  { "E", 18, 0 },
	};
	if ((*p == 'e' || *p == 'E') && strcmp(p, "E") && strcmp(p, "Ei")) {
		/* a decimal exponent ("1e3"); "E" alone is exa and "Ei" exbi, suffixes below */
		char *end = NULL;
		long e = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end || e > 100 || e < -100)
			return -1;
		exp10 += (int)e;
	} else if (*p) {
		size_t i;
		for (i = 0; i < sizeof(sufs) / sizeof(sufs[0]); i++)
			if (!strcmp(p, sufs[i].suf))
				break;
		if (i == sizeof(sufs) / sizeof(sufs[0]))
			return -1;
		exp10 += sufs[i].e10;
		exp2 = sufs[i].e2;
	}
	exp10 += scale;
	if (mant == 0) {
		*out = 0;
		return 0;
	}
	unsigned __int128 v = mant;
	if (exp2 > 0)
		v <<= exp2; /* mant < 10^18 < 2^60, exp2 <= 60: fits in 128 bits */
	if (exp10 >= 0) {
		/* anything at or past 10^19 is above INT64_MAX */
		int bits = 0;
		for (unsigned __int128 t = v; t; t >>= 1)
			bits++;
		if (exp10 > 19 || bits + exp10 * 4 > 127) {
			*out = INT64_MAX;
			return 0;
		}
		v *= pow10_u128(exp10);
	} else {
		if (-exp10 > 38) {
			*out = 1; /* a positive amount below the unit rounds up to one */
			return 0;
		}
		unsigned __int128 d = pow10_u128(-exp10);
		v = (v + d - 1) / d;
	}
	*out = v > (unsigned __int128)INT64_MAX ? INT64_MAX : (int64_t)v;
	return 0;
}

/* ---------- timestamps ---------- */

int cr_parse_time(const char *s, int64_t *unix_ns)
{
	int Y, M, D, h, m, sec, n = 0;
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &n) != 6 || n != 19)
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	const char *p = s + n;
	int64_t frac = 0;
	if (*p == '.') {
		int digits = 0;
		for (p++; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 9)
				frac = frac * 10 + (*p - '0');
		if (digits == 0)
			return -1;
		for (; digits < 9; digits++)
			frac *= 10;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om, k = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5 || oh > 23 || om > 59)
			return -1;
		off = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	struct tm tm = { .tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec };
	time_t t = timegm(&tm);
	*unix_ns = ((int64_t)t - off) * 1000000000LL + frac;
	return 0;
}

/* ---------- the table ---------- */

struct cr_metrics *cr_metrics_ref(struct cr_metrics *m)
{
	if (m)
		atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

void cr_metrics_unref(struct cr_metrics *m)
{
	if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
		return;
	cr_by_index_unref(m->by_index);
	free(m->slots);
	free(m->nodes);
	free(m);
}

void cr_by_index_unref(struct cr_by_index *x)
{
	if (!x || atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(x->at);
	free(x);
}

int cr_by_index_build(struct cr_metrics *m, const struct sk_snapshot *snap)
{
	struct cr_by_index *x = NULL;
	int rc = 0;
	if (snap && snap->index_end > 0) {
		if (!(x = calloc(1, sizeof(*x))) || !(x->at = calloc((size_t)snap->index_end, sizeof(*x->at)))) {
			free(x);
			x = NULL;
			rc = -1;
		}
	}
	if (x) {
		atomic_init(&x->refs, 1);
		x->version = snap->index_version;
		x->n = snap->index_end;
		for (int i = 0; i < snap->nnodes; i++) {
			const struct sk_node_info *ni = snap->nodes[i];
			if (ni->node && ni->index > 0 && ni->index < x->n)
				x->at[ni->index] = (struct cr_index_slot){ .serial = ni->index_serial,
									   .e = cr_metrics_find(m, ni->node->name) };
		}
	}
	cr_by_index_unref(m->by_index); /* cycles that took it hold their own reference */
	m->by_index = x;
	return rc;
}

/* A table for n nodes with an index of at least 2n slots (a power of two). */
static struct cr_metrics *table_new(int n)
{
	struct cr_metrics *m = calloc(1, sizeof(*m));
	uint32_t nslots = 4;
	while (nslots < (uint32_t)n * 2)
		nslots <<= 1;
	/* one cache line per entry (the struct is 64-byte aligned): Score reads one line per node */
	size_t bytes = ((size_t)n + 1) * sizeof(*m->nodes);
	if (!m || !(m->slots = malloc(nslots * sizeof(*m->slots))) ||
	    !(m->nodes = aligned_alloc(_Alignof(struct cr_node_metrics), bytes))) {
		if (m)
			free(m->slots);
		free(m);
		return NULL;
	}
	memset(m->nodes, 0, bytes);
	memset(m->slots, 0xff, nslots * sizeof(*m->slots));
	m->mask = nslots - 1;
	atomic_init(&m->refs, 1);
	return m;
}

struct cr_metrics *cr_metrics_empty(void)
{
	return table_new(0);
}

/* Index of node k; a later item of the same name replaces the earlier (the list has one per node). */
static void table_index(struct cr_metrics *m, int k)
{
	for (uint32_t i = cr_name_hash(m->nodes[k].name) & m->mask;; i = (i + 1) & m->mask) {
		int32_t j = m->slots[i];
		if (j < 0) {
			m->slots[i] = k;
			return;
		}
		if (m->nodes[j].name == m->nodes[k].name) {
			m->slots[i] = k;
			return;
		}
	}
}

/* One item of the list into e; false when it has no name or no parseable cpu and memory usage. */
static bool decode_item(const cJSON *it, struct cr_node_metrics *e, int64_t fetched_unix_ns)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(it, "usage");
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(usage, "cpu");
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(usage, "memory");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(it, "timestamp");
	if (!cJSON_IsString(name) || !*name->valuestring || !cJSON_IsString(cpu) || !cJSON_IsString(mem))
		return false;
	if (cr_parse_quantity(cpu->valuestring, 3, &e->cpu_milli) < 0 ||
	    cr_parse_quantity(mem->valuestring, 0, &e->mem_bytes) < 0)
		return false;
	/* far beyond any node (2^53 millicores, 8 PiB), and room for the estimates added on top */
	if (e->cpu_milli > (1LL << 53))
		e->cpu_milli = 1LL << 53;
	if (e->mem_bytes > (1LL << 53))
		e->mem_bytes = 1LL << 53;
	e->sample_unix_ns = fetched_unix_ns;
	if (cJSON_IsString(ts) && cr_parse_time(ts->valuestring, &e->sample_unix_ns) < 0)
		return false;
	if (!(e->name = sk_intern(name->valuestring)))
		return false;
	return true;
}

struct cr_metrics *cr_metrics_from_list(const cJSON *list, int64_t fetched_mono_ns, int64_t fetched_unix_ns,
					int64_t expiration_ns, uint64_t generation, char **err)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	if (!cJSON_IsObject(list) || !(cJSON_IsArray(items) || cJSON_IsNull(items) || !items)) {
		*err = strdup("the response is not a NodeMetricsList (no items array)");
		return NULL;
	}
	int n = cJSON_IsArray(items) ? cJSON_GetArraySize(items) : 0;
	struct cr_metrics *m = table_new(n);
	if (!m) {
		*err = strdup("out of memory");
		return NULL;
	}
	m->generation = generation;
	int64_t newest = INT64_MIN;
	const cJSON *it, *arr = cJSON_IsArray(items) ? items : NULL;
	cJSON_ArrayForEach(it, arr) {
		struct cr_node_metrics *e = &m->nodes[m->n];
		if (!decode_item(it, e, fetched_unix_ns)) {
			memset(e, 0, sizeof(*e));
			m->skipped++;
			continue;
		}
		if (e->sample_unix_ns > newest)
			newest = e->sample_unix_ns;
		m->n++;
	}
	for (int k = 0; k < m->n; k++) {
		struct cr_node_metrics *e = &m->nodes[k];
		int64_t lag = newest - e->sample_unix_ns; /* >= 0 */
		e->fresh_until_ns = lag > expiration_ns ? INT64_MIN : fetched_mono_ns + (expiration_ns - lag);
		atomic_init(&e->extra_cpu, 0);
		atomic_init(&e->extra_mem, 0);
		table_index(m, k);
	}
	return m;
}
