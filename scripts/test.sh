#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit and end-to-end: a real
# nginx-rtmp, real FFmpeg, real SQLite). This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup.sh
swift build --build-tests
swift test --skip-build
