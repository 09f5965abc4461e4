/* test_store.c — the watch ring's per-resource bookkeeping (e2e/apiserver/store.c): which
 * resource has events after a watcher's cursor (apis_ring_pending_locked), and whether a
 * watcher whose cursor fell behind the history lost an event of its own resource or only
 * other resources' (apis_ring_lost_locked), on a server with a 4-event history; and that a
 * commit wakes only the waiters of its resource. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_and_pending),
		cmocka_unit_test(test_wakes_only_its_resource),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
