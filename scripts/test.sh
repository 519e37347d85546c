#!/usr/bin/env bash
# Installs what is missing, then builds twice and runs every test through
# ctest: a Release build with warnings as errors, and a build with
# AddressSanitizer + UndefinedBehaviorSanitizer (and the engine's
# self-checks) on. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}" "${RS_TEST_PACKAGES[@]}"
jobs=$(nproc)

echo "== release build (warnings are errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRS_WERROR=ON -DBUILD_TESTING=ON > /dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_WERROR=ON -DRS_SANITIZE=ON -DBUILD_TESTING=ON > /dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
echo "all tests passed"
