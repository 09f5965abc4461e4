/* Tests for the queue's storage events (scheduler/backend/queue.c): a PVC/PV/StorageClass/CSINode
 * event carries its views (schedkit/volume.h) to the rejecting plugins' hints, both when it moves
 * waiting pods and when it is replayed for a pod that was in flight, after the informer handler
 * dropped its own reference (the queue keeps one until no attempt can see the event). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/queue.h"
#include "schedkit/volume.h"
#include "scheduler/tests/fixtures.h"

#define S 1000000000LL

static int64_t clk = 100 * S;
static char seen[8][64];
static int nseen;

static bool less(void *ctx, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)ctx;
	return a->timestamp_ns < b->timestamp_ns;
}

static struct sk_status pre_enqueue(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	(void)pod;
	return sk_ok();
}

/* VolumeBinding registered for PVC events: queue only for the claim named "wanted". */
static int hint(void *ctx, const struct sk_pod *pod, const char *plugin, const struct sk_cluster_event *ev,
		const void *old_obj, const void *new_obj)
{
	(void)ctx;
	(void)pod;
	(void)old_obj;
	if (strcmp(plugin, "VolumeBinding") != 0 || !(ev->resource & SK_EV_PVC))
		return -1;
	const struct sk_pvc *pvc = new_obj;
	if (nseen < 8)
		snprintf(seen[nseen++], sizeof seen[0], "%s", pvc ? pvc->meta.name : "(null)");
	return pvc && strcmp(pvc->meta.name, "wanted") == 0 ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int64_t now(void *ctx)
{
	(void)ctx;
	return clk;
}

static struct sk_pvc *pvc(const char *name)
{
	char buf[256];
	snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"}}", name);
	cJSON *j = fx_json(buf);
	char *err = NULL;
	struct sk_pvc *p = sk_pvc_decode(j, &err);
	cJSON_Delete(j);
	assert_non_null(p);
	return p;
}

static const struct sk_cluster_event PVC_ADD = { SK_EV_PVC, SK_ACT_ADD, "PersistentVolumeClaimAdd" };

static void test_storage_event_objects(void **state)
{
	(void)state;
	struct sk_queue_ops ops = { .less = less, .pre_enqueue = pre_enqueue, .hint = hint, .now_ns = now };
	struct sk_queue_options o = { .initial_backoff_ns = 1 * S, .max_backoff_ns = 10 * S };
	struct sk_queue *q = sk_queue_new(&ops, &o);
	assert_non_null(q);
	struct sk_pod *waiting = fx_pod("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_pod *flying = fx_pod("{\"metadata\":{\"name\":\"f\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	char wuid[128];
	snprintf(wuid, sizeof wuid, "%s", waiting->uid);
	assert_int_equal(sk_queue_add(q, waiting), 0);
	assert_int_equal(sk_queue_add(q, flying), 0);
	sk_pod_unref(waiting);
	sk_pod_unref(flying);

	struct sk_queued_pod *w = sk_queue_try_pop(q, NULL), *f = sk_queue_try_pop(q, NULL);
	assert_non_null(w);
	assert_non_null(f);
	w->unschedulable_plugins[w->nunschedulable_plugins++] = "VolumeBinding";
	assert_int_equal(sk_queue_add_unschedulable(q, w, NULL), SK_Q_UNSCHEDULABLE);

	/* an unrelated claim: the waiting pod stays */
	struct sk_pvc *other = pvc("other");
	sk_queue_move_all(q, &PVC_ADD, NULL, other);
	sk_vobj_unref(other);
	assert_int_equal(sk_queue_where_is(q, wuid), SK_Q_UNSCHEDULABLE);

	/* the claim it waits for: moved; the handler drops its reference at once */
	struct sk_pvc *wanted = pvc("wanted");
	sk_queue_move_all(q, &PVC_ADD, NULL, wanted);
	sk_vobj_unref(wanted);
	assert_int_equal(sk_queue_where_is(q, wuid), SK_Q_BACKOFF);

	/* the pod in flight during both events: the replay gives its hint the same views */
	nseen = 0;
	f->unschedulable_plugins[f->nunschedulable_plugins++] = "VolumeBinding";
	assert_int_equal(sk_queue_add_unschedulable(q, f, NULL), SK_Q_BACKOFF);
	assert_true(nseen >= 1);
	bool got_wanted = false;
	for (int i = 0; i < nseen; i++)
		got_wanted |= strcmp(seen[i], "wanted") == 0;
	assert_true(got_wanted);
	sk_queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_event_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
