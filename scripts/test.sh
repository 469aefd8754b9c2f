#!/usr/bin/env bash
# `npm test`: set up, build, then every suite. Stops at the first failing suite with its output.
#   native GoogleTest + CLI + POT oracle (ctest), CUDA tests (skip without a GPU), the core tests built with em++
#   under Node, Vitest (TS API in Node), the packed npm package in fresh consumer projects, the demo in Debian
#   Chromium (playwright-core) served statically and through `npm start` itself, the core tests under ASan + UBSan,
#   and the fuzzers briefly.
source "$(dirname "$0")/lib.sh"
build_all

step "formatting (C++/CUDA: .clang-format; TypeScript/JavaScript: .prettierrc.json)"
bash scripts/check_format.sh

step "TypeScript lint (tsc strict + unused code, implicit returns, fallthrough, override: package, its tests, demo)"
npm run typecheck --silent -w inductive
npm run typecheck --silent -w inductive-demo

step "native tests (ctest: cpu, cli, oracle, cuda)"
ctest --test-dir build/native-release --output-on-failure -j "$JOBS"

step "core tests compiled to wasm, under Node"
ctest --test-dir build/wasm-release --output-on-failure -L wasm

step "TS package (vitest, Node)"
npm test --silent -w inductive

step "the npm package as users install it (npm pack; Node ESM, Vite + Worker in Chromium, strict TS, CommonJS)"
node tests/package/package.e2e.mjs

step "demo end to end (Debian Chromium via playwright-core)"
npm run test:e2e --silent -w inductive-demo

step "first run: \`npm start\` as the README says, then every demo panel at the URL it prints"
node tests/first_run/npm_start.e2e.mjs

step "the core under AddressSanitizer + UBSan (build/asan: core tests, parser differential; halt on the first report)"
# Only what the sanitizers check is built (-O1 -g1, no CLI, benches or CUDA): a fresh clone builds it in minutes.
build_preset asan --target inductive_core_tests inductive_parse_dump
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
ctest --test-dir build/asan --output-on-failure -j "$JOBS" -L cpu
ctest --test-dir build/asan --output-on-failure -R '^py_test_differential_fuzz$'

step "fuzzers (${FUZZ_SECONDS:-20} s each)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"

step "all suites passed"
