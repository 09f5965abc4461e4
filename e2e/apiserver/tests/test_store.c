/* test_store.c — the watch ring's per-resource bookkeeping (e2e/apiserver/store.c): which
 * resource has events after a watcher's cursor (apis_ring_pending_locked), and whether a
 * watcher whose cursor fell behind the history lost an event of its own resource or only
 * other resources' (apis_ring_lost_locked), on a server with a 4-event history; that a
 * commit wakes only the waiters of its resource; the tables' count of what the garbage
 * collector acts on (obj_table.gc_count); and the member lookup in stored JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/server.h"

static struct apis_server *srv;
static struct apis_rdef *rd_cm, *rd_secret;

static int start(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.history_events = 4;
	if (apis_server_start(&o, &srv) < 0)
		return -1;
	rd_cm = apis_registry_find(srv, "", "v1", "configmaps");
	rd_secret = apis_registry_find(srv, "", "v1", "secrets");
	return rd_cm && rd_secret ? 0 : -1;
}

static int stop(void **state)
{
	(void)state;
	apis_server_stop(srv);
	return 0;
}

/* Commits one object per letter of what ('c' a ConfigMap, 's' a Secret); returns the ring
 * sequence number of the first. */
static uint64_t commit(const char *what)
{
	static int serial;
	pthread_rwlock_wrlock(&srv->lock);
	uint64_t base = srv->ring_head;
	for (const char *p = what; *p; p++) {
		cJSON *o = cJSON_CreateObject();
		cJSON *md = cJSON_AddObjectToObject(o, "metadata");
		char name[32];
		snprintf(name, sizeof name, "o%d", serial++);
		cJSON_AddStringToObject(md, "name", name);
		assert_non_null(apis_create_internal(srv, *p == 'c' ? rd_cm : rd_secret, "default", o));
	}
	assert_int_equal(srv->ring_head, base + strlen(what));
	pthread_rwlock_unlock(&srv->lock);
	return base;
}

struct lost_case {
	const char *commits;       /* into a 4-event history */
	char resource;             /* 'c' or 's' */
	unsigned from;             /* the watcher's cursor, relative to the first commit */
	bool lost, pending;
};

static void test_lost_and_pending(void **state)
{
	(void)state;
	static const struct lost_case cases[] = {
		/* the ConfigMap at 0 was dropped (the history holds 2..5) */
		{ "csssss", 'c', 0, true, true },
		/* a cursor past it: only Secrets were dropped, nothing of the ConfigMaps is pending */
		{ "csssss", 'c', 1, false, false },
		{ "csssss", 's', 1, true, true },
		{ "csssss", 's', 2, false, true },
		/* a dropped ConfigMap before the cursor and a kept one after it */
		{ "cssssc", 'c', 1, false, true },
		{ "cssssc", 'c', 0, true, true },
		{ "cssssc", 'c', 5, false, true },
		{ "cssssc", 'c', 6, false, false },
		/* only ConfigMaps: a cursor inside the dropped part lost one */
		{ "cccccc", 'c', 1, true, true },
		{ "cccccc", 'c', 2, false, true },
		{ "cccccc", 's', 0, false, false },
		/* nothing dropped */
		{ "cs", 'c', 0, false, true },
		{ "cs", 'c', 1, false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct lost_case *k = &cases[i];
		uint64_t base = commit(k->commits);
		const struct apis_rdef *rd = k->resource == 'c' ? rd_cm : rd_secret;
		pthread_mutex_lock(&srv->ring_mu);
		bool lost = apis_ring_lost_locked(srv, rd, base + k->from);
		bool pending = apis_ring_pending_locked(rd, base + k->from);
		pthread_mutex_unlock(&srv->ring_mu);
		if (lost != k->lost || pending != k->pending)
			fail_msg("case %zu (%s, %c from %u): lost %d pending %d, want %d %d", i, k->commits, k->resource,
				 k->from, lost, pending, k->lost, k->pending);
	}
}

/* A commit signals the waiters of its own resource (and clears their flag), not the others. */
static void test_wakes_only_its_resource(void **state)
{
	(void)state;
	struct apis_watch_wait cm = { .rd = rd_cm }, secret = { .rd = rd_secret };
	pthread_mutex_lock(&srv->ring_mu);
	apis_watch_wait_add_locked(srv, &cm);
	apis_watch_wait_add_locked(srv, &secret);
	cm.waiting = secret.waiting = true;
	pthread_mutex_unlock(&srv->ring_mu);
	commit("s");
	pthread_mutex_lock(&srv->ring_mu);
	assert_true(cm.waiting);
	assert_false(secret.waiting);
	secret.waiting = true;
	pthread_mutex_unlock(&srv->ring_mu);
	commit("c");
	pthread_mutex_lock(&srv->ring_mu);
	assert_false(cm.waiting);
	assert_true(secret.waiting);
	apis_watch_wait_remove_locked(srv, &cm);
	apis_watch_wait_remove_locked(srv, &secret);
	assert_null(srv->watch_waits);
	pthread_mutex_unlock(&srv->ring_mu);
}

/* apis_json_member finds a top-level member of a stored object's JSON, past members whose
 * values hold the same name, quotes, braces and brackets inside strings. */
static void test_json_member(void **state)
{
	(void)state;
	static const struct {
		const char *json, *key;
		const char *want; /* the value's bytes, NULL: not found */
	} cases[] = {
		{ "{\"metadata\":{\"name\":\"a\"}}", "metadata", "{\"name\":\"a\"}" },
		{ "{\"name\":\"a\",\"resourceVersion\":\"12\"}", "resourceVersion", "\"12\"" },
		{ "{\"a\":{\"metadata\":1},\"metadata\":{}}", "metadata", "{}" },
		{ "{\"a\":\"\\\"metadata\\\":{\",\"metadata\":[1,{\"x\":\"]}\"}]}", "metadata", "[1,{\"x\":\"]}\"}]" },
		{ "{\"a\":[{\"b\":[[],{}]}],\"b\":true,\"c\":null,\"d\":-1.5e3,\"e\":\"\\\\\"}", "e", "\"\\\\\"" },
		{ "{\"a\":[{\"b\":[[],{}]}],\"b\":true,\"c\":null,\"d\":-1.5e3}", "d", "-1.5e3" },
		{ "{\"a\":[{\"b\":[[],{}]}],\"b\":true,\"c\":null}", "c", "null" },
		{ "{\"k\":1,\"k\":2}", "k", "1" },
		/* backslash runs before a quote: even, the string ends; odd, the quote is escaped */
		{ "{\"a\":\"x\\\\\\\"y\\\\\",\"metadata\":1}", "metadata", "1" },
		{ "{\"a\":\"\\\\\\\"\",\"b\":2}", "a", "\"\\\\\\\"\"" },
		{ "{\"a\":\"\\\\\\\"\",\"b\":2}", "b", "2" },
		{ "{\"a\":[\"]\\\\\",{\"}\\\"\":\"\\\\\\\\\"}],\"b\":3}", "b", "3" },
		{ "{\"a\":\"\\\\\\\",\"b\":2}", "b", NULL },
		{ "{\"metadatax\":1,\"xmetadata\":2}", "metadata", NULL },
		{ "{\"a\":{\"finalizers\":[\"x\"]}}", "finalizers", NULL },
		{ "{}", "a", NULL },
		{ "[{\"a\":1}]", "a", NULL },
		{ "{\"a\":\"unterminated", "a", NULL },
		{ "", "a", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t at = 0, len = 0;
		bool found = apis_json_member(cases[i].json, strlen(cases[i].json), cases[i].key, &at, &len);
		if (found != (cases[i].want != NULL) ||
		    (found && (len != strlen(cases[i].want) || memcmp(cases[i].json + at, cases[i].want, len))))
			fail_msg("case %zu (%s in %s): found %d \"%.*s\", want %s", i, cases[i].key, cases[i].json, found,
				 found ? (int)len : 0, found ? cases[i].json + at : "", cases[i].want ? cases[i].want : "none");
	}
}

/* apis_json_members finds several members in one pass (a binding's and a status patch's lookups
 * over the stored pod): every key must get what apis_json_member finds for it alone, whatever
 * the other keys and their order, and a lookup cut short by a truncated text must say so. */
static void test_json_members(void **state)
{
	(void)state;
	static const char pod[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"9\"},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}],\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\"}}";
	static const char *const texts[] = {
		pod,
		"{\"status\":{},\"spec\":{\"status\":1},\"metadata\":{}}",
		"{\"a\":\"\\\"metadata\\\":{\",\"metadata\":[1,{\"x\":\"]}\"}],\"spec\":null}",
		"{\"k\":1,\"k\":2,\"spec\":3,\"spec\":4}",
		"{\"metadatax\":1,\"xmetadata\":2,\"spe\":3,\"specs\":4}",
		"{\"a\":{\"finalizers\":[\"x\"]},\"b\":true,\"c\":null,\"d\":-1.5e3}",
		"{}",
		"[{\"metadata\":1}]",
		"",
	};
	static const char *const keysets[][4] = {
		{ "metadata", "spec", "status", NULL },
		{ "status", "metadata", NULL },
		{ "spec", "k", "a", "d" },
		{ "nodeName", "schedulingGates", NULL },
		{ "metadata", NULL },
		{ "c", "b", "finalizers", NULL },
	};
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
		for (size_t k = 0; k < sizeof keysets / sizeof keysets[0]; k++) {
			size_t n = 0, at[4], len[4];
			while (n < 4 && keysets[k][n])
				n++;
			bool ok = apis_json_members(texts[t], strlen(texts[t]), keysets[k], n, at, len);
			assert_int_equal(ok, texts[t][0] == '{');
			for (size_t i = 0; i < n; i++) {
				size_t at1 = 0, len1 = 0;
				bool found = apis_json_member(texts[t], strlen(texts[t]), keysets[k][i], &at1, &len1);
				if (found != (len[i] != 0) || (found && (at[i] != at1 || len[i] != len1)))
					fail_msg("text %zu, key %s: members %zu+%zu, member %d %zu+%zu", t, keysets[k][i], at[i],
						 len[i], found, at1, len1);
			}
		}
	}
	/* cut short: the first member still found alone, not when a later one is asked for too */
	static const char *const ab[] = { "a", "b" };
	size_t at[2], len[2];
	const char *cut = "{\"a\":1,\"b\":\"unterminated";
	assert_true(apis_json_members(cut, strlen(cut), ab, 1, at, len));
	assert_int_equal(len[0], 1);
	assert_false(apis_json_members(cut, strlen(cut), ab, 2, at, len));
}

static void count_gc_relevant(void *u, struct apis_obj *o)
{
	*(size_t *)u += apis_obj_gc_relevant(o);
}

/* The garbage collector skips its scan of every object while no table counts a dependent or an
 * owner waiting for its dependents (controllers.c gc_run): through creates, updates, deletions
 * and removals the count must stay what a scan finds, and say whether the object is one. Runs
 * under the write lock, so the collector does not act on the objects meanwhile. */
static void test_gc_count(void **state)
{
	(void)state;
	static const struct {
		const char *op;   /* create, update (JSON: the new metadata), delete (propagation), remove */
		const char *arg;
		bool relevant;    /* the object "g" after the step (false: also when gone) */
	} steps[] = {
		{ "create", "{\"name\":\"g\"}", false },
		{ "update", "{\"name\":\"g\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			    "\"name\":\"owner\",\"uid\":\"OWNER\"}]}", true },
		{ "update", "{\"name\":\"g\",\"ownerReferences\":[]}", false },
		{ "update", "{\"name\":\"g\",\"finalizers\":[\"example.com/keep\"]}", false },
		{ "delete", "Background", false },
		{ "delete", "Foreground", true },
		{ "update", "{\"name\":\"g\",\"finalizers\":[\"example.com/keep\"]}", false },
		{ "update", "{\"name\":\"g\",\"finalizers\":[\"example.com/keep\",\"orphan\"]}", true },
		/* the collector's test reads the JSON (gc_visit): the string "orphan" anywhere counts, and
		 * its pass then changes nothing */
		{ "update", "{\"name\":\"g\",\"finalizers\":[\"example.com/keep\"],\"labels\":{\"a\":\"orphan\"}}",
		  true },
		/* the last finalizer gone: removed */
		{ "update", "{\"name\":\"g\"}", false },
		{ "create", "{\"name\":\"g\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			    "\"name\":\"owner\",\"uid\":\"OWNER\"}]}", true },
		{ "remove", NULL, false },
	};
	pthread_rwlock_wrlock(&srv->lock);
	cJSON *ow = cJSON_Parse("{\"metadata\":{\"name\":\"owner\"}}");
	struct apis_obj *owner = apis_create_internal(srv, rd_cm, "default", ow);
	assert_non_null(owner);
	char owner_uid[64];
	snprintf(owner_uid, sizeof owner_uid, "%s", owner->uid);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		struct apis_obj *cur = apis_store_get(rd_cm, "default", "g");
		if (steps[i].arg && strchr(steps[i].arg, '{')) {
			char md[512];
			const char *at = strstr(steps[i].arg, "OWNER");
			if (at)
				snprintf(md, sizeof md, "%.*s%s%s", (int)(at - steps[i].arg), steps[i].arg, owner_uid, at + 5);
			else
				snprintf(md, sizeof md, "%s", steps[i].arg);
			cJSON *obj = cJSON_CreateObject();
			cJSON_AddItemToObject(obj, "metadata", cJSON_Parse(md));
			if (!strcmp(steps[i].op, "create"))
				assert_non_null(apis_create_internal(srv, rd_cm, "default", obj));
			else
				assert_non_null(apis_update_internal(srv, rd_cm, cur, obj));
		} else if (!strcmp(steps[i].op, "delete")) {
			bool removed;
			assert_non_null(apis_delete_object(srv, rd_cm, cur, steps[i].arg, -1, &removed));
			assert_false(removed);
		} else {
			assert_non_null(apis_store_remove(srv, rd_cm, cur, NULL));
		}
		cur = apis_store_get(rd_cm, "default", "g");
		size_t scanned = 0;
		apis_store_each(rd_cm, NULL, count_gc_relevant, &scanned);
		bool relevant = cur && apis_obj_gc_relevant(cur);
		if (rd_cm->table.gc_count != scanned || relevant != steps[i].relevant)
			fail_msg("step %zu (%s %s): count %zu, scan %zu; relevant %d, want %d", i, steps[i].op,
				 steps[i].arg ? steps[i].arg : "", rd_cm->table.gc_count, scanned, relevant, steps[i].relevant);
	}
	assert_null(apis_store_get(rd_cm, "default", "g"));
	assert_non_null(apis_store_remove(srv, rd_cm, apis_store_get(rd_cm, "default", "owner"), NULL));
	pthread_rwlock_unlock(&srv->lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_and_pending),
		cmocka_unit_test(test_wakes_only_its_resource),
		cmocka_unit_test(test_gc_count),
		cmocka_unit_test(test_json_member),
		cmocka_unit_test(test_json_members),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
