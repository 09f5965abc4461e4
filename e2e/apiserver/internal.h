/* internal.h — shared internals of schedkit-apiserver (not for other modules): the server
 * struct, the HTTP connection layer (http.c), the object store and watch ring (store.c), the
 * resource registry and discovery (registry.c), REST handlers (handlers.c), background
 * controllers (controllers.c: GC, namespaces, simulated kubelet) and TLS material (tls.c).
 *
 * Locking: s->lock (rwlock) guards the registry, every object table and s->rv. Writers hold it
 * exclusively for the whole read-modify-write of one request, so optimistic concurrency is
 * exact. s->ring_mu guards the watch ring, each resource's ring_last and the watch waiters
 * (s->watch_waits); it is taken inside s->lock by writers and alone by watchers. s->conns_mu
 * guards the connection list and busy flags, s->pool_mu the worker counts (http.c), s->ctl_mu
 * the controllers' work flags. No lock is held while writing to a
 * socket. Registry strings read without s->lock are never freed before stop (see retire). */
#ifndef SK_APISERVER_INTERNAL_H
#define SK_APISERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/ssl.h>

#include "e2e/apiserver/server.h"

/* ---------------- HTTP ---------------- */

struct apis_kv {
	char *k, *v;
};

struct apis_req {
	char method[16];
	char *path;                 /* percent-decoded path, no query */
	struct apis_kv *query;      /* decoded query parameters */
	int nquery;
	char *accept, *content_type, *authorization, *user_agent;
	char *upgrade;              /* the Upgrade header ("websocket"), or NULL */
	char *raw_headers;          /* with an Upgrade: the header lines as received (proxy.c passes them on) */
	bool keep_alive;
	char *body;                 /* NUL-terminated copy */
	size_t body_len;
};

struct apis_conn {
	struct apis_server *srv;
	int fd;
	SSL *ssl;
	char *rbuf;
	size_t rlen, rcap;
	char *wbuf;
	size_t wlen, wcap;
	bool close_after;           /* send Connection: close and stop after this response */
	bool streaming;
	bool busy;                  /* being served by a worker (else idle in epoll); s->conns_mu */
	/* served through another version of a CRD: object bodies starting with
	 * {"apiVersion":"<av_from>" go out with av_to (strings owned by the registry) */
	const char *av_from, *av_to;
	struct apis_conn *next, *prev; /* s->conns list, guarded by s->conns_mu */
};

const char *apis_query(const struct apis_req *r, const char *key);
/* A boolean query parameter as Go's strconv.ParseBool reads it (1 t T TRUE true True, 0 f F FALSE
 * false False); absent: false. An invalid value is answered 400 BadRequest on c and gives -1. */
int apis_query_bool(struct apis_conn *c, const struct apis_req *r, const char *key, bool *out);
/* services/proxy (proxy.c) for the authenticated user u (RBAC: verb from the method on
 * services/proxy): true when r was a service proxy request (answered). */
struct apis_user;
bool apis_service_proxy(struct apis_server *s, struct apis_conn *c, const struct apis_req *r,
			const struct apis_user *u);
/* The connection's raw bytes, for a proxied upgrade (proxy.c): what was read past the request
 * (taken: the caller sends it on), one read (-1: closed or error; it blocks), a whole write, and
 * whether a read would find data now (the socket or TLS's buffer). */
size_t apis_conn_take_buffered(struct apis_conn *c, char *buf, size_t n);
ssize_t apis_conn_read_raw(struct apis_conn *c, void *buf, size_t n);
int apis_conn_write_raw(struct apis_conn *c, const void *buf, size_t n);
int apis_conn_fd(const struct apis_conn *c);
bool apis_conn_pending(const struct apis_conn *c);
/* Whole response with Content-Length. extra_headers: "" or "Name: v\r\n..." */
int apis_respond(struct apis_conn *c, int code, const char *ctype, const char *body, size_t len,
		 const char *extra_headers);
/* Status object response. details may be NULL; it is consumed. */
int apis_respond_status(struct apis_conn *c, int code, const char *reason, const char *message,
			cJSON *details);
int apis_respond_json(struct apis_conn *c, int code, const cJSON *obj);

/* Chunked streaming (watch). */
int apis_stream_begin(struct apis_conn *c, const char *ctype);
int apis_stream_chunk(struct apis_conn *c, const void *data, size_t len);
void apis_stream_end(struct apis_conn *c);
/* True when the peer has closed (or sent something) on an idle streaming connection. */
bool apis_conn_peer_gone(struct apis_conn *c);

/* ---------------- buffers ---------------- */

struct apis_buf {
	char *p;
	size_t len, cap;
	bool oom;
};
void apis_buf_add(struct apis_buf *b, const void *data, size_t n);
void apis_buf_str(struct apis_buf *b, const char *s);
void apis_buf_printf(struct apis_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void apis_buf_free(struct apis_buf *b);
/* Appends an object's JSON to b, with the connection's apiVersion rewrite applied. */
void apis_buf_add_object(struct apis_buf *b, const struct apis_conn *c, const char *json, size_t len);

/* ---------------- registry ---------------- */

enum {
	APIS_RD_STATUS = 1 << 0,      /* has /status; main writes keep status */
	APIS_RD_SCALE = 1 << 1,       /* has /scale (deployments, replicasets) */
	APIS_RD_GENERATION = 1 << 2,  /* metadata.generation maintained */
	APIS_RD_RESET_STATUS = 1 << 3,/* status dropped on create */
	APIS_RD_CUSTOM = 1 << 4,      /* defined by a CRD */
	APIS_RD_VIRTUAL = 1 << 5,     /* not stored (bindings) */
	APIS_RD_POD_SUBS = 1 << 6,    /* pods/binding, pods/eviction */
	APIS_RD_NS_FINALIZE = 1 << 7, /* namespaces/finalize */
	APIS_RD_METRICS = 1 << 8,     /* metrics.k8s.io, computed per request (metrics.c; also VIRTUAL) */
	APIS_RD_REVIEW = 1 << 9,      /* tokenreviews, [self]subjectaccessreviews (auth.c; also VIRTUAL) */
};

struct obj_table {
	struct obj_entry **buckets;
	size_t nbuckets, count;
	size_t gc_count;              /* objects with apis_obj_gc_relevant: the garbage collector's scan
				       * has nothing to do while every served table's count is 0 */
};

struct apis_rdef {
	char *group, *version, *plural, *singular, *kind, *list_kind;
	char *api_version;            /* "v1" or "group/version" */
	char *group_resource;         /* "pods" or "deployments.apps" for messages */
	bool namespaced;
	bool served;
	unsigned flags;
	char **short_names;
	int nshort;
	char **categories;
	int ncat;
	const char *const *fields;    /* extra field-selector fields (after metadata.*) */
	int nfields;
	cJSON *crd_version;           /* CRs: the CRD's spec.versions[i] (owned) */
	const cJSON *schema;          /* CRs: openAPIV3Schema inside crd_version, or NULL */
	char *crd_name;
	char *crd_uid;
	struct apis_rdef *storage;    /* CRD: another served version, stored as this one */
	struct obj_table table;
	uint64_t ring_last;           /* 1 + ring sequence number of this resource's newest event, 0 = none; s->ring_mu */
	struct apis_rdef *next;
};

struct apis_retired {            /* replaced registry strings/JSON, freed at stop */
	void *p;
	cJSON *json;
	struct apis_retired *next;
};

/* ---------------- store ---------------- */

struct apis_obj {                 /* immutable once committed; refcounted */
	atomic_int refs;
	struct apis_rdef *rd;
	char *key;                    /* "ns/name" ("/name" when cluster scoped) */
	const char *ns, *name;        /* point into nsname */
	char *nsname;                 /* "ns\0name\0" */
	char *uid;
	uint64_t rv;
	char *json;
	size_t json_len;
	cJSON *labels;                /* copy of metadata.labels or NULL */
	char **fields;                /* values of rd->fields (NULL entries = absent) */
	bool deleting;
	bool has_owners;
	bool gc_waits;                /* deleting with a foregroundDeletion or orphan finalizer */
};

/* What the garbage collector (controllers.c gc_run) acts on: dependents (ownerReferences) and
 * owners waiting for theirs. gc_waits: set when o is built, from the stored JSON. */
static inline bool apis_obj_gc_relevant(const struct apis_obj *o)
{
	return o->has_owners || o->gc_waits;
}

enum apis_ev_type { APIS_EV_ADDED, APIS_EV_MODIFIED, APIS_EV_DELETED };

struct apis_event {
	atomic_int refs;
	enum apis_ev_type type;
	uint64_t rv;
	struct apis_obj *obj;         /* state after (for DELETED: final state) */
	struct apis_obj *prev;        /* state before, or NULL */
	uint64_t prev_same;           /* 1 + ring sequence number of the previous event of the same resource, 0 = none */
};

/* One watch stream waiting for its resource's events (store.c wakes only the waiters of the
 * resource an event belongs to). Fields and the list are guarded by s->ring_mu. */
struct apis_watch_wait {
	const struct apis_rdef *rd;
	pthread_cond_t cond;
	bool waiting;                 /* in pthread_cond_timedwait on cond: the next event of rd signals it */
	struct apis_watch_wait *next, *prev;
};
/* Add w (rd set; cond initialised here) to / remove it from the waiters; s->ring_mu held. */
void apis_watch_wait_add_locked(struct apis_server *s, struct apis_watch_wait *w);
void apis_watch_wait_remove_locked(struct apis_server *s, struct apis_watch_wait *w);
/* Wakes every waiting watch stream (stop). Takes s->ring_mu. */
void apis_watch_wake_all(struct apis_server *s);
/* True when an event of rd lies at or after sequence number seq in the ring's history so far
 * (a watcher at cursor seq has something to send); s->ring_mu held. */
static inline bool apis_ring_pending_locked(const struct apis_rdef *rd, uint64_t seq)
{
	return rd->ring_last > seq;
}
/* True when an event of rd with a sequence number >= from has fallen out of the history (a
 * watcher at cursor from missed it); other resources' dropped events do not count. Follows
 * rd's events back from its newest through prev_same; s->ring_mu held. */
bool apis_ring_lost_locked(const struct apis_server *s, const struct apis_rdef *rd, uint64_t from);

void apis_obj_ref(struct apis_obj *o);
void apis_obj_unref(struct apis_obj *o);
void apis_event_unref(struct apis_event *e);

struct apis_obj *apis_store_get(struct apis_rdef *rd, const char *ns, const char *name);
/* Calls fn for every object of rd (ns NULL = all). Caller holds s->lock. */
void apis_store_each(struct apis_rdef *rd, const char *ns, void (*fn)(void *u, struct apis_obj *o), void *u);
/* Commits obj (consumed) as the new state of its key: assigns a new RV, serializes, indexes,
 * appends the event. prev = current stored object or NULL. Caller holds s->lock for writing.
 * Returns the stored object (borrowed) or NULL on OOM. */
struct apis_obj *apis_store_commit(struct apis_server *s, struct apis_rdef *rd, cJSON *obj,
				   struct apis_obj *prev);
/* A change to an object's stored JSON: bytes [at, at + del) become ins (ins_len bytes); ins NULL
 * means the new resourceVersion, quoted. */
struct apis_splice {
	size_t at, del;
	const char *ins;
	size_t ins_len;
};
/* Commits cur's JSON with the splices applied (sorted by at, not overlapping) as the new state of
 * its key, without a cJSON tree: what apis_store_commit of the edited tree stores, when the
 * splices are the bytes printing that tree would change (cur's JSON is cJSON's compact print).
 * Indexed fields and labels are cur's, but field, whose value becomes value. Caller holds
 * s->lock for writing. Returns the stored object (borrowed) or NULL on OOM. */
struct apis_obj *apis_store_commit_spliced(struct apis_server *s, struct apis_obj *cur, const struct apis_splice *sp,
					   size_t n, const char *field, const char *value);
/* apis_store_commit_spliced where the splices replace the value of the top-level member (e.g.
 * "status") by tree's print: the index fields under "<member>." are read from tree (borrowed),
 * the others are cur's. Caller holds s->lock for writing; NULL on OOM. */
struct apis_obj *apis_store_commit_member_spliced(struct apis_server *s, struct apis_obj *cur,
						  const struct apis_splice *sp, size_t n, const char *member,
						  const cJSON *tree);
/* Commits json (malloc'd, len bytes, consumed: cJSON's compact print of an object whose
 * metadata.resourceVersion is already s->rv + 1) as the new state of its key in rd after prev,
 * without a tree: namespace, name, uid, labels and deletion state are like's (an object with the
 * same metadata), the index fields are fields (consumed; rd->nfields of them, or NULL). The
 * events mirror (events.c). Caller holds s->lock for writing; NULL on OOM. */
struct apis_obj *apis_store_commit_json(struct apis_server *s, struct apis_rdef *rd, const struct apis_obj *like,
					char *json, size_t len, char **fields, struct apis_obj *prev);
/* fields[i] = the index value (a string, bool or number as text, malloc'd; NULL otherwise) at the
 * dotted path paths[i] in obj, for the n paths. */
void apis_field_values(const cJSON *obj, const char *const *paths, int n, char **fields);
/* Removes prev; final (consumed, may be NULL = prev's content) is the DELETED event object. */
struct apis_obj *apis_store_remove(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *prev,
				   cJSON *final);
/* apis_store_remove of prev's content without a cJSON tree: bytes [rv_at, rv_at + rv_len) of
 * prev's JSON (its metadata.resourceVersion value, quoted) become the new resourceVersion, the
 * one byte printing the parsed tree with that new value would change. */
struct apis_obj *apis_store_remove_spliced(struct apis_server *s, struct apis_obj *prev, size_t rv_at, size_t rv_len);
/* The value of member key in the JSON object json[0, len) (no whitespace, cJSON's compact print,
 * as the store keeps objects): its offset and length, the first member of that name as
 * cJSON_GetObjectItemCaseSensitive finds it. false when absent or json is not an object. */
bool apis_json_member(const char *json, size_t len, const char *key, size_t *at, size_t *vlen);
/* apis_json_member for the n keys[] in one pass over json's members: the value of keys[i] at
 * json + at[i], vlen[i] bytes long, vlen[i] 0 when absent. Stops once every key is found. false
 * when json is not an object or is cut short before the members found. */
bool apis_json_members(const char *json, size_t len, const char *const *keys, size_t n, size_t *at, size_t *vlen);
void apis_table_free(struct obj_table *t);
/* Parses an object's stored JSON. Caller frees. */
cJSON *apis_obj_parse(const struct apis_obj *o);
/* Field lookup for kube_field_selector_matches; ctx is a struct apis_obj. */
const char *apis_obj_field(const void *ctx, const char *field);

/* ---------------- registry API (registry.c) ---------------- */

void apis_registry_init(struct apis_server *s);
void apis_registry_free(struct apis_server *s);
struct apis_rdef *apis_registry_find(struct apis_server *s, const char *group, const char *version,
				     const char *plural);
struct apis_rdef *apis_registry_find_kind(struct apis_server *s, const char *api_version, const char *kind);
/* Serves /api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>. Returns true when handled. */
bool apis_discovery(struct apis_server *s, struct apis_conn *c, const char *path);
/* CRD lifecycle, caller holds s->lock for writing. crd is the stored CRD object. */
int apis_registry_crd_apply(struct apis_server *s, const cJSON *crd, char **err);
void apis_registry_crd_remove(struct apis_server *s, const char *crd_name);
/* OpenAPI v3 (uses openapi.h). */
void apis_openapi_serve(struct apis_server *s, struct apis_conn *c, const char *path);

/* ---------------- handlers / controllers ---------------- */

void apis_handle(struct apis_server *s, struct apis_conn *c, struct apis_req *r);
void apis_bootstrap(struct apis_server *s);
int apis_controllers_start(struct apis_server *s);
void apis_controllers_stop(struct apis_server *s);
/* Notifications from the commit path (caller holds s->lock). */
void apis_controllers_notify(struct apis_server *s, const struct apis_event *e);
/* Delete helpers shared by handlers and controllers; caller holds s->lock for writing.
 * Returns the object state to report (borrowed), NULL when it was absent. */
struct apis_obj *apis_delete_object(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *cur,
				    const char *propagation, long long grace, bool *removed);
/* Creates obj (consumed) in namespace ns ("" for cluster-scoped) from a controller, with the
 * create path's defaults (uid, timestamps). Returns the stored object (borrowed) or NULL. */
struct apis_obj *apis_create_internal(struct apis_server *s, struct apis_rdef *rd, const char *ns, cJSON *obj);
/* pvcontroller.c: the PV controller's pass (binding and provisioning); takes s->lock itself. */
void apis_pv_controller_run(struct apis_server *s);
/* Writes obj (consumed) as an update of cur from a controller (no RV check). */
struct apis_obj *apis_update_internal(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *cur,
				      cJSON *obj);

/* handlers.c: bindings of the usual shape edit the pod's JSON in place (true, the default);
 * false makes every binding edit the cJSON tree (tests compare the two). */
extern bool apis_binding_splice;
/* handlers.c: a PATCH of pods/status with a status-only body patches the stored status alone
 * (true, the default); false sends it through the whole-object path (tests compare the two). */
extern bool apis_status_patch_fast;
/* handlers.c: a removal without finalizers edits the resourceVersion in the stored JSON (true,
 * the default); false parses and prints the object (tests compare the two). */
extern bool apis_delete_splice;
/* events.c: an Event's mirror is built from its stored bytes (true, the default); false converts
 * the tree and prints it (tests compare the two). */
extern bool apis_events_mirror_bytes;

/* events.c: keeps core/v1 and events.k8s.io/v1 Events mirrored (caller holds s->lock). tree
 * (consumed, may be NULL) is o's content as a cJSON tree (equal to parsing o->json): the commit
 * path hands over the tree it serialized, saving a parse. */
void apis_events_mirror(struct apis_server *s, struct apis_rdef *rd, const struct apis_obj *o, cJSON *tree,
			bool removed);

/* metrics.c: GET of metrics.k8s.io/v1beta1 nodes (rd cluster-scoped) or pods, one (name) or a
 * list (ns "" = every namespace), with labelSelector/fieldSelector. Takes s->lock itself. */
void apis_metrics_serve(struct apis_server *s, struct apis_conn *c, const struct apis_req *r,
			const struct apis_rdef *rd, const char *ns, const char *name);
/* The node annotation scaling its pods' usage, and its value from a node's annotations: a
 * non-negative decimal; 1 when absent or not one. */
#define APIS_LOAD_ANNOTATION "schedkit.io/simulated-load"
double apis_metrics_load_factor(const cJSON *annotations);

/* proto.c: Kubernetes protobuf request bodies of a few simple kinds -> JSON. NULL + *err
 * (caller frees) for other kinds or malformed input. Caller frees the result. */
cJSON *apis_proto_decode(const unsigned char *p, size_t n, char **err);

/* ---------------- http.c lifecycle ---------------- */
int apis_http_start(struct apis_server *s);
void apis_http_stop(struct apis_server *s);

/* ---------------- TLS (tls.c) ---------------- */
int apis_tls_setup(struct apis_server *s);

/* ---------------- utils ---------------- */
void apis_now_rfc3339(char buf[32]);
void apis_now_micro(char buf[40]);
void apis_uuid(char out[37]);
char *apis_b64(const unsigned char *p, size_t n);        /* caller frees */
unsigned char *apis_unb64(const char *s, size_t *n);     /* caller frees */
uint64_t apis_rand_next(uint64_t *state);

/* ---------------- server ---------------- */

struct apis_kubelet_item {
	char *ns, *name;
	struct timespec due;
	bool deletion;
};

struct apis_server {
	struct apis_opts opts;
	char *bind_address, *token, *kubeconfig_path;
	int listen_fd;
	int port;
	char url[160];
	SSL_CTX *ssl_ctx;
	char *ca_pem;
	int wake_pipe[2];
	atomic_bool stopping;

	pthread_mutex_t conns_mu;     /* guards conns, nconns */
	struct apis_conn *conns;
	int nconns;
	int epfd;                     /* listening socket, wake pipe and idle connections: idle workers wait on it */

	pthread_mutex_t pool_mu;      /* worker counts, dead_workers */
	pthread_cond_t pool_cond;     /* a worker exited */
	bool pool_init;
	int workers, idle_workers, min_workers; /* idle: in epoll_wait */
	int worker_idle_ms;           /* an extra worker idle this long retires (never the last idle one) */
	struct apis_worker *dead_workers;

	pthread_rwlock_t lock;        /* registry, tables, rv */
	uint64_t rv;
	bool mirroring;               /* events.c is writing the mirror of an event */
	struct apis_obj *graveyard;   /* last removed object, keeps apis_store_remove's result alive */
	struct apis_rdef *rdefs;
	struct apis_retired *retired; /* under s->lock */
	unsigned long registry_gen;   /* bumped whenever the set of served resources changes */

	pthread_mutex_t ring_mu;      /* ring, ring_head, watch_waits, every rdef's ring_last */
	struct apis_watch_wait *watch_waits;
	struct apis_event **ring;
	size_t ring_cap;
	uint64_t ring_head;           /* sequence number of the next event */

	pthread_mutex_t openapi_mu;   /* openapi cache */
	unsigned long openapi_gen;
	cJSON *openapi_resources;
	char *openapi_index;

	pthread_mutex_t fault_mu;     /* fault_rng */
	uint64_t fault_rng;

	/* controllers: guarded by ctl_mu */
	pthread_t ctl_thread;
	bool ctl_started;
	pthread_mutex_t ctl_mu;
	pthread_cond_t ctl_cond;
	bool gc_dirty, ns_dirty;
	struct apis_kubelet_item *kq;
	size_t kq_len, kq_cap;
	uint64_t pod_ip_seq;

	/* auth.c: minted and file tokens (auth_mu) */
	pthread_mutex_t auth_mu;
	struct apis_token *tokens;

	/* well-known resources (set by registry init) */
	struct apis_rdef *rd_pods, *rd_nodes, *rd_namespaces, *rd_crds, *rd_pcs, *rd_pdbs, *rd_events,
		*rd_events2, *rd_bindings;
	/* storage (pvcontroller.c) */
	struct apis_rdef *rd_pvcs, *rd_pvs, *rd_scs;
	bool pv_dirty;                /* under ctl_mu: a claim, volume or class changed */
};

/* ---------------- authentication and authorization (auth.c) ---------------- */

#define APIS_USER_GROUPS 8
struct apis_user {
	char name[256], uid[128];
	char groups[APIS_USER_GROUPS][128];
	int ngroups;
};

/* A request as RBAC sees it (k8s.io/apiserver/pkg/authorization/authorizer.Attributes). */
struct apis_attrs {
	bool resource_request;
	const char *verb;
	const char *group, *resource, *sub, *ns, *name; /* resource requests */
	const char *path;                                /* non-resource requests */
};

struct apis_token;
/* Reads --token-auth-file. 0, or -1 (logged). */
int apis_auth_load_token_file(struct apis_server *s, const char *path);
void apis_auth_free(struct apis_server *s);
/* The user of an Authorization header: 0 and *u, or -1 (answer 401). */
int apis_authenticate(struct apis_server *s, const char *authorization, struct apis_user *u);
/* RBAC's decision (takes s->lock for reading: call without it). why: the allowing rule. */
bool apis_authorize(struct apis_server *s, const struct apis_user *u, const struct apis_attrs *a, char *why, size_t n);
void apis_forbidden_message(const struct apis_user *u, const struct apis_attrs *a, char *msg, size_t n);
/* POST of a TokenReview, SubjectAccessReview or SelfSubjectAccessReview (rd says which). */
void apis_auth_review(struct apis_server *s, struct apis_conn *c, const struct apis_req *r, const struct apis_rdef *rd,
		      const struct apis_user *caller);
/* POST .../serviceaccounts/NAME/token: mints a token for the ServiceAccount. */
void apis_token_request(struct apis_server *s, struct apis_conn *c, const struct apis_req *r, struct apis_rdef *sa_rd,
			const char *ns, const char *name);
/* audit.c: one access-log line per resource request when SK_APISERVER_AUDIT_LOG names a file. */
void apis_audit(const struct apis_req *r, const char *group, const char *resource, const char *sub, const char *ns,
		const char *name, bool watch_path);
/* pod_defaults.c: requests defaulted from limits in containers and init containers
 * (pkg/apis/core/v1/defaults.go, SetDefaults_Pod). */
void apis_default_pod_requests(cJSON *spec);

#endif
