#!/usr/bin/env bash
# Installs what `npm start` / `npm test` need and is missing. Idempotent and quiet when all is present:
# it asks dpkg per package, and reruns `npm install` only when package.json changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build g++ clang clang-format libclang-rt-14-dev pkg-config
  libeigen3-dev libxsimd-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libbenchmark-dev zlib1g-dev libopenmpi-dev openmpi-bin
  emscripten chromium
  python3 python3-pot python3-numpy python3-scipy python3-sklearn python3-rdkit python3-torch
  # An optimised BLAS for numpy, SciPy and PyTorch (without it Debian's torch multiplies with the reference BLAS,
  # ~8 GFLOP/s here, which would make bench/otke_vs_torch.py's same-run baseline a straw man).
  libopenblas0-pthread
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm workspace (web/ package + demo): install when node_modules is absent or older than the manifests.
stamp=node_modules/.inductive-installed
if [[ ! -f $stamp || package.json -nt $stamp || web/package.json -nt $stamp || \
      ( -f package-lock.json && package-lock.json -nt $stamp ) ]]; then
  echo "setup: npm install" >&2
  if [[ -f package-lock.json ]]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
  touch "$stamp"
fi
