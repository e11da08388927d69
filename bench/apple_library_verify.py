"""Verify the same signed notifications with Apple's own Python library, for comparison.

Usage: python apple_library_verify.py BODIES.ndjson ROOT.der BUNDLE_ID APP_APPLE_ID
Prints one line: `<count> <seconds>` for verifying every body's signedPayload and its
nested signedTransactionInfo and signedRenewalInfo (online checks off), as subdesk does.
"""
import json
import sys
import time

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def main():
    bodies_path, root_path, bundle_id, app_apple_id = sys.argv[1:5]
    with open(root_path, "rb") as f:
        root = f.read()
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, bundle_id, int(app_apple_id))
    with open(bodies_path) as f:
        payloads = [json.loads(line)["signedPayload"] for line in f if line.strip()]
    started = time.perf_counter()
    for signed in payloads:
        notification = verifier.verify_and_decode_notification(signed)
        data = notification.data
        if data.signedTransactionInfo:
            verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
        if data.signedRenewalInfo:
            verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
    elapsed = time.perf_counter() - started
    print(len(payloads), elapsed)


if __name__ == "__main__":
    main()
