#!/bin/sh
# Loads v4l2loopback as N nodes, /dev/video10 on, card labels studio-loopback-10...: each an output node
# until a writer (`pw-virtual-camera --v4l2-output /dev/video10 --format mjpeg`) has written a frame, then
# a capture device offering just the writer's format (exclusive_caps=1), as a USB webcam sending MJPEG is;
# or unloads it. Root, inside the VM (scripts/vm/run.sh --loopback N at boot; LoopbackRig per test, so
# the other V4L2 tests see only vivid). The module is built for the VM's kernel by scripts/setup.sh.
#
#   scripts/vm/loopback.sh load [N] | unload
set -eu
case "${1:-}" in
  load)
    n="${2:-1}"
    numbers=$(seq -s, 10 $((9 + n))); labels=$(seq -s, -f 'studio-loopback-%g' 10 $((9 + n)))
    caps=$(printf '1,%.0s' $(seq "$n")); caps=${caps%,}
    modprobe v4l2loopback devices="$n" video_nr="$numbers" card_label="$labels" exclusive_caps="$caps" max_buffers=4 ;;
  unload) modprobe -r v4l2loopback ;;
  *) echo "usage: $0 load [N] | unload" >&2; exit 2 ;;
esac
