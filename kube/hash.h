/* FNV-1a string hashes for the in-process hash tables (not for anything an attacker chooses to
 * collide at scale; the API server's tables are per-test fixtures). */
#ifndef KUBE_HASH_H
#define KUBE_HASH_H

#include <stdint.h>

static inline uint32_t kube_fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static inline uint64_t kube_fnv1a64(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

#endif
