/* schema.h — CRD structural schemas (openAPIV3Schema of one CRD version): defaulting, pruning
 * and validation, with field-error messages worded like upstream's; plus the compact
 * known-field table used for fieldValidation=Strict on built-in kinds. No global state. */
#ifndef SK_APISERVER_SCHEMA_H
#define SK_APISERVER_SCHEMA_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Applies defaults, prunes unknown fields (honours x-kubernetes-preserve-unknown-fields,
 * x-kubernetes-embedded-resource, x-kubernetes-int-or-string; metadata/apiVersion/kind kept at
 * the root), then validates (type, required, enum, minimum/maximum/exclusive*, minLength/
 * maxLength, pattern (POSIX ERE), minItems/maxItems, nested objects/arrays,
 * additionalProperties, nullable, format int32/int64). obj is modified in place.
 * Returns NULL when valid, else a cJSON array (caller frees) of causes
 * [{"reason":"FieldValueInvalid|FieldValueRequired|FieldValueNotSupported|FieldValueTypeInvalid",
 *   "message":"...", "field":"spec.replicas"}], messages worded as upstream's field errors
 * (e.g. `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`).
 * If unknown_fields is non-NULL (a cJSON array), pruned field paths ("spec.foo") are appended
 * to it as strings (for fieldValidation=Strict/Warn). */
cJSON *apis_schema_apply(const cJSON *schema, cJSON *obj, cJSON *unknown_fields);

/* Checks a schema itself is usable (structural enough for this server): returns NULL or a
 * message (caller frees) naming the offending path. */
char *apis_schema_check(const cJSON *schema);

/* Built-in kinds under fieldValidation=Strict/Warn: appends to unknown_fields (a cJSON array)
 * the paths of fields of obj that the kind does not know ("spec.foo", "metadata.bogus").
 * Only the kinds in the table (see schema.c) are checked, to the depth the table describes;
 * other kinds add nothing. Returns the number of unknown fields appended. */
int apis_builtin_unknown_fields(const char *group, const char *kind, const cJSON *obj,
                                cJSON *unknown_fields);

/* Formats the strict-decoding error message upstream uses from unknown_fields:
 * `strict decoding error: unknown field "spec.foo", unknown field "bar"`. Caller frees. */
char *apis_strict_error_message(const cJSON *unknown_fields);

#endif
