/* audit.c — an access log of resource requests, for tests that compare what a binary does with
 * what its RBAC grants (e2e/tests/rbac_least_privilege.sh). Enabled by the environment variable
 * SK_APISERVER_AUDIT_LOG=FILE (appended, one tab-separated line per request:
 * user-agent, verb, API group, resource, subresource, namespace, name; "-" for empty). The verb
 * and name follow upstream's RequestInfo (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go):
 * GET of a collection is list, or watch with ?watch=true or /watch/; list and watch take the name
 * from a fieldSelector metadata.name=NAME, as the RBAC authorizer does. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *audit_file;

static void open_audit(void)
{
	const char *p = getenv("SK_APISERVER_AUDIT_LOG");
	if (p && *p)
		audit_file = fopen(p, "a");
}

/* Go's strconv.ParseBool true values (how upstream reads ?watch=). */
static bool go_true(const char *v)
{
	return v && (!strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "T") || !strcmp(v, "TRUE") || !strcmp(v, "true") ||
		     !strcmp(v, "True"));
}

/* The name a fieldSelector pins: "metadata.name=NAME" (alone or among other terms), or NULL. */
static const char *selector_name(const char *fs, char *buf, size_t len)
{
	if (!fs)
		return NULL;
	const char *p = strstr(fs, "metadata.name=");
	if (!p || (p != fs && p[-1] != ','))
		return NULL;
	p += strlen("metadata.name=");
	size_t n = strcspn(p, ",");
	if (n == 0 || n >= len)
		return NULL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static const char *verb_of(const struct apis_req *r, const char *name, bool watch_path)
{
	const char *m = r->method;
	if (!strcmp(m, "GET"))
		return watch_path || go_true(apis_query(r, "watch")) ? "watch" : name ? "get" : "list";
	if (!strcmp(m, "POST"))
		return "create";
	if (!strcmp(m, "PUT"))
		return "update";
	if (!strcmp(m, "PATCH"))
		return "patch";
	if (!strcmp(m, "DELETE"))
		return name ? "delete" : "deletecollection";
	return m;
}

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

void apis_audit(const struct apis_req *r, const char *group, const char *resource, const char *sub, const char *ns,
		const char *name, bool watch_path)
{
	pthread_once(&once, open_audit);
	if (!audit_file)
		return;
	const char *verb = verb_of(r, name, watch_path);
	char buf[256];
	if (!name && (!strcmp(verb, "list") || !strcmp(verb, "watch")))
		name = selector_name(apis_query(r, "fieldSelector"), buf, sizeof buf);
	pthread_mutex_lock(&mu);
	fprintf(audit_file, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(r->user_agent), verb, dash(group), dash(resource), dash(sub),
		dash(ns), dash(name));
	fflush(audit_file);
	pthread_mutex_unlock(&mu);
}
