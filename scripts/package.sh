#!/usr/bin/env bash
# Builds the Debian package studio_VERSION_ARCH.deb (release build) with dpkg-deb, and checks it with
# lintian (any error fails). Install it on a studio PC (docs/install.md):
#
#   scripts/package.sh [--output DIR] [--skip-build]
#   sudo apt install ./studio_*.deb && sudo systemctl enable --now studio
#
# What goes where:
#   /usr/bin/studio                        the binary
#   /usr/lib/studio/libStudioEngine.so     the engine library (`serve`, `doctor`, `transcode`), which
#                                          studio dlopens from ../lib/studio/ (Sources/StudioCLI/EngineLibrary.swift)
#   /usr/lib/studio/lib*.so                the Swift runtime (libswiftCore, Foundation, dispatch...) the two
#                                          need: no Debian package has it. Both find it by RUNPATH ($ORIGIN,
#                                          $ORIGIN/../lib/studio), so one runtime serves the binary and the
#                                          library it loads, as in the build directory; -static-stdlib would link
#                                          a runtime (and Foundation's 39 MB of ICU) into each of them: two
#                                          runtimes in one process, a layout the tests never run
#   /lib/systemd/system/studio.service     deploy/studio.service (not enabled by the package)
#   /etc/studio/studio.yaml                deploy/studio.yaml, a conffile (0640 root:studio from postinst)
#   /usr/share/doc/studio/                 README.md and docs/, copyright, changelog
# The SQL migrations and the console page are compiled into the binaries (the EmbedMigrations and
# EmbedWebConsole build plugins), so nothing else is shipped. The maintainer scripts are deploy/debian/.
# VERSION is what the built `studio version` prints (Sources/studio/Help.swift); Depends are computed by
# dpkg-shlibdeps from the ELF files: runtime libraries only, never a -dev package.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

output_dir=.
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --output) output_dir="$2"; shift 2 ;;
    --skip-build) build=0; shift ;;
    *) echo "package: unknown argument $1 (usage: scripts/package.sh [--output DIR] [--skip-build])" >&2; exit 2 ;;
  esac
done

# The packaging tools: dpkg-shlibdeps (dpkg-dev), patchelf (the RUNPATHs), strip (binutils), lintian.
tools=(dpkg-dev patchelf binutils lintian)
missing=()
for p in "${tools[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "package: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$build" -eq 1 ]; then
  echo "package: building studio and its engine library (release)"
  swift build -c release --product studio
  swift build -c release --product StudioEngine
fi
bin_dir=$(swift build -c release --show-bin-path)
for built in "$bin_dir/studio" "$bin_dir/libStudioEngine.so"; do
  [ -f "$built" ] || { echo "package: $built is missing (run without --skip-build)" >&2; exit 1; }
done
# The Swift runtime's directory: where the toolchain's `swift` finds its shared runtime.
runtime_dir=$(realpath "$(dirname "$(realpath "$(command -v swift)")")/../lib/swift/linux")

version=$("$bin_dir/studio" version)
version=${version#studio }
arch=$(dpkg --print-architecture)
# Reproducible: every timestamp is the last commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
maintainer="${DEBFULLNAME:-$(git log -1 --format=%an 2>/dev/null || echo studio maintainers)} <${DEBEMAIL:-$(git log -1 --format=%ae 2>/dev/null || echo studio@example.org)}>"

# dpkg-shlibdeps wants a source tree: debian/control, and the package's files under debian/studio.
work=$(realpath -m .build/package)
rm -rf "$work"
root="$work/debian/studio"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/studio" "$root/lib/systemd/system" \
  "$root/etc/studio" "$root/usr/share/doc/studio/docs"

install -m 0755 "$bin_dir/studio" "$root/usr/bin/studio"
install -m 0644 "$bin_dir/libStudioEngine.so" "$root/usr/lib/studio/libStudioEngine.so"
# The runtime libraries the two load from the toolchain (ldd: the whole closure), copied beside the engine.
runtime_libs=$( { ldd "$bin_dir/studio"; ldd "$bin_dir/libStudioEngine.so"; } |
  awk -v dir="$runtime_dir/" 'index($3, dir) == 1 { print $3 }' | sort -u)
[ -n "$runtime_libs" ] || { echo "package: found no Swift runtime library of $runtime_dir in ldd's output" >&2; exit 1; }
for lib in $runtime_libs; do install -m 0644 "$lib" "$root/usr/lib/studio/"; done
patchelf --set-rpath '$ORIGIN/../lib/studio' "$root/usr/bin/studio"
for lib in "$root"/usr/lib/studio/*.so; do patchelf --set-rpath '$ORIGIN' "$lib"; done
# As dh_strip does: no symbol tables or debug sections in the package.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/studio"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root"/usr/lib/studio/*.so
# Every library resolves inside the package or from a Debian package (no toolchain path left).
if LD_LIBRARY_PATH= ldd "$root/usr/bin/studio" "$root/usr/lib/studio/libStudioEngine.so" | grep -E "not found|$runtime_dir"; then
  echo "package: a library above does not resolve from the package or the system" >&2; exit 1
fi

install -m 0644 deploy/studio.service "$root/lib/systemd/system/studio.service"
install -m 0644 deploy/studio.yaml "$root/etc/studio/studio.yaml"
echo /etc/studio/studio.yaml > "$root/DEBIAN/conffiles"
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$root/DEBIAN/"

doc="$root/usr/share/doc/studio"
install -m 0644 README.md "$doc/"
install -m 0644 docs/* "$doc/docs/"
swift_license="$(dirname "$runtime_dir")/../../share/swift/LICENSE.txt"
{
  echo "studio: a live production server for a studio PC with several cameras."
  echo
  echo "Files: /usr/bin/studio /usr/lib/studio/libStudioEngine.so /usr/share/doc/studio/*"
  echo "Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) the studio authors"
  echo "License: the source tree states no licence of its own."
  echo
  echo "Files: /usr/lib/studio/lib*.so (all but libStudioEngine.so): the Swift runtime, Foundation,"
  echo " libdispatch and ICU's data, from the Swift toolchain ($(swift --version 2>/dev/null | head -1))"
  echo "Copyright: 2014-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) Apple Inc. and the Swift project authors"
  echo "License: Apache-2.0 with the Runtime Library Exception (below). On Debian systems the Apache"
  echo " License 2.0 is in /usr/share/common-licenses/Apache-2.0. ICU's data (lib_FoundationICU.so,"
  echo " swift-foundation-icu) is under the Unicode License v3 (https://www.unicode.org/license.txt)."
  echo
  sed -n '/Runtime Library Exception/,$p' "$swift_license"
} > "$doc/copyright"
chmod 0644 "$doc/copyright"
{
  echo "studio ($version) unstable; urgency=medium"
  echo
  echo "  * Built from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

cat > "$work/debian/control" <<EOF
Source: studio
Maintainer: $maintainer

Package: studio
Architecture: $arch
EOF
shlibs=$(cd "$work" && dpkg-shlibdeps -O -l"$root/usr/lib/studio" "$root/usr/bin/studio" "$root"/usr/lib/studio/*.so 2>"$work/shlibdeps.log") ||
  { cat "$work/shlibdeps.log" >&2; exit 1; }
depends=${shlibs#shlibs:Depends=}
[ -n "$depends" ] || { echo "package: dpkg-shlibdeps found no dependency" >&2; exit 1; }
if echo "$depends" | tr ',' '\n' | grep -E -- '-dev( |$)'; then
  echo "package: a -dev package in Depends" >&2; exit 1
fi

cat > "$root/DEBIAN/control" <<EOF
Package: studio
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends, adduser
Recommends: fonts-dejavu-core, pipewire
Suggests: librsvg2-bin, va-driver-all
Section: video
Priority: optional
Description: live production server for a studio PC with several cameras
 studio captures cameras (V4L2 webcams and capture cards, PipeWire), cuts and
 composes a program feed between them, encodes it as H.264 and AAC, pushes it
 over RTMP and records it, each camera on its own too. Every session, cut and
 camera loss goes into a SQLite history. Operators drive it from the studio
 command line or a browser console served by the server itself.
EOF

find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$output_dir"
deb="$output_dir/studio_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "package: $deb ($(du -h "$deb" | cut -f1); Depends: $depends, adduser)"

# lintian: errors fail the package; warnings are shown.
lintian_log="$work/lintian.log"
lintian --fail-on error --tag-display-limit 0 "$deb" >"$lintian_log" 2>&1 || lintian_status=$?
grep -v "running with root privileges" "$lintian_log" || true
if [ "${lintian_status:-0}" -ne 0 ]; then
  echo "package: lintian found errors in $deb (above)" >&2
  exit 1
fi
echo "package: lintian: no errors"
