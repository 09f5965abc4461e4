/* The host table: every function of the plugin API, as one X-macro list. A module (module.h)
 * reaches the scheduler only through the struct sk_host_api the scheduler hands to its entry
 * point, so its .so has no undefined schedkit symbol; in-tree plugins call the same functions
 * directly. The list is the single source of the struct, of the core's table
 * (scheduler/framework/host_api.c) and of the module's forwarders (module.h).
 *
 * Each line: F(return type, name, (parameters), (arguments)), or P(void, ...) for a function
 * returning nothing (its forwarder must not "return" a void expression). Variadic functions are
 * listed by their va_list forms (sk_statusv, ...); module.h writes the variadic forwarders.
 * Append-only within a major version: a new function goes at the end of the list (and bumps
 * SK_ABI_MINOR); nothing is removed, reordered or retyped. */
#ifndef SK_SCHEDKIT_HOST_API_H
#define SK_SCHEDKIT_HOST_API_H

#include <stdarg.h>
#include <stdint.h>

#include "schedkit/log.h"
#include "schedkit/plugin.h"
#include "schedkit/selector.h"
#include "schedkit/tpmap.h"
#include "schedkit/node_memo.h"
#include "schedkit/volume.h"

#define SK_HOST_API(F, P) \
	/* plugin.h: status, cycle state, handle, PDBs */ \
	F(const char *, sk_code_string, (enum sk_code c), (c)) \
	F(struct sk_status, sk_status, (enum sk_code code, const char *static_reason), (code, static_reason)) \
	P(void, sk_status_add, (struct sk_status *s, const char *static_reason), (s, static_reason)) \
	F(struct sk_status, sk_statusv, (enum sk_code code, const char *fmt, va_list ap), (code, fmt, ap)) \
	P(void, sk_status_addv, (struct sk_status *s, const char *fmt, va_list ap), (s, fmt, ap)) \
	P(void, sk_status_reset, (struct sk_status *s), (s)) \
	F(struct sk_status, sk_status_copy, (const struct sk_status *s), (s)) \
	F(char *, sk_status_message, (const struct sk_status *s), (s)) \
	F(void *, sk_cycle_state_get, (const struct sk_cycle_state *cs, int slot), (cs, slot)) \
	P(void, sk_cycle_state_put, (struct sk_cycle_state *cs, int slot, void *data, const struct sk_state_ops *ops), (cs, slot, data, ops)) \
	P(void, sk_cycle_state_activate_pod, (struct sk_cycle_state *cs, const char *pod_key), (cs, pod_key)) \
	F(int, sk_prefilter_result_add, (struct sk_prefilter_result *r, const char *node_name), (r, node_name)) \
	F(const struct sk_snapshot *, sk_handle_snapshot, (struct sk_handle *h), (h)) \
	F(const char *, sk_handle_profile_name, (struct sk_handle *h), (h)) \
	F(int, sk_handle_parallelism, (struct sk_handle *h), (h)) \
	P(void, sk_handle_parallel_for, (struct sk_handle *h, int n, void (*fn)(int i, void *ctx), void *ctx), (h, n, fn, ctx)) \
	F(int, sk_handle_bind_pod, (struct sk_handle *h, const struct sk_pod *pod, const char *node_name, char **err), (h, pod, node_name, err)) \
	F(int, sk_handle_nominated_pods, (struct sk_handle *h, const char *node_name, struct sk_pod ***out), (h, node_name, out)) \
	F(int, sk_handle_allow_waiting_pod, (struct sk_handle *h, const char *pod_uid, const char *plugin_name), (h, pod_uid, plugin_name)) \
	F(int, sk_handle_reject_waiting_pod, (struct sk_handle *h, const char *pod_uid, const char *plugin_name, const char *msg), (h, pod_uid, plugin_name, msg)) \
	F(int64_t, sk_handle_now_ns, (struct sk_handle *h), (h)) \
	F(struct sk_pdb *, sk_pdb_decode, (const cJSON *obj, char **err), (obj, err)) \
	P(void, sk_pdb_free, (struct sk_pdb *p), (p)) \
	P(void, sk_pdb_list_free, (struct sk_pdb **list, int n), (list, n)) \
	F(struct sk_cycle_state *, sk_handle_cycle_state_clone, (struct sk_handle *h, const struct sk_cycle_state *cs), (h, cs)) \
	P(void, sk_handle_cycle_state_free, (struct sk_handle *h, struct sk_cycle_state *cs), (h, cs)) \
	F(struct sk_status, sk_handle_run_pre_filter_add_pod, (struct sk_handle *h, struct sk_cycle_state *cs, const struct sk_pod *pod, const struct sk_pod *to_add, const struct sk_node_info *ni), (h, cs, pod, to_add, ni)) \
	F(struct sk_status, sk_handle_run_pre_filter_remove_pod, (struct sk_handle *h, struct sk_cycle_state *cs, const struct sk_pod *pod, const struct sk_pod *to_remove, const struct sk_node_info *ni), (h, cs, pod, to_remove, ni)) \
	F(struct sk_status, sk_handle_run_filter_with_nominated, (struct sk_handle *h, struct sk_cycle_state *cs, const struct sk_pod *pod, const struct sk_node_info *ni), (h, cs, pod, ni)) \
	F(int, sk_handle_list_pdbs, (struct sk_handle *h, struct sk_pdb ***out, char **err), (h, out, err)) \
	F(struct sk_pod *, sk_handle_get_pod, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	F(int64_t, sk_handle_pod_start_time, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	F(int64_t, sk_handle_wall_now_ns, (struct sk_handle *h), (h)) \
	F(bool, sk_handle_terminating_by_preemption, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	F(int, sk_handle_preempt_victim, (struct sk_handle *h, const struct sk_pod *preemptor, const struct sk_pod *victim, const char *node_name, char **err), (h, preemptor, victim, node_name, err)) \
	F(int, sk_handle_clear_nominated, (struct sk_handle *h, const struct sk_pod *pod, char **err), (h, pod, err)) \
	F(bool, sk_handle_is_waiting_pod, (struct sk_handle *h, const char *pod_uid), (h, pod_uid)) \
	P(void, sk_handle_event, (struct sk_handle *h, const struct sk_pod *pod, const char *type, const char *reason, const char *action, const char *note), (h, pod, type, reason, action, note)) \
	F(int, sk_handle_patch_pod_annotation, (struct sk_handle *h, const struct sk_pod *pod, const char *key, const char *value, char **err), (h, pod, key, value, err)) \
	/* types.h: the views */ \
	F(const char *, sk_intern, (const char *s), (s)) \
	F(const char *, sk_intern_n, (const char *s, size_t n), (s, n)) \
	F(const char *, sk_labels_get, (const void *labels, const char *key), (labels, key)) \
	F(bool, sk_labels_equal, (const struct sk_labels *a, const struct sk_labels *b), (a, b)) \
	F(int64_t, sk_resource_scalar, (const struct sk_resource *r, const char *name), (r, name)) \
	F(int, sk_resource_add, (struct sk_resource *a, const struct sk_resource *b, int sign), (a, b, sign)) \
	P(void, sk_resource_clear, (struct sk_resource *r), (r)) \
	F(int, sk_resource_copy, (struct sk_resource *dst, const struct sk_resource *src), (dst, src)) \
	F(bool, sk_toleration_tolerates, (const struct sk_toleration *t, const struct sk_taint *taint), (t, taint)) \
	F(bool, sk_taints_equal, (const struct sk_taint *a, int na, const struct sk_taint *b, int nb), (a, na, b, nb)) \
	F(bool, sk_tolerations_equal, (const struct sk_pod *a, const struct sk_pod *b), (a, b)) \
	F(struct sk_pod *, sk_pod_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_pod *, sk_pod_ref, (struct sk_pod *p), (p)) \
	P(void, sk_pod_unref, (struct sk_pod *p), (p)) \
	F(const char *, sk_pod_key, (const struct sk_pod *p, char *buf, size_t n), (p, buf, n)) \
	F(struct sk_pod *, sk_pod_with_node, (const struct sk_pod *p, const char *node_name), (p, node_name)) \
	F(struct sk_node *, sk_node_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_node *, sk_node_ref, (struct sk_node *n), (n)) \
	P(void, sk_node_unref, (struct sk_node *n), (n)) \
	F(const struct sk_image_state *, sk_snapshot_image_state, (const struct sk_snapshot *s, const struct sk_node_info *ni, const char *image), (s, ni, image)) \
	F(struct sk_node_info *, sk_node_info_clone, (const struct sk_node_info *ni), (ni)) \
	F(int, sk_node_info_add_pod, (struct sk_node_info *ni, struct sk_pod *pod), (ni, pod)) \
	F(int, sk_node_info_remove_pod, (struct sk_node_info *ni, const struct sk_pod *pod), (ni, pod)) \
	P(void, sk_node_info_free, (struct sk_node_info *ni), (ni)) \
	F(const struct sk_node_info *, sk_snapshot_get, (const struct sk_snapshot *s, const char *node_name), (s, node_name)) \
	/* args.h: args errors and JSON helpers */ \
	P(void, sk_errors_addv, (struct sk_errors *e, const char *fmt, va_list ap), (e, fmt, ap)) \
	P(void, sk_errors_free, (struct sk_errors *e), (e)) \
	F(char *, sk_errors_join, (const struct sk_errors *e, const char *sep), (e, sep)) \
	P(void, sk_err_invalid_int, (struct sk_errors *e, const char *path, int64_t v, const char *detail), (e, path, v, detail)) \
	P(void, sk_err_invalid_str, (struct sk_errors *e, const char *path, const char *v, const char *detail), (e, path, v, detail)) \
	P(void, sk_err_invalid_raw, (struct sk_errors *e, const char *path, const char *printed, const char *detail), (e, path, printed, detail)) \
	P(void, sk_err_required, (struct sk_errors *e, const char *path, const char *detail), (e, path, detail)) \
	P(void, sk_err_forbidden, (struct sk_errors *e, const char *path, const char *detail), (e, path, detail)) \
	P(void, sk_err_duplicate, (struct sk_errors *e, const char *path, const char *v), (e, path, v)) \
	P(void, sk_err_unsupported, (struct sk_errors *e, const char *path, const char *v, const char *const *supported), (e, path, v, supported)) \
	F(char *, sk_path_child, (const char *base, const char *child), (base, child)) \
	F(char *, sk_path_index, (const char *base, int i), (base, i)) \
	F(int, sk_json_check_object, (const cJSON *obj, const char *path, const char *const *allowed, bool allow_type_meta, struct sk_errors *e), (obj, path, allowed, allow_type_meta, e)) \
	F(int, sk_json_int, (const cJSON *obj, const char *field, const char *path, int64_t min, int64_t max, int64_t *out, bool *present, struct sk_errors *e), (obj, field, path, min, max, out, present, e)) \
	F(int, sk_json_bool, (const cJSON *obj, const char *field, const char *path, bool *out, bool *present, struct sk_errors *e), (obj, field, path, out, present, e)) \
	F(int, sk_json_string, (const cJSON *obj, const char *field, const char *path, char **out, bool *present, struct sk_errors *e), (obj, field, path, out, present, e)) \
	F(int, sk_validate_label_name, (struct sk_errors *e, const char *path, const char *v), (e, path, v)) \
	F(int, sk_args_check_type_meta, (const cJSON *args, const char *kind_expected, const char *path, struct sk_errors *e), (args, kind_expected, path, e)) \
	F(cJSON *, sk_args_json_new, (const char *kind), (kind)) \
	F(cJSON *, sk_json_create_int64, (int64_t v), (v)) \
	F(int, sk_duration_parse_ms, (const char *s, int64_t *ms), (s, ms)) \
	P(void, sk_duration_format_ms, (int64_t ms, char buf[48]), (ms, buf)) \
	F(int, sk_resource_specs_decode, (const cJSON *arr, const char *path, struct sk_resource_spec **out, int *n, struct sk_errors *e), (arr, path, out, n, e)) \
	P(void, sk_resource_specs_free, (struct sk_resource_spec *specs, int n), (specs, n)) \
	F(cJSON *, sk_resource_specs_encode, (const struct sk_resource_spec *specs, int n), (specs, n)) \
	/* selector.h: label and node selectors */ \
	F(bool, kube_label_selector_matches, (const struct kube_label_selector *s, kube_label_lookup_fn get, const void *ctx), (s, get, ctx)) \
	F(bool, kube_label_selector_is_empty, (const struct kube_label_selector *s), (s)) \
	F(bool, kube_label_selector_is_nothing, (const struct kube_label_selector *s), (s)) \
	F(int, kube_node_selector_compile_object, (const cJSON *node_selector, const char *path, unsigned flags, struct kube_node_selector **out, char **err), (node_selector, path, flags, out, err)) \
	F(bool, kube_node_selector_matches, (const struct kube_node_selector *s, const char *node_name, kube_label_lookup_fn get, const void *ctx), (s, node_name, get, ctx)) \
	F(int, kube_node_selector_node_names, (const struct kube_node_selector *s, const char ***names, size_t *n), (s, names, n)) \
	P(void, kube_node_selector_free, (struct kube_node_selector *s), (s)) \
	F(int, kube_preferred_terms_compile, (const cJSON *terms, const char *path, unsigned flags, struct kube_preferred_terms **out, char **err), (terms, path, flags, out, err)) \
	F(int64_t, kube_preferred_terms_score, (const struct kube_preferred_terms *p, const char *node_name, kube_label_lookup_fn get, const void *ctx), (p, node_name, get, ctx)) \
	P(void, kube_preferred_terms_free, (struct kube_preferred_terms *p), (p)) \
	/* log.h */ \
	F(bool, sk_log_enabled, (int v), (v)) \
	P(void, sk_log_emitv, (char sev, const char *file, int line, const char *msg, const char *kv_fmt, va_list ap), (sev, file, line, msg, kv_fmt, ap)) \
	/* tpmap.h */ \
	F(int64_t *, sk_tpmap_slot, (struct sk_tpmap *m, const char *key, const char *value), (m, key, value)) \
	F(const int64_t *, sk_tpmap_find, (const struct sk_tpmap *m, const char *key, const char *value), (m, key, value)) \
	F(int, sk_tpmap_add_or_delete, (struct sk_tpmap *m, const char *key, const char *value, int64_t delta), (m, key, value, delta)) \
	F(int, sk_tpmap_copy, (struct sk_tpmap *dst, const struct sk_tpmap *src), (dst, src)) \
	P(void, sk_tpmap_free, (struct sk_tpmap *m), (m)) \
	/* plugin.h, appended in 1.0 before its release */ \
	F(int, sk_handle_api_get, (struct sk_handle *h, const char *path, cJSON **out, char **err), (h, path, out, err)) \
	/* volume.h: storage views and listers, appended in 1.1 */ \
	F(void *, sk_vobj_ref, (const void *obj), (obj)) \
	P(void, sk_vobj_unref, (const void *obj), (obj)) \
	P(void, sk_vobj_list_free, (void *list, int n), (list, n)) \
	F(struct sk_pvc *, sk_pvc_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_pv *, sk_pv_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_storage_class *, sk_storage_class_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_csi_node *, sk_csi_node_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_csi_driver *, sk_csi_driver_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_vobj *, sk_vobj_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(const struct sk_csi_node_driver *, sk_csi_node_driver, (const struct sk_csi_node *n, const char *driver), (n, driver)) \
	F(bool, sk_pv_matches_node, (const struct sk_pv *pv, const struct sk_node *node), (pv, node)) \
	F(struct sk_pvc *, sk_handle_get_pvc, (struct sk_handle *h, const char *ns, const char *name), (h, ns, name)) \
	F(struct sk_pv *, sk_handle_get_pv, (struct sk_handle *h, const char *name), (h, name)) \
	F(struct sk_storage_class *, sk_handle_get_storage_class, (struct sk_handle *h, const char *name), (h, name)) \
	F(struct sk_csi_node *, sk_handle_get_csi_node, (struct sk_handle *h, const char *node_name), (h, node_name)) \
	F(struct sk_csi_driver *, sk_handle_get_csi_driver, (struct sk_handle *h, const char *name), (h, name)) \
	F(int, sk_handle_list_pvs, (struct sk_handle *h, struct sk_pv ***out), (h, out)) \
	F(int, sk_handle_api_patch, (struct sk_handle *h, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err), (h, path, patch, out, conflict, err)) \
	/* plugin.h and selector.h: listers (Services, controllers, Namespaces), appended in 1.1 */ \
	F(struct kube_label_selector *, sk_handle_default_selector, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	F(struct sk_labels *, sk_handle_namespace_labels, (struct sk_handle *h, const char *ns), (h, ns)) \
	P(void, sk_labels_free, (struct sk_labels *l), (l)) \
	F(int, sk_handle_namespaces_matching, (struct sk_handle *h, const struct kube_label_selector *sel, const char ***out), (h, sel, out)) \
	P(void, kube_label_selector_free, (struct kube_label_selector *s), (s)) \
	/* plugin.h: every reason of a status, appended in 1.1 */ \
	F(int, sk_status_reason_count, (const struct sk_status *s), (s)) \
	F(const char *, sk_status_reason, (const struct sk_status *s, int i), (s, i)) \
	/* plugin.h: the listers' objects, appended in 1.1 */ \
	F(int, sk_handle_list_objects, (struct sk_handle *h, const char *kind, const char *ns, void (*fn)(const cJSON *obj, void *u), void *u), (h, kind, ns, fn, u)) \
	F(int, sk_handle_get_object, (struct sk_handle *h, const char *kind, const char *ns, const char *name, void (*fn)(const cJSON *obj, void *u), void *u), (h, kind, ns, name, fn, u)) \
	/* plugin.h: preemption through the HTTP extenders, appended in 1.1 */ \
	P(void, sk_victims_free, (struct sk_victims *list, int n), (list, n)) \
	F(int, sk_handle_preempt_extenders, (struct sk_handle *h, const struct sk_pod *pod, struct sk_victims **list, int *n, char **err), (h, pod, list, n, err)) \
	/* volume.h: CSIStorageCapacity, VolumeAttachment, CSI migration, appended in 1.2 */ \
	F(struct sk_csi_storage_capacity *, sk_csi_storage_capacity_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(struct sk_volume_attachment *, sk_volume_attachment_decode, (const cJSON *obj, char **err), (obj, err)) \
	F(bool, sk_csi_storage_capacity_limit, (const struct sk_csi_storage_capacity *c, int64_t *limit), (c, limit)) \
	F(int, sk_handle_list_csi_storage_capacities, (struct sk_handle *h, struct sk_csi_storage_capacity ***out), (h, out)) \
	F(int, sk_handle_list_volume_attachments, (struct sk_handle *h, const char *node_name, struct sk_volume_attachment ***out), (h, node_name, out)) \
	F(const char *, sk_csi_migration_driver, (const char *intree_plugin), (intree_plugin)) \
	F(const char *, sk_csi_migration_plugin_of_source, (const char *source_field), (source_field)) \
	F(const char *, sk_csi_migration_plugin_of_volume, (const struct sk_pod_volume *v), (v)) \
	F(int, sk_csi_migration_translate, (const char *source_field, const char *id, const struct sk_labels *labels, const char **driver, char *handle, size_t n), (source_field, id, labels, driver, handle, n)) \
	F(int, sk_csi_migration_translate_volume, (const struct sk_pod_volume *v, const char **driver, char *handle, size_t n), (v, driver, handle, n)) \
	F(bool, sk_csi_node_plugin_migrated, (const struct sk_csi_node *n, const char *intree_plugin), (n, intree_plugin)) \
	/* plugin.h: asynchronous preemption (feature gates, Activate, victim deletion), appended in 1.2 */ \
	F(bool, sk_handle_feature_enabled, (struct sk_handle *h, const char *gate), (h, gate)) \
	P(void, sk_handle_activate_pod, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	F(bool, sk_handle_pod_deleted, (struct sk_handle *h, const struct sk_pod *pod), (h, pod)) \
	P(void, sk_handle_record_victim, (struct sk_handle *h, const struct sk_pod *victim), (h, victim)) \
	/* selector.h: selector equality (ABI 1.2) */ \
	F(bool, kube_label_selector_equal, (const struct kube_label_selector *a, const struct kube_label_selector *b), (a, b)) \
	/* node_memo.h: per-node sums across cycles (ABI 1.2) */ \
	F(struct sk_node_sums *, sk_node_sums_new, (void), ()) \
	F(struct sk_node_sums *, sk_node_sums_ref, (struct sk_node_sums *s), (s)) \
	P(void, sk_node_sums_unref, (struct sk_node_sums *s), (s)) \
	F(int, sk_node_sums_own, (struct sk_node_sums **s), (s)) \
	F(int, sk_node_sums_add, (struct sk_node_sums *s, int map, const char *key, const char *value, int64_t delta), (s, map, key, value, delta)) \
	F(int, sk_node_contribs_add, (struct sk_node_contribs *cs, int map, const char *key, const char *value, int64_t delta), (cs, map, key, value, delta)) \
	F(struct sk_node_memo *, sk_node_memo_new, (void), ()) \
	P(void, sk_node_memo_free, (struct sk_node_memo *m), (m)) \
	F(bool, sk_node_memo_try_lock, (struct sk_node_memo *m), (m)) \
	P(void, sk_node_memo_unlock, (struct sk_node_memo *m), (m)) \
	F(void *, sk_node_memo_sig, (const struct sk_node_memo *m), (m)) \
	P(void, sk_node_memo_reset, (struct sk_node_memo *m, void *sig, void (*sig_free)(void *sig)), (m, sig, sig_free)) \
	F(struct sk_node_sums *, sk_node_memo_update, (struct sk_node_memo *m, struct sk_handle *h, struct sk_node_info *const *list, int n, sk_node_contrib_fn fn, void *ctx), (m, h, list, n, fn, ctx)) \
	P(void, sk_node_memo_last, (const struct sk_node_memo *m, int *recounted, int *dropped), (m, recounted, dropped)) \
	F(struct sk_node_sums *, sk_node_sums_count, (struct sk_handle *h, struct sk_node_info *const *list, int n, sk_node_contrib_fn fn, void *ctx), (h, list, n, fn, ctx)) \
	/* selector.h: node selector equality (ABI 1.3) */ \
	F(bool, kube_node_selector_equal, (const struct kube_node_selector *a, const struct kube_node_selector *b), (a, b))

/* Begins with the same three fields as every ABI struct; then one pointer per function, in list
 * order. size is sizeof(struct sk_host_api) of the scheduler's build: a module built against
 * headers with more functions (a newer minor) than the scheduler has is refused. */
#define SK_HOST_API_MEMBER(ret, name, params, args) ret (*name) params;
struct sk_host_api {
	uint32_t abi_major, abi_minor, size;
	SK_HOST_API(SK_HOST_API_MEMBER, SK_HOST_API_MEMBER)
};

#endif
