#!/usr/bin/env bash
# Fuzzes the readers of untrusted bytes with libFuzzer + ASan + UBSan: model files, .npy, SMILES, LIBSVM, CSV,
# FASTA, our gzip inflater (differentially, against zlib), TU graph files, GraphiT fold files, MNIST idx files, the
# text tokeniser and vocabulary, and the JSON config sections of model files.
#
#   scripts/fuzz.sh [seconds per target, default 20]
#   scripts/fuzz.sh --list                   prints the targets, one per line
#   FUZZ_TARGETS="smiles_fuzz npy_fuzz" scripts/fuzz.sh ...   only these targets
#
# Configures and builds the CMake preset `fuzz` (clang; build/fuzz), then runs each target for that long from a seed
# corpus: the model fixtures in tests/data/models, a few .npy files written below, and the committed seeds of
# tests/fuzz/seeds/<target> (tests/fuzz/make_seeds.py), with a dictionary where the format has keywords. The corpus
# grows in build/fuzz/corpus/<target> across runs. Prints one line per target; on a finding (crash, sanitizer report,
# an exception other than inductive::Error, timeout, out-of-memory) it prints the tail of the log, keeps the
# reproducer in build/fuzz/findings/ and exits 1. Replay one with: build/fuzz/bin/<target> <reproducer>
set -euo pipefail
cd "$(dirname "$0")/.."

# Every target, in the order they run (scripts/fuzz_campaign.sh reads this list through --list).
all_targets=(model_file_fuzz npy_fuzz smiles_fuzz libsvm_fuzz csv_fuzz fasta_fuzz gzip_fuzz tu_fuzz folds_fuzz
             mnist_fuzz tokens_fuzz config_fuzz text_tsv_fuzz)
if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"
for target in "${targets[@]}"; do
  if ! printf '%s\n' "${all_targets[@]}" | grep -qx "$target"; then
    echo "fuzz: unknown target '$target' (scripts/fuzz.sh --list)" >&2
    exit 2
  fi
done

seconds=${1:-20}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds per target, >= 1]" >&2
  exit 2
fi

build=build/fuzz
mkdir -p "$build"
# -j2: the build machine is shared.
if ! { cmake --preset fuzz && cmake --build "$build" -j2 --target "${targets[@]}"; } \
     >"$build/build.log" 2>&1; then
  tail -n 30 "$build/build.log" >&2
  echo "fuzz: build failed; full log in $build/build.log" >&2
  exit 1
fi

# Seeds: every model fixture (valid, future-version and corrupt ones), and .npy files covering each dtype and
# header version parse_npy accepts plus a few it must reject. Written with struct so no numpy is needed.
seeds=$build/seeds
rm -rf "$seeds"
for target in "${all_targets[@]}"; do mkdir -p "$seeds/$target"; done
cp tests/data/models/*.safetensors "$seeds/model_file_fuzz/"
/usr/bin/python3 - "$seeds/npy_fuzz" <<'PY'
import struct, sys, os
out = sys.argv[1]
def npy(descr, shape, data, major=1, fortran=False):
    shape_txt = f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(str(d) for d in shape) + ")"
    h = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_txt}, }}"
    pre = 10 if major == 1 else 12
    h += " " * ((64 - (pre + len(h) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(h)) if major == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + size + h.encode("latin1") + data
seeds = {
    "f4_2x3.npy": npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
    "f8_vec.npy": npy("<f8", (3,), struct.pack("<3d", 0.5, -1, 1e300)),
    "i4_vec.npy": npy("<i4", (4,), struct.pack("<4i", 1, -2, 3, 4)),
    "i8_vec.npy": npy("<i8", (2,), struct.pack("<2q", 7, -(1 << 40))),
    "f4_scalar.npy": npy("<f4", (), struct.pack("<f", 3.5)),
    "f4_empty.npy": npy("<f4", (0, 5), b""),
    "f4_v2.npy": npy("<f4", (2,), struct.pack("<2f", 1, 2), major=2),
    "f4_fortran.npy": npy("<f4", (2, 2), bytes(16), fortran=True),
    "f4_bigendian.npy": npy(">f4", (1,), bytes(4)),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
PY

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  log=$build/$target.log
  mkdir -p "$corpus" "$build/findings"
  flags=()
  dict=tests/fuzz/${target%_fuzz}.dict
  if [[ -f $dict ]]; then flags+=(-dict="$dict"); fi
  # The first directory is where libFuzzer writes new inputs: the build's corpus, never the committed seeds.
  dirs=("$corpus" "$seeds/$target")
  if [[ -d tests/fuzz/seeds/$target ]]; then dirs+=(tests/fuzz/seeds/$target); fi
  if "$build/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/findings/$target-" "${flags[@]}" "${dirs[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "$target: ${execs:-?} execs in ${seconds}s ($(( ${execs:-0} / seconds ))/s)," \
         "corpus $(ls "$corpus" | wc -l) inputs, no findings"
  else
    tail -n 40 "$log" >&2
    echo "$target: FINDING; log $log, reproducer $(ls -t "$build"/findings/"$target"-* 2>/dev/null | head -n 1)" >&2
    status=1
  fi
done
exit $status
