/* kubeconfig loading (explicit path, $KUBECONFIG merge, ~/.kube/config) and in-cluster config,
 * resolved into struct kube_config. */
#include "kube/config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube/object.h"
#include "kube/util.h"

#define SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"

struct kube_config *kube_config_new(const char *server)
{
	struct kube_config *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->qps = 50;
	c->burst = 100;
	c->namespace = strdup("default");
	if (!c->namespace || (server && !(c->server = strdup(server)))) {
		kube_config_free(c);
		return NULL;
	}
	return c;
}

void kube_exec_config_free(struct kube_exec_config *x)
{
	if (!x)
		return;
	free(x->command);
	for (int i = 0; i < x->nargs; i++)
		free(x->args[i]);
	free(x->args);
	for (int i = 0; i < x->nenv; i++)
		free(x->env[i]);
	free(x->env);
	free(x->api_version);
	free(x);
}

static char **dup_strv(char *const *v, int n, bool *oom)
{
	if (n <= 0)
		return NULL;
	char **d = calloc((size_t)n, sizeof(char *));
	if (!d) {
		*oom = true;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!(d[i] = strdup(v[i])))
			*oom = true;
	return d;
}

struct kube_exec_config *kube_exec_config_dup(const struct kube_exec_config *s)
{
	if (!s)
		return NULL;
	struct kube_exec_config *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	bool oom = false;
	x->command = strdup(s->command);
	x->api_version = strdup(s->api_version);
	x->args = dup_strv(s->args, s->nargs, &oom);
	x->nargs = x->args ? s->nargs : 0;
	x->env = dup_strv(s->env, s->nenv, &oom);
	x->nenv = x->env ? s->nenv : 0;
	x->provide_cluster_info = s->provide_cluster_info;
	if (oom || !x->command || !x->api_version) {
		kube_exec_config_free(x);
		return NULL;
	}
	return x;
}

void kube_config_free(struct kube_config *c)
{
	if (!c)
		return;
	kube_exec_config_free(c->exec);
	free(c->server);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	free(c->ca_file); free(c->ca_data);
	free(c->client_cert_file); free(c->client_cert_data);
	free(c->client_key_file);
	if (c->client_key_data)
		explicit_bzero(c->client_key_data, strlen(c->client_key_data));
	free(c->client_key_data);
	free(c->namespace);
	free(c->user_agent);
	free(c);
}

static int dupf(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	return (*dst = strdup(src)) ? 0 : -1;
}

struct kube_config *kube_config_dup(const struct kube_config *s)
{
	if (!s)
		return NULL;
	struct kube_config *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->insecure_skip_tls_verify = s->insecure_skip_tls_verify;
	c->qps = s->qps;
	c->burst = s->burst;
	if (dupf(&c->server, s->server) || dupf(&c->token, s->token) || dupf(&c->token_file, s->token_file) ||
	    dupf(&c->ca_file, s->ca_file) || dupf(&c->ca_data, s->ca_data) ||
	    dupf(&c->client_cert_file, s->client_cert_file) || dupf(&c->client_cert_data, s->client_cert_data) ||
	    dupf(&c->client_key_file, s->client_key_file) || dupf(&c->client_key_data, s->client_key_data) ||
	    dupf(&c->namespace, s->namespace) || dupf(&c->user_agent, s->user_agent) ||
	    (s->exec && !(c->exec = kube_exec_config_dup(s->exec)))) {
		kube_config_free(c);
		return NULL;
	}
	return c;
}

/* ---------- base64 ---------- */

static int b64val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z') return ch - 'A';
	if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9') return ch - '0' + 52;
	if (ch == '+' || ch == '-') return 62;
	if (ch == '/' || ch == '_') return 63;
	return -1;
}

char *kube_base64_decode(const char *in, size_t *out_len)
{
	if (!in)
		return NULL;
	size_t n = strlen(in);
	char *out = malloc(n / 4 * 3 + 4);
	if (!out)
		return NULL;
	size_t o = 0;
	unsigned int acc = 0;
	int bits = 0;
	bool pad = false;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
			continue;
		if (*p == '=') {
			pad = true;
			continue;
		}
		int v = b64val(*p);
		if (v < 0 || pad) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (bits >= 6) {   /* a single dangling sextet cannot encode a byte */
		free(out);
		return NULL;
	}
	out[o] = 0;
	if (out_len)
		*out_len = o;
	return out;
}

/* ---------- files ---------- */

static char *read_file(const char *path, size_t *len)
{
	int e;
	return kube_read_file(path, 0, len, &e);
}

static char *trimmed_file(const char *path)
{
	char *s = read_file(path, NULL);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

/* path joined to dir unless absolute. Caller frees. */
static char *resolve_path(const char *dir, const char *path)
{
	char *out = NULL;
	if (!path || !*path)
		return NULL;
	if (path[0] == '/' || !dir)
		return strdup(path);
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (path[0] == '~' && path[1] == '/' && getenv("HOME")) {
		if (asprintf(&out, "%s/%s", getenv("HOME"), path + 2) < 0)
			return NULL;
		return out;
	}
	if (asprintf(&out, "%s/%s", dir, path) < 0)
		return NULL;
	return out;
}

/* ---------- kubeconfig merging ---------- */

struct named { const char *name; const cJSON *body; const char *file; const char *dir; int index; };

struct kc_file { char *path; char *dir; cJSON *doc; };

struct merged {
	struct kc_file files[16]; int nfiles;
	struct named clusters[256], users[256], contexts[256];
	int nclusters, nusers, ncontexts;
	const char *current_context; const char *current_file;
};

static void merged_free(struct merged *m)
{
	for (int i = 0; i < m->nfiles; i++) {
		free(m->files[i].path);
		free(m->files[i].dir);
		cJSON_Delete(m->files[i].doc);
	}
}

static const struct named *find_named(const struct named *arr, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arr[i].name, name) == 0)
			return &arr[i];
	return NULL;
}

/* Adds section entries (first file wins per name). Returns 0 or -1 with *err. */
static int merge_section(struct merged *m, struct kc_file *f, const char *section, const char *inner,
			 struct named *arr, int *n, char **err)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(f->doc, section);
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list)) {
		kube_errf(err, "kubeconfig %s: %s: must be a list", f->path, section);
		return -1;
	}
	int idx = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (!cJSON_IsString(name) || !*name->valuestring) {
			kube_errf(err, "kubeconfig %s: %s[%d].name: required", f->path, section, idx);
			return -1;
		}
		const cJSON *body = cJSON_GetObjectItemCaseSensitive(it, inner);
		if (body && !cJSON_IsObject(body) && !cJSON_IsNull(body)) {
			kube_errf(err, "kubeconfig %s: %s[%d].%s: must be a map", f->path, section, idx, inner);
			return -1;
		}
		if (!find_named(arr, *n, name->valuestring) && *n < 256)
			arr[(*n)++] = (struct named){name->valuestring, body, f->path, f->dir, idx};
		idx++;
	}
	(void)m;
	return 0;
}

static int load_file(struct merged *m, const char *path, bool must_exist, char **err)
{
	if (m->nfiles >= 16) {
		kube_errf(err, "kubeconfig %s: too many files in KUBECONFIG", path);
		return -1;
	}
	size_t len = 0;
	char *text = read_file(path, &len);
	if (!text) {
		if (!must_exist && errno == ENOENT)
			return 0;
		kube_errf(err, "kubeconfig %s: %s", path, strerror(errno));
		return -1;
	}
	char *perr = NULL;
	cJSON *doc = len ? kube_yaml_parse_one(text, len, &perr) : cJSON_CreateObject();
	free(text);
	if (!doc) {
		kube_errf(err, "kubeconfig %s: %s", path, perr ? perr : "cannot parse");
		free(perr);
		return -1;
	}
	free(perr);
	if (cJSON_IsNull(doc)) {
		cJSON_Delete(doc);
		doc = cJSON_CreateObject();
		if (!doc)
			return -1;
	}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		kube_errf(err, "kubeconfig %s: top level must be a map", path);
		return -1;
	}
	struct kc_file *f = &m->files[m->nfiles];
	f->doc = doc;
	f->path = strdup(path);
	char *tmp = strdup(path);
	f->dir = tmp ? strdup(dirname(tmp)) : NULL;
	free(tmp);
	m->nfiles++;
	if (!f->path || !f->dir) {
		kube_errf(err, "kubeconfig %s: out of memory", path);
		return -1;
	}
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(doc, "current-context");
	if (!m->current_context && cJSON_IsString(cc) && *cc->valuestring) {
		m->current_context = cc->valuestring;
		m->current_file = f->path;
	}
	if (merge_section(m, f, "clusters", "cluster", m->clusters, &m->nclusters, err) ||
	    merge_section(m, f, "users", "user", m->users, &m->nusers, err) ||
	    merge_section(m, f, "contexts", "context", m->contexts, &m->ncontexts, err))
		return -1;
	return 0;
}

static const char *str_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* Decodes a *-data field into *dst. Returns 0, or -1 with *err naming the field. */
static int data_field(const struct named *n, const char *section, const char *inner, const char *key,
		      char **dst, char **err)
{
	const char *v = str_field(n->body, key);
	if (!v)
		return 0;
	*dst = kube_base64_decode(v, NULL);
	if (!*dst) {
		kube_errf(err, "kubeconfig %s: %s[%d].%s.%s: invalid base64", n->file, section, n->index, inner, key);
		return -1;
	}
	return 0;
}

static int path_field(const struct named *n, const char *key, char **dst)
{
	const char *v = str_field(n->body, key);
	if (!v)
		return 0;
	*dst = resolve_path(n->dir, v);
	return *dst ? 0 : -1;
}

static bool bool_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsTrue(v) || (cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0);
}

/* users[i].user.exec -> c->exec. Returns 0 or -1 with *err naming the field. */
static int parse_exec(const struct named *u, const char *user_name, const cJSON *exec, struct kube_config *c, char **err)
{
	const char *command = str_field(exec, "command");
	const char *api_version = str_field(exec, "apiVersion");
	const char *mode = str_field(exec, "interactiveMode");
	const char *field = NULL, *problem = NULL;
	if (!cJSON_IsObject(exec))
		field = "", problem = "must be a map";
	else if (!command)
		field = ".command", problem = "required";
	else if (!api_version)
		field = ".apiVersion", problem = "required";
	else if (strcmp(api_version, "client.authentication.k8s.io/v1") != 0 &&
		 strcmp(api_version, "client.authentication.k8s.io/v1beta1") != 0)
		field = ".apiVersion", problem = "must be client.authentication.k8s.io/v1 or v1beta1";
	else if (!mode && strcmp(api_version, "client.authentication.k8s.io/v1") == 0)
		field = ".interactiveMode", problem = "required for client.authentication.k8s.io/v1";
	else if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0 && strcmp(mode, "Always") != 0)
		field = ".interactiveMode", problem = "must be Never, IfAvailable or Always";
	else if (mode && strcmp(mode, "Always") == 0)
		field = ".interactiveMode", problem = "Always needs a terminal; this client is never interactive";
	if (field) {
		kube_errf(err, "kubeconfig %s: users[%d].user.exec%s: %s (user \"%s\")", u->file, u->index, field, problem,
			 user_name);
		return -1;
	}
	struct kube_exec_config *x = calloc(1, sizeof(*x));
	if (!x)
		goto oom;
	c->exec = x;
	x->command = strchr(command, '/') ? resolve_path(u->dir, command) : strdup(command);
	x->api_version = strdup(api_version);
	x->provide_cluster_info = bool_field(exec, "provideClusterInfo");
	if (!x->command || !x->api_version)
		goto oom;
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(exec, "args");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(exec, "env");
	if (!cJSON_IsArray(args))
		args = NULL;
	if (!cJSON_IsArray(env))
		env = NULL;
	int n = args ? cJSON_GetArraySize(args) : 0;
	if (n > 0 && !(x->args = calloc((size_t)n, sizeof(char *))))
		goto oom;
	const cJSON *it;
	cJSON_ArrayForEach(it, args) {
		if (!cJSON_IsString(it)) {
			kube_errf(err, "kubeconfig %s: users[%d].user.exec.args[%d]: must be a string (user \"%s\")", u->file,
				 u->index, x->nargs, user_name);
			return -1;
		}
		if (!(x->args[x->nargs++] = strdup(it->valuestring)))
			goto oom;
	}
	n = env ? cJSON_GetArraySize(env) : 0;
	if (n > 0 && !(x->env = calloc((size_t)n, sizeof(char *))))
		goto oom;
	cJSON_ArrayForEach(it, env) {
		const char *name = str_field(it, "name");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(it, "value");
		if (!name || !cJSON_IsString(value)) {
			kube_errf(err, "kubeconfig %s: users[%d].user.exec.env[%d]: name and value are required (user \"%s\")",
				 u->file, u->index, x->nenv, user_name);
			return -1;
		}
		if (asprintf(&x->env[x->nenv], "%s=%s", name, value->valuestring) < 0)
			goto oom;
		x->nenv++;
	}
	return 0;
oom:
	kube_errf(err, "kubeconfig %s: out of memory", u->file);
	return -1;
}

static int resolve(struct merged *m, const char *what, const char *context, struct kube_config *c, char **err)
{
	const char *ctx_name = context && *context ? context : m->current_context;
	if (!ctx_name) {
		kube_errf(err, "kubeconfig %s: current-context is not set and no context was given", what);
		return -1;
	}
	const struct named *ctx = find_named(m->contexts, m->ncontexts, ctx_name);
	if (!ctx) {
		kube_errf(err, "kubeconfig %s: context \"%s\" not found", what, ctx_name);
		return -1;
	}
	const char *cluster_name = str_field(ctx->body, "cluster");
	const char *user_name = str_field(ctx->body, "user");
	if (!cluster_name) {
		kube_errf(err, "kubeconfig %s: contexts[%d].context.cluster: required (context \"%s\")", ctx->file,
			 ctx->index, ctx_name);
		return -1;
	}
	const struct named *cl = find_named(m->clusters, m->nclusters, cluster_name);
	if (!cl) {
		kube_errf(err, "kubeconfig %s: cluster \"%s\" (context \"%s\") not found", what, cluster_name, ctx_name);
		return -1;
	}
	const char *server = str_field(cl->body, "server");
	if (!server) {
		kube_errf(err, "kubeconfig %s: clusters[%d].cluster.server: required (cluster \"%s\")", cl->file,
			 cl->index, cluster_name);
		return -1;
	}
	if (dupf(&c->server, server))
		goto oom;
	c->insecure_skip_tls_verify = bool_field(cl->body, "insecure-skip-tls-verify");
	if (c->insecure_skip_tls_verify && (str_field(cl->body, "certificate-authority-data") ||
					    str_field(cl->body, "certificate-authority"))) {
		kube_errf(err, "kubeconfig %s: clusters[%d].cluster: specifying a root certificates file with the insecure "
			      "flag is not allowed (cluster \"%s\")", cl->file, cl->index, cluster_name);
		return -1;
	}
	if (data_field(cl, "clusters", "cluster", "certificate-authority-data", &c->ca_data, err))
		return -1;
	if (!c->ca_data && path_field(cl, "certificate-authority", &c->ca_file))
		goto oom;
	const char *ns = str_field(ctx->body, "namespace");
	if (ns) {
		free(c->namespace);
		if (dupf(&c->namespace, ns))
			goto oom;
	}
	if (!user_name)
		return 0;
	const struct named *u = find_named(m->users, m->nusers, user_name);
	if (!u) {
		kube_errf(err, "kubeconfig %s: user \"%s\" (context \"%s\") not found", what, user_name, ctx_name);
		return -1;
	}
	const cJSON *exec = cJSON_GetObjectItemCaseSensitive(u->body, "exec");
	if (exec && !cJSON_IsNull(exec) && parse_exec(u, user_name, exec, c, err))
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(u->body, "auth-provider")) {
		kube_errf(err, "kubeconfig %s: users[%d].user.auth-provider: not supported (user \"%s\")", u->file,
			 u->index, user_name);
		return -1;
	}
	if (dupf(&c->token, str_field(u->body, "token")))
		goto oom;
	if (path_field(u, "tokenFile", &c->token_file))
		goto oom;
	if (c->token_file && !c->token && access(c->token_file, R_OK) != 0) {
		/* client-go reads tokenFile at load time when there is no literal token. With both set,
		 * the file's content wins at request time and the literal token is the fallback. */
		kube_errf(err, "kubeconfig %s: users[%d].user.tokenFile: %s: %s (user \"%s\")", u->file, u->index,
			 c->token_file, strerror(errno), user_name);
		return -1;
	}
	if (data_field(u, "users", "user", "client-certificate-data", &c->client_cert_data, err) ||
	    data_field(u, "users", "user", "client-key-data", &c->client_key_data, err))
		return -1;
	if ((!c->client_cert_data && path_field(u, "client-certificate", &c->client_cert_file)) ||
	    (!c->client_key_data && path_field(u, "client-key", &c->client_key_file)))
		goto oom;
	bool has_cert = c->client_cert_data || c->client_cert_file;
	bool has_key = c->client_key_data || c->client_key_file;
	if (has_cert != has_key) {
		kube_errf(err, "kubeconfig %s: users[%d].user: client certificate and client key must both be set (user \"%s\")",
			 u->file, u->index, user_name);
		return -1;
	}
	return 0;
oom:
	kube_errf(err, "kubeconfig %s: out of memory", what);
	return -1;
}

static int load_files(const char *const *paths, int n, bool must_exist, const char *what, const char *context,
		      struct kube_config **out, char **err)
{
	struct merged *m = calloc(1, sizeof(*m));
	struct kube_config *c = kube_config_new(NULL);
	int rc = -1;
	if (!m || !c) {
		kube_errf(err, "kubeconfig %s: out of memory", what);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (load_file(m, paths[i], must_exist, err))
			goto out;
	if (m->nfiles == 0) {
		kube_errf(err, "kubeconfig %s: no configuration file found", what);
		goto out;
	}
	if (resolve(m, what, context, c, err))
		goto out;
	rc = 0;
	*out = c;
	c = NULL;
out:
	if (m)
		merged_free(m);
	free(m);
	kube_config_free(c);
	return rc;
}

/* ---------- in-cluster ---------- */

int kube_config_in_cluster(struct kube_config **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port) {
		kube_errf(err, "in-cluster config: unable to load in-cluster configuration, "
			      "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
		return -1;
	}
	const char *dir = getenv("SK_SA_DIR");
	if (!dir || !*dir)
		dir = SA_DIR_DEFAULT;
	struct kube_config *c = kube_config_new(NULL);
	char *token_path = NULL, *ca_path = NULL, *ns_path = NULL;
	if (!c || asprintf(&token_path, "%s/token", dir) < 0 || asprintf(&ca_path, "%s/ca.crt", dir) < 0 ||
	    asprintf(&ns_path, "%s/namespace", dir) < 0) {
		kube_errf(err, "in-cluster config: out of memory");
		goto fail;
	}
	if (access(token_path, R_OK) != 0) {
		kube_errf(err, "in-cluster config: token file %s: %s", token_path, strerror(errno));
		goto fail;
	}
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(&c->server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0) {
		c->server = NULL;
		kube_errf(err, "in-cluster config: out of memory");
		goto fail;
	}
	c->token_file = token_path;
	token_path = NULL;
	if (access(ca_path, R_OK) == 0) {
		c->ca_file = ca_path;
		ca_path = NULL;
	}
	char *ns = trimmed_file(ns_path);
	if (ns && *ns) {
		free(c->namespace);
		c->namespace = ns;
	} else {
		free(ns);
	}
	free(ca_path);
	free(ns_path);
	*out = c;
	return 0;
fail:
	free(token_path);
	free(ca_path);
	free(ns_path);
	kube_config_free(c);
	return -1;
}

int kube_config_load(const char *explicit_path, const char *context, struct kube_config **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (explicit_path && *explicit_path) {
		const char *p[1] = {explicit_path};
		return load_files(p, 1, true, explicit_path, context, out, err);
	}
	const char *env = getenv("KUBECONFIG");
	if (env && *env) {
		char *copy = strdup(env);
		const char *paths[16];
		int n = 0;
		if (!copy) {
			kube_errf(err, "kubeconfig: out of memory");
			return -1;
		}
		char *save = NULL;
		for (char *tok = strtok_r(copy, ":", &save); tok && n < 16; tok = strtok_r(NULL, ":", &save)) {
			bool dup = false;
			for (int i = 0; i < n; i++)
				dup = dup || strcmp(paths[i], tok) == 0;
			if (!dup && *tok)
				paths[n++] = tok;
		}
		int rc = load_files(paths, n, false, env, context, out, err);
		free(copy);
		return rc;
	}
	if (getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_PORT") && (!context || !*context))
		return kube_config_in_cluster(out, err);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		kube_errf(err, "kubeconfig: no --kubeconfig, KUBECONFIG, in-cluster environment or HOME");
		return -1;
	}
	char *path = NULL;
	if (asprintf(&path, "%s/.kube/config", home) < 0) {
		kube_errf(err, "kubeconfig: out of memory");
		return -1;
	}
	const char *p[1] = {path};
	int rc = load_files(p, 1, true, path, context, out, err);
	free(path);
	return rc;
}
