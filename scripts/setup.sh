#!/usr/bin/env bash
# Installs what building, running and testing studio need on Debian 12, idempotently: packages already
# present are not touched, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  # build: FFmpeg 5.1, SQLite, libyaml through SwiftPM system-library targets
  pkg-config libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libswresample-dev
  libsqlite3-dev libyaml-dev
  # build and run: FreeType (text layers) and a font for them (DejaVu Sans, the default)
  libfreetype-dev fonts-dejavu-core
  # build: libva (VAAPI probe of /dev/dri render nodes for hardware H.264)
  libva-dev
  # build and run: libmicrohttpd (the operator's HTTP API and event stream, CMicroHTTPD / HTTPConsole;
  # chosen over civetweb and libwebsockets in docs/http-api.md)
  libmicrohttpd-dev
  # build: libebur128 (the program's EBU R128 loudness: momentary, short-term, integrated, true peak;
  # CEBUR128 / the Mixer module)
  libebur128-dev
  # run and test: the ffmpeg/ffprobe CLI (tests decode what nginx received; the benchmark compares),
  # and a private nginx with the RTMP module for the demo and the tests
  ffmpeg nginx-light libnginx-mod-rtmp
  # build: libpipewire-0.3 + SPA headers (PipeWire cameras and microphones, CPipeWire);
  # run and test: the pipewire daemon (tests start a private headless one, deploy/pipewire-test.conf)
  # and pipewire-bin (pw-cli, pw-dump: looking at the graph by hand; pw-metadata: tests set the
  # default microphone with it, as a session manager does)
  libpipewire-0.3-dev libspa-0.2-dev pipewire pipewire-bin
  # test: the session-manager case (WirePlumber needs a D-Bus session bus: dbus-daemon)
  wireplumber dbus-daemon
  # test: the sqlite3 CLI (EventStoreTests hold the database's write lock from another process with it,
  # as an operator's `sqlite3 studio.db 'BEGIN EXCLUSIVE;'` would; also handy to look at the event log)
  sqlite3
  # test: V4L2 cameras are tested against the kernel's vivid driver inside a qemu VM (scripts/vm/):
  # Debian's kernel (vivid is a module there), qemu (TCG), a busybox initramfs made with cpio, the
  # kernel's xz payload unpacked for PVH boot, modprobe, and v4l2-ctl to disconnect a camera
  qemu-system-x86 linux-image-amd64 busybox-static kmod cpio xz-utils v4l-utils
  # test: real USB webcams send MJPEG, which vivid cannot: the v4l2loopback module, built by DKMS for the
  # VM's kernel (below, with that kernel's headers), is an MJPEG capture device in the VM, fed by
  # `pw-virtual-camera --v4l2-output` (scripts/vm/run.sh --loopback)
  dkms v4l2loopback-dkms
  # test: the operator's console in a real browser (Tests/StudioServerTests/Browser/console_test.py):
  # Debian's chromium, headless, driven through chromium-driver by Selenium (/usr/bin/python3)
  chromium chromium-driver python3-selenium
  # test: every input surface fuzzed by grammar (Tests/StudioServerTests/Fuzz/fuzz_surfaces.py, scripts/fuzz.sh)
  python3-hypothesis
  # test: the HTTP console over TLS: the openssl CLI makes a self-signed certificate and key, and curl
  # requests https:// with it as CA (TLSTestFiles in TestSupport); a fresh Debian may lack either
  openssl curl
  # run and test: rsvg-convert draws `studio report --png` from the timeline's SVG (tests read its pixels)
  librsvg2-bin
  # test: the exported OpenTimelineIO files are loaded with the real `opentimelineio` (PyPI), installed
  # below into a venv of its own (Debian's python3 refuses pip installs into the system: PEP 668)
  python3-venv
  # benchmark: the GStreamer peer of the program job (scripts/bench-latency.sh): gst-launch-1.0,
  # x264enc (ugly), flvmux/rtmpsink/voaacenc (good/bad), avenc_aac (libav), pipewiresrc (pipewire)
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-pipewire
)

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

# test: v4l2loopback for the kernel the VM boots (scripts/vm/kernel-version.sh: the one linux-image-amd64
# installed; the host may run another), which need not be the host's: that kernel's headers
# (linux-headers-VERSION, named after it, so not in the list above), then DKMS builds the module into
# /lib/modules/VERSION/updates/dkms, which the VM reads over 9p. Left as it is once modinfo finds it.
vm_kernel=$("$(dirname "$0")/vm/kernel-version.sh")
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

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "setup: swift is at /opt/swift/usr/bin; add it to PATH" >&2
  else
    echo "setup: a Swift 6 toolchain is needed (swift.org); none found on PATH" >&2
    exit 1
  fi
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
