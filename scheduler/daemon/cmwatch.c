/* The scheduler's ConfigMap watched through the API (--config-configmap NS/NAME): on a cluster
 * kubelet refreshes a mounted ConfigMap only after its sync period and cache TTL (a minute or
 * more), so the scheduler also reads the key named like the --config file from the API and
 * reloads a change at once (reload.c, the same checks as for the file), then renews its Lease
 * so the new config-hash is published without waiting for the next renew. The file stays the
 * start-up source; it is the fallback while the ConfigMap has not been delivered (no RBAC to
 * read it, no such key, the API down at start) or after the ConfigMap is deleted. One informer,
 * on the ConfigMap's name only (fieldSelector metadata.name, which RBAC resourceNames allow). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"

struct sk_cmwatch {
	struct sk_daemon *d;
	struct kube_informer *inf;
	char *ns, *name, *key, *source; /* source: "configmap NS/NAME key KEY", for logs */
	char last_seen[SEEN_MAX];       /* reload_mu */
	char *content;                  /* the key's last value delivered (reload_mu); the periodic
					   check re-offers it, so a changed plugin file still reloads */
	size_t content_len;
	atomic_bool delivered;          /* the ConfigMap with the key was seen (and not deleted since) */
};

static void offer(struct sk_cmwatch *w, const cJSON *obj)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(obj, "data");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, w->key);
	if (!cJSON_IsString(v)) {
		if (atomic_exchange(&w->delivered, false))
			klog_info(0, "The scheduler ConfigMap has no such key; the --config file is the source again",
				  " configmap=%s/%s key=%s", w->ns, w->name, w->key);
		return;
	}
	atomic_store(&w->delivered, true);
	char *buf = strdup(v->valuestring);
	if (!buf) {
		klog_error("Cannot read the scheduler ConfigMap: out of memory", " configmap=%s/%s", w->ns, w->name);
		return;
	}
	struct sk_daemon *d = w->d;
	char *err = NULL, *keep = strdup(buf);
	pthread_mutex_lock(&d->reload_mu);
	if (keep) {
		free(w->content);
		w->content = keep;
		w->content_len = strlen(keep);
	}
	int rc = sk_dm_reload_content_locked(d, buf, strlen(buf), w->source, w->last_seen, &err);
	pthread_mutex_unlock(&d->reload_mu);
	free(err); /* reload_failed logged it and put it on the Lease */
	/* Publish the new hash (or the rejection) now: the elector would only renew after its retry
	 * period. A renew racing the elector's is harmless (a 409 is retried within the deadline). */
	if (rc != 0 && d->leader && kube_leader_is_leader(d->leader))
		kube_leader_try_acquire_or_renew(d->leader);
}

static void on_add(void *ctx, const cJSON *obj)
{
	offer(ctx, obj);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	(void)old_obj;
	offer(ctx, new_obj);
}

static void on_delete(void *ctx, const cJSON *obj)
{
	struct sk_cmwatch *w = ctx;
	(void)obj;
	atomic_store(&w->delivered, false);
	klog_info(0, "The scheduler ConfigMap was deleted; the --config file is the source again", " configmap=%s/%s",
		  w->ns, w->name);
}

static void cmwatch_destroy(struct sk_cmwatch *w)
{
	if (!w)
		return;
	kube_informer_free(w->inf);
	free(w->ns);
	free(w->name);
	free(w->key);
	free(w->source);
	free(w->content);
	free(w);
}

struct kube_informer *sk_dm_configmap_informer(struct sk_daemon *d, const char *ns, const char *name,
						const struct kube_informer_handlers *h)
{
	char field_selector[300];
	struct kube_informer *inf = NULL;
	if (snprintf(field_selector, sizeof field_selector, "metadata.name=%s", name) >= (int)sizeof field_selector)
		return NULL;
	struct kube_informer_opts io = { .version = "v1", .resource = "configmaps", .ns = ns,
					 .field_selector = field_selector };
	if (kube_informer_new(d->client, &io, &inf) != 0)
		return NULL;
	kube_informer_add_handlers(inf, h);
	return inf;
}

int sk_dm_cmwatch_new(struct sk_daemon *d, char **err)
{
	const char *ref = d->opts.config_configmap;
	if (!ref || !*ref)
		return 0;
	const char *slash = strchr(ref, '/');
	if (!d->opts.config_path)
		return kube_errf(err, "--config-configmap needs --config (the start-up source and fallback)");
	if (!slash || slash == ref || !slash[1] || strchr(slash + 1, '/'))
		return kube_errf(err, "--config-configmap: Invalid value: \"%s\": want NAMESPACE/NAME", ref);
	struct sk_cmwatch *w = calloc(1, sizeof *w);
	const char *base = strrchr(d->opts.config_path, '/');
	base = base ? base + 1 : d->opts.config_path;
	if (!w || !(w->ns = strndup(ref, (size_t)(slash - ref))) || !(w->name = strdup(slash + 1)) ||
	    !(w->key = strdup(base)) || asprintf(&w->source, "configmap %s key %s", ref, base) < 0) {
		if (w)
			w->source = NULL;
		cmwatch_destroy(w);
		return kube_errf(err, "out of memory");
	}
	if (!*w->key) {
		cmwatch_destroy(w);
		return kube_errf(err, "--config-configmap: the --config path names no file");
	}
	w->d = d;
	struct kube_informer_handlers h = { on_add, on_update, on_delete, w };
	if (!(w->inf = sk_dm_configmap_informer(d, w->ns, w->name, &h))) {
		cmwatch_destroy(w);
		return kube_errf(err, "cannot create the ConfigMap informer");
	}
	d->cmwatch = w;
	return 0;
}

int sk_dm_cmwatch_start(struct sk_daemon *d)
{
	if (!d->cmwatch)
		return 0;
	klog_info(0, "Watching the scheduler ConfigMap through the API", " configmap=%s/%s key=%s", d->cmwatch->ns,
		  d->cmwatch->name, d->cmwatch->key);
	return kube_informer_start(d->cmwatch->inf);
}

void sk_dm_cmwatch_stop(struct sk_daemon *d)
{
	if (d->cmwatch)
		kube_informer_stop(d->cmwatch->inf);
}

void sk_dm_cmwatch_free(struct sk_daemon *d)
{
	cmwatch_destroy(d->cmwatch);
	d->cmwatch = NULL;
}

int sk_dm_cmwatch_recheck_locked(struct sk_daemon *d, char **err)
{
	struct sk_cmwatch *w = d->cmwatch;
	if (!w || !w->content)
		return 0;
	char *buf = malloc(w->content_len + 1);
	if (!buf)
		return kube_errf(err, "out of memory");
	memcpy(buf, w->content, w->content_len + 1);
	int rc = sk_dm_reload_content_locked(d, buf, w->content_len, w->source, w->last_seen, err);
	if (rc != 0 && d->leader && kube_leader_is_leader(d->leader))
		kube_leader_try_acquire_or_renew(d->leader);
	return rc;
}

bool sk_dm_cmwatch_active(struct sk_daemon *d)
{
	return d->cmwatch && atomic_load(&d->cmwatch->delivered);
}
