#!/usr/bin/env bash
# `npm test`: set up, build, then every suite. Stops at the first failing suite with its output.
#   native GoogleTest + CLI + POT oracle (ctest), CUDA tests (skip without a GPU), the core tests built with em++
#   under Node, Vitest (TS API in Node), the demo in Debian Chromium (playwright-core), and the fuzzers briefly.
source "$(dirname "$0")/lib.sh"
build_all

step "native tests (ctest: cpu, cli, oracle, cuda)"
ctest --test-dir build/native-release --output-on-failure -j "$JOBS"

step "core tests compiled to wasm, under Node"
ctest --test-dir build/wasm-release --output-on-failure -L wasm

step "TS package (vitest, Node)"
npm test --silent -w inductive

step "demo end to end (Debian Chromium via playwright-core)"
npm run test:e2e --silent -w inductive-demo

step "fuzzers (${FUZZ_SECONDS:-20} s each)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"

step "all suites passed"
