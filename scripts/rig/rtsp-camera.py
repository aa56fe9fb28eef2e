#!/usr/bin/python3
"""An IP camera for the tests: an RTSP server (GStreamer's gst-rtsp-server, through python3-gi) serving
rtsp://127.0.0.1:PORT/stream1: 320x180 frames of one colour at 30 fps in H.264 and a 1 kHz stereo sine
of amplitude 0.1 in AAC, live. Runs until it is sent SIGTERM.

    scripts/rig/rtsp-camera.py PORT RRGGBB
"""
import signal
import sys

import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def main():
    port, colour = sys.argv[1], sys.argv[2]
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        "( videotestsrc is-live=true pattern=solid-color foreground-color=0xFF%s"
        " ! video/x-raw,width=320,height=180,framerate=30/1 ! videoconvert ! video/x-raw,format=I420"
        " ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! rtph264pay name=pay0 pt=96"
        "  audiotestsrc is-live=true wave=sine freq=1000 volume=0.1 ! audio/x-raw,rate=48000,channels=2"
        " ! avenc_aac ! rtpmp4gpay name=pay1 pt=97 )" % colour)
    factory.set_shared(True)
    server.get_mount_points().add_factory("/stream1", factory)
    if server.attach(None) == 0:
        print("rtsp-camera: cannot listen on 127.0.0.1:%s" % port, file=sys.stderr)
        sys.exit(1)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    print("rtsp-camera: serving rtsp://127.0.0.1:%s/stream1" % port, flush=True)
    loop.run()


if __name__ == "__main__":
    main()
