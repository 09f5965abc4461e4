/* controllers.c — the background work a real cluster's controllers and kubelets do, done by
 * one thread inside schedkit-apiserver: garbage collection through ownerReferences
 * (Background, Foreground and Orphan propagation), namespace deletion (content first, then the
 * namespace), and the simulated kubelet (--simulate-kubelet: bound pods on existing Nodes
 * become Running and Ready; gracefully deleted pods go away after their grace, capped by the
 * kubelet delay), and the PV controller (pvcontroller.c). The thread takes work flags under
 * s->ctl_mu, then s->lock to act. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "e2e/apiserver/internal.h"

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void wake(struct apis_server *s)
{
	pthread_cond_signal(&s->ctl_cond);
}

static void kq_push(struct apis_server *s, const struct apis_obj *o, long delay_ms, bool deletion)
{
	if (s->kq_len == s->kq_cap) {
		size_t nc = s->kq_cap ? s->kq_cap * 2 : 64;
		struct apis_kubelet_item *n = realloc(s->kq, nc * sizeof *n);
		if (!n)
			return;
		s->kq = n;
		s->kq_cap = nc;
	}
	struct apis_kubelet_item *it = &s->kq[s->kq_len];
	it->ns = strdup(o->ns);
	it->name = strdup(o->name);
	if (!it->ns || !it->name) {
		free(it->ns);
		free(it->name);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &it->due);
	it->due.tv_sec += delay_ms / 1000;
	it->due.tv_nsec += (delay_ms % 1000) * 1000000L;
	if (it->due.tv_nsec >= 1000000000L) {
		it->due.tv_sec++;
		it->due.tv_nsec -= 1000000000L;
	}
	it->deletion = deletion;
	s->kq_len++;
}

void apis_controllers_notify(struct apis_server *s, const struct apis_event *e)
{
	const struct apis_obj *o = e->obj;
	bool gc = e->type == APIS_EV_DELETED || (o->has_owners && e->type == APIS_EV_ADDED) || o->deleting;
	bool ns = o->rd == s->rd_namespaces && o->deleting;
	bool pod = o->rd == s->rd_pods && s->opts.simulate_kubelet && e->type != APIS_EV_DELETED;
	bool pv = o->rd && (o->rd == s->rd_pvcs || o->rd == s->rd_pvs || o->rd == s->rd_scs);
	if (!gc && !ns && !pod && !pv)
		return;
	pthread_mutex_lock(&s->ctl_mu);
	if (pv)
		s->pv_dirty = true;
	if (gc)
		s->gc_dirty = true;
	if (ns)
		s->ns_dirty = true;
	if (pod) {
		const char *node = apis_obj_field(o, "spec.nodeName");
		const char *pnode = e->prev ? apis_obj_field(e->prev, "spec.nodeName") : NULL;
		const char *phase = apis_obj_field(o, "status.phase");
		bool newly_bound = node && *node && !(pnode && *pnode) && !o->deleting;
		if (newly_bound && (!phase || !strcmp(phase, "Pending")))
			kq_push(s, o, s->opts.kubelet_delay_ms, false);
		if (o->deleting && !(e->prev && e->prev->deleting) && node && *node) {
			cJSON *p = cJSON_ParseWithLength(o->json, o->json_len);
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"),
									 "deletionGracePeriodSeconds");
			long grace_ms = cJSON_IsNumber(g) ? (long)(g->valuedouble * 1000) : 0;
			cJSON_Delete(p);
			if (grace_ms > s->opts.kubelet_delay_ms)
				grace_ms = s->opts.kubelet_delay_ms;
			kq_push(s, o, grace_ms, true);
		}
	}
	wake(s);
	pthread_mutex_unlock(&s->ctl_mu);
}

/* ---------------- simulated kubelet ---------------- */

static void set_cond(cJSON *conds, const char *type, const char *now)
{
	cJSON *c = NULL, *it;
	cJSON_ArrayForEach(it, conds)
	{
		const char *t = jstr(it, "type");
		if (t && !strcmp(t, type))
			c = it;
	}
	if (!c) {
		c = cJSON_CreateObject();
		if (!c)
			return;
		cJSON_AddItemToArray(conds, c);
		cJSON_AddStringToObject(c, "type", type);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(c, "status");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_DeleteItemFromObjectCaseSensitive(c, "lastProbeTime");
	cJSON_AddItemToObject(c, "lastProbeTime", cJSON_CreateNull());
	cJSON_DeleteItemFromObjectCaseSensitive(c, "lastTransitionTime");
	cJSON_AddStringToObject(c, "lastTransitionTime", now);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "reason");
	cJSON_DeleteItemFromObjectCaseSensitive(c, "message");
}

static void kubelet_run(struct apis_server *s, struct apis_obj *cur)
{
	const char *node = apis_obj_field(cur, "spec.nodeName");
	const char *phase = apis_obj_field(cur, "status.phase");
	if (!node || cur->deleting || (phase && strcmp(phase, "Pending")))
		return;
	struct apis_obj *no = apis_store_get(s->rd_nodes, NULL, node);
	if (!no)
		return;
	cJSON *pod = apis_obj_parse(cur);
	cJSON *nobj = apis_obj_parse(no);
	if (!pod || !nobj) {
		cJSON_Delete(pod);
		cJSON_Delete(nobj);
		return;
	}
	const char *host_ip = "10.0.0.1";
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nobj, "status"), "addresses"))
	{
		const char *t = jstr(a, "type");
		if (t && !strcmp(t, "InternalIP") && jstr(a, "address"))
			host_ip = jstr(a, "address");
	}
	char now[32], pod_ip[32];
	apis_now_rfc3339(now);
	s->pod_ip_seq++;
	snprintf(pod_ip, sizeof pod_ip, "10.244.%u.%u", (unsigned)((s->pod_ip_seq / 250) % 250),
		 (unsigned)(s->pod_ip_seq % 250 + 2));
	cJSON *st = cJSON_GetObjectItemCaseSensitive(pod, "status");
	if (!cJSON_IsObject(st)) {
		cJSON_DeleteItemFromObjectCaseSensitive(pod, "status");
		st = cJSON_AddObjectToObject(pod, "status");
	}
	const char *keys[] = { "phase", "hostIP", "hostIPs", "podIP", "podIPs", "startTime", "containerStatuses" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cJSON_DeleteItemFromObjectCaseSensitive(st, keys[i]);
	cJSON_AddStringToObject(st, "phase", "Running");
	cJSON_AddStringToObject(st, "hostIP", host_ip);
	cJSON *hips = cJSON_AddArrayToObject(st, "hostIPs");
	cJSON *hip = cJSON_CreateObject();
	cJSON_AddStringToObject(hip, "ip", host_ip);
	cJSON_AddItemToArray(hips, hip);
	cJSON_AddStringToObject(st, "podIP", pod_ip);
	cJSON *pips = cJSON_AddArrayToObject(st, "podIPs");
	cJSON *pip = cJSON_CreateObject();
	cJSON_AddStringToObject(pip, "ip", pod_ip);
	cJSON_AddItemToArray(pips, pip);
	cJSON_AddStringToObject(st, "startTime", now);
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	const char *types[] = { "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled" };
	for (size_t i = 0; conds && i < 5; i++)
		set_cond(conds, types[i], now);
	cJSON *css = cJSON_AddArrayToObject(st, "containerStatuses");
	const cJSON *ct;
	int i = 0;
	cJSON_ArrayForEach(ct, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "spec"), "containers"))
	{
		cJSON *cs = cJSON_CreateObject();
		if (!cs)
			continue;
		char cid[96];
		snprintf(cid, sizeof cid, "schedkit://%.36s-%d", cur->uid, i++);
		cJSON_AddStringToObject(cs, "name", jstr(ct, "name") ? jstr(ct, "name") : "");
		cJSON_AddItemToObject(cs, "state", cJSON_CreateObject());
		cJSON *run = cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(cs, "state"), "running");
		cJSON_AddStringToObject(run, "startedAt", now);
		cJSON_AddItemToObject(cs, "lastState", cJSON_CreateObject());
		cJSON_AddBoolToObject(cs, "ready", 1);
		cJSON_AddNumberToObject(cs, "restartCount", 0);
		cJSON_AddStringToObject(cs, "image", jstr(ct, "image") ? jstr(ct, "image") : "");
		cJSON_AddStringToObject(cs, "imageID", "");
		cJSON_AddStringToObject(cs, "containerID", cid);
		cJSON_AddBoolToObject(cs, "started", 1);
		cJSON_AddItemToArray(css, cs);
	}
	cJSON_Delete(nobj);
	apis_update_internal(s, s->rd_pods, cur, pod);
}

static void kubelet_delete(struct apis_server *s, struct apis_obj *cur)
{
	if (!cur->deleting)
		return;
	cJSON *pod = apis_obj_parse(cur);
	if (!pod)
		return;
	cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	if (cJSON_IsArray(fins) && fins->child) {
		/* the kubelet is done; the pod goes when its finalizers do */
		cJSON_DeleteItemFromObjectCaseSensitive(md, "deletionGracePeriodSeconds");
		cJSON_AddNumberToObject(md, "deletionGracePeriodSeconds", 0);
		cJSON *st = cJSON_GetObjectItemCaseSensitive(pod, "status");
		if (cJSON_IsObject(st)) {
			cJSON_DeleteItemFromObjectCaseSensitive(st, "phase");
			cJSON_AddStringToObject(st, "phase", "Succeeded");
		}
		apis_update_internal(s, s->rd_pods, cur, pod);
		return;
	}
	apis_store_remove(s, s->rd_pods, cur, pod); /* pod is cur's content: no second parse */
}

static void kubelet_process(struct apis_server *s, struct timespec *next_due)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&s->ctl_mu);
	size_t n = 0;
	struct apis_kubelet_item *due = NULL;
	if (s->kq_len) {
		due = malloc(s->kq_len * sizeof *due);
		size_t keep = 0;
		for (size_t i = 0; i < s->kq_len; i++) {
			struct apis_kubelet_item *it = &s->kq[i];
			bool ready = it->due.tv_sec < now.tv_sec ||
				     (it->due.tv_sec == now.tv_sec && it->due.tv_nsec <= now.tv_nsec);
			if (ready && due) {
				due[n++] = *it;
			} else {
				if (next_due->tv_sec == 0 || it->due.tv_sec < next_due->tv_sec ||
				    (it->due.tv_sec == next_due->tv_sec && it->due.tv_nsec < next_due->tv_nsec))
					*next_due = it->due;
				s->kq[keep++] = *it;
			}
		}
		s->kq_len = keep;
	}
	pthread_mutex_unlock(&s->ctl_mu);
	if (!n) {
		free(due);
		return;
	}
	pthread_rwlock_wrlock(&s->lock);
	for (size_t i = 0; i < n; i++) {
		struct apis_obj *cur = apis_store_get(s->rd_pods, due[i].ns, due[i].name);
		if (cur) {
			if (due[i].deletion)
				kubelet_delete(s, cur);
			else
				kubelet_run(s, cur);
		}
		free(due[i].ns);
		free(due[i].name);
	}
	pthread_rwlock_unlock(&s->lock);
	free(due);
}

/* ---------------- garbage collector ---------------- */

struct uidset { /* open-addressing set of owned uid strings */
	char **v;
	size_t cap, n;
};

static void us_free(struct uidset *u)
{
	for (size_t i = 0; i < u->cap; i++)
		free(u->v[i]);
	free(u->v);
	memset(u, 0, sizeof *u);
}

static size_t h(const char *s)
{
	size_t x = 1469598103934665603ULL;
	for (; *s; s++)
		x = (x ^ (unsigned char)*s) * 1099511628211ULL;
	return x;
}

static void us_add(struct uidset *u, const char *uid)
{
	if (!*uid)
		return;
	if ((u->n + 1) * 2 > u->cap) {
		size_t nc = u->cap ? u->cap * 2 : 256;
		char **nv = calloc(nc, sizeof *nv);
		if (!nv)
			return;
		for (size_t i = 0; i < u->cap; i++)
			if (u->v[i]) {
				size_t j = h(u->v[i]) & (nc - 1);
				while (nv[j])
					j = (j + 1) & (nc - 1);
				nv[j] = u->v[i];
			}
		free(u->v);
		u->v = nv;
		u->cap = nc;
	}
	size_t j = h(uid) & (u->cap - 1);
	while (u->v[j]) {
		if (!strcmp(u->v[j], uid))
			return;
		j = (j + 1) & (u->cap - 1);
	}
	char *copy = strdup(uid);
	if (!copy)
		return;
	u->v[j] = copy;
	u->n++;
}

static bool us_has(const struct uidset *u, const char *uid)
{
	if (!u->cap)
		return false;
	size_t j = h(uid) & (u->cap - 1);
	while (u->v[j]) {
		if (!strcmp(u->v[j], uid))
			return true;
		j = (j + 1) & (u->cap - 1);
	}
	return false;
}

struct objvec {
	struct apis_obj **v;
	size_t n, cap;
};

static void ov_push(struct objvec *ov, struct apis_obj *o)
{
	if (ov->n == ov->cap) {
		size_t nc = ov->cap ? ov->cap * 2 : 64;
		struct apis_obj **nv = realloc(ov->v, nc * sizeof *nv);
		if (!nv)
			return;
		ov->v = nv;
		ov->cap = nc;
	}
	apis_obj_ref(o);
	ov->v[ov->n++] = o;
}

static void ov_free(struct objvec *ov)
{
	for (size_t i = 0; i < ov->n; i++)
		apis_obj_unref(ov->v[i]);
	free(ov->v);
	memset(ov, 0, sizeof *ov);
}

struct gc_scan {
	struct uidset all, fg, orphan;
	struct objvec dependents, owners_pending;
};

static void gc_visit(void *u, struct apis_obj *o)
{
	struct gc_scan *g = u;
	us_add(&g->all, o->uid);
	if (o->has_owners)
		ov_push(&g->dependents, o);
	if (o->deleting) {
		bool fg = strstr(o->json, "\"foregroundDeletion\"") != NULL;
		bool orph = strstr(o->json, "\"orphan\"") != NULL;
		if (fg)
			us_add(&g->fg, o->uid);
		if (orph)
			us_add(&g->orphan, o->uid);
		if (fg || orph)
			ov_push(&g->owners_pending, o);
	}
}

static bool remove_finalizer(cJSON *obj, const char *fin)
{
	cJSON *fins = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers");
	int i = 0;
	cJSON *f;
	cJSON_ArrayForEach(f, fins)
	{
		if (cJSON_IsString(f) && !strcmp(f->valuestring, fin)) {
			cJSON_DeleteItemFromArray(fins, i);
			return true;
		}
		i++;
	}
	return false;
}

static void gc_run(struct apis_server *s)
{
	struct gc_scan g;
	memset(&g, 0, sizeof g);
	pthread_rwlock_wrlock(&s->lock);
	/* Every deletion marks the GC dirty; with no dependent and no owner waiting for its
	 * dependents anywhere, the scan below (every object of every resource, under the write
	 * lock) would find nothing to do: a preemption's evictions paid one such scan each. */
	size_t relevant = 0;
	for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next)
		if (rd->served)
			relevant += rd->table.gc_count;
	if (!relevant) {
		pthread_rwlock_unlock(&s->lock);
		return;
	}
	for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next)
		if (rd->served)
			apis_store_each(rd, NULL, gc_visit, &g);
	struct uidset referenced = {0};
	for (size_t i = 0; i < g.dependents.n; i++) {
		struct apis_obj *o = g.dependents.v[i];
		struct apis_obj *cur = apis_store_get(o->rd, o->ns, o->name);
		if (cur != o) /* changed meanwhile */
			continue;
		cJSON *obj = apis_obj_parse(o);
		cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
		cJSON *refs = cJSON_GetObjectItemCaseSensitive(md, "ownerReferences");
		bool alive = false, fg_owner = false, stripped = false;
		int remaining = 0, idx = 0;
		cJSON *r = refs ? refs->child : NULL;
		while (r) {
			cJSON *next = r->next;
			const char *uid = jstr(r, "uid");
			if (uid && us_has(&g.orphan, uid)) {
				cJSON_DeleteItemFromArray(refs, idx);
				stripped = true;
			} else {
				remaining++;
				if (uid && us_has(&g.all, uid))
					alive = true;
				if (uid && us_has(&g.fg, uid))
					fg_owner = true;
				idx++;
			}
			r = next;
		}
		if (stripped) {
			if (!remaining)
				cJSON_DeleteItemFromObjectCaseSensitive(md, "ownerReferences");
			cur = apis_update_internal(s, o->rd, cur, obj);
			if (!cur)
				continue;
		} else {
			cJSON_Delete(obj);
		}
		if (remaining > 0 && (!alive || fg_owner)) {
			bool removed;
			klog_info(2, "Garbage collecting dependent", " resource=%s name=%s/%s", o->rd->plural, o->ns, o->name);
			apis_delete_object(s, o->rd, cur, "Background", -1, &removed);
		}
	}
	/* owners waiting for their dependents */
	for (size_t i = 0; i < g.dependents.n; i++) {
		struct apis_obj *o = g.dependents.v[i];
		struct apis_obj *cur = apis_store_get(o->rd, o->ns, o->name);
		if (!cur)
			continue;
		cJSON *obj = apis_obj_parse(cur);
		const cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
								       "ownerReferences"))
		{
			if (jstr(r, "uid"))
				us_add(&referenced, jstr(r, "uid"));
		}
		cJSON_Delete(obj);
	}
	for (size_t i = 0; i < g.owners_pending.n; i++) {
		struct apis_obj *o = g.owners_pending.v[i];
		struct apis_obj *cur = apis_store_get(o->rd, o->ns, o->name);
		if (!cur || cur != o || us_has(&referenced, o->uid))
			continue;
		cJSON *obj = apis_obj_parse(cur);
		bool changed = remove_finalizer(obj, "foregroundDeletion");
		changed = remove_finalizer(obj, "orphan") || changed;
		if (changed)
			apis_update_internal(s, o->rd, cur, obj);
		else
			cJSON_Delete(obj);
	}
	pthread_rwlock_unlock(&s->lock);
	us_free(&g.all);
	us_free(&g.fg);
	us_free(&g.orphan);
	us_free(&referenced);
	ov_free(&g.dependents);
	ov_free(&g.owners_pending);
}

/* ---------------- namespaces ---------------- */

struct ns_scan {
	struct objvec v;
};

static void ns_visit(void *u, struct apis_obj *o)
{
	struct ns_scan *n = u;
	if (o->deleting)
		ov_push(&n->v, o);
}

struct ns_content {
	struct objvec v;
};

static void content_visit(void *u, struct apis_obj *o)
{
	ov_push(&((struct ns_content *)u)->v, o);
}

/* Returns true when some namespace is still terminating. */
static bool ns_run(struct apis_server *s)
{
	bool pending = false;
	pthread_rwlock_wrlock(&s->lock);
	struct ns_scan ns = {0};
	apis_store_each(s->rd_namespaces, NULL, ns_visit, &ns);
	for (size_t i = 0; i < ns.v.n; i++) {
		struct apis_obj *nso = ns.v.v[i];
		size_t remaining = 0;
		for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next) {
			if (!rd->served || !rd->namespaced || (rd->flags & APIS_RD_VIRTUAL))
				continue;
			struct ns_content c = {0};
			apis_store_each(rd, nso->name, content_visit, &c);
			for (size_t k = 0; k < c.v.n; k++) {
				bool removed = false;
				if (!c.v.v[k]->deleting)
					apis_delete_object(s, rd, c.v.v[k], "Background", -1, &removed);
				if (!removed)
					remaining++;
			}
			ov_free(&c.v);
		}
		struct apis_obj *cur = apis_store_get(s->rd_namespaces, NULL, nso->name);
		if (!cur) {
			continue;
		}
		if (remaining) {
			pending = true;
			continue;
		}
		cJSON *obj = apis_obj_parse(cur);
		cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "finalizers");
		const cJSON *mf = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers");
		if (cJSON_IsArray(mf) && mf->child) {
			apis_update_internal(s, s->rd_namespaces, cur, obj);
			pending = true;
		} else {
			apis_store_remove(s, s->rd_namespaces, cur, obj);
		}
	}
	ov_free(&ns.v);
	pthread_rwlock_unlock(&s->lock);
	return pending;
}

/* ---------------- thread ---------------- */

static void *ctl_main(void *arg)
{
	struct apis_server *s = arg;
	bool ns_pending = false;
	while (!atomic_load(&s->stopping)) {
		struct timespec next = {0};
		kubelet_process(s, &next);
		pthread_mutex_lock(&s->ctl_mu);
		if (!s->gc_dirty && !s->ns_dirty && !s->pv_dirty && !atomic_load(&s->stopping)) {
			struct timespec wake;
			clock_gettime(CLOCK_REALTIME, &wake);
			wake.tv_nsec += (ns_pending ? 100 : 500) * 1000000L;
			if (wake.tv_nsec >= 1000000000L) {
				wake.tv_sec++;
				wake.tv_nsec -= 1000000000L;
			}
			if (next.tv_sec && (next.tv_sec < wake.tv_sec || (next.tv_sec == wake.tv_sec && next.tv_nsec < wake.tv_nsec)))
				wake = next;
			pthread_cond_timedwait(&s->ctl_cond, &s->ctl_mu, &wake);
		}
		bool gc = s->gc_dirty, ns = s->ns_dirty || ns_pending, pv = s->pv_dirty;
		s->gc_dirty = false;
		s->ns_dirty = false;
		s->pv_dirty = false;
		pthread_mutex_unlock(&s->ctl_mu);
		if (atomic_load(&s->stopping))
			break;
		if (ns)
			ns_pending = ns_run(s);
		if (gc)
			gc_run(s);
		if (pv)
			apis_pv_controller_run(s);
	}
	return NULL;
}

int apis_controllers_start(struct apis_server *s)
{
	if (pthread_create(&s->ctl_thread, NULL, ctl_main, s) != 0)
		return -1;
	s->ctl_started = true;
	return 0;
}

void apis_controllers_stop(struct apis_server *s)
{
	if (!s->ctl_started)
		return;
	pthread_mutex_lock(&s->ctl_mu);
	pthread_cond_broadcast(&s->ctl_cond);
	pthread_mutex_unlock(&s->ctl_mu);
	pthread_join(s->ctl_thread, NULL);
	s->ctl_started = false;
	for (size_t i = 0; i < s->kq_len; i++) {
		free(s->kq[i].ns);
		free(s->kq[i].name);
	}
	free(s->kq);
	s->kq = NULL;
	s->kq_len = s->kq_cap = 0;
}
