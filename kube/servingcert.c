/* Self-signed serving certificates and the TLS flag values (kube/servingcert.h). */
#include "kube/servingcert.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "kube/util.h"

static EVP_PKEY *rsa_key(void)
{
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
	if (c && (EVP_PKEY_keygen_init(c) <= 0 || EVP_PKEY_CTX_set_rsa_keygen_bits(c, 2048) <= 0 ||
		  EVP_PKEY_keygen(c, &k) <= 0))
		k = NULL;
	EVP_PKEY_CTX_free(c);
	return k;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ex)
		return -1;
	int ok = X509_add_ext(cert, ex, -1);
	X509_EXTENSION_free(ex);
	return ok ? 0 : -1;
}

/* A certificate for key named cn, signed by issuer (NULL: self-signed); san NULL for a CA. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, const char *san)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	ASN1_INTEGER *sn = NULL;
	if (!x || RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof serial, NULL);
	sn = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	if (!sn || !X509_set_version(x, 2) || !X509_set_serialNumber(x, sn) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) || !X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600) ||
	    !X509_set_pubkey(x, key))
		goto fail;
	X509_NAME *name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name))
		goto fail;
	X509 *iss = issuer ? issuer : x;
	if (!san ? add_ext(x, iss, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
			   add_ext(x, iss, NID_key_usage, "critical,keyCertSign,digitalSignature,keyEncipherment") < 0 ||
			   add_ext(x, iss, NID_subject_key_identifier, "hash") < 0
		 : add_ext(x, iss, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
			   add_ext(x, iss, NID_key_usage, "critical,digitalSignature,keyEncipherment") < 0 ||
			   add_ext(x, iss, NID_ext_key_usage, "serverAuth") < 0 ||
			   add_ext(x, iss, NID_subject_alt_name, san) < 0 ||
			   add_ext(x, iss, NID_authority_key_identifier, "keyid:always") < 0)
		goto fail;
	if (!X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()))
		goto fail;
	ASN1_INTEGER_free(sn);
	BN_free(bn);
	return x;
fail:
	ASN1_INTEGER_free(sn);
	BN_free(bn);
	X509_free(x);
	return NULL;
}

static char *bio_string(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	return n > 0 ? strndup(data, (size_t)n) : NULL;
}

int kube_selfsigned_generate(const char *host, const char *const *ips, char **cert_pem, char **key_pem, char **err)
{
	*cert_pem = *key_pem = NULL;
	char san[1024];
	int off = snprintf(san, sizeof san, "DNS:%s", host);
	for (int i = 0; ips && ips[i] && off < (int)sizeof san; i++)
		off += snprintf(san + off, sizeof san - (size_t)off, ",IP:%s", ips[i]);
	if (off >= (int)sizeof san)
		return kube_errf(err, "self-signed certificate: too many names");
	char cn[300], ca_cn[300];
	long now = (long)time(NULL);
	snprintf(cn, sizeof cn, "%s@%ld", host, now);
	snprintf(ca_cn, sizeof ca_cn, "%s-ca@%ld", host, now);
	EVP_PKEY *ca_key = rsa_key(), *key = rsa_key();
	X509 *ca = ca_key ? new_cert(ca_key, ca_cn, NULL, NULL, NULL) : NULL;
	X509 *crt = ca && key ? new_cert(key, cn, ca, ca_key, san) : NULL;
	BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
	int rc = -1;
	if (crt && cb && kb && PEM_write_bio_X509(cb, crt) && PEM_write_bio_X509(cb, ca) &&
	    PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL)) {
		*cert_pem = bio_string(cb);
		*key_pem = bio_string(kb);
		rc = *cert_pem && *key_pem ? 0 : -1;
	}
	if (rc != 0) {
		char buf[256];
		ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
		kube_errf(err, "self-signed certificate for %s: %s", host, buf);
		free(*cert_pem);
		free(*key_pem);
		*cert_pem = *key_pem = NULL;
	}
	BIO_free(cb);
	BIO_free(kb);
	X509_free(crt);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key);
	return rc;
}

static int write_file(const char *path, const char *text, mode_t mode, char **err)
{
	char tmp[4200];
	if (strlen(path) > 4100)
		return kube_errf(err, "writing %s: path too long", path);
	snprintf(tmp, sizeof tmp, "%.4100s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return kube_errf(err, "writing %s: %s", path, strerror(errno));
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return kube_errf(err, "writing %s: %s", path, strerror(e));
	}
	return 0;
}

int kube_selfsigned_in_dir(const char *dir, const char *pair, const char *host, const char *const *ips,
			   char **cert_path, char **key_path, char **err)
{
	*cert_path = *key_path = NULL;
	if (strlen(dir) > 3900 || strlen(pair) > 90)
		return kube_errf(err, "--cert-dir %s: path too long", dir);
	char c[4096], k[4096];
	snprintf(c, sizeof c, "%.3900s/%.90s.crt", dir, pair);
	snprintf(k, sizeof k, "%.3900s/%.90s.key", dir, pair);
	if (access(c, R_OK) != 0 || access(k, R_OK) != 0) {
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return kube_errf(err, "--cert-dir %s: %s", dir, strerror(errno));
		char *cp, *kp;
		if (kube_selfsigned_generate(host, ips, &cp, &kp, err) != 0)
			return -1;
		int rc = write_file(k, kp, 0600, err);
		if (rc == 0)
			rc = write_file(c, cp, 0644, err);
		free(cp);
		free(kp);
		if (rc != 0)
			return -1;
	}
	*cert_path = strdup(c);
	*key_path = strdup(k);
	if (!*cert_path || !*key_path) {
		free(*cert_path);
		free(*key_path);
		*cert_path = *key_path = NULL;
		return kube_errf(err, "out of memory");
	}
	return 0;
}

/* Go's crypto/tls suite names (tls.CipherSuites and tls.InsecureCipherSuites) and OpenSSL's names.
 * TLS 1.3 suites map to NULL: accepted, not configurable (as in Go). */
static const struct {
	const char *go, *openssl;
} suites[] = {
	{"TLS_AES_128_GCM_SHA256", NULL},
	{"TLS_AES_256_GCM_SHA384", NULL},
	{"TLS_CHACHA20_POLY1305_SHA256", NULL},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
	{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
	{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
	{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
	{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
	{"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
	{"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
	{"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
	{"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
	{"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
	{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
	{"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
	{"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
	{"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
	{"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
	{"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
};

int kube_tls_cipher_list(const char *csv, char **list, char **err)
{
	*list = NULL;
	size_t cap = strlen(csv) * 2 + 2, len = 0;
	char *out = calloc(1, cap);
	if (!out)
		return kube_errf(err, "out of memory");
	const char *p = csv;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n && (*p == ' ')) {
			p++;
			n--;
		}
		while (n && p[n - 1] == ' ')
			n--;
		if (n) {
			size_t i = 0, ns = sizeof suites / sizeof suites[0];
			while (i < ns && (strlen(suites[i].go) != n || strncmp(suites[i].go, p, n)))
				i++;
			if (i == ns) {
				free(out);
				return kube_errf(err, "Cipher suite %.*s not supported or doesn't exist", (int)n, p);
			}
			const char *o = suites[i].openssl;
			if (o && len + strlen(o) + 2 <= cap)
				len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ":" : "", o);
		}
		p += e ? (size_t)(e - p) + 1 : strlen(p);
	}
	if (len)
		*list = out;
	else
		free(out);
	return 0;
}

int kube_tls_version(const char *name, int *version, char **err)
{
	static const struct {
		const char *name;
		int v;
	} vs[] = {{"VersionTLS10", 0x0301}, {"VersionTLS11", 0x0302}, {"VersionTLS12", 0x0303}, {"VersionTLS13", 0x0304}};
	*version = 0;
	if (!name || !*name)
		return 0;
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
		if (!strcmp(vs[i].name, name)) {
			*version = vs[i].v;
			return 0;
		}
	return kube_errf(err, "unknown tls version \"%s\"", name);
}
