/* SchedulerProfile.spec.extenders (docs/operator.md, "Extenders"): the entries are rendered into
 * the profile's own `extenders` (a schedkit configuration extension, docs/extenders.md) with the
 * TLS material taken from Secrets the scheduler's Deployment mounts, so nothing secret is written
 * to the ConfigMap: tlsConfig.secretName (schedkit, in the SchedulerProfile only) becomes
 * certFile/keyFile/caFile under OP_EXT_TLS_DIR/<secret>/, and inline certData/keyData are refused. */
#ifndef OP_EXTENDER_TLS_H
#define OP_EXTENDER_TLS_H

#include <cjson/cJSON.h>

/* Where the Secret named in tlsConfig.secretName is mounted in the scheduler's pod. */
#define OP_EXT_TLS_DIR "/etc/schedkit-extender-tls"

/* The rendered extenders for spec.extenders (an array, already type-checked): a copy where every
 * tlsConfig.secretName (with optional certKey, keyKey, caKey: the Secret's keys; none given =
 * tls.crt and tls.key, a kubernetes.io/tls Secret) is replaced by the file paths. 0 and *out
 * (caller frees), or -1 and *err naming the field: certData/keyData given inline, a secretName that
 * is not a DNS subdomain, secretName together with the matching *File, a key that is not a valid
 * Secret key. */
int op_render_extenders(const cJSON *extenders, cJSON **out, char **err);

/* Adds to the Deployment's pod template (tspec: template.spec, container: the scheduler's) one
 * read-only Secret volume and mount per distinct Secret that the configuration text config_yaml
 * (NULL ok) names under OP_EXT_TLS_DIR, in name order. 0, or -1 on OOM. */
int op_extender_tls_mounts(const char *config_yaml, cJSON *tspec, cJSON *container);

#endif
