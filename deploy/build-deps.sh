#!/usr/bin/env bash
# What building the worker needs beyond Rust and a C toolchain: OpenSSL's headers and
# pkg-config, for librdkafka's TLS and SASL (rdkafka's `ssl` feature links the system OpenSSL,
# which keeps its security updates with the distribution). Installs Debian's packages when they
# are missing (as root, as in CI); does nothing when they are there.
set -euo pipefail
if command -v pkg-config >/dev/null && pkg-config --exists openssl; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "build-deps.sh: install OpenSSL's development headers and pkg-config (Debian: libssl-dev pkg-config)" >&2
  exit 1
fi
echo "build-deps.sh: installing libssl-dev and pkg-config from Debian" >&2
apt-get update -qq >&2
apt-get install -y -qq libssl-dev pkg-config >&2
