#!/usr/bin/env bash
# `npm start`: set up, build what the demo needs, serve it on 127.0.0.1, then (while it is up) build the CLI and
# run it on the bundled example. The URL is printed alone on a line, on stdout, once the server answers
# (tests/first_run reads it); a failure exits non-zero with an `error:` line and stops the server.
source "$(dirname "$0")/lib.sh"
build_for_demo

PORT="${PORT:-5173}"
URL="http://127.0.0.1:$PORT/"
step "demo: serving web/demo/dist on $URL"
# The config sets the demo folder as Vite's root, so this serves web/demo/dist whatever the working directory.
npx --no-install vite preview --config web/demo/vite.config.ts --host 127.0.0.1 --port "$PORT" --strictPort &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
# Wait until it answers (or has died: a busy port, say).
if ! node -e '
  const [url, pid] = process.argv.slice(1);
  const alive = () => { try { process.kill(Number(pid), 0); return true; } catch { return false; } };
  const deadline = Date.now() + 60000;
  (async () => {
    while (Date.now() < deadline && alive()) {
      try { if ((await fetch(url)).ok) process.exit(0); } catch {}
      await new Promise((r) => setTimeout(r, 200));
    }
    process.exit(1);
  })();' "$URL" "$server"; then
  echo "error: the demo server did not start on $URL (is port $PORT in use? set PORT to another one)" >&2
  exit 2
fi
step "demo: $URL  (Ctrl-C to stop)"
echo "$URL"

# The demo is up; the CLI and its example come next (the first build of the native CLI takes minutes).
build_cli
CLI=build/native-release/bin/inductive
step "CLI: transport MNIST digit 3 onto digit 8 (data/examples/, eps 0.01, tol 1e-6)"
out="$(mktemp -d)"
"$CLI" sinkhorn --cost data/examples/mnist_3_to_8_cost.npy --a data/examples/mnist_3_weights.npy \
  --b data/examples/mnist_8_weights.npy --eps 0.01 --tol 1e-6 --max-iter 5000 --out "$out/plan.npy" >&2
rm -rf "$out"
step "demo: still serving $URL  (Ctrl-C to stop)"
wait "$server"
