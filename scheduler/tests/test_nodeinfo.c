/* Tests for scheduler/nodeinfo.c: add/remove pod aggregates (requested, non-zero requested, used
 * ports, affinity counters, generation), clone independence, clones of preemption's dry runs in
 * sequence, and the slot a removal takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/tests/fixtures.h"

#define MI (1024LL * 1024)

static struct sk_pod *pod(const char *name, const char *containers_json)
{
	char text[2048];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"containers\":%s}}",
		 name, name, containers_json);
	return fx_pod(text);
}

static void test_add_remove(void **state)
{
	(void)state;
	struct sk_node_info *ni = fx_node_info(
		fx_node("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}"),
		NULL);
	assert_string_equal(ni->node->name, "n1");
	assert_int_equal(ni->npods, 0);
	int64_t g0 = ni->generation;

	struct sk_pod *a = pod("a", "[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"example.com/gpu\":\"2\"}},"
				    "\"ports\":[{\"hostPort\":80},{\"hostPort\":53,\"protocol\":\"UDP\",\"hostIP\":\"10.0.0.1\"}]}]");
	struct sk_pod *b = pod("b", "[{}]"); /* best effort: only the non-zero defaults */
	struct sk_pod *c = pod("c", "[{\"resources\":{\"requests\":{\"cpu\":\"500m\"}},\"ports\":[{\"hostPort\":80}]}]");

	assert_int_equal(sk_node_info_add_pod(ni, a), 0);
	assert_true(ni->generation > g0);
	int64_t g1 = ni->generation;
	assert_int_equal(sk_node_info_add_pod(ni, b), 0);
	assert_int_equal(sk_node_info_add_pod(ni, c), 0);
	assert_true(ni->generation > g1);
	assert_int_equal(ni->npods, 3);
	assert_int_equal(ni->requested.milli_cpu, 1500);
	assert_int_equal(ni->requested.memory, 1024 * MI);
	assert_int_equal(sk_resource_scalar(&ni->requested, "example.com/gpu"), 2);
	assert_int_equal(ni->non_zero_milli_cpu, 1000 + 100 + 500);
	assert_int_equal(ni->non_zero_memory, 1024 * MI + 200 * MI + 200 * MI);
	/* a set, as upstream's HostPortInfo: a's and c's 0.0.0.0/TCP/80 is one entry */
	assert_int_equal(ni->nused_ports, 2);
	assert_int_equal(a->refcount, 2); /* the node info holds a reference */

	/* remove by uid: a different object with the same uid works */
	struct sk_pod *a2 = sk_pod_with_node(a, "n1");
	assert_int_equal(sk_node_info_remove_pod(ni, a2), 0);
	sk_pod_unref(a2);
	assert_int_equal(ni->npods, 2);
	assert_int_equal(ni->requested.milli_cpu, 500);
	assert_int_equal(ni->requested.memory, 0);
	assert_int_equal(sk_resource_scalar(&ni->requested, "example.com/gpu"), 0);
	assert_int_equal(ni->non_zero_milli_cpu, 600);
	assert_int_equal(ni->non_zero_memory, 400 * MI);
	/* upstream HostPortInfo.Remove deletes 0.0.0.0/TCP/80 although c declares it too */
	assert_int_equal(ni->nused_ports, 0);
	assert_int_equal(a->refcount, 1);
	/* adding a pod with that port again brings it back (once) */
	assert_int_equal(sk_node_info_add_pod(ni, a), 0);
	assert_int_equal(ni->nused_ports, 2);
	assert_int_equal(sk_node_info_remove_pod(ni, a), 0);
	assert_int_equal(ni->nused_ports, 0);

	int64_t g2 = ni->generation;
	assert_int_equal(sk_node_info_remove_pod(ni, a), -1); /* absent */
	assert_int_equal(ni->generation, g2);
	assert_int_equal(sk_node_info_remove_pod(ni, b), 0);
	assert_int_equal(sk_node_info_remove_pod(ni, c), 0);
	assert_int_equal(ni->npods, 0);
	assert_int_equal(ni->nused_ports, 0);
	assert_int_equal(ni->non_zero_milli_cpu, 0);
	assert_int_equal(ni->requested.milli_cpu, 0);
	sk_pod_unref(a);
	sk_pod_unref(b);
	sk_pod_unref(c);
	sk_node_info_free(ni);
	sk_node_info_free(NULL);
}

static void test_many_pods(void **state)
{
	(void)state;
	struct sk_node_info *ni = sk_node_info_new(NULL);
	struct sk_pod *pods[100];
	for (int i = 0; i < 100; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		pods[i] = pod(name, "[{\"resources\":{\"requests\":{\"cpu\":\"10m\"}},\"ports\":[{\"hostPort\":1000}]}]");
		assert_int_equal(sk_node_info_add_pod(ni, pods[i]), 0);
	}
	assert_int_equal(ni->requested.milli_cpu, 1000);
	assert_int_equal(ni->nused_ports, 1); /* one (ip, protocol, port) however many pods */
	assert_int_equal(ni->used_ports[0].port, 1000);
	assert_string_equal(ni->used_ports[0].host_ip, "0.0.0.0");
	/* remove every other, then add back: exercises the growth invariant */
	for (int i = 0; i < 100; i += 2)
		assert_int_equal(sk_node_info_remove_pod(ni, pods[i]), 0);
	assert_int_equal(ni->npods, 50);
	for (int i = 0; i < 100; i += 2)
		assert_int_equal(sk_node_info_add_pod(ni, pods[i]), 0);
	assert_int_equal(ni->npods, 100);
	assert_int_equal(ni->requested.milli_cpu, 1000);
	for (int i = 0; i < 100; i++) {
		bool found = false;
		for (int j = 0; j < ni->npods; j++)
			found |= ni->pods[j].pod == pods[i];
		assert_true(found);
		sk_pod_unref(pods[i]);
	}
	sk_node_info_free(ni);
}

static void test_affinity_counters(void **state)
{
	(void)state;
	struct sk_node_info *ni = sk_node_info_new(NULL);
	struct sk_pod *aff = fx_pod("{\"metadata\":{\"name\":\"aff\"},\"spec\":{\"affinity\":{\"podAffinity\":{"
				    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"podAffinityTerm\":"
				    "{\"topologyKey\":\"z\",\"labelSelector\":{}}}]}}}}");
	struct sk_pod *anti = fx_pod("{\"metadata\":{\"name\":\"anti\"},\"spec\":{\"affinity\":{\"podAntiAffinity\":{"
				     "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"z\",\"labelSelector\":{}}]}}}}");
	struct sk_pod *plain = fx_pod("{\"metadata\":{\"name\":\"plain\"}}");
	assert_int_equal(sk_node_info_add_pod(ni, aff), 0);
	assert_int_equal(sk_node_info_add_pod(ni, anti), 0);
	assert_int_equal(sk_node_info_add_pod(ni, plain), 0);
	assert_int_equal(ni->npods_with_affinity, 2);
	assert_int_equal(ni->npods_with_required_anti_affinity, 1);
	assert_int_equal(sk_node_info_remove_pod(ni, anti), 0);
	assert_int_equal(ni->npods_with_affinity, 1);
	assert_int_equal(ni->npods_with_required_anti_affinity, 0);
	assert_int_equal(sk_node_info_remove_pod(ni, aff), 0);
	assert_int_equal(ni->npods_with_affinity, 0);
	sk_pod_unref(aff);
	sk_pod_unref(anti);
	sk_pod_unref(plain);
	sk_node_info_free(ni);
}

static void test_clone(void **state)
{
	(void)state;
	struct sk_node_info *ni = fx_node_info(
		fx_node("{\"metadata\":{\"name\":\"n1\"}}"),
		pod("a", "[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"example.com/gpu\":\"1\"}},\"ports\":[{\"hostPort\":80}]}]"),
		pod("b", "[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]"), NULL);
	struct sk_node_info *cl = sk_node_info_clone(ni);
	assert_non_null(cl);
	assert_int_equal(cl->generation, ni->generation);
	assert_ptr_equal(cl->node, ni->node);
	assert_int_equal(cl->npods, 2);
	assert_int_equal(cl->requested.milli_cpu, 3000);
	assert_ptr_not_equal(cl->requested.scalar, ni->requested.scalar);
	assert_ptr_not_equal(cl->pods, ni->pods);
	assert_int_equal(cl->nused_ports, 1);

	/* changing the clone leaves the original alone */
	struct sk_pod *c = pod("c", "[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"example.com/gpu\":\"4\"}}}]");
	assert_int_equal(sk_node_info_add_pod(cl, c), 0);
	assert_int_equal(sk_node_info_remove_pod(cl, ni->pods[0].pod), 0);
	assert_int_equal(ni->npods, 2);
	assert_int_equal(ni->requested.milli_cpu, 3000);
	assert_int_equal(sk_resource_scalar(&ni->requested, "example.com/gpu"), 1);
	assert_int_equal(ni->nused_ports, 1);
	assert_int_equal(cl->requested.milli_cpu, 3000);
	assert_int_equal(sk_resource_scalar(&cl->requested, "example.com/gpu"), 4);
	assert_true(cl->generation > ni->generation);
	sk_pod_unref(c);
	sk_node_info_free(ni); /* clone keeps its own references */
	assert_string_equal(cl->node->name, "n1");
	/* removal swaps the last pod into the hole, as upstream does: [a b c] - a = [c b] */
	assert_string_equal(cl->pods[0].pod->uid, "uid-c");
	assert_string_equal(cl->pods[1].pod->uid, "uid-b");
	sk_node_info_free(cl);
}

/* Clones reuse the memory of freed node infos (a per-thread free list, scheduler/api/nodeinfo.c):
 * a clone made after freeing a bigger or smaller one holds exactly its source's pods, ports and
 * requests, nothing of the freed one, and stays independent of its source. Rows: the freed
 * node's pod count, then the cloned node's. */
static struct sk_node_info *node_with_pods(const char *node, const char *prefix, int npods, int cpu_m)
{
	char name[64], json[256];
	snprintf(json, sizeof json, "{\"metadata\":{\"name\":\"%s\"}}", node);
	struct sk_node_info *ni = fx_node_info(fx_node(json), NULL);
	for (int i = 0; i < npods; i++) {
		snprintf(name, sizeof name, "%s%d", prefix, i);
		snprintf(json, sizeof json,
			 "[{\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"example.com/%s\":\"1\"}},\"ports\":[{\"hostPort\":%d}]}]",
			 cpu_m, prefix, 1000 + i);
		struct sk_pod *p = pod(name, json);
		assert_int_equal(sk_node_info_add_pod(ni, p), 0);
		sk_pod_unref(p);
	}
	return ni;
}

static void test_clone_reuse(void **state)
{
	(void)state;
	static const struct { int old_pods, new_pods; } rows[] = {
		{ 9, 2 }, { 2, 9 }, { 0, 3 }, { 3, 0 }, { 17, 17 }, { 5, 4 }, { 40, 1 },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		/* fill this thread's free list with clones of the old node */
		struct sk_node_info *old = node_with_pods("old", "o", rows[r].old_pods, 100);
		struct sk_node_info *olds[12];
		for (int i = 0; i < 12; i++)
			assert_non_null(olds[i] = sk_node_info_clone(old));
		for (int i = 0; i < 12; i++)
			sk_node_info_free(olds[i]);
		sk_node_info_free(old);

		struct sk_node_info *src = node_with_pods("new", "n", rows[r].new_pods, 10);
		for (int k = 0; k < 10; k++) {
			struct sk_node_info *cl = sk_node_info_clone(src);
			assert_non_null(cl);
			assert_string_equal(cl->node->name, "new");
			assert_int_equal(cl->npods, rows[r].new_pods);
			assert_int_equal(cl->nused_ports, rows[r].new_pods);
			assert_int_equal(cl->requested.milli_cpu, 10 * rows[r].new_pods);
			assert_int_equal(sk_resource_scalar(&cl->requested, "example.com/o"), 0);
			assert_int_equal(sk_resource_scalar(&cl->requested, "example.com/n"), rows[r].new_pods);
			assert_int_equal(cl->generation, src->generation);
			for (int i = 0; i < cl->npods; i++) {
				assert_ptr_equal(cl->pods[i].pod, src->pods[i].pod);
				assert_int_equal(cl->used_ports[i].port, src->used_ports[i].port);
			}
			/* grow the clone past its array: the source is untouched */
			for (int i = 0; i < 9; i++) {
				char name[32];
				snprintf(name, sizeof name, "x%d-%d", k, i);
				struct sk_pod *p = pod(name, "[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]");
				assert_int_equal(sk_node_info_add_pod(cl, p), 0);
				sk_pod_unref(p);
			}
			assert_int_equal(cl->npods, rows[r].new_pods + 9);
			assert_int_equal(src->npods, rows[r].new_pods);
			assert_int_equal(src->requested.milli_cpu, 10 * rows[r].new_pods);
			if (rows[r].new_pods > 0) {
				assert_int_equal(sk_node_info_remove_pod(cl, src->pods[0].pod), 0);
				assert_int_equal(src->npods, rows[r].new_pods);
				assert_int_equal(src->nused_ports, rows[r].new_pods);
			}
			sk_node_info_free(cl);
		}
		sk_node_info_free(src);
	}
}

/* A dry run's pattern: every pod removed (by the same object, or by another object with its uid),
 * then pods appended to the emptied arrays, past the sizes they had (4, 8, 16 slots). The
 * aggregates and the pod list stay exact; valgrind sees any write past an array. */
static void test_empty_and_refill(void **state)
{
	(void)state;
	static const struct {
		int npods, refill;
		bool clone, by_uid;
	} rows[] = {
		{ 4, 4, true, false }, { 4, 5, true, false }, { 4, 9, false, true }, { 1, 4, true, true },
		{ 3, 17, false, false }, { 8, 1, true, false }, { 0, 6, true, false }, { 5, 0, false, true },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		struct sk_node_info *src = node_with_pods("n", "p", rows[r].npods, 10);
		struct sk_node_info *ni = rows[r].clone ? sk_node_info_clone(src) : src;
		assert_non_null(ni);
		struct sk_pod *pods[8];
		for (int i = 0; i < rows[r].npods; i++)
			pods[i] = sk_pod_ref(src->pods[i].pod);
		for (int i = rows[r].npods - 1; i >= 0; i--) {
			struct sk_pod *key = pods[i];
			char name[16];
			snprintf(name, sizeof name, "p%d", i);
			if (rows[r].by_uid)
				key = pod(name, "[{}]"); /* same uid, another object */
			assert_int_equal(sk_node_info_remove_pod(ni, key), 0);
			assert_int_equal(sk_node_info_remove_pod(ni, key), -1);
			if (rows[r].by_uid)
				sk_pod_unref(key);
		}
		assert_int_equal(ni->npods, 0);
		assert_int_equal(ni->nused_ports, 0);
		assert_int_equal(ni->requested.milli_cpu, 0);
		for (int i = 0; i < rows[r].refill; i++) {
			char name[16], json[160];
			snprintf(name, sizeof name, "q%d", i);
			snprintf(json, sizeof json,
				 "[{\"resources\":{\"requests\":{\"cpu\":\"%dm\"}},\"ports\":[{\"hostPort\":%d}]}]", i + 1,
				 2000 + i);
			struct sk_pod *p = pod(name, json);
			assert_int_equal(sk_node_info_add_pod(ni, p), 0);
			sk_pod_unref(p);
		}
		assert_int_equal(ni->npods, rows[r].refill);
		assert_int_equal(ni->nused_ports, rows[r].refill);
		assert_int_equal(ni->requested.milli_cpu, rows[r].refill * (rows[r].refill + 1) / 2);
		assert_int_equal(sk_resource_scalar(&ni->requested, "example.com/p"), 0);
		for (int i = 0; i < rows[r].refill; i++) {
			char name[16];
			snprintf(name, sizeof name, "q%d", i);
			assert_string_equal(ni->pods[i].pod->name, name);
			assert_int_equal(ni->used_ports[i].port, 2000 + i);
		}
		if (rows[r].clone) { /* the source kept its own */
			assert_int_equal(src->npods, rows[r].npods);
			assert_int_equal(src->requested.milli_cpu, 10 * rows[r].npods);
			sk_node_info_free(ni);
		}
		for (int i = 0; i < rows[r].npods; i++)
			sk_pod_unref(pods[i]);
		sk_node_info_free(src);
	}
}

/* The requests of a pod without extended resources are summed inline, the others by
 * sk_resource_add: the same sequence of adds and removes (saturating near INT64_MAX) gives the
 * same sums either way. */
static void test_request_sums_both_paths(void **state)
{
	(void)state;
	static const struct {
		const char *cpu, *mem; /* quantities of pod i */
		bool remove;           /* remove pod i (added earlier) instead of adding it */
		int pod;
	} steps[] = {
		{ "250m", "1Gi", false, 0 },
		{ "9223372036854775807m", "9223372036854775807", false, 1 },
		{ "1", "1", false, 2 },
		{ NULL, NULL, true, 1 },
		{ "9223372036854775807m", "8Ei", false, 3 },
		{ NULL, NULL, true, 0 },
		{ NULL, NULL, true, 3 },
		{ NULL, NULL, true, 2 },
	};
	struct sk_node_info *ni[2];
	struct sk_pod *pods[2][4] = { { NULL } };
	for (int w = 0; w < 2; w++)
		ni[w] = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"}}"), NULL);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		for (int w = 0; w < 2; w++) { /* w = 1: with an extended resource too */
			int k = steps[i].pod;
			if (steps[i].remove) {
				assert_int_equal(sk_node_info_remove_pod(ni[w], pods[w][k]), 0);
				continue;
			}
			char name[16], json[256];
			snprintf(name, sizeof name, "s%d", k);
			snprintf(json, sizeof json,
				 "[{\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"%s}}}]", steps[i].cpu,
				 steps[i].mem, w ? ",\"example.com/x\":\"1\"" : "");
			pods[w][k] = pod(name, json);
			assert_int_equal(pods[w][k]->requests.nscalar, w);
			assert_int_equal(sk_node_info_add_pod(ni[w], pods[w][k]), 0);
		}
		if (ni[0]->requested.milli_cpu != ni[1]->requested.milli_cpu ||
		    ni[0]->requested.memory != ni[1]->requested.memory ||
		    ni[0]->requested.ephemeral_storage != ni[1]->requested.ephemeral_storage ||
		    ni[0]->requested.allowed_pod_number != ni[1]->requested.allowed_pod_number ||
		    ni[0]->non_zero_milli_cpu != ni[1]->non_zero_milli_cpu || ni[0]->non_zero_memory != ni[1]->non_zero_memory)
			fail_msg("step %zu: cpu %lld/%lld memory %lld/%lld", i, (long long)ni[0]->requested.milli_cpu,
				 (long long)ni[1]->requested.milli_cpu, (long long)ni[0]->requested.memory,
				 (long long)ni[1]->requested.memory);
	}
	assert_int_equal(ni[0]->npods, 0);
	assert_int_equal(sk_resource_scalar(&ni[1]->requested, "example.com/x"), 0);
	for (int w = 0; w < 2; w++) {
		for (int k = 0; k < 4; k++)
			sk_pod_unref(pods[w][k]);
		sk_node_info_free(ni[w]);
	}
}

static void test_set_node(void **state)
{
	(void)state;
	struct sk_node_info *ni = sk_node_info_new(NULL);
	assert_null(ni->node);
	int64_t g = ni->generation;
	struct sk_node *n = fx_node("{\"metadata\":{\"name\":\"n\"}}");
	sk_node_info_set_node(ni, n);
	assert_ptr_equal(ni->node, n);
	assert_int_equal(n->refcount, 2);
	assert_true(ni->generation > g);
	sk_node_info_set_node(ni, NULL);
	assert_int_equal(n->refcount, 1);
	sk_node_unref(n);
	sk_node_info_free(ni);
	assert_true(sk_next_generation() < sk_next_generation());
}


/* sk_node_info_copy_into over the same destination round after round, as the snapshot's update
 * copies a changed node over its previous copy: slots kept, a pod appended, one swapped out,
 * emptied, grown past the array, every slot different, a large array shrunk (copied afresh), the
 * node replaced. After each round the destination is the source slot for slot (pods, ports,
 * requests with a scalar, counters, node) and every pod's and node's reference count is its
 * holders' (this test's, the source's, the destination's); then the destination's array still
 * grows on append. */
#define CP_POOL 48
#define CP_END -1
static void test_copy_into_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int rounds;
		int pods[4][CP_POOL + 1]; /* each round's source, CP_END-terminated; a first 99: 0..39 */
		int node[4];             /* 0: node A, 1: node B */
	} rows[] = {
		{ "same pods, then one appended, then one swapped out", 3,
		  { { 0, 1, 2, CP_END }, { 0, 1, 2, 3, CP_END }, { 0, 3, 2, CP_END } }, { 0, 0, 0 } },
		{ "from empty past the array, then emptied, then refilled", 3,
		  { { 0, 1, 2, 3, 4, 5, 6, 7, 8, CP_END }, { CP_END }, { 5, 6, CP_END } }, { 0, 0, 0 } },
		{ "every slot different, then fewer", 3,
		  { { 0, 1, 2, 3, CP_END }, { 4, 5, 6, 7, 8, CP_END }, { 9, 1, CP_END } }, { 0, 0, 0 } },
		{ "a large array shrunk to two, then grown again", 3,
		  { { 99 }, { 3, 7, CP_END }, { 99 } }, { 0, 0, 0 } },
		{ "the node replaced, pods kept; then back", 3,
		  { { 0, 1, CP_END }, { 0, 1, CP_END }, { 1, 0, CP_END } }, { 0, 1, 0 } },
	};
	struct sk_pod *pool[CP_POOL];
	for (int k = 0; k < CP_POOL; k++) {
		char name[16], json[200];
		snprintf(name, sizeof name, "c%d", k);
		snprintf(json, sizeof json,
			 "[{\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"example.com/x\":\"%d\"}},\"ports\":[{\"hostPort\":%d}]}]",
			 k + 1, k % 2, 3000 + k);
		pool[k] = pod(name, json);
	}
	struct sk_node *nodes[2] = { fx_node("{\"metadata\":{\"name\":\"A\"}}"), fx_node("{\"metadata\":{\"name\":\"B\"}}") };
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		struct sk_node_info *dst = calloc(1, sizeof(*dst)); /* as sk_snap_node_info_alloc's */
		assert_non_null(dst);
		for (int round = 0; round < rows[r].rounds; round++) {
			struct sk_node_info *src = sk_node_info_new(nodes[rows[r].node[round]]); /* takes a reference */
			const int *want = rows[r].pods[round];
			int n = 0;
			if (want[0] == 99)
				for (; n < 40; n++)
					assert_int_equal(sk_node_info_add_pod(src, pool[n]), 0);
			else
				for (; want[n] != CP_END; n++)
					assert_int_equal(sk_node_info_add_pod(src, pool[want[n]]), 0);
			assert_int_equal(sk_node_info_copy_into(dst, src), 0);
			if (dst->npods != n || dst->nused_ports != src->nused_ports)
				fail_msg("%s, round %d: %d pods, %d ports (want %d, %d)", rows[r].name, round, dst->npods,
					 dst->nused_ports, n, src->nused_ports);
			for (int i = 0; i < n; i++)
				assert_ptr_equal(dst->pods[i].pod, src->pods[i].pod);
			for (int i = 0; i < src->nused_ports; i++)
				assert_int_equal(dst->used_ports[i].port, src->used_ports[i].port);
			assert_int_equal(dst->requested.milli_cpu, src->requested.milli_cpu);
			assert_int_equal(sk_resource_scalar(&dst->requested, "example.com/x"),
					 sk_resource_scalar(&src->requested, "example.com/x"));
			assert_int_equal(dst->non_zero_milli_cpu, src->non_zero_milli_cpu);
			assert_int_equal(dst->non_zero_memory, src->non_zero_memory);
			assert_int_equal(dst->generation, src->generation);
			assert_ptr_equal(dst->node, src->node);
			for (int k = 0; k < CP_POOL; k++) {
				int held = 1;
				for (int i = 0; i < n; i++)
					held += 2 * (src->pods[i].pod == pool[k]);
				if (pool[k]->refcount != held)
					fail_msg("%s, round %d: pod c%d has %d references (want %d)", rows[r].name, round, k,
						 pool[k]->refcount, held);
			}
			for (int j = 0; j < 2; j++)
				assert_int_equal(nodes[j]->refcount, 1 + 2 * (src->node == nodes[j]));
			sk_node_info_free(src);
		}
		/* the destination's arrays keep grow_for_append's invariant */
		int before = dst->npods;
		for (int k = 0; k < CP_POOL; k++)
			assert_int_equal(sk_node_info_add_pod(dst, pool[k]), 0);
		assert_int_equal(dst->npods, before + CP_POOL);
		for (int k = 0; k < CP_POOL; k++)
			assert_int_equal(sk_node_info_remove_pod(dst, pool[k]), 0);
		assert_int_equal(dst->npods, before);
		sk_node_info_clear(dst);
		free(dst);
		for (int k = 0; k < CP_POOL; k++)
			assert_int_equal(pool[k]->refcount, 1);
	}
	for (int k = 0; k < CP_POOL; k++)
		sk_pod_unref(pool[k]);
	sk_node_unref(nodes[0]);
	sk_node_unref(nodes[1]);
}
/* Preemption's dry run in sequence on one thread (plugins/DefaultPreemption): per candidate node a
 * clone from the free list, every listed pod removed, some added back, one removed again, the clone
 * freed with fewer pods than it was cloned with; the next node's clone reuses those arrays at their
 * real sizes. Each clone must end exactly as a node info built afresh (no free list) through the
 * same steps: the same pods in the same slots, ports, sums and counters. Rows in order: pods on the
 * node, pods added back, extended resources (the sk_resource_add path), removal by uid. */
static struct sk_pod *seq_pod(int row, int i, bool scalar)
{
	char name[32], json[256];
	snprintf(name, sizeof name, "r%d-p%d", row, i);
	snprintf(json, sizeof json,
		 "[{\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%d\"%s}},\"ports\":[{\"hostPort\":%d}]}]",
		 i + 1, 1000 * (i + 1), scalar ? ",\"example.com/x\":\"1\"" : "", 3000 + i);
	return pod(name, json);
}

static void assert_same_node_info(const struct sk_node_info *a, const struct sk_node_info *b, size_t row)
{
	if (a->npods != b->npods || a->nused_ports != b->nused_ports)
		fail_msg("row %zu: %d pods %d ports, want %d %d", row, a->npods, a->nused_ports, b->npods, b->nused_ports);
	for (int i = 0; i < a->npods; i++)
		if (a->pods[i].pod != b->pods[i].pod)
			fail_msg("row %zu: slot %d holds %s, want %s", row, i, a->pods[i].pod->name, b->pods[i].pod->name);
	for (int i = 0; i < a->nused_ports; i++)
		assert_int_equal(a->used_ports[i].port, b->used_ports[i].port);
	assert_int_equal(a->requested.milli_cpu, b->requested.milli_cpu);
	assert_int_equal(a->requested.memory, b->requested.memory);
	assert_int_equal(sk_resource_scalar(&a->requested, "example.com/x"),
			 sk_resource_scalar(&b->requested, "example.com/x"));
	assert_int_equal(a->non_zero_milli_cpu, b->non_zero_milli_cpu);
	assert_int_equal(a->non_zero_memory, b->non_zero_memory);
	assert_int_equal(a->npods_with_affinity, b->npods_with_affinity);
}

static void test_dry_run_sequence(void **state)
{
	(void)state;
	static const struct {
		int npods, back;
		bool scalar, by_uid;
	} rows[] = {
		{ 4, 1, false, false }, { 9, 2, false, false }, { 1, 0, true, false }, { 17, 16, false, true },
		{ 3, 3, true, false }, { 16, 1, false, false }, { 2, 2, false, true }, { 8, 8, true, false },
		{ 33, 5, false, false }, { 5, 4, false, false }, { 0, 0, false, false }, { 7, 1, true, true },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		char json[64];
		snprintf(json, sizeof json, "{\"metadata\":{\"name\":\"seq%zu\"}}", r);
		struct sk_node *node = fx_node(json);
		struct sk_node_info *src = fx_node_info(sk_node_ref(node), NULL);
		struct sk_node_info *fresh = sk_node_info_new(node);
		struct sk_pod *pods[40];
		for (int i = 0; i < rows[r].npods; i++) {
			pods[i] = seq_pod((int)r, i, rows[r].scalar);
			assert_int_equal(sk_node_info_add_pod(src, pods[i]), 0);
			assert_int_equal(sk_node_info_add_pod(fresh, pods[i]), 0);
		}
		struct sk_node_info *cl = sk_node_info_clone(src);
		assert_non_null(cl);
		assert_same_node_info(cl, fresh, r);
		struct sk_node_info *both[2] = { cl, fresh };
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < rows[r].npods; i++) {
				struct sk_pod *key = rows[r].by_uid ? sk_pod_with_node(pods[i], NULL) : sk_pod_ref(pods[i]);
				assert_int_equal(sk_node_info_remove_pod(both[k], key), 0);
				sk_pod_unref(key);
			}
			for (int i = 0; i < rows[r].back; i++)
				assert_int_equal(sk_node_info_add_pod(both[k], pods[i]), 0);
			if (rows[r].back > 1)
				assert_int_equal(sk_node_info_remove_pod(both[k], pods[1]), 0);
		}
		assert_same_node_info(cl, fresh, r);
		assert_same_node_info(src, src, r);
		assert_int_equal(src->npods, rows[r].npods); /* the source is untouched */
		sk_node_info_free(cl);
		sk_node_info_free(fresh);
		sk_node_info_free(src);
		for (int i = 0; i < rows[r].npods; i++)
			sk_pod_unref(pods[i]);
		sk_node_unref(node);
	}
}

/* Removal takes the slot of the pod with that uid and swaps the last pod into it (upstream
 * RemovePod), whether the pod is given as the object the node holds (found by pointer on small
 * nodes) or as another object with its uid: a table of node sizes around the pointer scan's limit
 * (16) and slots to remove, against a model of the swap. */
static void test_remove_slot_table(void **state)
{
	(void)state;
	static const struct {
		int npods, slot;
		bool by_uid;
	} rows[] = {
		{ 1, 0, false }, { 3, 0, false }, { 3, 2, true }, { 16, 7, false }, { 16, 0, true },
		{ 17, 3, false }, { 17, 16, false }, { 17, 8, true }, { 30, 29, false }, { 30, 1, true },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		struct sk_node_info *ni = fx_node_info(fx_node("{\"metadata\":{\"name\":\"rm\"}}"), NULL);
		struct sk_pod *pods[32];
		const struct sk_pod *want[32];
		for (int i = 0; i < rows[r].npods; i++) {
			pods[i] = seq_pod(100 + (int)r, i, false);
			assert_int_equal(sk_node_info_add_pod(ni, pods[i]), 0);
			want[i] = pods[i];
		}
		int k = rows[r].slot, n = rows[r].npods;
		want[k] = want[n - 1];
		struct sk_pod *key = rows[r].by_uid ? sk_pod_with_node(pods[k], NULL) : sk_pod_ref(pods[k]);
		assert_int_equal(sk_node_info_remove_pod(ni, key), 0);
		assert_int_equal(sk_node_info_remove_pod(ni, key), -1);
		sk_pod_unref(key);
		assert_int_equal(ni->npods, n - 1);
		for (int i = 0; i < n - 1; i++)
			if (ni->pods[i].pod != want[i])
				fail_msg("row %zu: slot %d holds %s, want %s", r, i, ni->pods[i].pod->name, want[i]->name);
		assert_int_equal(ni->requested.milli_cpu, n * (n + 1) / 2 - (k + 1));
		sk_node_info_free(ni);
		for (int i = 0; i < n; i++)
			sk_pod_unref(pods[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_many_pods),
		cmocka_unit_test(test_affinity_counters),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_clone_reuse),
		cmocka_unit_test(test_empty_and_refill),
		cmocka_unit_test(test_request_sums_both_paths),
		cmocka_unit_test(test_set_node),
		cmocka_unit_test(test_copy_into_table),
		cmocka_unit_test(test_dry_run_sequence),
		cmocka_unit_test(test_remove_slot_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
