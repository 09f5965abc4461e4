/* Exec credential plugins (client.authentication.k8s.io ExecCredential): runs the kubeconfig
 * user's plugin with KUBERNETES_EXEC_INFO and reads the token or client certificate it prints.
 * The cache, expiry and the 401 retry around it are kube/rest.c's. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube/log.h"
#include "kube/rest_internal.h"

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static char *base64_encode(const char *in, size_t n)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
		out[o++] = tbl[v >> 18 & 63];
		out[o++] = tbl[v >> 12 & 63];
		out[o++] = i + 1 < n ? tbl[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tbl[v & 63] : '=';
	}
	out[o] = 0;
	return out;
}

/* RFC 3339 (fractional seconds and offsets honoured) -> epoch seconds; -1 on error. */
static double parse_rfc3339(const char *s)
{
	struct tm tm = {0};
	int n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	double t = (double)timegm(&tm);
	const char *p = s + n;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == '+' || *p == '-') {
		int hh = 0, mm = 0;
		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
			return -1;
		t -= (*p == '+' ? 1 : -1) * (hh * 3600.0 + mm * 60.0);
	} else if (*p != 'Z' && *p != 'z') {
		return -1;
	}
	return t;
}

static void exec_error(struct kube_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void exec_error(struct kube_error *e, const char *fmt, ...)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* The ExecCredential handed to the plugin in KUBERNETES_EXEC_INFO. Caller frees. */
static char *exec_info(const struct kube_exec_config *x, const char *server, bool insecure, const char *ca_data)
{
	cJSON *in = cJSON_CreateObject();
	cJSON *spec = cJSON_AddObjectToObject(in, "spec");
	bool ok = spec && cJSON_AddStringToObject(in, "kind", "ExecCredential") &&
		  cJSON_AddStringToObject(in, "apiVersion", x->api_version) &&
		  cJSON_AddBoolToObject(spec, "interactive", 0);
	if (ok && x->provide_cluster_info) {
		cJSON *cl = cJSON_AddObjectToObject(spec, "cluster");
		ok = cl && cJSON_AddStringToObject(cl, "server", server) &&
		     (!insecure || cJSON_AddBoolToObject(cl, "insecure-skip-tls-verify", 1));
		if (ok && ca_data) {
			char *b = base64_encode(ca_data, strlen(ca_data));
			ok = b && cJSON_AddStringToObject(cl, "certificate-authority-data", b);
			free(b);
		}
	}
	char *txt = ok ? cJSON_PrintUnformatted(in) : NULL;
	cJSON_Delete(in);
	return txt;
}

extern char **environ;

int kube_exec_run(const struct kube_exec_config *x, const char *server, bool insecure, const char *ca_data,
		  struct kube_exec_cred *c, struct kube_error *e)
{
	memset(c, 0, sizeof *c);
	char *info = exec_info(x, server, insecure, ca_data);
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + (size_t)x->nenv + 2, sizeof(char *));
	char **argv = calloc((size_t)x->nargs + 2, sizeof(char *));
	char *info_env = NULL;
	if (!info || !envp || !argv || asprintf(&info_env, "KUBERNETES_EXEC_INFO=%s", info) < 0) {
		free(info); free(envp); free(argv);
		exec_error(e, "exec plugin %s: out of memory", x->command);
		return -1;
	}
	free(info);
	size_t k = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0)
			envp[k++] = environ[i];
	for (int i = 0; i < x->nenv; i++)
		envp[k++] = x->env[i];
	envp[k++] = info_env;
	argv[0] = x->command;
	for (int i = 0; i < x->nargs; i++)
		argv[i + 1] = x->args[i];

	int fds[2];
	pid_t pid = -1;
	int rc = -1;
	struct buf { char *p; size_t len, cap; } out = {0};
	if (pipe2(fds, O_CLOEXEC) == 0) {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		int sp = posix_spawnp(&pid, x->command, &fa, NULL, argv, envp);
		posix_spawn_file_actions_destroy(&fa);
		close(fds[1]);
		if (sp != 0) {
			exec_error(e, "exec plugin %s: %s", x->command, strerror(sp));
			pid = -1;
		} else {
			char chunk[4096];
			ssize_t r;
			while ((r = read(fds[0], chunk, sizeof(chunk))) != 0) {
				if (r < 0) {
					if (errno == EINTR)
						continue;
					break;
				}
				if (out.len + (size_t)r + 1 > out.cap) {
					size_t ncap = out.cap ? out.cap * 2 : 8192;
					while (ncap < out.len + (size_t)r + 1)
						ncap *= 2;
					char *np = ncap <= (1u << 20) ? realloc(out.p, ncap) : NULL;
					if (!np)
						break;   /* over 1 MiB or OOM: the JSON check below fails */
					out.p = np;
					out.cap = ncap;
				}
				memcpy(out.p + out.len, chunk, (size_t)r);
				out.len += (size_t)r;
				out.p[out.len] = 0;
			}
		}
		close(fds[0]);
	} else {
		exec_error(e, "exec plugin %s: pipe: %s", x->command, strerror(errno));
	}
	int status = 0;
	if (pid > 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			exec_error(e, "exec plugin %s: exit status %ld", x->command,
				   WIFEXITED(status) ? (long)WEXITSTATUS(status) : 128L + WTERMSIG(status));
		} else {
			cJSON *cred = out.p ? cJSON_ParseWithLength(out.p, out.len) : NULL;
			const cJSON *st = cJSON_GetObjectItemCaseSensitive(cred, "status");
			const cJSON *kind = cJSON_GetObjectItemCaseSensitive(cred, "kind");
			const cJSON *tok = cJSON_GetObjectItemCaseSensitive(st, "token");
			const cJSON *cert = cJSON_GetObjectItemCaseSensitive(st, "clientCertificateData");
			const cJSON *key = cJSON_GetObjectItemCaseSensitive(st, "clientKeyData");
			const cJSON *exp = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
			bool has_cert = cJSON_IsString(cert) && cJSON_IsString(key);
			if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ExecCredential") != 0 || !cJSON_IsObject(st)) {
				exec_error(e, "exec plugin %s: output is not an ExecCredential", x->command);
			} else if (!cJSON_IsString(tok) && !has_cert) {
				exec_error(e, "exec plugin %s: status has neither token nor clientCertificateData/clientKeyData",
					   x->command);
			} else if (cJSON_IsString(exp) && parse_rfc3339(exp->valuestring) < 0) {
				exec_error(e, "exec plugin %s: status.expirationTimestamp: invalid time", x->command);
			} else {
				c->token = cJSON_IsString(tok) ? strdup(tok->valuestring) : NULL;
				c->cert = has_cert ? strdup(cert->valuestring) : NULL;
				c->key = has_cert ? strdup(key->valuestring) : NULL;
				c->expiry = cJSON_IsString(exp) ? parse_rfc3339(exp->valuestring) : 0;
				klog_info(4, "Ran exec credential plugin", " command=%s", x->command);
				rc = 0;
			}
			if (cred) {
				/* wipe secrets in the parsed tree before freeing */
				if (cJSON_IsString(tok))
					explicit_bzero(tok->valuestring, strlen(tok->valuestring));
				if (cJSON_IsString(key))
					explicit_bzero(key->valuestring, strlen(key->valuestring));
			}
			cJSON_Delete(cred);
		}
	}
	if (out.p) {
		explicit_bzero(out.p, out.len);
		free(out.p);
	}
	wipe_free(info_env);
	free(envp);
	free(argv);
	return rc;
}

