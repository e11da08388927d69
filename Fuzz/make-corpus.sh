#!/usr/bin/env bash
# Fuzz/make-corpus.sh: rewrites the committed seed corpus in Fuzz/corpus/.
#
#   intake       the bad-input bodies of BadInputCorpusTests (bodies under 1 MiB) and a
#                few signed demo notifications of different types
#   payload      the decoded payloads of those notifications, of their transactions
#                and renewal info, and the V1 body
#   jws          the signedPayload, signedTransactionInfo and signedRenewalInfo JWS of
#                those notifications, and the signedPayload of the bad bodies whose
#                fault is in the JWS itself
#   certificate  the DER certificates of sample-data/test-ca and the verification
#                fixtures, the test chain concatenated, and the test root as PEM
#
# Needs a debug build (swift build --scratch-path DIR; pass DIR as $1, default .build),
# python3 and openssl. Signatures are randomised, so the good seeds differ per run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=${1:-.build}
subdesk=$scratch/debug/subdesk
[ -x "$subdesk" ] || { echo "no $subdesk: swift build --scratch-path $scratch first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=Fuzz/corpus
rm -rf "$corpus/intake" "$corpus/payload" "$corpus/jws" "$corpus/certificate"
mkdir -p "$corpus/intake" "$corpus/payload" "$corpus/jws" "$corpus/certificate"

SUBDESK_WRITE_CORPUS="$tmp/bad" swift test --scratch-path "$scratch" --filter BadInputCorpusTests >/dev/null
cp "$tmp/bad"/*.json "$corpus/intake/"

"$subdesk" demo --no-dashboard --db "$tmp/demo.db" --copies 1 2>/dev/null
"$subdesk" notifications --db "$tmp/demo.db" --ndjson --limit 100000 > "$tmp/good.ndjson"

python3 - "$tmp/good.ndjson" "$tmp/bad" "$corpus" <<'PY'
import base64, json, os, re, sys
good_path, bad_dir, corpus = sys.argv[1:]

def payload(jws):
    segment = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))

def write(folder, name, data):
    with open(os.path.join(corpus, folder, name), "wb") as f:
        f.write(data)

# One good body per notification type and subtype: enough to show the fuzzer every shape.
seen = set()
for line in open(good_path, encoding="utf-8"):
    body = json.loads(line)
    jws = body["signedPayload"]
    p = payload(jws)
    kind = (p.get("notificationType"), p.get("subtype"))
    if kind in seen or len(seen) >= 8:
        continue
    seen.add(kind)
    name = "-".join(k.lower() for k in kind if k)
    write("intake", "good-%s.json" % name, line.strip().encode())
    write("jws", "good-%s.jws" % name, jws.encode())
    write("payload", "notification-%s.json" % name, json.dumps(p, sort_keys=True).encode())
    for field in ("signedTransactionInfo", "signedRenewalInfo"):
        nested = p.get("data", {}).get(field)
        if nested:
            write("jws", "good-%s-%s.jws" % (name, field), nested.encode())
            write("payload", "%s-%s.json" % (name, field), json.dumps(payload(nested), sort_keys=True).encode())

# Only the bodies whose fault is in the JWS itself: the others carry a valid JWS,
# which the good seeds already show.
jws_faults = re.compile(r"^(alg-|x5c-|bad-base64-|header-|.*segments|empty-jws|signature-|payload-altered|"
                        r"certificate-expired|chain-to-other-root|leaf-|intermediate-|signed-by-other-key|control-)")
for name in sorted(os.listdir(bad_dir)):
    if name.startswith("v1-not-allowed"):
        write("payload", "v1-body.json", open(os.path.join(bad_dir, name), "rb").read())
    if not jws_faults.match(name):
        continue
    try:
        body = json.loads(open(os.path.join(bad_dir, name), "rb").read())
    except (ValueError, RecursionError):
        continue
    if isinstance(body, dict) and isinstance(body.get("signedPayload"), str):
        write("jws", "bad-" + name.replace(".json", ".jws"), body["signedPayload"].encode())
PY

fixtures=Tests/SubscriptionCoreTests/Fixtures/verification
for f in sample-data/test-ca/*.der "$fixtures"/*.der "$fixtures"/other-ca/*.der "$fixtures"/apple/*.cer; do
    name=$(echo "${f#*/}" | tr '/' '-')
    cp "$f" "$corpus/certificate/$name"
done
cat sample-data/test-ca/leaf.der sample-data/test-ca/intermediate.der sample-data/test-ca/root.der \
    > "$corpus/certificate/chain-test-ca.der"
openssl x509 -inform der -in sample-data/test-ca/root.der -out "$corpus/certificate/test-ca-root.pem"

# Same bytes, one file: libFuzzer would read duplicates twice for nothing.
for dir in "$corpus"/*/; do
    declare -A kept=()
    for f in "$dir"*; do
        sum=$(sha256sum "$f" | cut -d' ' -f1)
        if [ -n "${kept[$sum]:-}" ]; then rm "$f"; else kept[$sum]=1; fi
    done
    unset kept
done
for dir in "$corpus"/*/; do
    echo "$(basename "$dir"): $(ls "$dir" | wc -l) seeds, $(cat "$dir"* | wc -c) bytes"
done
