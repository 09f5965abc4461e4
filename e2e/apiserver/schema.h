/* schema.h — CRD structural schemas (openAPIV3Schema of one CRD version): defaulting, pruning
 * and validation, with field-error messages worded like upstream's; plus the compact
 * known-field table used for fieldValidation=Strict on built-in kinds. No global state. */
#ifndef SK_APISERVER_SCHEMA_H
#define SK_APISERVER_SCHEMA_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Applies defaults (non-nullable nulls are dropped, or replaced by the default), prunes unknown
 * fields (honours x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
 * x-kubernetes-int-or-string, additionalProperties; apiVersion/kind/metadata kept at the root and
 * in embedded resources, metadata reduced to ObjectMeta fields), then validates (type, required,
 * enum, minimum/maximum/exclusive*, multipleOf, minLength/maxLength, pattern, minItems/maxItems,
 * uniqueItems, min/maxProperties, nested objects/arrays, additionalProperties, nullable, format
 * int32). obj is modified in place. Returns NULL when valid, else a cJSON array (caller frees)
 * of causes in upstream's details.causes form: {"reason", "message", "field"} where reason is
 * FieldValueInvalid|FieldValueRequired|FieldValueNotSupported|FieldValueTypeInvalid|
 * FieldValueTooLong|FieldValueTooMany, field is "spec.replicas" / "spec.ports[0].port" and
 * message is the error body without the field, e.g.
 *   `Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
 *   `Required value`, `Unsupported value: "x": supported values: "a", "b"`;
 * the Status message is `<Kind>.<group> "<name>" is invalid: <field>: <message>` (several
 * causes: `[f1: m1, f2: m2]`). If unknown_fields is a cJSON array, pruned field paths
 * ("spec.foo", "metadata.bogus") are appended to it as strings (fieldValidation=Strict/Warn). */
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
