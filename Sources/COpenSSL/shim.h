#ifndef SUBDESK_COPENSSL_SHIM_H
#define SUBDESK_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>

static inline void subdesk_openssl_free(void *p) { OPENSSL_free(p); }
static inline long subdesk_bio_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
#endif
