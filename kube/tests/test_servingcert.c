/* Tests for kube/servingcert.c: the self-signed pair (chain, names, key match, validity), the
 * --cert-dir files (written 0600, reused), and the --tls-cipher-suites / --tls-min-version
 * tables with upstream's error words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "kube/servingcert.h"

static X509 *first_cert(const char *pem, int *count)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *first = NULL, *x;
	*count = 0;
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		if (!first)
			first = x;
		else
			X509_free(x);
		(*count)++;
	}
	BIO_free(b);
	return first;
}

static void test_generate(void **state)
{
	(void)state;
	static const char *const ips[] = {"127.0.0.1", "10.0.0.7", NULL};
	char *cert, *key, *err = NULL;
	assert_int_equal(kube_selfsigned_generate("localhost", ips, &cert, &key, &err), 0);
	int n;
	X509 *x = first_cert(cert, &n);
	assert_non_null(x);
	assert_int_equal(n, 2); /* the serving certificate, then its CA */
	assert_int_equal(X509_check_host(x, "localhost", 0, 0, NULL), 1);
	assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
	assert_int_equal(X509_check_ip_asc(x, "10.0.0.7", 0), 1);
	assert_int_equal(X509_check_ip_asc(x, "10.0.0.8", 0), 0);
	assert_int_equal(X509_check_host(x, "example.com", 0, 0, NULL), 0);
	char cn[256];
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
	assert_true(!strncmp(cn, "localhost@", 10));
	BIO *kb = BIO_new_mem_buf(key, -1);
	EVP_PKEY *pk = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
	assert_non_null(pk);
	assert_int_equal(X509_check_private_key(x, pk), 1);
	assert_int_equal(EVP_PKEY_base_id(pk), EVP_PKEY_RSA);
	assert_true(X509_cmp_current_time(X509_get0_notAfter(x)) > 0);
	EVP_PKEY_free(pk);
	BIO_free(kb);
	X509_free(x);
	free(cert);
	free(key);
}

static void test_cert_dir(void **state)
{
	(void)state;
	char dir[] = "/tmp/sk-certdir-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[300];
	snprintf(sub, sizeof sub, "%s/new", dir); /* created when missing */
	char *c1, *k1, *c2, *k2, *err = NULL;
	assert_int_equal(kube_selfsigned_in_dir(sub, "kube-scheduler", "localhost", NULL, &c1, &k1, &err), 0);
	char want[400];
	snprintf(want, sizeof want, "%s/kube-scheduler.crt", sub);
	assert_string_equal(c1, want);
	struct stat st;
	assert_int_equal(stat(k1, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	FILE *f = fopen(c1, "r");
	char before[8192] = "", after[8192] = "";
	assert_true(fread(before, 1, sizeof before - 1, f) > 0);
	fclose(f);
	assert_int_equal(kube_selfsigned_in_dir(sub, "kube-scheduler", "localhost", NULL, &c2, &k2, &err), 0);
	f = fopen(c2, "r");
	assert_true(fread(after, 1, sizeof after - 1, f) > 0);
	fclose(f);
	assert_string_equal(before, after); /* reused, not regenerated */
	free(c2);
	free(k2);
	unlink(c1);
	unlink(k1);
	rmdir(sub);
	/* a directory that cannot be made */
	assert_int_equal(kube_selfsigned_in_dir("/proc/no/such", "kube-scheduler", "localhost", NULL, &c2, &k2, &err), -1);
	assert_non_null(strstr(err, "--cert-dir /proc/no/such"));
	free(err);
	rmdir(dir);
	assert_null(c2);
	assert_null(k2);
	free(c1);
	free(k1);
}

static void test_cipher_suites(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want, *err;
	} cases[] = {
		{"", NULL, NULL},
		{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", NULL},
		{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
		 "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305", NULL},
		{"TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256", NULL, NULL}, /* TLS 1.3 only */
		{"TLS_RSA_WITH_AES_128_CBC_SHA,TLS_AES_256_GCM_SHA384", "AES128-SHA", NULL},
		{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_NOPE", NULL, "Cipher suite TLS_NOPE not supported or doesn't exist"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *list = (char *)"unset", *err = NULL;
		int rc = kube_tls_cipher_list(cases[i].in, &list, &err);
		if (cases[i].err) {
			assert_int_equal(rc, -1);
			assert_string_equal(err, cases[i].err);
			free(err);
			continue;
		}
		assert_int_equal(rc, 0);
		if (cases[i].want)
			assert_string_equal(list, cases[i].want);
		else
			assert_null(list);
		free(list);
	}
}

static void test_tls_version(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int want;
	} cases[] = {{"", 0}, {"VersionTLS10", 0x0301}, {"VersionTLS11", 0x0302}, {"VersionTLS12", 0x0303},
		     {"VersionTLS13", 0x0304}, {"TLS13", -1}, {"versiontls12", -1}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int v = 99;
		char *err = NULL;
		int rc = kube_tls_version(cases[i].in, &v, &err);
		if (cases[i].want < 0) {
			assert_int_equal(rc, -1);
			char want[100];
			snprintf(want, sizeof want, "unknown tls version \"%s\"", cases[i].in);
			assert_string_equal(err, want);
			free(err);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(v, cases[i].want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_cert_dir),
		cmocka_unit_test(test_cipher_suites),
		cmocka_unit_test(test_tls_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
