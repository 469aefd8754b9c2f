#!/usr/bin/env bash
# `npm start`: set up, build, run the CLI on the bundled example, then serve the demo on 127.0.0.1.
source "$(dirname "$0")/lib.sh"
build_all

CLI=build/native-release/bin/inductive
step "CLI: transport MNIST digit 3 onto digit 8 (data/examples/, eps 0.01, tol 1e-6)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$CLI" sinkhorn --cost data/examples/mnist_3_to_8_cost.npy --a data/examples/mnist_3_weights.npy \
  --b data/examples/mnist_8_weights.npy --eps 0.01 --tol 1e-6 --max-iter 5000 --out "$out/plan.npy" >&2

PORT="${PORT:-5173}"
step "demo: http://127.0.0.1:$PORT/  (Ctrl-C to stop)"
echo "http://127.0.0.1:$PORT/"
exec npx --no-install vite preview --config web/demo/vite.config.ts --host 127.0.0.1 --port "$PORT" --strictPort
