/* Test fixtures: pods, nodes, node infos and snapshots from short JSON/YAML strings (fixtures.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "scheduler/tests/fixtures.h"

static cJSON *parse(const char *text, char **err)
{
	*err = NULL;
	cJSON *j = cJSON_Parse(text);
	if (j)
		return j;
	return kube_yaml_parse_one(text, strlen(text), err);
}

cJSON *fx_json(const char *text)
{
	char *err = NULL;
	cJSON *j = parse(text, &err);
	if (!j) {
		print_error("fixture: cannot parse: %s\n%s\n", err ? err : "?", text);
		free(err);
		fail();
	}
	return j;
}

static void pod_defaults(cJSON *j)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	if (!cJSON_IsObject(meta))
		return;
	cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	if (!cJSON_IsString(ns)) {
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
		cJSON_AddStringToObject(meta, "namespace", "default");
	}
}

static char *decode_error(const char *text, bool pod)
{
	char *err = NULL;
	cJSON *j = parse(text, &err);
	if (!j)
		return err;
	if (pod) {
		pod_defaults(j);
		struct sk_pod *p = sk_pod_decode(j, &err);
		sk_pod_unref(p);
	} else {
		struct sk_node *n = sk_node_decode(j, &err);
		sk_node_unref(n);
	}
	cJSON_Delete(j);
	return err;
}

char *fx_pod_error(const char *text)
{
	return decode_error(text, true);
}

char *fx_node_error(const char *text)
{
	return decode_error(text, false);
}

struct sk_pod *fx_pod(const char *text)
{
	cJSON *j = fx_json(text);
	pod_defaults(j);
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(j, &err);
	cJSON_Delete(j);
	if (!p) {
		print_error("fixture: pod decode failed: %s\n%s\n", err ? err : "?", text);
		free(err);
		fail();
	}
	return p;
}

struct sk_node *fx_node(const char *text)
{
	cJSON *j = fx_json(text);
	char *err = NULL;
	struct sk_node *n = sk_node_decode(j, &err);
	cJSON_Delete(j);
	if (!n) {
		print_error("fixture: node decode failed: %s\n%s\n", err ? err : "?", text);
		free(err);
		fail();
	}
	return n;
}

struct sk_node_info *fx_node_info(struct sk_node *node, ...)
{
	struct sk_node_info *ni = sk_node_info_new(node);
	assert_non_null(ni);
	sk_node_unref(node);
	va_list ap;
	va_start(ap, node);
	struct sk_pod *p;
	while ((p = va_arg(ap, struct sk_pod *)) != NULL) {
		assert_int_equal(sk_node_info_add_pod(ni, p), 0);
		sk_pod_unref(p);
	}
	va_end(ap);
	return ni;
}

struct sk_snapshot *fx_snapshot_of(struct sk_node_info **nis, int n)
{
	struct sk_snapshot *s = sk_snapshot_from_node_infos(nis, n);
	assert_non_null(s);
	return s;
}

struct sk_snapshot *fx_snapshot(struct sk_node_info *first, ...)
{
	int n = 0, cap = 8;
	struct sk_node_info **nis = malloc(sizeof(*nis) * (size_t)cap);
	assert_non_null(nis);
	va_list ap;
	va_start(ap, first);
	for (struct sk_node_info *ni = first; ni; ni = va_arg(ap, struct sk_node_info *)) {
		if (n == cap) {
			cap *= 2;
			nis = realloc(nis, sizeof(*nis) * (size_t)cap);
			assert_non_null(nis);
		}
		nis[n++] = ni;
	}
	va_end(ap);
	struct sk_snapshot *s = fx_snapshot_of(nis, n);
	free(nis);
	return s;
}
