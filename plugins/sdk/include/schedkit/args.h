/* Plugin args: the validation errors an args decoder collects, and the strict JSON helpers every
 * args_decode/args_encode uses (upstream field.Error wording, field paths, typed readers, Go
 * durations, [{name, weight}] resource lists). Implemented by the core (scheduler/config/). */
#ifndef SK_SCHEDKIT_ARGS_H
#define SK_SCHEDKIT_ARGS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* ---------- errors while decoding config/args ---------- */
/* Collected validation errors; each message is prefixed by its field path, e.g.
 * "profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: ..." */
struct sk_errors {
	int n, cap;
	char **msgs;
};
void sk_errors_addf(struct sk_errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sk_errors_addv(struct sk_errors *e, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sk_errors_free(struct sk_errors *e);
char *sk_errors_join(const struct sk_errors *e, const char *sep); /* caller frees */

/* ---------- field errors ----------
 * Messages follow upstream field.Error: "<path>: Invalid value: <value>: <detail>", "<path>:
 * Required value: <detail>", "<path>: Unsupported value: \"x\": supported values: \"a\", \"b\"",
 * "<path>: Duplicate value: \"x\"", "<path>: Forbidden: <detail>". Strict decoding rejects unknown
 * keys with `unknown field "<path>.<key>"` (the full path, as sigs.k8s.io/json reports it). */
void sk_err_invalid_int(struct sk_errors *e, const char *path, int64_t v, const char *detail);
void sk_err_invalid_str(struct sk_errors *e, const char *path, const char *v, const char *detail);
void sk_err_invalid_raw(struct sk_errors *e, const char *path, const char *printed, const char *detail);
void sk_err_required(struct sk_errors *e, const char *path, const char *detail);
void sk_err_forbidden(struct sk_errors *e, const char *path, const char *detail);
void sk_err_duplicate(struct sk_errors *e, const char *path, const char *v);
void sk_err_unsupported(struct sk_errors *e, const char *path, const char *v, const char *const *supported);
/* "<base>.<child>" (or child alone when base is ""), "<base>[i]": malloc'd, NULL on OOM. */
char *sk_path_child(const char *base, const char *child);
char *sk_path_index(const char *base, int i);
/* NULL or an object whose keys are all in allowed (NULL-terminated; "apiVersion" and "kind" are
 * always allowed when allow_type_meta). Reports every offending key. Returns 0 or -1. */
int sk_json_check_object(const cJSON *obj, const char *path, const char *const *allowed, bool allow_type_meta,
			 struct sk_errors *e);
/* Typed field readers. Absent or JSON null: *present = false (may be NULL), *out untouched, 0.
 * Wrong type or out of [min, max]: error naming path.field, -1. */
int sk_json_int(const cJSON *obj, const char *field, const char *path, int64_t min, int64_t max, int64_t *out,
		bool *present, struct sk_errors *e);
int sk_json_bool(const cJSON *obj, const char *field, const char *path, bool *out, bool *present,
		 struct sk_errors *e);
/* *out is malloc'd (caller frees; replaced only when present). */
int sk_json_string(const cJSON *obj, const char *field, const char *path, char **out, bool *present,
		   struct sk_errors *e);
/* metav1validation.ValidateLabelName: one "Invalid value" error per problem. Returns 0 or -1. */
int sk_validate_label_name(struct sk_errors *e, const char *path, const char *v);
/* Checks apiVersion/kind of plugin args when given: kind must equal kind_expected and apiVersion
 * kubescheduler.config.k8s.io/v1. Returns 0 or -1. */
int sk_args_check_type_meta(const cJSON *args, const char *kind_expected, const char *path, struct sk_errors *e);
/* A new args object {"kind": kind, "apiVersion": "kubescheduler.config.k8s.io/v1"}; NULL on OOM. */
cJSON *sk_args_json_new(const char *kind);
/* A JSON number holding v exactly (a double loses integers above 2^53); NULL on OOM. For args_encode. */
cJSON *sk_json_create_int64(int64_t v);
/* Go time.Duration text ("1m30s", "500ms") <-> milliseconds. parse: 0 or -1. */
int sk_duration_parse_ms(const char *s, int64_t *ms);
void sk_duration_format_ms(int64_t ms, char buf[48]);

/* resources [{name, weight}] shared by NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs */
struct sk_resource_spec {
	char *name;
	int64_t weight;
};
/* Decodes a resources array at path (strict); *out malloc'd array of *n entries (names malloc'd). */
int sk_resource_specs_decode(const cJSON *arr, const char *path, struct sk_resource_spec **out, int *n,
			     struct sk_errors *e);
void sk_resource_specs_free(struct sk_resource_spec *specs, int n);
cJSON *sk_resource_specs_encode(const struct sk_resource_spec *specs, int n);

#endif
