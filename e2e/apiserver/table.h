/* table.h — meta.k8s.io/v1 Table responses (what `kubectl get` asks for): upstream's column sets
 * for pods and nodes, a few well-known built-ins, CRD additionalPrinterColumns evaluated with
 * simple JSONPath, and the server-side Age helper (duration.HumanDuration). No global state. */
#ifndef SK_APISERVER_TABLE_H
#define SK_APISERVER_TABLE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <time.h>

enum apis_include_object { APIS_INCLUDE_NONE, APIS_INCLUDE_METADATA, APIS_INCLUDE_OBJECT };

/* items: array of full objects. crd_version: the CRD's spec.versions[i] object (uses
 * additionalPrinterColumns; default Age) or NULL for built-ins (pods, nodes with upstream
 * columns; other built-ins: Name, Age (+ a few well-known: deployments Ready/Up-to-date/
 * Available, configmaps Data, leases Holder ...)). with_columns false omits columnDefinitions
 * (watch events after the first). list_meta: {resourceVersion, continue} copied into metadata
 * (may be NULL). now: for ages. Returns a new Table object (caller frees) or NULL on OOM. */
cJSON *apis_table_build(const char *group, const char *resource, const cJSON *items,
                        const cJSON *crd_version, enum apis_include_object inc, bool with_columns,
                        const cJSON *list_meta, time_t now);

/* Parses "includeObject" query values: "None", "Metadata" (default), "Object". */
enum apis_include_object apis_include_object_parse(const char *s);

/* duration.HumanDuration: "5s", "3m20s", "5h", "2d3h", "3y" ... into buf (>= 16 bytes).
 * Durations below -1s print "<invalid>". Returns buf. The _ms form takes milliseconds. */
char *apis_human_duration(long long seconds, char *buf, size_t len);
char *apis_human_duration_ms(long long millis, char *buf, size_t len);

/* Age cell: "<unknown>" when ts (RFC 3339) is missing or unparsable, else human duration. */
char *apis_age(const char *rfc3339, time_t now, char *buf, size_t len);

/* Parses RFC 3339 ("2024-01-02T03:04:05Z", offsets and fractions accepted) to epoch seconds.
 * Returns 0 or -1. */
int apis_parse_rfc3339(const char *s, time_t *out);

#endif
