#!/usr/bin/env bash
# libFuzzer targets under AddressSanitizer + UBSan, built with clang in
# build-fuzz/ (-Dfuzzing=true; the gcc builds are not affected).
#   tests/fuzz/fuzz.sh [SECONDS]        CI: replays the seed corpus and the
#                                       committed regressions, then fuzzes each
#                                       target SECONDS (default 90)
#   tests/fuzz/fuzz.sh TARGET SECONDS [libFuzzer options...]
#                                       a long campaign on fuzz_model or fuzz_npy;
#                                       its corpus grows in build-fuzz/campaign/TARGET
# A crash leaves its input in build-fuzz/crashes/; fix it and commit the input
# to tests/fuzz/regressions/{model,npy}/ so that every later run replays it.
set -euo pipefail
source "$(dirname "$0")/../../pipelines/ensure-build.sh"
npu_install_missing_packages

build="$NPU_ROOT/build-fuzz"
fuzz_dir="$NPU_ROOT/tests/fuzz"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" "$NPU_ROOT" -Dwerror=true -Dfuzzing=true \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
# (quiet when it builds; a failing build shows its errors, not just the exit status)
if ! ninja -C "$build" -j "$(nproc)" tests/fuzz/fuzz_model tests/fuzz/fuzz_npy tests/fuzz/corpus \
  >"$build/ninja.log" 2>&1; then
  grep -E -A3 "FAILED|error" "$build/ninja.log" | head -60 >&2
  echo "fuzz.sh: the fuzzing build failed (whole log: $build/ninja.log)" >&2
  exit 1
fi

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$build/crashes"

# seed_dirs TARGET: the generated seeds and the committed regressions.
seed_dirs() {
  case "$1" in
    fuzz_model) echo "$build/tests/fuzz/corpus/model $fuzz_dir/regressions/model" ;;
    fuzz_npy) echo "$build/tests/fuzz/corpus/npy $fuzz_dir/regressions/npy" ;;
    *) echo "fuzz.sh: unknown target $1 (fuzz_model, fuzz_npy)" >&2; exit 2 ;;
  esac
}

# fuzz TARGET SECONDS WORK_CORPUS [options]: new inputs go to WORK_CORPUS.
fuzz() {
  local target="$1" seconds="$2" work="$3"
  shift 3
  mkdir -p "$work"
  # shellcheck disable=SC2046 # seed_dirs is a list of folders
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" "$@" \
    "$work" $(seed_dirs "$target")
}

if [ $# -ge 2 ]; then
  target="$1" seconds="$2"
  shift 2
  fuzz "$target" "$seconds" "$build/campaign/$target" "$@"
  exit
fi
seconds="${1:-90}"
for target in fuzz_model fuzz_npy; do
  # shellcheck disable=SC2046
  "$build/tests/fuzz/$target" -runs=0 -timeout=10 $(seed_dirs "$target")  # replay only
  rm -rf "$build/ci-corpus/$target"
  fuzz "$target" "$seconds" "$build/ci-corpus/$target"
done
