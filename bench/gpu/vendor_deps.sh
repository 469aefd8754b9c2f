#!/usr/bin/env bash
# Copies the header-only libraries and GoogleTest's sources that a CUDA build needs into .gpu-deps/ (ignored by
# git), so that bench/gpu/check.sh can build on a GPU machine that has nvcc, CMake and ninja but none of our
# Debian packages and no package registry. Run it here, then carry .gpu-deps with the device call (about 16 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.gpu-deps
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp/include"
for src in /usr/include/eigen3/Eigen /usr/include/xsimd /usr/include/nlohmann /usr/include/CLI; do
  [[ -d $src ]] || { echo "error: $src is missing: run scripts/setup.sh first" >&2; exit 2; }
  cp -r "$src" "$dest.tmp/include/"
done
# Eigen's headers include <unsupported/...> nowhere we use; GoogleTest is built from source there.
cp -r /usr/src/googletest "$dest.tmp/googletest"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
du -sh "$dest" | sed 's/^/vendored: /'
