/* test_e2e_leader.c — kube/leader.c end to end against the local API server (e2e/apiserver,
 * in-process on port 0): two electors on one coordination.k8s.io/v1 Lease with short durations
 * (lease 2 s, renew deadline 1.5 s, retry 0.2 s). Exactly one leads and the Lease names it; the
 * leader's annotation lands on the Lease; stopping the leader releases the Lease (a version with
 * holderIdentity "" and leaseDurationSeconds 1 is written) and the other elector takes over before
 * the old record could have expired; leaseTransitions counts the handover. Every Lease version is
 * recorded through an informer, so the assertions are about what was written, not about timings. */
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
#include "kube/leader.h"
#include "kube/rest.h"

static const char LEASE[] = "/apis/coordination.k8s.io/v1/namespaces/default/leases/sched";

static struct kube_client *client_for(struct apis_server *s)
{
	struct kube_config *cfg = kube_config_new(apis_server_url(s));
	assert_non_null(cfg);
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	kube_config_free(cfg);
	return c;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* RFC 3339 with optional fraction and Z -> seconds since the epoch; -1 when it does not parse. */
static double parse_time(const char *s)
{
	struct tm tm = {0};
	const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!p)
		return -1;
	double frac = 0;
	if (*p == '.')
		frac = strtod(p, NULL);
	return (double)timegm(&tm) + frac;
}

/* ---------- every version of the Lease, through an informer ---------- */

#define MAXV 512
struct version { char holder[64]; int duration, transitions; double acquire, renew; char anno[64]; };
struct history { pthread_mutex_t mu; int n; struct version v[MAXV]; };

static void record(void *u, const cJSON *o)
{
	struct history *h = u;
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	const cJSON *annos = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "annotations");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(annos, "schedkit.io/leader-info");
	const cJSON *holder = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(spec, "acquireTime");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(spec, "renewTime");
	pthread_mutex_lock(&h->mu);
	if (h->n < MAXV) {
		struct version *v = &h->v[h->n++];
		snprintf(v->holder, sizeof v->holder, "%s", cJSON_IsString(holder) ? holder->valuestring : "");
		v->duration = cJSON_IsNumber(d) ? d->valueint : -1;
		v->transitions = cJSON_IsNumber(t) ? t->valueint : -1;
		v->acquire = parse_time(cJSON_IsString(at) ? at->valuestring : NULL);
		v->renew = parse_time(cJSON_IsString(rt) ? rt->valuestring : NULL);
		snprintf(v->anno, sizeof v->anno, "%s", cJSON_IsString(a) ? a->valuestring : "");
	}
	pthread_mutex_unlock(&h->mu);
}
static void h_add(void *u, const cJSON *o) { record(u, o); }
static void h_update(void *u, const cJSON *old, const cJSON *o) { (void)old; record(u, o); }

/* ---------- electors ---------- */

struct elector {
	const char *id;
	struct kube_client *c;
	struct kube_leader *le;
	pthread_mutex_t mu;
	int started, stopped;
	char new_leaders[8][64];
	int n_new;
};

static void on_started(void *u) { struct elector *e = u; pthread_mutex_lock(&e->mu); e->started++; pthread_mutex_unlock(&e->mu); }
static void on_stopped(void *u) { struct elector *e = u; pthread_mutex_lock(&e->mu); e->stopped++; pthread_mutex_unlock(&e->mu); }
static void on_new_leader(void *u, const char *id)
{
	struct elector *e = u;
	pthread_mutex_lock(&e->mu);
	if (e->n_new < 8)
		snprintf(e->new_leaders[e->n_new], 64, "%s", id);
	e->n_new++;
	pthread_mutex_unlock(&e->mu);
}

static void elector_init(struct elector *e, struct apis_server *s, const char *id)
{
	memset(e, 0, sizeof *e);
	pthread_mutex_init(&e->mu, NULL);
	e->id = id;
	e->c = client_for(s);
	struct kube_leader_config cfg = {
		.ns = "default", .name = "sched", .identity = id, .lease_duration_s = 2, .renew_deadline_s = 1.5,
		.retry_period_s = 0.2, .release_on_cancel = true, .on_started_leading = on_started,
		.on_stopped_leading = on_stopped, .on_new_leader = on_new_leader, .ctx = e,
	};
	char *err = NULL;
	if (kube_leader_new(e->c, &cfg, &e->le, &err) != 0)
		fail_msg("kube_leader_new: %s", err);
}

static void elector_free(struct elector *e)
{
	kube_leader_free(e->le);
	kube_client_free(e->c);
	pthread_mutex_destroy(&e->mu);
}

static int counter(struct elector *e, int *field)
{
	pthread_mutex_lock(&e->mu);
	int v = *field;
	pthread_mutex_unlock(&e->mu);
	return v;
}

static cJSON *get_lease(struct kube_client *c)
{
	cJSON *l = NULL;
	struct kube_error e;
	if (kube_get(c, LEASE, &l, &e) != 0)
		fail_msg("get lease: %d %s", e.http_code, e.message);
	return l;
}

static const char *spec_str(const cJSON *l, const char *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "spec"), f);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static void test_two_electors_handover(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	struct apis_server *s = NULL;
	assert_int_equal(apis_server_start(&o, &s), 0);
	struct kube_client *c = client_for(s);

	/* record every Lease version */
	struct history *h = calloc(1, sizeof *h);
	assert_non_null(h);
	pthread_mutex_init(&h->mu, NULL);
	struct kube_informer_opts io = { .group = "coordination.k8s.io", .version = "v1", .resource = "leases", .ns = "default" };
	struct kube_informer *inf = NULL;
	assert_int_equal(kube_informer_new(c, &io, &inf), 0);
	struct kube_informer_handlers hh = { h_add, h_update, NULL, h };
	kube_informer_add_handlers(inf, &hh);
	assert_int_equal(kube_informer_start(inf), 0);
	assert_true(kube_informer_wait_for_sync(inf, 30000));

	struct elector a, b;
	elector_init(&a, s, "elector-a");
	elector_init(&b, s, "elector-b");
	assert_int_equal(kube_leader_start(a.le), 0);
	assert_int_equal(kube_leader_start(b.le), 0);
	assert_int_equal(kube_leader_start(a.le), -1);

	/* one of them acquires */
	for (int i = 0; i < 300 && !kube_leader_is_leader(a.le) && !kube_leader_is_leader(b.le); i++)
		sleep_ms(50);
	struct elector *lead = kube_leader_is_leader(a.le) ? &a : &b;
	struct elector *other = lead == &a ? &b : &a;
	assert_true(kube_leader_is_leader(lead->le));

	/* over several renew periods: exactly one leads, and the Lease names it */
	for (int i = 0; i < 15; i++) {
		assert_true(kube_leader_is_leader(lead->le));
		assert_false(kube_leader_is_leader(other->le));
		cJSON *l = get_lease(c);
		assert_string_equal(spec_str(l, "holderIdentity"), lead->id);
		cJSON_Delete(l);
		sleep_ms(100);
	}
	assert_int_equal(counter(lead, &lead->started), 1);
	assert_int_equal(counter(other, &other->started), 0);
	char buf[64];
	for (int i = 0; i < 100 && strcmp(kube_leader_holder(other->le, buf, sizeof buf), lead->id); i++)
		sleep_ms(50);
	assert_string_equal(kube_leader_holder(other->le, buf, sizeof buf), lead->id);
	assert_true(counter(other, &other->n_new) >= 1);
	pthread_mutex_lock(&other->mu);
	assert_string_equal(other->new_leaders[other->n_new - 1], lead->id);
	pthread_mutex_unlock(&other->mu);

	/* the leader's annotation appears on the Lease with its next renew */
	assert_int_equal(kube_leader_set_annotation(lead->le, "schedkit.io/leader-info", "v1;pid=1"), 0);
	cJSON *l = NULL;
	for (int i = 0; i < 100; i++) {
		l = get_lease(c);
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "metadata"), "annotations");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(an, "schedkit.io/leader-info");
		if (cJSON_IsString(v) && !strcmp(v->valuestring, "v1;pid=1"))
			break;
		cJSON_Delete(l);
		l = NULL;
		sleep_ms(50);
	}
	assert_non_null(l);
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "spec"), "leaseTransitions");
	assert_true(cJSON_IsNumber(tr));
	int transitions = tr->valueint;
	cJSON_Delete(l);

	/* stop the leader: it releases, and the other takes over */
	kube_leader_stop(lead->le);
	assert_false(kube_leader_is_leader(lead->le));
	assert_int_equal(counter(lead, &lead->stopped), 1);
	for (int i = 0; i < 200 && !kube_leader_is_leader(other->le); i++)
		sleep_ms(50);
	assert_true(kube_leader_is_leader(other->le));
	assert_int_equal(counter(other, &other->started), 1);
	for (int i = 0; i < 100; i++) {   /* the new leader has renewed at least once */
		l = get_lease(c);
		bool renewed = !strcmp(spec_str(l, "holderIdentity"), other->id) &&
			       strcmp(spec_str(l, "renewTime"), spec_str(l, "acquireTime"));
		cJSON_Delete(l);
		if (renewed)
			break;
		sleep_ms(50);
	}
	l = get_lease(c);
	assert_string_equal(spec_str(l, "holderIdentity"), other->id);
	tr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "spec"), "leaseTransitions");
	assert_int_equal(tr->valueint, transitions + 1);
	const cJSON *dur = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "spec"), "leaseDurationSeconds");
	assert_int_equal(dur->valueint, 2);
	cJSON_Delete(l);
	sleep_ms(300);   /* let the informer catch up with the latest versions */
	kube_informer_stop(inf);

	/* the recorded history: the first leader's last version, then a release, then the other's */
	pthread_mutex_lock(&h->mu);
	int last_old = -1, release = -1, first_new = -1;
	for (int i = 0; i < h->n; i++) {
		if (!strcmp(h->v[i].holder, lead->id))
			last_old = i;
		if (first_new < 0 && !strcmp(h->v[i].holder, other->id))
			first_new = i;
		if (release < 0 && !h->v[i].holder[0] && h->v[i].duration == 1)
			release = i;
	}
	int n = h->n;
	pthread_mutex_unlock(&h->mu);
	assert_true(n < MAXV);
	assert_true(last_old >= 0);
	assert_true(release > last_old);
	assert_int_equal(first_new, release + 1);
	struct version *vo = &h->v[last_old], *vr = &h->v[release], *vn = &h->v[first_new];
	assert_string_equal(vo->anno, "v1;pid=1");           /* kept by later renews */
	assert_int_equal(vr->transitions, vo->transitions);   /* a release does not count */
	assert_int_equal(vn->transitions, vo->transitions + 1);
	assert_int_equal(vn->duration, 2);
	/* the takeover did not wait for the old record to expire */
	assert_true(vo->renew > 0 && vn->acquire > 0);
	assert_true(vn->acquire < vo->renew + vo->duration);
	/* while held, every version names a holder, and only A or B ever did */
	for (int i = 0; i < n; i++)
		if (h->v[i].holder[0] && strcmp(h->v[i].holder, "elector-a") && strcmp(h->v[i].holder, "elector-b"))
			fail_msg("version %d: holder %s", i, h->v[i].holder);

	/* stopping a non-leader (after the leader) leaves the Lease alone once it is released */
	kube_leader_stop(other->le);
	l = get_lease(c);
	assert_string_equal(spec_str(l, "holderIdentity"), "");
	cJSON_Delete(l);
	assert_int_equal(counter(other, &other->stopped), 1);

	elector_free(&a);
	elector_free(&b);
	kube_informer_free(inf);
	pthread_mutex_destroy(&h->mu);
	free(h);
	kube_client_free(c);
	apis_server_stop(s);
}

/* A second elector never takes a lease that is being renewed; a held-but-unrenewed lease (the
 * holder died without releasing) is taken over once it expires, and that counts a transition. */
static void test_expiry_takeover(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	struct apis_server *s = NULL;
	assert_int_equal(apis_server_start(&o, &s), 0);
	struct kube_client *c = client_for(s);
	/* a Lease held by a dead holder */
	cJSON *lease = cJSON_Parse("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"sched\"},"
				   "\"spec\":{\"holderIdentity\":\"ghost\",\"leaseDurationSeconds\":2,\"leaseTransitions\":4,"
				   "\"acquireTime\":\"2020-01-01T00:00:00.000000Z\",\"renewTime\":\"2020-01-01T00:00:00.000000Z\"}}");
	struct kube_error e;
	assert_int_equal(kube_create(c, "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease, NULL, &e), 0);
	cJSON_Delete(lease);

	struct elector a;
	elector_init(&a, s, "elector-a");
	/* first try: the record was just observed, so it is not yet expired locally */
	assert_false(kube_leader_try_acquire_or_renew(a.le));
	char buf[64];
	assert_string_equal(kube_leader_holder(a.le, buf, sizeof buf), "ghost");
	assert_int_equal(kube_leader_start(a.le), 0);
	for (int i = 0; i < 200 && !kube_leader_is_leader(a.le); i++)
		sleep_ms(50);
	assert_true(kube_leader_is_leader(a.le));
	cJSON *l = get_lease(c);
	assert_string_equal(spec_str(l, "holderIdentity"), "elector-a");
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "spec"), "leaseTransitions");
	assert_int_equal(tr->valueint, 5);
	cJSON_Delete(l);

	/* someone else overwrites the Lease behind the leader's back: the leader's renew hits a
	 * Conflict, re-reads, sees another live holder and gives up leadership */
	l = get_lease(c);
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(l, "spec");
	cJSON_ReplaceItemInObjectCaseSensitive(spec, "holderIdentity", cJSON_CreateString("intruder"));
	cJSON_ReplaceItemInObjectCaseSensitive(spec, "leaseDurationSeconds", cJSON_CreateNumber(60));
	assert_int_equal(kube_update(c, LEASE, l, NULL, &e), 0);
	cJSON_Delete(l);
	for (int i = 0; i < 200 && kube_leader_is_leader(a.le); i++)
		sleep_ms(50);
	assert_false(kube_leader_is_leader(a.le));
	assert_int_equal(counter(&a, &a.stopped), 1);
	l = get_lease(c);
	assert_string_equal(spec_str(l, "holderIdentity"), "intruder");   /* no release of someone else's lease */
	cJSON_Delete(l);
	elector_free(&a);
	kube_client_free(c);
	apis_server_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_electors_handover),
		cmocka_unit_test(test_expiry_takeover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
