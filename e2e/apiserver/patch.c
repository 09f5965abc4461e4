/* patch.c — JSON merge patch (RFC 7386), JSON patch (RFC 6902) and Kubernetes strategic merge
 * patch for the local API server. The strategic merge follows upstream apimachinery's
 * strategicpatch apply path (mergeMap/mergeSlice, $patch, $retainKeys, $setElementOrder,
 * $deleteFromPrimitiveList, element ordering); the merge-key table below is transcribed from the
 * patchStrategy/patchMergeKey struct tags of core/v1, apps/v1, batch/v1, policy/v1, storage/v1.
 * Every entry point works on copies and swaps the result in only on success. */
#include "e2e/apiserver/patch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- merge-key table */

enum { SMP_LIST_MERGE = 1, SMP_MAP_REPLACE = 2 };

struct smp_type;
struct smp_field {
	const char *name;
	const struct smp_type *type; /* struct type of the value (or of list elements); NULL = generic */
	unsigned flags;              /* SMP_LIST_MERGE: list merged (by merge_key, or as a set) */
	const char *merge_key;       /* NULL for primitive lists */
};
struct smp_type {
	const struct smp_field *fields;
	size_t n;
};
#define SMP_TYPE(var, arr) static const struct smp_type var = {arr, sizeof(arr) / sizeof(arr[0])}

static const struct smp_field f_owner_meta[] = {
	{"ownerReferences", NULL, SMP_LIST_MERGE, "uid"},
	{"finalizers", NULL, SMP_LIST_MERGE, NULL},
};
SMP_TYPE(t_meta, f_owner_meta);

static const struct smp_field f_container[] = {
	{"ports", NULL, SMP_LIST_MERGE, "containerPort"},
	{"env", NULL, SMP_LIST_MERGE, "name"},
	{"volumeMounts", NULL, SMP_LIST_MERGE, "mountPath"},
	{"volumeDevices", NULL, SMP_LIST_MERGE, "devicePath"},
};
SMP_TYPE(t_container, f_container);

static const struct smp_field f_pod_spec[] = {
	{"volumes", NULL, SMP_LIST_MERGE, "name"},
	{"initContainers", &t_container, SMP_LIST_MERGE, "name"},
	{"containers", &t_container, SMP_LIST_MERGE, "name"},
	{"ephemeralContainers", &t_container, SMP_LIST_MERGE, "name"},
	{"imagePullSecrets", NULL, SMP_LIST_MERGE, "name"},
	{"hostAliases", NULL, SMP_LIST_MERGE, "ip"},
	{"topologySpreadConstraints", NULL, SMP_LIST_MERGE, "topologyKey"},
	{"resourceClaims", NULL, SMP_LIST_MERGE, "name"},
	{"schedulingGates", NULL, SMP_LIST_MERGE, "name"},
};
SMP_TYPE(t_pod_spec, f_pod_spec);

static const struct smp_field f_pod_status[] = {
	{"conditions", NULL, SMP_LIST_MERGE, "type"},
	{"podIPs", NULL, SMP_LIST_MERGE, "ip"},
	{"hostIPs", NULL, SMP_LIST_MERGE, "ip"},
	{"resourceClaimStatuses", NULL, SMP_LIST_MERGE, "name"},
};
SMP_TYPE(t_pod_status, f_pod_status);

static const struct smp_field f_template[] = {
	{"metadata", &t_meta, 0, NULL},
	{"spec", &t_pod_spec, 0, NULL},
};
SMP_TYPE(t_template, f_template);

static const struct smp_field f_conditions_status[] = {
	{"conditions", NULL, SMP_LIST_MERGE, "type"},
};
SMP_TYPE(t_conditions_status, f_conditions_status);

static const struct smp_field f_workload_spec[] = {
	{"template", &t_template, 0, NULL},
};
SMP_TYPE(t_workload_spec, f_workload_spec);

static const struct smp_field f_job_template[] = {
	{"metadata", &t_meta, 0, NULL},
	{"spec", &t_workload_spec, 0, NULL},
};
SMP_TYPE(t_job_template, f_job_template);
static const struct smp_field f_cronjob_spec[] = {
	{"jobTemplate", &t_job_template, 0, NULL},
};
SMP_TYPE(t_cronjob_spec, f_cronjob_spec);

static const struct smp_field f_node_spec[] = {
	{"podCIDRs", NULL, SMP_LIST_MERGE, NULL},
};
SMP_TYPE(t_node_spec, f_node_spec);
static const struct smp_field f_node_status[] = {
	{"conditions", NULL, SMP_LIST_MERGE, "type"},
	{"addresses", NULL, SMP_LIST_MERGE, "type"},
};
SMP_TYPE(t_node_status, f_node_status);

static const struct smp_field f_service_spec[] = {
	{"ports", NULL, SMP_LIST_MERGE, "port"},
};
SMP_TYPE(t_service_spec, f_service_spec);

static const struct smp_field f_csinode_spec[] = {
	{"drivers", NULL, SMP_LIST_MERGE, "name"},
};
SMP_TYPE(t_csinode_spec, f_csinode_spec);

/* Top-level kinds: metadata + the kind's own fields. */
#define KIND_FIELDS(var, ...)                                                  \
	static const struct smp_field var##_f[] = {{"metadata", &t_meta, 0, NULL}, \
						   __VA_ARGS__};               \
	SMP_TYPE(var, var##_f)

KIND_FIELDS(k_pod, {"spec", &t_pod_spec, 0, NULL}, {"status", &t_pod_status, 0, NULL});
KIND_FIELDS(k_workload, {"spec", &t_workload_spec, 0, NULL},
	    {"status", &t_conditions_status, 0, NULL});
KIND_FIELDS(k_podtemplate, {"template", &t_template, 0, NULL});
KIND_FIELDS(k_cronjob, {"spec", &t_cronjob_spec, 0, NULL});
KIND_FIELDS(k_node, {"spec", &t_node_spec, 0, NULL}, {"status", &t_node_status, 0, NULL});
KIND_FIELDS(k_service, {"spec", &t_service_spec, 0, NULL});
KIND_FIELDS(k_serviceaccount, {"secrets", NULL, SMP_LIST_MERGE, "name"});
KIND_FIELDS(k_conditions, {"status", &t_conditions_status, 0, NULL});
KIND_FIELDS(k_csinode, {"spec", &t_csinode_spec, 0, NULL});
KIND_FIELDS(k_plain, {"kind", NULL, 0, NULL});

/* The MergeItem struct of upstream's strategicpatch tests (patch_test.go), so their fixtures can
 * run here unchanged; the kind name cannot collide with a real Kind. */
static const struct smp_type t_test_item;
static const struct smp_field f_test_retain[] = {
	{"mergingIntList", NULL, SMP_LIST_MERGE, NULL},
	{"mergingList", &t_test_item, SMP_LIST_MERGE, "name"},
};
SMP_TYPE(t_test_retain, f_test_retain);
static const struct smp_field f_test_item[] = {
	{"mergingList", &t_test_item, SMP_LIST_MERGE, "name"},
	{"mergingIntList", NULL, SMP_LIST_MERGE, NULL},
	{"mergeItemPtr", &t_test_item, 0, NULL},
	{"replacingItem", NULL, SMP_MAP_REPLACE, NULL},
	{"retainKeysMap", &t_test_retain, 0, NULL},
	{"retainKeysMergingList", &t_test_item, SMP_LIST_MERGE, "name"},
};
static const struct smp_type t_test_item = {f_test_item, sizeof(f_test_item) / sizeof(f_test_item[0])};

static const struct {
	const char *kind;
	const struct smp_type *type;
} smp_kinds[] = {
	{"x-strategicpatch-test.MergeItem", &t_test_item},
	{"Pod", &k_pod},
	{"Deployment", &k_workload},
	{"ReplicaSet", &k_workload},
	{"StatefulSet", &k_workload},
	{"DaemonSet", &k_workload},
	{"Job", &k_workload},
	{"ReplicationController", &k_workload},
	{"PodTemplate", &k_podtemplate},
	{"CronJob", &k_cronjob},
	{"Node", &k_node},
	{"Service", &k_service},
	{"ServiceAccount", &k_serviceaccount},
	{"Namespace", &k_conditions},
	{"PersistentVolumeClaim", &k_conditions},
	{"PodDisruptionBudget", &k_conditions},
	{"CustomResourceDefinition", &k_conditions},
	{"CSINode", &k_csinode},
	{"ConfigMap", &k_plain},
	{"Secret", &k_plain},
	{"Endpoints", &k_plain},
	{"Event", &k_plain},
	{"Lease", &k_plain},
	{"PriorityClass", &k_plain},
	{"PersistentVolume", &k_plain},
	{"StorageClass", &k_plain},
	{"CSIDriver", &k_plain},
	{"CSIStorageCapacity", &k_plain},
	{"VolumeAttachment", &k_plain},
	{"Role", &k_plain},
	{"RoleBinding", &k_plain},
	{"ClusterRole", &k_plain},
	{"ClusterRoleBinding", &k_plain},
	{"LimitRange", &k_plain},
	{"ResourceQuota", &k_plain},
	{"Binding", &k_plain},
	{"Eviction", &k_plain},
	{"Scale", &k_plain},
};

static const struct smp_type *smp_kind_type(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < sizeof(smp_kinds) / sizeof(smp_kinds[0]); i++)
		if (strcmp(smp_kinds[i].kind, kind) == 0)
			return smp_kinds[i].type;
	return NULL;
}

int apis_strategic_kind_known(const char *kind)
{
	return smp_kind_type(kind) != NULL;
}

static const struct smp_field *smp_lookup(const struct smp_type *t, const char *name)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->fields[i].name, name) == 0)
			return &t->fields[i];
	return NULL;
}

/* ---------------------------------------------------------------- errors */

struct perr {
	char *msg; /* first error; NULL when only an allocation failed */
	bool failed;
};

static void perr_set(struct perr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr_set(struct perr *e, const char *fmt, ...)
{
	if (e->failed)
		return;
	e->failed = true;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&e->msg, fmt, ap) < 0)
		e->msg = NULL;
	va_end(ap);
}

static void perr_oom(struct perr *e)
{
	perr_set(e, "out of memory");
}

/* Short rendering of a value for messages (caller frees; never NULL-dereferenced). */
static char *brief(const cJSON *v)
{
	char *s = v ? cJSON_PrintUnformatted(v) : NULL;
	if (s && strlen(s) > 200) {
		s[197] = '.';
		s[198] = '.';
		s[199] = '.';
		s[200] = 0;
	}
	return s;
}

/* ---------------------------------------------------------------- JSON merge patch */

/* Consumes nothing; returns the merged value (new tree owned by caller) or NULL on OOM. */
static cJSON *merge_patch_value(const cJSON *target, const cJSON *patch)
{
	if (!cJSON_IsObject(patch))
		return cJSON_Duplicate(patch, 1);
	cJSON *out = cJSON_IsObject(target) ? cJSON_Duplicate(target, 1) : cJSON_CreateObject();
	if (!out)
		return NULL;
	for (const cJSON *p = patch->child; p; p = p->next) {
		if (!p->string)
			continue;
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(out, p->string);
			continue;
		}
		const cJSON *cur = cJSON_GetObjectItemCaseSensitive(out, p->string);
		cJSON *merged = merge_patch_value(cur, p);
		if (!merged) {
			cJSON_Delete(out);
			return NULL;
		}
		if (cur) {
			if (!cJSON_ReplaceItemInObjectCaseSensitive(out, p->string, merged)) {
				cJSON_Delete(merged);
				cJSON_Delete(out);
				return NULL;
			}
		} else if (!cJSON_AddItemToObject(out, p->string, merged)) {
			cJSON_Delete(merged);
			cJSON_Delete(out);
			return NULL;
		}
	}
	return out;
}

int apis_merge_patch(cJSON **target, const cJSON *patch)
{
	if (!target || !patch)
		return -1;
	cJSON *merged = merge_patch_value(*target, patch);
	if (!merged)
		return -1;
	cJSON_Delete(*target);
	*target = merged;
	return 0;
}

/* ---------------------------------------------------------------- JSON patch */

/* Decodes one RFC 6901 reference token [s, s+n) into a new string. */
static char *ptr_token(const char *s, size_t n, bool *bad)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '~') {
			if (i + 1 < n && s[i + 1] == '0')
				out[j++] = '~';
			else if (i + 1 < n && s[i + 1] == '1')
				out[j++] = '/';
			else
				*bad = true;
			i++;
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = 0;
	return out;
}

/* Array index per RFC 6902: digits without leading zeros. -1 when not an index. */
static long array_index(const char *tok)
{
	size_t n = strlen(tok);
	if (n == 0 || n > 9 || (n > 1 && tok[0] == '0'))
		return -1;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return -1;
		v = v * 10 + (tok[i] - '0');
	}
	return v;
}

/* Resolves the parent container of path. On success *parent is the container (object or array)
 * and *last the final decoded token (caller frees). Returns 0, or -1 with e set. */
static int ptr_parent(cJSON *doc, const char *path, const char *op, cJSON **parent, char **last,
		      struct perr *e)
{
	if (path[0] != '/') {
		perr_set(e, "%s operation does not apply: invalid JSON pointer %s", op, path);
		return -1;
	}
	cJSON *cur = doc;
	const char *p = path + 1;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		bool bad = false;
		char *tok = ptr_token(p, n, &bad);
		if (!tok) {
			perr_oom(e);
			return -1;
		}
		if (bad) {
			perr_set(e, "%s operation does not apply: invalid JSON pointer %s", op, path);
			free(tok);
			return -1;
		}
		if (!slash) {
			*parent = cur;
			*last = tok;
			return 0;
		}
		cJSON *next = NULL;
		if (cJSON_IsObject(cur)) {
			next = cJSON_GetObjectItemCaseSensitive(cur, tok);
		} else if (cJSON_IsArray(cur)) {
			long i = array_index(tok);
			if (i >= 0)
				next = cJSON_GetArrayItem(cur, (int)i);
		}
		free(tok);
		if (!next || !(cJSON_IsObject(next) || cJSON_IsArray(next))) {
			perr_set(e, "%s operation does not apply: doc is missing path: \"%s\": missing value",
				 op, path);
			return -1;
		}
		cur = next;
		p = slash + 1;
	}
}

static cJSON *ptr_get(cJSON *doc, const char *path, const char *op, struct perr *e)
{
	if (path[0] == 0)
		return doc;
	cJSON *parent;
	char *last;
	if (ptr_parent(doc, path, op, &parent, &last, e) != 0)
		return NULL;
	cJSON *v = NULL;
	if (cJSON_IsObject(parent)) {
		v = cJSON_GetObjectItemCaseSensitive(parent, last);
	} else if (cJSON_IsArray(parent)) {
		long i = array_index(last);
		if (i >= 0)
			v = cJSON_GetArrayItem(parent, (int)i);
	}
	free(last);
	if (!v)
		perr_set(e, "%s operation does not apply: doc is missing path: \"%s\": missing value", op,
			 path);
	return v;
}

/* Detaches the value at path (which must exist) and returns it. */
static cJSON *ptr_detach(cJSON *doc, const char *path, const char *op, struct perr *e)
{
	if (path[0] == 0) {
		perr_set(e, "%s operation does not apply: cannot remove the whole document", op);
		return NULL;
	}
	cJSON *parent;
	char *last;
	if (ptr_parent(doc, path, op, &parent, &last, e) != 0)
		return NULL;
	cJSON *v = NULL;
	if (cJSON_IsObject(parent)) {
		v = cJSON_DetachItemFromObjectCaseSensitive(parent, last);
	} else if (cJSON_IsArray(parent)) {
		long i = array_index(last);
		if (i >= 0 && i < cJSON_GetArraySize(parent))
			v = cJSON_DetachItemFromArray(parent, (int)i);
	}
	free(last);
	if (!v)
		perr_set(e, "%s operation does not apply: doc is missing path: \"%s\": missing value", op,
			 path);
	return v;
}

/* Inserts item before index i (0 <= i < size). Debian's cJSON 1.7.15 refuses
 * cJSON_InsertItemInArray at any index but 0, so move the tail instead. Cannot fail. */
static void array_insert(cJSON *arr, int i, cJSON *item)
{
	cJSON *tail = cJSON_CreateArray();
	if (!tail) { /* fall back to cJSON; only index 0 is reliable there */
		cJSON_InsertItemInArray(arr, i, item);
		return;
	}
	while (cJSON_GetArraySize(arr) > i)
		cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(arr, i));
	cJSON_AddItemToArray(arr, item);
	while (tail->child)
		cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(tail, tail->child));
	cJSON_Delete(tail);
}

/* Adds (consumes) value at path; replace=true requires the target to exist. *doc may change
 * when path is "". On error value is freed. */
static int ptr_put(cJSON **doc, const char *path, cJSON *value, bool replace, const char *op,
		   struct perr *e)
{
	if (path[0] == 0) {
		cJSON_Delete(*doc);
		*doc = value;
		return 0;
	}
	cJSON *parent;
	char *last;
	if (ptr_parent(*doc, path, op, &parent, &last, e) != 0) {
		cJSON_Delete(value);
		return -1;
	}
	int rc = -1;
	if (cJSON_IsObject(parent)) {
		cJSON *cur = cJSON_GetObjectItemCaseSensitive(parent, last);
		if (cur) {
			rc = cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value) ? 0 : -1;
			if (rc != 0)
				perr_oom(e);
		} else if (replace) {
			perr_set(e, "%s operation does not apply: doc is missing key: %s: missing value", op,
				 path);
		} else {
			rc = cJSON_AddItemToObject(parent, last, value) ? 0 : -1;
			if (rc != 0)
				perr_oom(e);
		}
	} else if (cJSON_IsArray(parent)) {
		int size = cJSON_GetArraySize(parent);
		long i = strcmp(last, "-") == 0 && !replace ? size : array_index(last);
		if (i < 0 || i > size || (replace && i == size)) {
			perr_set(e, "%s operation does not apply: index out of bounds: %s", op, path);
		} else if (replace) {
			rc = cJSON_ReplaceItemInArray(parent, (int)i, value) ? 0 : -1;
			if (rc != 0)
				perr_oom(e);
		} else if (i == size) {
			rc = cJSON_AddItemToArray(parent, value) ? 0 : -1;
			if (rc != 0)
				perr_oom(e);
		} else {
			array_insert(parent, (int)i, value);
			rc = 0;
		}
	} else {
		perr_set(e, "%s operation does not apply: doc is missing path: \"%s\": missing value", op,
			 path);
	}
	free(last);
	if (rc != 0)
		cJSON_Delete(value);
	return rc;
}

static int json_patch_op(cJSON **doc, const cJSON *opj, int idx, struct perr *e)
{
	if (!cJSON_IsObject(opj)) {
		perr_set(e, "json patch operation %d is not an object", idx);
		return -1;
	}
	const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(opj, "op"));
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(opj, "path"));
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(opj, "value");
	const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(opj, "from"));
	if (!op) {
		perr_set(e, "json patch operation %d: missing \"op\"", idx);
		return -1;
	}
	if (!path) {
		perr_set(e, "%s operation %d: missing \"path\"", op, idx);
		return -1;
	}
	if (strcmp(op, "add") == 0 || strcmp(op, "replace") == 0) {
		if (!value) {
			perr_set(e, "%s operation %d: missing \"value\"", op, idx);
			return -1;
		}
		cJSON *v = cJSON_Duplicate(value, 1);
		if (!v) {
			perr_oom(e);
			return -1;
		}
		return ptr_put(doc, path, v, op[0] == 'r', op, e);
	}
	if (strcmp(op, "remove") == 0) {
		cJSON *v = ptr_detach(*doc, path, op, e);
		if (!v)
			return -1;
		cJSON_Delete(v);
		return 0;
	}
	if (strcmp(op, "test") == 0) {
		cJSON *cur = ptr_get(*doc, path, op, e);
		if (!cur)
			return -1;
		if (!value || !cJSON_Compare(cur, value, 1)) {
			perr_set(e, "testing value %s failed: test failed", path);
			return -1;
		}
		return 0;
	}
	if (strcmp(op, "move") == 0 || strcmp(op, "copy") == 0) {
		if (!from) {
			perr_set(e, "%s operation %d: missing \"from\"", op, idx);
			return -1;
		}
		cJSON *v;
		if (op[0] == 'm') {
			size_t fl = strlen(from);
			if (strncmp(path, from, fl) == 0 && path[fl] == '/') {
				perr_set(e, "move operation does not apply: cannot move %s into its child %s",
					 from, path);
				return -1;
			}
			if (strcmp(path, from) == 0)
				return ptr_get(*doc, from, op, e) ? 0 : -1;
			v = ptr_detach(*doc, from, op, e);
		} else {
			cJSON *src = ptr_get(*doc, from, op, e);
			if (!src)
				return -1;
			v = cJSON_Duplicate(src, 1);
			if (!v)
				perr_oom(e);
		}
		if (!v)
			return -1;
		return ptr_put(doc, path, v, false, op, e);
	}
	perr_set(e, "Unexpected kind: %s", op);
	return -1;
}

int apis_json_patch(cJSON **target, const cJSON *ops, char **err)
{
	struct perr e = {0};
	if (err)
		*err = NULL;
	if (!target || !cJSON_IsArray(ops)) {
		if (err)
			*err = strdup("json patch must be an array of operations");
		return -1;
	}
	cJSON *doc = *target ? cJSON_Duplicate(*target, 1) : cJSON_CreateNull();
	if (!doc) {
		if (err)
			*err = strdup("out of memory");
		return -1;
	}
	int idx = 0;
	for (const cJSON *op = ops->child; op; op = op->next, idx++) {
		if (json_patch_op(&doc, op, idx, &e) != 0)
			break;
	}
	if (e.failed) {
		cJSON_Delete(doc);
		if (err)
			*err = e.msg ? e.msg : strdup("out of memory");
		else
			free(e.msg);
		return -1;
	}
	cJSON_Delete(*target);
	*target = doc;
	return 0;
}

/* ---------------------------------------------------------------- strategic merge patch */

#define DIRECTIVE "$patch"
#define RETAIN_KEYS "$retainKeys"
#define DELETE_PREFIX "$deleteFromPrimitiveList/"
#define ORDER_PREFIX "$setElementOrder/"

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Go's interface equality for the scalar values a merge key can hold; deep for containers. */
static bool value_equal(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return a == b;
	if (cJSON_IsBool(a) && cJSON_IsBool(b))
		return cJSON_IsTrue(a) == cJSON_IsTrue(b);
	return cJSON_Compare(a, b, 1);
}

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Kind of a JSON value in Go terms: 'm' map, 'l' list, 's' string, 'n' number, 'b' bool,
 * 'z' null. */
static char vkind(const cJSON *v)
{
	if (cJSON_IsObject(v))
		return 'm';
	if (cJSON_IsArray(v))
		return 'l';
	if (cJSON_IsString(v))
		return 's';
	if (cJSON_IsNumber(v))
		return 'n';
	if (cJSON_IsBool(v))
		return 'b';
	return 'z';
}

/* Removes null members from maps, recursively (upstream discardNullValuesFromPatch). */
static void discard_nulls(cJSON *v)
{
	cJSON *c = v ? v->child : NULL;
	while (c) {
		cJSON *next = c->next;
		if (cJSON_IsObject(v) && cJSON_IsNull(c))
			cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
		else
			discard_nulls(c);
		c = next;
	}
}

/* Upstream removeDirectives: maps carrying $patch are dropped (returns false); we also drop the
 * other directive keys, which a typed decode would discard anyway. */
static bool remove_directives(cJSON *v)
{
	if (cJSON_IsObject(v)) {
		if (get(v, DIRECTIVE))
			return false;
	}
	cJSON *c = v ? v->child : NULL;
	while (c) {
		cJSON *next = c->next;
		bool drop = !remove_directives(c);
		if (cJSON_IsObject(v) && c->string &&
		    (strcmp(c->string, RETAIN_KEYS) == 0 || has_prefix(c->string, ORDER_PREFIX) ||
		     has_prefix(c->string, DELETE_PREFIX)))
			drop = true;
		if (drop)
			cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
		c = next;
	}
	return true;
}

static cJSON *smp_map(struct perr *e, cJSON *orig, cJSON *patch, const struct smp_type *t);

static void err_no_merge_key(struct perr *e, const cJSON *m, const char *key)
{
	char *s = brief(m);
	perr_set(e, "map: %s does not contain declared merge key: %s", s ? s : "?", key);
	free(s);
}

/* Element kind shared by all elements of the given lists; 0 when there are none, -1 (with e set)
 * when they differ or are lists. */
static int slice_elem_kind(struct perr *e, const cJSON *a, const cJSON *b)
{
	char k = 0;
	const cJSON *lists[2] = {a, b};
	for (int i = 0; i < 2; i++) {
		for (const cJSON *c = lists[i] ? lists[i]->child : NULL; c; c = c->next) {
			char ck = vkind(c);
			if (ck == 'l') {
				perr_set(e, "lists of lists are not supported");
				return -1;
			}
			if (k && k != ck) {
				perr_set(e, "list element types are not identical");
				return -1;
			}
			k = ck;
		}
	}
	return k;
}

/* Index of v in order (by merge key for maps), -1 when absent. */
static int order_index(const cJSON *order, const cJSON *v, const char *mk)
{
	const cJSON *key = mk ? (cJSON_IsObject(v) ? get(v, mk) : NULL) : v;
	int i = 0;
	for (const cJSON *o = order ? order->child : NULL; o; o = o->next, i++) {
		const cJSON *ok = mk ? (cJSON_IsObject(o) ? get(o, mk) : NULL) : o;
		if (mk && (!key || !ok)) {
			if (!key && !ok)
				return i;
			continue;
		}
		if (value_equal(key, ok))
			return i;
	}
	return -1;
}

/* Pointer arrays for ordering work. */
struct vec {
	cJSON **v;
	size_t n, cap;
};

static int vec_push(struct vec *a, cJSON *x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		cJSON **nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* Stable sort of items by their index in order (items absent from order keep their relative
 * position after the ordered ones); $patch:delete maps go last (upstream normalizeSliceOrder). */
static int sort_by_order(struct perr *e, struct vec *items, const cJSON *order, const char *mk)
{
	if (mk) {
		for (size_t i = 0; i < items->n; i++)
			if (!cJSON_IsObject(items->v[i]) || !get(items->v[i], mk)) {
				err_no_merge_key(e, items->v[i], mk);
				return -1;
			}
		for (const cJSON *o = order ? order->child : NULL; o; o = o->next)
			if (!cJSON_IsObject(o) || !get(o, mk)) {
				err_no_merge_key(e, o, mk);
				return -1;
			}
	}
	/* insertion sort: lists here are short */
	for (size_t i = 1; i < items->n; i++) {
		cJSON *x = items->v[i];
		int xi = order_index(order, x, mk);
		size_t j = i;
		while (j > 0) {
			int yi = order_index(order, items->v[j - 1], mk);
			if (xi < 0 || yi < 0 || yi <= xi)
				break;
			items->v[j] = items->v[j - 1];
			j--;
		}
		items->v[j] = x;
	}
	if (mk) {
		size_t w = 0;
		struct vec del = {0};
		for (size_t i = 0; i < items->n; i++) {
			const char *d = cJSON_GetStringValue(get(items->v[i], DIRECTIVE));
			if (d && strcmp(d, "delete") == 0) {
				if (vec_push(&del, items->v[i]) != 0) {
					free(del.v);
					perr_oom(e);
					return -1;
				}
			} else {
				items->v[w++] = items->v[i];
			}
		}
		for (size_t i = 0; i < del.n; i++)
			items->v[w++] = del.v[i];
		free(del.v);
	}
	return 0;
}

/* Reorders the elements of merged (an array we own) in place following upstream
 * normalizeElementOrder: items present in patch_order sorted by it, server-only items sorted by
 * server_order, then interleaved using server_order. */
static int normalize_order(struct perr *e, cJSON *merged, const cJSON *patch_order,
			   const cJSON *server_order, const char *mk)
{
	struct vec pitems = {0}, sitems = {0};
	int rc = -1;
	for (cJSON *c = merged->child; c; c = c->next) {
		if (mk && (!cJSON_IsObject(c) || !get(c, mk))) {
			err_no_merge_key(e, c, mk);
			goto out;
		}
		bool in_patch = order_index(patch_order, c, mk) >= 0;
		if (vec_push(in_patch ? &pitems : &sitems, c) != 0) {
			perr_oom(e);
			goto out;
		}
	}
	if (sort_by_order(e, &pitems, patch_order, mk) != 0 ||
	    sort_by_order(e, &sitems, server_order, mk) != 0)
		goto out;
	/* detach everything, then re-append in the merged order */
	while (merged->child)
		cJSON_DetachItemViaPointer(merged, merged->child);
	size_t i = 0, j = 0;
	while (i < sitems.n || j < pitems.n) {
		cJSON *x;
		if (i >= sitems.n) {
			x = pitems.v[j++];
		} else if (j >= pitems.n) {
			x = sitems.v[i++];
		} else {
			int li = order_index(server_order, sitems.v[i], mk);
			int ri = order_index(server_order, pitems.v[j], mk);
			if (li >= 0 && ri >= 0 && li < ri)
				x = sitems.v[i++];
			else
				x = pitems.v[j++];
		}
		cJSON_AddItemToArray(merged, x); /* cannot fail: x is a valid detached item */
	}
	rc = 0;
out:
	free(pitems.v);
	free(sitems.v);
	return rc;
}

/* A list of scalars (or lists): a $deleteFromPrimitiveList removes the patch's values; else the
 * union without duplicates, in the order normalize_order() gives. In place on orig; patch is
 * only read. -1 with e set. */
static int merge_scalar_slice(struct perr *e, cJSON *orig, const cJSON *patch, bool is_delete_list)
{
	if (is_delete_list) {
		cJSON *c = orig->child;
		while (c) {
			cJSON *next = c->next;
			for (const cJSON *d = patch->child; d; d = d->next)
				if (value_equal(c, d)) {
					cJSON_Delete(cJSON_DetachItemViaPointer(orig, c));
					break;
				}
			c = next;
		}
		return 0;
	}
	cJSON *server_order = cJSON_Duplicate(orig, 1);
	if (!server_order) {
		perr_oom(e);
		return -1;
	}
	/* union without duplicates */
	for (cJSON *p = patch->child; p; p = p->next) {
		bool dup = false;
		for (const cJSON *o = orig->child; o && !dup; o = o->next)
			dup = value_equal(o, p);
		if (dup)
			continue;
		cJSON *cp = cJSON_Duplicate(p, 1);
		if (!cp || !cJSON_AddItemToArray(orig, cp)) {
			cJSON_Delete(cp);
			cJSON_Delete(server_order);
			perr_oom(e);
			return -1;
		}
	}
	/* duplicates already in orig are collapsed as upstream does */
	for (cJSON *o = orig->child; o; o = o->next) {
		cJSON *d = o->next;
		while (d) {
			cJSON *next = d->next;
			if (value_equal(o, d))
				cJSON_Delete(cJSON_DetachItemViaPointer(orig, d));
			d = next;
		}
	}
	int rc = normalize_order(e, orig, patch, server_order, NULL);
	cJSON_Delete(server_order);
	return rc;
}

/* The special elements of a map list (mergeSliceWithSpecialElements): `$patch: delete` removes
 * the element with that merge key from orig, `$patch: replace` sets *replace; both leave patch.
 * -1 with e set. */
static int slice_special_elements(struct perr *e, cJSON *orig, cJSON *patch, const char *mk, bool *replace)
{
	cJSON *c = patch->child;
	while (c) {
		cJSON *next = c->next;
		const cJSON *dir = get(c, DIRECTIVE);
		if (dir) {
			const char *d = cJSON_GetStringValue(dir);
			if (d && strcmp(d, "delete") == 0) {
				const cJSON *mv = get(c, mk);
				if (!mv) {
					err_no_merge_key(e, c, mk);
					return -1;
				}
				cJSON *o = orig->child;
				while (o) {
					cJSON *onext = o->next;
					if (!cJSON_IsObject(o)) {
						perr_set(e, "value for key %s is not a map.", mk);
						return -1;
					}
					if (value_equal(get(o, mk), mv))
						cJSON_Delete(cJSON_DetachItemViaPointer(orig, o));
					o = onext;
				}
			} else if (d && strcmp(d, "replace") == 0) {
				*replace = true;
			} else if (d && strcmp(d, "merge") == 0) {
				perr_set(e, "merging lists cannot yet be specified in the patch");
				return -1;
			} else {
				char *s = brief(c);
				perr_set(e, "unknown patch type: %s in map: %s", d ? d : "?", s ? s : "?");
				free(s);
				return -1;
			}
			cJSON_Delete(cJSON_DetachItemViaPointer(patch, c));
		}
		c = next;
	}
	return 0;
}

/* mergeSliceWithoutSpecialElements for maps: each patch element merges into the orig element
 * with its merge key (or is added), then normalize_order() fixes the order from the patch order
 * and the server order. Empties patch into orig. -1 with e set. */
static int merge_map_slice(struct perr *e, cJSON *orig, cJSON *patch, const struct smp_type *elem, const char *mk)
{
	cJSON *server_order = cJSON_Duplicate(orig, 1);
	cJSON *patch_order = cJSON_Duplicate(patch, 1);
	int rc = -1;
	if (!server_order || !patch_order) {
		perr_oom(e);
		goto out;
	}
	while (patch->child) {
		cJSON *p = cJSON_DetachItemViaPointer(patch, patch->child);
		const cJSON *mv = get(p, mk);
		if (!mv) {
			err_no_merge_key(e, p, mk);
			cJSON_Delete(p);
			goto out;
		}
		cJSON *found = NULL;
		for (cJSON *o = orig->child; o; o = o->next) {
			if (!cJSON_IsObject(o)) {
				perr_set(e, "value for key %s is not a map.", mk);
				cJSON_Delete(p);
				goto out;
			}
			if (value_equal(get(o, mk), mv)) {
				found = o;
				break;
			}
		}
		/* Position does not matter here: normalize_order() below fixes the final order from
		 * the patch order and the server order alone. */
		cJSON *old = found ? cJSON_DetachItemViaPointer(orig, found) : NULL;
		cJSON *merged = smp_map(e, old, p, elem);
		if (!merged)
			goto out;
		cJSON_AddItemToArray(orig, merged);
	}
	rc = normalize_order(e, orig, patch_order, server_order, mk);
out:
	cJSON_Delete(patch_order);
	cJSON_Delete(server_order);
	return rc;
}

/* Merges patch (owned) into orig (owned) as a merging list; returns the merged list (owned) or
 * NULL with e set. elem: struct type of map elements. */
static cJSON *smp_slice(struct perr *e, cJSON *orig, cJSON *patch, const struct smp_type *elem,
			const char *mk, bool is_delete_list)
{
	if (!orig->child && !patch->child) {
		cJSON_Delete(patch);
		return orig;
	}
	int kind = slice_elem_kind(e, orig, patch);
	if (kind < 0)
		goto fail;
	if (kind != 'm') {
		if (merge_scalar_slice(e, orig, patch, is_delete_list) != 0)
			goto fail;
		cJSON_Delete(patch);
		return orig;
	}
	if (!mk) {
		perr_set(e, "cannot merge lists without merge key for type map");
		goto fail;
	}
	bool replace = false;
	if (slice_special_elements(e, orig, patch, mk, &replace) != 0)
		goto fail;
	if (replace) {
		cJSON_Delete(orig);
		orig = patch;
		patch = cJSON_CreateArray();
		if (!patch) {
			perr_oom(e);
			goto fail;
		}
	}
	if (merge_map_slice(e, orig, patch, elem, mk) != 0)
		goto fail;
	cJSON_Delete(patch);
	return orig;
fail:
	cJSON_Delete(orig);
	cJSON_Delete(patch);
	return NULL;
}

/* Handles a list field whose strategy is known: merge or replace. Consumes both. */
static cJSON *smp_slice_handler(struct perr *e, cJSON *orig, cJSON *patch,
				const struct smp_field *f, bool is_delete_list)
{
	if (f && (f->flags & SMP_LIST_MERGE))
		return smp_slice(e, orig, patch, f->type, f->merge_key, is_delete_list);
	cJSON_Delete(orig);
	return patch;
}

/* Validates that the patch list follows the $setElementOrder list (upstream
 * validatePatchWithSetOrderList). */
static int validate_order(struct perr *e, const cJSON *patch_list, const cJSON *order,
			  const char *mk)
{
	if (!patch_list || !order->child || !patch_list->child)
		return 0;
	const cJSON *p = patch_list->child;
	const cJSON *o = order->child;
	for (;;) {
		/* skip $patch:delete and other directive elements */
		while (p && mk) {
			if (!cJSON_IsObject(p)) {
				perr_set(e, "invalid patch: element of %s list is not a map", mk);
				return -1;
			}
			if (!get(p, DIRECTIVE))
				break;
			p = p->next;
		}
		if (!p || !o)
			break;
		bool eq;
		if (mk) {
			const cJSON *a = get(p, mk), *b = cJSON_IsObject(o) ? get(o, mk) : NULL;
			if (!a) {
				err_no_merge_key(e, p, mk);
				return -1;
			}
			if (!b) {
				err_no_merge_key(e, o, mk);
				return -1;
			}
			eq = value_equal(a, b);
		} else {
			eq = value_equal(p, o);
		}
		if (eq)
			p = p->next;
		o = o->next;
	}
	while (p && mk && cJSON_IsObject(p) && get(p, DIRECTIVE))
		p = p->next;
	if (p && !o) {
		char *a = brief(patch_list), *b = brief(order);
		perr_set(e, "The order in patch list:\n%s\n doesn't match %s list:\n%s\n", a ? a : "?",
			 ORDER_PREFIX, b ? b : "?");
		free(a);
		free(b);
		return -1;
	}
	return 0;
}

/* Processes every $setElementOrder/<key> of patch against orig (both objects we own). */
static int smp_set_element_order(struct perr *e, cJSON *orig, cJSON *patch,
				 const struct smp_type *t)
{
	for (;;) {
		cJSON *c = patch->child;
		while (c && !(c->string && has_prefix(c->string, ORDER_PREFIX)))
			c = c->next;
		if (!c)
			return 0;
		cJSON *order = cJSON_DetachItemViaPointer(patch, c);
		if (!cJSON_IsArray(order)) {
			perr_set(e, "invalid patch format of setElementOrder list");
			cJSON_Delete(order);
			return -1;
		}
		const char *key = order->string + strlen(ORDER_PREFIX);
		if (!*key) {
			perr_set(e, "invalid patch format of setElementOrder list");
			cJSON_Delete(order);
			return -1;
		}
		cJSON *olist = cJSON_GetObjectItemCaseSensitive(orig, key);
		cJSON *plist = cJSON_GetObjectItemCaseSensitive(patch, key);
		if ((olist && !cJSON_IsArray(olist)) || (plist && !cJSON_IsArray(plist))) {
			perr_set(e, "invalid patch: %s is not a list", key);
			cJSON_Delete(order);
			return -1;
		}
		const struct smp_field *f = smp_lookup(t, key);
		const char *mk = f && (f->flags & SMP_LIST_MERGE) ? f->merge_key : NULL;
		if (validate_order(e, plist, order, mk) != 0) {
			cJSON_Delete(order);
			return -1;
		}
		if (!olist && !plist) {
			cJSON_Delete(order);
			continue;
		}
		cJSON *server_order = olist ? cJSON_Duplicate(olist, 1) : cJSON_CreateArray();
		if (!server_order) {
			cJSON_Delete(order);
			perr_oom(e);
			return -1;
		}
		cJSON *merged;
		if (olist && !plist) {
			merged = cJSON_DetachItemViaPointer(orig, olist);
		} else if (!olist) {
			merged = cJSON_DetachItemViaPointer(patch, plist);
			if (!remove_directives(merged)) {
				cJSON_Delete(merged);
				merged = cJSON_CreateArray();
			}
			discard_nulls(merged);
		} else {
			cJSON *o = cJSON_DetachItemViaPointer(orig, olist);
			cJSON *p = cJSON_DetachItemViaPointer(patch, plist);
			merged = smp_slice_handler(e, o, p, f, false);
		}
		if (!merged) {
			cJSON_Delete(server_order);
			cJSON_Delete(order);
			if (!e->failed)
				perr_oom(e);
			return -1;
		}
		int rc = 0;
		if (merged->child && cJSON_IsArray(merged))
			rc = normalize_order(e, merged, order, server_order, mk);
		cJSON_Delete(server_order);
		if (rc == 0 && !cJSON_AddItemToObject(orig, key, merged)) {
			perr_oom(e);
			rc = -1;
		} else if (rc != 0) {
			cJSON_Delete(merged);
		}
		cJSON_Delete(order);
		if (rc != 0)
			return -1;
	}
}

static int smp_retain_keys(struct perr *e, cJSON *orig, cJSON *patch)
{
	cJSON *rk = cJSON_DetachItemFromObjectCaseSensitive(patch, RETAIN_KEYS);
	if (!rk)
		return 0;
	int rc = -1;
	if (!cJSON_IsArray(rk)) {
		perr_set(e, "invalid patch format of retainKeys");
		goto out;
	}
	for (const cJSON *p = patch->child; p; p = p->next) {
		if (!p->string || cJSON_IsNull(p) || has_prefix(p->string, DELETE_PREFIX) ||
		    has_prefix(p->string, ORDER_PREFIX))
			continue;
		bool found = false;
		for (const cJSON *k = rk->child; k && !found; k = k->next)
			found = cJSON_IsString(k) && strcmp(k->valuestring, p->string) == 0;
		if (!found) {
			perr_set(e, "invalid patch format of retainKeys");
			goto out;
		}
	}
	cJSON *o = orig->child;
	while (o) {
		cJSON *next = o->next;
		bool found = false;
		for (const cJSON *k = rk->child; k && !found; k = k->next)
			found = cJSON_IsString(k) && o->string && strcmp(k->valuestring, o->string) == 0;
		if (!found)
			cJSON_Delete(cJSON_DetachItemViaPointer(orig, o));
		o = next;
	}
	rc = 0;
out:
	cJSON_Delete(rk);
	return rc;
}

/* Sets orig[key] = v (consumes v), replacing any existing member. */
static int obj_set(struct perr *e, cJSON *orig, const char *key, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(orig, key)) {
		/* key may point into v->string, which cJSON frees while replacing: copy it */
		char *k = strdup(key);
		if (!k || !cJSON_ReplaceItemInObjectCaseSensitive(orig, k, v)) {
			free(k);
			cJSON_Delete(v);
			perr_oom(e);
			return -1;
		}
		free(k);
		return 0;
	}
	if (!cJSON_AddItemToObject(orig, key, v)) {
		cJSON_Delete(v);
		perr_oom(e);
		return -1;
	}
	return 0;
}

/* One member of a map patch (upstream mergeMap's loop body). Consumes pv; key is a copy of its
 * name (without the $deleteFromPrimitiveList/ prefix handling). Returns 0 or -1 with e set. */
static int smp_map_member(struct perr *e, cJSON *orig, cJSON *pv, const char *key,
			  const struct smp_type *t)
{
	bool is_delete_list = false;
	if (has_prefix(key, DELETE_PREFIX)) {
		key += strlen(DELETE_PREFIX);
		is_delete_list = true;
		if (!*key) {
			perr_set(e, "invalid patch format of primitive list");
			cJSON_Delete(pv);
			return -1;
		}
	}
	if (strcmp(key, RETAIN_KEYS) == 0 || has_prefix(key, ORDER_PREFIX)) {
		cJSON_Delete(pv);
		return 0;
	}
	if (cJSON_IsNull(pv)) {
		cJSON_DeleteItemFromObjectCaseSensitive(orig, key);
		cJSON_Delete(pv);
		return 0;
	}
	cJSON *ov = cJSON_GetObjectItemCaseSensitive(orig, key);
	char ok = ov ? vkind(ov) : 0, pk = vkind(pv);
	if (!ov || ok != pk || (pk != 'm' && pk != 'l')) {
		if (is_delete_list && (!ov || ok != pk)) {
			cJSON_Delete(pv);
			return 0;
		}
		discard_nulls(pv);
		if (!remove_directives(pv)) {
			cJSON_Delete(pv);
			cJSON_DeleteItemFromObjectCaseSensitive(orig, key);
			return 0;
		}
		return obj_set(e, orig, key, pv);
	}
	const struct smp_field *f = smp_lookup(t, key);
	cJSON *old = cJSON_DetachItemViaPointer(orig, ov);
	cJSON *merged;
	if (pk == 'm') {
		if (f && (f->flags & SMP_MAP_REPLACE)) {
			cJSON_Delete(old);
			merged = pv;
		} else {
			merged = smp_map(e, old, pv, f ? f->type : NULL);
		}
	} else {
		merged = smp_slice_handler(e, old, pv, f, is_delete_list);
	}
	if (!merged)
		return -1;
	if (!cJSON_AddItemToObject(orig, key, merged)) {
		cJSON_Delete(merged);
		perr_oom(e);
		return -1;
	}
	return 0;
}

/* Upstream mergeMap with MergeParallelList and IgnoreUnmatchedNulls. Consumes orig (may be NULL)
 * and patch; returns the merged object or NULL with e set. */
static cJSON *smp_map(struct perr *e, cJSON *orig, cJSON *patch, const struct smp_type *t)
{
	if (!cJSON_IsObject(patch)) {
		perr_set(e, "invalid patch: expected a map");
		goto fail;
	}
	const cJSON *dir = get(patch, DIRECTIVE);
	if (dir) {
		const char *d = cJSON_GetStringValue(dir);
		if (d && strcmp(d, "replace") == 0) {
			cJSON_DeleteItemFromObjectCaseSensitive(patch, DIRECTIVE);
			cJSON_Delete(orig);
			discard_nulls(patch);
			return patch;
		}
		if (d && strcmp(d, "delete") == 0) {
			cJSON_Delete(orig);
			cJSON_Delete(patch);
			cJSON *empty = cJSON_CreateObject();
			if (!empty)
				perr_oom(e);
			return empty;
		}
		char *s = brief(patch);
		perr_set(e, "unknown patch type: %s in map: %s", d ? d : "?", s ? s : "?");
		free(s);
		goto fail;
	}
	if (!orig) {
		orig = cJSON_CreateObject();
		if (!orig) {
			perr_oom(e);
			goto fail;
		}
	}
	if (!cJSON_IsObject(orig)) {
		perr_set(e, "invalid original: expected a map");
		goto fail;
	}
	if (smp_retain_keys(e, orig, patch) != 0)
		goto fail;
	if (smp_set_element_order(e, orig, patch, t) != 0)
		goto fail;
	while (patch->child) {
		cJSON *pv = cJSON_DetachItemViaPointer(patch, patch->child);
		if (!pv->string) {
			cJSON_Delete(pv);
			continue;
		}
		/* pv and its name are consumed by the merge: work on a copy of the key */
		char *key = strdup(pv->string);
		if (!key) {
			cJSON_Delete(pv);
			perr_oom(e);
			goto fail;
		}
		int rc = smp_map_member(e, orig, pv, key, t);
		free(key);
		if (rc != 0)
			goto fail;
	}
	cJSON_Delete(patch);
	return orig;
fail:
	if (!e->failed)
		perr_oom(e);
	cJSON_Delete(orig);
	cJSON_Delete(patch);
	return NULL;
}

int apis_strategic_merge_patch(cJSON **target, const cJSON *patch, const char *kind, char **err)
{
	struct perr e = {0};
	if (err)
		*err = NULL;
	if (!target || !cJSON_IsObject(patch)) {
		if (err)
			*err = strdup("strategic merge patch must be a JSON object");
		return -1;
	}
	cJSON *orig = cJSON_IsObject(*target) ? cJSON_Duplicate(*target, 1) : NULL;
	cJSON *p = cJSON_Duplicate(patch, 1);
	if ((*target && cJSON_IsObject(*target) && !orig) || !p) {
		cJSON_Delete(orig);
		cJSON_Delete(p);
		if (err)
			*err = strdup("out of memory");
		return -1;
	}
	cJSON *merged = smp_map(&e, orig, p, smp_kind_type(kind));
	if (!merged) {
		if (err)
			*err = e.msg ? e.msg : strdup("out of memory");
		else
			free(e.msg);
		return -1;
	}
	free(e.msg);
	cJSON_Delete(*target);
	*target = merged;
	return 0;
}
