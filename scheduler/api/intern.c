/* sk_intern: process-lifetime string interning for the scheduler's repeated names (label keys and
 * values, node names, resource names, images).
 *
 * Design: 64 shards chosen by the hash's top bits, each an open-addressing table of atomic entry
 * pointers. Lookups never lock: they load the shard's current table and probe it with acquire
 * loads. Inserts take the shard mutex, re-probe, publish the entry with a release store and grow
 * the table (a new table is published; old ones are kept, never freed, so a concurrent reader
 * probing an old table stays safe). Strings are bump-allocated in 64 KiB chunks that stay
 * reachable from the shard for the life of the process. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/types.h"

#define SHARD_BITS 6
#define NSHARDS (1u << SHARD_BITS)
#define CHUNK_SIZE (64 * 1024)

struct entry {
	uint64_t hash;
	size_t len;
	char s[]; /* NUL-terminated */
};

struct table {
	size_t mask;            /* capacity - 1, capacity a power of two */
	struct table *older;    /* previous (retired) table, kept alive for lock-free readers */
	struct entry *_Atomic slots[];
};

struct chunk {
	struct chunk *next;
	size_t used;
	char data[CHUNK_SIZE];
};

struct shard {
	pthread_mutex_t mu;         /* guards count, chunks, and publishing into table */
	struct table *_Atomic table;
	size_t count;
	struct chunk *chunks;       /* head = current chunk */
	char pad[64];
};

static struct shard shards[NSHARDS] = {
#define S1 { PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL, { 0 } }
#define S4 S1, S1, S1, S1
#define S16 S4, S4, S4, S4
	S16, S16, S16, S16
#undef S16
#undef S4
#undef S1
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* 8 bytes per step (image names and label keys are long), then a full avalanche so both the high
 * (shard) and low (slot) bits are usable. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
	while (n >= 8) {
		uint64_t k;
		memcpy(&k, s, 8);
		h = (h ^ mix64(k)) * 0x100000001b3ull;
		s += 8;
		n -= 8;
	}
	uint64_t k = 0;
	memcpy(&k, s, n);
	h = (h ^ mix64(k ^ ((uint64_t)n << 56))) * 0x100000001b3ull;
	return mix64(h);
}

static const char *probe(struct table *t, uint64_t h, const char *s, size_t n, size_t *free_slot)
{
	size_t i = (size_t)h & t->mask;
	for (;;) {
		struct entry *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
		if (e == NULL) {
			if (free_slot)
				*free_slot = i;
			return NULL;
		}
		if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0)
			return e->s;
		i = (i + 1) & t->mask;
	}
}

static struct table *table_new(size_t cap)
{
	struct table *t = calloc(1, sizeof(*t) + cap * sizeof(t->slots[0]));
	if (t)
		t->mask = cap - 1;
	return t;
}

static struct entry *entry_alloc(struct shard *sh, size_t n)
{
	size_t need = (sizeof(struct entry) + n + 1 + 7) & ~(size_t)7;
	if (need > CHUNK_SIZE / 4) { /* a large string gets its own allocation, linked as a chunk */
		struct chunk *c = malloc(sizeof(struct chunk) - CHUNK_SIZE + need);
		if (!c)
			return NULL;
		c->used = need;
		if (sh->chunks) { /* keep the current chunk at the head */
			c->next = sh->chunks->next;
			sh->chunks->next = c;
		} else {
			c->next = NULL;
			sh->chunks = c;
		}
		return (struct entry *)(void *)c->data;
	}
	if (!sh->chunks || sh->chunks->used + need > CHUNK_SIZE) {
		struct chunk *c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->used = 0;
		c->next = sh->chunks;
		sh->chunks = c;
	}
	struct entry *e = (struct entry *)(void *)(sh->chunks->data + sh->chunks->used);
	sh->chunks->used += need;
	return e;
}

static int grow(struct shard *sh, struct table *old)
{
	size_t cap = old ? (old->mask + 1) * 2 : 256;
	struct table *t = table_new(cap);
	if (!t)
		return -1;
	if (old) {
		for (size_t i = 0; i <= old->mask; i++) {
			struct entry *e = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
			if (!e)
				continue;
			size_t j = (size_t)e->hash & t->mask;
			/* t is not published yet: no other thread sees these slots. */
			while (atomic_load_explicit(&t->slots[j], memory_order_relaxed))
				j = (j + 1) & t->mask;
			atomic_store_explicit(&t->slots[j], e, memory_order_relaxed);
		}
	}
	t->older = old;
	atomic_store_explicit(&sh->table, t, memory_order_release);
	return 0;
}

const char *sk_intern_n(const char *s, size_t n)
{
	if (!s)
		return NULL;
	uint64_t h = hash_bytes(s, n);
	struct shard *sh = &shards[h >> (64 - SHARD_BITS)];
	struct table *t = atomic_load_explicit(&sh->table, memory_order_acquire);
	const char *found;
	if (t && (found = probe(t, h, s, n, NULL)) != NULL)
		return found;

	pthread_mutex_lock(&sh->mu);
	t = atomic_load_explicit(&sh->table, memory_order_acquire);
	if (!t || (sh->count + 1) * 4 > (t->mask + 1) * 3) { /* keep load <= 3/4 */
		if (grow(sh, t) != 0) {
			pthread_mutex_unlock(&sh->mu);
			return NULL;
		}
		t = atomic_load_explicit(&sh->table, memory_order_acquire);
	}
	size_t slot = 0;
	found = probe(t, h, s, n, &slot);
	if (!found) {
		struct entry *e = entry_alloc(sh, n);
		if (!e) {
			pthread_mutex_unlock(&sh->mu);
			return NULL;
		}
		e->hash = h;
		e->len = n;
		memcpy(e->s, s, n);
		e->s[n] = '\0';
		atomic_store_explicit(&t->slots[slot], e, memory_order_release);
		sh->count++;
		found = e->s;
	}
	pthread_mutex_unlock(&sh->mu);
	return found;
}

const char *sk_intern(const char *s)
{
	return s ? sk_intern_n(s, strlen(s)) : NULL;
}
