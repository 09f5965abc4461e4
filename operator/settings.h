/* The scheduler Deployment's settings an installation may change (the operator's
 * --scheduler-settings file, YAML; docs/operator.md "Scheduler settings"): image, replicas,
 * priority class, resources, nodeSelector, tolerations, extra volumes and mounts. They are part
 * of the desired Deployment, so drift repair keeps them rather than undoing them. Parsing is
 * strict: an unknown field or a wrong type is an error naming the file and the field. */
#ifndef OP_SETTINGS_H
#define OP_SETTINGS_H

#include <cjson/cJSON.h>

#define OP_DEFAULT_PRIORITY_CLASS "system-cluster-critical"
#define OP_DEFAULT_MEMORY_LIMIT "512Mi"

struct op_settings {
	char *image;            /* NULL: not set */
	int replicas;           /* -1: not set; else 1..100 */
	char *priority_class;   /* NULL: not set; "" = no priorityClassName */
	cJSON *resources;       /* {requests: {...}, limits: {...}} with valid quantities; NULL: not set
				   (the default: requests 100m CPU / 128Mi, limit 512Mi memory) */
	cJSON *node_selector;   /* {label: value}; NULL: none */
	cJSON *tolerations;     /* [Toleration]; NULL: none */
	cJSON *volumes;         /* extra pod volumes [{name, ...}]; NULL: none */
	cJSON *volume_mounts;   /* extra mounts of the scheduler container [{name, mountPath, ...}] */
};

/* Parses text (YAML or JSON; source names it in messages). An empty document sets nothing.
 * Returns 0 and *out (free with op_settings_free), or -1 and *err ("FILE: field: why"; caller
 * frees) leaving *out empty. */
int op_settings_parse(const char *text, size_t len, const char *source, struct op_settings *out, char **err);

/* Reads and parses the file at path. Same returns. */
int op_settings_load(const char *path, struct op_settings *out, char **err);

void op_settings_free(struct op_settings *s); /* NULL is a no-op; leaves *s empty */

#endif
