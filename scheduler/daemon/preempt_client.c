/* See preempt_client.h. */
#include "scheduler/daemon/preempt_client.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/jsonspan.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/api/pod_version.h"

/* The facts of one pod version (uid, resourceVersion) that preemption reads per potential victim:
 * status.startTime and podTerminatingByPreemption. The informer store keeps objects as text, so
 * each store read parses a whole pod; the dry run asks for every lower-priority pod of every
 * candidate node (2,000 reads per preemptor at 5,000 nodes: docs/benchmarks.md, "Preemption end
 * to end"). A version's facts never change, so a memo keyed by uid and resourceVersion answers
 * exactly what the store would for that version; upstream reads them from the snapshot's pod
 * (pkg/scheduler/util GetPodStartTime), i.e. from that version too. One entry per pod (the last
 * version read replaces the one before), set associative, a fixed size (an entry is overwritten,
 * never freed, so deleted pods cost nothing), one mutex per stripe of sets; names too long for an
 * entry are not memoized. A view decoded from the informer's object carries its own facts
 * (scheduler/api/pod_version.h) and never gets here: the memo serves the other views (a binding's
 * echo, pods built elsewhere). */
#define MEMO_SETS 16384 /* x 4 ways: the 20,000 pods of the Preemption workload fit with < 1% of them
			 * in a set that overflows (2 ways missed on ~10% of the reads) */
#define MEMO_WAYS 4
#define MEMO_STRIPES 64

struct memo_entry {
	char uid[40];       /* a UUID is 36 */
	char rv[24];
	int64_t start;
	bool terminating;
};

/* The hashes and ages first: a lookup touches the entries only on a hash match. */
struct memo_set {
	uint64_t hash[MEMO_WAYS]; /* of the uid; 0: empty way */
	uint32_t used[MEMO_WAYS]; /* tick of the last use: the least recent way is replaced */
	uint32_t tick;
	struct memo_entry e[MEMO_WAYS];
};

struct sk_preempt_client {
	struct kube_client *client;
	struct kube_informer *pods, *pdbs;
	pthread_mutex_t memo_mu[MEMO_STRIPES];
	struct memo_set *memo; /* [MEMO_SETS] (calloc'd: pages are touched as sets fill); NULL: none */
};

struct sk_preempt_client *sk_preempt_client_new(struct kube_client *client, struct kube_informer *pods,
						struct kube_informer *pdbs)
{
	struct sk_preempt_client *pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->client = client;
	pc->pods = pods;
	pc->pdbs = pdbs;
	for (int i = 0; i < MEMO_STRIPES; i++)
		pthread_mutex_init(&pc->memo_mu[i], NULL);
	pc->memo = calloc(MEMO_SETS, sizeof(*pc->memo)); /* NULL (ENOMEM): every read goes to the store */
	return pc;
}

void sk_preempt_client_free(struct sk_preempt_client *pc)
{
	if (!pc)
		return;
	for (int i = 0; i < MEMO_STRIPES; i++)
		pthread_mutex_destroy(&pc->memo_mu[i]);
	free(pc->memo);
	free(pc);
}

/* ---------- PDBs ---------- */

struct pdb_acc {
	struct sk_pdb **list;
	int n, cap;
	bool oom;
};

static void pdb_add(const cJSON *obj, void *u)
{
	struct pdb_acc *a = u;
	if (a->oom || !obj)
		return;
	if (a->n == a->cap) {
		int nc = a->cap ? a->cap * 2 : 16;
		struct sk_pdb **l = realloc(a->list, (size_t)nc * sizeof(*l));
		if (!l) {
			a->oom = true;
			return;
		}
		a->list = l;
		a->cap = nc;
	}
	char *e = NULL;
	struct sk_pdb *p = sk_pdb_decode(obj, &e);
	free(e);
	if (!p) {
		a->oom = true;
		return;
	}
	a->list[a->n++] = p;
}

int sk_preempt_list_pdbs(struct sk_preempt_client *pc, struct sk_pdb ***out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	struct pdb_acc a = { 0 };
	if (pc->pdbs) {
		kube_store_list_with(pc->pdbs, pdb_add, &a);
	} else {
		char *path = kube_path("policy", "v1", "poddisruptionbudgets", NULL, NULL, NULL);
		cJSON *list = NULL;
		struct kube_error ke = { 0 };
		if (!path)
			return kube_errf(err, "listing PodDisruptionBudgets: out of memory");
		int rc = kube_list(pc->client, path, NULL, NULL, &list, &ke);
		free(path);
		if (rc != 0)
			return kube_errf(err, "listing PodDisruptionBudgets: %s", ke.message);
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items")) pdb_add(it, &a);
		cJSON_Delete(list);
	}
	if (a.oom) {
		sk_pdb_list_free(a.list, a.n);
		return kube_errf(err, "listing PodDisruptionBudgets: out of memory");
	}
	*out = a.list;
	return a.n;
}

/* ---------- pod facts from the informer ---------- */

int64_t sk_preempt_start_time_of(const cJSON *pod)
{
	return sk_pod_object_start_time(pod);
}

bool sk_preempt_terminating_of(const cJSON *pod)
{
	return sk_pod_object_terminating_by_preemption(pod);
}

struct lookup {
	const char *uid;
	const char *cond_message; /* when set: does the pod carry this DisruptionTarget condition? */
	bool only_deleting;       /* only found/deleting wanted */
	bool found;
	int64_t start;
	bool terminating;
	bool deleting; /* deletionTimestamp set */
	bool has_condition;
	bool same_version; /* the store's object has the pod's resourceVersion */
	const char *rv;    /* the pod's resourceVersion, for same_version */
};

static void lookup_fn(const cJSON *obj, void *u)
{
	struct lookup *l = u;
	const char *uid = obj ? kube_meta_uid(obj) : NULL;
	if (!uid || strcmp(uid, l->uid) != 0)
		return;
	l->found = true;
	l->deleting = kube_obj_get_string(obj, "metadata.deletionTimestamp") != NULL;
	if (l->only_deleting) /* PreEnqueue's question: nothing else is parsed */
		return;
	l->start = sk_preempt_start_time_of(obj);
	l->terminating = sk_preempt_terminating_of(obj);
	const char *rv = kube_meta_resource_version(obj);
	l->same_version = rv && l->rv && *l->rv && strcmp(rv, l->rv) == 0;
	if (l->cond_message) {
		const cJSON *c = kube_condition_find(kube_obj_get(obj, "status.conditions"), "DisruptionTarget");
		const char *st = c ? kube_obj_get_string(c, "status") : NULL;
		const char *reason = c ? kube_obj_get_string(c, "reason") : NULL;
		const char *msg = c ? kube_obj_get_string(c, "message") : NULL;
		l->has_condition = st && !strcmp(st, "True") && reason && !strcmp(reason, "PreemptionByScheduler") &&
				   msg && !strcmp(msg, l->cond_message);
	}
}

static bool lookup(struct sk_preempt_client *pc, const struct sk_pod *pod, struct lookup *l)
{
	const char *cond = l->cond_message, *rv = l->rv;
	bool only = l->only_deleting;
	memset(l, 0, sizeof(*l));
	l->cond_message = cond;
	l->only_deleting = only;
	l->rv = rv;
	l->uid = pod->uid ? pod->uid : "";
	l->start = -1;
	if (!pc->pods)
		return false;
	char key[512];
	snprintf(key, sizeof(key), "%s/%s", pod->ns, pod->name);
	kube_store_get_with(pc->pods, key, lookup_fn, l);
	return l->found;
}

/* ---------- questions the stored text answers without a parse ----------
 * A parse of the pod is ~45 k instructions; these questions need one or two members. They read
 * the store's text only when it holds no backslash: then every key and string is its plain bytes
 * (no escape could spell "uid" or "PreemptionByScheduler" otherwise), and the first member of a
 * name is the one cJSON finds. Anything else: the parse, as before. */

static const char *const uid_member[] = { "metadata", "uid", NULL };
static const char *const deletion_member[] = { "metadata", "deletionTimestamp", NULL };

/* The store's text of pod (caller frees) and its length; NULL when the store has no such key
 * (or out of memory: as kube_store_get_with, then "absent"). */
static char *store_text(struct sk_preempt_client *pc, const struct sk_pod *pod, size_t *len)
{
	char key[512];
	snprintf(key, sizeof(key), "%s/%s", pod->ns, pod->name);
	*len = 0;
	return kube_store_get_json(pc->pods, key, len);
}

static bool plain_text(const char *s, size_t len)
{
	return !memchr(s, '\\', len);
}

/* Whether text (plain) is the object of uid: its metadata.uid is that string. */
static bool text_is_uid(const char *s, size_t len, const char *uid)
{
	size_t vl, ul;
	const char *v = kube_json_path_span(s, len, uid_member, &vl);
	const char *u = v ? kube_json_plain_string(v, vl, &ul) : NULL;
	return u && strlen(uid) == ul && memcmp(u, uid, ul) == 0;
}

/* The memo's hash of a uid of n bytes, eight at a time: the dry run hashes a uid per potential
 * victim (2,000 per preemptor at 5,000 nodes), and a byte-wise FNV-1a was half of a memo hit. */
static uint64_t uid_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	while (n) {
		uint64_t w = 0;
		size_t k = n < 8 ? n : 8;
		memcpy(&w, s, k);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
		s += k;
		n -= k;
	}
	return h ? h : 1; /* 0 marks an empty slot */
}

/* The memo's facts of pod's version into *l (found, start, terminating); false on a miss. */
static bool memo_get(struct sk_preempt_client *pc, const struct sk_pod *pod, uint64_t h, struct lookup *l)
{
	size_t k = (size_t)(h % MEMO_SETS);
	struct memo_set *set = &pc->memo[k];
	bool hit = false;
	pthread_mutex_lock(&pc->memo_mu[k % MEMO_STRIPES]);
	for (int w = 0; w < MEMO_WAYS && !hit; w++) {
		const struct memo_entry *m = &set->e[w];
		if (set->hash[w] != h || strcmp(m->uid, pod->uid) != 0 || strcmp(m->rv, pod->resource_version) != 0)
			continue;
		hit = true;
		l->found = true;
		l->start = m->start;
		l->terminating = m->terminating;
		set->used[w] = ++set->tick;
	}
	pthread_mutex_unlock(&pc->memo_mu[k % MEMO_STRIPES]);
	return hit;
}

static void memo_put(struct sk_preempt_client *pc, const struct sk_pod *pod, uint64_t h, const struct lookup *l)
{
	size_t k = (size_t)(h % MEMO_SETS);
	struct memo_set *set = &pc->memo[k];
	pthread_mutex_lock(&pc->memo_mu[k % MEMO_STRIPES]);
	int w = -1;
	for (int i = 0; i < MEMO_WAYS && w < 0; i++) /* a newer version of the pod replaces the older one */
		if (set->hash[i] == h && strcmp(set->e[i].uid, pod->uid) == 0)
			w = i;
	for (int i = 0; i < MEMO_WAYS && w < 0; i++)
		if (!set->hash[i])
			w = i;
	if (w < 0) { /* the least recently used (ages compared as distances from the tick: wrap-safe) */
		w = 0;
		for (int i = 1; i < MEMO_WAYS; i++)
			if (set->tick - set->used[i] > set->tick - set->used[w])
				w = i;
	}
	struct memo_entry *m = &set->e[w];
	set->hash[w] = h;
	/* both fit (memoizable); a copy, not snprintf: every assigned pod's event puts one */
	memcpy(m->uid, pod->uid, strlen(pod->uid) + 1);
	memcpy(m->rv, pod->resource_version, strlen(pod->resource_version) + 1);
	m->start = l->start;
	m->terminating = l->terminating;
	set->used[w] = ++set->tick;
	pthread_mutex_unlock(&pc->memo_mu[k % MEMO_STRIPES]);
}

/* Whether pod's version can have a memo entry: a memo, a store to fill it from, a uid and a
 * resourceVersion that fit an entry. */
static bool memoizable(const struct sk_preempt_client *pc, const struct sk_pod *pod, size_t *uid_len)
{
	if (!pc->memo || !pc->pods || !pod->uid || !*pod->uid || !pod->resource_version || !*pod->resource_version)
		return false;
	*uid_len = strnlen(pod->uid, sizeof(pc->memo[0].e[0].uid));
	return *uid_len < sizeof(pc->memo[0].e[0].uid) &&
	       strnlen(pod->resource_version, sizeof(pc->memo[0].e[0].rv)) < sizeof(pc->memo[0].e[0].rv);
}

/* start time and terminating of pod's version: the view's own (decoded from the informer's
 * object: scheduler/api/pod_version.h), else from the memo, else from the store (memoized when the
 * store holds that very version). false: the store has no such pod. */
static bool version_facts(struct sk_preempt_client *pc, const struct sk_pod *pod, struct lookup *l)
{
	if (sk_pod_version_facts(pod, &l->start, &l->terminating)) {
		l->found = true;
		return true;
	}
	size_t n = 0;
	bool memo = memoizable(pc, pod, &n);
	uint64_t h = memo ? uid_hash(pod->uid, n) : 0;
	if (memo && memo_get(pc, pod, h, l))
		return true;
	l->rv = pod->resource_version;
	bool found = lookup(pc, pod, l);
	if (memo && found && l->same_version)
		memo_put(pc, pod, h, l);
	return found;
}

int64_t sk_preempt_pod_start_time(struct sk_preempt_client *pc, const struct sk_pod *pod)
{
	struct lookup l = { 0 };
	return version_facts(pc, pod, &l) ? l.start : -1;
}

bool sk_preempt_terminating_by_preemption(struct sk_preempt_client *pc, const struct sk_pod *pod)
{
	struct lookup l = { 0 };
	if (version_facts(pc, pod, &l))
		return l.terminating;
	return false;
}

bool sk_preempt_pod_deleted(struct sk_preempt_client *pc, const struct sk_pod *pod)
{
	struct lookup l = { .only_deleting = true };
	if (!pc->pods)
		return false; /* nothing to tell: assume it is still there */
	size_t len;
	char *s = store_text(pc, pod, &len);
	if (!s)
		return true; /* lookup: not found */
	if (plain_text(s, len)) {
		/* lookup_fn: found when the uid is the pod's; deleting when deletionTimestamp is a string */
		size_t dl;
		const char *del = kube_json_path_span(s, len, deletion_member, &dl);
		bool deleted = !text_is_uid(s, len, pod->uid ? pod->uid : "") || (del && *del == '"');
		free(s);
		return deleted;
	}
	free(s);
	return !lookup(pc, pod, &l) || l.deleting;
}

/* ---------- API calls ---------- */

/* false when the store's copy of victim cannot carry the scheduler's DisruptionTarget condition
 * (or there is none): its plain text does not hold the reason's bytes. true: ask lookup. */
static bool may_have_condition(struct sk_preempt_client *pc, const struct sk_pod *victim)
{
	if (!pc->pods)
		return false;
	size_t len;
	char *s = store_text(pc, victim, &len);
	static const char reason[] = "PreemptionByScheduler";
	bool may = s && (!plain_text(s, len) || memmem(s, len, reason, sizeof(reason) - 1));
	free(s);
	return may;
}

int sk_preempt_victim(struct sk_preempt_client *pc, const struct sk_pod *preemptor, const struct sk_pod *victim,
		      const char *node_name, const char *condition_message, char **err)
{
	if (err)
		*err = NULL;
	char now[32];
	kube_time_rfc3339(now, time(NULL));
	cJSON *patch = cJSON_CreateObject();
	cJSON *status = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
	cJSON *conds = status ? cJSON_AddArrayToObject(status, "conditions") : NULL;
	cJSON *c = cJSON_CreateObject();
	bool ok = conds && c && cJSON_AddItemToArray(conds, c);
	if (!ok)
		cJSON_Delete(c);
	ok = ok && cJSON_AddStringToObject(c, "type", "DisruptionTarget") && cJSON_AddStringToObject(c, "status", "True") &&
	     cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler") &&
	     cJSON_AddStringToObject(c, "message", condition_message ? condition_message : "") &&
	     cJSON_AddStringToObject(c, "lastTransitionTime", now);
	char *spath = ok ? kube_path("", "v1", "pods", victim->ns, victim->name, "status") : NULL;
	char *path = ok ? kube_path("", "v1", "pods", victim->ns, victim->name, NULL) : NULL;
	int rc = 0;
	struct kube_error ke = { 0 };
	struct lookup l = { .cond_message = condition_message ? condition_message : "" };
	bool patched = may_have_condition(pc, victim) && lookup(pc, victim, &l) &&
		       l.has_condition; /* UpdatePodCondition: unchanged */
	if (!spath || !path) {
		rc = kube_errf(err, "preempting pod %s/%s: out of memory", victim->ns, victim->name);
	} else if (!patched && kube_patch(pc->client, spath, KUBE_PATCH_STRATEGIC, patch, NULL, &ke) != 0) {
		if (kube_error_is_not_found(&ke))
			rc = 1;
		else
			rc = kube_errf(err, "%s", ke.message);
	} else if (kube_delete(pc->client, path, &ke) != 0) {
		if (kube_error_is_not_found(&ke))
			rc = 1;
		else
			rc = kube_errf(err, "%s", ke.message);
	} else {
		klog_info(2, "Preemptor Pod preempted victim Pod", " preemptor=%s/%s victim=%s/%s node=%s", preemptor->ns,
			  preemptor->name, victim->ns, victim->name, node_name ? node_name : "");
	}
	free(spath);
	free(path);
	cJSON_Delete(patch);
	return rc;
}

int sk_preempt_clear_nominated(struct sk_preempt_client *pc, const struct sk_pod *pod, char **err)
{
	if (err)
		*err = NULL;
	if (!pod->nominated_node_name || !*pod->nominated_node_name)
		return 0;
	cJSON *patch = cJSON_CreateObject();
	cJSON *status = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
	bool ok = status && cJSON_AddNullToObject(status, "nominatedNodeName");
	char *path = ok ? kube_path("", "v1", "pods", pod->ns, pod->name, "status") : NULL;
	struct kube_error ke = { 0 };
	int rc = 0;
	if (!path)
		rc = kube_errf(err, "clearing nominatedNodeName of pod %s/%s: out of memory", pod->ns, pod->name);
	else if (kube_patch(pc->client, path, KUBE_PATCH_STRATEGIC, patch, NULL, &ke) != 0 && !kube_error_is_not_found(&ke))
		rc = kube_errf(err, "clearing nominatedNodeName of pod %s/%s: %s", pod->ns, pod->name, ke.message);
	free(path);
	cJSON_Delete(patch);
	return rc;
}
