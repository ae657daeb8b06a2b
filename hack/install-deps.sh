#!/usr/bin/env bash
# Installs every Debian package liken-dra's build and tests need. Idempotent and non-interactive.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcpprest-dev libssl-dev libboost-system-dev
  nlohmann-json3-dev prometheus-cpp-dev libyaml-cpp-dev libabsl-dev libcli11-dev
  libgtest-dev libgmock-dev googletest
  umockdev libumockdev-dev busybox-static
  pci.ids kmod
  clang libclang-rt-14-dev
  openssl curl jq python3 util-linux
  runc containernetworking-plugins iproute2
  docker.io mmdebstrap
  prometheus python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
