# scripts/lib.sh - shared by build/start/test/bench: logging and the build steps, each a no-op when up to date.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export NODE_PATH=/usr/share/nodejs   # Debian's emscripten finds acorn there
JOBS="${JOBS:-$(nproc)}"

step() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Configures a CMake preset once, then builds it (ninja makes a second run a no-op).
build_preset() {
  local preset="$1"; shift
  if [[ ! -f "build/$preset/build.ninja" ]]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build "build/$preset" -j "$JOBS" "$@"
}

build_native() { step "native build (build/native-release)"; build_preset native-release; }
build_wasm() { step "wasm build (build/wasm-release -> web/wasm)"; build_preset wasm-release; }

# Rebuilds a web workspace (folder, package name) only when a source is newer than its output stamp.
build_web_workspace() {
  local ws="$1" pkg="$2" stamp="$3"; shift 3
  # The workspace's sources (not its own or a nested workspace's dist/), then what it builds from (which may be
  # another workspace's dist/: the demo is built from the package's).
  if [[ -f "$stamp" ]] && [[ -z "$(find "$ws" -newer "$stamp" -type f \
        -not -path '*/node_modules/*' -not -path '*/dist/*' -print -quit 2>/dev/null)" ]] &&
     { (($# == 0)) || [[ -z "$(find "$@" -newer "$stamp" -type f -not -path '*/node_modules/*' -print -quit 2>/dev/null)" ]]; }; then
    return 0
  fi
  step "npm run build -w $pkg"
  npm run build --silent -w "$pkg"
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
}

build_web() {
  build_web_workspace web inductive web/dist/.stamp web/wasm
  build_web_workspace web/demo inductive-demo web/demo/dist/.stamp web/dist web/wasm data/models data/promoters
}

build_all() {
  bash scripts/setup.sh
  build_native
  build_wasm
  build_web
}

# What `npm start` needs before it can serve the demo: the wasm module, the TS package and the demo, not the test
# suites, benches and wasm test binaries, which `npm test` / `npm run build` build later in the same folders.
build_for_demo() {
  bash scripts/setup.sh
  step "wasm module (build/wasm-release -> web/wasm)"; build_preset wasm-release --target inductive_web_wasm
  build_web
}

# The CLI alone (npm start's example), without the tests and benches of the native preset.
build_cli() {
  step "native CLI (build/native-release, target inductive_cli)"; build_preset native-release --target inductive_cli
}
