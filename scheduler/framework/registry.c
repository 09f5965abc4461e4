/* The plugin registry: lookups over the in-tree tables (built by plugins/registry.c) and the
 * out-of-tree plugins registered at start-up, the removed v1 names, and "did you mean" suggestions.
 * The out-of-tree table is guarded by registry_lock; in-tree tables are immutable. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/registry.h"

/* Plugin names removed from kubescheduler.config.k8s.io/v1 (validation.go invalidPluginsByVersion). */
const char *const sk_removed_v1_plugins[] = { "AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits", NULL };

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct sk_plugin_desc **out_of_tree; /* guarded by registry_lock */
static int nout_of_tree, cap_out_of_tree;         /* guarded by registry_lock */

const struct sk_plugin_desc *sk_registry_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; sk_in_tree_plugins[i]; i++)
		if (!strcmp(sk_in_tree_plugins[i]->name, name))
			return sk_in_tree_plugins[i];
	const struct sk_plugin_desc *found = NULL;
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < nout_of_tree && !found; i++)
		if (!strcmp(out_of_tree[i]->name, name))
			found = out_of_tree[i];
	pthread_mutex_unlock(&registry_lock);
	return found;
}

static bool name_is_upstream(const char *name)
{
	for (int i = 0; sk_unavailable_default_plugins[i]; i++)
		if (!strcmp(sk_unavailable_default_plugins[i], name))
			return true;
	for (int i = 0; sk_removed_v1_plugins[i]; i++)
		if (!strcmp(sk_removed_v1_plugins[i], name))
			return true;
	return false;
}

int sk_registry_register(const struct sk_plugin_desc *desc, char **err)
{
	char *msg = NULL, abi_msg[512];
	if (!desc || !desc->name || !*desc->name) {
		msg = strdup("plugin descriptor has no name");
	} else if (sk_desc_check_abi(desc, abi_msg, sizeof(abi_msg)) != 0) {
		msg = strdup(abi_msg);
	} else if (sk_registry_lookup(desc->name) || name_is_upstream(desc->name)) {
		if (asprintf(&msg, "a plugin named %s already exists", desc->name) < 0)
			msg = NULL;
	} else {
		pthread_mutex_lock(&registry_lock);
		int rc = 0;
		if (nout_of_tree == cap_out_of_tree) {
			int ncap = cap_out_of_tree ? cap_out_of_tree * 2 : 8;
			const struct sk_plugin_desc **n = realloc(out_of_tree, (size_t)ncap * sizeof(*n));
			if (n) {
				out_of_tree = n;
				cap_out_of_tree = ncap;
			} else {
				rc = -1;
			}
		}
		if (rc == 0)
			out_of_tree[nout_of_tree++] = desc;
		pthread_mutex_unlock(&registry_lock);
		if (rc == 0)
			return 0;
		msg = strdup("out of memory registering plugin");
	}
	if (err)
		*err = msg;
	else
		free(msg);
	return -1;
}

/* Levenshtein distance, ASCII case-insensitive (so "nodeaffinity" suggests "NodeAffinity"). */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 128 || lb > 128)
		return 1 << 20;
	int prev[129], cur[129];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			cur[j] = v;
		}
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb];
}

static void consider(const char *name, const char *cand, const char **best, int *best_d)
{
	int d = edit_distance(name, cand);
	if (d < *best_d) {
		*best_d = d;
		*best = cand;
	}
}

const char *sk_registry_suggest(const char *name)
{
	if (!name || !*name)
		return NULL;
	const char *best = NULL;
	int best_d = 1 << 20;
	for (int i = 0; sk_in_tree_plugins[i]; i++)
		consider(name, sk_in_tree_plugins[i]->name, &best, &best_d);
	for (int i = 0; sk_unavailable_default_plugins[i]; i++)
		consider(name, sk_unavailable_default_plugins[i], &best, &best_d);
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < nout_of_tree; i++)
		consider(name, out_of_tree[i]->name, &best, &best_d);
	pthread_mutex_unlock(&registry_lock);
	/* Close enough to be a typo: a third of the name's length, and at least two edits allowed. */
	int limit = (int)strlen(name) / 3;
	if (limit < 2)
		limit = 2;
	return best_d <= limit ? best : NULL;
}
