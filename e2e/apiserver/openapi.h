/* openapi.h — /openapi/v3 discovery for kubectl: an index of group-versions and per
 * group-version documents whose PATCH operations carry x-kubernetes-group-version-kind and
 * x-kubernetes-action: patch with a fieldValidation parameter, so `kubectl apply` with default
 * validation chooses server-side validation. Component schemas are minimal (CRDs: their own). */
#ifndef SK_APISERVER_OPENAPI_H
#define SK_APISERVER_OPENAPI_H

#include <cjson/cJSON.h>

/* resources: array of {"group","version","kind","resource"(plural),"namespaced":bool,
 * "schema": openAPIV3Schema or null} for every served resource, CRDs included. Subresource
 * entries (resource containing '/') are ignored. */
char *apis_openapi_v3_index(const cJSON *resources);        /* JSON text of /openapi/v3, caller frees */
/* gv_path: "api/v1", "apis/apps/v1"; returns JSON text (caller frees) or NULL if unknown. */
char *apis_openapi_v3_doc(const cJSON *resources, const char *gv_path);

#endif
