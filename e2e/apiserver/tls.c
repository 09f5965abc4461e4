/* tls.c — schedkit-apiserver's TLS material, generated in memory at start: an ECDSA P-256 CA
 * and a serving certificate for 127.0.0.1, ::1 and localhost signed by it. Only the CA
 * certificate (PEM) leaves this file (s->ca_pem, written into kubeconfigs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "kube/log.h"
#include "e2e/apiserver/internal.h"

static EVP_PKEY *gen_key(void)
{
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	if (!c)
		return NULL;
	if (EVP_PKEY_keygen_init(c) <= 0 || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(c, NID_X9_62_prime256v1) <= 0 ||
	    EVP_PKEY_keygen(c, &k) <= 0)
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

static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, bool ca)
{
	X509 *x = X509_new();
	if (!x)
		return NULL;
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	ASN1_INTEGER *sn = NULL;
	if (RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof serial, NULL);
	sn = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	if (!sn || !X509_set_version(x, 2) || !X509_set_serialNumber(x, sn))
		goto fail;
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
	X509_set_pubkey(x, key);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
	X509 *iss = issuer ? issuer : x;
	if (ca) {
		if (add_ext(x, iss, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
		    add_ext(x, iss, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") < 0 ||
		    add_ext(x, iss, NID_subject_key_identifier, "hash") < 0)
			goto fail;
	} else {
		if (add_ext(x, iss, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(x, iss, NID_key_usage, "critical,digitalSignature,keyEncipherment") < 0 ||
		    add_ext(x, iss, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(x, iss, NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost") < 0 ||
		    add_ext(x, iss, NID_authority_key_identifier, "keyid:always") < 0)
			goto fail;
	}
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

int apis_tls_setup(struct apis_server *s)
{
	int rc = -1;
	EVP_PKEY *ca_key = gen_key(), *srv_key = gen_key();
	X509 *ca = NULL, *srv = NULL;
	BIO *bio = NULL;
	SSL_CTX *ctx = NULL;
	if (!ca_key || !srv_key)
		goto out;
	ca = make_cert(ca_key, "schedkit-apiserver-ca", NULL, NULL, true);
	srv = ca ? make_cert(srv_key, "schedkit-apiserver", ca, ca_key, false) : NULL;
	if (!srv)
		goto out;
	bio = BIO_new(BIO_s_mem());
	if (!bio || !PEM_write_bio_X509(bio, ca))
		goto out;
	char *data;
	long n = BIO_get_mem_data(bio, &data);
	s->ca_pem = strndup(data, (size_t)n);
	if (!s->ca_pem)
		goto out;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		goto out;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
	if (SSL_CTX_use_certificate(ctx, srv) != 1 || SSL_CTX_use_PrivateKey(ctx, srv_key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, ca) != 1 || SSL_CTX_check_private_key(ctx) != 1)
		goto out;
	s->ssl_ctx = ctx;
	ctx = NULL;
	rc = 0;
out:
	if (rc < 0) {
		unsigned long e = ERR_get_error();
		char buf[256];
		ERR_error_string_n(e, buf, sizeof buf);
		klog_error("TLS setup failed", " err=\"%s\"", buf);
	}
	SSL_CTX_free(ctx);
	BIO_free(bio);
	X509_free(ca);
	X509_free(srv);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(srv_key);
	return rc;
}
