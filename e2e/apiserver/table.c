/* Long file: one row printer per built-in kind, kept beside the column sets they must match. */
/* table.c — meta.k8s.io/v1 Table responses for `kubectl get`: column sets and row printers for the
 * built-in resources schedkit uses (after upstream pkg/printers/internalversion), the default
 * Name/Created At table of the generic convertor (CRDs), CRD additionalPrinterColumns evaluated
 * with the simple JSONPath kubectl's CRDs use, and duration.HumanDuration for Age cells.
 * Like upstream, the server always produces every column (priority > 0 too); kubectl hides
 * priority > 0 columns unless -o wide. No global state; thread-safe. */
#include "e2e/apiserver/table.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- time helpers */

char *apis_human_duration_ms(long long ms, char *buf, size_t len)
{
	long long seconds = ms / 1000; /* truncation toward zero, like int(d.Seconds()) */
	if (seconds < -1) {
		snprintf(buf, len, "<invalid>");
		return buf;
	}
	if (seconds < 0 || ms < 0) {
		snprintf(buf, len, "0s");
		return buf;
	}
	if (seconds < 60 * 2) {
		snprintf(buf, len, "%llds", seconds);
		return buf;
	}
	long long minutes = seconds / 60;
	if (minutes < 10) {
		long long s = seconds % 60;
		if (s == 0)
			snprintf(buf, len, "%lldm", minutes);
		else
			snprintf(buf, len, "%lldm%llds", minutes, s);
		return buf;
	}
	if (minutes < 60 * 3) {
		snprintf(buf, len, "%lldm", minutes);
		return buf;
	}
	long long hours = seconds / 3600;
	if (hours < 8) {
		long long m = minutes % 60;
		if (m == 0)
			snprintf(buf, len, "%lldh", hours);
		else
			snprintf(buf, len, "%lldh%lldm", hours, m);
	} else if (hours < 48) {
		snprintf(buf, len, "%lldh", hours);
	} else if (hours < 24 * 8) {
		long long h = hours % 24;
		if (h == 0)
			snprintf(buf, len, "%lldd", hours / 24);
		else
			snprintf(buf, len, "%lldd%lldh", hours / 24, h);
	} else if (hours < 24 * 365 * 2) {
		snprintf(buf, len, "%lldd", hours / 24);
	} else if (hours < 24 * 365 * 8) {
		long long dy = (hours / 24) % 365;
		if (dy == 0)
			snprintf(buf, len, "%lldy", hours / 24 / 365);
		else
			snprintf(buf, len, "%lldy%lldd", hours / 24 / 365, dy);
	} else {
		snprintf(buf, len, "%lldy", hours / 24 / 365);
	}
	return buf;
}

char *apis_human_duration(long long seconds, char *buf, size_t len)
{
	return apis_human_duration_ms(seconds * 1000, buf, len);
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int apis_parse_rfc3339(const char *s, time_t *out)
{
	if (!s || strlen(s) < 20)
		return -1;
	int Y, M, D, h, m, sec;
	if (digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &m) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		return -1;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om))
			return -1;
		off = (oh * 3600L + om * 60L) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	struct tm tm = {0};
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*out = timegm(&tm) - off;
	return 0;
}

char *apis_age(const char *rfc3339, time_t now, char *buf, size_t len)
{
	time_t t;
	if (!rfc3339 || !*rfc3339 || apis_parse_rfc3339(rfc3339, &t) != 0) {
		snprintf(buf, len, "<unknown>");
		return buf;
	}
	return apis_human_duration((long long)now - (long long)t, buf, len);
}

enum apis_include_object apis_include_object_parse(const char *s)
{
	if (s && strcmp(s, "None") == 0)
		return APIS_INCLUDE_NONE;
	if (s && strcmp(s, "Object") == 0)
		return APIS_INCLUDE_OBJECT;
	return APIS_INCLUDE_METADATA;
}

/* ---------------------------------------------------------------- small JSON accessors */

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Dotted path lookup ("status.nodeInfo.kubeletVersion"). */
static const cJSON *jpath(const cJSON *o, const char *path)
{
	char key[128];
	while (o && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		o = jget(o, key);
		path += n + (dot ? 1 : 0);
	}
	return o;
}

static const char *jstr(const cJSON *o, const char *path)
{
	const cJSON *v = jpath(o, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *jstr_or(const cJSON *o, const char *path, const char *dflt)
{
	const char *s = jstr(o, path);
	return s && *s ? s : dflt;
}

static long long jint(const cJSON *o, const char *path, long long dflt)
{
	const cJSON *v = jpath(o, path);
	return cJSON_IsNumber(v) ? (long long)v->valuedouble : dflt;
}

static bool jtrue(const cJSON *o, const char *path)
{
	return cJSON_IsTrue(jpath(o, path));
}

/* ---------------------------------------------------------------- string builder */

struct sb {
	char *s;
	size_t n, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sb *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	va_list ap;
	va_start(ap, fmt);
	va_list ap2;
	va_copy(ap2, ap);
	int need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0) {
		va_end(ap2);
		b->oom = true;
		return;
	}
	if (b->n + (size_t)need + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 64);
		while (cap < b->n + (size_t)need + 1)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns) {
			va_end(ap2);
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap2);
	va_end(ap2);
	b->n += (size_t)need;
}

static const char *sb_str(struct sb *b)
{
	if (!b->s && !b->oom) {
		sb_add(b, "%s", "");
	}
	return b->oom ? NULL : b->s;
}

/* ---------------------------------------------------------------- columns */

struct col {
	const char *name, *type, *format;
	int priority;
	const char *description;
};

#define NAMECOL {"Name", "string", "name", 0, "Name must be unique within a namespace."}
#define AGECOL {"Age", "string", "", 0, "Time since the object was created."}

static const struct col pod_cols[] = {
	NAMECOL,
	{"Ready", "string", "", 0, "The aggregate readiness state of this pod for accepting traffic."},
	{"Status", "string", "", 0, "The aggregate status of the containers in this pod."},
	{"Restarts", "string", "", 0, "The number of times the containers in this pod have been restarted."},
	AGECOL,
	{"IP", "string", "", 1, "IP address allocated to the pod."},
	{"Node", "string", "", 1, "Node the pod is bound to."},
	{"Nominated Node", "string", "", 1, "Node the scheduler nominated for this pod."},
	{"Readiness Gates", "string", "", 1, "Readiness gates of the pod."},
};
static const struct col node_cols[] = {
	NAMECOL,
	{"Status", "string", "", 0, "The status of the node"},
	{"Roles", "string", "", 0, "The roles of the node"},
	AGECOL,
	{"Version", "string", "", 0, "Kubelet version reported by the node."},
	{"Internal-IP", "string", "", 1, "First InternalIP address of the node."},
	{"External-IP", "string", "", 1, "First ExternalIP address of the node."},
	{"OS-Image", "string", "", 1, "OS image reported by the node."},
	{"Kernel-Version", "string", "", 1, "Kernel version reported by the node."},
	{"Container-Runtime", "string", "", 1, "Container runtime version reported by the node."},
};
static const struct col deploy_cols[] = {
	NAMECOL,
	{"Ready", "string", "", 0, "Number of the pod with ready state"},
	{"Up-to-date", "string", "", 0, "Total number of non-terminated pods with the desired template."},
	{"Available", "string", "", 0, "Total number of available pods."},
	AGECOL,
	{"Containers", "string", "", 1, "Names of each container in the template."},
	{"Images", "string", "", 1, "Images referenced by each container in the template."},
	{"Selector", "string", "", 1, "Label selector for pods."},
};
static const struct col rs_cols[] = {
	NAMECOL,
	{"Desired", "integer", "", 0, "Number of desired pods."},
	{"Current", "integer", "", 0, "Number of most recently observed pods."},
	{"Ready", "integer", "", 0, "Number of ready pods."},
	AGECOL,
	{"Containers", "string", "", 1, "Names of each container in the template."},
	{"Images", "string", "", 1, "Images referenced by each container in the template."},
	{"Selector", "string", "", 1, "Label selector for pods."},
};
static const struct col svc_cols[] = {
	NAMECOL,
	{"Type", "string", "", 0, "How the service is exposed."},
	{"Cluster-IP", "string", "", 0, "IP address of the service."},
	{"External-IP", "string", "", 0, "External addresses of the service."},
	{"Port(s)", "string", "", 0, "Ports exposed by the service."},
	AGECOL,
	{"Selector", "string", "", 1, "Pods this service routes to."},
};
static const struct col cm_cols[] = {
	NAMECOL, {"Data", "string", "", 0, "Number of data keys."}, AGECOL,
};
static const struct col secret_cols[] = {
	NAMECOL,
	{"Type", "string", "", 0, "Used to facilitate programmatic handling of secret data."},
	{"Data", "string", "", 0, "Number of data keys."},
	AGECOL,
};
static const struct col ns_cols[] = {
	NAMECOL, {"Status", "string", "", 0, "The status of the namespace"}, AGECOL,
};
static const struct col lease_cols[] = {
	NAMECOL, {"Holder", "string", "", 0, "Identity of the current holder."}, AGECOL,
};
static const struct col pc_cols[] = {
	NAMECOL,
	{"Value", "integer", "", 0, "Priority value."},
	{"Global-Default", "boolean", "", 0, "Whether this is the default priority class."},
	AGECOL,
	{"PreemptionPolicy", "string", "", 0, "Policy for preempting lower priority pods."},
};
static const struct col pdb_cols[] = {
	NAMECOL,
	{"Min Available", "string", "", 0, "The minimum number of pods that must be available."},
	{"Max Unavailable", "string", "", 0, "The maximum number of pods that may be unavailable."},
	{"Allowed Disruptions", "integer", "", 0, "Calculated number of pods that may be disrupted at this time."},
	AGECOL,
};
static const struct col event_cols[] = {
	{"Last Seen", "string", "", 0, "Time of the last occurrence."},
	{"Type", "string", "", 0, "Type of this event (Normal, Warning)."},
	{"Reason", "string", "", 0, "Short reason for the event."},
	{"Object", "string", "", 0, "The object this event is about."},
	{"Subobject", "string", "", 1, "Field of the object this event is about."},
	{"Source", "string", "", 1, "Component reporting this event."},
	{"Message", "string", "", 0, "Human-readable description."},
	{"First Seen", "string", "", 1, "Time of the first occurrence."},
	{"Count", "string", "", 1, "Number of occurrences."},
	{"Name", "string", "name", 1, "Name must be unique within a namespace."},
};
static const struct col sa_cols[] = {
	NAMECOL, {"Secrets", "string", "", 0, "Number of secrets."}, AGECOL,
};
static const struct col sc_cols[] = {
	NAMECOL,
	{"Provisioner", "string", "", 0, "Volume plugin provisioning volumes."},
	{"ReclaimPolicy", "string", "", 0, "Reclaim policy of provisioned volumes."},
	{"VolumeBindingMode", "string", "", 0, "When volumes are bound."},
	{"AllowVolumeExpansion", "string", "", 0, "Whether volumes may be expanded."},
	AGECOL,
};
static const struct col generic_cols[] = {NAMECOL, AGECOL};
static const struct col created_cols[] = {
	NAMECOL,
	{"Created At", "date", "", 0, "Time the object was created."},
};

/* ---------------------------------------------------------------- cell helpers */

static int add_str(cJSON *cells, const char *s)
{
	return cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : "")) ? 0 : -1;
}

static int add_int(cJSON *cells, long long v)
{
	return cJSON_AddItemToArray(cells, cJSON_CreateNumber((double)v)) ? 0 : -1;
}

static int add_age(cJSON *cells, const cJSON *obj, time_t now)
{
	char buf[32];
	return add_str(cells, apis_age(jstr(obj, "metadata.creationTimestamp"), now, buf, sizeof(buf)));
}

/* Sorted "k=v,k2=v2" of a string map; "<none>" when empty (labels.FormatLabels). */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void format_labels(struct sb *b, const cJSON *m, const char *empty)
{
	int n = cJSON_IsObject(m) ? cJSON_GetArraySize(m) : 0;
	if (n == 0) {
		sb_add(b, "%s", empty);
		return;
	}
	const char **keys = calloc((size_t)n, sizeof(*keys));
	if (!keys) {
		b->oom = true;
		return;
	}
	int i = 0;
	for (const cJSON *c = m->child; c && i < n; c = c->next)
		keys[i++] = c->string ? c->string : "";
	qsort(keys, (size_t)i, sizeof(*keys), cmp_str);
	for (int j = 0; j < i; j++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, keys[j]);
		sb_add(b, "%s%s=%s", j ? "," : "", keys[j], cJSON_IsString(v) ? v->valuestring : "");
	}
	free(keys);
}

/* metav1.LabelSelector as a selector string: requirements sorted by key. */
struct req {
	const char *key;
	char *text;
};
static int cmp_req(const void *a, const void *b)
{
	return strcmp(((const struct req *)a)->key, ((const struct req *)b)->key);
}

static void format_selector(struct sb *out, const cJSON *sel)
{
	const cJSON *ml = jget(sel, "matchLabels");
	const cJSON *me = jget(sel, "matchExpressions");
	int n = (cJSON_IsObject(ml) ? cJSON_GetArraySize(ml) : 0) +
		(cJSON_IsArray(me) ? cJSON_GetArraySize(me) : 0);
	if (n == 0)
		return;
	struct req *reqs = calloc((size_t)n, sizeof(*reqs));
	if (!reqs) {
		out->oom = true;
		return;
	}
	int k = 0;
	for (const cJSON *c = cJSON_IsObject(ml) ? ml->child : NULL; c && k < n; c = c->next) {
		struct sb b = {0};
		sb_add(&b, "%s=%s", c->string, cJSON_IsString(c) ? c->valuestring : "");
		reqs[k].key = c->string;
		reqs[k++].text = b.s;
	}
	for (const cJSON *e = cJSON_IsArray(me) ? me->child : NULL; e && k < n; e = e->next) {
		const char *key = jstr_or(e, "key", "");
		const char *op = jstr_or(e, "operator", "");
		struct sb b = {0};
		if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
			sb_add(&b, "%s %s (", key, strcmp(op, "In") == 0 ? "in" : "notin");
			int i = 0;
			const cJSON *vals = jget(e, "values");
			for (const cJSON *v = cJSON_IsArray(vals) ? vals->child : NULL; v; v = v->next)
				sb_add(&b, "%s%s", i++ ? "," : "", cJSON_IsString(v) ? v->valuestring : "");
			sb_add(&b, ")");
		} else if (strcmp(op, "Exists") == 0) {
			sb_add(&b, "%s", key);
		} else if (strcmp(op, "DoesNotExist") == 0) {
			sb_add(&b, "!%s", key);
		} else {
			sb_add(&b, "%s", "<invalid>");
		}
		reqs[k].key = key;
		reqs[k++].text = b.s;
	}
	qsort(reqs, (size_t)k, sizeof(*reqs), cmp_req);
	for (int i = 0; i < k; i++) {
		sb_add(out, "%s%s", i ? "," : "", reqs[i].text ? reqs[i].text : "");
		free(reqs[i].text);
	}
	free(reqs);
}

static void container_cells(const cJSON *containers, struct sb *names, struct sb *images)
{
	int i = 0;
	for (const cJSON *c = cJSON_IsArray(containers) ? containers->child : NULL; c; c = c->next, i++) {
		sb_add(names, "%s%s", i ? "," : "", jstr_or(c, "name", ""));
		sb_add(images, "%s%s", i ? "," : "", jstr_or(c, "image", ""));
	}
}

/* ---------------------------------------------------------------- row printers */

typedef int (*row_fn)(cJSON *cells, cJSON *row, const cJSON *obj, time_t now);

static const cJSON *find_by(const cJSON *arr, const char *key, const char *val)
{
	for (const cJSON *c = cJSON_IsArray(arr) ? arr->child : NULL; c; c = c->next) {
		const char *v = jstr(c, key);
		if (v && strcmp(v, val) == 0)
			return c;
	}
	return NULL;
}

static bool cond_true(const cJSON *conds, const char *type)
{
	const cJSON *c = find_by(conds, "type", type);
	const char *st = c ? jstr(c, "status") : NULL;
	return st && strcmp(st, "True") == 0;
}

static int add_row_condition(cJSON *row, const char *reason, const char *message)
{
	cJSON *conds = cJSON_AddArrayToObject(row, "conditions");
	cJSON *c = cJSON_CreateObject();
	if (!conds || !c || !cJSON_AddItemToArray(conds, c)) {
		cJSON_Delete(c);
		return -1;
	}
	if (!cJSON_AddStringToObject(c, "type", "Completed") ||
	    !cJSON_AddStringToObject(c, "status", "True") ||
	    !cJSON_AddStringToObject(c, "reason", reason) ||
	    !cJSON_AddStringToObject(c, "message", message))
		return -1;
	return 0;
}

static bool is_restartable_init(const cJSON *init_containers, const char *name)
{
	const cJSON *c = find_by(init_containers, "name", name ? name : "");
	const char *rp = c ? jstr(c, "restartPolicy") : NULL;
	return rp && strcmp(rp, "Always") == 0;
}

/* The finishedAt of lastState.terminated, as epoch seconds (0 when absent). */
static time_t last_terminated(const cJSON *status)
{
	time_t t;
	const char *f = jstr(status, "lastState.terminated.finishedAt");
	return f && apis_parse_rfc3339(f, &t) == 0 ? t : 0;
}

static int pod_row(cJSON *cells, cJSON *row, const cJSON *pod, time_t now)
{
	const cJSON *spec = jget(pod, "spec"), *status = jget(pod, "status");
	const cJSON *init_specs = jget(spec, "initContainers");
	const cJSON *conds = jget(status, "conditions");
	long long restarts = 0, ri_restarts = 0;
	int total = cJSON_IsArray(jget(spec, "containers")) ? cJSON_GetArraySize(jget(spec, "containers")) : 0;
	int ready = 0;
	time_t last_restart = 0, ri_last_restart = 0;
	const char *phase = jstr_or(status, "phase", "");
	char reason[160];
	snprintf(reason, sizeof(reason), "%s", jstr_or(status, "reason", phase));

	for (const cJSON *c = cJSON_IsArray(conds) ? conds->child : NULL; c; c = c->next) {
		const char *t = jstr(c, "type"), *r = jstr(c, "reason");
		if (t && r && strcmp(t, "PodScheduled") == 0 && strcmp(r, "SchedulingGated") == 0)
			snprintf(reason, sizeof(reason), "SchedulingGated");
	}
	if (strcmp(phase, "Succeeded") == 0) {
		if (add_row_condition(row, "Succeeded", "The pod has completed successfully.") != 0)
			return -1;
	} else if (strcmp(phase, "Failed") == 0) {
		if (add_row_condition(row, "Failed", "The pod failed.") != 0)
			return -1;
	}
	for (const cJSON *c = cJSON_IsArray(init_specs) ? init_specs->child : NULL; c; c = c->next) {
		const char *rp = jstr(c, "restartPolicy");
		if (rp && strcmp(rp, "Always") == 0)
			total++;
	}
	int n_init = cJSON_IsArray(init_specs) ? cJSON_GetArraySize(init_specs) : 0;
	bool initializing = false;
	const cJSON *ics = jget(status, "initContainerStatuses");
	int i = 0;
	for (const cJSON *cs = cJSON_IsArray(ics) ? ics->child : NULL; cs; cs = cs->next, i++) {
		const char *name = jstr(cs, "name");
		bool restartable = is_restartable_init(init_specs, name);
		restarts += jint(cs, "restartCount", 0);
		time_t lt = last_terminated(cs);
		if (lt > last_restart)
			last_restart = lt;
		if (restartable) {
			ri_restarts += jint(cs, "restartCount", 0);
			if (lt > ri_last_restart)
				ri_last_restart = lt;
		}
		const cJSON *term = jpath(cs, "state.terminated");
		const char *wreason = jstr(cs, "state.waiting.reason");
		if (term && jint(term, "exitCode", 0) == 0)
			continue;
		if (restartable && jtrue(cs, "started")) {
			if (jtrue(cs, "ready"))
				ready++;
			continue;
		}
		if (term) {
			const char *tr = jstr(term, "reason");
			if (!tr || !*tr) {
				if (jint(term, "signal", 0) != 0)
					snprintf(reason, sizeof(reason), "Init:Signal:%lld", jint(term, "signal", 0));
				else
					snprintf(reason, sizeof(reason), "Init:ExitCode:%lld", jint(term, "exitCode", 0));
			} else {
				snprintf(reason, sizeof(reason), "Init:%s", tr);
			}
		} else if (wreason && *wreason && strcmp(wreason, "PodInitializing") != 0) {
			snprintf(reason, sizeof(reason), "Init:%s", wreason);
		} else {
			snprintf(reason, sizeof(reason), "Init:%d/%d", i, n_init);
		}
		initializing = true;
		break;
	}
	if (!initializing || cond_true(conds, "Initialized")) {
		restarts = ri_restarts;
		last_restart = ri_last_restart;
		bool has_running = false;
		const cJSON *css = jget(status, "containerStatuses");
		int n = cJSON_IsArray(css) ? cJSON_GetArraySize(css) : 0;
		for (int k = n - 1; k >= 0; k--) {
			const cJSON *cs = cJSON_GetArrayItem(css, k);
			restarts += jint(cs, "restartCount", 0);
			time_t lt = last_terminated(cs);
			if (lt > last_restart)
				last_restart = lt;
			const char *wr = jstr(cs, "state.waiting.reason");
			const cJSON *term = jpath(cs, "state.terminated");
			const char *tr = term ? jstr(term, "reason") : NULL;
			if (wr && *wr) {
				snprintf(reason, sizeof(reason), "%s", wr);
			} else if (term && tr && *tr) {
				snprintf(reason, sizeof(reason), "%s", tr);
			} else if (term) {
				if (jint(term, "signal", 0) != 0)
					snprintf(reason, sizeof(reason), "Signal:%lld", jint(term, "signal", 0));
				else
					snprintf(reason, sizeof(reason), "ExitCode:%lld", jint(term, "exitCode", 0));
			} else if (jtrue(cs, "ready") && jpath(cs, "state.running")) {
				has_running = true;
				ready++;
			}
		}
		if (strcmp(reason, "Completed") == 0 && has_running)
			snprintf(reason, sizeof(reason), "%s", cond_true(conds, "Ready") ? "Running" : "NotReady");
	}
	bool deleting = jstr(pod, "metadata.deletionTimestamp") != NULL;
	const char *status_reason = jstr(status, "reason");
	if (deleting && status_reason && strcmp(status_reason, "NodeLost") == 0)
		snprintf(reason, sizeof(reason), "Unknown");
	else if (deleting && strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0)
		snprintf(reason, sizeof(reason), "Terminating");

	char restarts_s[64], ready_s[32], ago[32];
	if (restarts != 0 && last_restart != 0)
		snprintf(restarts_s, sizeof(restarts_s), "%lld (%s ago)", restarts,
			 apis_human_duration((long long)(now - last_restart), ago, sizeof(ago)));
	else
		snprintf(restarts_s, sizeof(restarts_s), "%lld", restarts);
	snprintf(ready_s, sizeof(ready_s), "%d/%d", ready, total);

	const char *ip = NULL;
	const cJSON *ips = jget(status, "podIPs");
	if (cJSON_IsArray(ips) && ips->child)
		ip = jstr(ips->child, "ip");
	if (!ip || !*ip)
		ip = jstr(status, "podIP"); /* podIPs is derived from podIP by the real server */
	char gates[32] = "<none>";
	const cJSON *rg = jget(spec, "readinessGates");
	if (cJSON_IsArray(rg) && cJSON_GetArraySize(rg) > 0) {
		int tc = 0;
		for (const cJSON *g = rg->child; g; g = g->next) {
			const char *ct = jstr(g, "conditionType");
			if (ct && cond_true(conds, ct))
				tc++;
		}
		snprintf(gates, sizeof(gates), "%d/%d", tc, cJSON_GetArraySize(rg));
	}
	if (add_str(cells, jstr(pod, "metadata.name")) || add_str(cells, ready_s) ||
	    add_str(cells, reason) || add_str(cells, restarts_s) || add_age(cells, pod, now) ||
	    add_str(cells, ip && *ip ? ip : "<none>") ||
	    add_str(cells, jstr_or(spec, "nodeName", "<none>")) ||
	    add_str(cells, jstr_or(status, "nominatedNodeName", "<none>")) || add_str(cells, gates))
		return -1;
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int node_row(cJSON *cells, cJSON *row, const cJSON *node, time_t now)
{
	(void)row;
	struct sb st = {0}, roles = {0};
	const cJSON *conds = jpath(node, "status.conditions");
	const cJSON *ready = find_by(conds, "type", "Ready");
	if (ready) {
		const char *s = jstr(ready, "status");
		sb_add(&st, "%s", s && strcmp(s, "True") == 0 ? "Ready" : "NotReady");
	} else {
		sb_add(&st, "Unknown");
	}
	if (jtrue(node, "spec.unschedulable"))
		sb_add(&st, ",SchedulingDisabled");

	/* roles: node-role.kubernetes.io/<role> labels and kubernetes.io/role, sorted, unique */
	const cJSON *labels = jpath(node, "metadata.labels");
	int nl = cJSON_IsObject(labels) ? cJSON_GetArraySize(labels) : 0;
	char **rl = nl ? calloc((size_t)nl, sizeof(*rl)) : NULL;
	int nr = 0;
	for (const cJSON *l = nl ? labels->child : NULL; l && rl; l = l->next) {
		const char *role = NULL;
		if (l->string && strncmp(l->string, "node-role.kubernetes.io/", 24) == 0 && l->string[24])
			role = l->string + 24;
		else if (l->string && strcmp(l->string, "kubernetes.io/role") == 0 && cJSON_IsString(l) &&
			 *l->valuestring)
			role = l->valuestring;
		if (!role)
			continue;
		bool dup = false;
		for (int j = 0; j < nr && !dup; j++)
			dup = strcmp(rl[j], role) == 0;
		if (!dup)
			rl[nr++] = (char *)role;
	}
	if (nr)
		qsort(rl, (size_t)nr, sizeof(*rl), cmp_cstr);
	for (int j = 0; j < nr; j++)
		sb_add(&roles, "%s%s", j ? "," : "", rl[j]);
	if (nr == 0)
		sb_add(&roles, "<none>");
	free(rl);

	const cJSON *addrs = jpath(node, "status.addresses");
	const cJSON *in = find_by(addrs, "type", "InternalIP");
	const cJSON *ex = find_by(addrs, "type", "ExternalIP");
	const char *sts = sb_str(&st), *rs = sb_str(&roles);
	int rc = -1;
	if (sts && rs && !add_str(cells, jstr(node, "metadata.name")) && !add_str(cells, sts) &&
	    !add_str(cells, rs) && !add_age(cells, node, now) &&
	    !add_str(cells, jstr_or(node, "status.nodeInfo.kubeletVersion", "")) &&
	    !add_str(cells, in ? jstr_or(in, "address", "<none>") : "<none>") &&
	    !add_str(cells, ex ? jstr_or(ex, "address", "<none>") : "<none>") &&
	    !add_str(cells, jstr_or(node, "status.nodeInfo.osImage", "<unknown>")) &&
	    !add_str(cells, jstr_or(node, "status.nodeInfo.kernelVersion", "<unknown>")) &&
	    !add_str(cells, jstr_or(node, "status.nodeInfo.containerRuntimeVersion", "<unknown>")))
		rc = 0;
	free(st.s);
	free(roles.s);
	return rc;
}

/* Containers, Images, Selector cells shared by deployments and replica sets. */
static int template_cells(cJSON *cells, const cJSON *obj)
{
	struct sb names = {0}, images = {0}, sel = {0};
	container_cells(jpath(obj, "spec.template.spec.containers"), &names, &images);
	format_selector(&sel, jpath(obj, "spec.selector"));
	const char *a = sb_str(&names), *b = sb_str(&images), *c = sb_str(&sel);
	int rc = a && b && c && !add_str(cells, a) && !add_str(cells, b) && !add_str(cells, c) ? 0 : -1;
	free(names.s);
	free(images.s);
	free(sel.s);
	return rc;
}

static int deploy_row(cJSON *cells, cJSON *row, const cJSON *d, time_t now)
{
	(void)row;
	char ready[48];
	snprintf(ready, sizeof(ready), "%lld/%lld", jint(d, "status.readyReplicas", 0),
		 jint(d, "spec.replicas", 1));
	if (add_str(cells, jstr(d, "metadata.name")) || add_str(cells, ready) ||
	    add_int(cells, jint(d, "status.updatedReplicas", 0)) ||
	    add_int(cells, jint(d, "status.availableReplicas", 0)) || add_age(cells, d, now))
		return -1;
	return template_cells(cells, d);
}

static int rs_row(cJSON *cells, cJSON *row, const cJSON *r, time_t now)
{
	(void)row;
	if (add_str(cells, jstr(r, "metadata.name")) || add_int(cells, jint(r, "spec.replicas", 1)) ||
	    add_int(cells, jint(r, "status.replicas", 0)) ||
	    add_int(cells, jint(r, "status.readyReplicas", 0)) || add_age(cells, r, now))
		return -1;
	return template_cells(cells, r);
}

static void join_strings(struct sb *b, const cJSON *arr, bool *first)
{
	for (const cJSON *c = cJSON_IsArray(arr) ? arr->child : NULL; c; c = c->next) {
		if (!cJSON_IsString(c))
			continue;
		sb_add(b, "%s%s", *first ? "" : ",", c->valuestring);
		*first = false;
	}
}

static int svc_row(cJSON *cells, cJSON *row, const cJSON *s, time_t now)
{
	(void)row;
	const cJSON *spec = jget(s, "spec");
	const char *type = jstr_or(spec, "type", "ClusterIP");
	const char *cip = NULL;
	const cJSON *cips = jget(spec, "clusterIPs");
	if (cJSON_IsArray(cips) && cips->child && cJSON_IsString(cips->child))
		cip = cips->child->valuestring;
	if (!cip || !*cip)
		cip = jstr_or(spec, "clusterIP", "<none>");
	struct sb ext = {0}, ports = {0}, sel = {0};
	bool first = true;
	if (strcmp(type, "ClusterIP") == 0 || strcmp(type, "NodePort") == 0) {
		join_strings(&ext, jget(spec, "externalIPs"), &first);
		if (first)
			sb_add(&ext, "<none>");
	} else if (strcmp(type, "LoadBalancer") == 0) {
		const cJSON *ing = jpath(s, "status.loadBalancer.ingress");
		for (const cJSON *i = cJSON_IsArray(ing) ? ing->child : NULL; i; i = i->next) {
			const char *v = jstr(i, "ip");
			if (!v || !*v)
				v = jstr(i, "hostname");
			if (v && *v) {
				sb_add(&ext, "%s%s", first ? "" : ",", v);
				first = false;
			}
		}
		join_strings(&ext, jget(spec, "externalIPs"), &first);
		if (first)
			sb_add(&ext, "<pending>");
	} else if (strcmp(type, "ExternalName") == 0) {
		sb_add(&ext, "%s", jstr_or(spec, "externalName", ""));
	} else {
		sb_add(&ext, "<unknown>");
	}
	int i = 0;
	const cJSON *pl = jget(spec, "ports");
	for (const cJSON *p = cJSON_IsArray(pl) ? pl->child : NULL; p; p = p->next, i++) {
		long long np = jint(p, "nodePort", 0);
		const char *proto = jstr_or(p, "protocol", "TCP");
		if (np > 0)
			sb_add(&ports, "%s%lld:%lld/%s", i ? "," : "", jint(p, "port", 0), np, proto);
		else
			sb_add(&ports, "%s%lld/%s", i ? "," : "", jint(p, "port", 0), proto);
	}
	if (i == 0)
		sb_add(&ports, "<none>");
	format_labels(&sel, jget(spec, "selector"), "<none>");
	const char *e = sb_str(&ext), *po = sb_str(&ports), *se = sb_str(&sel);
	int rc = e && po && se && !add_str(cells, jstr(s, "metadata.name")) && !add_str(cells, type) &&
			 !add_str(cells, cip) && !add_str(cells, e) && !add_str(cells, po) &&
			 !add_age(cells, s, now) && !add_str(cells, se)
		     ? 0
		     : -1;
	free(ext.s);
	free(ports.s);
	free(sel.s);
	return rc;
}

static int obj_size(const cJSON *o)
{
	return cJSON_IsObject(o) ? cJSON_GetArraySize(o) : 0;
}

static int cm_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) ||
			       add_int(cells, obj_size(jget(o, "data")) + obj_size(jget(o, "binaryData"))) ||
			       add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int secret_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) || add_str(cells, jstr_or(o, "type", "Opaque")) ||
			       add_int(cells, obj_size(jget(o, "data"))) || add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int ns_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) ||
			       add_str(cells, jstr_or(o, "status.phase", "Active")) || add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int lease_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) ||
			       add_str(cells, jstr_or(o, "spec.holderIdentity", "")) || add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int pc_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	if (add_str(cells, jstr(o, "metadata.name")) || add_int(cells, jint(o, "value", 0)) ||
	    !cJSON_AddItemToArray(cells, cJSON_CreateBool(jtrue(o, "globalDefault"))) ||
	    add_age(cells, o, now) ||
	    add_str(cells, jstr_or(o, "preemptionPolicy", "PreemptLowerPriority")))
		return -1;
	return 0;
}

/* intstr value as text, "N/A" when absent. */
static void intstr(char *buf, size_t len, const cJSON *v)
{
	if (cJSON_IsNumber(v))
		snprintf(buf, len, "%lld", (long long)v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(buf, len, "%s", v->valuestring);
	else
		snprintf(buf, len, "N/A");
}

static int pdb_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	char mina[64], maxu[64];
	intstr(mina, sizeof(mina), jpath(o, "spec.minAvailable"));
	intstr(maxu, sizeof(maxu), jpath(o, "spec.maxUnavailable"));
	return add_str(cells, jstr(o, "metadata.name")) || add_str(cells, mina) ||
			       add_str(cells, maxu) ||
			       add_int(cells, jint(o, "status.disruptionsAllowed", 0)) ||
			       add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int sa_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	const cJSON *s = jget(o, "secrets");
	return add_str(cells, jstr(o, "metadata.name")) ||
			       add_int(cells, cJSON_IsArray(s) ? cJSON_GetArraySize(s) : 0) ||
			       add_age(cells, o, now)
		       ? -1
		       : 0;
}

static int sc_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) || add_str(cells, jstr_or(o, "provisioner", "")) ||
			       add_str(cells, jstr_or(o, "reclaimPolicy", "Delete")) ||
			       add_str(cells, jstr_or(o, "volumeBindingMode", "Immediate")) ||
			       add_str(cells, jtrue(o, "allowVolumeExpansion") ? "true" : "false") ||
			       add_age(cells, o, now)
		       ? -1
		       : 0;
}

/* core/v1 Event, with events.k8s.io/v1 field names as fallbacks. */
static int event_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	char first[32], last[32];
	const char *ft = jstr(o, "firstTimestamp");
	if (!ft)
		ft = jstr(o, "deprecatedFirstTimestamp");
	if (!ft)
		ft = jstr(o, "eventTime");
	apis_age(ft, now, first, sizeof(first));
	const char *lt = jstr(o, "lastTimestamp");
	if (!lt)
		lt = jstr(o, "deprecatedLastTimestamp");
	if (lt)
		apis_age(lt, now, last, sizeof(last));
	else
		snprintf(last, sizeof(last), "%s", first);
	long long count = jint(o, "count", jint(o, "deprecatedCount", 0));
	const cJSON *series = jget(o, "series");
	if (cJSON_IsObject(series)) {
		apis_age(jstr(series, "lastObservedTime"), now, last, sizeof(last));
		count = jint(series, "count", count);
	} else if (count == 0) {
		count = 1;
	}
	const cJSON *inv = jget(o, "involvedObject");
	if (!inv)
		inv = jget(o, "regarding");
	struct sb target = {0}, source = {0};
	const char *kind = jstr_or(inv, "kind", "");
	const char *name = jstr_or(inv, "name", "");
	for (const char *k = kind; *k; k++)
		sb_add(&target, "%c", tolower((unsigned char)*k));
	if (*name)
		sb_add(&target, "/%s", name);
	const char *comp = jstr(o, "source.component");
	const char *host = jstr(o, "source.host");
	if (!comp || !*comp) {
		comp = jstr(o, "reportingComponent");
		if (!comp || !*comp)
			comp = jstr(o, "reportingController");
		host = jstr(o, "reportingInstance");
	}
	if (comp && *comp) {
		sb_add(&source, "%s", comp);
		if (host && *host)
			sb_add(&source, ", %s", host);
	}
	const char *msg = jstr(o, "message");
	if (!msg)
		msg = jstr(o, "note");
	char count_s[32];
	snprintf(count_s, sizeof(count_s), "%lld", count);
	const char *ts = sb_str(&target), *ss = sb_str(&source);
	int rc = ts && ss && !add_str(cells, last) && !add_str(cells, jstr_or(o, "type", "")) &&
			 !add_str(cells, jstr_or(o, "reason", "")) && !add_str(cells, ts) &&
			 !add_str(cells, jstr_or(inv, "fieldPath", "")) && !add_str(cells, ss) &&
			 !add_str(cells, msg ? msg : "") && !add_str(cells, first) &&
			 !add_int(cells, count) && !add_str(cells, jstr(o, "metadata.name"))
		     ? 0
		     : -1;
	free(target.s);
	free(source.s);
	return rc;
}

static int generic_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	return add_str(cells, jstr(o, "metadata.name")) || add_age(cells, o, now) ? -1 : 0;
}

/* Default table convertor of the generic registry: Name and the raw creation timestamp. */
static int created_row(cJSON *cells, cJSON *row, const cJSON *o, time_t now)
{
	(void)row;
	(void)now;
	const char *ts = jstr(o, "metadata.creationTimestamp");
	if (add_str(cells, jstr(o, "metadata.name")))
		return -1;
	if (ts)
		return add_str(cells, ts);
	return cJSON_AddItemToArray(cells, cJSON_CreateNull()) ? 0 : -1;
}

#define NCOLS(a) (sizeof(a) / sizeof(a[0]))
static const struct printer {
	const char *group, *resource;
	const struct col *cols;
	size_t ncols;
	row_fn row;
} printers[] = {
	{"", "pods", pod_cols, NCOLS(pod_cols), pod_row},
	{"", "nodes", node_cols, NCOLS(node_cols), node_row},
	{"apps", "deployments", deploy_cols, NCOLS(deploy_cols), deploy_row},
	{"apps", "replicasets", rs_cols, NCOLS(rs_cols), rs_row},
	{"", "services", svc_cols, NCOLS(svc_cols), svc_row},
	{"", "configmaps", cm_cols, NCOLS(cm_cols), cm_row},
	{"", "secrets", secret_cols, NCOLS(secret_cols), secret_row},
	{"", "namespaces", ns_cols, NCOLS(ns_cols), ns_row},
	{"", "events", event_cols, NCOLS(event_cols), event_row},
	{"events.k8s.io", "events", event_cols, NCOLS(event_cols), event_row},
	{"", "serviceaccounts", sa_cols, NCOLS(sa_cols), sa_row},
	{"coordination.k8s.io", "leases", lease_cols, NCOLS(lease_cols), lease_row},
	{"scheduling.k8s.io", "priorityclasses", pc_cols, NCOLS(pc_cols), pc_row},
	{"policy", "poddisruptionbudgets", pdb_cols, NCOLS(pdb_cols), pdb_row},
	{"storage.k8s.io", "storageclasses", sc_cols, NCOLS(sc_cols), sc_row},
	{"apiextensions.k8s.io", "customresourcedefinitions", created_cols, NCOLS(created_cols),
	 created_row},
};

/* ---------------------------------------------------------------- simple JSONPath */

/* Evaluates the simple JSONPath forms CRD printer columns use: .a.b, ['a.b'], [N], [*] (first),
 * [?(@.k=="v")] / [?(@.k!=v)] filters. Returns the first match or NULL. */
static const cJSON *jsonpath_first(const cJSON *root, const char *path);

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Parses a quoted or bare literal; copies into buf. Returns pointer after it or NULL. */
static const char *parse_literal(const char *p, char *buf, size_t len, bool *quoted)
{
	size_t n = 0;
	*quoted = false;
	if (*p == '"' || *p == '\'') {
		char q = *p++;
		*quoted = true;
		while (*p && *p != q) {
			if (*p == '\\' && p[1])
				p++;
			if (n + 1 < len)
				buf[n++] = *p;
			p++;
		}
		if (*p != q)
			return NULL;
		p++;
	} else {
		while (*p && *p != ')' && *p != ' ' && *p != ']') {
			if (n + 1 < len)
				buf[n++] = *p;
			p++;
		}
	}
	buf[n] = 0;
	return p;
}

static bool literal_matches(const cJSON *v, const char *lit, bool quoted)
{
	if (!v)
		return false;
	if (cJSON_IsString(v))
		return strcmp(v->valuestring, lit) == 0;
	if (quoted)
		return false;
	if (cJSON_IsNumber(v)) {
		char *end;
		double d = strtod(lit, &end);
		return *lit && !*end && d == v->valuedouble;
	}
	if (cJSON_IsBool(v))
		return strcmp(lit, cJSON_IsTrue(v) ? "true" : "false") == 0;
	if (cJSON_IsNull(v))
		return strcmp(lit, "null") == 0;
	return false;
}

/* Evaluates path (relative, starting at '.' or '[') against each element of arr matching,
 * returning the first hit of the rest. */
static const cJSON *jp_eval(const cJSON *cur, const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	for (;;) {
		if (!cur)
			return NULL;
		p = skip_ws(p);
		if (*p == 0 || *p == '}')
			return cur;
		if (*p == '.') {
			p++;
			if (*p == '.')
				return NULL; /* recursive descent is not supported */
			char key[256];
			size_t n = 0;
			while (*p && *p != '.' && *p != '[' && *p != '}' && *p != ' ') {
				if (n + 1 < sizeof(key))
					key[n++] = *p;
				p++;
			}
			key[n] = 0;
			if (n == 0)
				continue; /* a lone "." means the current node */
			if (strcmp(key, "*") == 0) {
				for (const cJSON *c = cur->child; c; c = c->next) {
					const cJSON *r = jp_eval(c, p, depth + 1);
					if (r)
						return r;
				}
				return NULL;
			}
			cur = jget(cur, key);
			continue;
		}
		if (*p == '[') {
			p = skip_ws(p + 1);
			if (*p == '\'' || *p == '"') {
				char key[256];
				bool q;
				p = parse_literal(p, key, sizeof(key), &q);
				if (!p)
					return NULL;
				p = skip_ws(p);
				if (*p != ']')
					return NULL;
				p++;
				cur = jget(cur, key);
				continue;
			}
			if (*p == '*') {
				p = skip_ws(p + 1);
				if (*p != ']')
					return NULL;
				p++;
				for (const cJSON *c = cur ? cur->child : NULL; c; c = c->next) {
					const cJSON *r = jp_eval(c, p, depth + 1);
					if (r)
						return r;
				}
				return NULL;
			}
			if (*p == '?') {
				/* ?(@.a.b OP literal) or ?(@.a.b) */
				p = skip_ws(p + 1);
				if (*p != '(')
					return NULL;
				p = skip_ws(p + 1);
				if (*p != '@')
					return NULL;
				p++;
				char sub[256];
				size_t n = 0;
				while (*p && *p != '=' && *p != '!' && *p != ')' && *p != ' ') {
					if (n + 1 < sizeof(sub))
						sub[n++] = *p;
					p++;
				}
				sub[n] = 0;
				p = skip_ws(p);
				int op = 0; /* 0 exists, 1 ==, 2 != */
				char lit[256] = "";
				bool quoted = false;
				if (p[0] == '=' && p[1] == '=') {
					op = 1;
					p += 2;
				} else if (p[0] == '!' && p[1] == '=') {
					op = 2;
					p += 2;
				}
				if (op) {
					p = parse_literal(skip_ws(p), lit, sizeof(lit), &quoted);
					if (!p)
						return NULL;
				}
				p = skip_ws(p);
				if (*p != ')')
					return NULL;
				p = skip_ws(p + 1);
				if (*p != ']')
					return NULL;
				p++;
				if (!cJSON_IsArray(cur))
					return NULL;
				for (const cJSON *c = cur->child; c; c = c->next) {
					const cJSON *v = jp_eval(c, sub, depth + 1);
					bool ok = op == 0 ? v != NULL
						: op == 1 ? literal_matches(v, lit, quoted)
							  : !literal_matches(v, lit, quoted);
					if (ok) {
						const cJSON *r = jp_eval(c, p, depth + 1);
						if (r)
							return r;
					}
				}
				return NULL;
			}
			/* index, possibly negative */
			char *end;
			long idx = strtol(p, &end, 10);
			if (end == p)
				return NULL;
			p = skip_ws(end);
			if (*p != ']')
				return NULL;
			p++;
			if (!cJSON_IsArray(cur))
				return NULL;
			int size = cJSON_GetArraySize(cur);
			if (idx < 0)
				idx += size;
			if (idx < 0 || idx >= size)
				return NULL;
			cur = cJSON_GetArrayItem(cur, (int)idx);
			continue;
		}
		/* bare leading identifier ("spec.replicas") */
		if (isalpha((unsigned char)*p) || *p == '_') {
			char buf[512];
			snprintf(buf, sizeof(buf), ".%s", p);
			return jp_eval(cur, buf, depth + 1);
		}
		return NULL;
	}
}

static const cJSON *jsonpath_first(const cJSON *root, const char *path)
{
	if (!path)
		return NULL;
	const char *p = skip_ws(path);
	if (*p == '{')
		p++;
	if (*p == '$')
		p++;
	return jp_eval(root, p, 0);
}

/* Go fmt.Fprint rendering of a JSON value (jsonpath PrintResults for "string" columns). */
static void go_print(struct sb *b, const cJSON *v, int depth)
{
	if (depth > 32) {
		sb_add(b, "...");
		return;
	}
	if (cJSON_IsString(v)) {
		sb_add(b, "%s", v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == floor(d) && fabs(d) < 1e18)
			sb_add(b, "%lld", (long long)d);
		else
			sb_add(b, "%g", d);
	} else if (cJSON_IsBool(v)) {
		sb_add(b, "%s", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNull(v)) {
		sb_add(b, "<nil>");
	} else if (cJSON_IsArray(v)) {
		sb_add(b, "[");
		for (const cJSON *c = v->child; c; c = c->next) {
			go_print(b, c, depth + 1);
			if (c->next)
				sb_add(b, " ");
		}
		sb_add(b, "]");
	} else if (cJSON_IsObject(v)) {
		int n = cJSON_GetArraySize(v);
		const char **keys = n ? calloc((size_t)n, sizeof(*keys)) : NULL;
		int k = 0;
		for (const cJSON *c = v->child; c && keys; c = c->next)
			keys[k++] = c->string ? c->string : "";
		if (k)
			qsort(keys, (size_t)k, sizeof(*keys), cmp_str);
		sb_add(b, "map[");
		for (int i = 0; i < k; i++) {
			sb_add(b, "%s%s:", i ? " " : "", keys[i]);
			go_print(b, cJSON_GetObjectItemCaseSensitive(v, keys[i]), depth + 1);
		}
		sb_add(b, "]");
		free(keys);
	}
}

/* One CR printer-column cell (upstream tableconvertor cellForJSONValue). */
static cJSON *cr_cell(const cJSON *obj, const cJSON *colspec, time_t now)
{
	const char *type = jstr_or(colspec, "type", "string");
	const cJSON *v = jsonpath_first(obj, jstr(colspec, "jsonPath"));
	if (!v || cJSON_IsNull(v))
		return cJSON_CreateNull();
	if (strcmp(type, "string") == 0) {
		struct sb b = {0};
		go_print(&b, v, 0);
		const char *s = sb_str(&b);
		cJSON *c = s ? cJSON_CreateString(s) : NULL;
		free(b.s);
		return c;
	}
	if (strcmp(type, "integer") == 0 && cJSON_IsNumber(v))
		return cJSON_CreateNumber((double)(long long)v->valuedouble);
	if (strcmp(type, "number") == 0 && cJSON_IsNumber(v))
		return cJSON_CreateNumber(v->valuedouble);
	if (strcmp(type, "boolean") == 0 && cJSON_IsBool(v))
		return cJSON_CreateBool(cJSON_IsTrue(v));
	if (strcmp(type, "date") == 0 && cJSON_IsString(v)) {
		time_t t;
		if (apis_parse_rfc3339(v->valuestring, &t) != 0)
			return cJSON_CreateString("<invalid>");
		char buf[32];
		return cJSON_CreateString(apis_human_duration((long long)(now - t), buf, sizeof(buf)));
	}
	return cJSON_CreateNull();
}

/* ---------------------------------------------------------------- table assembly */

static cJSON *column_def(const char *name, const char *type, const char *format,
			 const char *description, int priority)
{
	cJSON *c = cJSON_CreateObject();
	if (!c)
		return NULL;
	if (!cJSON_AddStringToObject(c, "name", name) || !cJSON_AddStringToObject(c, "type", type) ||
	    !cJSON_AddStringToObject(c, "format", format ? format : "") ||
	    !cJSON_AddStringToObject(c, "description", description ? description : "") ||
	    !cJSON_AddNumberToObject(c, "priority", priority)) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

static cJSON *row_object(const cJSON *obj, enum apis_include_object inc)
{
	if (inc == APIS_INCLUDE_OBJECT)
		return cJSON_Duplicate(obj, 1);
	cJSON *p = cJSON_CreateObject();
	if (!p)
		return NULL;
	const cJSON *md = jget(obj, "metadata");
	cJSON *mdc = md ? cJSON_Duplicate(md, 1) : cJSON_CreateObject();
	if (!mdc || !cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata") ||
	    !cJSON_AddStringToObject(p, "apiVersion", "meta.k8s.io/v1") ||
	    !cJSON_AddItemToObject(p, "metadata", mdc)) {
		cJSON_Delete(mdc);
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

static const struct printer *find_printer(const char *group, const char *resource)
{
	for (size_t i = 0; i < NCOLS(printers); i++)
		if (strcmp(printers[i].group, group ? group : "") == 0 &&
		    strcmp(printers[i].resource, resource ? resource : "") == 0)
			return &printers[i];
	return NULL;
}

cJSON *apis_table_build(const char *group, const char *resource, const cJSON *items,
			const cJSON *crd_version, enum apis_include_object inc, bool with_columns,
			const cJSON *list_meta, time_t now)
{
	cJSON *age_spec = NULL;
	cJSON *t = cJSON_CreateObject();
	if (!t)
		return NULL;
	if (!cJSON_AddStringToObject(t, "kind", "Table") ||
	    !cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1"))
		goto oom;
	cJSON *md = cJSON_AddObjectToObject(t, "metadata");
	if (!md)
		goto oom;
	if (cJSON_IsObject(list_meta)) {
		for (const cJSON *c = list_meta->child; c; c = c->next) {
			cJSON *d = cJSON_Duplicate(c, 1);
			if (!d || !cJSON_AddItemToObject(md, c->string, d)) {
				cJSON_Delete(d);
				goto oom;
			}
		}
	}

	const struct printer *pr = NULL;
	const cJSON *crcols = NULL;
	static const struct printer generic = {"", "", generic_cols, NCOLS(generic_cols), generic_row};
	if (crd_version) {
		crcols = jget(crd_version, "additionalPrinterColumns");
		if (!cJSON_IsArray(crcols) || cJSON_GetArraySize(crcols) == 0)
			crcols = NULL;
	} else {
		pr = find_printer(group, resource);
		if (!pr)
			pr = &generic;
	}

	if (with_columns) {
		cJSON *defs = cJSON_AddArrayToObject(t, "columnDefinitions");
		if (!defs)
			goto oom;
		if (pr) {
			for (size_t i = 0; i < pr->ncols; i++) {
				const struct col *c = &pr->cols[i];
				cJSON *d = column_def(c->name, c->type, c->format, c->description, c->priority);
				if (!d || !cJSON_AddItemToArray(defs, d)) {
					cJSON_Delete(d);
					goto oom;
				}
			}
		} else {
			cJSON *d = column_def("Name", "string", "name",
					      "Name must be unique within a namespace.", 0);
			if (!d || !cJSON_AddItemToArray(defs, d)) {
				cJSON_Delete(d);
				goto oom;
			}
			if (!crcols) {
				d = column_def("Age", "date", "", "Time since the object was created.", 0);
				if (!d || !cJSON_AddItemToArray(defs, d)) {
					cJSON_Delete(d);
					goto oom;
				}
			}
			for (const cJSON *c = crcols ? crcols->child : NULL; c; c = c->next) {
				char desc[512];
				const char *dd = jstr(c, "description");
				if (!dd || !*dd) {
					snprintf(desc, sizeof(desc),
						 "Custom resource definition column (in JSONPath format): %s",
						 jstr_or(c, "jsonPath", ""));
					dd = desc;
				}
				d = column_def(jstr_or(c, "name", ""), jstr_or(c, "type", "string"),
					       jstr_or(c, "format", ""), dd, (int)jint(c, "priority", 0));
				if (!d || !cJSON_AddItemToArray(defs, d)) {
					cJSON_Delete(d);
					goto oom;
				}
			}
		}
	}

	cJSON *rows = cJSON_AddArrayToObject(t, "rows");
	if (!rows)
		goto oom;
	if (crd_version && !crcols) {
		/* the implicit CR column: Age, type date, .metadata.creationTimestamp */
		age_spec = cJSON_Parse("{\"type\":\"date\",\"jsonPath\":\".metadata.creationTimestamp\"}");
		if (!age_spec)
			goto oom;
	}
	for (const cJSON *obj = cJSON_IsArray(items) ? items->child : NULL; obj; obj = obj->next) {
		cJSON *row = cJSON_CreateObject();
		if (!row || !cJSON_AddItemToArray(rows, row)) {
			cJSON_Delete(row);
			goto oom;
		}
		cJSON *cells = cJSON_AddArrayToObject(row, "cells");
		if (!cells)
			goto oom;
		if (pr) {
			if (pr->row(cells, row, obj, now) != 0)
				goto oom;
		} else {
			if (add_str(cells, jstr(obj, "metadata.name")))
				goto oom;
			if (!crcols) {
				cJSON *cell = cr_cell(obj, age_spec, now);
				if (!cell || !cJSON_AddItemToArray(cells, cell)) {
					cJSON_Delete(cell);
					goto oom;
				}
			}
			for (const cJSON *c = crcols ? crcols->child : NULL; c; c = c->next) {
				cJSON *cell = cr_cell(obj, c, now);
				if (!cell || !cJSON_AddItemToArray(cells, cell)) {
					cJSON_Delete(cell);
					goto oom;
				}
			}
		}
		if (inc != APIS_INCLUDE_NONE) {
			cJSON *o = row_object(obj, inc);
			if (!o || !cJSON_AddItemToObject(row, "object", o)) {
				cJSON_Delete(o);
				goto oom;
			}
		}
	}
	cJSON_Delete(age_spec);
	return t;
oom:
	cJSON_Delete(age_spec);
	cJSON_Delete(t);
	return NULL;
}
