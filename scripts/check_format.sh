#!/usr/bin/env bash
# Checks that every tracked C++/CUDA file is formatted as .clang-format says (clang-format 14, Debian's). Prints
# the files that differ and how to fix them; exit 1 if any. `scripts/check_format.sh --fix` rewrites them.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
if [[ ${1:-} == --fix ]]; then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'format: %s differs from .clang-format\n' "${bad[@]}" >&2
  echo "format: run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} C++/CUDA files match .clang-format"
