#ifndef SUBDESK_CLIBSSL_SHIM_H
#define SUBDESK_CLIBSSL_SHIM_H
/* OpenSSL's TLS client (libssl), for subdesk-http alone: subdesk itself links libcrypto only. */
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>

/* Macros in OpenSSL's headers, which Swift cannot call. */
static inline long subdesk_ssl_set_server_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
static inline long subdesk_ssl_ctx_set_min_tls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline long subdesk_ssl_ctx_set_modes(SSL_CTX *ctx) {
    /* Writes may continue from a moved buffer (Swift arrays move); no renegotiation retries hidden in reads. */
    return SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
}
/* Whether an error from the queue is a peer that closed the connection without TLS's close_notify. */
static inline int subdesk_ssl_error_is_unexpected_eof(unsigned long code) {
    return ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}
#endif
