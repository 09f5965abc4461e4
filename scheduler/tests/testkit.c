/* Scriptable test plugins (see testkit.h). */
#include "scheduler/tests/testkit.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/framework/parallel.h"
#include "scheduler/tests/fixtures.h"

struct tk_behavior tk_beh[TK_NPLUGINS];
char tk_log[8192];
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	pthread_mutex_lock(&log_mu);
	size_t l = strlen(tk_log);
	va_list ap;
	va_start(ap, fmt);
	if (l < sizeof(tk_log) - 1)
		vsnprintf(tk_log + l, sizeof(tk_log) - l, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&log_mu);
}

void tk_reset(void)
{
	memset(tk_beh, 0, sizeof(tk_beh));
	for (int i = 0; i < TK_NPLUGINS; i++) {
		atomic_init(&tk_beh[i].filter_calls, 0);
		atomic_init(&tk_beh[i].score_calls, 0);
		atomic_init(&tk_beh[i].batch_calls, 0);
		atomic_init(&tk_beh[i].batch_nodes, 0);
		atomic_init(&tk_beh[i].filter_batch_calls, 0);
	}
	tk_log[0] = '\0';
}

static int idx(const struct sk_plugin *self) { return self->desc->name[4] - 'A'; }
static struct tk_behavior *beh(const struct sk_plugin *self) { return &tk_beh[idx(self)]; }
static char letter(const struct sk_plugin *self) { return self->desc->name[4]; }

static struct sk_status mk(enum sk_code c, const char *reason) { return sk_status(c, c == SK_SUCCESS ? NULL : reason); }

static bool listed(const char *const *l, int max, const char *name)
{
	for (int i = 0; i < max && l[i]; i++)
		if (strcmp(l[i], name) == 0)
			return true;
	return false;
}

static int tk_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)args;
	(void)err;
	beh(self)->init_calls++;
	beh(self)->instance = self;
	return 0;
}
static void tk_fini(struct sk_plugin *self) { beh(self)->fini_calls++; }

static struct sk_status tk_pre_enqueue(struct sk_plugin *self, const struct sk_pod *pod)
{
	(void)pod;
	return mk(beh(self)->pre_enqueue, "gated");
}

static bool tk_less(struct sk_plugin *self, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)self;
	if (a->pod->priority != b->pod->priority)
		return a->pod->priority > b->pod->priority;
	return a->timestamp_ns < b->timestamp_ns;
}

static struct sk_status tk_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	(void)pod;
	struct tk_behavior *b = beh(self);
	logf_("%c.prefilter ", letter(self));
	int *data = malloc(sizeof(int));
	*data = 42;
	static const struct sk_state_ops ops = { .free = free };
	sk_cycle_state_put(cs, self->slot, data, &ops);
	if (b->narrow && b->pre_filter == SK_SUCCESS) {
		result->all = false;
		for (int i = 0; i < 8 && b->narrow_nodes[i]; i++)
			sk_prefilter_result_add(result, b->narrow_nodes[i]);
	}
	return mk(b->pre_filter, b->pre_filter_reason ? b->pre_filter_reason : "prefilter says no");
}

static struct sk_status tk_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	(void)pod;
	struct tk_behavior *b = beh(self);
	atomic_fetch_add(&b->filter_calls, 1);
	int *data = sk_cycle_state_get(cs, self->slot);
	if (data && *data != 42)
		return sk_status(SK_ERROR, "cycle state lost");
	if (b->max_pods > 0 && ni->npods >= b->max_pods)
		return sk_status(SK_UNSCHEDULABLE, "too many pods");
	const char *name = ni->node ? ni->node->name : "";
	if (b->filter_all || listed(b->filter_nodes, 16, name))
		return mk(b->filter, b->filter_reason ? b->filter_reason : "filter says no");
	return sk_ok();
}

static struct sk_status tk_post_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *result)
{
	(void)cs;
	(void)pod;
	(void)diag;
	struct tk_behavior *b = beh(self);
	logf_("%c.postfilter ", letter(self));
	if (b->nominate)
		result->nominated_node = b->nominate;
	return mk(b->post_filter, b->post_filter_reason ? b->post_filter_reason : "postfilter did nothing");
}

static struct sk_status tk_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	(void)cs;
	(void)pod;
	(void)nodes;
	(void)nnodes;
	logf_("%c.prescore ", letter(self));
	return mk(beh(self)->pre_score, "prescore failed");
}

static struct sk_status tk_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	(void)cs;
	(void)pod;
	struct tk_behavior *b = beh(self);
	atomic_fetch_add(&b->score_calls, 1);
	if (b->score != SK_SUCCESS)
		return sk_status(b->score, "score failed");
	const char *name = ni->node ? ni->node->name : "";
	*score = b->score_default;
	for (int i = 0; i < 8 && b->score_nodes[i]; i++)
		if (strcmp(b->score_nodes[i], name) == 0)
			*score = b->score_of[i];
	return sk_ok();
}

static struct sk_status tk_normalize(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     struct sk_node_score *scores, int n)
{
	(void)cs;
	(void)pod;
	struct tk_behavior *b = beh(self);
	if (b->normalize) {
		int64_t max = 0;
		for (int i = 0; i < n; i++)
			if (scores[i].score > max)
				max = scores[i].score;
		for (int i = 0; i < n; i++)
			scores[i].score = max ? scores[i].score * 100 / max : 0;
	}
	for (int i = 0; i < n; i++)
		scores[i].score += b->normalize_add;
	return sk_ok();
}

static struct sk_status tk_reserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node)
{
	(void)cs;
	(void)pod;
	logf_("%c.reserve(%s) ", letter(self), node);
	return mk(beh(self)->reserve, "reserve refused");
}

static void tk_unreserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node)
{
	(void)cs;
	(void)pod;
	(void)node;
	logf_("%c.unreserve ", letter(self));
	beh(self)->unreserve_calls++;
}

static struct sk_status tk_permit(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const char *node, int64_t *timeout_ms)
{
	(void)cs;
	(void)pod;
	(void)node;
	logf_("%c.permit ", letter(self));
	*timeout_ms = beh(self)->permit_timeout_ms;
	return mk(beh(self)->permit, "permit refused");
}

static struct sk_status tk_pre_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node)
{
	(void)cs;
	(void)pod;
	(void)node;
	logf_("%c.prebind ", letter(self));
	return mk(beh(self)->pre_bind, "prebind refused");
}

static struct sk_status tk_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				const char *node)
{
	(void)cs;
	(void)pod;
	logf_("%c.bind(%s) ", letter(self), node);
	return mk(beh(self)->bind, "bind failed");
}

static void tk_post_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node)
{
	(void)cs;
	(void)pod;
	(void)node;
	logf_("%c.postbind ", letter(self));
	beh(self)->post_bind_calls++;
}

static enum sk_hint tk_hint(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj, const void *new_obj)
{
	(void)pod;
	(void)old_obj;
	(void)new_obj;
	beh(self)->hint_calls++;
	return beh(self)->hint_result;
}

static int tk_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	struct tk_behavior *b = beh(self);
	int n = 0;
	for (int i = 0; i < b->nevents && n < max; i++) {
		out[n].event = b->events[i];
		out[n].hint = tk_hint;
		n++;
	}
	return n;
}

/* ABI 1.1 batch scoring: each node as tk_score scores it. */
static struct sk_status tk_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	struct tk_behavior *b = beh(self);
	atomic_fetch_add(&b->batch_calls, 1);
	atomic_fetch_add(&b->batch_nodes, n);
	for (int i = 0; i < n; i++) {
		struct sk_status s = tk_score(self, cs, pod, nodes[i], &scores[i]);
		if (s.code != SK_SUCCESS) {
			*failed = i;
			return s;
		}
	}
	return sk_ok();
}

/* ABI 1.3 batch filtering: each node still passing as tk_filter filters it. */
static void tk_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	atomic_fetch_add(&beh(self)->filter_batch_calls, 1);
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		struct sk_status s = tk_filter(self, cs, pod, nodes[i]);
		if (s.code != SK_SUCCESS) {
			ok[i] = 0;
			st[i] = s;
		}
	}
}

#define TK_DESC(NAME)                                                                                         \
	{                                                                                                     \
		SK_PLUGIN_HEADER, .name = NAME, .init = tk_init, .fini = tk_fini,         \
		.pre_enqueue = tk_pre_enqueue, .less = tk_less, .pre_filter = tk_pre_filter, .filter = tk_filter, \
		.post_filter = tk_post_filter, .pre_score = tk_pre_score, .score = tk_score,                  \
		.normalize_score = tk_normalize, .reserve = tk_reserve, .unreserve = tk_unreserve,            \
		.permit = tk_permit, .pre_bind = tk_pre_bind, .bind = tk_bind, .post_bind = tk_post_bind,     \
		.events_to_register = tk_events,                                                              \
	}

#define TK_DESC_BATCH(NAME)                                                                                   \
	{                                                                                                     \
		SK_PLUGIN_HEADER, .name = NAME, .init = tk_init, .fini = tk_fini, .pre_score = tk_pre_score,    \
		.score = tk_score, .normalize_score = tk_normalize, .score_batch = tk_score_batch,             \
		.filter = tk_filter, .filter_batch = tk_filter_batch,                                          \
	}

const struct sk_plugin_desc tk_desc[TK_NPLUGINS] = { TK_DESC("TestA"), TK_DESC("TestB"), TK_DESC("TestC"),
						     TK_DESC("TestD"), TK_DESC_BATCH("TestE") };

void tk_profile_init(struct tk_profile *tp, const char *scheduler_name)
{
	memset(tp, 0, sizeof(*tp));
	tp->p.scheduler_name = (char *)scheduler_name;
	tp->p.percentage_of_nodes_to_score = -1;
	for (int ep = 0; ep < SK_EP_COUNT; ep++)
		tp->p.points[ep].items = tp->refs[ep];
}

void tk_profile_add(struct tk_profile *tp, enum sk_ext_point ep, int plugin, int32_t weight)
{
	struct sk_plugin_list *l = &tp->p.points[ep];
	l->items[l->n].desc = &tk_desc[plugin];
	l->items[l->n].weight = weight;
	l->n++;
}

void tk_profile_minimal(struct tk_profile *tp, const char *scheduler_name)
{
	tk_profile_init(tp, scheduler_name);
	tk_profile_add(tp, SK_EP_QUEUE_SORT, TK_D, 0);
	tk_profile_add(tp, SK_EP_BIND, TK_D, 0);
}

struct sk_pod *tk_pod_prio(const char *name, int prio)
{
	char text[256];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\"}]}}",
		 name, prio);
	return fx_pod(text);
}

struct sk_node_info *tk_node_named(const char *name)
{
	char text[128];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"}}", name);
	return fx_node_info(fx_node(text), NULL);
}

const char *tk_status_msg(const struct sk_status *s)
{
	static char buf[1024];
	char *m = sk_status_message(s);
	snprintf(buf, sizeof(buf), "%s", m ? m : "");
	free(m);
	return buf;
}

struct sk_pool *tk_pool;

int tk_pool_setup(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "4", 1);
	tk_pool = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_THREADS");
	return tk_pool ? 0 : -1;
}

int tk_pool_teardown(void **state)
{
	(void)state;
	sk_pool_free(tk_pool);
	tk_pool = NULL;
	return 0;
}

double tk_filter_evals[TK_NPLUGINS];

void tk_env_evaluated(void *ctx, const char *profile, const char *point, const char *plugin, double n)
{
	(void)ctx;
	(void)profile;
	if (strcmp(point, "Filter") != 0)
		return;
	for (int i = 0; i < TK_NPLUGINS; i++)
		if (!strcmp(plugin, tk_desc[i].name))
			tk_filter_evals[i] += n;
}
