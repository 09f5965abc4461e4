/* Client configuration: kubeconfig files (YAML or JSON, $KUBECONFIG merging, contexts) and
 * in-cluster service-account configuration, resolved into one flat struct kube_config that
 * kube_client_new() consumes. Nothing here talks to the network. */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* A kubeconfig user's exec credential plugin (client.authentication.k8s.io). The client runs it
 * for a token (or client certificate) when it has none cached, when the cached one expires, and
 * after a 401. Non-interactive: interactiveMode Always is rejected at load time. */
struct kube_exec_config {
	char *command;              /* resolved against the kubeconfig's directory when it holds a '/' */
	char **args; int nargs;
	char **env; int nenv;       /* "NAME=value" */
	char *api_version;          /* client.authentication.k8s.io/v1 or v1beta1 */
	bool provide_cluster_info;
};

struct kube_config {            /* owned strings; kube_config_free() frees */
	char *server;               /* https://host:port or http://... */
	char *token;                /* bearer token (literal), or NULL */
	char *token_file;           /* re-read when it changes (in-cluster SA token rotation) */
	char *ca_file; char *ca_data;        /* PEM, ca_data already base64-decoded */
	char *client_cert_file, *client_cert_data, *client_key_file, *client_key_data;
	bool insecure_skip_tls_verify;
	char *namespace;            /* context namespace or in-cluster namespace file, default "default" */
	double qps; int burst;      /* client-side rate limit, defaults 50 / 100 (schedkit choice) */
	char *user_agent;           /* default "schedkit/<version>" when NULL */
	struct kube_exec_config *exec;   /* owned; NULL unless the user has an exec plugin */
};

/* Order as client-go: explicit path (--kubeconfig) > $KUBECONFIG (colon-separated list, merged,
 * first wins) > in-cluster (KUBERNETES_SERVICE_HOST/PORT + /var/run/secrets/kubernetes.io/serviceaccount,
 * root overridable for tests via env SK_SA_DIR) > ~/.kube/config. context: NULL = current-context.
 * Relative file paths are resolved against the directory of the kubeconfig that named them;
 * *-data fields win over their file variants. exec users are supported (see kube_exec_config);
 * auth-provider users are rejected with an error.
 * On success returns 0 and *out (caller frees with kube_config_free).
 * On failure returns -1 and *err (caller frees), naming the file and field, e.g.
 * "kubeconfig /x: context \"foo\" not found". err may be NULL. */
int kube_config_load(const char *explicit_path, const char *context, struct kube_config **out, char **err);

/* In-cluster only (rest.InClusterConfig): server https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
 * (IPv6 host bracketed), token_file/ca_file/namespace from $SK_SA_DIR or
 * /var/run/secrets/kubernetes.io/serviceaccount. Same return/ownership rules as kube_config_load. */
int kube_config_in_cluster(struct kube_config **out, char **err);

/* A zeroed config with the defaults (qps 50, burst 100, namespace "default") and server copied
 * from server (may be NULL). Caller frees. NULL on OOM. */
struct kube_config *kube_config_new(const char *server);

/* Deep copy. Caller frees. NULL on OOM or when c is NULL. */
struct kube_config *kube_config_dup(const struct kube_config *c);

void kube_config_free(struct kube_config *);

/* Deep copy (caller frees; NULL on OOM or NULL input) and free (NULL is a no-op). */
struct kube_exec_config *kube_exec_config_dup(const struct kube_exec_config *x);
void kube_exec_config_free(struct kube_exec_config *x);

/* base64 (standard alphabet, padding optional, whitespace ignored) -> malloc'd NUL-terminated
 * bytes, *out_len set when non-NULL. NULL on invalid input or OOM. Caller frees. */
char *kube_base64_decode(const char *in, size_t *out_len);

#endif
