/* test_e2e_informer.c — kube/informer.c (and watch.c under it) end to end against the local API
 * server (e2e/apiserver, in-process on port 0): initial sync, add/update/delete handlers in event
 * order, field selector spec.nodeName= (unassigned pods) and label selectors (objects leaving and
 * entering the selection), resume after the server closes watch streams every second with no lost
 * or duplicated events over thousands of writes, relist after 410 (tiny watch history) delivering
 * the deletes that happened meanwhile, BOOKMARKs keeping the resourceVersion fresh (no relist),
 * TLS + token from the server's kubeconfig, and injected 500/429 errors. Every test ends by
 * comparing the store with a fresh list from the server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e/apiserver/server.h"
#include "kube/informer.h"
#include "kube/rest.h"

/* ---------- helpers ---------- */

static struct apis_server *start_server(const struct apis_opts *o)
{
	struct apis_server *s = NULL;
	assert_int_equal(apis_server_start(o, &s), 0);
	return s;
}

static struct kube_client *client_for(struct apis_server *s)
{
	struct kube_config *cfg = kube_config_new(apis_server_url(s));
	assert_non_null(cfg);
	cfg->qps = 0;   /* thousands of writes; no client-side limit */
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	kube_config_free(cfg);
	kube_client_set_max_retries(c, 10);
	return c;
}

static cJSON *jsonf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *jsonf(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	return j;
}

static const char *meta_str(const cJSON *o, const char *field)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), field);
	return cJSON_IsString(s) ? s->valuestring : "";
}

/* Writes with retries on retriable errors (injected 500/429 are answered before the request is
 * handled, so a retried POST cannot have been applied). Returns 0 or the final error. out may be NULL. */
static int write_retry(struct kube_client *c, const char *method, const char *path, const cJSON *body, const char *ct,
		       cJSON **out, struct kube_error *e)
{
	char *txt = body ? cJSON_PrintUnformatted(body) : NULL;
	int rc = -1;
	for (int i = 0; i < 200; i++) {
		rc = kube_request(c, method, path, NULL, txt, ct, out, e);
		if (rc == 0 || !e->retriable)
			break;
		usleep(2000);
	}
	free(txt);
	return rc;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* The store and a fresh list agree on keys and resourceVersions. */
static bool store_matches_list(struct kube_client *c, struct kube_informer *inf, const char *path, const char *ls,
			       const char *fs, char *why, size_t whylen)
{
	cJSON *l = NULL;
	struct kube_error e;
	if (kube_list(c, path, ls, fs, &l, &e) != 0) {
		snprintf(why, whylen, "list failed: %d %.200s", e.http_code, e.message);
		return false;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
	size_t n = (size_t)cJSON_GetArraySize(items);
	bool ok = true;
	if (kube_store_len(inf) != n) {
		snprintf(why, whylen, "store has %zu objects, server %zu", kube_store_len(inf), n);
		ok = false;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, items) {
		if (!ok)
			break;
		char key[300];
		kube_object_key(it, key, sizeof key);
		cJSON *mine = kube_store_get(inf, key);
		if (!mine) {
			snprintf(why, whylen, "%s missing from the store", key);
			ok = false;
		} else if (strcmp(meta_str(mine, "resourceVersion"), meta_str(it, "resourceVersion"))) {
			snprintf(why, whylen, "%s: store rv %s, server rv %s", key, meta_str(mine, "resourceVersion"),
				 meta_str(it, "resourceVersion"));
			ok = false;
		}
		cJSON_Delete(mine);
	}
	cJSON_Delete(l);
	return ok;
}

/* Polls until the store equals a fresh list (up to 60 s); fails with the last difference. */
static void assert_converges(struct kube_client *c, struct kube_informer *inf, const char *path, const char *ls,
			     const char *fs)
{
	char why[400] = "";
	for (int i = 0; i < 600; i++) {
		if (store_matches_list(c, inf, path, ls, fs, why, sizeof why))
			return;
		sleep_ms(100);
	}
	fail_msg("store never matched the server's list: %s", why);
}

/* ---------- a recording handler ---------- */

#define MAX_LOG 64
struct rec {
	pthread_mutex_t mu;
	int n;
	char type[MAX_LOG];               /* 'A', 'U', 'D' */
	char key[MAX_LOG][64], rv[MAX_LOG][24];
};

static void rec_push(struct rec *r, char t, const cJSON *obj)
{
	pthread_mutex_lock(&r->mu);
	if (r->n < MAX_LOG) {
		r->type[r->n] = t;
		kube_object_key(obj, r->key[r->n], sizeof r->key[r->n]);
		snprintf(r->rv[r->n], sizeof r->rv[r->n], "%s", meta_str(obj, "resourceVersion"));
	}
	r->n++;
	pthread_mutex_unlock(&r->mu);
}
static void rec_add(void *u, const cJSON *o) { rec_push(u, 'A', o); }
static void rec_update(void *u, const cJSON *old, const cJSON *o) { (void)old; rec_push(u, 'U', o); }
static void rec_delete(void *u, const cJSON *o) { rec_push(u, 'D', o); }

static int rec_count(struct rec *r)
{
	pthread_mutex_lock(&r->mu);
	int n = r->n;
	pthread_mutex_unlock(&r->mu);
	return n;
}

static void rec_wait(struct rec *r, int n)
{
	for (int i = 0; i < 600 && rec_count(r) < n; i++)
		sleep_ms(50);
	if (rec_count(r) < n)
		fail_msg("handlers saw %d events, want %d", rec_count(r), n);
}

static struct kube_informer *informer(struct kube_client *c, const char *resource, const char *ns, const char *ls,
				      const char *fs, struct rec *r)
{
	struct kube_informer_opts o = { .version = "v1", .resource = resource, .ns = ns, .label_selector = ls,
					.field_selector = fs };
	struct kube_informer *inf = NULL;
	assert_int_equal(kube_informer_new(c, &o, &inf), 0);
	if (r) {
		struct kube_informer_handlers h = { rec_add, rec_update, rec_delete, r };
		kube_informer_add_handlers(inf, &h);
	}
	kube_informer_set_backoff(inf, 0.05, 0.5);
	return inf;
}

static void create_ok(struct kube_client *c, const char *path, cJSON *obj, char *rv_out)
{
	struct kube_error e;
	cJSON *out = NULL;
	if (write_retry(c, "POST", path, obj, NULL, &out, &e) != 0)
		fail_msg("create %s: %d %s %s", path, e.http_code, e.reason, e.message);
	if (rv_out)
		snprintf(rv_out, 24, "%s", meta_str(out, "resourceVersion"));
	cJSON_Delete(out);
	cJSON_Delete(obj);
}

static const char CM[] = "/api/v1/namespaces/default/configmaps";
static const char PODS[] = "/api/v1/namespaces/default/pods";

/* ---------- tests ---------- */

static void test_sync_and_handler_order(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	struct rec r = { .mu = PTHREAD_MUTEX_INITIALIZER };
	char rv[8][24];
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"a\"},\"data\":{\"v\":\"0\"}}"), rv[0]);
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"b\"}}"), rv[1]);
	create_ok(c, "/api/v1/namespaces/kube-system/configmaps", jsonf("{\"metadata\":{\"name\":\"elsewhere\"}}"), NULL);

	struct kube_informer *inf = informer(c, "configmaps", "default", NULL, NULL, &r);
	assert_false(kube_informer_has_synced(inf));
	assert_int_equal(kube_informer_start(inf), 0);
	assert_int_equal(kube_informer_start(inf), -1);
	assert_true(kube_informer_wait_for_sync(inf, 30000));
	assert_true(kube_informer_has_synced(inf));
	/* everything listed is in the store and was announced with on_add before has_synced */
	size_t base = kube_store_len(inf);
	assert_true(base >= 2);
	assert_int_equal(rec_count(&r), (int)base);
	cJSON *a = kube_store_get(inf, "default/a");
	assert_non_null(a);
	assert_string_equal(meta_str(a, "resourceVersion"), rv[0]);
	cJSON_Delete(a);
	assert_null(kube_store_get(inf, "kube-system/elsewhere"));

	/* update a, delete b, create d, update d, delete a: handlers see exactly this, in order */
	struct kube_error e;
	cJSON *out = NULL;
	cJSON *p = jsonf("{\"data\":{\"v\":\"1\"}}");
	assert_int_equal(kube_patch(c, "/api/v1/namespaces/default/configmaps/a", KUBE_PATCH_MERGE, p, &out, &e), 0);
	snprintf(rv[2], 24, "%s", meta_str(out, "resourceVersion"));
	cJSON_Delete(out);
	cJSON_Delete(p);
	assert_int_equal(kube_delete(c, "/api/v1/namespaces/default/configmaps/b", &e), 0);
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"d\"}}"), rv[3]);
	p = jsonf("{\"metadata\":{\"labels\":{\"x\":\"y\"}}}");
	assert_int_equal(kube_patch(c, "/api/v1/namespaces/default/configmaps/d", KUBE_PATCH_STRATEGIC, p, &out, &e), 0);
	snprintf(rv[4], 24, "%s", meta_str(out, "resourceVersion"));
	cJSON_Delete(out);
	cJSON_Delete(p);
	assert_int_equal(kube_delete(c, "/api/v1/namespaces/default/configmaps/a", &e), 0);

	rec_wait(&r, (int)base + 5);
	sleep_ms(200);   /* nothing further may arrive */
	assert_int_equal(rec_count(&r), (int)base + 5);
	struct { char t; const char *key; const char *rv; } want[] = {
		{ 'U', "default/a", rv[2] }, { 'D', "default/b", NULL }, { 'A', "default/d", rv[3] },
		{ 'U', "default/d", rv[4] }, { 'D', "default/a", NULL },
	};
	for (size_t i = 0; i < 5; i++) {
		size_t k = base + i;
		if (r.type[k] != want[i].t || strcmp(r.key[k], want[i].key))
			fail_msg("event %zu: %c %s, want %c %s", i, r.type[k], r.key[k], want[i].t, want[i].key);
		if (want[i].rv)
			assert_string_equal(r.rv[k], want[i].rv);
	}
	assert_null(kube_store_get(inf, "default/a"));
	assert_null(kube_store_get(inf, "default/b"));
	cJSON *d = kube_store_get(inf, "default/d");
	assert_non_null(d);
	cJSON_Delete(d);
	assert_converges(c, inf, CM, NULL, NULL);
	assert_int_equal(kube_informer_list_count(inf), 1);
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
}

static cJSON *pod(const char *name, const char *app)
{
	return jsonf("{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":"
		     "[{\"name\":\"c\",\"image\":\"pause\"}]}}", name, app);
}

static void bind(struct kube_client *c, const char *name, const char *node)
{
	char path[200];
	snprintf(path, sizeof path, "%s/%s/binding", PODS, name);
	cJSON *b = jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
			 "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"%s\"}}", name, node);
	struct kube_error e;
	if (kube_create(c, path, b, NULL, &e) != 0)
		fail_msg("bind %s: %d %s", name, e.http_code, e.message);
	cJSON_Delete(b);
}

static bool rec_has(struct rec *r, char t, const char *key)
{
	pthread_mutex_lock(&r->mu);
	bool f = false;
	for (int i = 0; i < r->n && i < MAX_LOG; i++)
		f |= r->type[i] == t && !strcmp(r->key[i], key);
	pthread_mutex_unlock(&r->mu);
	return f;
}

static void test_field_and_label_selectors(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	create_ok(c, "/api/v1/nodes", jsonf("{\"metadata\":{\"name\":\"n1\"}}"), NULL);
	create_ok(c, PODS, pod("u1", "web"), NULL);
	create_ok(c, PODS, pod("u2", "db"), NULL);
	create_ok(c, PODS, pod("b1", "web"), NULL);
	bind(c, "b1", "n1");

	/* the scheduler's informer: unassigned pods only */
	struct rec ru = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *unassigned = informer(c, "pods", NULL, NULL, "spec.nodeName=", &ru);
	/* a label-selected informer */
	struct rec rw = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *web = informer(c, "pods", "default", "app=web", NULL, &rw);
	assert_int_equal(kube_informer_start(unassigned), 0);
	assert_int_equal(kube_informer_start(web), 0);
	assert_true(kube_informer_wait_for_sync(unassigned, 30000));
	assert_true(kube_informer_wait_for_sync(web, 30000));
	assert_int_equal(kube_store_len(unassigned), 2);
	assert_int_equal(kube_store_len(web), 2);
	cJSON *x = kube_store_get(unassigned, "default/b1");
	assert_null(x);
	x = kube_store_get(web, "default/u2");
	assert_null(x);

	/* binding u1 takes it out of the unassigned selection: a delete for that informer, an update
	 * for the label one */
	bind(c, "u1", "n1");
	for (int i = 0; i < 600 && !rec_has(&ru, 'D', "default/u1"); i++)
		sleep_ms(50);
	assert_true(rec_has(&ru, 'D', "default/u1"));
	assert_int_equal(kube_store_len(unassigned), 1);
	for (int i = 0; i < 600 && !rec_has(&rw, 'U', "default/u1"); i++)
		sleep_ms(50);
	assert_true(rec_has(&rw, 'U', "default/u1"));

	/* relabel u2 into app=web: an add for the label informer; out again: a delete */
	struct kube_error e;
	cJSON *p = jsonf("{\"metadata\":{\"labels\":{\"app\":\"web\"}}}");
	assert_int_equal(kube_patch(c, "/api/v1/namespaces/default/pods/u2", KUBE_PATCH_MERGE, p, NULL, &e), 0);
	cJSON_Delete(p);
	for (int i = 0; i < 600 && !rec_has(&rw, 'A', "default/u2"); i++)
		sleep_ms(50);
	assert_true(rec_has(&rw, 'A', "default/u2"));
	p = jsonf("{\"metadata\":{\"labels\":{\"app\":\"other\"}}}");
	assert_int_equal(kube_patch(c, "/api/v1/namespaces/default/pods/u2", KUBE_PATCH_MERGE, p, NULL, &e), 0);
	cJSON_Delete(p);
	for (int i = 0; i < 600 && !rec_has(&rw, 'D', "default/u2"); i++)
		sleep_ms(50);
	assert_true(rec_has(&rw, 'D', "default/u2"));

	/* a new unassigned pod shows up in the first informer only */
	create_ok(c, PODS, pod("u3", "batch"), NULL);
	for (int i = 0; i < 600 && !rec_has(&ru, 'A', "default/u3"); i++)
		sleep_ms(50);
	assert_true(rec_has(&ru, 'A', "default/u3"));

	assert_converges(c, unassigned, "/api/v1/pods", NULL, "spec.nodeName=");
	assert_converges(c, web, PODS, "app=web", NULL);
	assert_false(rec_has(&rw, 'A', "default/u3"));
	kube_informer_free(unassigned);
	kube_informer_free(web);
	kube_client_free(c);
	apis_server_stop(s);
}

/* ---------- thousands of writes across closed watch streams ---------- */

#define NKEYS 800
#define MAXRV 8
struct ledger {
	pthread_mutex_t mu;
	/* written by the writers: resourceVersions returned for creates/updates, and deletes */
	int nw[NKEYS]; unsigned long wrv[NKEYS][MAXRV]; bool wdel[NKEYS];
	/* seen by the informer's handlers */
	int ns[NKEYS]; unsigned long srv[NKEYS][MAXRV]; int sdel[NKEYS];
	int after_delete, overflow, foreign;
};

static int slot_of(const cJSON *o)
{
	const char *n = meta_str(o, "name");
	if (strncmp(n, "k-", 2))
		return -1;
	return atoi(n + 2);
}

static void led_seen(struct ledger *l, const cJSON *o)
{
	int k = slot_of(o);
	pthread_mutex_lock(&l->mu);
	if (k < 0 || k >= NKEYS)
		l->foreign++;
	else if (l->sdel[k])
		l->after_delete++;
	else if (l->ns[k] >= MAXRV)
		l->overflow++;
	else
		l->srv[k][l->ns[k]++] = strtoul(meta_str(o, "resourceVersion"), NULL, 10);
	pthread_mutex_unlock(&l->mu);
}
static void led_add(void *u, const cJSON *o) { led_seen(u, o); }
static void led_update(void *u, const cJSON *old, const cJSON *o) { (void)old; led_seen(u, o); }
static void led_delete(void *u, const cJSON *o)
{
	struct ledger *l = u;
	int k = slot_of(o);
	pthread_mutex_lock(&l->mu);
	if (k >= 0 && k < NKEYS)
		l->sdel[k]++;
	else
		l->foreign++;
	pthread_mutex_unlock(&l->mu);
}

struct writer {
	struct kube_client *c; struct ledger *l; int from, to; int failures; char err[300];
	int pace_us;                  /* sleep before each key */
};

static void wrote(struct writer *w, int k, const cJSON *out)
{
	pthread_mutex_lock(&w->l->mu);
	if (w->l->nw[k] < MAXRV)
		w->l->wrv[k][w->l->nw[k]++] = strtoul(meta_str(out, "resourceVersion"), NULL, 10);
	pthread_mutex_unlock(&w->l->mu);
}

/* Per key: create, two updates (merge patch, then PUT), and a delete for every third key. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct kube_error e;
	for (int k = w->from; k < w->to; k++) {
		if (w->pace_us)   /* spread the writes over several server-side stream closes */
			usleep(w->pace_us);
		char path[200];
		snprintf(path, sizeof path, "%s/k-%d", CM, k);
		cJSON *obj = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(obj, "metadata");
		char name[32];
		snprintf(name, sizeof name, "k-%d", k);
		cJSON_AddStringToObject(md, "name", name);
		cJSON_AddObjectToObject(obj, "data");
		cJSON *out = NULL;
		int rc = write_retry(w->c, "POST", CM, obj, NULL, &out, &e);
		cJSON_Delete(obj);
		if (rc) goto fail;
		wrote(w, k, out);
		cJSON_Delete(out);
		cJSON *p = cJSON_Parse("{\"data\":{\"step\":\"1\"}}");
		rc = write_retry(w->c, "PATCH", path, p, "application/merge-patch+json", &out, &e);
		cJSON_Delete(p);
		if (rc) goto fail;
		wrote(w, k, out);
		cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "data"), "step",
						      cJSON_CreateString("2"));
		cJSON *upd = NULL;
		rc = write_retry(w->c, "PUT", path, out, NULL, &upd, &e);
		cJSON_Delete(out);
		if (rc) goto fail;
		wrote(w, k, upd);
		cJSON_Delete(upd);
		if (k % 3 == 0) {
			rc = write_retry(w->c, "DELETE", path, NULL, NULL, NULL, &e);
			if (rc) goto fail;
			pthread_mutex_lock(&w->l->mu);
			w->l->wdel[k] = true;
			pthread_mutex_unlock(&w->l->mu);
		}
		continue;
	fail:
		if (!w->failures++)
			snprintf(w->err, sizeof w->err, "k-%d: %d %s %.200s", k, e.http_code, e.reason, e.message);
	}
	return NULL;
}

static int run_writers(struct apis_server *s, struct ledger *l, int nthreads, int nkeys, int pace_us)
{
	pthread_t th[4];
	struct writer w[4];
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct writer){ .c = client_for(s), .l = l, .from = i * nkeys / nthreads,
					.to = (i + 1) * nkeys / nthreads, .pace_us = pace_us };
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	}
	int failures = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		if (w[i].failures)
			print_error("writer %d: %d failures, first: %s\n", i, w[i].failures, w[i].err);
		failures += w[i].failures;
		kube_client_free(w[i].c);
	}
	return failures;
}

/* Every write's resourceVersion reached the handlers exactly once, in order, and every delete
 * exactly once, last. */
static void check_ledger(struct ledger *l, int nkeys, bool exact)
{
	pthread_mutex_lock(&l->mu);
	int lost = 0, dup = 0, order = 0, del_bad = 0;
	for (int k = 0; k < nkeys; k++) {
		if (l->sdel[k] != (l->wdel[k] ? 1 : 0))
			del_bad++;
		if (!exact)
			continue;
		if (l->ns[k] > l->nw[k])
			dup++;
		for (int i = 0; i < l->nw[k]; i++) {
			int found = 0;
			for (int j = 0; j < l->ns[k]; j++)
				found += l->srv[k][j] == l->wrv[k][i];
			if (found == 0)
				lost++;
			else if (found > 1)
				dup++;
		}
		for (int j = 1; j < l->ns[k]; j++)
			if (l->srv[k][j] <= l->srv[k][j - 1])
				order++;
	}
	int after = l->after_delete, over = l->overflow;
	pthread_mutex_unlock(&l->mu);
	if (lost || dup || order || del_bad || after || over)
		fail_msg("lost=%d duplicated=%d out-of-order=%d wrong-deletes=%d after-delete=%d overflow=%d", lost, dup,
			 order, del_bad, after, over);
}

static struct kube_informer *ledger_informer(struct kube_client *c, struct ledger *l)
{
	struct kube_informer_opts o = { .version = "v1", .resource = "configmaps", .ns = "default" };
	struct kube_informer *inf = NULL;
	assert_int_equal(kube_informer_new(c, &o, &inf), 0);
	struct kube_informer_handlers h = { led_add, led_update, led_delete, l };
	kube_informer_add_handlers(inf, &h);
	kube_informer_set_backoff(inf, 0.05, 0.5);
	return inf;
}

static void test_resume_across_closed_streams(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.fault_close_watch_every = 1;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	struct ledger *l = calloc(1, sizeof *l);
	assert_non_null(l);
	pthread_mutex_init(&l->mu, NULL);
	struct kube_informer *inf = ledger_informer(c, l);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 30000));

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run_writers(s, l, 3, NKEYS, 20000), 0);   /* >= 5.3 s */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_converges(c, inf, CM, NULL, NULL);
	kube_informer_stop(inf);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	int writes = NKEYS * 3 + (NKEYS + 2) / 3;
	print_message("resume: %d writes in %.1f s, %zu watches, %zu lists\n", writes, secs,
		      kube_informer_watch_count(inf), kube_informer_list_count(inf));
	/* the streams really were cut while writing (writes span over 5 s, the server cuts every
	 * second), yet no relist was needed */
	assert_true(kube_informer_watch_count(inf) >= 5);
	assert_int_equal(kube_informer_list_count(inf), 1);
	check_ledger(l, NKEYS, true);
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* ---------- relist after 410 ---------- */

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool armed, blocked, open;
	struct rec rec;
};

static void gate_add(void *u, const cJSON *o)
{
	struct gate *g = u;
	rec_push(&g->rec, 'A', o);
	if (strcmp(meta_str(o, "name"), "trigger"))
		return;
	pthread_mutex_lock(&g->mu);
	if (g->armed) {
		g->blocked = true;
		pthread_cond_broadcast(&g->cond);
		while (!g->open)
			pthread_cond_wait(&g->cond, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
}
static void gate_update(void *u, const cJSON *old, const cJSON *o) { (void)old; rec_push(&((struct gate *)u)->rec, 'U', o); }
static void gate_delete(void *u, const cJSON *o) { rec_push(&((struct gate *)u)->rec, 'D', o); }

static void test_relist_after_410(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.history_events = 20;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	for (int i = 0; i < 6; i++) {
		char b[128];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"old-%d\"}}", i);
		create_ok(c, CM, cJSON_Parse(b), NULL);
	}
	struct gate g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .armed = true,
			  .rec = { .mu = PTHREAD_MUTEX_INITIALIZER } };
	struct kube_informer_opts io = { .version = "v1", .resource = "configmaps", .ns = "default" };
	struct kube_informer *inf = NULL;
	assert_int_equal(kube_informer_new(c, &io, &inf), 0);
	struct kube_informer_handlers h = { gate_add, gate_update, gate_delete, &g };
	kube_informer_add_handlers(inf, &h);
	kube_informer_set_backoff(inf, 0.05, 0.5);
	kube_informer_set_watch_timeout(inf, 1);   /* the server ends the stream after 1 s */
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 30000));
	size_t listed = kube_store_len(inf);
	assert_true(listed >= 6);

	/* hold the informer inside its handler for "trigger" */
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"trigger\"}}"), NULL);
	pthread_mutex_lock(&g.mu);
	while (!g.blocked)
		pthread_cond_wait(&g.cond, &g.mu);
	pthread_mutex_unlock(&g.mu);
	sleep_ms(2500);   /* its watch stream has ended on the server meanwhile */

	/* while it is away: delete three old objects, update one, and push the history past 20 */
	struct kube_error e;
	for (int i = 0; i < 3; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/old-%d", CM, i);
		assert_int_equal(kube_delete(c, path, &e), 0);
	}
	cJSON *p = jsonf("{\"data\":{\"changed\":\"yes\"}}");
	assert_int_equal(kube_patch(c, "/api/v1/namespaces/default/configmaps/old-5", KUBE_PATCH_MERGE, p, NULL, &e), 0);
	cJSON_Delete(p);
	for (int i = 0; i < 40; i++) {
		char b[128];
		snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"filler-%d\"}}", i);
		create_ok(c, "/api/v1/namespaces/kube-system/configmaps", cJSON_Parse(b), NULL);
	}
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"new\"}}"), NULL);

	pthread_mutex_lock(&g.mu);
	g.open = true;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.mu);

	/* the resumed watch gets 410; the relist delivers the deletes, the update and the add */
	for (int i = 0; i < 600 && !(rec_has(&g.rec, 'D', "default/old-2") && rec_has(&g.rec, 'A', "default/new")); i++)
		sleep_ms(50);
	assert_converges(c, inf, CM, NULL, NULL);
	for (int i = 0; i < 3; i++) {
		char key[64];
		snprintf(key, sizeof key, "default/old-%d", i);
		if (!rec_has(&g.rec, 'D', key))
			fail_msg("no delete delivered for %s", key);
	}
	assert_true(rec_has(&g.rec, 'U', "default/old-5"));
	assert_true(rec_has(&g.rec, 'A', "default/new"));
	assert_false(rec_has(&g.rec, 'D', "default/old-3"));
	assert_true(kube_informer_list_count(inf) >= 2);   /* relisted */
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
}

/* ---------- bookmarks ---------- */

/* Writes elsewhere (90, in rounds of 30) push the watch history (45 events) past the informer's
 * last object event; the BOOKMARKs it received meanwhile moved its resourceVersion on, so resuming
 * after the server ends the stream needs no relist. The history holds more than one round: a
 * stream that ends (or breaks, on a loaded machine) before the round's bookmark arrives still
 * resumes inside it, while without bookmarks the second round would already force a relist. */
static void test_bookmarks_avoid_relist(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.history_events = 45;
	o.bookmark_interval_ms = 100;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	struct rec r = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf = informer(c, "configmaps", "default", NULL, NULL, &r);
	kube_informer_set_watch_timeout(inf, 1);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 30000));
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"mine\"}}"), NULL);
	for (int i = 0; i < 600 && !rec_has(&r, 'A', "default/mine"); i++)
		sleep_ms(50);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 30; i++) {
			char b[128];
			snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"other-%d-%d\"}}", round, i);
			create_ok(c, "/api/v1/namespaces/kube-system/configmaps", cJSON_Parse(b), NULL);
		}
		/* wait for the stream to end and be resumed (at least two more watches) */
		size_t w0 = kube_informer_watch_count(inf);
		for (int i = 0; i < 600 && kube_informer_watch_count(inf) < w0 + 2; i++)
			sleep_ms(50);
		assert_true(kube_informer_watch_count(inf) >= w0 + 2);
	}
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"mine-2\"}}"), NULL);
	for (int i = 0; i < 600 && !rec_has(&r, 'A', "default/mine-2"); i++)
		sleep_ms(50);
	assert_true(rec_has(&r, 'A', "default/mine-2"));
	assert_int_equal(kube_informer_list_count(inf), 1);
	assert_converges(c, inf, CM, NULL, NULL);
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
}

/* ---------- TLS + token, configured from the kubeconfig the server writes ---------- */

static void test_informer_over_tls(void **state)
{
	(void)state;
	char kc[] = "/tmp/sk-e2e-inf-kc-XXXXXX";
	int fd = mkstemp(kc);
	assert_true(fd >= 0);
	close(fd);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.tls = true;
	o.token = "inf-token";
	o.kubeconfig_path = kc;
	struct apis_server *s = start_server(&o);
	struct kube_config *cfg = NULL;
	char *err = NULL;
	if (kube_config_load(kc, NULL, &cfg, &err) != 0)
		fail_msg("kube_config_load: %s", err);
	unlink(kc);
	cfg->qps = 0;
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	kube_config_free(cfg);
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"before\"}}"), NULL);
	struct rec r = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf = informer(c, "configmaps", "default", NULL, NULL, &r);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 30000));
	assert_true(rec_has(&r, 'A', "default/before"));
	create_ok(c, CM, jsonf("{\"metadata\":{\"name\":\"after\"}}"), NULL);
	for (int i = 0; i < 600 && !rec_has(&r, 'A', "default/after"); i++)
		sleep_ms(50);
	assert_true(rec_has(&r, 'A', "default/after"));
	assert_converges(c, inf, CM, NULL, NULL);
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
}

/* ---------- injected errors ---------- */

static void test_error_rate_eventually_consistent(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.fault_error_rate = 0.15;
	o.fault_seed = 42;
	o.fault_close_watch_every = 2;
	struct apis_server *s = start_server(&o);
	struct kube_client *c = client_for(s);
	struct ledger *l = calloc(1, sizeof *l);
	assert_non_null(l);
	pthread_mutex_init(&l->mu, NULL);
	struct kube_informer *inf = ledger_informer(c, l);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 60000));
	enum { KEYS = 200 };
	assert_int_equal(run_writers(s, l, 2, KEYS, 0), 0);
	assert_converges(c, inf, CM, NULL, NULL);
	kube_informer_stop(inf);
	/* injected failures really happened (and were retried) */
	uint64_t e500 = kube_client_request_count(c, "GET", 500), e429 = kube_client_request_count(c, "GET", 429);
	print_message("error rate: %zu watches, %zu lists, GET 500=%llu 429=%llu\n", kube_informer_watch_count(inf),
		      kube_informer_list_count(inf), (unsigned long long)e500, (unsigned long long)e429);
	assert_true(e500 + e429 > 0);
	/* No watch event is lost even though watches fail to open: resume from the last RV. */
	check_ledger(l, KEYS, kube_informer_list_count(inf) == 1);
	kube_informer_free(inf);
	kube_client_free(c);
	apis_server_stop(s);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_and_handler_order),
		cmocka_unit_test(test_field_and_label_selectors),
		cmocka_unit_test(test_resume_across_closed_streams),
		cmocka_unit_test(test_relist_after_410),
		cmocka_unit_test(test_bookmarks_avoid_relist),
		cmocka_unit_test(test_informer_over_tls),
		cmocka_unit_test(test_error_rate_eventually_consistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
