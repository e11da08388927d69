#!/bin/sh
# TEST ONLY. Makes the subdesk demo certificate authority: a root, an
# intermediate and a signing leaf shaped like Apple's App Store chain, so the
# demo store, `subdesk simulate` and the tests can produce JWS that the real
# verification code accepts once this root is configured. Nothing signed by
# these keys must ever be trusted outside a demo or a test.
#
# Usage: sh make-test-ca.sh   (rewrites the files next to this script)
set -eu
cd "$(dirname "$0")"

# `openssl x509` in OpenSSL 3.0 cannot set an arbitrary notBefore; `openssl ca`
# can, so every certificate is issued through it with fixed dates.
START=20200101000000Z
END=20491231235959Z

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/issued"
: > "$work/index.txt"

cat > "$work/ca.cnf" <<CNF
[ ca ]
default_ca = test_ca

[ test_ca ]
database        = $work/index.txt
new_certs_dir   = $work/issued
serial          = $work/serial
default_md      = sha384
policy          = any_name
unique_subject  = no
copy_extensions = none
email_in_dn     = no

[ any_name ]
commonName             = supplied
organizationalUnitName = optional
organizationName       = optional

[ req ]
distinguished_name = empty_dn
prompt             = no
[ empty_dn ]
CN = unused

[ v3_root ]
basicConstraints     = critical, CA:true
keyUsage             = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

# Apple's WWDR intermediate carries 1.2.840.113635.100.6.2.1 as a
# non-critical extension whose value is an ASN.1 NULL; so does this one.
[ v3_intermediate ]
basicConstraints       = critical, CA:true, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
1.2.840.113635.100.6.2.1 = ASN1:NULL

# Apple's App Store signing leaf carries 1.2.840.113635.100.6.11.1 the same way.
[ v3_leaf ]
basicConstraints       = critical, CA:false
keyUsage               = critical, digitalSignature
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
1.2.840.113635.100.6.11.1 = ASN1:NULL
CNF

issue() { # issue CSR KEY CERT EXTENSIONS OUT [extra ca args...]
    csr=$1 key=$2 cert=$3 ext=$4 out=$5
    shift 5
    openssl ca -batch -notext -config "$work/ca.cnf" -rand_serial \
        -startdate "$START" -enddate "$END" \
        -keyfile "$key" ${cert:+-cert "$cert"} -extensions "$ext" \
        -in "$csr" -out "$work/out.pem" "$@" 2>"$work/ca.log" \
        || { cat "$work/ca.log" >&2; exit 1; }
    openssl x509 -in "$work/out.pem" -outform DER -out "$out"
}

# Apple's root and intermediate are P-384 and the leaf P-256; keep the shape.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out root-key.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out intermediate-key.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out leaf-key.pem

openssl req -new -config "$work/ca.cnf" -key root-key.pem -out "$work/root.csr" \
    -subj "/CN=subdesk TEST ONLY Root CA/O=subdesk test CA - not Apple"
issue "$work/root.csr" root-key.pem "" v3_root root.der -selfsign
openssl x509 -inform DER -in root.der -out "$work/root.pem"

openssl req -new -config "$work/ca.cnf" -key intermediate-key.pem -out "$work/intermediate.csr" \
    -subj "/CN=subdesk TEST ONLY Intermediate CA/O=subdesk test CA - not Apple"
issue "$work/intermediate.csr" root-key.pem "$work/root.pem" v3_intermediate intermediate.der
openssl x509 -inform DER -in intermediate.der -out "$work/intermediate.pem"

openssl req -new -config "$work/ca.cnf" -key leaf-key.pem -out "$work/leaf.csr" \
    -subj "/CN=subdesk TEST ONLY App Store Signing/O=subdesk test CA - not Apple"
issue "$work/leaf.csr" intermediate-key.pem "$work/intermediate.pem" v3_leaf leaf.der

openssl verify -no-CApath -no-CAstore -CAfile "$work/root.pem" \
    -untrusted "$work/intermediate.pem" -attime 1577836800 "$work/out.pem" >/dev/null
echo "test CA written to $(pwd)"
