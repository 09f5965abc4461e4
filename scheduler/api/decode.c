/* Long file: pod and node decoding share the per-object arena and the error context. */
/* Decoding v1.Pod and v1.Node JSON into the scheduler's compact structs (schedkit/types.h), plus the small
 * helpers over them: labels lookup, resource arithmetic, toleration matching, pod references.
 *
 * Every string and array of one object lives in a per-object arena freed with the object;
 * repeated names are interned. Compiled selectors are owned by the pod. Hostile input never
 * crashes: any type or value error returns NULL with a message naming the object and field. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/jsonspan.h"
#include "kube/nodeselector.h"
#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/selector.h"
#include "schedkit/types.h"
#include "scheduler/api/pod_version.h"
#include "scheduler/api/pod_volumes.h"
#include "scheduler/api/raw.h"

#define DEFAULT_MILLI_CPU_REQUEST 100                 /* upstream DefaultMilliCPURequest */
#define DEFAULT_MEMORY_REQUEST (200LL * 1024 * 1024)   /* upstream DefaultMemoryRequest */
#define DEFAULT_SCHEDULER_NAME "default-scheduler"

/* ---------- per-object arena ---------- */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(16) char data[];
};
struct arena {
	struct arena_chunk *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	struct arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = c ? c->cap * 2 : 512;
		if (cap > 16384)
			cap = 16384;
		if (cap < n)
			cap = n;
		struct arena_chunk *nc = malloc(sizeof(*nc) + cap);
		if (!nc)
			return NULL;
		nc->cap = cap;
		nc->used = 0;
		if (c && cap == n && c->cap - c->used > 64) { /* oversized block: keep using the current chunk */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

static char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s);
	char *d = arena_alloc(a, n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}

/* ---------- object boxes: private header in front of the public struct ---------- */

struct pod_box {
	struct sk_pod *parent; /* copies (sk_pod_with_node, sk_pod_decode_echo): the pod whose memory they share */
	struct arena arena;    /* a root's strings and arrays (copies share their root's) */
	char *own_rv;          /* an echo's resourceVersion (the rest is its root's) */
	struct sk_obj_raw raw; /* the served object, for the extenders (raw.h); a root's or an echo's */
	/* pod_version.h: set when decoded from the informer's object (raw.shared) */
	bool facts;
	bool terminating_by_preemption;
	int64_t start_ns;
	struct sk_pod pod;
};
struct node_box {
	struct arena arena;
	struct sk_obj_raw raw;
	struct sk_node node;
};

#define POD_BOX(p) ((struct pod_box *)(void *)((char *)(p)-offsetof(struct pod_box, pod)))
#define NODE_BOX(n) ((struct node_box *)(void *)((char *)(n)-offsetof(struct node_box, node)))

/* ---------- decode context and errors ---------- */

struct dctx {
	struct arena *a;
	char **err;
	const char *kind; /* "pod" or "node" */
	char objname[320];
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct dctx *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = true;
	if (!c->err)
		return;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char *out = NULL;
	if (asprintf(&out, "%s %s: %s", c->kind, c->objname[0] ? c->objname : "<unnamed>", msg) < 0)
		out = NULL;
	*c->err = out;
}

static void fail_oom(struct dctx *c)
{
	fail(c, "out of memory");
}

static bool is_null(const cJSON *it)
{
	return !it || cJSON_IsNull(it);
}

/* Member lookup with type checks; JSON null counts as absent. */
static const cJSON *get_object(struct dctx *c, const cJSON *parent, const char *key, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (is_null(it))
		return NULL;
	if (!cJSON_IsObject(it)) {
		fail(c, "%s: must be an object", path);
		return NULL;
	}
	return it;
}

static const cJSON *get_array(struct dctx *c, const cJSON *parent, const char *key, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (is_null(it))
		return NULL;
	if (!cJSON_IsArray(it)) {
		fail(c, "%s: must be an array", path);
		return NULL;
	}
	return it;
}

static const char *get_string(struct dctx *c, const cJSON *parent, const char *key, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (is_null(it))
		return NULL;
	if (!cJSON_IsString(it) || !it->valuestring) {
		fail(c, "%s: must be a string", path);
		return NULL;
	}
	return it->valuestring;
}

static bool get_bool(struct dctx *c, const cJSON *parent, const char *key, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (is_null(it))
		return false;
	if (!cJSON_IsBool(it)) {
		fail(c, "%s: must be a boolean", path);
		return false;
	}
	return cJSON_IsTrue(it);
}

/* Integer number item, exact when the parser kept the source digits in valuestring. */
static int number_int64(const cJSON *it, int64_t *out)
{
	if (!cJSON_IsNumber(it))
		return -1;
	if (it->valuestring && it->valuestring[0]) {
		char *end;
		errno = 0;
		long long v = strtoll(it->valuestring, &end, 10);
		if (errno == 0 && *end == '\0' && (double)v == it->valuedouble) {
			*out = v;
			return 0;
		}
	}
	double d = it->valuedouble;
	if (d != d || d < -9223372036854775808.0 || d >= 9223372036854775808.0 || d != (double)(int64_t)d)
		return -1;
	*out = (int64_t)d;
	return 0;
}

/* Returns false (and leaves *out) when absent. */
static bool get_int32(struct dctx *c, const cJSON *parent, const char *key, const char *path, int32_t *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (is_null(it))
		return false;
	int64_t v;
	if (number_int64(it, &v) != 0 || v < INT32_MIN || v > INT32_MAX) {
		fail(c, "%s: must be a 32-bit integer", path);
		return false;
	}
	*out = (int32_t)v;
	return true;
}

/* Saturating int64 arithmetic: hostile quantities clamp instead of overflowing. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sat_addsign(int64_t a, int64_t b, int sign)
{
	if (sign >= 0)
		return sat_add(a, b);
	if (b == INT64_MIN)
		return sat_add(sat_add(a, INT64_MAX), 1);
	return sat_add(a, -b);
}

static const char *intern_or_fail(struct dctx *c, const char *s)
{
	const char *r = sk_intern(s);
	if (!r)
		fail_oom(c);
	return r;
}

/* ---------- labels ---------- */

static int label_cmp(const void *a, const void *b)
{
	const struct sk_label *x = a, *y = b;
	return x->key == y->key ? 0 : strcmp(x->key, y->key);
}

/* A JSON object of strings into a sorted, key-unique list (the last duplicate key wins). */
static void decode_string_map(struct dctx *c, const cJSON *obj, const char *path, struct sk_labels *out)
{
	out->n = 0;
	out->items = NULL;
	if (is_null(obj))
		return;
	if (!cJSON_IsObject(obj)) {
		fail(c, "%s: must be an object", path);
		return;
	}
	int n = cJSON_GetArraySize(obj);
	if (n == 0)
		return;
	struct sk_label *items = arena_alloc(c->a, sizeof(*items) * (size_t)n);
	if (!items) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = obj->child; it && i < n; it = it->next) {
		if (!it->string) {
			fail(c, "%s: malformed object", path);
			return;
		}
		if (!cJSON_IsString(it) || !it->valuestring) {
			fail(c, "%s[%s]: must be a string", path, it->string);
			return;
		}
		items[i].key = intern_or_fail(c, it->string);
		items[i].value = intern_or_fail(c, it->valuestring);
		if (c->failed)
			return;
		i++;
	}
	/* Insertion sort keeps equal keys in input order, so the last duplicate is the one kept. */
	for (int j = 1; j < i; j++) {
		struct sk_label x = items[j];
		int k = j - 1;
		while (k >= 0 && strcmp(items[k].key, x.key) > 0) {
			items[k + 1] = items[k];
			k--;
		}
		items[k + 1] = x;
	}
	int w = 0;
	for (int j = 0; j < i; j++) {
		if (j + 1 < i && strcmp(items[j].key, items[j + 1].key) == 0)
			continue;
		items[w++] = items[j];
	}
	out->n = w;
	out->items = items;
}

const char *sk_labels_get(const void *labels, const char *key)
{
	const struct sk_labels *l = labels;
	if (!l || !key || l->n == 0)
		return NULL;
	/* Keys are interned (types.h), so the caller's key is usually the very pointer stored: try
	 * pointer equality over the whole (short) list before comparing strings. */
	for (int i = 0; i < l->n; i++)
		if (l->items[i].key == key)
			return l->items[i].value;
	struct sk_label k = { key, NULL };
	const struct sk_label *hit = bsearch(&k, l->items, (size_t)l->n, sizeof(k), label_cmp);
	return hit ? hit->value : NULL;
}

/* ---------- resources ---------- */

int64_t sk_resource_scalar(const struct sk_resource *r, const char *name)
{
	if (!r || !name)
		return 0;
	int lo = 0, hi = r->nscalar - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int cmp = r->scalar[mid].name == name ? 0 : strcmp(r->scalar[mid].name, name);
		if (cmp == 0)
			return r->scalar[mid].value;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* Index of name in r's scalars, inserting a zero entry when absent; -1 on OOM. */
static int scalar_slot(struct sk_resource *r, const char *name)
{
	int lo = 0, hi = r->nscalar - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int cmp = r->scalar[mid].name == name ? 0 : strcmp(r->scalar[mid].name, name);
		if (cmp == 0)
			return mid;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	struct sk_scalar *ns = realloc(r->scalar, sizeof(*ns) * (size_t)(r->nscalar + 1));
	if (!ns)
		return -1;
	r->scalar = ns;
	memmove(&ns[lo + 1], &ns[lo], sizeof(*ns) * (size_t)(r->nscalar - lo));
	ns[lo].name = name;
	ns[lo].value = 0;
	r->nscalar++;
	return lo;
}

int sk_resource_add(struct sk_resource *a, const struct sk_resource *b, int sign)
{
	if (!a || !b)
		return 0;
	a->milli_cpu = sat_addsign(a->milli_cpu, b->milli_cpu, sign);
	a->memory = sat_addsign(a->memory, b->memory, sign);
	a->ephemeral_storage = sat_addsign(a->ephemeral_storage, b->ephemeral_storage, sign);
	a->allowed_pod_number = sat_addsign(a->allowed_pod_number, b->allowed_pod_number, sign);
	for (int i = 0; i < b->nscalar; i++) {
		int k = scalar_slot(a, b->scalar[i].name);
		if (k < 0)
			return -1;
		a->scalar[k].value = sat_addsign(a->scalar[k].value, b->scalar[i].value, sign);
	}
	return 0;
}

void sk_resource_clear(struct sk_resource *r)
{
	if (!r)
		return;
	free(r->scalar);
	memset(r, 0, sizeof(*r));
}

int sk_resource_copy(struct sk_resource *dst, const struct sk_resource *src)
{
	struct sk_scalar *sc = NULL;
	if (src->nscalar > 0) {
		sc = malloc(sizeof(*sc) * (size_t)src->nscalar);
		if (!sc)
			return -1;
		memcpy(sc, src->scalar, sizeof(*sc) * (size_t)src->nscalar);
	}
	*dst = *src;
	dst->scalar = sc;
	return 0;
}

/* Element-wise a = max(a, b); a key present only in b is added (upstream maxResourceList). */
static int resource_max(struct sk_resource *a, const struct sk_resource *b)
{
	if (b->milli_cpu > a->milli_cpu)
		a->milli_cpu = b->milli_cpu;
	if (b->memory > a->memory)
		a->memory = b->memory;
	if (b->ephemeral_storage > a->ephemeral_storage)
		a->ephemeral_storage = b->ephemeral_storage;
	for (int i = 0; i < b->nscalar; i++) {
		int before = a->nscalar;
		int k = scalar_slot(a, b->scalar[i].name);
		if (k < 0)
			return -1;
		if (a->nscalar != before || b->scalar[i].value > a->scalar[k].value)
			a->scalar[k].value = b->scalar[i].value;
	}
	return 0;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Upstream schedutil.IsScalarResourceName: extended (domain-prefixed, not kubernetes.io, not
 * quota "requests."), hugepages-*, attachable-volumes-*, prefixed native (kubernetes.io/). */
static bool is_scalar_resource(const char *name)
{
	if (has_prefix(name, "hugepages-") || has_prefix(name, "attachable-volumes-"))
		return true;
	if (strstr(name, "kubernetes.io/"))
		return true;
	return strchr(name, '/') != NULL && !has_prefix(name, "requests.");
}

/* A resource list (requests/overhead/allocatable) into r (scalars malloc'd). has_cpu/has_memory
 * report the presence of those keys (for the non-zero defaults). */
static void decode_resource_list(struct dctx *c, const cJSON *list, const char *path, struct sk_resource *r,
				 bool *has_cpu, bool *has_memory)
{
	memset(r, 0, sizeof(*r));
	if (has_cpu)
		*has_cpu = false;
	if (has_memory)
		*has_memory = false;
	if (is_null(list))
		return;
	if (!cJSON_IsObject(list)) {
		fail(c, "%s: must be an object", path);
		return;
	}
	for (const cJSON *it = list->child; it; it = it->next) {
		if (!it->string) {
			fail(c, "%s: malformed object", path);
			return;
		}
		char numbuf[64];
		const char *text;
		if (cJSON_IsString(it) && it->valuestring) {
			text = it->valuestring;
		} else if (cJSON_IsNumber(it)) {
			if (it->valuestring && it->valuestring[0])
				text = it->valuestring;
			else {
				snprintf(numbuf, sizeof(numbuf), "%.17g", it->valuedouble);
				text = numbuf;
			}
		} else {
			fail(c, "%s[%s]: must be a quantity string", path, it->string);
			return;
		}
		struct kube_quantity q;
		char *qerr = NULL;
		if (kube_quantity_parse(text, &q, &qerr) != 0) {
			fail(c, "%s[%s]: invalid quantity \"%s\": %s", path, it->string, text,
			     qerr ? qerr : "unparseable");
			free(qerr);
			return;
		}
		if (kube_quantity_sign(&q) < 0) {
			fail(c, "%s[%s]: must be greater than or equal to 0", path, it->string);
			return;
		}
		const char *name = it->string;
		if (strcmp(name, SK_RESOURCE_CPU) == 0) {
			r->milli_cpu = kube_quantity_milli_value(&q);
			if (has_cpu)
				*has_cpu = true;
		} else if (strcmp(name, SK_RESOURCE_MEMORY) == 0) {
			r->memory = kube_quantity_value(&q);
			if (has_memory)
				*has_memory = true;
		} else if (strcmp(name, SK_RESOURCE_EPHEMERAL_STORAGE) == 0) {
			r->ephemeral_storage = kube_quantity_value(&q);
		} else if (strcmp(name, SK_RESOURCE_PODS) == 0) {
			r->allowed_pod_number = kube_quantity_value(&q);
		} else if (is_scalar_resource(name)) {
			const char *iname = intern_or_fail(c, name);
			if (!iname)
				return;
			int k = scalar_slot(r, iname);
			if (k < 0) {
				fail_oom(c);
				return;
			}
			r->scalar[k].value = kube_quantity_value(&q);
		}
	}
}

/* ---------- taints and tolerations ---------- */

bool sk_toleration_tolerates(const struct sk_toleration *t, const struct sk_taint *taint)
{
	if (t->effect != SK_EFFECT_NONE && t->effect != taint->effect)
		return false;
	if (t->key[0] && strcmp(t->key, taint->key) != 0)
		return false;
	if (t->op == SK_TOLERATION_EXISTS)
		return true;
	return strcmp(t->value, taint->value) == 0;
}

static int parse_effect(const char *s, enum sk_taint_effect *out)
{
	if (!s || !*s)
		*out = SK_EFFECT_NONE;
	else if (strcmp(s, "NoSchedule") == 0)
		*out = SK_EFFECT_NO_SCHEDULE;
	else if (strcmp(s, "PreferNoSchedule") == 0)
		*out = SK_EFFECT_PREFER_NO_SCHEDULE;
	else if (strcmp(s, "NoExecute") == 0)
		*out = SK_EFFECT_NO_EXECUTE;
	else
		return -1;
	return 0;
}

/* ---------- field paths ----------
 * The decode names each field it reads for its error messages ("spec.containers[0].image"), a
 * few per container, so every pod decode built them: snprintf was ~800 instructions a path. These
 * write what snprintf(buf, size, "%s%s", a, b) and snprintf(buf, size, "%s[%d]", a, i) write
 * (truncated the same way); a and buf do not overlap. */

static void path_join(char *buf, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > size - 1)
		la = size - 1;
	if (lb > size - 1 - la)
		lb = size - 1 - la;
	memcpy(buf, a, la);
	memcpy(buf + la, b, lb);
	buf[la + lb] = 0;
}

static void path_index(char *buf, size_t size, const char *a, int i)
{
	char digits[16], idx[20];
	unsigned int u = i < 0 ? 0u - (unsigned int)i : (unsigned int)i;
	int n = 0;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	int k = 0;
	idx[k++] = '[';
	if (i < 0)
		idx[k++] = '-';
	while (n)
		idx[k++] = digits[--n];
	idx[k++] = ']';
	idx[k] = 0;
	path_join(buf, size, a, idx);
}

/* ---------- time ---------- */

/* Every pod has a creationTimestamp, and sscanf + timegm were ~4,000 instructions of a pod's
 * decode. The canonical "YYYY-MM-DDThh:mm:ss" (a digit at each digit's place, 'T') is read here:
 * the sscanf below reads the same six numbers from it and stops at the same place (19). */
static bool canonical_rfc3339(const char *s, struct tm *tm)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	for (int i = 0; i < 19; i++) {
		bool digit = s[i] >= '0' && s[i] <= '9';
		if (shape[i] == 'd' ? !digit : s[i] != shape[i])
			return false;
	}
#define D2(k) ((s[k] - '0') * 10 + (s[(k) + 1] - '0'))
	tm->tm_year = D2(0) * 100 + D2(2);
	tm->tm_mon = D2(5);
	tm->tm_mday = D2(8);
	tm->tm_hour = D2(11);
	tm->tm_min = D2(14);
	tm->tm_sec = D2(17);
#undef D2
	return true;
}

/* Days from 1970-01-01 to year-month-01 (month 1..12), proleptic Gregorian: timegm's count. */
static int64_t days_to_month(int64_t year, int month)
{
	int64_t y = year - (month <= 2);
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;                            /* [0, 399] */
	int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5; /* from March 1 */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int parse_rfc3339(const char *s, time_t *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	int n = 19;
	bool canonical = canonical_rfc3339(s, &tm);
	if (!canonical &&
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) != 6 &&
	    sscanf(s, "%4d-%2d-%2dt%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) != 6)
		return -1;
	const char *p = s + n;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm, k = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &k) != 2 || k != 5)
			return -1;
		off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	if (canonical && tm.tm_mon >= 1 && tm.tm_mon <= 12) { /* timegm's sum; day, hour, minute, second linear */
		int64_t days = days_to_month(tm.tm_year, tm.tm_mon) + tm.tm_mday - 1;
		*out = (time_t)(days * 86400 + tm.tm_hour * 3600L + tm.tm_min * 60L + tm.tm_sec) - off;
		return 0;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = timegm(&tm) - off;
	return 0;
}

/* ---------- pods ---------- */

static void pod_free_contents(struct sk_pod *p)
{
	sk_resource_clear(&p->requests);
	kube_node_selector_free(p->required_affinity);
	kube_preferred_terms_free(p->preferred_affinity);
	struct sk_affinity_term *lists[4] = { p->affinity, p->anti_affinity, p->preferred_affinity_terms,
					       p->preferred_anti_affinity_terms };
	int counts[4] = { p->naffinity, p->nanti_affinity, p->npreferred_affinity, p->npreferred_anti_affinity };
	for (int l = 0; l < 4; l++)
		for (int i = 0; lists[l] && i < counts[l]; i++) {
			kube_label_selector_free(lists[l][i].selector);
			kube_label_selector_free(lists[l][i].ns_selector);
		}
	for (int i = 0; p->spread && i < p->nspread; i++)
		kube_label_selector_free(p->spread[i].selector);
	free(p->volumes);
}

/* labelSelector AND key In/NotIn [the pod's value] for each listed key the pod has
 * (matchLabelKeys / mismatchLabelKeys); a nil ("nothing") selector stays as it is. */
static struct kube_label_selector *merge_label_keys(struct dctx *c, struct kube_label_selector *sel,
						    const cJSON *keys, enum kube_selector_op op,
						    const struct sk_labels *labels, const char *path)
{
	if (!keys || !sel)
		return sel;
	int i = 0;
	for (const cJSON *k = keys->child; k; k = k->next, i++) {
		if (!cJSON_IsString(k) || !k->valuestring) {
			fail(c, "%s[%d]: must be a string", path, i);
			break;
		}
		if (kube_label_selector_is_nothing(sel))
			continue;
		const char *v = sk_labels_get(labels, k->valuestring);
		if (!v)
			continue;
		struct kube_label_selector *merged = NULL;
		char *serr = NULL;
		if (kube_label_selector_add(sel, k->valuestring, op, &v, 1, &merged, &serr) != 0) {
			fail(c, "%s[%d]: %s", path, i, serr ? serr : "invalid key");
			free(serr);
			break;
		}
		kube_label_selector_free(sel);
		sel = merged;
	}
	return sel;
}

/* One PodAffinityTerm at path into t. */
static void decode_affinity_term(struct dctx *c, const cJSON *term, const char *path, const struct sk_labels *labels,
				 struct sk_affinity_term *t)
{
	char sub[256];
	if (!cJSON_IsObject(term)) {
		fail(c, "%s: must be an object", path);
		return;
	}
	snprintf(sub, sizeof(sub), "%s.topologyKey", path);
	const char *tk = get_string(c, term, "topologyKey", sub);
	if (c->failed)
		return;
	t->topology_key = intern_or_fail(c, tk ? tk : "");

	const cJSON *ls = cJSON_GetObjectItemCaseSensitive(term, "labelSelector");
	char *serr = NULL;
	snprintf(sub, sizeof(sub), "%s.labelSelector", path);
	if (!is_null(ls) && !cJSON_IsObject(ls)) {
		fail(c, "%s: must be an object", sub);
		return;
	}
	if (!is_null(ls)) {
		if (kube_label_selector_from_json(ls, &t->selector, &serr) != 0) {
			fail(c, "%s: %s", sub, serr ? serr : "invalid selector");
			free(serr);
			return;
		}
	}
	snprintf(sub, sizeof(sub), "%s.matchLabelKeys", path);
	const cJSON *mlk = get_array(c, term, "matchLabelKeys", sub);
	if (c->failed)
		return;
	t->selector = merge_label_keys(c, t->selector, mlk, KUBE_SEL_IN, labels, sub);
	snprintf(sub, sizeof(sub), "%s.mismatchLabelKeys", path);
	const cJSON *mmk = get_array(c, term, "mismatchLabelKeys", sub);
	if (c->failed)
		return;
	t->selector = merge_label_keys(c, t->selector, mmk, KUBE_SEL_NOT_IN, labels, sub);
	if (c->failed)
		return;

	snprintf(sub, sizeof(sub), "%s.namespaceSelector", path);
	const cJSON *nss = get_object(c, term, "namespaceSelector", sub);
	if (c->failed)
		return;
	if (nss && kube_label_selector_from_json(nss, &t->ns_selector, &serr) != 0) {
		fail(c, "%s: %s", sub, serr ? serr : "invalid selector");
		free(serr);
		return;
	}
	snprintf(sub, sizeof(sub), "%s.namespaces", path);
	const cJSON *nsl = get_array(c, term, "namespaces", sub);
	if (c->failed || !nsl)
		return;
	int n = cJSON_GetArraySize(nsl);
	if (n == 0)
		return;
	t->namespaces = arena_alloc(c->a, sizeof(char *) * (size_t)n);
	if (!t->namespaces) {
		fail_oom(c);
		return;
	}
	for (const cJSON *it = nsl->child; it; it = it->next) {
		if (!cJSON_IsString(it) || !it->valuestring) {
			fail(c, "%s[%d]: must be a string", sub, t->nnamespaces);
			return;
		}
		if (!(t->namespaces[t->nnamespaces++] = intern_or_fail(c, it->valuestring)))
			return;
	}
}

/* required (PodAffinityTerm[]) or preferred (WeightedPodAffinityTerm[]) list. */
static void decode_affinity_terms(struct dctx *c, const cJSON *parent, const char *key, const char *path,
				  bool weighted, const struct sk_labels *labels, struct sk_affinity_term **out, int *nout)
{
	char sub[256];
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	const cJSON *arr = get_array(c, parent, key, sub);
	if (c->failed || !arr)
		return;
	int n = cJSON_GetArraySize(arr);
	if (n == 0)
		return;
	struct sk_affinity_term *terms = arena_alloc(c->a, sizeof(*terms) * (size_t)n);
	if (!terms) {
		fail_oom(c);
		return;
	}
	*out = terms;
	int i = 0;
	for (const cJSON *it = arr->child; it && i < n; it = it->next, i++) {
		char ipath[300];
		snprintf(ipath, sizeof(ipath), "%s[%d]", sub, i);
		*nout = i + 1; /* counted before decoding so a failure still frees what was compiled */
		if (weighted) {
			if (!cJSON_IsObject(it)) {
				fail(c, "%s: must be an object", ipath);
				return;
			}
			char wpath[320];
			snprintf(wpath, sizeof(wpath), "%s.weight", ipath);
			int32_t w = 0;
			get_int32(c, it, "weight", wpath, &w);
			terms[i].weight = w;
			snprintf(wpath, sizeof(wpath), "%s.podAffinityTerm", ipath);
			const cJSON *pat = get_object(c, it, "podAffinityTerm", wpath);
			if (c->failed)
				return;
			if (!pat) {
				fail(c, "%s: required", wpath);
				return;
			}
			decode_affinity_term(c, pat, wpath, labels, &terms[i]);
		} else {
			decode_affinity_term(c, it, ipath, labels, &terms[i]);
		}
		if (c->failed)
			return;
	}
}

static void decode_spread(struct dctx *c, const cJSON *spec, struct sk_pod *p)
{
	const cJSON *arr = get_array(c, spec, "topologySpreadConstraints", "spec.topologySpreadConstraints");
	if (c->failed || !arr)
		return;
	int n = cJSON_GetArraySize(arr);
	if (n == 0)
		return;
	p->spread = arena_alloc(c->a, sizeof(*p->spread) * (size_t)n);
	if (!p->spread) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = arr->child; it && i < n; it = it->next, i++) {
		char path[128], sub[192];
		snprintf(path, sizeof(path), "spec.topologySpreadConstraints[%d]", i);
		struct sk_spread_constraint *s = &p->spread[i];
		p->nspread = i + 1;
		s->min_domains = 1;
		if (!cJSON_IsObject(it)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.maxSkew", path);
		get_int32(c, it, "maxSkew", sub, &s->max_skew);
		snprintf(sub, sizeof(sub), "%s.topologyKey", path);
		const char *tk = get_string(c, it, "topologyKey", sub);
		snprintf(sub, sizeof(sub), "%s.whenUnsatisfiable", path);
		const char *wu = get_string(c, it, "whenUnsatisfiable", sub);
		if (c->failed)
			return;
		if (!wu || strcmp(wu, "DoNotSchedule") == 0)
			s->when_unsatisfiable = SK_DO_NOT_SCHEDULE;
		else if (strcmp(wu, "ScheduleAnyway") == 0)
			s->when_unsatisfiable = SK_SCHEDULE_ANYWAY;
		else {
			fail(c, "%s: Unsupported value: \"%s\"", sub, wu);
			return;
		}
		if (!(s->topology_key = intern_or_fail(c, tk ? tk : "")))
			return;
		snprintf(sub, sizeof(sub), "%s.minDomains", path);
		get_int32(c, it, "minDomains", sub, &s->min_domains);
		snprintf(sub, sizeof(sub), "%s.nodeAffinityPolicy", path);
		const char *nap = get_string(c, it, "nodeAffinityPolicy", sub);
		if (c->failed)
			return;
		if (nap && strcmp(nap, "Ignore") == 0)
			s->node_affinity_policy_ignore = true;
		else if (nap && strcmp(nap, "Honor") != 0) {
			fail(c, "%s: Unsupported value: \"%s\"", sub, nap);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.nodeTaintsPolicy", path);
		const char *ntp = get_string(c, it, "nodeTaintsPolicy", sub);
		if (c->failed)
			return;
		if (ntp && strcmp(ntp, "Honor") == 0)
			s->node_taints_policy_honor = true;
		else if (ntp && strcmp(ntp, "Ignore") != 0) {
			fail(c, "%s: Unsupported value: \"%s\"", sub, ntp);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.labelSelector", path);
		const cJSON *ls = get_object(c, it, "labelSelector", sub);
		if (c->failed)
			return;
		if (ls) {
			char *serr = NULL;
			if (kube_label_selector_from_json(ls, &s->selector, &serr) != 0) {
				fail(c, "%s: %s", sub, serr ? serr : "invalid selector");
				free(serr);
				return;
			}
		}
		snprintf(sub, sizeof(sub), "%s.matchLabelKeys", path);
		const cJSON *mlk = get_array(c, it, "matchLabelKeys", sub);
		if (c->failed)
			return;
		s->selector = merge_label_keys(c, s->selector, mlk, KUBE_SEL_IN, &p->labels, sub);
		if (c->failed)
			return;
	}
}

/* In-place resize (InPlacePodVerticalScaling): a running container's effective requests also
 * count what its status reports (upstream determineContainerReqs): max(spec, status.resources,
 * allocatedResources), or only the status values while a resize is Infeasible. */
struct resize_status {
	const cJSON *container_statuses, *init_container_statuses;
	bool infeasible;
};

static const cJSON *find_container_status(const struct resize_status *rs, const char *name)
{
	const cJSON *lists[2] = { rs->container_statuses, rs->init_container_statuses };
	for (int l = 0; l < 2 && name; l++)
		for (const cJSON *it = lists[l] ? lists[l]->child : NULL; it; it = it->next) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
			if (cJSON_IsString(n) && n->valuestring && strcmp(n->valuestring, name) == 0)
				return it;
		}
	return NULL;
}

/* Requests of one container into r (+ non-zero cpu/memory). */
/* req_cpu / req_mem: whether the container requests cpu / memory at all (key present). */
static void container_requests(struct dctx *c, const cJSON *ctr, const char *path, const struct resize_status *rs,
			       bool use_status, struct sk_resource *r, int64_t *nz_cpu, int64_t *nz_mem, bool *req_cpu,
			       bool *req_mem)
{
	char sub[160];
	bool has_cpu = false, has_mem = false;
	memset(r, 0, sizeof(*r));
	*nz_cpu = DEFAULT_MILLI_CPU_REQUEST;
	*nz_mem = DEFAULT_MEMORY_REQUEST;
	*req_cpu = *req_mem = false;
	path_join(sub, sizeof(sub), path, ".resources");
	const cJSON *res = get_object(c, ctr, "resources", sub);
	if (c->failed)
		return;
	if (res) {
		path_join(sub, sizeof(sub), path, ".resources.requests");
		decode_resource_list(c, cJSON_GetObjectItemCaseSensitive(res, "requests"), sub, r, &has_cpu, &has_mem);
		if (c->failed)
			return;
	}
	if (use_status && (rs->container_statuses || rs->init_container_statuses)) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ctr, "name");
		const cJSON *cs = find_container_status(rs, cJSON_IsString(name) ? name->valuestring : NULL);
		const cJSON *csres = cs ? cJSON_GetObjectItemCaseSensitive(cs, "resources") : NULL;
		if (cJSON_IsObject(csres)) {
			struct sk_resource st, alloc;
			bool sc = false, sm = false, ac = false, am = false;
			decode_resource_list(c, cJSON_GetObjectItemCaseSensitive(csres, "requests"),
					     "status.containerStatuses[].resources.requests", &st, &sc, &sm);
			if (!c->failed)
				decode_resource_list(c, cJSON_GetObjectItemCaseSensitive(cs, "allocatedResources"),
						     "status.containerStatuses[].allocatedResources", &alloc, &ac, &am);
			else
				memset(&alloc, 0, sizeof(alloc));
			if (!c->failed) {
				if (rs->infeasible) {
					sk_resource_clear(r);
					has_cpu = has_mem = false;
				}
				if (resource_max(r, &st) != 0 || resource_max(r, &alloc) != 0)
					fail_oom(c);
				has_cpu = has_cpu || sc || ac;
				has_mem = has_mem || sm || am;
			}
			sk_resource_clear(&st);
			sk_resource_clear(&alloc);
			if (c->failed)
				return;
		}
	}
	if (has_cpu)
		*nz_cpu = r->milli_cpu;
	if (has_mem)
		*nz_mem = r->memory;
	*req_cpu = has_cpu;
	*req_mem = has_mem;
}

static enum sk_protocol parse_protocol(const char *s, bool *ok)
{
	*ok = true;
	if (!s || !*s || strcmp(s, "TCP") == 0)
		return SK_PROTO_TCP;
	if (strcmp(s, "UDP") == 0)
		return SK_PROTO_UDP;
	if (strcmp(s, "SCTP") == 0)
		return SK_PROTO_SCTP;
	*ok = false;
	return SK_PROTO_TCP;
}

/* Containers pass: requests arithmetic (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)), host ports, images. */
struct container_acc {
	struct sk_resource sum, sidecars, init_max, tmp;
	int64_t nz_sum_cpu, nz_sum_mem, nz_side_cpu, nz_side_mem, nz_max_cpu, nz_max_mem;
	bool any_cpu, any_mem; /* some container (init included) requests cpu / memory */
	int nports, cap_ports;
	struct sk_host_port *ports; /* malloc'd while collecting */
};

static void collect_ports(struct dctx *c, const cJSON *ctr, const char *path, struct container_acc *acc)
{
	char sub[192];
	path_join(sub, sizeof(sub), path, ".ports");
	const cJSON *ports = get_array(c, ctr, "ports", sub);
	if (c->failed || !ports)
		return;
	int i = 0;
	for (const cJSON *pt = ports->child; pt; pt = pt->next, i++) {
		char ppath[224];
		path_index(ppath, sizeof(ppath), sub, i);
		if (!cJSON_IsObject(pt)) {
			fail(c, "%s: must be an object", ppath);
			return;
		}
		char fpath[256];
		int32_t hp = 0;
		path_join(fpath, sizeof(fpath), ppath, ".hostPort");
		get_int32(c, pt, "hostPort", fpath, &hp);
		path_join(fpath, sizeof(fpath), ppath, ".hostIP");
		const char *ip = get_string(c, pt, "hostIP", fpath);
		path_join(fpath, sizeof(fpath), ppath, ".protocol");
		const char *proto = get_string(c, pt, "protocol", fpath);
		if (c->failed)
			return;
		bool ok;
		enum sk_protocol pr = parse_protocol(proto, &ok);
		if (!ok) {
			fail(c, "%s: Unsupported value: \"%s\"", fpath, proto);
			return;
		}
		if (hp <= 0)
			continue;
		if (acc->nports == acc->cap_ports) {
			int cap = acc->cap_ports ? acc->cap_ports * 2 : 4;
			struct sk_host_port *np = realloc(acc->ports, sizeof(*np) * (size_t)cap);
			if (!np) {
				fail_oom(c);
				return;
			}
			acc->ports = np;
			acc->cap_ports = cap;
		}
		struct sk_host_port *h = &acc->ports[acc->nports++];
		h->host_ip = intern_or_fail(c, ip && *ip ? ip : "0.0.0.0");
		h->protocol = pr;
		h->port = hp;
		if (c->failed)
			return;
	}
}

/* Upstream ImageLocality normalizedImageName: append ":latest" when there is no tag after the
 * last '/' (a digest "@sha256:..." counts as tagged, as upstream's test of the last ':' does). */
static const char *normalize_image(struct dctx *c, const char *image)
{
	const char *colon = strrchr(image, ':');
	const char *slash = strrchr(image, '/');
	if (colon && (!slash || colon > slash))
		return intern_or_fail(c, image);
	size_t n = strlen(image);
	char *buf = malloc(n + 8);
	if (!buf) {
		fail_oom(c);
		return NULL;
	}
	memcpy(buf, image, n);
	memcpy(buf + n, ":latest", 8);
	const char *r = intern_or_fail(c, buf);
	free(buf);
	return r;
}

static void decode_containers(struct dctx *c, const cJSON *spec, const struct resize_status *rs, struct sk_pod *p,
			      struct container_acc *acc)
{
	const cJSON *ctrs = get_array(c, spec, "containers", "spec.containers");
	const cJSON *inits = get_array(c, spec, "initContainers", "spec.initContainers");
	if (c->failed)
		return;
	int nc = ctrs ? cJSON_GetArraySize(ctrs) : 0, ni = inits ? cJSON_GetArraySize(inits) : 0;
	p->ncontainers = nc + ni;
	if (nc + ni > 0) {
		p->images = arena_alloc(c->a, sizeof(char *) * (size_t)(nc + ni));
		if (!p->images) {
			fail_oom(c);
			return;
		}
	}
	/* Init containers first for the image list (init + regular), requests in upstream order. */
	for (int pass = 0; pass < 2; pass++) {
		const cJSON *arr = pass == 0 ? inits : ctrs;
		const char *base = pass == 0 ? "spec.initContainers" : "spec.containers";
		int i = 0;
		for (const cJSON *ctr = arr ? arr->child : NULL; ctr; ctr = ctr->next, i++) {
			char path[96], sub[160];
			path_index(path, sizeof(path), base, i);
			if (!cJSON_IsObject(ctr)) {
				fail(c, "%s: must be an object", path);
				return;
			}
			path_join(sub, sizeof(sub), path, ".image");
			const char *image = get_string(c, ctr, "image", sub);
			path_join(sub, sizeof(sub), path, ".restartPolicy");
			const char *rp = pass == 0 ? get_string(c, ctr, "restartPolicy", sub) : NULL;
			if (c->failed)
				return;
			if (image && *image && !(p->images[p->nimages++] = normalize_image(c, image)))
				return;
			bool sidecar = rp && strcmp(rp, "Always") == 0;
			int64_t nzc, nzm;
			/* status resources count for regular containers and sidecars (upstream) */
			bool rc_cpu, rc_mem;
			container_requests(c, ctr, path, rs, pass == 1 || sidecar, &acc->tmp, &nzc, &nzm, &rc_cpu,
					   &rc_mem);
			if (c->failed)
				return;
			acc->any_cpu = acc->any_cpu || rc_cpu;
			acc->any_mem = acc->any_mem || rc_mem;
			if (pass == 1 || sidecar) {
				collect_ports(c, ctr, path, acc);
				if (c->failed)
					return;
			}
			if (pass == 1) {
				if (sk_resource_add(&acc->sum, &acc->tmp, 1) != 0)
					goto oom;
				acc->nz_sum_cpu = sat_add(acc->nz_sum_cpu, nzc);
				acc->nz_sum_mem = sat_add(acc->nz_sum_mem, nzm);
			} else if (sidecar) {
				/* A sidecar runs for the pod's life: it adds to the sum, and its init-phase need
				 * is every sidecar started so far. */
				if (sk_resource_add(&acc->sum, &acc->tmp, 1) != 0 ||
				    sk_resource_add(&acc->sidecars, &acc->tmp, 1) != 0 ||
				    resource_max(&acc->init_max, &acc->sidecars) != 0)
					goto oom;
				acc->nz_sum_cpu = sat_add(acc->nz_sum_cpu, nzc);
				acc->nz_sum_mem = sat_add(acc->nz_sum_mem, nzm);
				acc->nz_side_cpu = sat_add(acc->nz_side_cpu, nzc);
				acc->nz_side_mem = sat_add(acc->nz_side_mem, nzm);
				if (acc->nz_side_cpu > acc->nz_max_cpu)
					acc->nz_max_cpu = acc->nz_side_cpu;
				if (acc->nz_side_mem > acc->nz_max_mem)
					acc->nz_max_mem = acc->nz_side_mem;
			} else {
				if (sk_resource_add(&acc->tmp, &acc->sidecars, 1) != 0 ||
				    resource_max(&acc->init_max, &acc->tmp) != 0)
					goto oom;
				if (sat_add(nzc, acc->nz_side_cpu) > acc->nz_max_cpu)
					acc->nz_max_cpu = sat_add(nzc, acc->nz_side_cpu);
				if (sat_add(nzm, acc->nz_side_mem) > acc->nz_max_mem)
					acc->nz_max_mem = sat_add(nzm, acc->nz_side_mem);
			}
			sk_resource_clear(&acc->tmp);
		}
	}
	return;
oom:
	fail_oom(c);
}

static void compute_requests(struct dctx *c, const cJSON *spec, struct sk_pod *p, struct container_acc *acc)
{
	if (resource_max(&acc->sum, &acc->init_max) != 0) {
		fail_oom(c);
		return;
	}
	int64_t nz_cpu = acc->nz_sum_cpu > acc->nz_max_cpu ? acc->nz_sum_cpu : acc->nz_max_cpu;
	int64_t nz_mem = acc->nz_sum_mem > acc->nz_max_mem ? acc->nz_sum_mem : acc->nz_max_mem;

	/* Pod-level resources replace the container aggregate for cpu and memory. */
	const cJSON *pres = get_object(c, spec, "resources", "spec.resources");
	if (c->failed)
		return;
	if (pres) {
		struct sk_resource pl;
		bool has_cpu, has_mem;
		const cJSON *preq = cJSON_GetObjectItemCaseSensitive(pres, "requests");
		const cJSON *plim = cJSON_GetObjectItemCaseSensitive(pres, "limits");
		decode_resource_list(c, preq, "spec.resources.requests", &pl, &has_cpu, &has_mem);
		/* IsPodLevelRequestsSet: any pod-level request, or a cpu/memory pod-level limit */
		bool level_set = (cJSON_IsObject(preq) && preq->child) ||
				 (cJSON_IsObject(plim) && (cJSON_GetObjectItemCaseSensitive(plim, "cpu") ||
							   cJSON_GetObjectItemCaseSensitive(plim, "memory")));
		if (!c->failed) {
			if (has_cpu)
				acc->sum.milli_cpu = nz_cpu = pl.milli_cpu;
			if (has_mem)
				acc->sum.memory = nz_mem = pl.memory;
			/* getNonMissingContainerRequests: with pod-level resources set, the 100m / 200Mi
			 * defaults apply only to a resource that neither the pod level nor any container
			 * requests; otherwise the non-zero value is the real aggregate. */
			if (level_set && !has_cpu && acc->any_cpu)
				nz_cpu = acc->sum.milli_cpu;
			if (level_set && !has_mem && acc->any_mem)
				nz_mem = acc->sum.memory;
		}
		sk_resource_clear(&pl);
		if (c->failed)
			return;
	}

	struct sk_resource ov;
	decode_resource_list(c, cJSON_GetObjectItemCaseSensitive(spec, "overhead"), "spec.overhead", &ov, NULL, NULL);
	if (!c->failed) {
		ov.allowed_pod_number = 0;
		if (sk_resource_add(&acc->sum, &ov, 1) != 0)
			fail_oom(c);
		nz_cpu = sat_add(nz_cpu, ov.milli_cpu);
		nz_mem = sat_add(nz_mem, ov.memory);
	}
	sk_resource_clear(&ov);
	if (c->failed)
		return;
	acc->sum.allowed_pod_number = 0;
	p->requests = acc->sum;
	memset(&acc->sum, 0, sizeof(acc->sum));
	p->non_zero_milli_cpu = nz_cpu;
	p->non_zero_memory = nz_mem;
	p->requests_nothing = p->requests.milli_cpu == 0 && p->requests.memory == 0 &&
			      p->requests.ephemeral_storage == 0 && p->requests.nscalar == 0;
}

static void decode_tolerations(struct dctx *c, const cJSON *spec, struct sk_pod *p)
{
	const cJSON *arr = get_array(c, spec, "tolerations", "spec.tolerations");
	if (c->failed || !arr)
		return;
	int n = cJSON_GetArraySize(arr);
	if (n == 0)
		return;
	p->tolerations = arena_alloc(c->a, sizeof(*p->tolerations) * (size_t)n);
	if (!p->tolerations) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = arr->child; it && i < n; it = it->next, i++) {
		char path[64], sub[96];
		snprintf(path, sizeof(path), "spec.tolerations[%d]", i);
		if (!cJSON_IsObject(it)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		struct sk_toleration *t = &p->tolerations[i];
		snprintf(sub, sizeof(sub), "%s.key", path);
		const char *key = get_string(c, it, "key", sub);
		snprintf(sub, sizeof(sub), "%s.value", path);
		const char *value = get_string(c, it, "value", sub);
		snprintf(sub, sizeof(sub), "%s.operator", path);
		const char *op = get_string(c, it, "operator", sub);
		if (c->failed)
			return;
		if (!op || !*op || strcmp(op, "Equal") == 0)
			t->op = SK_TOLERATION_EQUAL;
		else if (strcmp(op, "Exists") == 0)
			t->op = SK_TOLERATION_EXISTS;
		else {
			fail(c, "%s: Unsupported value: \"%s\"", sub, op);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.effect", path);
		const char *eff = get_string(c, it, "effect", sub);
		if (c->failed)
			return;
		if (parse_effect(eff, &t->effect) != 0) {
			fail(c, "%s: Unsupported value: \"%s\"", sub, eff);
			return;
		}
		t->key = intern_or_fail(c, key ? key : "");
		t->value = intern_or_fail(c, value ? value : "");
		if (c->failed)
			return;
		p->ntolerations = i + 1;
	}
}

static void decode_node_affinity(struct dctx *c, const cJSON *aff, struct sk_pod *p)
{
	const cJSON *na = get_object(c, aff, "nodeAffinity", "spec.affinity.nodeAffinity");
	if (c->failed || !na)
		return;
	const char *rpath = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
	const cJSON *req = get_object(c, na, "requiredDuringSchedulingIgnoredDuringExecution", rpath);
	if (c->failed)
		return;
	char *serr = NULL;
	if (req) {
		const cJSON *terms = cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms");
		if (!is_null(terms) && !cJSON_IsArray(terms)) {
			fail(c, "%s.nodeSelectorTerms: must be an array", rpath);
			return;
		}
		char tpath[160];
		snprintf(tpath, sizeof(tpath), "%s.nodeSelectorTerms", rpath);
		/* Lazy like upstream: a malformed term never matches, the others still do. */
		if (kube_node_selector_compile(is_null(terms) ? NULL : terms, tpath, KUBE_NODE_SELECTOR_LAZY,
					       &p->required_affinity, &serr) != 0) {
			fail(c, "%s", serr ? serr : "invalid node selector");
			free(serr);
			return;
		}
		/* node label keys and values are interned (types.h), as the pod's own labels are: with
		 * the selector's interned too, NodeAffinity's per-node match finds the key by pointer and
		 * compares the values by pointer before any strcmp, whichever of the pod and the node
		 * was decoded first */
		kube_node_selector_canonicalize(p->required_affinity, sk_intern);
		free(serr);
		serr = NULL;
	}
	const char *ppath = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";
	const cJSON *pref = get_array(c, na, "preferredDuringSchedulingIgnoredDuringExecution", ppath);
	if (c->failed || !pref)
		return;
	if (kube_preferred_terms_compile(pref, ppath, KUBE_NODE_SELECTOR_LAZY, &p->preferred_affinity, &serr) != 0) {
		fail(c, "%s", serr ? serr : "invalid preferred terms");
		free(serr);
		return;
	}
	kube_preferred_terms_canonicalize(p->preferred_affinity, sk_intern);
	free(serr);
}

static void decode_pod_affinity(struct dctx *c, const cJSON *aff, struct sk_pod *p)
{
	static const char *const req = "requiredDuringSchedulingIgnoredDuringExecution";
	static const char *const pref = "preferredDuringSchedulingIgnoredDuringExecution";
	const cJSON *pa = get_object(c, aff, "podAffinity", "spec.affinity.podAffinity");
	const cJSON *paa = get_object(c, aff, "podAntiAffinity", "spec.affinity.podAntiAffinity");
	if (c->failed)
		return;
	if (pa) {
		decode_affinity_terms(c, pa, req, "spec.affinity.podAffinity", false, &p->labels, &p->affinity,
				      &p->naffinity);
		if (c->failed)
			return;
		decode_affinity_terms(c, pa, pref, "spec.affinity.podAffinity", true, &p->labels,
				      &p->preferred_affinity_terms, &p->npreferred_affinity);
		if (c->failed)
			return;
	}
	if (paa) {
		decode_affinity_terms(c, paa, req, "spec.affinity.podAntiAffinity", false, &p->labels,
				      &p->anti_affinity, &p->nanti_affinity);
		if (c->failed)
			return;
		decode_affinity_terms(c, paa, pref, "spec.affinity.podAntiAffinity", true, &p->labels,
				      &p->preferred_anti_affinity_terms, &p->npreferred_anti_affinity);
	}
}

static void decode_name_list(struct dctx *c, const cJSON *arr, const char *path, const char *field,
			     const char ***out, int *nout)
{
	int n = cJSON_GetArraySize(arr);
	if (n == 0)
		return;
	*out = arena_alloc(c->a, sizeof(char *) * (size_t)n);
	if (!*out) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = arr->child; it && i < n; it = it->next, i++) {
		char sub[96];
		snprintf(sub, sizeof(sub), "%s[%d]", path, i);
		if (!cJSON_IsObject(it)) {
			fail(c, "%s: must be an object", sub);
			return;
		}
		char fpath[128];
		snprintf(fpath, sizeof(fpath), "%s.%s", sub, field);
		const char *name = get_string(c, it, field, fpath);
		if (c->failed)
			return;
		if (!name) {
			fail(c, "%s: Required value", fpath);
			return;
		}
		if (!((*out)[(*nout)++] = intern_or_fail(c, name)))
			return;
	}
}

static void decode_volumes(struct dctx *c, const cJSON *spec, struct sk_pod *p)
{
	const cJSON *vols = get_array(c, spec, "volumes", "spec.volumes");
	if (c->failed || !vols)
		return;
	char *verr = NULL;
	if (sk_pod_volumes_decode(vols, p->name, &p->volumes, &p->nvolumes, &verr) != 0) {
		fail(c, "%s", verr ? verr : "out of memory");
		free(verr);
		return;
	}
	int n = cJSON_GetArraySize(vols);
	if (n == 0)
		return;
	p->pvc_names = arena_alloc(c->a, sizeof(char *) * (size_t)n);
	if (!p->pvc_names) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *v = vols->child; v && i < n; v = v->next, i++) {
		char path[64], sub[128];
		snprintf(path, sizeof(path), "spec.volumes[%d]", i);
		if (!cJSON_IsObject(v)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.persistentVolumeClaim", path);
		const cJSON *pvc = get_object(c, v, "persistentVolumeClaim", sub);
		snprintf(sub, sizeof(sub), "%s.ephemeral", path);
		const cJSON *eph = get_object(c, v, "ephemeral", sub);
		if (c->failed)
			return;
		if (pvc) {
			snprintf(sub, sizeof(sub), "%s.persistentVolumeClaim.claimName", path);
			const char *cn = get_string(c, pvc, "claimName", sub);
			if (c->failed)
				return;
			if (!cn || !*cn) {
				fail(c, "%s: Required value", sub);
				return;
			}
			if (!(p->pvc_names[p->npvcs++] = intern_or_fail(c, cn)))
				return;
		} else if (eph) {
			/* A generic ephemeral volume is backed by the PVC "<pod name>-<volume name>". */
			snprintf(sub, sizeof(sub), "%s.name", path);
			const char *vn = get_string(c, v, "name", sub);
			if (c->failed)
				return;
			if (!vn) {
				fail(c, "%s: Required value", sub);
				return;
			}
			char *name = NULL;
			if (asprintf(&name, "%s-%s", p->name, vn) < 0) {
				fail_oom(c);
				return;
			}
			p->pvc_names[p->npvcs++] = intern_or_fail(c, name);
			free(name);
			if (c->failed)
				return;
		}
	}
}

static void decode_owner(struct dctx *c, const cJSON *meta, struct sk_pod *p)
{
	const cJSON *refs = get_array(c, meta, "ownerReferences", "metadata.ownerReferences");
	if (c->failed || !refs)
		return;
	int i = 0;
	for (const cJSON *r = refs->child; r; r = r->next, i++) {
		char path[64], sub[96];
		snprintf(path, sizeof(path), "metadata.ownerReferences[%d]", i);
		if (!cJSON_IsObject(r)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.controller", path);
		if (!get_bool(c, r, "controller", sub) || c->failed)
			continue;
		snprintf(sub, sizeof(sub), "%s.kind", path);
		const char *kind = get_string(c, r, "kind", sub);
		snprintf(sub, sizeof(sub), "%s.uid", path);
		const char *uid = get_string(c, r, "uid", sub);
		snprintf(sub, sizeof(sub), "%s.name", path);
		const char *name = get_string(c, r, "name", sub);
		snprintf(sub, sizeof(sub), "%s.apiVersion", path);
		const char *api_version = get_string(c, r, "apiVersion", sub);
		if (c->failed)
			return;
		p->owner_kind = intern_or_fail(c, kind ? kind : "");
		p->owner_uid = intern_or_fail(c, uid ? uid : "");
		p->owner_name = intern_or_fail(c, name ? name : "");
		p->owner_api_version = intern_or_fail(c, api_version ? api_version : "");
		return;
	}
}

static struct pod_box *pod_box_new(void)
{
	struct pod_box *b = calloc(1, sizeof(*b));
	if (b)
		b->pod.refcount = 1;
	return b;
}

static void pod_box_free(struct pod_box *b)
{
	if (b->parent)
		sk_pod_unref(b->parent);
	else
		pod_free_contents(&b->pod);
	arena_free(&b->arena);
	sk_obj_raw_free(&b->raw);
	free(b->own_rv);
	free(b);
}

/* metadata: name, namespace, uid, resourceVersion, timestamps, labels, the controller owner.
 * Returns the metadata object, or NULL with c->failed. */
static const cJSON *decode_pod_meta(struct dctx *c, const cJSON *obj, struct sk_pod *p)
{
	const cJSON *meta = get_object(c, obj, "metadata", "metadata");
	if (c->failed)
		return NULL;
	if (!meta) {
		fail(c, "metadata: Required value");
		return NULL;
	}
	const char *name = get_string(c, meta, "name", "metadata.name");
	const char *ns = get_string(c, meta, "namespace", "metadata.namespace");
	if (c->failed)
		return NULL;
	path_join(c->objname, sizeof(c->objname), ns ? ns : "", "/"); /* "%s/%s", ns, name */
	size_t nsl = strlen(c->objname);
	path_join(c->objname + nsl, sizeof(c->objname) - nsl, name ? name : "", "");
	if (!name || !*name) {
		fail(c, "metadata.name: Required value");
		return NULL;
	}
	const char *uid = get_string(c, meta, "uid", "metadata.uid");
	const char *rv = get_string(c, meta, "resourceVersion", "metadata.resourceVersion");
	const char *cts = get_string(c, meta, "creationTimestamp", "metadata.creationTimestamp");
	const char *dts = get_string(c, meta, "deletionTimestamp", "metadata.deletionTimestamp");
	if (c->failed)
		return NULL;
	p->name = arena_strdup(c->a, name);
	p->ns = arena_strdup(c->a, ns ? ns : "");
	/* Objects from the API always carry a uid; hand-written ones fall back to their key. */
	p->uid = uid && *uid ? arena_strdup(c->a, uid) : arena_strdup(c->a, c->objname);
	p->resource_version = arena_strdup(c->a, rv ? rv : "");
	if (!p->name || !p->ns || !p->uid || !p->resource_version) {
		fail_oom(c);
		return NULL;
	}
	if (cts && *cts && parse_rfc3339(cts, &p->creation_time) != 0) {
		fail(c, "metadata.creationTimestamp: invalid time \"%s\"", cts);
		return NULL;
	}
	if (dts && *dts) {
		time_t dt;
		if (parse_rfc3339(dts, &dt) != 0) {
			fail(c, "metadata.deletionTimestamp: invalid time \"%s\"", dts);
			return NULL;
		}
		p->terminating = true;
	}
	decode_string_map(c, cJSON_GetObjectItemCaseSensitive(meta, "labels"), "metadata.labels", &p->labels);
	if (c->failed)
		return NULL;
	decode_owner(c, meta, p);
	return c->failed ? NULL : meta;
}

/* schedulerName, nodeName, preemptionPolicy, priority; status.nominatedNodeName and phase
 * (Pending when unset). status may be NULL. */
static void decode_pod_scheduling_fields(struct dctx *c, const cJSON *spec, const cJSON *status, struct sk_pod *p)
{
	const char *sn = get_string(c, spec, "schedulerName", "spec.schedulerName");
	const char *nn = get_string(c, spec, "nodeName", "spec.nodeName");
	const char *pp = get_string(c, spec, "preemptionPolicy", "spec.preemptionPolicy");
	get_int32(c, spec, "priority", "spec.priority", &p->priority);
	p->host_network = get_bool(c, spec, "hostNetwork", "spec.hostNetwork");
	if (c->failed)
		return;
	p->scheduler_name = intern_or_fail(c, sn && *sn ? sn : DEFAULT_SCHEDULER_NAME);
	if (nn && *nn)
		p->node_name = intern_or_fail(c, nn);
	if (pp && strcmp(pp, "Never") == 0)
		p->preempt_never = true;
	else if (pp && *pp && strcmp(pp, "PreemptLowerPriority") != 0) {
		fail(c, "spec.preemptionPolicy: Unsupported value: \"%s\"", pp);
		return;
	}
	if (status) {
		const char *nom = get_string(c, status, "nominatedNodeName", "status.nominatedNodeName");
		const char *phase = get_string(c, status, "phase", "status.phase");
		if (c->failed)
			return;
		if (nom && *nom)
			p->nominated_node_name = intern_or_fail(c, nom);
		if (phase && *phase)
			p->phase = intern_or_fail(c, phase);
	}
	if (!p->phase)
		p->phase = intern_or_fail(c, "Pending");
}

/* The container statuses and whether an in-place resize is Infeasible (status.resize, or a
 * PodResizePending condition with reason Infeasible). status may be NULL. */
static struct resize_status resize_status_of(const cJSON *status)
{
	struct resize_status rs = { 0 };
	if (!status)
		return rs;
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(status, "containerStatuses");
	const cJSON *ics = cJSON_GetObjectItemCaseSensitive(status, "initContainerStatuses");
	rs.container_statuses = cJSON_IsArray(cs) ? cs : NULL;
	rs.init_container_statuses = cJSON_IsArray(ics) ? ics : NULL;
	const cJSON *resize = cJSON_GetObjectItemCaseSensitive(status, "resize");
	rs.infeasible = cJSON_IsString(resize) && resize->valuestring && strcmp(resize->valuestring, "Infeasible") == 0;
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	for (const cJSON *cd = cJSON_IsArray(conds) ? conds->child : NULL; cd; cd = cd->next) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(cd, "type");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(cd, "reason");
		if (cJSON_IsString(t) && t->valuestring && strcmp(t->valuestring, "PodResizePending") == 0 &&
		    cJSON_IsString(r) && r->valuestring && strcmp(r->valuestring, "Infeasible") == 0)
			rs.infeasible = true;
	}
	return rs;
}

/* Containers, the pod's requests and its host ports (copied into the arena). */
static void decode_pod_resources(struct dctx *c, const cJSON *spec, const cJSON *status, struct sk_pod *p,
				 struct container_acc *acc)
{
	struct resize_status rs = resize_status_of(status);
	decode_containers(c, spec, &rs, p, acc);
	if (c->failed)
		return;
	compute_requests(c, spec, p, acc);
	if (c->failed || acc->nports == 0)
		return;
	p->host_ports = arena_alloc(c->a, sizeof(*p->host_ports) * (size_t)acc->nports);
	if (!p->host_ports) {
		fail_oom(c);
		return;
	}
	memcpy(p->host_ports, acc->ports, sizeof(*p->host_ports) * (size_t)acc->nports);
	p->nhost_ports = acc->nports;
}

/* Where the pod may go: nodeSelector, affinity, tolerations, topology spread, scheduling gates
 * and volumes. */
static void decode_pod_placement(struct dctx *c, const cJSON *spec, struct sk_pod *p)
{
	decode_string_map(c, cJSON_GetObjectItemCaseSensitive(spec, "nodeSelector"), "spec.nodeSelector",
			  &p->node_selector);
	if (c->failed)
		return;
	const cJSON *aff = get_object(c, spec, "affinity", "spec.affinity");
	if (c->failed)
		return;
	if (aff) {
		decode_node_affinity(c, aff, p);
		if (c->failed)
			return;
		decode_pod_affinity(c, aff, p);
		if (c->failed)
			return;
	}
	decode_tolerations(c, spec, p);
	if (c->failed)
		return;
	decode_spread(c, spec, p);
	if (c->failed)
		return;
	const cJSON *gates = get_array(c, spec, "schedulingGates", "spec.schedulingGates");
	if (c->failed)
		return;
	if (gates)
		decode_name_list(c, gates, "spec.schedulingGates", "name", &p->scheduling_gates, &p->nscheduling_gates);
	if (c->failed)
		return;
	decode_volumes(c, spec, p);
}

struct sk_pod *sk_pod_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct pod_box *b = pod_box_new();
	if (!b) {
		if (err)
			*err = strdup("pod: out of memory");
		return NULL;
	}
	struct sk_pod *p = &b->pod;
	struct dctx cx = { .a = &b->arena, .err = err, .kind = "pod" };
	struct dctx *c = &cx;
	struct container_acc acc;
	memset(&acc, 0, sizeof(acc));

	if (!cJSON_IsObject(obj)) {
		fail(c, "must be a JSON object");
		goto out;
	}
	if (!decode_pod_meta(c, obj, p))
		goto out;
	const cJSON *spec = get_object(c, obj, "spec", "spec");
	const cJSON *status = get_object(c, obj, "status", "status");
	if (c->failed)
		goto out;
	static const cJSON empty_obj = { .type = cJSON_Object };
	if (!spec)
		spec = &empty_obj;
	decode_pod_scheduling_fields(c, spec, status, p);
	if (c->failed)
		goto out;
	decode_pod_resources(c, spec, status, p, &acc);
	if (c->failed)
		goto out;
	decode_pod_placement(c, spec, p);
	if (!c->failed && sk_obj_raw_keep(&b->raw, obj, true) != 0)
		fail_oom(c);
	if (!c->failed && b->raw.shared) { /* the informer's object: what its store would answer */
		b->facts = true;
		b->start_ns = sk_pod_object_start_time(obj);
		b->terminating_by_preemption = sk_pod_object_terminating_by_preemption(obj);
	}

out:
	sk_resource_clear(&acc.sum);
	sk_resource_clear(&acc.sidecars);
	sk_resource_clear(&acc.init_max);
	sk_resource_clear(&acc.tmp);
	free(acc.ports);
	if (c->failed) {
		if (err && !*err)
			*err = strdup("pod: out of memory");
		pod_box_free(b);
		return NULL;
	}
	return p;
}

struct sk_pod *sk_pod_ref(struct sk_pod *p)
{
	if (p)
		__atomic_add_fetch(&p->refcount, 1, __ATOMIC_RELAXED);
	return p;
}

void sk_pod_unref(struct sk_pod *p)
{
	if (!p)
		return;
	if (__atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pod_box_free(POD_BOX(p));
}

const char *sk_pod_key(const struct sk_pod *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", p->ns, p->name);
	return buf;
}

struct sk_pod *sk_pod_with_node(const struct sk_pod *p, const char *node_name)
{
	struct pod_box *b = pod_box_new();
	if (!b)
		return NULL;
	const char *nn = NULL;
	if (node_name && *node_name && !(nn = sk_intern(node_name))) {
		free(b);
		return NULL;
	}
	struct pod_box *src = POD_BOX(p);
	b->pod = *p;
	b->pod.refcount = 1;
	b->pod.node_name = nn;
	/* Share the memory of the pod that owns it: a reference to p's root when p is a plain copy,
	 * to p itself when p owns some (a root, or an echo with its own text). */
	bool owns = !src->parent || src->raw.json || src->own_rv;
	b->parent = sk_pod_ref(owns ? (struct sk_pod *)p : src->parent);
	return &b->pod;
}

const struct sk_obj_raw *sk_pod_raw(const struct sk_pod *p)
{
	const struct pod_box *b = POD_BOX(p);
	while (b->parent && !b->raw.json)
		b = POD_BOX(b->parent);
	return &b->raw;
}

int64_t sk_pod_object_start_time(const cJSON *pod)
{
	const char *s = kube_obj_get_string(pod, "status.startTime");
	time_t t;
	if (!s || !*s || kube_time_parse_rfc3339(s, &t) != 0)
		return -1;
	return (int64_t)t * 1000000000LL;
}

bool sk_pod_object_terminating_by_preemption(const cJSON *pod)
{
	if (!kube_obj_get_string(pod, "metadata.deletionTimestamp"))
		return false;
	const cJSON *c = kube_condition_find(kube_obj_get(pod, "status.conditions"), "DisruptionTarget");
	if (!c)
		return false;
	const char *st = kube_obj_get_string(c, "status"), *reason = kube_obj_get_string(c, "reason");
	return st && !strcmp(st, "True") && reason && !strcmp(reason, "PreemptionByScheduler");
}

bool sk_pod_version_facts(const struct sk_pod *p, int64_t *start_ns, bool *terminating)
{
	/* a copy (sk_pod_with_node) is its source's version; an echo has its own text and no facts */
	const struct pod_box *b = POD_BOX(p);
	while (b->parent && !b->raw.json)
		b = POD_BOX(b->parent);
	if (!b->facts)
		return false;
	*start_ns = b->start_ns;
	*terminating = b->terminating_by_preemption;
	return true;
}

/* The root of p: the pod that decoded the memory p shares. */
static const struct pod_box *pod_root(const struct sk_pod *p)
{
	const struct pod_box *b = POD_BOX(p);
	while (b->parent)
		b = POD_BOX(b->parent);
	return b;
}

/* What a binding changes, as sk_pod_decode sees it: metadata.resourceVersion and spec.nodeName
 * are carried as they are; status.conditions is read only for a PodResizePending condition. */
static const char *const echo_rv[] = { "metadata", "resourceVersion", NULL };
static const char *const echo_node[] = { "spec", "nodeName", NULL };
static const char *const echo_conditions[] = { "status", "conditions", NULL };
const char *const *const sk_pod_echo_paths[SK_POD_ECHO_NPATHS] = { echo_rv, echo_node, echo_conditions };

/* Whether conditions (a status.conditions value, or absent) hold nothing sk_pod_decode reads. */
static bool conditions_unread(struct kube_json_span cond)
{
	return !cond.p || !memmem(cond.p, cond.len, "PodResizePending", 16);
}

struct sk_pod *sk_pod_decode_echo(const struct sk_pod *base, struct kube_text *text, const struct kube_json_member *m)
{
	const struct pod_box *root = base ? pod_root(base) : NULL;
	const struct sk_obj_raw *r = root ? &root->raw : NULL;
	if (!r || !r->json || !text)
		return NULL;
	struct kube_json_member found[SK_POD_ECHO_NPATHS];
	if (!m) {
		for (int i = 0; i < SK_POD_ECHO_NPATHS; i++)
			found[i].path = sk_pod_echo_paths[i];
		if (!kube_json_find(text->s, text->len, found, SK_POD_ECHO_NPATHS))
			return NULL;
		m = found;
	}
	struct kube_json_span was[SK_POD_ECHO_NPATHS];
	if (!kube_json_equal_cut(r->json, r->len, text->s, text->len, m, SK_POD_ECHO_NPATHS, was))
		return NULL;
	size_t rvl, nnl;
	const char *rv = kube_json_plain_string(m[0].val.p, m[0].val.len, &rvl);
	const char *nn = kube_json_plain_string(m[1].val.p, m[1].val.len, &nnl);
	char node[256];
	if (!rv || !nn || !nnl || nnl >= sizeof(node) || memchr(nn, 0, nnl) || !conditions_unread(was[2]) ||
	    !conditions_unread(m[2].val))
		return NULL;
	memcpy(node, nn, nnl);
	node[nnl] = 0;
	struct pod_box *b = pod_box_new();
	if (!b)
		return NULL;
	b->pod = root->pod;
	b->pod.refcount = 1;
	b->parent = sk_pod_ref((struct sk_pod *)&root->pod);
	b->pod.node_name = sk_intern(node);
	b->pod.resource_version = b->own_rv = malloc(rvl + 1);
	b->raw.shared = kube_text_ref(text);
	b->raw.json = text->s;
	b->raw.len = text->len;
	b->raw.node_name = b->pod.node_name;
	if (r->nlimit_names && (b->raw.limit_names = malloc((size_t)r->nlimit_names * sizeof(*r->limit_names))))
		memcpy(b->raw.limit_names, r->limit_names, (size_t)r->nlimit_names * sizeof(*r->limit_names));
	b->raw.nlimit_names = r->nlimit_names;
	if (!b->pod.node_name || !b->pod.resource_version || (r->nlimit_names && !b->raw.limit_names)) {
		pod_box_free(b);
		return NULL;
	}
	memcpy(b->pod.resource_version, rv, rvl);
	b->pod.resource_version[rvl] = 0;
	return &b->pod;
}

const struct sk_obj_raw *sk_node_raw(const struct sk_node *n) { return &NODE_BOX(n)->raw; }

/* ---------- nodes ---------- */

static const char *label_or(const struct sk_labels *l, const char *a, const char *b)
{
	const char *v = sk_labels_get(l, a);
	if (!v)
		v = sk_labels_get(l, b);
	return v ? v : "";
}

/* Upstream utilnode.GetZoneKey is region + ":\x00:" + zone. A C string cannot hold the NUL, so
 * the separator here is ":\x01:" — only its uniqueness matters (the key is never shown). */
static const char *zone_key(struct dctx *c, const struct sk_labels *l)
{
	const char *zone = label_or(l, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone");
	const char *region =
		label_or(l, "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region");
	if (!*zone && !*region)
		return intern_or_fail(c, "");
	size_t n = strlen(region) + strlen(zone) + 4;
	char *buf = malloc(n);
	if (!buf) {
		fail_oom(c);
		return NULL;
	}
	snprintf(buf, n, "%s:\x01:%s", region, zone);
	const char *r = intern_or_fail(c, buf);
	free(buf);
	return r;
}

static void node_box_free(struct node_box *b)
{
	sk_resource_clear(&b->node.allocatable);
	arena_free(&b->arena);
	sk_obj_raw_free(&b->raw);
	free(b);
}

static void decode_taints(struct dctx *c, const cJSON *spec, struct sk_node *n)
{
	const cJSON *arr = get_array(c, spec, "taints", "spec.taints");
	if (c->failed || !arr)
		return;
	int cnt = cJSON_GetArraySize(arr);
	if (cnt == 0)
		return;
	n->taints = arena_alloc(c->a, sizeof(*n->taints) * (size_t)cnt);
	if (!n->taints) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = arr->child; it && i < cnt; it = it->next, i++) {
		char path[64], sub[96];
		snprintf(path, sizeof(path), "spec.taints[%d]", i);
		if (!cJSON_IsObject(it)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		snprintf(sub, sizeof(sub), "%s.key", path);
		const char *key = get_string(c, it, "key", sub);
		snprintf(sub, sizeof(sub), "%s.value", path);
		const char *value = get_string(c, it, "value", sub);
		snprintf(sub, sizeof(sub), "%s.effect", path);
		const char *eff = get_string(c, it, "effect", sub);
		if (c->failed)
			return;
		struct sk_taint *t = &n->taints[i];
		if (!eff || !*eff) {
			fail(c, "%s: Required value", sub);
			return;
		}
		if (parse_effect(eff, &t->effect) != 0) {
			fail(c, "%s: Unsupported value: \"%s\"", sub, eff);
			return;
		}
		t->key = intern_or_fail(c, key ? key : "");
		t->value = intern_or_fail(c, value ? value : "");
		if (c->failed)
			return;
		n->ntaints = i + 1;
	}
}

static void decode_node_images(struct dctx *c, const cJSON *status, struct sk_node *n)
{
	const cJSON *arr = get_array(c, status, "images", "status.images");
	if (c->failed || !arr)
		return;
	int total = 0, i = 0;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "status.images[%d]", i);
		if (!cJSON_IsObject(it)) {
			fail(c, "%s: must be an object", path);
			return;
		}
		char sub[96];
		snprintf(sub, sizeof(sub), "%s.names", path);
		const cJSON *names = get_array(c, it, "names", sub);
		if (c->failed)
			return;
		total += names ? cJSON_GetArraySize(names) : 0;
	}
	if (total == 0)
		return;
	n->images = arena_alloc(c->a, sizeof(*n->images) * (size_t)total);
	if (!n->images) {
		fail_oom(c);
		return;
	}
	i = 0;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char sub[96];
		int64_t size = 0;
		const cJSON *sz = cJSON_GetObjectItemCaseSensitive(it, "sizeBytes");
		if (!is_null(sz) && number_int64(sz, &size) != 0) {
			fail(c, "status.images[%d].sizeBytes: must be an integer", i);
			return;
		}
		snprintf(sub, sizeof(sub), "status.images[%d].names", i);
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(it, "names");
		int j = 0;
		for (const cJSON *nm = names ? names->child : NULL; nm; nm = nm->next, j++) {
			if (!cJSON_IsString(nm) || !nm->valuestring) {
				fail(c, "%s[%d]: must be a string", sub, j);
				return;
			}
			struct sk_image *im = &n->images[n->nimages];
			if (!(im->name = intern_or_fail(c, nm->valuestring)))
				return;
			im->size_bytes = size;
			n->nimages++;
		}
	}
}

/* The addresses of one CIDR ("10.0.1.0/24": 256, "fd00:1::/64": clamped to 2^62), or 0 when it
 * does not parse. Only the family is told from the address part (IPv4 has dots and no colon): the
 * API server validated the rest. */
static int64_t cidr_addresses(const char *cidr)
{
	bool dot = false, colon = false;
	const char *q = cidr;
	for (; *q && *q != '/'; q++) {
		dot |= *q == '.';
		colon |= *q == ':';
	}
	if (*q != '/' || q == cidr || (!colon && !dot))
		return 0;
	const char *digits = ++q;
	int prefix = 0;
	for (; *q >= '0' && *q <= '9' && q - digits < 4; q++)
		prefix = prefix * 10 + (*q - '0');
	int bits = colon ? 128 : 32;
	if (*q || q == digits || prefix > bits)
		return 0;
	int host_bits = bits - prefix;
	return host_bits >= 62 ? (int64_t)1 << 62 : (int64_t)1 << host_bits;
}

static void node_pod_cidr_addresses(struct sk_node *n)
{
	n->pod_cidr_addresses = 0;
	for (int i = 0; i < n->npod_cidrs; i++) {
		int64_t a = n->pod_cidrs[i] ? cidr_addresses(n->pod_cidrs[i]) : 0;
		if (a > 0 && (n->pod_cidr_addresses == 0 || a < n->pod_cidr_addresses))
			n->pod_cidr_addresses = a;
	}
}

static void decode_pod_cidr_list(struct dctx *c, const cJSON *spec, struct sk_node *n)
{
	const cJSON *arr = get_array(c, spec, "podCIDRs", "spec.podCIDRs");
	const char *one = get_string(c, spec, "podCIDR", "spec.podCIDR");
	if (c->failed)
		return;
	int cnt = arr ? cJSON_GetArraySize(arr) : 0;
	if (cnt == 0) {
		if (!one || !*one)
			return;
		if (!(n->pod_cidrs = arena_alloc(c->a, sizeof(char *)))) {
			fail_oom(c);
			return;
		}
		n->pod_cidrs[n->npod_cidrs++] = intern_or_fail(c, one);
		return;
	}
	if (!(n->pod_cidrs = arena_alloc(c->a, sizeof(char *) * (size_t)cnt))) {
		fail_oom(c);
		return;
	}
	int i = 0;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		if (!cJSON_IsString(it)) {
			fail(c, "spec.podCIDRs[%d]: must be a string", i);
			return;
		}
		if (!(n->pod_cidrs[n->npod_cidrs++] = intern_or_fail(c, it->valuestring)))
			return;
	}
}

/* spec.podCIDRs, or the single spec.podCIDR of older nodes (the API server keeps both, podCIDRs[0]
 * equal to podCIDR); the strings are kept as written, and their smallest size in addresses
 * (pod_cidr_addresses) is computed once here. */
static void decode_pod_cidrs(struct dctx *c, const cJSON *spec, struct sk_node *n)
{
	decode_pod_cidr_list(c, spec, n);
	if (!c->failed)
		node_pod_cidr_addresses(n);
}

struct sk_node *sk_node_decode(const cJSON *obj, char **err)
{
	if (err)
		*err = NULL;
	struct node_box *b = calloc(1, sizeof(*b));
	if (!b) {
		if (err)
			*err = strdup("node: out of memory");
		return NULL;
	}
	struct sk_node *n = &b->node;
	n->refcount = 1;
	struct dctx cx = { .a = &b->arena, .err = err, .kind = "node" };
	struct dctx *c = &cx;

	if (!cJSON_IsObject(obj)) {
		fail(c, "must be a JSON object");
		goto out;
	}
	const cJSON *meta = get_object(c, obj, "metadata", "metadata");
	if (c->failed)
		goto out;
	if (!meta) {
		fail(c, "metadata: Required value");
		goto out;
	}
	const char *name = get_string(c, meta, "name", "metadata.name");
	if (c->failed)
		goto out;
	path_join(c->objname, sizeof(c->objname), name ? name : "", "");
	if (!name || !*name) {
		fail(c, "metadata.name: Required value");
		goto out;
	}
	const char *rv = get_string(c, meta, "resourceVersion", "metadata.resourceVersion");
	if (c->failed)
		goto out;
	n->name = intern_or_fail(c, name);
	n->resource_version = arena_strdup(c->a, rv ? rv : "");
	if (!n->resource_version)
		fail_oom(c);
	if (c->failed)
		goto out;
	decode_string_map(c, cJSON_GetObjectItemCaseSensitive(meta, "labels"), "metadata.labels", &n->labels);
	if (c->failed)
		goto out;
	n->zone_key = zone_key(c, &n->labels);
	const cJSON *spec = get_object(c, obj, "spec", "spec");
	const cJSON *status = get_object(c, obj, "status", "status");
	if (c->failed)
		goto out;
	if (spec) {
		n->unschedulable = get_bool(c, spec, "unschedulable", "spec.unschedulable");
		if (c->failed)
			goto out;
		decode_taints(c, spec, n);
		if (c->failed)
			goto out;
		decode_pod_cidrs(c, spec, n);
		if (c->failed)
			goto out;
	}
	if (status) {
		decode_resource_list(c, cJSON_GetObjectItemCaseSensitive(status, "allocatable"), "status.allocatable",
				     &n->allocatable, NULL, NULL);
		if (c->failed)
			goto out;
		decode_node_images(c, status, n);
		if (c->failed)
			goto out;
	}
	if (sk_obj_raw_keep(&b->raw, obj, false) != 0)
		fail_oom(c);
out:
	if (c->failed) {
		if (err && !*err)
			*err = strdup("node: out of memory");
		node_box_free(b);
		return NULL;
	}
	return n;
}

struct sk_node *sk_node_ref(struct sk_node *n)
{
	if (n)
		__atomic_add_fetch(&n->refcount, 1, __ATOMIC_RELAXED);
	return n;
}

void sk_node_unref(struct sk_node *n)
{
	if (!n)
		return;
	if (__atomic_sub_fetch(&n->refcount, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	node_box_free(NODE_BOX(n));
}
