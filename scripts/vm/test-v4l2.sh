#!/usr/bin/env bash
# Runs the V4L2 tests (Tests/V4L2Tests, the V4L2 end-to-end and loopback suites of StudioServerTests)
# inside the VM against the vivid driver and v4l2loopback (an MJPEG camera fed by pw-virtual-camera
# --v4l2-output; its tests load and unload the module themselves: scripts/vm/loopback.sh), in one boot,
# from the test bundle already built on the host
# (nothing is compiled in the VM):
#
#   scripts/vm/test-v4l2.sh [BUILD_DIR] [--filter PATTERN]
#
# BUILD_DIR is SwiftPM's scratch path (default .build); build first with `swift build --build-tests`.
# STUDIO_REQUIRE_VIVID=1 and STUDIO_REQUIRE_LOOPBACK=1 make the suites fail, instead of skip, if vivid or
# v4l2loopback is missing in the VM.
# Exit status: the tests' own; 97 VM timeout; 98 VM failed to report; 99 vivid or v4l2loopback did not load.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=".build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build_dir="$1"; shift; fi
filter="V4L2Tests|V4L2EndToEndTests|V4L2LoopbackTests"
if [ "${1:-}" = "--filter" ]; then filter="$2"; shift 2; fi
build_dir="$(realpath "$build_dir")"
bundle="$build_dir/debug/studioPackageTests.xctest"
[ -x "$bundle" ] || { echo "test-v4l2: no test bundle at $bundle (run swift build --build-tests first)" >&2; exit 2; }
share=()
case "$build_dir/" in "$PWD"/*) ;; *) share=(--share "$build_dir") ;; esac
exec scripts/vm/run.sh --timeout "${STUDIO_VM_TIMEOUT:-900}" "${share[@]}" -- \
  env STUDIO_REQUIRE_VIVID=1 STUDIO_REQUIRE_LOOPBACK=1 "$bundle" --testing-library swift-testing --no-parallel --filter "$filter"
