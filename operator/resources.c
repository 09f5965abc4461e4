/* Desired owned objects (templates filled with the namespace, image and plan), and the
 * containment/overlay comparisons behind drift repair. */
#include "operator/resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "operator/history.h"
#include "operator/extender_tls.h"
#include "operator/plugins.h"

static const struct op_kind_info kinds[OP_OBJ_COUNT] = {
	[OP_OBJ_CONFIGMAP] = { "", "v1", "configmaps", "ConfigMap", true, OP_CONFIGMAP_NAME, "data" },
	[OP_OBJ_SERVICE_ACCOUNT] = { "", "v1", "serviceaccounts", "ServiceAccount", true, OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_CLUSTER_ROLE] = { "rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false,
				  OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_CLUSTER_ROLE_BINDING] = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings",
					  "ClusterRoleBinding", false, OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_ROLE] = { "rbac.authorization.k8s.io", "v1", "roles", "Role", true, OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_ROLE_BINDING] = { "rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true,
				  OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_SERVICE] = { "", "v1", "services", "Service", true, OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_DEPLOYMENT] = { "apps", "v1", "deployments", "Deployment", true, OP_SCHEDULER_NAME, NULL },
	[OP_OBJ_PDB] = { "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, OP_SCHEDULER_NAME, NULL },
};

const struct op_kind_info *op_kind_info(enum op_kind k)
{
	return k >= 0 && k < OP_OBJ_COUNT ? &kinds[k] : NULL;
}

/* What schedkit-scheduler reads and writes cluster-wide, and nothing more: the requests its code
 * makes (scheduler/daemon: the pod, node and PDB informers, bindings, the pod annotation and status
 * patches, preemption's deletes; kube/events.c: events.k8s.io Events; the volume plugins' informers
 * and VolumeBinding's patches; the TokenReviews and SubjectAccessReviews of its endpoints). e2e/tests/rbac_least_privilege.sh checks both ways. */
static const char cluster_role_rules[] =
	"- apiGroups: [events.k8s.io]\n  resources: [events]\n  verbs: [create, patch]\n"
	"- apiGroups: ['']\n  resources: [nodes]\n  verbs: [list, watch]\n"
	"- apiGroups: ['']\n  resources: [pods]\n  verbs: [delete, list, patch, watch]\n"
	"- apiGroups: ['']\n  resources: [pods/binding]\n  verbs: [create]\n"
	"- apiGroups: ['']\n  resources: [pods/status]\n  verbs: [patch]\n"
	/* the volume plugins' informers (scheduler/daemon/volumes.c); VolumeBinding's PreBind patches a
	 * claim's selected-node annotation and a PV's claimRef */
	"- apiGroups: ['']\n  resources: [persistentvolumeclaims, persistentvolumes]\n  verbs: [list, patch, watch]\n"
	/* the listers' informers (scheduler/daemon/listers.c): PodTopologySpread's default selectors,
	 * InterPodAffinity's namespaceSelector */
	"- apiGroups: ['']\n  resources: [namespaces, replicationcontrollers, services]\n  verbs: [list, watch]\n"
	"- apiGroups: [apps]\n  resources: [replicasets, statefulsets]\n  verbs: [list, watch]\n"
	"- apiGroups: [policy]\n  resources: [poddisruptionbudgets]\n  verbs: [list, watch]\n"
	/* VolumeBinding's CSIStorageCapacity check and NodeVolumeLimits' VolumeAttachments too */
	"- apiGroups: [storage.k8s.io]\n  resources: [csidrivers, csinodes, csistoragecapacities, storageclasses, "
	"volumeattachments]\n  verbs: [list, watch]\n"
	/* the delegated authentication and authorization of /metrics and /configz (scheduler/daemon/
	 * serve.c, kube/delegate.c), upstream's system:auth-delegator */
	"- apiGroups: [authentication.k8s.io]\n  resources: [tokenreviews]\n  verbs: [create]\n"
	"- apiGroups: [authorization.k8s.io]\n  resources: [subjectaccessreviews]\n  verbs: [create]\n";

/* In the scheduler's namespace: creating its Lease, then only its own Lease, and only its own
 * ConfigMap (read and watched through the API for a fast reload, docs/operator.md). */
static const char role_rules_fmt[] =
	"- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [create]\n"
	"- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  resourceNames: [%s]\n"
	"  verbs: [get, update]\n"
	"- apiGroups: ['']\n  resources: [configmaps]\n  resourceNames: [%s]\n  verbs: [list, watch]\n";

static const char deployment_spec[] =
	"selector:\n"
	"  matchLabels:\n"
	"    app.kubernetes.io/name: schedkit-scheduler\n"
	"strategy:\n"
	"  type: RollingUpdate\n"
	"  rollingUpdate: {maxUnavailable: 0, maxSurge: 1}\n"
	"template:\n"
	"  metadata:\n"
	"    labels:\n"
	"      app.kubernetes.io/name: schedkit-scheduler\n"
	"      app.kubernetes.io/component: scheduler\n"
	"      app.kubernetes.io/part-of: schedkit\n"
	"  spec:\n"
	"    serviceAccountName: schedkit-scheduler\n"
	/* replicas on different nodes (required) and zones (preferred); pod-template-hash counts
	 * each ReplicaSet apart, so a rolling update (maxSurge 1) is never blocked by the old pods */
	"    topologySpreadConstraints:\n"
	"    - maxSkew: 1\n"
	"      topologyKey: kubernetes.io/hostname\n"
	"      whenUnsatisfiable: DoNotSchedule\n"
	"      nodeTaintsPolicy: Honor\n"
	"      labelSelector: {matchLabels: {app.kubernetes.io/name: schedkit-scheduler}}\n"
	"      matchLabelKeys: [pod-template-hash]\n"
	"    - maxSkew: 1\n"
	"      topologyKey: topology.kubernetes.io/zone\n"
	"      whenUnsatisfiable: ScheduleAnyway\n"
	"      nodeTaintsPolicy: Honor\n"
	"      labelSelector: {matchLabels: {app.kubernetes.io/name: schedkit-scheduler}}\n"
	"      matchLabelKeys: [pod-template-hash]\n"
	"    securityContext:\n"
	"      runAsNonRoot: true\n"
	"      runAsUser: 65532\n"
	"      runAsGroup: 65532\n"
	"      seccompProfile: {type: RuntimeDefault}\n"
	"    containers:\n"
	"    - name: scheduler\n"
	"      image: set-by-the-operator\n"
	"      imagePullPolicy: IfNotPresent\n"
	"      command: [schedkit-scheduler]\n"
	"      args: []\n"
	"      ports:\n"
	"      - {name: metrics, containerPort: 10259, protocol: TCP}\n"
	"      livenessProbe:\n"
	"        httpGet: {path: /healthz, port: 10259, scheme: HTTPS}\n"
	"        initialDelaySeconds: 15\n"
	"        periodSeconds: 10\n"
	"        failureThreshold: 3\n"
	"      readinessProbe:\n"
	"        httpGet: {path: /readyz, port: 10259, scheme: HTTPS}\n"
	"        periodSeconds: 5\n"
	"        failureThreshold: 3\n"
	"      resources:\n"
	"        requests: {}\n"
	"      securityContext:\n"
	"        allowPrivilegeEscalation: false\n"
	"        readOnlyRootFilesystem: true\n"
	"        capabilities: {drop: [ALL]}\n"
	"      volumeMounts:\n"
	"      - {name: config, mountPath: /etc/schedkit, readOnly: true}\n"
	"    volumes:\n"
	"    - name: config\n"
	"      configMap: {name: schedkit-scheduler-config}\n";

static cJSON *parse(const char *yaml)
{
	return kube_yaml_parse_one(yaml, strlen(yaml), NULL);
}

static cJSON *labels_new(void)
{
	cJSON *l = cJSON_CreateObject();
	if (!l || !cJSON_AddStringToObject(l, "app.kubernetes.io/name", OP_SCHEDULER_NAME) ||
	    !cJSON_AddStringToObject(l, "app.kubernetes.io/component", "scheduler") ||
	    !cJSON_AddStringToObject(l, "app.kubernetes.io/part-of", "schedkit") ||
	    !cJSON_AddStringToObject(l, OP_LABEL_MANAGED_BY, OP_MANAGED_BY)) {
		cJSON_Delete(l);
		return NULL;
	}
	return l;
}

/* apiVersion, kind, metadata{name, namespace, labels}. */
static cJSON *object_new(enum op_kind k, const char *ns)
{
	const struct op_kind_info *ki = &kinds[k];
	char api[96];
	snprintf(api, sizeof api, "%s%s%s", ki->group, *ki->group ? "/" : "", ki->version);
	cJSON *o = cJSON_CreateObject();
	cJSON *md = o ? cJSON_CreateObject() : NULL;
	cJSON *labels = labels_new();
	if (!o || !md || !labels || !cJSON_AddStringToObject(o, "apiVersion", api) ||
	    !cJSON_AddStringToObject(o, "kind", ki->kind) || !cJSON_AddItemToObject(o, "metadata", md)) {
		cJSON_Delete(md);
		goto fail;
	}
	if (!cJSON_AddStringToObject(md, "name", ki->name) ||
	    (ki->namespaced && !cJSON_AddStringToObject(md, "namespace", ns)) ||
	    !cJSON_AddItemToObject(md, "labels", labels)) {
		labels = NULL;
		goto fail;
	}
	return o;
fail:
	cJSON_Delete(labels);
	cJSON_Delete(o);
	return NULL;
}

static int add(cJSON *obj, const char *field, cJSON *item)
{
	if (!item)
		return -1;
	if (!cJSON_AddItemToObject(obj, field, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

static cJSON *subject_list(const char *ns)
{
	cJSON *arr = cJSON_CreateArray();
	cJSON *s = cJSON_CreateObject();
	if (!arr || !s || !cJSON_AddStringToObject(s, "kind", "ServiceAccount") ||
	    !cJSON_AddStringToObject(s, "name", OP_SCHEDULER_NAME) || !cJSON_AddStringToObject(s, "namespace", ns) ||
	    !cJSON_AddItemToArray(arr, s)) {
		cJSON_Delete(s);
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

static cJSON *role_ref(const char *kind)
{
	cJSON *r = cJSON_CreateObject();
	if (!r || !cJSON_AddStringToObject(r, "apiGroup", "rbac.authorization.k8s.io") ||
	    !cJSON_AddStringToObject(r, "kind", kind) || !cJSON_AddStringToObject(r, "name", OP_SCHEDULER_NAME)) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

/* One init container per accepted SchedulerPlugin (sorted by name): its image copies the plugin
 * files into the emptyDir the scheduler reads with --plugin-dir, before the scheduler starts. */
static cJSON *plugin_init_container(const struct op_plugin_result *r)
{
	char name[128];
	snprintf(name, sizeof name, OP_PLUGIN_CONTAINER_PREFIX "%s", r->name);
	cJSON *c = parse("securityContext:\n"
			 "  allowPrivilegeEscalation: false\n"
			 "  readOnlyRootFilesystem: true\n"
			 "  capabilities: {drop: [ALL]}\n"
			 "volumeMounts:\n"
			 "- {name: " OP_PLUGIN_VOLUME ", mountPath: " OP_PLUGIN_DIR "}\n");
	cJSON *cmd = cJSON_CreateArray();
	const char *argv[] = { "cp", "-f" };
	cJSON *head = kube_json_string_array(argv, 2), *files = kube_json_string_array((const char *const *)r->files, r->nfiles);
	cJSON *item = NULL;
	if (!c || !cmd || !head || !files)
		goto fail;
	while (head->child)
		cJSON_AddItemToArray(cmd, cJSON_DetachItemViaPointer(head, head->child));
	while (files->child)
		cJSON_AddItemToArray(cmd, cJSON_DetachItemViaPointer(files, files->child));
	if (!(item = cJSON_CreateString(OP_PLUGIN_DIR "/")) || !cJSON_AddItemToArray(cmd, item))
		goto fail;
	item = NULL;
	/* name, image, pull policy and command first, as a reader expects them */
	cJSON *out = cJSON_CreateObject();
	if (!out || !cJSON_AddStringToObject(out, "name", name) || !cJSON_AddStringToObject(out, "image", r->image) ||
	    (r->pull_policy && !cJSON_AddStringToObject(out, "imagePullPolicy", r->pull_policy)) ||
	    !cJSON_AddItemToObject(out, "command", cmd)) {
		cJSON_Delete(out);
		goto fail;
	}
	cmd = NULL;
	while (c->child)
		cJSON_AddItemToArray(out, cJSON_DetachItemViaPointer(c, c->child));
	cJSON_Delete(c);
	cJSON_Delete(head);
	cJSON_Delete(files);
	return out;
fail:
	cJSON_Delete(item);
	cJSON_Delete(c);
	cJSON_Delete(cmd);
	cJSON_Delete(head);
	cJSON_Delete(files);
	return NULL;
}

/* With accepted SchedulerPlugins: the emptyDir, its init containers, --plugin-dir and the
 * plugins-hash on the pod template (a changed set rolls the Deployment). Without any, nothing:
 * the Deployment stays byte for byte what it was before SchedulerPlugins existed. */
static int add_plugins(cJSON *spec, cJSON *container, const struct op_plugin_set *ps)
{
	cJSON *tmeta = kube_obj_get(spec, "template.metadata"), *tspec = kube_obj_get(spec, "template.spec");
	cJSON *ann = cJSON_CreateObject();
	if (!tmeta || !tspec || add(tmeta, "annotations", ann) ||
	    !cJSON_AddStringToObject(ann, OP_PLUGINS_HASH_ANNOTATION, ps->hash))
		return -1;
	cJSON *inits = cJSON_CreateArray();
	if (add(tspec, "initContainers", inits))
		return -1;
	for (int i = 0; i < ps->n; i++) {
		if (!ps->items[i].accepted)
			continue;
		cJSON *ic = plugin_init_container(&ps->items[i]);
		if (!ic || !cJSON_AddItemToArray(inits, ic)) {
			cJSON_Delete(ic);
			return -1;
		}
	}
	cJSON *arg = cJSON_CreateString("--plugin-dir=" OP_PLUGIN_DIR);
	if (!arg || !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(container, "args"), arg)) {
		cJSON_Delete(arg);
		return -1;
	}
	cJSON *mount = parse("{name: " OP_PLUGIN_VOLUME ", mountPath: " OP_PLUGIN_DIR ", readOnly: true}\n");
	if (!mount || !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(container, "volumeMounts"), mount)) {
		cJSON_Delete(mount);
		return -1;
	}
	cJSON *vol = parse("{name: " OP_PLUGIN_VOLUME ", emptyDir: {}}\n");
	if (!vol || !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(tspec, "volumes"), vol)) {
		cJSON_Delete(vol);
		return -1;
	}
	return 0;
}

static int add_copy(cJSON *obj, const char *field, const cJSON *v)
{
	return v ? add(obj, field, cJSON_Duplicate(v, 1)) : 0;
}

/* Appends copies of the items of extra to the array obj.field. */
static int append_copies(cJSON *obj, const char *field, const cJSON *extra)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, field);
	const cJSON *e;
	cJSON_ArrayForEach(e, extra) {
		cJSON *d = cJSON_Duplicate(e, 1);
		if (!d || !cJSON_AddItemToArray(arr, d)) {
			cJSON_Delete(d);
			return -1;
		}
	}
	return 0;
}

/* Priority class, resources (requests and a memory limit by default), nodeSelector,
 * tolerations and extra volumes/mounts: defaults overridden by the installation's settings. */
static int apply_settings(cJSON *pod, cJSON *c, const struct op_resources_opts *opts)
{
	const struct op_settings *st = opts->settings;
	const char *pc = st && st->priority_class ? st->priority_class : OP_DEFAULT_PRIORITY_CLASS;
	if (!pod || (*pc && !cJSON_AddStringToObject(pod, "priorityClassName", pc)))
		return -1;
	if (st && st->resources) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(c, "resources", cJSON_Duplicate(st->resources, 1)))
			return -1;
	} else {
		cJSON *req = kube_obj_get(c, "resources.requests");
		cJSON *lim = cJSON_CreateObject();
		if (!req || add(cJSON_GetObjectItemCaseSensitive(c, "resources"), "limits", lim) ||
		    !cJSON_AddStringToObject(req, "cpu", opts->cpu_request ? opts->cpu_request : "100m") ||
		    !cJSON_AddStringToObject(req, "memory", opts->memory_request ? opts->memory_request : "128Mi") ||
		    !cJSON_AddStringToObject(lim, "memory", OP_DEFAULT_MEMORY_LIMIT))
			return -1;
	}
	if (!st)
		return 0;
	if (add_copy(pod, "nodeSelector", st->node_selector) || add_copy(pod, "tolerations", st->tolerations) ||
	    append_copies(pod, "volumes", st->volumes) || append_copies(c, "volumeMounts", st->volume_mounts))
		return -1;
	return 0;
}

static int fill_deployment(cJSON *o, const struct op_resources_opts *opts, const char *ns, int replicas,
			   const struct op_plugin_set *plugins, const char *config_yaml)
{
	cJSON *tmpl = parse(deployment_spec);
	cJSON *spec = cJSON_CreateObject();
	if (!tmpl || !spec || add(spec, "replicas", kube_json_create_int64(replicas))) {
		cJSON_Delete(tmpl);
		cJSON_Delete(spec);
		return -1;
	}
	/* replicas first, then the template's fields in their order */
	while (tmpl->child) {
		cJSON *it = cJSON_DetachItemViaPointer(tmpl, tmpl->child);
		cJSON_AddItemToArray(spec, it); /* appends to the object, keeping the item's key */
	}
	cJSON_Delete(tmpl);
	if (add(o, "spec", spec))
		return -1;
	cJSON *c = cJSON_GetArrayItem(kube_obj_get(spec, "template.spec.containers"), 0);
	if (!c || kube_obj_set_string(c, "image", opts->scheduler_image ? opts->scheduler_image : OP_DEFAULT_IMAGE))
		return -1;
	cJSON *args = cJSON_CreateArray();
	if (!args)
		return -1;
	const char *lines[8];
	char a0[512], a1[512], a2[512], a3[64], a4[512];
	snprintf(a0, sizeof a0, "--config=%s/%s", OP_CONFIG_DIR, OP_CONFIG_KEY);
	snprintf(a1, sizeof a1, "--leader-elect-resource-namespace=%s", ns);
	snprintf(a2, sizeof a2, "--leader-elect-resource-name=%s", OP_SCHEDULER_NAME);
	snprintf(a3, sizeof a3, "--v=%d", opts->scheduler_verbosity);
	lines[0] = a0;
	lines[1] = "--leader-elect=true";
	lines[2] = a1;
	lines[3] = a2;
	lines[4] = "--secure-port=10259";
	lines[5] = a3;
	lines[6] = "--plugin-dir=" OP_IMAGE_PLUGIN_DIR; /* the image's modules, SchedulerPlugins or not */
	/* the ConfigMap read through the API too: a change runs within a second, not after kubelet's
	 * sync of the mounted file (scheduler/daemon/cmwatch.c) */
	snprintf(a4, sizeof a4, "--config-configmap=%s/%s", ns, OP_CONFIGMAP_NAME);
	lines[7] = a4;
	for (int i = 0; i < 8; i++) {
		cJSON *s = cJSON_CreateString(lines[i]);
		if (!s || !cJSON_AddItemToArray(args, s)) {
			cJSON_Delete(s);
			cJSON_Delete(args);
			return -1;
		}
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(c, "args", args)) {
		cJSON_Delete(args);
		return -1;
	}
	if (apply_settings(kube_obj_get(spec, "template.spec"), c, opts))
		return -1;
	if (plugins && plugins->naccepted > 0 && add_plugins(spec, c, plugins))
		return -1;
	if (op_extender_tls_mounts(config_yaml, kube_obj_get(spec, "template.spec"), c))
		return -1;
	return 0;
}

cJSON *op_desired_object(enum op_kind k, const struct op_resources_opts *opts, const struct op_plan *plan)
{
	if (!op_kind_info(k))
		return NULL;
	struct op_resources_opts none = { 0 };
	if (!opts)
		opts = &none;
	const char *ns = opts->namespace ? opts->namespace : OP_DEFAULT_NAMESPACE;
	cJSON *o = object_new(k, ns);
	if (!o)
		return NULL;
	char buf[1024];
	switch (k) {
	case OP_OBJ_CONFIGMAP: {
		cJSON *data = cJSON_CreateObject();
		if (add(o, "data", data))
			goto fail;
		if (plan && plan->config_yaml) {
			cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
			cJSON *ann = cJSON_CreateObject();
			if (!cJSON_AddStringToObject(data, OP_CONFIG_KEY, plan->config_yaml) || add(md, "annotations", ann) ||
			    !cJSON_AddStringToObject(ann, OP_CONFIG_HASH_ANNOTATION, plan->config_hash))
				goto fail;
			if (plan->history) {
				char *h = kube_json_print(plan->history);
				bool ok = h && cJSON_AddStringToObject(ann, OP_PROFILE_HASHES_ANNOTATION, h);
				free(h);
				if (!ok)
					goto fail;
			}
		}
		break;
	}
	case OP_OBJ_SERVICE_ACCOUNT:
		break;
	case OP_OBJ_CLUSTER_ROLE:
		if (add(o, "rules", kube_yaml_parse_one(cluster_role_rules, strlen(cluster_role_rules), NULL)))
			goto fail;
		break;
	case OP_OBJ_ROLE:
		snprintf(buf, sizeof buf, role_rules_fmt, OP_SCHEDULER_NAME, OP_CONFIGMAP_NAME);
		if (add(o, "rules", parse(buf)))
			goto fail;
		break;
	case OP_OBJ_CLUSTER_ROLE_BINDING:
	case OP_OBJ_ROLE_BINDING:
		if (add(o, "roleRef", role_ref(k == OP_OBJ_ROLE_BINDING ? "Role" : "ClusterRole")) ||
		    add(o, "subjects", subject_list(ns)))
			goto fail;
		break;
	case OP_OBJ_SERVICE:
		if (add(o, "spec", parse("type: ClusterIP\n"
					 "selector:\n  app.kubernetes.io/name: schedkit-scheduler\n"
					 "ports:\n- {name: metrics, port: 10259, targetPort: metrics, protocol: TCP}\n")))
			goto fail;
		break;
	case OP_OBJ_PDB:
		/* maxUnavailable, not minAvailable: with one replica a node drain still proceeds */
		if (add(o, "spec", parse("maxUnavailable: 1\n"
					 "selector:\n  matchLabels:\n    app.kubernetes.io/name: schedkit-scheduler\n")))
			goto fail;
		break;
	case OP_OBJ_DEPLOYMENT: {
		int replicas = opts->replicas > 0 ? opts->replicas : 2;
		if (!plan || plan->nrendered == 0)
			replicas = 0;
		if (fill_deployment(o, opts, ns, replicas, plan ? plan->plugins : NULL, plan ? plan->config_yaml : NULL))
			goto fail;
		break;
	}
	default:
		goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static bool number_equal(const cJSON *a, const cJSON *b)
{
	int64_t x, y;
	if (kube_json_get_int64(a, &x) == 0 && kube_json_get_int64(b, &y) == 0)
		return x == y;
	return a->valuedouble == b->valuedouble;
}

bool op_json_contains(const cJSON *live, const cJSON *desired)
{
	if (!desired)
		return true;
	if (!live)
		return false;
	if (cJSON_IsObject(desired)) {
		if (!cJSON_IsObject(live))
			return false;
		for (const cJSON *d = desired->child; d; d = d->next)
			if (!op_json_contains(cJSON_GetObjectItemCaseSensitive(live, d->string), d))
				return false;
		return true;
	}
	if (cJSON_IsArray(desired)) {
		if (!cJSON_IsArray(live) || cJSON_GetArraySize(live) != cJSON_GetArraySize(desired))
			return false;
		const cJSON *l = live->child;
		for (const cJSON *d = desired->child; d; d = d->next, l = l->next)
			if (!op_json_contains(l, d))
				return false;
		return true;
	}
	if (cJSON_IsNumber(desired))
		return cJSON_IsNumber(live) && number_equal(live, desired);
	return cJSON_Compare(live, desired, 1);
}

/* What the plugin rendering adds to the Deployment and "desired is contained in live" cannot
 * take back: the init containers and the plugins-hash annotation when the desired object has
 * none (the last SchedulerPlugin was deleted). Returns the item in live, or NULL. */
static cJSON *plugin_leftover(const cJSON *live, const cJSON *desired, int which)
{
	if (which == 0) {
		cJSON *l = kube_obj_get(live, "spec.template.spec.initContainers");
		return l && !kube_obj_get(desired, "spec.template.spec.initContainers") ? l : NULL;
	}
	const cJSON *la = kube_obj_get(live, "spec.template.metadata.annotations");
	const cJSON *da = kube_obj_get(desired, "spec.template.metadata.annotations");
	cJSON *l = cJSON_GetObjectItemCaseSensitive(la, OP_PLUGINS_HASH_ANNOTATION);
	return l && !cJSON_GetObjectItemCaseSensitive(da, OP_PLUGINS_HASH_ANNOTATION) ? l : NULL;
}

bool op_object_matches(enum op_kind k, const cJSON *live, const cJSON *desired)
{
	const struct op_kind_info *ki = op_kind_info(k);
	if (!ki || !op_json_contains(live, desired))
		return false;
	if (k == OP_OBJ_DEPLOYMENT && (plugin_leftover(live, desired, 0) || plugin_leftover(live, desired, 1)))
		return false;
	if (ki->exact) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(live, ki->exact);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(desired, ki->exact);
		bool le = !l || cJSON_IsNull(l) || (cJSON_IsObject(l) && !l->child);
		bool de = !d || cJSON_IsNull(d) || (cJSON_IsObject(d) && !d->child);
		if (le || de)
			return le == de;
		return cJSON_Compare(l, d, 1);
	}
	return true;
}

cJSON *op_object_overlay(enum op_kind k, const cJSON *live, const cJSON *desired)
{
	const struct op_kind_info *ki = op_kind_info(k);
	if (!ki)
		return NULL;
	cJSON *out = op_json_merge(live, desired);
	if (out && k == OP_OBJ_DEPLOYMENT) {
		for (int which = 0; which < 2; which++) {
			cJSON *l = plugin_leftover(out, desired, which);
			if (l)
				cJSON_Delete(cJSON_DetachItemViaPointer(which ? kube_obj_get(out, "spec.template.metadata.annotations")
									      : kube_obj_get(out, "spec.template.spec"),
									l));
		}
	}
	if (!out || !ki->exact || !live)
		return out;
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(desired, ki->exact);
	cJSON *c = d ? cJSON_Duplicate(d, 1) : cJSON_CreateObject();
	if (!c || !cJSON_ReplaceItemInObjectCaseSensitive(out, ki->exact, c)) {
		if (c && !cJSON_GetObjectItemCaseSensitive(out, ki->exact) && cJSON_AddItemToObject(out, ki->exact, c))
			return out;
		cJSON_Delete(c);
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}
