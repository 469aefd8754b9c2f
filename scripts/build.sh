#!/usr/bin/env bash
# Builds everything: native (CLI, tests, CUDA when nvcc is present), wasm, the TS package and the demo.
source "$(dirname "$0")/lib.sh"
build_all
step "built: build/native-release/bin/inductive, web/dist, web/demo/dist"
