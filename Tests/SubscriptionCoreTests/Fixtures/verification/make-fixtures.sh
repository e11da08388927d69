#!/bin/sh
# TEST ONLY. Makes the certificates and keys the verification tests need to
# show that each faulty chain is refused for its own reason. Everything good is
# issued under the demo test CA in sample-data/test-ca (copied into test-ca/ so
# the tests find it in their resource bundle); everything else differs from a
# good chain in exactly one way.
#
# Usage: sh make-fixtures.sh   (rewrites the files next to this script)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ca=$(cd "$here/../../../../sample-data/test-ca" && pwd)
cd "$here"

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
1.2.840.113635.100.6.2.1 = ASN1:NULL

[ v3_intermediate_without_oid ]
basicConstraints       = critical, CA:true, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[ v3_leaf ]
basicConstraints       = critical, CA:false
keyUsage               = critical, digitalSignature
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
1.2.840.113635.100.6.11.1 = ASN1:NULL

[ v3_leaf_without_oid ]
basicConstraints       = critical, CA:false
keyUsage               = critical, digitalSignature
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
CNF

ORG="subdesk test fixture - not Apple"

# issue SUBJECT_CN KEY ISSUER_KEY ISSUER_CERT_DER EXTENSIONS OUT_DER START END [extra ca args]
issue() {
    cn=$1 key=$2 issuer_key=$3 issuer_der=$4 ext=$5 out=$6 start=$7 end=$8
    shift 8
    openssl req -new -config "$work/ca.cnf" -key "$key" -subj "/CN=$cn/O=$ORG" -out "$work/req.csr"
    if [ -n "$issuer_der" ]; then
        openssl x509 -inform DER -in "$issuer_der" -out "$work/issuer.pem"
        set -- -cert "$work/issuer.pem" "$@"
    fi
    openssl ca -batch -notext -config "$work/ca.cnf" -rand_serial \
        -startdate "$start" -enddate "$end" -keyfile "$issuer_key" \
        -extensions "$ext" -in "$work/req.csr" -out "$work/out.pem" "$@" 2>"$work/ca.log" \
        || { cat "$work/ca.log" >&2; exit 1; }
    openssl x509 -in "$work/out.pem" -outform DER -out "$out"
}
p256() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
p384() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$1"; }

FROM=20200101000000Z
UNTIL=20491231235959Z

# The good chain, as shipped in sample-data/test-ca.
mkdir -p test-ca
cp "$ca/root.der" "$ca/intermediate.der" "$ca/leaf.der" "$ca/leaf-key.pem" test-ca/

# A complete, well-formed chain under a root nobody configured.
mkdir -p other-ca
p384 "$work/other-root-key.pem"
p384 "$work/other-intermediate-key.pem"
p256 other-ca/leaf-key.pem
issue "subdesk TEST ONLY Untrusted Root CA" "$work/other-root-key.pem" "$work/other-root-key.pem" "" \
    v3_root other-ca/root.der $FROM $UNTIL -selfsign
issue "subdesk TEST ONLY Untrusted Intermediate CA" "$work/other-intermediate-key.pem" \
    "$work/other-root-key.pem" other-ca/root.der v3_intermediate other-ca/intermediate.der $FROM $UNTIL
issue "subdesk TEST ONLY Untrusted App Store Signing" other-ca/leaf-key.pem \
    "$work/other-intermediate-key.pem" other-ca/intermediate.der v3_leaf other-ca/leaf.der $FROM $UNTIL

# An intermediate under the test root without 1.2.840.113635.100.6.2.1, and a
# proper leaf (test leaf key) under it.
p384 "$work/no-oid-intermediate-key.pem"
issue "subdesk TEST ONLY Intermediate CA without marker" "$work/no-oid-intermediate-key.pem" \
    "$ca/root-key.pem" "$ca/root.der" v3_intermediate_without_oid intermediate-without-oid.der $FROM $UNTIL
issue "subdesk TEST ONLY App Store Signing under unmarked intermediate" "$ca/leaf-key.pem" \
    "$work/no-oid-intermediate-key.pem" intermediate-without-oid.der v3_leaf \
    leaf-under-intermediate-without-oid.der $FROM $UNTIL

# A leaf under the test intermediate without 1.2.840.113635.100.6.11.1.
issue "subdesk TEST ONLY Signing without marker" "$ca/leaf-key.pem" \
    "$ca/intermediate-key.pem" "$ca/intermediate.der" v3_leaf_without_oid leaf-without-oid.der $FROM $UNTIL

# A proper leaf under the test intermediate that was valid only in 2020-2021.
issue "subdesk TEST ONLY App Store Signing expired 2021" "$ca/leaf-key.pem" \
    "$ca/intermediate-key.pem" "$ca/intermediate.der" v3_leaf leaf-expired-2021.der \
    20200101000000Z 20211231235959Z

# A proper leaf (test leaf key) issued straight by the test root: its path to
# the root skips whatever intermediate the x5c names.
issue "subdesk TEST ONLY App Store Signing issued by the root" "$ca/leaf-key.pem" \
    "$ca/root-key.pem" "$ca/root.der" v3_leaf leaf-issued-by-root.der $FROM $UNTIL

# A P-256 key that no certificate certifies, to sign with while presenting the
# test leaf's x5c.
p256 other-key.pem

echo "fixtures written to $here"
