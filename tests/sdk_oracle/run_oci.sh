#!/bin/sh
# The OCI signing oracle (oci_vectors.py): the OCI SDK's signer (pinned in
# requirements.txt) signs the requests of tests/data/oci/signature_vectors.json
# again and must give the Authorization headers stored there, which
# tests/stores/signing/oci_signature_test.cc checks Sluice's signer against;
# then oci_oracle.py reads through a fake Object Storage that accepts only
# requests signed exactly as the SDK signs them: with an API key, a session
# token, a resource principal (get_resource_principals_signer) and an instance
# principal (fakes of the metadata and auth services; the X.509 federation
# request checked against the SDK's AuthTokenRequestSigner, and the SDK's
# InstancePrincipalsSecurityTokenSigner put through the same fakes), and the
# resource principal versions that buy their token (1.1, 2.1.x, 3.0) with the
# SDK's get_resource_principals_signer() through the same fakes.
# The venv is venv.sh's.
# Needs build/bindings/c/libsluice.so (or $SLUICE_LIBRARY) and
# build/bindings/cli/sluice (or $SLUICE_CLI).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/venv.sh"
"$venv/bin/python" "$here/oci_vectors.py"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$here/../../build/bindings/c/libsluice.so}"
"$venv/bin/python" "$here/oci_oracle.py"
