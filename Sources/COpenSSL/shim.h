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
#include <openssl/hmac.h>
#include <openssl/ocsp.h>

static inline void subdesk_openssl_free(void *p) { OPENSSL_free(p); }
static inline long subdesk_bio_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }

/* Per-key tables for ECDSA verification (P256KeyTable): libcrypto 3 marks these two
   deprecated with no replacement, so they are reached through wrappers that say so once. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline int subdesk_ec_group_precompute_mult(EC_GROUP *group, BN_CTX *ctx) {
    return EC_GROUP_precompute_mult(group, ctx);
}
static inline int subdesk_ec_point_jacobian(const EC_GROUP *group, const EC_POINT *point,
                                            BIGNUM *x, BIGNUM *y, BIGNUM *z, BN_CTX *ctx) {
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, y, z, ctx);
}
#pragma clang diagnostic pop
#endif
