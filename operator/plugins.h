/* The operator's decision for a set of SchedulerPlugins (schedkit.io/v1alpha1): which are
 * accepted (valid spec, no plugin name or file base name already taken by an older one, no name
 * shadowing an in-tree plugin), the plugin names SchedulerProfiles may then use, the hash the
 * scheduler Deployment's pod template carries, and each SchedulerPlugin's status.
 * Pure: reads the objects, does no I/O. */
#ifndef OP_PLUGINS_H
#define OP_PLUGINS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define OP_PLUGIN_KIND "SchedulerPlugin"
#define OP_PLUGIN_RESOURCE "schedulerplugins"
/* The emptyDir the init containers fill and the scheduler reads (--plugin-dir). */
#define OP_PLUGIN_DIR "/var/lib/schedkit/plugins"
/* The plugin directory of the scheduler image (the contrib modules `make install` ships): always
 * a --plugin-dir of the scheduler, and the operator's own --plugin-dir default (its image carries
 * the same modules, so it validates their names and args as the scheduler will). */
#define OP_IMAGE_PLUGIN_DIR "/usr/lib/schedkit/plugins"
#define OP_PLUGIN_VOLUME "plugins"
/* Pod template annotation: changes with the accepted set, so the Deployment rolls. */
#define OP_PLUGINS_HASH_ANNOTATION "schedkit.io/plugins-hash"
/* Init containers are named OP_PLUGIN_CONTAINER_PREFIX + metadata.name (an RFC 1123 label). */
#define OP_PLUGIN_CONTAINER_PREFIX "plugin-"
#define OP_PLUGIN_NAME_MAX (63 - (int)(sizeof OP_PLUGIN_CONTAINER_PREFIX - 1))

struct op_plugin_result {
	char *name;              /* metadata.name */
	int64_t generation;      /* metadata.generation (0 when absent) */
	bool accepted;
	const char *reason;      /* OP_REASON_ACCEPTED / _INVALID / _CONFLICT (plan.h; static) */
	char *message;           /* "valid", the validation errors joined by "; ", or the clash */
	/* accepted only (NULL/0 otherwise): what its init container copies */
	char *image;
	char *pull_policy;       /* NULL when unset */
	int nfiles, nplugins;
	char **files;            /* spec.files, in order */
	char **plugins;          /* spec.plugins, in order */
};

struct op_plugin_set {
	int n;
	struct op_plugin_result *items; /* sorted by metadata.name */
	int naccepted;
	const char **external;          /* NULL-terminated, sorted: the plugin names the accepted ones
					   provide (strings borrowed from items); never NULL after a
					   successful build */
	char hash[65];                  /* sha256 hex of the accepted specs in name order; "" when
					   none is accepted */
};

/* Builds the set from objs (a JSON array of SchedulerPlugin objects; NULL = none; objects being
 * deleted are left out). Clashes are settled by age: the older SchedulerPlugin (creationTimestamp,
 * then name) keeps a plugin name or file base name, the newer one reports Conflict. Returns 0 and
 * *out (free with op_plugin_set_free), or -1 and *err (caller frees) on OOM. */
int op_plugin_set_build(const cJSON *objs, struct op_plugin_set *out, char **err);
/* The same, also refusing (Invalid) a plugin name one of modules provides (the scheduler image's
 * plugins, loaded from the operator's --plugin-dir). modules NULL = none. */
struct sk_module_set;
int op_plugin_set_build_with(const cJSON *objs, const struct sk_module_set *modules, struct op_plugin_set *out,
			     char **err);
void op_plugin_set_free(struct op_plugin_set *s);
/* The result for metadata.name, or NULL. Borrowed. */
const struct op_plugin_result *op_plugin_set_find(const struct op_plugin_set *s, const char *name);

/* True when name is an in-tree plugin of this build, or an upstream default it lacks (those
 * names are reserved: a config naming them means the upstream plugin). */
bool op_plugin_name_in_tree(const char *name);

/* The status obj (a SchedulerPlugin) should have: observedGeneration and the Accepted condition
 * (other conditions kept; lastTransitionTime moves only when the status does). now: RFC 3339.
 * Caller frees; NULL on OOM. */
cJSON *op_plugin_status_desired(const cJSON *obj, const struct op_plugin_result *r, const char *now);

#endif
