/* SchedulerProfile extenders with TLS from mounted Secrets (extender_tls.h). */
#include "operator/extender_tls.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"

/* RFC 1123 subdomain, as Secret names must be. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '.'))
			return false;
	}
	return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

/* A Secret data key: [-._a-zA-Z0-9]+, not "." or "..". */
static bool secret_key(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '.' || *p == '_'))
			return false;
	return true;
}

static int render_tls(cJSON *tls, int i, char **err)
{
	static const char *const inline_secret[] = { "certData", "keyData" };
	for (int k = 0; k < 2; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(tls, inline_secret[k]);
		if (v && !cJSON_IsNull(v) && !(cJSON_IsString(v) && !*v->valuestring))
			return kube_errf(err,
					 "spec.extenders[%d].tlsConfig.%s: Forbidden: secret material is not accepted in a "
					 "SchedulerProfile (it would be written to the ConfigMap); put it in a Secret and "
					 "name it in tlsConfig.secretName",
					 i, inline_secret[k]);
	}
	const cJSON *sn = cJSON_GetObjectItemCaseSensitive(tls, "secretName");
	static const char *const keys[3][2] = { { "certKey", "certFile" }, { "keyKey", "keyFile" }, { "caKey", "caFile" } };
	if (!sn || cJSON_IsNull(sn)) {
		for (int k = 0; k < 3; k++)
			if (cJSON_GetObjectItemCaseSensitive(tls, keys[k][0]))
				return kube_errf(err, "spec.extenders[%d].tlsConfig.%s: Forbidden: only with tlsConfig.secretName", i,
						 keys[k][0]);
		return 0;
	}
	if (!cJSON_IsString(sn) || !dns_subdomain(sn->valuestring))
		return kube_errf(err,
				 "spec.extenders[%d].tlsConfig.secretName: Invalid value: must be the name of a Secret "
				 "(a lowercase RFC 1123 subdomain)",
				 i);
	bool any = false;
	for (int k = 0; k < 3; k++)
		any |= cJSON_GetObjectItemCaseSensitive(tls, keys[k][0]) != NULL;
	char *secret = strdup(sn->valuestring);
	if (!secret)
		return kube_errf(err, "out of memory");
	int rc = 0;
	for (int k = 0; k < 3 && rc == 0; k++) {
		const cJSON *kv = cJSON_GetObjectItemCaseSensitive(tls, keys[k][0]);
		const char *key = NULL;
		if (kv) {
			if (!cJSON_IsString(kv) || !secret_key(kv->valuestring)) {
				rc = kube_errf(err, "spec.extenders[%d].tlsConfig.%s: Invalid value: must be a Secret data key", i,
					       keys[k][0]);
				break;
			}
			key = kv->valuestring;
		} else if (!any && k < 2) {
			key = k == 0 ? "tls.crt" : "tls.key";
		}
		if (!key)
			continue;
		if (cJSON_GetObjectItemCaseSensitive(tls, keys[k][1])) {
			rc = kube_errf(err, "spec.extenders[%d].tlsConfig.%s: Forbidden: the file comes from tlsConfig.secretName", i,
				       keys[k][1]);
			break;
		}
		char path[600];
		snprintf(path, sizeof(path), "%s/%s/%s", OP_EXT_TLS_DIR, secret, key);
		if (!cJSON_AddStringToObject(tls, keys[k][1], path))
			rc = kube_errf(err, "out of memory");
	}
	free(secret);
	if (rc != 0)
		return rc;
	cJSON_DeleteItemFromObjectCaseSensitive(tls, "secretName");
	for (int k = 0; k < 3; k++)
		cJSON_DeleteItemFromObjectCaseSensitive(tls, keys[k][0]);
	return 0;
}

int op_render_extenders(const cJSON *extenders, cJSON **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	cJSON *c = cJSON_Duplicate(extenders, 1);
	if (!c)
		return kube_errf(err, "out of memory");
	int i = 0;
	for (cJSON *x = c->child; x; x = x->next, i++) {
		cJSON *tls = cJSON_GetObjectItemCaseSensitive(x, "tlsConfig");
		if (!cJSON_IsObject(tls))
			continue;
		if (render_tls(tls, i, err) != 0) {
			cJSON_Delete(c);
			return -1;
		}
	}
	*out = c;
	return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Secret names from every *File path under OP_EXT_TLS_DIR/<name>/ of the profiles' extenders. */
static int collect(const cJSON *cfg, char ***names, int *n)
{
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(cfg, "profiles");
	static const char *const files[] = { "certFile", "keyFile", "caFile" };
	const size_t plen = strlen(OP_EXT_TLS_DIR "/");
	for (const cJSON *p = cJSON_IsArray(profiles) ? profiles->child : NULL; p; p = p->next) {
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(p, "extenders");
		for (const cJSON *e = cJSON_IsArray(ex) ? ex->child : NULL; e; e = e->next) {
			const cJSON *tls = cJSON_GetObjectItemCaseSensitive(e, "tlsConfig");
			for (int k = 0; k < 3; k++) {
				const char *f = kube_obj_get_string(tls, files[k]);
				if (!f || strncmp(f, OP_EXT_TLS_DIR "/", plen) != 0)
					continue;
				const char *slash = strchr(f + plen, '/');
				if (!slash || slash == f + plen)
					continue;
				char *name = strndup(f + plen, (size_t)(slash - (f + plen)));
				if (!name)
					return -1;
				bool seen = false;
				for (int j = 0; j < *n && !seen; j++)
					seen = !strcmp((*names)[j], name);
				char **x = seen ? NULL : realloc(*names, (size_t)(*n + 1) * sizeof(*x));
				if (seen || !x) {
					free(name);
					if (!seen)
						return -1;
					continue;
				}
				*names = x;
				x[(*n)++] = name;
			}
		}
	}
	return 0;
}

int op_extender_tls_mounts(const char *config_yaml, cJSON *tspec, cJSON *container)
{
	if (!config_yaml)
		return 0;
	cJSON *cfg = kube_yaml_parse_one(config_yaml, strlen(config_yaml), NULL);
	if (!cfg)
		return 0; /* not ours to judge: the plan produced it */
	char **names = NULL;
	int n = 0, rc = collect(cfg, &names, &n);
	cJSON_Delete(cfg);
	if (rc == 0 && n > 1)
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	cJSON *mounts = cJSON_GetObjectItemCaseSensitive(container, "volumeMounts");
	cJSON *vols = cJSON_GetObjectItemCaseSensitive(tspec, "volumes");
	for (int i = 0; rc == 0 && i < n; i++) {
		char vname[64], path[600];
		snprintf(vname, sizeof(vname), "extender-tls-%d", i);
		snprintf(path, sizeof(path), "%s/%s", OP_EXT_TLS_DIR, names[i]);
		cJSON *m = cJSON_CreateObject(), *v = cJSON_CreateObject();
		bool ok = m && v && cJSON_AddStringToObject(v, "name", vname);
		cJSON *sec = ok ? cJSON_AddObjectToObject(v, "secret") : NULL;
		ok = sec && cJSON_AddStringToObject(m, "name", vname) && cJSON_AddStringToObject(m, "mountPath", path) &&
		     cJSON_AddTrueToObject(m, "readOnly") && cJSON_AddStringToObject(sec, "secretName", names[i]);
		if (!ok || !cJSON_AddItemToArray(mounts, m)) {
			cJSON_Delete(m);
			cJSON_Delete(v);
			rc = -1;
			break;
		}
		if (!cJSON_AddItemToArray(vols, v)) {
			cJSON_Delete(v);
			rc = -1;
		}
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}
