/* The serving side of TLS as kube-scheduler sets it up (k8s.io/apiserver/pkg/server/options,
 * SecureServingOptions): a self-signed certificate when none is given (in memory, or kept in
 * --cert-dir), and the --tls-cipher-suites / --tls-min-version flag values
 * (k8s.io/component-base/cli/flag/ciphersuites_flag.go) turned into OpenSSL settings for
 * kube/httpserver.h. */
#ifndef KUBE_SERVINGCERT_H
#define KUBE_SERVINGCERT_H

/* A self-signed CA "<host>-ca@<unix time>" and a serving certificate "<host>@<unix time>" it
 * signs, for DNS:<host> and the IP addresses ips (NULL-terminated; NULL: none), RSA 2048, valid
 * one year, as upstream's certutil.GenerateSelfSignedCertKey. *cert_pem is the certificate then
 * the CA (PEM), *key_pem the serving key (PKCS#8 PEM); the caller frees both. 0, or -1 and *err. */
int kube_selfsigned_generate(const char *host, const char *const *ips, char **cert_pem, char **key_pem, char **err);

/* The --cert-dir case: <dir>/<pair>.crt and <dir>/<pair>.key are used when both exist; otherwise
 * generated (kube_selfsigned_generate) and written there (the directory is created 0755, the key
 * 0600). *cert_path and *key_path (caller frees) name the files. 0, or -1 and *err. */
int kube_selfsigned_in_dir(const char *dir, const char *pair, const char *host, const char *const *ips,
			   char **cert_path, char **key_path, char **err);

/* --tls-cipher-suites: a comma-separated list of Go cipher suite names (TLS_ECDHE_RSA_WITH_...)
 * into an OpenSSL cipher list for TLS 1.2 and below (*list, caller frees; NULL when only TLS 1.3
 * names were given: Go does not configure TLS 1.3 suites, nor do we). Empty csv: *list NULL.
 * An unknown name: -1 and *err "Cipher suite X not supported or doesn't exist". */
int kube_tls_cipher_list(const char *csv, char **list, char **err);
/* --tls-min-version: VersionTLS10 .. VersionTLS13 into 0x0301 .. 0x0304; "" gives 0 (default).
 * Otherwise -1 and *err "unknown tls version \"X\"". */
int kube_tls_version(const char *name, int *version, char **err);

#endif
