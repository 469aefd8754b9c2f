#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target (the build and seeds of scripts/fuzz.sh): each target runs until
# MAX_RUNS executions or MAX_SECONDS, two at a time (both cores), with -max_len=65536 and -timeout=1 (a hang is more
# than 1 s on a 64 KB input), then its corpus is merged (minimised) into build/fuzz/merged/<target>. Writes the
# table (target, execs, coverage, corpus, findings) to build/fuzz/campaign.md; findings go to build/fuzz/findings/.
#
#   scripts/fuzz_campaign.sh [MAX_SECONDS per target, default 3600] [MAX_RUNS, default 10000000]
#   FUZZ_TARGETS="..." FUZZ_JOBS=1 scripts/fuzz_campaign.sh    some targets (default: all, scripts/fuzz.sh --list),
#                                                              one at a time (default: two)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
runs=${2:-10000000}
build=build/fuzz
read -r -a targets <<<"${FUZZ_TARGETS:-$(bash scripts/fuzz.sh --list | tr '\n' ' ')}"
jobs=${FUZZ_JOBS:-2}
# Builds everything and writes the seeds (a 1-second run of each target).
FUZZ_TARGETS="${targets[*]}" bash scripts/fuzz.sh 1 >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_one() {
  local target=$1 seconds=$2 runs=$3 build=$4
  local corpus=$build/corpus/$target log=$build/campaign-$target.log
  local flags=() dirs=("$corpus" "$build/seeds/$target")
  [[ -f tests/fuzz/${target%_fuzz}.dict ]] && flags+=(-dict="tests/fuzz/${target%_fuzz}.dict")
  [[ -d tests/fuzz/seeds/$target ]] && dirs+=("tests/fuzz/seeds/$target")
  mkdir -p "$corpus" "$build/findings"
  local status=0
  "$build/bin/$target" -runs="$runs" -max_total_time="$seconds" -max_len=65536 -timeout=1 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$target-" "${flags[@]}" "${dirs[@]}" >"$log" 2>&1 || status=$?
  rm -rf "$build/merged/$target" && mkdir -p "$build/merged/$target"
  "$build/bin/$target" -merge=1 "$build/merged/$target" "$corpus" >"$build/merge-$target.log" 2>&1 || true
  echo "$status" >"$build/campaign-$target.status"
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c "run_one {} $seconds $runs $build"

{
  echo "| target | execs | seconds | coverage (edges) | features | merged corpus | findings |"
  echo "|---|---|---|---|---|---|---|"
  for target in "${targets[@]}"; do
    log=$build/campaign-$target.log
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    time=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n 1 | awk '{print $5}')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | awk '{print $2}')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | awk '{print $2}')
    merged=$(ls "$build/merged/$target" | wc -l)
    status=$(cat "$build/campaign-$target.status")
    found=$([[ $status == 0 ]] && echo none || echo "yes: $(ls -t "$build"/findings/"$target"-* 2>/dev/null | head -n 1)")
    echo "| $target | ${execs:-?} | ${time:-$seconds} | ${cov:-?} | ${ft:-?} | $merged | $found |"
  done
} | tee "$build/campaign.md"
! grep -q '| yes:' "$build/campaign.md"
