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

/* GET /openapi/v2 (kubectl asks for it with Accept
 * application/com.github.proto-openapi.spec.v2@v1.0+protobuf, only for kinds the v3 documents
 * do not cover: kinds not served yet, e.g. a custom resource in the same file as its CRD).
 * kubectl then validates client-side and skips kinds its v2 models do not know. Serving 200 with
 * an EMPTY body (a valid, empty protobuf openapi_v2.Document) and Content-Type
 * APIS_OPENAPI_V2_CONTENT_TYPE makes kubectl behave as with a real server ("resource mapping not
 * found ... ensure CRDs are installed first" for that object, the others applied); a 404 makes
 * it abort the rest of the apply with "failed to download openapi". The response Content-Type
 * must not be the '@' form kubectl sends: client-go rejects it ("mime: unexpected content after
 * media subtype"). Verified with kubectl v1.32.4 against a patched server build. */
#define APIS_OPENAPI_V2_CONTENT_TYPE "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

#endif
