// swift-tools-version:6.0
// studio: a live production and ingest server for a studio PC with several cameras.
// Data flow: Capture -> Switcher -> Encoding -> Output, with Control and EventStore beside the pipeline.
import PackageDescription

let package = Package(
    name: "studio",
    products: [
        .executable(name: "studio", targets: ["studio"]),
        // What only `studio serve` and `studio doctor` need (FFmpeg, PipeWire, VAAPI...): `studio` dlopens it
        // from beside itself (or ../lib/studio/), so the history and client commands start without the media stack.
        .library(name: "StudioEngine", type: .dynamic, targets: ["StudioEngine"]),
    ],
    targets: [
        // C libraries from Debian packages. Each module map pulls in one library plus a small shim
        // header for what Swift cannot import (macros, variadic calls); every shim symbol is prefixed.
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libva's DRM display: probing /dev/dri render nodes for H.264 encode (VAAPIProbe).
        .systemLibrary(name: "CVA", path: "Sources/CVA", pkgConfig: "libva-drm", providers: [.apt(["libva-dev"])]),
        // libpipewire-0.3 (+ libspa headers): PipeWire cameras and microphones (Capture).
        .systemLibrary(name: "CPipeWire", path: "Sources/CPipeWire", pkgConfig: "libpipewire-0.3",
                       providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]),
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // FreeType 2: text layers (titles, captions) in composed scenes (Graphics).
        .systemLibrary(name: "CFreeType", path: "Sources/CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        // libebur128: the program's EBU R128 loudness (Mixer).
        .systemLibrary(name: "CEBUR128", path: "Sources/CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // libmicrohttpd: the operator's HTTP API and event stream (HTTPConsole).
        // libsrt for the SRT listener of network cameras (Debian's GnuTLS build, the one libavformat links).
        .systemLibrary(name: "CSRT", path: "Sources/CSRT", pkgConfig: "srt", providers: [.apt(["libsrt-gnutls-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),

        // Value types shared by every stage. No C.
        .target(name: "StudioCore"),
        // Threads, bounded queues, the monotonic clock and the one EINTR-retrying syscall wrapper.
        .target(name: "StudioSystem", dependencies: ["StudioCore", "CSystem"]),
        // glibc calls that need _GNU_SOURCE or are variadic.
        .target(name: "CSystem"),
        // V4L2 ioctl numbers and pixel-format codes (function-like macros Swift cannot import), ioctl itself.
        .target(name: "CV4L2"),

        // Between CFFmpeg and the stages: the one FFmpeg error type and its `check`, the one owner of codec
        // contexts (CodecSession), libswscale conversion into VideoFrames, FFmpeg logging, and the C side
        // (AVPixelFormat) of StudioCore's pixel-format table.
        .target(name: "MediaSupport", dependencies: ["StudioCore", "StudioSystem", "CFFmpeg", "PixelKernels"]),
        // Per-pixel loops in SIMD vectors, optimised in every build: unoptimised generic SIMD is far too
        // slow for a camera's pictures, even in a debug build's tests.
        .target(name: "PixelKernels", swiftSettings: [.unsafeFlags(["-O"])]),
        // Audio inner loops (the resampler's), in C for the same reason: -O2 in every build, and an AVX2
        // version chosen at run time where the CPU has it.
        .target(name: "AudioKernels", cSettings: [.unsafeFlags(["-O2"])]),

        // Bitmap font, fills and text on I420/NV12 frames: test-pattern pictures (Capture) and slates (Switcher).
        .target(name: "FrameDrawing", dependencies: ["StudioCore"]),

        // Pictures the compositor layers besides cameras, and what it does to a camera's picture first:
        // still images (PNG/JPEG through libavcodec), text (FreeType), per-camera picture settings.
        .target(name: "Graphics", dependencies: ["StudioCore", "FrameDrawing", "MediaSupport", "CFFmpeg", "CFreeType"]),

        // The operator console's live tiles: small JPEGs of the cameras, program and preview on their own
        // thread, only while someone watches (served by the HTTP console).
        .target(name: "LivePictures", dependencies: ["StudioCore", "StudioSystem", "MediaSupport"]),

        // The pipeline stages (adapters). They depend inward only, never on each other.
        .target(name: "Capture", dependencies: ["StudioCore", "StudioSystem", "FrameDrawing", "CV4L2", "CFFmpeg", "CPipeWire", "CSRT", "MediaSupport", "AudioKernels"]),
        // Test and benchmark helper: a PipeWire Video/Source publishing a test-pattern camera's pictures.
        .executableTarget(name: "pw-virtual-camera", dependencies: ["Capture", "CPipeWire", "TestSupport", "StudioCore", "StudioSystem", "FrameDrawing"]),
        .target(name: "Switcher", dependencies: ["StudioCore", "StudioSystem", "FrameDrawing", "MediaSupport", "Graphics"]),
        .target(name: "Encoding", dependencies: ["StudioCore", "StudioSystem", "CFFmpeg", "CVA", "MediaSupport"]),
        .target(name: "Output", dependencies: ["StudioCore", "StudioSystem", "CFFmpeg", "MediaSupport"]),
        // The program's audio mixer: per input delay, gain, pan, mute, audio-follow-video; master gain,
        // a brickwall limiter; meters and EBU R128 loudness. Runs on the program's audio thread.
        .target(name: "Mixer", dependencies: ["StudioCore", "StudioSystem", "CEBUR128", "AudioKernels"]),
        // Tally out to studio hardware and software: TSL UMD 3.1/5.0 senders and the vMix-compatible tally
        // server, each on its own thread, reading the newest tally board (docs/control-surfaces.md).
        .target(name: "TallyOut", dependencies: ["StudioCore", "StudioSystem"]),

        // Each camera recorded on its own (ISO) beside the program: its frame clock (Switcher), its encoder
        // (Encoding) or its own compressed frames passed through (Capture), one file per feed (Output). A
        // composite like Transcoding, not an adapter; the server wires one recorder per camera.
        .target(name: "IsoRecording", dependencies: ["StudioCore", "StudioSystem", "Capture", "Switcher", "Encoding", "Output"]),

        // After the show: a passthrough ISO (MJPEG in Matroska) into H.264 in MOV/MP4 for editors
        // (`studio transcode`), in-process with the pipeline's own decoder, encoder and muxer types.
        .target(name: "Transcoding", dependencies: ["StudioCore", "StudioSystem", "CFFmpeg", "MediaSupport", "Encoding", "Output"]),

        // Beside the pipeline.
        .target(name: "EventStore", dependencies: ["StudioCore", "StudioSystem", "CSQLite"], plugins: ["EmbedMigrations"]),
        // Build time: compiles migrations/*.sql (package root) into EventStore as a generated Swift file.
        .executableTarget(name: "embed-migrations"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"]),
        // Test helper for EventStoreTests: records events in a loop until it is SIGKILLed.
        .executableTarget(name: "eventstore-writer", dependencies: ["EventStore", "StudioCore"]),
        .target(name: "Control", dependencies: ["StudioCore", "StudioSystem"]),
        .target(name: "StudioConfig", dependencies: ["StudioCore", "CYAML"]),
        // The operator's HTTP API (libmicrohttpd on its own threads): routes, token, Origin, request budget,
        // the event stream. It knows no command: StudioServer hands it the routes and a handler.
        .target(name: "HTTPConsole", dependencies: ["StudioCore", "StudioSystem", "CMicroHTTPD"]),

        // What the server answers and the history says, without the media stack: the control replies, the
        // history's queries, reports, retention and cut-list exports, the timeline picture. The light `studio`
        // executable links it; StudioServer answers with it (and re-exports it).
        .target(name: "StudioViews", dependencies: ["StudioCore", "StudioSystem", "EventStore", "Control"]),

        // Wiring and the executable.
        .target(name: "StudioServer", dependencies: [
            "StudioCore", "StudioSystem", "Capture", "Switcher", "Encoding", "Output",
            "EventStore", "Control", "StudioConfig", "MediaSupport", "LivePictures", "HTTPConsole", "Mixer", "StudioViews", "IsoRecording", "TallyOut",
        ], plugins: ["EmbedWebConsole"]),
        // Build time: compiles web/ (the operator's console page, package root) into StudioServer as a generated Swift file.
        .executableTarget(name: "embed-web"),
        .plugin(name: "EmbedWebConsole", capability: .buildTool(), dependencies: ["embed-web"]),
        // The command line: each command's options declared once (parsing, help, the overview), the
        // `studio serve` flags with the config keys whose values they take, and the engine library's loader.
        // Light: no media library (StudioCLITests checks the built `studio`).
        .target(name: "StudioCLI", dependencies: ["StudioViews", "EventStore", "StudioConfig", "Control", "StudioCore", "StudioSystem"]),
        // `studio` itself: the client, history and export commands; the engine's commands through StudioEngine.
        .executableTarget(name: "studio", dependencies: ["StudioCLI", "StudioViews", "Control", "EventStore", "StudioConfig", "StudioCore", "StudioSystem"]),
        // The commands that need the media stack (`serve`, `doctor`, `transcode`), entered from `studio` by dlopen through
        // one C entry point per command; linked -Bsymbolic so that its own copies of the shared modules bind to itself.
        .target(name: "StudioEngine", dependencies: ["StudioCLI", "StudioServer", "StudioViews", "Transcoding", "EventStore", "Control", "StudioConfig", "StudioCore", "StudioSystem"],
                linkerSettings: [.unsafeFlags(["-Xlinker", "-Bsymbolic"])]),

        // Benchmark tool: writes a test camera's frames as Y4M so the ffmpeg CLI can encode the same pictures.
        .executableTarget(name: "pattern-y4m", dependencies: ["BenchmarkSupport", "Capture", "StudioCore"], path: "Benchmarks/pattern-y4m"),
        .executableTarget(name: "encode-bench", dependencies: ["BenchmarkSupport", "Capture", "Encoding", "StudioCore", "StudioSystem"],
                          path: "Benchmarks/encode-bench"),
        // Benchmark tool: the per-camera picture processing (beauty filter) per 720p frame, and the same frames as Y4M for ffmpeg.
        .executableTarget(name: "picture-bench", dependencies: ["BenchmarkSupport", "Graphics", "StudioCore"], path: "Benchmarks/picture-bench"),
        // Benchmark tool: the switcher's compositor per program frame (grid, PiP, mix, 1080p show) on camera-like
        // frames, the same frames as Y4M, and the ffmpeg filter graph of the same composition.
        .executableTarget(name: "compose-bench", dependencies: ["BenchmarkSupport", "Switcher", "StudioCore"], path: "Benchmarks/compose-bench"),
        // Benchmark tool: the live tiles (scale to 320 wide + JPEG) per picture on camera-like frames, the same frames as Y4M,
        // and the tile thread's CPU with four live cameras beside a running program.
        .executableTarget(name: "tile-bench", dependencies: ["BenchmarkSupport", "LivePictures", "MediaSupport", "Capture", "Switcher", "StudioCore", "StudioSystem"],
                          path: "Benchmarks/tile-bench"),
        // Benchmark tool: the mixer (8 inputs, meters, R128) per second of audio, and the same inputs as WAV for ffmpeg's amix + ebur128.
        .executableTarget(name: "mixer-bench", dependencies: ["BenchmarkSupport", "Mixer", "TestSupport", "StudioCore"], path: "Benchmarks/mixer-bench"),
        // Benchmark tool: plays a live stream, reads each picture's `CaptureStamp` and reports capture-to-wire latency.
        .executableTarget(name: "latency-probe", dependencies: ["Capture", "CFFmpeg", "StudioSystem"], path: "Benchmarks/latency-probe"),
        // What the benchmark tools share: writing frames as Y4M for the ffmpeg CLI, CPU time.
        .target(name: "BenchmarkSupport", dependencies: ["StudioCore"], path: "Benchmarks/BenchmarkSupport"),

        // Helpers for tests only: a private nginx-rtmp, child processes, ffprobe.
        .target(name: "TestSupport", dependencies: ["StudioSystem", "StudioCore", "CFFmpeg", "MediaSupport", "EventStore"]),

        .testTarget(name: "StudioCoreTests", dependencies: ["StudioCore"]),
        .testTarget(name: "StudioSystemTests", dependencies: ["StudioSystem"]),
        .testTarget(name: "MediaSupportTests", dependencies: ["MediaSupport", "StudioCore", "CFFmpeg", "TestSupport", "PixelKernels"]),
        .testTarget(name: "CaptureTests", dependencies: ["TestSupport", "Capture", "Mixer", "FrameDrawing", "StudioCore", "StudioSystem", "CV4L2", "CPipeWire", "CSRT", "AudioKernels"]),
        // Switcher tests drive the switcher with real test-pattern cameras (Capture); the modules themselves never meet.
        // V4L2 against the kernel's vivid driver: runs inside the VM (scripts/vm/run.sh), skipped on a host without vivid.
        .testTarget(name: "V4L2Tests", dependencies: ["TestSupport", "Capture", "CV4L2", "StudioCore", "StudioSystem"]),
        .testTarget(name: "GraphicsTests", dependencies: ["TestSupport", "Graphics", "FrameDrawing", "MediaSupport", "StudioCore"]),
        .testTarget(name: "SwitcherTests", dependencies: ["TestSupport", "Switcher", "Graphics", "Capture", "FrameDrawing", "StudioCore", "StudioSystem"]),
        .testTarget(name: "LivePicturesTests", dependencies: ["TestSupport", "LivePictures", "Capture", "Switcher", "MediaSupport", "FrameDrawing", "StudioCore", "StudioSystem"]),
        .testTarget(name: "MixerTests", dependencies: ["TestSupport", "Mixer", "StudioCore", "StudioSystem", "CEBUR128", "AudioKernels"]),
        .testTarget(name: "EncodingTests", dependencies: ["TestSupport", "Encoding", "Capture", "MediaSupport", "StudioCore", "StudioSystem", "CFFmpeg"]),
        .testTarget(name: "OutputTests", dependencies: ["TestSupport", "Output", "Encoding", "MediaSupport", "StudioCore", "StudioSystem", "CFFmpeg"]),
        .testTarget(name: "TranscodingTests", dependencies: ["TestSupport", "Transcoding", "Output", "Encoding", "MediaSupport", "StudioCore", "StudioSystem", "CFFmpeg"]),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "StudioCore", "StudioSystem", "TestSupport"]),
        .testTarget(name: "ControlTests", dependencies: ["Control", "StudioCore", "StudioSystem", "TestSupport"]),
        .testTarget(name: "HTTPConsoleTests", dependencies: ["TestSupport", "HTTPConsole", "StudioCore", "StudioSystem"]),
        .testTarget(name: "StudioConfigTests", dependencies: ["StudioConfig", "StudioCore", "TestSupport"]),
        .testTarget(name: "StudioCLITests", dependencies: ["StudioCLI", "StudioEngine", "StudioConfig", "StudioCore", "TestSupport"]),
        .testTarget(name: "IsoRecordingTests", dependencies: ["IsoRecording", "Capture", "StudioCore", "StudioSystem"]),
        .testTarget(name: "TallyOutTests", dependencies: ["TallyOut", "StudioCore", "StudioSystem", "TestSupport"], exclude: ["osc_packet.py", "switcher_stub.py"]),
        .testTarget(name: "StudioServerTests", dependencies: ["TestSupport", "StudioServer", "IsoRecording", "StudioViews", "LivePictures", "Capture", "Switcher", "Encoding", "FrameDrawing", "EventStore", "Control", "StudioCore", "StudioSystem", "CSRT", "TallyOut"], exclude: ["Browser", "Fuzz"]),
    ]
)
