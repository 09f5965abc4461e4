/* registry.c — which resources schedkit-apiserver serves: the built-in table (group, version,
 * plural, kind, scope, short names, categories, subresources, field-selector fields), resources
 * defined by CustomResourceDefinitions (added and removed at run time), the discovery documents
 * (/api, /apis, group and group-version resource lists) and the /openapi/v3 documents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/openapi.h"
#include "e2e/apiserver/schema.h"

static const char *const POD_FIELDS[] = { "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
					  "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
					  "status.podIP", "status.nominatedNodeName", NULL };
static const char *const EVENT_FIELDS[] = { "involvedObject.kind", "involvedObject.namespace",
					    "involvedObject.name", "involvedObject.uid",
					    "involvedObject.apiVersion", "involvedObject.resourceVersion",
					    "involvedObject.fieldPath", "reason", "reportingComponent",
					    "source", "type", NULL };
static const char *const EVENT2_FIELDS[] = { "regarding.kind", "regarding.namespace", "regarding.name",
					     "regarding.uid", "reason", "reportingController", "type", NULL };
static const char *const NS_FIELDS[] = { "status.phase", NULL };
static const char *const NODE_FIELDS[] = { "spec.unschedulable", NULL };
static const char *const SECRET_FIELDS[] = { "type", NULL };
static const char *const RS_FIELDS[] = { "status.replicas", NULL };

struct builtin {
	const char *group, *version, *plural, *singular, *kind;
	bool namespaced;
	const char *shorts, *cats;
	unsigned flags;
	const char *const *fields;
};

#define ST APIS_RD_STATUS
#define GEN APIS_RD_GENERATION
#define RST APIS_RD_RESET_STATUS
static const struct builtin BUILTINS[] = {
	{ "", "v1", "bindings", "binding", "Binding", true, "", "", APIS_RD_VIRTUAL, NULL },
	{ "", "v1", "configmaps", "configmap", "ConfigMap", true, "cm", "", 0, NULL },
	{ "", "v1", "endpoints", "endpoints", "Endpoints", true, "ep", "", 0, NULL },
	{ "", "v1", "events", "event", "Event", true, "ev", "", 0, EVENT_FIELDS },
	{ "", "v1", "namespaces", "namespace", "Namespace", false, "ns", "", ST | RST | APIS_RD_NS_FINALIZE, NS_FIELDS },
	{ "", "v1", "nodes", "node", "Node", false, "no", "", ST, NODE_FIELDS },
	{ "", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, "pvc", "", ST | RST, NULL },
	{ "", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, "pv", "", ST | RST, NULL },
	{ "", "v1", "pods", "pod", "Pod", true, "po", "all", ST | RST | APIS_RD_POD_SUBS, POD_FIELDS },
	{ "", "v1", "secrets", "secret", "Secret", true, "", "", 0, SECRET_FIELDS },
	{ "", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, "sa", "", 0, NULL },
	{ "", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", true, "rc", "all", ST | RST | GEN, NULL },
	{ "", "v1", "services", "service", "Service", true, "svc", "all", ST | RST, NULL },
	{ "apps", "v1", "deployments", "deployment", "Deployment", true, "deploy", "all", ST | RST | GEN | APIS_RD_SCALE, NULL },
	{ "apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, "rs", "all", ST | RST | GEN | APIS_RD_SCALE, RS_FIELDS },
	{ "apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, "sts", "all", ST | RST | GEN, NULL },
	{ "coordination.k8s.io", "v1", "leases", "lease", "Lease", true, "", "", 0, NULL },
	{ "events.k8s.io", "v1", "events", "event", "Event", true, "ev", "", 0, EVENT2_FIELDS },
	{ "authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", false, "", "", APIS_RD_VIRTUAL | APIS_RD_REVIEW, NULL },
	{ "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", false, "", "",
	  APIS_RD_VIRTUAL | APIS_RD_REVIEW, NULL },
	{ "authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", false, "", "",
	  APIS_RD_VIRTUAL | APIS_RD_REVIEW, NULL },
	{ "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false, "", "", 0, NULL },
	{ "rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, "", "", 0, NULL },
	{ "rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, "", "", 0, NULL },
	{ "rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, "", "", 0, NULL },
	{ "storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", false, "", "", 0, NULL },
	{ "storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", false, "", "", 0, NULL },
	{ "storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", true, "", "", 0, NULL },
	{ "storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", false, "", "", ST, NULL },
	{ "storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", false, "sc", "", 0, NULL },
	{ "policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, "pdb", "", ST | RST | GEN, NULL },
	{ "scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, "pc", "", 0, NULL },
	{ "apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
	  "CustomResourceDefinition", false, "crd,crds", "api-extensions", ST | GEN, NULL },
	/* metrics-server's resources (its singular names are empty); served with the simulated kubelet */
	{ "metrics.k8s.io", "v1beta1", "nodes", "", "NodeMetrics", false, "", "", APIS_RD_VIRTUAL | APIS_RD_METRICS, NULL },
	{ "metrics.k8s.io", "v1beta1", "pods", "", "PodMetrics", true, "", "", APIS_RD_VIRTUAL | APIS_RD_METRICS, NULL },
};
#undef ST
#undef GEN
#undef RST

/* Keeps p (malloc'd) or j (cJSON) alive until the registry is freed. 0 or -1 (OOM). */
static int retire(struct apis_server *s, void *p, cJSON *j)
{
	struct apis_retired *r = malloc(sizeof *r);
	if (!r)
		return -1;
	r->p = p;
	r->json = j;
	r->next = s->retired;
	s->retired = r;
	return 0;
}

static char **split_list(const char *csv, int *n)
{
	*n = 0;
	if (!csv || !*csv)
		return NULL;
	int cnt = 1;
	for (const char *p = csv; *p; p++)
		cnt += *p == ',';
	char **out = calloc((size_t)cnt, sizeof *out);
	if (!out)
		return NULL;
	const char *p = csv;
	for (int i = 0; i < cnt; i++) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		out[i] = strndup(p, l);
		if (!out[i])
			break;
		(*n)++;
		p = c ? c + 1 : p + l;
	}
	return out;
}

static void free_list(char **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

static void rdef_free(struct apis_rdef *rd)
{
	apis_table_free(&rd->table);
	free(rd->group);
	free(rd->version);
	free(rd->plural);
	free(rd->singular);
	free(rd->kind);
	free(rd->list_kind);
	free(rd->api_version);
	free(rd->group_resource);
	free_list(rd->short_names, rd->nshort);
	free_list(rd->categories, rd->ncat);
	cJSON_Delete(rd->crd_version);
	free(rd->crd_name);
	free(rd->crd_uid);
	free(rd);
}

/* (Re)sets the naming fields of rd. Returns 0 or -1 (OOM). */
static int rdef_set_names(struct apis_server *s, struct apis_rdef *rd, const char *group, const char *version, const char *plural,
			  const char *singular, const char *kind, const char *list_kind)
{
	char *g = strdup(group), *v = strdup(version), *p = strdup(plural), *sg = strdup(singular), *k = strdup(kind);
	char *lk = NULL, *av = NULL, *gr = NULL;
	if (list_kind && *list_kind)
		lk = strdup(list_kind);
	else if (asprintf(&lk, "%sList", kind) < 0)
		lk = NULL;
	if (*group ? asprintf(&av, "%s/%s", group, version) < 0 : !(av = strdup(version)))
		av = NULL;
	if (*group ? asprintf(&gr, "%s.%s", plural, group) < 0 : !(gr = strdup(plural)))
		gr = NULL;
	if (!g || !v || !p || !sg || !k || !lk || !av || !gr) {
		free(g); free(v); free(p); free(sg); free(k); free(lk); free(av); free(gr);
		return -1;
	}
	/* Requests and watch streams read these without s->lock: retire, do not free, the old
	 * strings (a CRD re-applied with new names keeps old readers valid until stop). */
	char *old[8] = { rd->group, rd->version, rd->plural, rd->singular, rd->kind, rd->list_kind, rd->api_version,
			 rd->group_resource };
	for (int i = 0; i < 8; i++)
		if (old[i] && retire(s, old[i], NULL) < 0)
			free(old[i]);
	rd->group = g; rd->version = v; rd->plural = p; rd->singular = sg; rd->kind = k;
	rd->list_kind = lk; rd->api_version = av; rd->group_resource = gr;
	return 0;
}

static void registry_append(struct apis_server *s, struct apis_rdef *rd)
{
	struct apis_rdef **pp = &s->rdefs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = rd;
}

void apis_registry_init(struct apis_server *s)
{
	for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++) {
		const struct builtin *b = &BUILTINS[i];
		struct apis_rdef *rd = calloc(1, sizeof *rd);
		if (!rd || rdef_set_names(s, rd, b->group, b->version, b->plural, b->singular, b->kind, NULL) < 0) {
			free(rd);
			klog_error("Out of memory registering resource", " resource=%s", b->plural);
			continue;
		}
		rd->namespaced = b->namespaced;
		rd->served = !(b->flags & APIS_RD_METRICS) || s->opts.simulate_kubelet;
		rd->flags = b->flags;
		rd->short_names = split_list(b->shorts, &rd->nshort);
		rd->categories = split_list(b->cats, &rd->ncat);
		rd->fields = b->fields;
		for (rd->nfields = 0; b->fields && b->fields[rd->nfields]; rd->nfields++)
			;
		registry_append(s, rd);
		if (!*b->group && !strcmp(b->plural, "pods"))
			s->rd_pods = rd;
		else if (!*b->group && !strcmp(b->plural, "nodes"))
			s->rd_nodes = rd;
		else if (!*b->group && !strcmp(b->plural, "namespaces"))
			s->rd_namespaces = rd;
		else if (!*b->group && !strcmp(b->plural, "events"))
			s->rd_events = rd;
		else if (!*b->group && !strcmp(b->plural, "bindings"))
			s->rd_bindings = rd;
		else if (!strcmp(b->plural, "events"))
			s->rd_events2 = rd;
		else if (!strcmp(b->plural, "customresourcedefinitions"))
			s->rd_crds = rd;
		else if (!strcmp(b->plural, "priorityclasses"))
			s->rd_pcs = rd;
		else if (!strcmp(b->plural, "poddisruptionbudgets"))
			s->rd_pdbs = rd;
		else if (!*b->group && !strcmp(b->plural, "persistentvolumeclaims"))
			s->rd_pvcs = rd;
		else if (!*b->group && !strcmp(b->plural, "persistentvolumes"))
			s->rd_pvs = rd;
		else if (!strcmp(b->plural, "storageclasses"))
			s->rd_scs = rd;
	}
	s->registry_gen++;
}

void apis_registry_free(struct apis_server *s)
{
	while (s->retired) {
		struct apis_retired *n = s->retired->next;
		free(s->retired->p);
		cJSON_Delete(s->retired->json);
		free(s->retired);
		s->retired = n;
	}
	struct apis_rdef *rd = s->rdefs;
	while (rd) {
		struct apis_rdef *n = rd->next;
		rdef_free(rd);
		rd = n;
	}
	s->rdefs = NULL;
}

struct apis_rdef *apis_registry_find(struct apis_server *s, const char *group, const char *version, const char *plural)
{
	for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next)
		if (rd->served && !strcmp(rd->group, group) && !strcmp(rd->version, version) && !strcmp(rd->plural, plural))
			return rd;
	return NULL;
}

struct apis_rdef *apis_registry_find_kind(struct apis_server *s, const char *api_version, const char *kind)
{
	for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next)
		if (rd->served && !strcmp(rd->api_version, api_version) && !strcmp(rd->kind, kind) &&
		    !(rd->flags & APIS_RD_VIRTUAL))
			return rd;
	return NULL;
}

/* ---------------- CRDs ---------------- */

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static char *csv_of(const cJSON *arr)
{
	struct apis_buf b = {0};
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it))
			continue;
		if (b.len)
			apis_buf_str(&b, ",");
		apis_buf_str(&b, it->valuestring);
	}
	if (!b.p)
		return strdup("");
	return b.p;
}

/* The other served versions of a CRD: resources sharing the storage version's objects (the
 * conversion strategy None: only apiVersion differs). Versions no longer served go away. */
static void crd_aliases(struct apis_server *s, struct apis_rdef *primary, const cJSON *versions, const char *storage_name)
{
	for (struct apis_rdef *r = s->rdefs; r; r = r->next)
		if (r->storage == primary)
			r->served = false;
	const cJSON *v;
	cJSON_ArrayForEach(v, versions)
	{
		const char *vn = jstr(v, "name");
		if (!vn || !strcmp(vn, storage_name) || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")))
			continue;
		struct apis_rdef *a = NULL;
		for (struct apis_rdef *r = s->rdefs; r; r = r->next)
			if (r->storage == primary && !strcmp(r->version, vn))
				a = r;
		bool fresh = a == NULL;
		if (fresh) {
			a = calloc(1, sizeof *a);
			if (!a || !(a->crd_name = strdup(primary->crd_name))) {
				free(a);
				continue;
			}
		}
		cJSON *vcopy = cJSON_Duplicate(v, true);
		if (!vcopy || rdef_set_names(s, a, primary->group, vn, primary->plural, primary->singular, primary->kind,
					     primary->list_kind) < 0) {
			cJSON_Delete(vcopy);
			if (fresh)
				rdef_free(a);
			continue;
		}
		if (a->crd_version && retire(s, NULL, a->crd_version) < 0)
			cJSON_Delete(a->crd_version);
		a->crd_version = vcopy;
		a->schema = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vcopy, "schema"),
							     "openAPIV3Schema");
		free_list(a->short_names, a->nshort);
		free_list(a->categories, a->ncat);
		a->short_names = NULL;
		a->categories = NULL;
		a->nshort = a->ncat = 0;
		for (int i = 0; i < primary->nshort; i++) { /* same names in every version */
			char **n = realloc(a->short_names, sizeof *n * (size_t)(a->nshort + 1));
			if (!n || !(n[a->nshort] = strdup(primary->short_names[i]))) {
				if (n)
					a->short_names = n;
				break;
			}
			a->short_names = n;
			a->nshort++;
		}
		a->namespaced = primary->namespaced;
		a->flags = primary->flags;
		a->storage = primary;
		a->served = true;
		if (fresh)
			registry_append(s, a);
	}
}

int apis_registry_crd_apply(struct apis_server *s, const cJSON *crd, char **err)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
	const char *name = jstr(cJSON_GetObjectItemCaseSensitive(crd, "metadata"), "name");
	const char *group = jstr(spec, "group"), *plural = jstr(names, "plural"), *kind = jstr(names, "kind");
	const char *scope = jstr(spec, "scope");
	const cJSON *versions = cJSON_GetObjectItemCaseSensitive(spec, "versions");
	*err = NULL;
	if (!group || !*group) {
		*err = strdup("spec.group: Required value");
		return -1;
	}
	if (!plural || !*plural) {
		*err = strdup("spec.names.plural: Required value");
		return -1;
	}
	if (!kind || !*kind) {
		*err = strdup("spec.names.kind: Required value");
		return -1;
	}
	if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))) {
		if (asprintf(err, "spec.scope: Unsupported value: \"%s\": supported values: \"Cluster\", \"Namespaced\"",
			     scope ? scope : "") < 0)
			*err = NULL;
		return -1;
	}
	char *want = NULL;
	if (asprintf(&want, "%s.%s", plural, group) < 0)
		return -1;
	if (!name || strcmp(name, want) != 0) {
		if (asprintf(err, "metadata.name: Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group",
			     name ? name : "") < 0)
			*err = NULL;
		free(want);
		return -1;
	}
	free(want);
	const cJSON *ver = NULL, *v;
	int nver = 0;
	cJSON_ArrayForEach(v, versions)
	{
		nver++;
		const cJSON *served = cJSON_GetObjectItemCaseSensitive(v, "served");
		if (!jstr(v, "name")) {
			*err = strdup("spec.versions[].name: Required value");
			return -1;
		}
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")) && cJSON_IsTrue(served))
			ver = v;
		else if (!ver && cJSON_IsTrue(served))
			ver = v;
	}
	if (!nver) {
		*err = strdup("spec.versions: Invalid value: null: must have exactly one version marked as storage version");
		return -1;
	}
	if (!ver) {
		*err = strdup("spec.versions: Invalid value: must have at least one served version");
		return -1;
	}
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ver, "schema"),
							       "openAPIV3Schema");
	if (schema) {
		char *m = apis_schema_check(schema);
		if (m) {
			if (asprintf(err, "spec.versions[0].schema.openAPIV3Schema: Invalid value: %s", m) < 0)
				*err = NULL;
			free(m);
			return -1;
		}
	}
	struct apis_rdef *rd = NULL;
	for (struct apis_rdef *r = s->rdefs; r; r = r->next)
		if ((r->flags & APIS_RD_CUSTOM) && r->crd_name && !strcmp(r->crd_name, name) && !r->storage)
			rd = r;
	bool fresh = rd == NULL;
	if (fresh) {
		rd = calloc(1, sizeof *rd);
		if (!rd)
			return -1;
		rd->crd_name = strdup(name);
		if (!rd->crd_name) {
			free(rd);
			return -1;
		}
	}
	const char *singular = jstr(names, "singular");
	char lower[256];
	if (!singular || !*singular) {
		size_t i = 0;
		for (; kind[i] && i + 1 < sizeof lower; i++)
			lower[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z' ? kind[i] + 32 : kind[i]);
		lower[i] = 0;
		singular = lower;
	}
	cJSON *vcopy = cJSON_Duplicate(ver, true);
	char *shorts = csv_of(cJSON_GetObjectItemCaseSensitive(names, "shortNames"));
	char *cats = csv_of(cJSON_GetObjectItemCaseSensitive(names, "categories"));
	if (!vcopy || !shorts || !cats ||
	    rdef_set_names(s, rd, group, jstr(ver, "name"), plural, singular, kind, jstr(names, "listKind")) < 0) {
		cJSON_Delete(vcopy);
		free(shorts);
		free(cats);
		if (fresh)
			rdef_free(rd);
		return -1;
	}
	free_list(rd->short_names, rd->nshort);
	free_list(rd->categories, rd->ncat);
	rd->short_names = split_list(shorts, &rd->nshort);
	rd->categories = split_list(cats, &rd->ncat);
	free(shorts);
	free(cats);
	if (rd->crd_version && retire(s, NULL, rd->crd_version) < 0)
		cJSON_Delete(rd->crd_version);
	rd->crd_version = vcopy;
	rd->schema = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vcopy, "schema"),
						      "openAPIV3Schema");
	rd->namespaced = !strcmp(scope, "Namespaced");
	rd->flags = APIS_RD_CUSTOM | APIS_RD_GENERATION;
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(vcopy, "subresources");
	if (cJSON_GetObjectItemCaseSensitive(subs, "status"))
		rd->flags |= APIS_RD_STATUS | APIS_RD_RESET_STATUS;
	rd->served = true;
	const char *uid = jstr(cJSON_GetObjectItemCaseSensitive(crd, "metadata"), "uid");
	free(rd->crd_uid);
	rd->crd_uid = uid ? strdup(uid) : NULL;
	if (fresh)
		registry_append(s, rd);
	crd_aliases(s, rd, versions, jstr(ver, "name"));
	s->registry_gen++;
	return 0;
}

void apis_registry_crd_remove(struct apis_server *s, const char *crd_name)
{
	for (struct apis_rdef *r = s->rdefs; r; r = r->next)
		if ((r->flags & APIS_RD_CUSTOM) && r->crd_name && !strcmp(r->crd_name, crd_name)) {
			r->served = false;
			apis_table_free(&r->table);
			s->registry_gen++;
		}
}

/* ---------------- discovery ---------------- */

static cJSON *str_array(char **l, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(l[i]));
	return a;
}

static cJSON *verbs(const char *csv)
{
	int n;
	char **l = split_list(csv, &n);
	cJSON *a = str_array(l, n);
	free_list(l, n);
	return a;
}

static cJSON *api_resource(const char *name, const char *singular, bool ns, const char *kind, const char *verbs_csv,
			   const char *group, const char *version)
{
	cJSON *r = cJSON_CreateObject();
	if (!r)
		return NULL;
	cJSON_AddStringToObject(r, "name", name);
	cJSON_AddStringToObject(r, "singularName", singular);
	cJSON_AddBoolToObject(r, "namespaced", ns);
	if (group) {
		cJSON_AddStringToObject(r, "group", group);
		cJSON_AddStringToObject(r, "version", version);
	}
	cJSON_AddStringToObject(r, "kind", kind);
	cJSON_AddItemToObject(r, "verbs", verbs(verbs_csv));
	return r;
}

#define ALL_VERBS "create,delete,deletecollection,get,list,patch,update,watch"

static cJSON *resource_list(struct apis_server *s, const char *group, const char *version)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	cJSON_AddStringToObject(doc, "kind", "APIResourceList");
	cJSON_AddStringToObject(doc, "apiVersion", "v1");
	char gv[300];
	snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
	cJSON_AddStringToObject(doc, "groupVersion", gv);
	cJSON *arr = cJSON_AddArrayToObject(doc, "resources");
	bool any = false;
	for (struct apis_rdef *rd = s->rdefs; rd && arr; rd = rd->next) {
		if (!rd->served || strcmp(rd->group, group) || strcmp(rd->version, version))
			continue;
		any = true;
		const char *vs = (rd->flags & APIS_RD_METRICS) ? "get,list" :
				 (rd->flags & APIS_RD_VIRTUAL) ? "create" : ALL_VERBS;
		cJSON *r = api_resource(rd->plural, rd->singular, rd->namespaced, rd->kind, vs, NULL, NULL);
		if (!r)
			continue;
		if (rd->nshort)
			cJSON_AddItemToObject(r, "shortNames", str_array(rd->short_names, rd->nshort));
		if (rd->ncat)
			cJSON_AddItemToObject(r, "categories", str_array(rd->categories, rd->ncat));
		cJSON_AddItemToArray(arr, r);
		char sub[300];
		if (rd->flags & APIS_RD_POD_SUBS) {
			snprintf(sub, sizeof sub, "%s/binding", rd->plural);
			cJSON_AddItemToArray(arr, api_resource(sub, "", true, "Binding", "create", NULL, NULL));
			snprintf(sub, sizeof sub, "%s/eviction", rd->plural);
			cJSON_AddItemToArray(arr, api_resource(sub, "", true, "Eviction", "create", "policy", "v1"));
		}
		if (rd->flags & APIS_RD_NS_FINALIZE) {
			snprintf(sub, sizeof sub, "%s/finalize", rd->plural);
			cJSON_AddItemToArray(arr, api_resource(sub, "", false, rd->kind, "update", NULL, NULL));
		}
		if (rd->flags & APIS_RD_SCALE) {
			snprintf(sub, sizeof sub, "%s/scale", rd->plural);
			cJSON_AddItemToArray(arr, api_resource(sub, "", rd->namespaced, "Scale", "get,patch,update",
							       "autoscaling", "v1"));
		}
		if (rd->flags & APIS_RD_STATUS) {
			snprintf(sub, sizeof sub, "%s/status", rd->plural);
			cJSON_AddItemToArray(arr, api_resource(sub, "", rd->namespaced, rd->kind, "get,patch,update",
							       NULL, NULL));
		}
	}
	if (!any) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

static cJSON *group_entry(struct apis_server *s, const char *group, bool with_kind)
{
	cJSON *g = cJSON_CreateObject();
	if (!g)
		return NULL;
	if (with_kind) {
		cJSON_AddStringToObject(g, "kind", "APIGroup");
		cJSON_AddStringToObject(g, "apiVersion", "v1");
	}
	cJSON_AddStringToObject(g, "name", group);
	cJSON *vers = cJSON_AddArrayToObject(g, "versions");
	char first[300] = "";
	const char *firstv = NULL;
	for (struct apis_rdef *rd = s->rdefs; rd && vers; rd = rd->next) {
		if (!rd->served || strcmp(rd->group, group))
			continue;
		bool dup = false;
		const cJSON *it;
		cJSON_ArrayForEach(it, vers)
		{
			if (!strcmp(jstr(it, "version"), rd->version))
				dup = true;
		}
		if (dup)
			continue;
		cJSON *v = cJSON_CreateObject();
		if (!v)
			continue;
		cJSON_AddStringToObject(v, "groupVersion", rd->api_version);
		cJSON_AddStringToObject(v, "version", rd->version);
		cJSON_AddItemToArray(vers, v);
		if (!firstv) {
			firstv = rd->version;
			snprintf(first, sizeof first, "%s", rd->api_version);
		}
	}
	if (!firstv) {
		cJSON_Delete(g);
		return NULL;
	}
	cJSON *pv = cJSON_AddObjectToObject(g, "preferredVersion");
	cJSON_AddStringToObject(pv, "groupVersion", first);
	cJSON_AddStringToObject(pv, "version", firstv);
	return g;
}

bool apis_discovery(struct apis_server *s, struct apis_conn *c, const char *path)
{
	cJSON *doc = NULL;
	bool handled = true;
	pthread_rwlock_rdlock(&s->lock);
	if (!strcmp(path, "/api") || !strcmp(path, "/api/")) {
		doc = cJSON_CreateObject();
		if (doc) {
			cJSON_AddStringToObject(doc, "kind", "APIVersions");
			cJSON *v = cJSON_AddArrayToObject(doc, "versions");
			cJSON_AddItemToArray(v, cJSON_CreateString("v1"));
			cJSON *a = cJSON_AddArrayToObject(doc, "serverAddressByClientCIDRs");
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "clientCIDR", "0.0.0.0/0");
			char addr[64];
			snprintf(addr, sizeof addr, "127.0.0.1:%d", s->port);
			cJSON_AddStringToObject(e, "serverAddress", addr);
			cJSON_AddItemToArray(a, e);
		}
	} else if (!strcmp(path, "/apis") || !strcmp(path, "/apis/")) {
		doc = cJSON_CreateObject();
		if (doc) {
			cJSON_AddStringToObject(doc, "kind", "APIGroupList");
			cJSON_AddStringToObject(doc, "apiVersion", "v1");
			cJSON *groups = cJSON_AddArrayToObject(doc, "groups");
			for (struct apis_rdef *rd = s->rdefs; rd && groups; rd = rd->next) {
				if (!rd->served || !*rd->group)
					continue;
				bool seen = false;
				const cJSON *it;
				cJSON_ArrayForEach(it, groups)
				{
					if (!strcmp(jstr(it, "name"), rd->group))
						seen = true;
				}
				if (!seen)
					cJSON_AddItemToArray(groups, group_entry(s, rd->group, false));
			}
		}
	} else if (!strcmp(path, "/api/v1")) {
		doc = resource_list(s, "", "v1");
	} else if (!strncmp(path, "/apis/", 6)) {
		const char *g = path + 6;
		const char *slash = strchr(g, '/');
		if (!slash) {
			doc = group_entry(s, g, true);
			if (!doc)
				handled = false;
		} else if (!strchr(slash + 1, '/') && slash[1]) {
			char group[256];
			size_t gl = (size_t)(slash - g);
			if (gl < sizeof group) {
				memcpy(group, g, gl);
				group[gl] = 0;
				doc = resource_list(s, group, slash + 1);
			}
			if (!doc)
				handled = false;
		} else {
			handled = false;
		}
	} else {
		handled = false;
	}
	pthread_rwlock_unlock(&s->lock);
	if (!handled)
		return false;
	if (!doc)
		apis_respond_status(c, 404, "NotFound", "the server could not find the requested resource", NULL);
	else
		apis_respond_json(c, 200, doc);
	cJSON_Delete(doc);
	return true;
}

/* ---------------- OpenAPI v3 ---------------- */

static cJSON *openapi_resources(struct apis_server *s)
{
	cJSON *arr = cJSON_CreateArray();
	for (struct apis_rdef *rd = s->rdefs; rd && arr; rd = rd->next) {
		if (!rd->served || (rd->flags & APIS_RD_VIRTUAL))
			continue;
		cJSON *r = cJSON_CreateObject();
		if (!r)
			continue;
		cJSON_AddStringToObject(r, "group", rd->group);
		cJSON_AddStringToObject(r, "version", rd->version);
		cJSON_AddStringToObject(r, "kind", rd->kind);
		cJSON_AddStringToObject(r, "resource", rd->plural);
		cJSON_AddBoolToObject(r, "namespaced", rd->namespaced);
		cJSON_AddItemToObject(r, "schema", rd->schema ? cJSON_Duplicate(rd->schema, true) : cJSON_CreateNull());
		cJSON_AddItemToArray(arr, r);
	}
	return arr;
}

void apis_openapi_serve(struct apis_server *s, struct apis_conn *c, const char *path)
{
	pthread_mutex_lock(&s->openapi_mu);
	pthread_rwlock_rdlock(&s->lock);
	if (!s->openapi_resources || s->openapi_gen != s->registry_gen) {
		cJSON_Delete(s->openapi_resources);
		s->openapi_resources = openapi_resources(s);
		s->openapi_gen = s->registry_gen;
		free(s->openapi_index);
		s->openapi_index = NULL;
	}
	pthread_rwlock_unlock(&s->lock);
	char *doc = NULL;
	const char *rest = path + strlen("/openapi/v3");
	if (!*rest || !strcmp(rest, "/")) {
		if (!s->openapi_index)
			s->openapi_index = apis_openapi_v3_index(s->openapi_resources);
		if (s->openapi_index)
			doc = strdup(s->openapi_index);
	} else {
		doc = apis_openapi_v3_doc(s->openapi_resources, rest + 1);
	}
	pthread_mutex_unlock(&s->openapi_mu);
	if (!doc) {
		apis_respond_status(c, 404, "NotFound", "the server could not find the requested resource", NULL);
		return;
	}
	apis_respond(c, 200, "application/json", doc, strlen(doc), NULL);
	free(doc);
}
