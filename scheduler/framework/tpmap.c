/* Topology-pair counters for plugins (schedkit/tpmap.h): linear probing with backward-shift
 * deletion, load factor at most 1/2. */
#include <stdlib.h>
#include <string.h>

#include "schedkit/tpmap.h"

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Eight bytes at a time (label strings are short), then a final mix. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	size_t n = strlen(s), i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	uint64_t tail = 0;
	memcpy(&tail, s + i, n - i);
	h = (h ^ tail ^ ((uint64_t)n << 56)) * 0x9e3779b97f4a7c15ull;
	return mix(h);
}

static uint64_t hash_pair(const char *key, const char *value)
{
	return hash_str(hash_str(0x243f6a8885a308d3ull, key), value ? value : "");
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int probe(const struct sk_tpmap *m, uint64_t h, const char *key, const char *value, bool *found)
{
	size_t mask = (size_t)m->cap - 1;
	size_t i = (size_t)h & mask;
	for (;;) {
		const struct sk_tpmap_entry *e = &m->e[i];
		if (!e->key) {
			*found = false;
			return (int)i;
		}
		if (e->hash == h && same(e->key, key) && same(e->value, value)) {
			*found = true;
			return (int)i;
		}
		i = (i + 1) & mask;
	}
}

static int grow(struct sk_tpmap *m)
{
	int ncap = m->cap ? m->cap * 2 : 16;
	struct sk_tpmap_entry *ne = calloc((size_t)ncap, sizeof(*ne));
	if (!ne)
		return -1;
	struct sk_tpmap old = *m;
	m->e = ne;
	m->cap = ncap;
	m->n = 0;
	for (int i = 0; i < old.cap; i++) {
		if (!old.e[i].key)
			continue;
		bool found;
		int j = probe(m, old.e[i].hash, old.e[i].key, old.e[i].value, &found);
		m->e[j] = old.e[i];
		m->n++;
	}
	free(old.e);
	return 0;
}

/* Index of (key, value), inserted with 0 when absent; -1 on OOM. */
static int slot_index(struct sk_tpmap *m, const char *key, const char *value)
{
	if (!value)
		value = "";
	uint64_t h = hash_pair(key, value);
	bool found = false;
	int i;
	if (m->cap) {
		i = probe(m, h, key, value, &found);
		if (found)
			return i;
	}
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	i = probe(m, h, key, value, &found);
	m->e[i].key = key;
	m->e[i].value = value;
	m->e[i].hash = h;
	m->e[i].count = 0;
	m->n++;
	return i;
}

int64_t *sk_tpmap_slot(struct sk_tpmap *m, const char *key, const char *value)
{
	int i = slot_index(m, key, value);
	return i < 0 ? NULL : &m->e[i].count;
}

const int64_t *sk_tpmap_find(const struct sk_tpmap *m, const char *key, const char *value)
{
	if (!m->cap || !m->n)
		return NULL;
	if (!value)
		value = "";
	bool found;
	int i = probe(m, hash_pair(key, value), key, value, &found);
	return found ? &m->e[i].count : NULL;
}

static void remove_at(struct sk_tpmap *m, size_t i)
{
	size_t mask = (size_t)m->cap - 1;
	m->e[i].key = NULL;
	m->n--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->e[j].key)
			return;
		size_t home = (size_t)m->e[j].hash & mask;
		/* Move e[j] back into the hole at i when its home is not in the cyclic range (i, j]. */
		bool in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!in_range) {
			m->e[i] = m->e[j];
			m->e[j].key = NULL;
			i = j;
		}
	}
}

int sk_tpmap_add_or_delete(struct sk_tpmap *m, const char *key, const char *value, int64_t delta)
{
	int i = slot_index(m, key, value);
	if (i < 0)
		return -1;
	m->e[i].count += delta;
	if (m->e[i].count == 0)
		remove_at(m, (size_t)i);
	return 0;
}

int sk_tpmap_copy(struct sk_tpmap *dst, const struct sk_tpmap *src)
{
	dst->n = dst->cap = 0;
	dst->e = NULL;
	if (!src->cap)
		return 0;
	dst->e = malloc((size_t)src->cap * sizeof(*dst->e));
	if (!dst->e)
		return -1;
	memcpy(dst->e, src->e, (size_t)src->cap * sizeof(*dst->e));
	dst->n = src->n;
	dst->cap = src->cap;
	return 0;
}

void sk_tpmap_free(struct sk_tpmap *m)
{
	if (!m)
		return;
	free(m->e);
	m->e = NULL;
	m->n = m->cap = 0;
}
