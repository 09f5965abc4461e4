/* Kubernetes objects as cJSON trees: YAML/JSON decoding (libyaml) typed the way kubectl's
 * sigs.k8s.io/yaml does it, deterministic YAML and compact JSON output, dotted-path access,
 * metadata, owner references, conditions and RFC 3339 time helpers.
 *
 * Integers beyond 2^53: cJSON keeps numbers as doubles. kube_yaml_parse keeps the exact source
 * text of every integer it reads in the number item's valuestring (freed by cJSON_Delete,
 * copied by cJSON_Duplicate); kube_json_print, kube_yaml_emit and kube_json_get_int64 use that
 * text when it still agrees with valuedouble, so int64 values survive a parse/print cycle.
 * Numbers built with cJSON_CreateNumber are limited to double precision. */
#ifndef KUBE_OBJECT_H
#define KUBE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

/* ---- decoding / encoding ---- */

/* Parses one or more YAML documents (JSON is YAML) into a cJSON array with one element per
 * non-empty document (a document that is empty or only "null" is skipped, as kubectl does).
 * Plain scalars are typed the way sigs.k8s.io/yaml (go-yaml v2 rules, untyped target, i.e.
 * what kubectl sends) types them: true/false/yes/no/on/off/y/n in their lower, Title and UPPER
 * spellings -> bool (so `enabled: yes` is true and a plain key `y:` becomes "true", exactly the
 * kubectl gotcha); null/Null/NULL/~/empty -> null; decimal, 0x, 0o, 0b, leading-0 octal and
 * '_'-separated integers -> number (exact text kept, up to uint64); other YAML floats -> number;
 * timestamps stay strings. .inf/.nan are an error (JSON cannot carry them; kubectl fails the
 * same way). Quoted and block scalars and !!str are strings. Anchors/aliases are expanded
 * (merge keys "<<" honoured; alias bombs refused). Non-string keys become their canonical text
 * ("1", "true", "null"). Duplicate keys: the last value wins, at the first key's position.
 * Returns NULL on error with *err = "line L column C: problem" (caller frees *err; err may be
 * NULL). The returned array is owned by the caller (cJSON_Delete). */
cJSON *kube_yaml_parse(const char *text, size_t len, char **err);

/* Parses exactly one JSON value (RFC 8259; a leading BOM is skipped). Integer literals keep
 * their exact text (see the top of this file), duplicate keys: last wins at the first key's
 * position (as Go's encoding/json into a map), depth limit 10000. Faster than the YAML path
 * and used by it for input that starts with '{' or '['. NULL on error with *err =
 * "line L column C: problem" (caller frees). Caller frees the result. */
cJSON *kube_json_parse(const char *text, size_t len, char **err);

/* Convenience: the first document of kube_yaml_parse, or NULL (with *err) when there is
 * none ("no document"). Caller frees the result. */
cJSON *kube_yaml_parse_one(const char *text, size_t len, char **err);

/* Strict decoding (what upstream's strict serializers do with component configs): the same, but a
 * key given twice in one mapping is an error, "line L column C: key \"x\" already set in map"
 * (YAML) or "line L column C: duplicate key \"x\"" (kube_json_parse_strict), L and C being the
 * position of the second key. Merge keys ("<<") never count as duplicates. */
cJSON *kube_yaml_parse_strict(const char *text, size_t len, char **err);
cJSON *kube_yaml_parse_one_strict(const char *text, size_t len, char **err);
cJSON *kube_json_parse_strict(const char *text, size_t len, char **err);

/* Adds v to object o under key, taking v: deleted when it cannot be added. false when v is NULL
 * (an allocation of the caller's failed) or on out of memory, so encoders chain it with &&. */
bool kube_json_add(cJSON *o, const char *key, cJSON *v);

/* Block-style YAML for obj, keys in object order, strings quoted whenever a plain scalar would
 * read back as something else. Round trip: kube_yaml_parse(kube_yaml_emit(x))[0] equals x.
 * Returns malloc'd text (caller frees) or NULL on allocation failure. */
char *kube_yaml_emit(const cJSON *obj);

/* Compact JSON (no spaces). Integers are printed as integers (never 1e+18), exact int64 text
 * kept by kube_yaml_parse is used. Returns malloc'd text (caller frees) or NULL on OOM. */
char *kube_json_print(const cJSON *obj);

/* Reads a number item as int64: exact when the item carries its source text, else from the
 * double when it is integral and in range. Returns 0, or -1 when not an integer number. */
int kube_json_get_int64(const cJSON *item, int64_t *out);

/* Creates a number item holding an exact int64 (valuestring carries the digits). NULL on OOM. */
cJSON *kube_json_create_int64(int64_t v);
/* A JSON array of the n strings of v (copied); NULL on OOM. */
cJSON *kube_json_string_array(const char *const *v, int n);

/* ---- dotted paths ("metadata.name", "spec.nodeName"); no array indexing ---- */

/* The item at path, or NULL. Borrowed pointer into obj. */
cJSON *kube_obj_get(const cJSON *obj, const char *dotted_path);
/* The string at path; NULL when absent or not a string. Borrowed. */
const char *kube_obj_get_string(const cJSON *obj, const char *dotted_path);
/* Sets a string at path, creating intermediate objects and replacing a non-object in the
 * way. Returns 0, or -1 on OOM / obj not an object / empty path. */
int kube_obj_set_string(cJSON *obj, const char *dotted_path, const char *v);
/* Sets any item at path (takes ownership of item even on failure). Returns 0 or -1. */
int kube_obj_set(cJSON *obj, const char *dotted_path, cJSON *item);

/* ---- metadata (all borrowed; NULL when absent) ---- */
const char *kube_meta_name(const cJSON *obj);
const char *kube_meta_namespace(const cJSON *obj);
const char *kube_meta_uid(const cJSON *obj);
const char *kube_meta_resource_version(const cJSON *obj);
const cJSON *kube_meta_labels(const cJSON *obj);
const cJSON *kube_meta_annotations(const cJSON *obj);
const char *kube_meta_label(const cJSON *obj, const char *key);
const char *kube_meta_annotation(const cJSON *obj, const char *key);

/* ---- owner references (metadata.ownerReferences) ---- */
bool kube_owner_ref_has(const cJSON *obj, const char *uid);
/* The ownerReference with controller: true, or NULL. Borrowed. */
const cJSON *kube_owner_ref_controller(const cJSON *obj);
/* Replaces the reference with the same uid, else appends one. blockOwnerDeletion and
 * controller are set to true when controller, omitted otherwise. Returns 0 or -1 (OOM, bad
 * arguments). */
int kube_owner_ref_set(cJSON *obj, const char *api_version, const char *kind, const char *name,
		       const char *uid, bool controller);

/* ---- conditions (metav1.Condition and the pod/node condition shape) ---- */

/* The element of conditions_array whose "type" equals type, or NULL. Borrowed. */
const cJSON *kube_condition_find(const cJSON *conditions_array, const char *type);
/* Upserts status.conditions[type] (status is the object holding "conditions"; the array is
 * created if missing). Sets status/reason/message (reason/message omitted when NULL),
 * observedGeneration when >= 0; lastTransitionTime = now only when the condition is new or its
 * status changed. Returns true if anything changed, false if not (or on OOM). */
bool kube_condition_set(cJSON *status, const char *type, const char *status_value, const char *reason,
			const char *message, long long observed_generation, const char *now_rfc3339);

/* ---- time ---- */

/* "2006-01-02T15:04:05Z" in UTC (metav1.Time wire form). */
void kube_time_rfc3339(char buf[32], time_t t);
/* metav1.MicroTime: RFC 3339 in UTC with exactly 6 fractional digits, from Unix seconds. */
void kube_time_micro(char buf[40], double t);
/* Parses RFC 3339 with optional fractional seconds (dropped) and Z or +hh:mm/-hh:mm offset.
 * Returns 0 or -1. */
int kube_time_parse_rfc3339(const char *s, time_t *out);

/* Reads a whole file through one descriptor (a path swapped atomically, as kubelet does for
 * ConfigMap volumes, yields the old or the new content, never a mix). Returns the bytes,
 * NUL-terminated (caller frees), and *len; NULL with *errnum = errno, ENOMEM, or EFBIG when
 * max_bytes (0 = no limit) is exceeded. */
char *kube_read_file(const char *path, size_t max_bytes, size_t *len, int *errnum);

#endif
