/* Tests for kube/leader.c against a stateful fake Lease endpoint with optimistic concurrency and
 * an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/leader.h"
#include "kube/tests/fake_apiserver.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched"
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

/* ---------- fake lease store ---------- */

struct lease_srv {
	pthread_mutex_t mu;
	cJSON *lease;     /* NULL = absent */
	int rv;
	int conflict_next_put;
	int puts, gets, posts;
	struct kube_leader *stop_on_post;   /* stopped (from another thread) while its create is in flight */
	pthread_t stopper;
	bool stopper_started;
};

static void *stopper_main(void *arg)
{
	kube_leader_stop(arg);
	return NULL;
}

static char *status_body(int code, const char *reason, const char *msg)
{
	char *s;
	if (asprintf(&s, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"%s\","
		     "\"reason\":\"%s\",\"code\":%d}", msg, reason, code) < 0)
		return NULL;
	return s;
}

static bool reply_json(struct fake_conn *c, int code, const cJSON *obj)
{
	char *s = cJSON_PrintUnformatted(obj);
	bool ok = fake_conn_reply(c, code, NULL, s) == 0;
	free(s);
	return ok;
}

static bool reply_status(struct fake_conn *c, int code, const char *reason, const char *msg)
{
	char *s = status_body(code, reason, msg);
	bool ok = fake_conn_reply(c, code, NULL, s) == 0;
	free(s);
	return ok;
}

static void set_rv(cJSON *obj, int rv)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", rv);
	cJSON *meta = cJSON_GetObjectItem(obj, "metadata");
	cJSON_DeleteItemFromObject(meta, "resourceVersion");
	cJSON_AddStringToObject(meta, "resourceVersion", buf);
}

static bool lease_handler(void *ctx, const struct fake_request *req, struct fake_conn *c)
{
	struct lease_srv *s = ctx;
	pthread_mutex_lock(&s->mu);
	bool ok;
	if (strcmp(req->method, "GET") == 0 && strcmp(req->path, LEASE_PATH) == 0) {
		s->gets++;
		ok = s->lease ? reply_json(c, 200, s->lease) : reply_status(c, 404, "NotFound", "leases.coordination.k8s.io \\\"sched\\\" not found");
	} else if (strcmp(req->method, "POST") == 0 && strcmp(req->path, LEASES_PATH) == 0) {
		s->posts++;
		if (s->stop_on_post && !s->stopper_started) {
			/* the elector is waiting for this answer: stop it now, answer a little later */
			s->stopper_started = pthread_create(&s->stopper, NULL, stopper_main, s->stop_on_post) == 0;
			usleep(200 * 1000);
		}
		if (s->lease) {
			ok = reply_status(c, 409, "AlreadyExists", "already exists");
		} else {
			s->lease = cJSON_Parse(req->body);
			set_rv(s->lease, ++s->rv);
			ok = reply_json(c, 201, s->lease);
		}
	} else if (strcmp(req->method, "PUT") == 0 && strcmp(req->path, LEASE_PATH) == 0) {
		s->puts++;
		cJSON *body = cJSON_Parse(req->body);
		const cJSON *rv = cJSON_GetObjectItem(cJSON_GetObjectItem(body, "metadata"), "resourceVersion");
		char cur[16];
		snprintf(cur, sizeof(cur), "%d", s->rv);
		if (!s->lease) {
			ok = reply_status(c, 404, "NotFound", "not found");
			cJSON_Delete(body);
		} else if (s->conflict_next_put > 0 || !cJSON_IsString(rv) || strcmp(rv->valuestring, cur) != 0) {
			if (s->conflict_next_put > 0)
				s->conflict_next_put--;
			ok = reply_status(c, 409, "Conflict", "Operation cannot be fulfilled on leases.coordination.k8s.io \\\"sched\\\": the object has been modified");
			cJSON_Delete(body);
		} else {
			cJSON_Delete(s->lease);
			s->lease = body;
			set_rv(s->lease, ++s->rv);
			ok = reply_json(c, 200, s->lease);
		}
	} else {
		ok = reply_status(c, 405, "MethodNotAllowed", "no");
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* Another process writes the lease (as if it held it). */
static void srv_set_holder(struct lease_srv *s, const char *holder, int duration, int transitions, const char *renew)
{
	pthread_mutex_lock(&s->mu);
	char *txt;
	assert_true(asprintf(&txt, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"sched\","
			     "\"namespace\":\"kube-system\"},\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
			     "\"acquireTime\":\"2025-01-31T10:00:00.000000Z\",\"renewTime\":\"%s\",\"leaseTransitions\":%d}}",
			     holder, duration, renew, transitions) > 0);
	cJSON_Delete(s->lease);
	s->lease = cJSON_Parse(txt);
	free(txt);
	set_rv(s->lease, ++s->rv);
	pthread_mutex_unlock(&s->mu);
}

static cJSON *srv_spec(struct lease_srv *s, const char *field)
{
	pthread_mutex_lock(&s->mu);
	cJSON *v = cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(s->lease, "spec"), field), 1);
	pthread_mutex_unlock(&s->mu);
	return v;
}

static char *srv_str(struct lease_srv *s, const char *field)
{
	cJSON *v = srv_spec(s, field);
	char *r = strdup(cJSON_IsString(v) ? v->valuestring : "<none>");
	cJSON_Delete(v);
	return r;
}

static int srv_int(struct lease_srv *s, const char *field)
{
	cJSON *v = srv_spec(s, field);
	int r = cJSON_IsNumber(v) ? v->valueint : -1;
	cJSON_Delete(v);
	return r;
}

/* ---------- fake clock and callbacks ---------- */

struct fclock { pthread_mutex_t mu; double t; };
static double fc_now(void *ctx)
{
	struct fclock *f = ctx;
	pthread_mutex_lock(&f->mu);
	double t = f->t;
	pthread_mutex_unlock(&f->mu);
	return t;
}
static void fc_sleep(void *ctx, double s)
{
	struct fclock *f = ctx;
	pthread_mutex_lock(&f->mu);
	f->t += s;
	pthread_mutex_unlock(&f->mu);
	usleep(500);   /* keep a looping elector from hogging the CPU */
}
static void fc_advance(struct fclock *f, double s) { fc_sleep(f, s); }

struct calls {
	pthread_mutex_t mu;
	int started, stopped, slowpaths;
	char leaders[16][64];
	int nleaders;
};
static void cb_started(void *ctx)
{
	struct calls *c = ctx;
	pthread_mutex_lock(&c->mu);
	c->started++;
	pthread_mutex_unlock(&c->mu);
}
static void cb_stopped(void *ctx)
{
	struct calls *c = ctx;
	pthread_mutex_lock(&c->mu);
	c->stopped++;
	pthread_mutex_unlock(&c->mu);
}
static void cb_slowpath(void *ctx)
{
	struct calls *c = ctx;
	pthread_mutex_lock(&c->mu);
	c->slowpaths++;
	pthread_mutex_unlock(&c->mu);
}
static void cb_new_leader(void *ctx, const char *id)
{
	struct calls *c = ctx;
	pthread_mutex_lock(&c->mu);
	if (c->nleaders < 16)
		snprintf(c->leaders[c->nleaders], 64, "%s", id);
	c->nleaders++;
	pthread_mutex_unlock(&c->mu);
}
static int calls_get(struct calls *c, int *field)
{
	pthread_mutex_lock(&c->mu);
	int v = *field;
	pthread_mutex_unlock(&c->mu);
	return v;
}

struct env {
	struct fake_apiserver *fs;
	struct kube_client *c;
	struct lease_srv srv;
	struct fclock clock;
	struct kube_leader_clock lclock;
	struct calls calls;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	pthread_mutex_init(&e->srv.mu, NULL);
	pthread_mutex_init(&e->clock.mu, NULL);
	pthread_mutex_init(&e->calls.mu, NULL);
	e->clock.t = 1738317600.0;   /* 2025-01-31T10:00:00Z */
	e->lclock = (struct kube_leader_clock){fc_now, fc_sleep, &e->clock};
	e->fs = fake_apiserver_start(false);
	fake_apiserver_handle(e->fs, NULL, LEASES_PATH, 0, lease_handler, &e->srv);
	struct kube_config cfg = {0};
	cfg.server = (char *)fake_apiserver_url(e->fs);
	assert_int_equal(kube_client_new(&cfg, &e->c, NULL), 0);
	kube_client_set_max_retries(e->c, 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_client_free(e->c);
	fake_apiserver_stop(e->fs);
	cJSON_Delete(e->srv.lease);
	pthread_mutex_destroy(&e->srv.mu);
	pthread_mutex_destroy(&e->clock.mu);
	pthread_mutex_destroy(&e->calls.mu);
	free(e);
	return 0;
}

static struct kube_leader *new_leader(struct env *e, const char *id, bool release)
{
	struct kube_leader_config cfg = {
		.ns = "kube-system", .name = "sched", .identity = id, .release_on_cancel = release,
		.on_started_leading = cb_started, .on_stopped_leading = cb_stopped, .on_new_leader = cb_new_leader,
		.ctx = &e->calls, .clock = &e->lclock, .on_slowpath = cb_slowpath,
	};
	struct kube_leader *le = NULL;
	char *err = NULL;
	assert_int_equal(kube_leader_new(e->c, &cfg, &le, &err), 0);
	assert_null(err);
	return le;
}

static void assert_micro_time(const char *s)
{
	regex_t re;
	assert_int_equal(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, s, 0, NULL, 0), 0);
	regfree(&re);
}

/* ---------- tests ---------- */

static void test_config_validation(void **state)
{
	struct env *e = *state;
	static const struct { double ld, rd, rp; const char *id; const char *want; } cases[] = {
		{15, 15, 2, "me", "leaseDuration must be greater than renewDeadline"},
		{15, 10, 9, "me", "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{0, 0, 9, "me", "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{0, 0, 0, "", "identity: required"},
		{0, 0, 0, NULL, "identity: required"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_leader_config cfg = {.ns = "kube-system", .name = "sched", .identity = cases[i].id,
						 .lease_duration_s = cases[i].ld, .renew_deadline_s = cases[i].rd,
						 .retry_period_s = cases[i].rp};
		struct kube_leader *le = NULL;
		char *err = NULL;
		assert_int_equal(kube_leader_new(e->c, &cfg, &le, &err), -1);
		assert_null(le);
		assert_non_null(strstr(err, cases[i].want));
		free(err);
	}
	kube_leader_free(NULL);
}

static void test_acquire_create_and_renew(void **state)
{
	struct env *e = *state;
	struct kube_leader *le = new_leader(e, "host-a_1", false);
	assert_true(kube_leader_try_acquire_or_renew(le));
	assert_int_equal(e->srv.posts, 1);
	char *holder = srv_str(&e->srv, "holderIdentity"), *acq = srv_str(&e->srv, "acquireTime"),
	     *renew = srv_str(&e->srv, "renewTime");
	assert_string_equal(holder, "host-a_1");
	assert_string_equal(acq, "2025-01-31T10:00:00.000000Z");
	assert_string_equal(renew, acq);
	assert_micro_time(renew);
	assert_int_equal(srv_int(&e->srv, "leaseDurationSeconds"), 15);
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 0);
	free(renew);
	assert_int_equal(e->calls.nleaders, 1);
	assert_string_equal(e->calls.leaders[0], "host-a_1");

	/* renew 2.5 s later: fast path (PUT without GET), acquireTime kept, renewTime moves */
	fc_advance(&e->clock, 2.5);
	int gets = e->srv.gets;
	assert_true(kube_leader_try_acquire_or_renew(le));
	assert_int_equal(e->srv.gets, gets);
	assert_int_equal(e->srv.puts, 1);
	char *acq2 = srv_str(&e->srv, "acquireTime");
	renew = srv_str(&e->srv, "renewTime");
	assert_string_equal(acq2, acq);
	assert_string_equal(renew, "2025-01-31T10:00:02.500000Z");
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 0);
	free(acq2);
	free(renew);
	assert_int_equal(e->calls.slowpaths, 0); /* acquiring and the fast path are not the slow path */

	/* a conflicting fast-path PUT falls back to GET + PUT with the fresh resourceVersion */
	e->srv.conflict_next_put = 1;
	fc_advance(&e->clock, 2);
	assert_true(kube_leader_try_acquire_or_renew(le));
	assert_int_equal(e->srv.gets, gets + 1);
	assert_int_equal(e->calls.nleaders, 1);   /* holder never changed */
	assert_int_equal(e->calls.slowpaths, 1);  /* leader_election_slowpath_total */
	free(holder);
	free(acq);
	kube_leader_free(le);
}

static void test_held_by_other_until_expired(void **state)
{
	struct env *e = *state;
	srv_set_holder(&e->srv, "host-b_2", 15, 3, "2025-01-31T09:59:59.000000Z");
	struct kube_leader *le = new_leader(e, "host-a_1", false);
	char buf[64];
	assert_false(kube_leader_try_acquire_or_renew(le));
	assert_string_equal(kube_leader_holder(le, buf, sizeof(buf)), "host-b_2");
	assert_int_equal(e->calls.nleaders, 1);
	assert_string_equal(e->calls.leaders[0], "host-b_2");
	/* expiry counts from when *we* first saw this record, not from its renewTime */
	fc_advance(&e->clock, 14);
	assert_false(kube_leader_try_acquire_or_renew(le));
	assert_int_equal(e->srv.puts, 0);
	fc_advance(&e->clock, 1.5);
	assert_true(kube_leader_try_acquire_or_renew(le));
	char *holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "host-a_1");
	free(holder);
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 4);
	assert_int_equal(e->calls.nleaders, 2);
	assert_string_equal(e->calls.leaders[1], "host-a_1");
	kube_leader_free(le);
}

static void test_renewing_holder_never_expires(void **state)
{
	struct env *e = *state;
	struct kube_leader *le = new_leader(e, "host-a_1", false);
	for (int i = 0; i < 20; i++) {
		char renew[40];
		snprintf(renew, sizeof(renew), "2025-01-31T10:00:%02d.000000Z", i * 2);
		srv_set_holder(&e->srv, "host-b_2", 15, 0, renew);   /* the holder renews every 2 s */
		assert_false(kube_leader_try_acquire_or_renew(le));
		fc_advance(&e->clock, 2);
	}
	assert_int_equal(e->srv.puts, 0);
	/* a conflict on the takeover PUT fails the attempt */
	fc_advance(&e->clock, 16);
	e->srv.conflict_next_put = 1;
	assert_false(kube_leader_try_acquire_or_renew(le));
	assert_int_equal(e->srv.puts, 1);
	kube_leader_free(le);
}

static void test_annotations_and_release(void **state)
{
	struct env *e = *state;
	struct kube_leader *a = new_leader(e, "host-a_1", true);
	assert_int_equal(kube_leader_set_annotation(a, "schedkit.io/config-hash", "abc123"), 0);
	assert_true(kube_leader_try_acquire_or_renew(a));
	pthread_mutex_lock(&e->srv.mu);
	const cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(e->srv.lease, "metadata"), "annotations");
	assert_string_equal(cJSON_GetObjectItem(ann, "schedkit.io/config-hash")->valuestring, "abc123");
	pthread_mutex_unlock(&e->srv.mu);
	assert_int_equal(kube_leader_set_annotation(a, "schedkit.io/config-hash", "def456"), 0);
	assert_int_equal(kube_leader_set_annotation(a, "other", "x"), 0);
	fc_advance(&e->clock, 2);
	assert_true(kube_leader_try_acquire_or_renew(a));
	assert_int_equal(kube_leader_set_annotation(a, "other", NULL), 0);
	fc_advance(&e->clock, 2);
	assert_true(kube_leader_try_acquire_or_renew(a));
	pthread_mutex_lock(&e->srv.mu);
	ann = cJSON_GetObjectItem(cJSON_GetObjectItem(e->srv.lease, "metadata"), "annotations");
	assert_string_equal(cJSON_GetObjectItem(ann, "schedkit.io/config-hash")->valuestring, "def456");
	assert_null(cJSON_GetObjectItem(ann, "other"));
	pthread_mutex_unlock(&e->srv.mu);

	/* release: empty holder, duration 1, transitions unchanged */
	assert_true(kube_leader_release(a));
	char *holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "");
	free(holder);
	assert_int_equal(srv_int(&e->srv, "leaseDurationSeconds"), 1);
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 0);
	/* a released lease is taken at once by another candidate */
	struct kube_leader *b = new_leader(e, "host-b_2", false);
	assert_true(kube_leader_try_acquire_or_renew(b));
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 1);
	/* releasing when not the holder is a no-op success */
	assert_true(kube_leader_try_acquire_or_renew(a) == false);
	assert_true(kube_leader_release(a));
	holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "host-b_2");
	free(holder);
	kube_leader_free(a);
	kube_leader_free(b);
}

static void wait_for(struct calls *c, int *field, int want)
{
	for (int i = 0; i < 5000 && calls_get(c, field) < want; i++)
		usleep(1000);
	assert_int_equal(calls_get(c, field), want);
}

static void test_run_loop_stop_releases(void **state)
{
	struct env *e = *state;
	srv_set_holder(&e->srv, "host-b_2", 15, 2, "2025-01-31T09:59:59.000000Z");
	struct kube_leader *le = new_leader(e, "host-a_1", true);
	assert_int_equal(kube_leader_start(le), 0);
	assert_int_equal(kube_leader_start(le), -1);
	/* the elector retries every retryPeriod (virtual) until the old holder's lease expires */
	wait_for(&e->calls, &e->calls.started, 1);
	assert_true(kube_leader_is_leader(le));
	assert_true(fc_now(&e->clock) - 1738317600.0 >= 15);
	kube_leader_stop(le);
	assert_false(kube_leader_is_leader(le));
	assert_int_equal(e->calls.stopped, 1);
	char *holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "");
	free(holder);
	assert_int_equal(srv_int(&e->srv, "leaseTransitions"), 3);
	kube_leader_free(le);
}

/* Stopped while the acquiring request is in flight, the elector that got the lease anyway still
 * leads (callbacks) and releases it, as client-go's Run does, instead of leaving it held. */
static void test_stop_during_acquire_releases(void **state)
{
	struct env *e = *state;
	struct kube_leader *le = new_leader(e, "host-a_1", true);
	e->srv.stop_on_post = le;
	assert_int_equal(kube_leader_start(le), 0);
	wait_for(&e->calls, &e->calls.stopped, 1);
	assert_true(e->srv.stopper_started);
	pthread_join(e->srv.stopper, NULL);
	assert_int_equal(calls_get(&e->calls, &e->calls.started), 1);
	assert_false(kube_leader_is_leader(le));
	char *holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "");
	free(holder);
	assert_int_equal(srv_int(&e->srv, "leaseDurationSeconds"), 1);
	kube_leader_free(le);
}

static void *intruder(void *arg)
{
	struct env *e = arg;
	srv_set_holder(&e->srv, "host-c_3", 15, 9, "2025-01-31T11:00:00.000000Z");
	return NULL;
}

static void test_run_loop_loses_lease(void **state)
{
	struct env *e = *state;
	struct kube_leader *le = new_leader(e, "host-a_1", true);
	assert_int_equal(kube_leader_start(le), 0);
	wait_for(&e->calls, &e->calls.started, 1);
	/* someone else takes the lease over: renewals fail until renewDeadline passes */
	pthread_t th;
	pthread_create(&th, NULL, intruder, e);
	pthread_join(th, NULL);
	wait_for(&e->calls, &e->calls.stopped, 1);
	assert_false(kube_leader_is_leader(le));
	kube_leader_stop(le);
	/* lost leases are not "released" over the new holder */
	char *holder = srv_str(&e->srv, "holderIdentity");
	assert_string_equal(holder, "host-c_3");
	free(holder);
	pthread_mutex_lock(&e->calls.mu);
	assert_string_equal(e->calls.leaders[e->calls.nleaders - 1], "host-c_3");
	pthread_mutex_unlock(&e->calls.mu);
	kube_leader_free(le);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acquire_create_and_renew, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_by_other_until_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renewing_holder_never_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_annotations_and_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_loop_stop_releases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_loop_loses_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_acquire_releases, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
