#!/bin/sh
# TEST ONLY. Makes a throw-away App Store–shaped chain whose leaf and intermediate name
# OCSP responders under BASE_URL in their Authority Information Access, and the DER
# answers those responders give (made here by `openssl ocsp` from the issuers' own
# databases), so tests can serve them from a local HTTP server.
#
# Usage: sh make-ocsp-test-chain.sh OUT_DIR BASE_URL
#   BASE_URL/intermediate answers for the leaf (signed by the intermediate),
#   BASE_URL/root answers for the intermediate (signed by the root).
# Writes to OUT_DIR: root.der intermediate.der leaf.der leaf-key.pem, and the answers
#   leaf-good.der leaf-revoked.der leaf-unknown.der leaf-forged.der
#   intermediate-good.der intermediate-revoked.der
set -eu
[ $# -eq 2 ] || { echo "usage: $0 OUT_DIR BASE_URL" >&2; exit 2; }
out=$1 base=$2
mkdir -p "$out"
cd "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

START=20200101000000Z
END=20491231235959Z

# One `openssl ca` database per issuer: it is also the index `openssl ocsp` answers from.
for ca in root intermediate; do
    mkdir "$work/$ca-issued"
    : > "$work/$ca-index.txt"
    cat > "$work/$ca.cnf" <<CNF
[ ca ]
default_ca = test_ca
[ test_ca ]
database        = $work/$ca-index.txt
new_certs_dir   = $work/$ca-issued
serial          = $work/$ca-serial
default_md      = sha384
policy          = any_name
unique_subject  = no
copy_extensions = none
email_in_dn     = no
[ any_name ]
commonName       = supplied
organizationName = optional
[ req ]
distinguished_name = empty_dn
prompt             = no
[ empty_dn ]
CN = unused
[ v3_root ]
basicConstraints     = critical, CA:true
keyUsage             = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ v3_intermediate ]
basicConstraints       = critical, CA:true, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
authorityInfoAccess    = OCSP;URI:$base/root
1.2.840.113635.100.6.2.1 = ASN1:NULL
[ v3_leaf ]
basicConstraints       = critical, CA:false
keyUsage               = critical, digitalSignature
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
authorityInfoAccess    = OCSP;URI:$base/intermediate
1.2.840.113635.100.6.11.1 = ASN1:NULL
CNF
done

issue() { # issue ISSUER CSR KEY CERT EXTENSIONS OUT_PEM [extra ca args...]
    issuer=$1 csr=$2 key=$3 cert=$4 ext=$5 pem=$6
    shift 6
    openssl ca -batch -notext -config "$work/$issuer.cnf" -rand_serial \
        -startdate "$START" -enddate "$END" \
        -keyfile "$key" ${cert:+-cert "$cert"} -extensions "$ext" \
        -in "$csr" -out "$pem" "$@" 2>"$work/ca.log" \
        || { cat "$work/ca.log" >&2; exit 1; }
}

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$work/root-key.pem"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$work/intermediate-key.pem"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out leaf-key.pem

openssl req -new -config "$work/root.cnf" -key "$work/root-key.pem" -out "$work/root.csr" \
    -subj "/CN=subdesk TEST ONLY OCSP Root CA/O=subdesk test CA - not Apple"
issue root "$work/root.csr" "$work/root-key.pem" "" v3_root "$work/root.pem" -selfsign
openssl req -new -config "$work/root.cnf" -key "$work/intermediate-key.pem" -out "$work/intermediate.csr" \
    -subj "/CN=subdesk TEST ONLY OCSP Intermediate CA/O=subdesk test CA - not Apple"
issue root "$work/intermediate.csr" "$work/root-key.pem" "$work/root.pem" v3_intermediate "$work/intermediate.pem"
openssl req -new -config "$work/intermediate.cnf" -key leaf-key.pem -out "$work/leaf.csr" \
    -subj "/CN=subdesk TEST ONLY OCSP App Store Signing/O=subdesk test CA - not Apple"
issue intermediate "$work/leaf.csr" "$work/intermediate-key.pem" "$work/intermediate.pem" v3_leaf "$work/leaf.pem"

for c in root intermediate leaf; do openssl x509 -in "$work/$c.pem" -outform DER -out "$c.der"; done

answer() { # answer ISSUER(ca name) SUBJECT(cert name) SIGNER(ca name) INDEX OUT
    openssl ocsp -no_nonce -issuer "$work/$1.pem" -cert "$work/$2.pem" \
        -index "$4" -CA "$work/$1.pem" -rsigner "$work/$3.pem" -rkey "$work/$3-key.pem" \
        -ndays 7 -respout "$5" >/dev/null 2>"$work/ocsp.log" \
        || { cat "$work/ocsp.log" >&2; exit 1; }
}

answer intermediate leaf intermediate "$work/intermediate-index.txt" leaf-good.der
answer root intermediate root "$work/root-index.txt" intermediate-good.der
# A responder asked about a certificate its issuer never recorded says "unknown".
: > "$work/empty-index.txt"
answer intermediate leaf intermediate "$work/empty-index.txt" leaf-unknown.der
# Signed by a key that has no say over the leaf (the root did not issue it).
answer intermediate leaf root "$work/intermediate-index.txt" leaf-forged.der

openssl ca -config "$work/intermediate.cnf" -keyfile "$work/intermediate-key.pem" -cert "$work/intermediate.pem" \
    -revoke "$work/leaf.pem" -crl_reason keyCompromise 2>"$work/ca.log" || { cat "$work/ca.log" >&2; exit 1; }
answer intermediate leaf intermediate "$work/intermediate-index.txt" leaf-revoked.der
openssl ca -config "$work/root.cnf" -keyfile "$work/root-key.pem" -cert "$work/root.pem" \
    -revoke "$work/intermediate.pem" -crl_reason cACompromise 2>"$work/ca.log" || { cat "$work/ca.log" >&2; exit 1; }
answer root intermediate root "$work/root-index.txt" intermediate-revoked.der
