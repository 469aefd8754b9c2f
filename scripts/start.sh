#!/usr/bin/env bash
# `npm start`: set up, build what the demo and the example need, run the CLI on the bundled example, then serve the
# demo on 127.0.0.1. The last line on stdout before serving is the demo's URL (tests/first_run reads it).
source "$(dirname "$0")/lib.sh"
build_for_start

CLI=build/native-release/bin/inductive
step "CLI: transport MNIST digit 3 onto digit 8 (data/examples/, eps 0.01, tol 1e-6)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$CLI" sinkhorn --cost data/examples/mnist_3_to_8_cost.npy --a data/examples/mnist_3_weights.npy \
  --b data/examples/mnist_8_weights.npy --eps 0.01 --tol 1e-6 --max-iter 5000 --out "$out/plan.npy" >&2

rm -rf "$out"; trap - EXIT   # exec below replaces this shell, so no EXIT trap would run

PORT="${PORT:-5173}"
step "demo: http://127.0.0.1:$PORT/  (Ctrl-C to stop)"
echo "http://127.0.0.1:$PORT/"
# The config sets the demo folder as Vite's root, so this serves web/demo/dist whatever the working directory.
exec npx --no-install vite preview --config web/demo/vite.config.ts --host 127.0.0.1 --port "$PORT" --strictPort
