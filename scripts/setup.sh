#!/usr/bin/env bash
# Installs what studio needs on Debian 12, idempotently: packages already present are not touched, and
# apt-get runs only when something is missing.
#   scripts/setup.sh demo   what building and running the demo needs (scripts/packages/demo.txt): scripts/demo.sh
#   scripts/setup.sh        that, and what the tests and benchmarks need (scripts/packages/test.txt), the
#                           v4l2loopback module for the test VM's kernel and the OpenTimelineIO venv: scripts/test.sh
# Each package is written once, in one of the two lists, with the reason it is there.
set -euo pipefail
here=$(dirname "$0")
purpose=${1:-test}
case "$purpose" in
  demo) lists=("$here/packages/demo.txt") ;;
  test) lists=("$here/packages/demo.txt" "$here/packages/test.txt") ;;
  *) echo "setup: expected demo or test, got '$purpose'" >&2; exit 2 ;;
esac
# The lists' package names: comments and blank lines dropped.
packages=()
for list in "${lists[@]}"; do
  while read -r line; do
    line=${line%%#*}
    for word in $line; do packages+=("$word"); done
  done < "$list"
done

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian enables the packaged nginx service on install; studio runs its own private nginx instead.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "setup: swift is at /opt/swift/usr/bin; add it to PATH" >&2
  else
    echo "setup: a Swift 6 toolchain is needed (swift.org); none found on PATH" >&2
    exit 1
  fi
fi

[ "$purpose" = test ] || exit 0

# test: v4l2loopback for the kernel the VM boots (scripts/vm/kernel-version.sh: the one linux-image-amd64
# installed; the host may run another), which need not be the host's: that kernel's headers
# (linux-headers-VERSION, named after it, so not in test.txt), then DKMS builds the module into
# /lib/modules/VERSION/updates/dkms, which the VM reads over 9p. Left as it is once modinfo finds it.
vm_kernel=$("$here/vm/kernel-version.sh")
if ! modinfo -k "$vm_kernel" v4l2loopback >/dev/null 2>&1; then
  if ! installed "linux-headers-$vm_kernel"; then
    echo "setup: installing linux-headers-$vm_kernel"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "linux-headers-$vm_kernel" >/dev/null
  fi
  loopback_version=$(dpkg-query -W -f='${Version}' v4l2loopback-dkms)
  echo "setup: building v4l2loopback ${loopback_version%%-*} for $vm_kernel (dkms)"
  $sudo dkms install -m v4l2loopback -v "${loopback_version%%-*}" -k "$vm_kernel" >/dev/null
  modinfo -k "$vm_kernel" v4l2loopback >/dev/null || { echo "setup: v4l2loopback did not install for $vm_kernel" >&2; exit 1; }
fi

# test: `opentimelineio` from PyPI in a venv under the user's cache (ExportTests load `studio export
# --format otio` with it and find it at this path). Left as it is once it imports.
otio_venv="${XDG_CACHE_HOME:-$HOME/.cache}/studio/otio-venv"
if ! "$otio_venv/bin/python" -c 'import opentimelineio' >/dev/null 2>&1; then
  echo "setup: installing opentimelineio into $otio_venv"
  rm -rf "$otio_venv"
  if ! { /usr/bin/python3 -m venv "$otio_venv" &&
         "$otio_venv/bin/python" -m pip install --quiet --disable-pip-version-check 'opentimelineio==0.18.1'; }; then
    # Not fatal: without PyPI the rest still builds and tests; that one test says it was skipped and why.
    echo "setup: WARNING: could not install opentimelineio into $otio_venv; the OTIO export test will be skipped" >&2
  fi
fi
# test: OpenTimelineIO's own FCPXML reader (its `fcpx_xml` adapter plugin), in the same venv: the FCPXML
# export's capture-node lanes are read back with it (FCPXMLNodeLanesTests). Left as it is once it imports.
if "$otio_venv/bin/python" -c 'import opentimelineio' >/dev/null 2>&1 &&
   ! "$otio_venv/bin/python" -c 'import otio_fcpx_xml_adapter' >/dev/null 2>&1; then
  echo "setup: installing otio-fcpx-xml-adapter into $otio_venv"
  "$otio_venv/bin/python" -m pip install --quiet --disable-pip-version-check 'otio-fcpx-xml-adapter==1.0.0' ||
    echo "setup: WARNING: could not install otio-fcpx-xml-adapter into $otio_venv; the FCPXML read-back test will be skipped" >&2
fi
