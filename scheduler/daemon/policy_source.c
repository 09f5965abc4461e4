/* Where the daemon's legacy Policy comes from (docs/config.md "Legacy Policy"): the
 * --policy-config-file, or the ConfigMap named by --policy-configmap in
 * --policy-configmap-namespace (default kube-system), data key "policy.cfg", read through the API
 * as upstream v1.22 did (pkg/scheduler/scheduler.go, initPolicyFromConfigMap; the ConfigMap must
 * exist at start). Both are read again at every configuration check (reload.c), so a changed
 * Policy alone reloads, through the same path as a changed --config (a bad Policy is rejected
 * and the running configuration stays). The ConfigMap is read with a GET at start; from then on an
 * informer on its name (fieldSelector metadata.name, which RBAC resourceNames allow) keeps its
 * last state, so a configuration check costs no request, and a change wakes the checker at once.
 * Until that informer has synced (no list/watch right on the ConfigMap, the API away), each check
 * GETs it as before. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"

#define POLICY_KEY "policy.cfg"

bool sk_dm_policy_configured(const struct sk_daemon_opts *o)
{
	return (o->policy_configmap && *o->policy_configmap) || o->policy_path;
}

static const char *cm_ns(const struct sk_daemon_opts *o)
{
	return o->policy_configmap_ns && *o->policy_configmap_ns ? o->policy_configmap_ns : "kube-system";
}

int sk_dm_policy_read(const struct sk_daemon_opts *o, struct kube_client *c, char **text, size_t *len,
		      char where[SK_DM_POLICY_WHERE], char **err)
{
	*text = NULL;
	*len = 0;
	where[0] = '\0';
	if (o->policy_path) { /* the file wins over the ConfigMap, as upstream's deprecated options */
		snprintf(where, SK_DM_POLICY_WHERE, "policy file \"%s\"", o->policy_path);
		int e = 0;
		if (!(*text = kube_read_file(o->policy_path, 0, len, &e)))
			return kube_errf(err, "failed to read policy file \"%s\": %s", o->policy_path, strerror(e));
		return 0;
	}
	if (!o->policy_configmap || !*o->policy_configmap)
		return 0;
	const char *ns = cm_ns(o);
	snprintf(where, SK_DM_POLICY_WHERE, "policy config map %s/%s", ns, o->policy_configmap);
	if (!c)
		return kube_errf(err, "%s: no API client", where);
	char *path = kube_path(NULL, "v1", "configmaps", ns, o->policy_configmap, NULL);
	cJSON *cm = NULL;
	struct kube_error ke = { 0 };
	if (!path)
		return kube_errf(err, "out of memory");
	int rc = kube_get(c, path, &cm, &ke);
	free(path);
	if (rc != 0)
		return kube_errf(err, "failed to get policy config map %s/%s: %s", ns, o->policy_configmap,
				 *ke.message ? ke.message : *ke.reason ? ke.reason : "request failed");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cm, "data"), POLICY_KEY);
	if (!cJSON_IsString(v)) {
		cJSON_Delete(cm);
		return kube_errf(err, "%s: missing policy config map value at key \"%s\"", where, POLICY_KEY);
	}
	*text = strdup(v->valuestring);
	cJSON_Delete(cm);
	if (!*text)
		return kube_errf(err, "out of memory");
	*len = strlen(*text);
	return 0;
}

/* The ConfigMap's last state as the informer delivered it. */
enum pw_state { PW_ABSENT, PW_NO_KEY, PW_TEXT };

struct sk_policy_watch {
	struct sk_daemon *d;
	struct kube_informer *inf;
	pthread_mutex_t mu; /* guards state, text */
	enum pw_state state;
	char *text;
	atomic_ulong events;
};

static void pw_set(struct sk_policy_watch *w, const cJSON *obj)
{
	const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), POLICY_KEY)
			     : NULL;
	char *t = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
	if (cJSON_IsString(v) && !t) {
		klog_error("Cannot keep the policy config map: out of memory", " configmap=%s/%s",
			   cm_ns(&w->d->opts), w->d->opts.policy_configmap);
		return; /* the previous state stays */
	}
	pthread_mutex_lock(&w->mu);
	free(w->text);
	w->text = t;
	w->state = !obj ? PW_ABSENT : t ? PW_TEXT : PW_NO_KEY;
	pthread_mutex_unlock(&w->mu);
	atomic_fetch_add(&w->events, 1);
	/* Wake the configuration checker (reload.c) rather than reloading on this thread: the check
	 * reads the state just kept. */
	pthread_mutex_lock(&w->d->reap_mu);
	pthread_cond_broadcast(&w->d->watch_cv);
	pthread_mutex_unlock(&w->d->reap_mu);
}

static void pw_add(void *ctx, const cJSON *obj) { pw_set(ctx, obj); }
static void pw_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	(void)old_obj;
	pw_set(ctx, new_obj);
}
static void pw_delete(void *ctx, const cJSON *obj)
{
	(void)obj;
	pw_set(ctx, NULL);
}

static void pw_destroy(struct sk_policy_watch *w)
{
	if (!w)
		return;
	kube_informer_free(w->inf);
	pthread_mutex_destroy(&w->mu);
	free(w->text);
	free(w);
}

int sk_dm_policy_watch_new(struct sk_daemon *d, char **err)
{
	const struct sk_daemon_opts *o = &d->opts;
	if (o->policy_path || !o->policy_configmap || !*o->policy_configmap || !d->client)
		return 0; /* no ConfigMap (the file wins when both are given) */
	struct sk_policy_watch *w = calloc(1, sizeof *w);
	if (!w)
		return kube_errf(err, "out of memory");
	w->d = d;
	pthread_mutex_init(&w->mu, NULL);
	struct kube_informer_handlers h = { pw_add, pw_update, pw_delete, w };
	if (!(w->inf = sk_dm_configmap_informer(d, cm_ns(o), o->policy_configmap, &h))) {
		pw_destroy(w);
		return kube_errf(err, "cannot create the policy config map informer");
	}
	d->policy_watch = w;
	return 0;
}

int sk_dm_policy_watch_start(struct sk_daemon *d)
{
	return d->policy_watch ? kube_informer_start(d->policy_watch->inf) : 0;
}

void sk_dm_policy_watch_stop(struct sk_daemon *d)
{
	if (d->policy_watch)
		kube_informer_stop(d->policy_watch->inf);
}

void sk_dm_policy_watch_free(struct sk_daemon *d)
{
	pw_destroy(d->policy_watch);
	d->policy_watch = NULL;
}

unsigned long sk_dm_policy_watch_events(struct sk_daemon *d)
{
	return d->policy_watch ? atomic_load(&d->policy_watch->events) : 0;
}

int sk_dm_policy_current(struct sk_daemon *d, char **text, size_t *len, char where[SK_DM_POLICY_WHERE], char **err)
{
	struct sk_policy_watch *w = d->policy_watch;
	if (!w || !kube_informer_has_synced(w->inf))
		return sk_dm_policy_read(&d->opts, d->client, text, len, where, err);
	const struct sk_daemon_opts *o = &d->opts;
	const char *ns = cm_ns(o);
	*text = NULL;
	*len = 0;
	snprintf(where, SK_DM_POLICY_WHERE, "policy config map %s/%s", ns, o->policy_configmap);
	pthread_mutex_lock(&w->mu);
	enum pw_state st = w->state;
	char *t = st == PW_TEXT ? strdup(w->text) : NULL;
	pthread_mutex_unlock(&w->mu);
	switch (st) {
	case PW_ABSENT: /* the GET's words for a ConfigMap that is not there */
		return kube_errf(err, "failed to get policy config map %s/%s: configmaps \"%s\" not found", ns,
				 o->policy_configmap, o->policy_configmap);
	case PW_NO_KEY:
		return kube_errf(err, "%s: missing policy config map value at key \"%s\"", where, POLICY_KEY);
	case PW_TEXT:
		break;
	}
	if (!t)
		return kube_errf(err, "out of memory");
	*text = t;
	*len = strlen(t);
	return 0;
}
