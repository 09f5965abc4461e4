/* Result annotations (docs/explain.md, "Result annotations"): a decision record as pod
 * annotations for tools that read objects rather than endpoints, and the worker that writes them
 * (one merge patch per attempt, off the scheduling and binding threads). */
#include "scheduler/decisions/annotate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/object.h"

/* ---------- the annotations ---------- */

static cJSON *time_json(int64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000LL);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char buf[64];
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return cJSON_CreateString(buf);
}

/* Appends `"key":value` of one node to *buf unless the result would pass max bytes (the closing
 * brace included). Returns false when it did not fit. */
static bool append_entry(char **buf, size_t *len, size_t max, const char *node, cJSON *value)
{
	char *v = cJSON_PrintUnformatted(value);
	cJSON *k = cJSON_CreateString(node);
	char *ks = k ? cJSON_PrintUnformatted(k) : NULL;
	cJSON_Delete(k);
	bool ok = v && ks;
	size_t need = ok ? strlen(ks) + 1 + strlen(v) + 1 : 0;
	if (ok && *len + need + 1 > max)
		ok = false;
	if (ok) {
		char *x = realloc(*buf, *len + need + 2);
		if (!x) {
			ok = false;
		} else {
			*buf = x;
			*len += (size_t)sprintf(*buf + *len, "%s%s:%s", *len > 1 ? "," : "", ks, v);
		}
	}
	free(v);
	free(ks);
	return ok;
}

static char *open_object(size_t *len)
{
	char *b = malloc(2);
	if (b) {
		b[0] = '{';
		b[1] = '\0';
	}
	*len = 1;
	return b;
}

static char *close_object(char *b, size_t len)
{
	char *x = b ? realloc(b, len + 2) : NULL;
	if (!x) {
		free(b);
		return NULL;
	}
	x[len] = '}';
	x[len + 1] = '\0';
	return x;
}

/* {"node":{"Plugin":"reasons"}} in scan order, within max bytes. */
static char *filter_value(const struct sk_decision *r, size_t max, bool *cut)
{
	size_t len;
	char *b = open_object(&len);
	for (int i = 0; b && i < r->nfilter && !*cut; i++) {
		const struct sk_dec_filter *f = &r->filter[i];
		char msg[2048];
		size_t off = 0;
		msg[0] = '\0';
		const char *p = f->reasons;
		for (int k = 0; p && k < f->nreasons && off < sizeof msg; k++, p += strlen(p) + 1)
			off += (size_t)snprintf(msg + off, sizeof msg - off, "%s%s", k ? ", " : "", p);
		cJSON *v = cJSON_CreateObject();
		if (v && cJSON_AddStringToObject(v, f->plugin, msg))
			*cut = !append_entry(&b, &len, max, f->node, v);
		cJSON_Delete(v);
	}
	return close_object(b, len);
}

static int by_total_desc(const void *x, const void *y, void *ctx)
{
	const struct sk_decision *r = ctx;
	int a = *(const int *)x, b = *(const int *)y;
	bool ca = r->node && !strcmp(r->nodes[a], r->node), cb = r->node && !strcmp(r->nodes[b], r->node);
	if (ca != cb)
		return ca ? -1 : 1; /* the chosen node first */
	if (r->total[a] != r->total[b])
		return r->total[a] > r->total[b] ? -1 : 1;
	return a - b;
}

/* {"node":{"Plugin":normalized,...,"total":n}}: the chosen node, then by total, within max. */
static char *score_value(const struct sk_decision *r, size_t max, bool *cut)
{
	size_t len;
	char *b = open_object(&len);
	int *order = malloc((size_t)(r->nnodes ? r->nnodes : 1) * sizeof *order);
	if (!order) {
		free(b);
		return NULL;
	}
	for (int i = 0; i < r->nnodes; i++)
		order[i] = i;
	qsort_r(order, (size_t)r->nnodes, sizeof *order, by_total_desc, (void *)r);
	for (int k = 0; b && k < r->nnodes && !*cut; k++) {
		int i = order[k];
		cJSON *v = cJSON_CreateObject();
		for (int p = 0; v && p < r->nplugins; p++)
			cJSON_AddItemToObject(v, r->plugin[p], kube_json_create_int64(sk_decision_norm(r, p, i)));
		if (v && cJSON_AddItemToObject(v, "total", kube_json_create_int64(r->total[i])))
			*cut = !append_entry(&b, &len, max, r->nodes[i], v);
		cJSON_Delete(v);
	}
	free(order);
	return close_object(b, len);
}

static bool put(cJSON *o, const char *key, cJSON *v)
{
	if (!v)
		return false;
	cJSON_AddItemToObject(o, key, v);
	return true;
}

static cJSON *str_or_null(const char *s) { return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

cJSON *sk_decision_annotations(const struct sk_decision *r)
{
	cJSON *o = cJSON_CreateObject();
	bool fcut = false, scut = false;
	char *filter = filter_value(r, SK_ANNOTATION_VALUE_MAX, &fcut);
	char *score = score_value(r, SK_ANNOTATION_VALUE_MAX, &scut);
	char msg[SK_ANNOTATION_MESSAGE_MAX + 1];
	snprintf(msg, sizeof msg, "%s", r->message ? r->message : "");
	if (r->message && strlen(r->message) > SK_ANNOTATION_MESSAGE_MAX)
		memcpy(msg + SK_ANNOTATION_MESSAGE_MAX - 4, " ...", 5);
	const char *cut = fcut && scut ? "filter,score" : fcut ? "filter" : scut ? "score" : NULL;
	bool ok = o && filter && score && put(o, SK_ANN_RESULT, cJSON_CreateString(sk_result_string(r->result))) &&
		  put(o, SK_ANN_NODE, str_or_null(r->node)) && put(o, SK_ANN_TIME, time_json(r->time_ns)) &&
		  put(o, SK_ANN_MESSAGE, str_or_null(msg)) && put(o, SK_ANN_FILTER, cJSON_CreateString(filter)) &&
		  put(o, SK_ANN_SCORE, cJSON_CreateString(score)) && put(o, SK_ANN_TRUNCATED, str_or_null(cut));
	free(filter);
	free(score);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- the worker ---------- */

struct job {
	struct job *next;
	struct sk_decision *r;
};

struct sk_annotator {
	struct kube_client *client;
	pthread_mutex_t mu; /* guards the queue, n, stop */
	pthread_cond_t cv;
	struct job *head, *tail;
	int n;
	bool stop;
	pthread_t thread;
	uint64_t written, dropped, failed; /* mu */
};

static void write_one(struct sk_annotator *a, const struct sk_decision *r)
{
	cJSON *ann = sk_decision_annotations(r);
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
	char *path = kube_path("", "v1", "pods", r->ns, r->name, NULL);
	struct kube_error e = { 0 };
	bool ok = ann && meta && path;
	if (ok) {
		cJSON_AddItemToObject(meta, "annotations", ann);
		ann = NULL;
		ok = kube_patch(a->client, path, KUBE_PATCH_MERGE, patch, NULL, &e) == 0;
		/* a pod deleted since is no failure */
		if (!ok && e.http_code != 404)
			klog_info(2, "Writing the decision annotations failed", " pod=%s/%s err=\"%s\"", r->ns, r->name,
				  e.message);
	}
	pthread_mutex_lock(&a->mu);
	if (ok)
		a->written++;
	else if (e.http_code != 404)
		a->failed++;
	pthread_mutex_unlock(&a->mu);
	cJSON_Delete(ann);
	cJSON_Delete(patch);
	free(path);
}

static void *worker(void *arg)
{
	struct sk_annotator *a = arg;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->head && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->head)
			break;
		struct job *j = a->head;
		a->head = j->next;
		if (!a->head)
			a->tail = NULL;
		a->n--;
		pthread_mutex_unlock(&a->mu);
		write_one(a, j->r);
		sk_decision_unref(j->r);
		free(j);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct sk_annotator *sk_annotator_new(struct kube_client *client)
{
	struct sk_annotator *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->client = client;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, worker, a) != 0) {
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
		return NULL;
	}
	return a;
}

void sk_annotator_add(struct sk_annotator *a, struct sk_decision *r)
{
	if (!a || !r)
		return;
	struct job *j = malloc(sizeof *j);
	pthread_mutex_lock(&a->mu);
	if (!j || a->stop || a->n >= SK_ANNOTATOR_QUEUE_MAX) {
		a->dropped++;
		pthread_mutex_unlock(&a->mu);
		free(j);
		return;
	}
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	*j = (struct job){ .r = r };
	if (a->tail)
		a->tail->next = j;
	else
		a->head = j;
	a->tail = j;
	a->n++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void sk_annotator_counts(struct sk_annotator *a, uint64_t *written, uint64_t *dropped, uint64_t *failed)
{
	pthread_mutex_lock(&a->mu);
	*written = a->written;
	*dropped = a->dropped;
	*failed = a->failed;
	pthread_mutex_unlock(&a->mu);
}

void sk_annotator_free(struct sk_annotator *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	/* pending annotations are dropped: they describe attempts a restarted scheduler redoes */
	for (struct job *j = a->head, *n; j; j = n) {
		n = j->next;
		sk_decision_unref(j->r);
		free(j);
	}
	a->head = a->tail = NULL;
	a->n = 0;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}
