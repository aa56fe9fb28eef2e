import CPipeWire
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

extension PipeWireCamera {
    /// The state shared by the camera's thread, the PipeWire loop's callbacks and the camera object.
    ///
    /// `@unchecked Sendable`: `stream`, `session`, the hook/events memory and `sequence`/`pool` are
    /// touched only by the camera thread while it holds the loop lock, or by the loop thread in
    /// callbacks (which run with that lock held); everything read from other threads is in `shared`.
    /// MJPEG: the callback only hands JPEGs to `compressed` (which numbers them) and never touches
    /// `sequence` or `pool`; the camera thread decodes from it and publishes.
    final class Core: @unchecked Sendable {
        let id: CameraID
        let nodeID: UInt32
        let nodeSerial: String?
        let selection: PipeWireVideoChoice?
        let remote: String?
        let frames: LatestValue<VideoFrame>
        /// An MJPEG node's JPEGs, from the process callback to the camera thread and the passthrough tap.
        let compressed: CompressedCapture?
        /// Stamps each buffer's arrival (and capture time, when the producer gave none).
        let clock: any Clock
        private let shared = Mutex(Snapshot())
        private let worker = WorkerThread()

        private var session: PipeWireSession?
        /// The session while `run` has one, for `holdLoop`; set and cleared without the loop lock held.
        private let liveSession = Mutex<PipeWireSession?>(nil)
        private var stream: OpaquePointer?
        private var link: OpaquePointer?
        private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        private let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        private var pool: FramePool?
        private var sequence: UInt64 = 0
        private var negotiated: CameraFormat?
        private var streamState = PW_STREAM_STATE_UNCONNECTED
        private var wasStreaming = false
        /// True when the negotiated format is MJPEG (loop thread only).
        private var negotiatedMJPEG = false

        init(id: CameraID, nodeID: UInt32, nodeSerial: String?, selection: PipeWireVideoChoice?, remote: String?,
             frames: LatestValue<VideoFrame>, compressed: CompressedCapture?, clock: any Clock) {
            self.id = id
            self.clock = clock
            self.compressed = compressed
            self.nodeID = nodeID
            self.nodeSerial = nodeSerial
            self.selection = selection
            self.remote = remote
            self.frames = frames
            hook.initialize(to: spa_hook())
            events.initialize(to: pw_stream_events())
        }

        deinit {
            hook.deallocate()
            events.deallocate()
        }

        var snapshot: Snapshot { shared.withLock { $0 } }

        func start() {
            worker.start(name: "cap.\(id.name)", prepare: {
                shared.withLock {
                    $0.state = .starting
                    $0.problem = nil
                }
            }) { [self] in run() }
        }

        func requestStop() { worker.requestStop() }

        func stop() {
            worker.stop()
            shared.withLock { $0.state = .stopped }
        }

        func holdLoop(seconds: Double) -> Bool {
            liveSession.withLock { session in
                guard let session else { return false }
                session.withLock { MonotonicClock.sleep(seconds: seconds) }
                return true
            }
        }

        private func markLost(_ why: String) {
            shared.withLock {
                if $0.state != .stopped { $0.state = .lost }
                if $0.problem == nil { $0.problem = why }
            }
        }

        private func run() {
            guard let selection else {
                markLost("the node offers no raw or MJPEG format the pipeline takes (H.264 only?)")
                while !worker.isStopRequested { MonotonicClock.sleep(seconds: 0.05) }
                return
            }
            let session: PipeWireSession
            do {
                session = try PipeWireSession(name: "pw.\(id.name)", remote: remote)
            } catch {
                markLost(error.message)
                while !worker.isStopRequested { MonotonicClock.sleep(seconds: 0.05) }
                return
            }
            self.session = session
            liveSession.withLock { $0 = session }
            session.withLock {
                connectStream(session: session, selection: selection)
                // Every global the daemon has now is in `globals` after this.
                session.roundTrip()
            }
            var linked = false
            let decoding = DemandDecoding()
            var newest = CompressedFrame()
            while !worker.isStopRequested {
                if let compressed {
                    // Outside the loop lock: decoding takes milliseconds and must not hold up the loop.
                    if !decodeNewest(compressed, decoding, newest: &newest) { break }
                    // A JPEG or a demand that came in while decoding left its signal: no wait then.
                    compressed.wait(seconds: 0.05)
                }
                session.withLock {
                    if compressed == nil { session.wait(seconds: 0.05) }
                    if session.isDisconnected {
                        markLost("PipeWire daemon gone: \(session.lastError ?? "disconnected")")
                        return
                    }
                    // Ids are reused by the daemon; the serial tells a new node from ours.
                    guard let node = session.globals[nodeID], nodeSerial == nil || node.properties["object.serial"] == nodeSerial else {
                        markLost("node \(nodeID) removed (globals \(session.globals.count), serial \(session.globals[nodeID]?.properties["object.serial"] ?? "-") vs \(nodeSerial ?? "-"))")
                        return
                    }
                    if !linked, let stream {
                        let ownNode = pw_stream_get_node_id(stream)
                        guard ownNode != SPA_ID_INVALID,
                              let output = session.ports(ofNode: nodeID, direction: "out").first,
                              let input = session.ports(ofNode: ownNode, direction: "in").first else { return }
                        // Both ports are known in the registry; a round trip makes sure the daemon has
                        // finished setting our node up before the link-factory looks for it.
                        session.roundTrip()
                        link = session.createLink(outputNode: nodeID, outputPort: output.id, inputNode: ownNode, inputPort: input.id)
                        linked = true
                        if link == nil { markLost("link-factory refused the link") }
                    }
                }
            }
            liveSession.withLock { $0 = nil }
            session.withLock {
                if let stream {
                    spa_hook_remove(hook)
                    pw_stream_disconnect(stream)
                    pw_stream_destroy(stream)
                }
                stream = nil
                if let link { pw_proxy_destroy(link) }
                link = nil
            }
            session.close()
            self.session = nil
        }

        /// Decodes the newest JPEG as the demand wants (`CompressedCapture.decodeNewest`), publishing
        /// what it decoded. False when no decoder can be made (the camera is lost). Camera thread only.
        private func decodeNewest(_ compressed: CompressedCapture, _ decoding: DemandDecoding, newest: inout CompressedFrame) -> Bool {
            let width = shared.withLock { $0.currentFormat?.width } ?? selection?.format.width ?? 0
            switch compressed.decodeNewest(decoding, newest: &newest, width: width) {
            case .idle: break
            case .skipped: shared.withLock { $0.statistics.framesNotDecoded += 1 }
            case .corrupt: shared.withLock { $0.statistics.framesCorrupt += 1 }
            case .failed(let why):
                markLost(why)
                return false
            case .decoded(let frame):
                shared.withLock {
                    if frame.reduction > 1 { $0.statistics.framesDecodedReduced += 1 } else { $0.statistics.framesDecodedFull += 1 }
                }
                // Counted, and the camera made live, when the JPEG arrived (`takeCompressed`).
                frames.publish(frame)
                compressed.published(frame)
            }
            return true
        }

        /// Counts a good raw frame, marks the camera live on its first, and makes it the newest. Loop
        /// thread (the process callback) only.
        private func publish(_ frame: VideoFrame) {
            sequence += 1
            counted(arrived: frame.arrivedAt)
            frames.publish(frame)
        }

        /// Counts a good frame (a raw picture, or a JPEG as it arrives) and marks the camera live on its
        /// first; `arrived` is when it was dequeued (the loss watch's time).
        fileprivate func counted(arrived: UInt64) {
            shared.withLock {
                $0.statistics.framesCaptured += 1
                $0.statistics.lastFrameTime = arrived
                if $0.state == .starting { $0.state = .live }
            }
        }

        /// Must hold the loop lock.
        private func connectStream(session: PipeWireSession, selection: PipeWireVideoChoice) {
            guard let core = session.core else { return }
            let properties = cpw_properties_new("media.type", "Video")
            pw_properties_set(properties, "media.category", "Capture")
            pw_properties_set(properties, "media.role", "Camera")
            pw_properties_set(properties, "node.name", "studio.\(id.name)")
            pw_properties_set(properties, "node.description", "studio \(id.name)")
            // Never let a session manager route this stream anywhere else (see the type's doc).
            pw_properties_set(properties, "node.autoconnect", "false")
            pw_properties_set(properties, "node.dont-reconnect", "true")
            guard let stream = pw_stream_new(core, "studio \(id.name)", properties) else {
                markLost("pw_stream_new failed")
                return
            }
            self.stream = stream
            events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
            events.pointee.state_changed = { data, old, state, error in
                let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
                core.stateChanged(from: old, to: state, error: error.map { String(cString: $0) })
            }
            events.pointee.param_changed = { data, id, param in
                guard id == SPA_PARAM_Format.rawValue, let param else { return }
                let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
                core.formatChanged(param)
            }
            events.pointee.process = { data in
                Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue().process()
            }
            pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(self).toOpaque())
            var buffer = [UInt8](repeating: 0, count: 1024)
            let result = buffer.withUnsafeMutableBytes { bytes -> Int32 in
                var builder = cpw_pod_builder(bytes.baseAddress, UInt32(bytes.count))
                let format = selection.format
                let param: UnsafePointer<spa_pod>? = selection.isMJPEG
                    ? cpw_build_mjpg_format(&builder, SPA_PARAM_EnumFormat.rawValue, UInt32(format.width), UInt32(format.height),
                                            UInt32(format.frameRate.numerator), UInt32(format.frameRate.denominator))
                    : cpw_build_video_format(&builder, SPA_PARAM_EnumFormat.rawValue, selection.spaFormat, UInt32(format.width),
                                             UInt32(format.height), UInt32(format.frameRate.numerator), UInt32(format.frameRate.denominator))
                // The buffers' header meta, for the producer's own time of each frame (`PipeWireBufferTime`).
                var params = [param, cpw_build_meta_header(&builder)]
                let flags = pw_stream_flags(PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_DONT_RECONNECT.rawValue)
                return pw_stream_connect(stream, SPA_DIRECTION_INPUT, UInt32.max, flags, &params, UInt32(params.count))
            }
            if result < 0 { markLost("pw_stream_connect: \(String(cString: cpw_strerror(result)))") }
        }

        // Callbacks (loop thread): copy and signal only.

        private func stateChanged(from old: pw_stream_state, to state: pw_stream_state, error: String?) {
            streamState = state
            if state == PW_STREAM_STATE_STREAMING {
                wasStreaming = true
            } else if wasStreaming || state == PW_STREAM_STATE_ERROR {
                markLost(error.map { "stream error: \($0)" } ?? "stream left streaming (\(String(cString: pw_stream_state_as_string(state))))")
            }
            if let loop = session?.loop { pw_thread_loop_signal(loop, false) }
        }

        private func formatChanged(_ param: UnsafePointer<spa_pod>) {
            var mediaType: UInt32 = 0, mediaSubtype: UInt32 = 0
            guard spa_format_parse(param, &mediaType, &mediaSubtype) >= 0 else { return }
            if mediaSubtype == SPA_MEDIA_SUBTYPE_mjpg.rawValue {
                var info = spa_video_info_mjpg()
                guard spa_format_video_mjpg_parse(param, &info) >= 0 else { return }
                // Published as decoded I420 (the JPEG's own size decides; this is what was agreed).
                let format = CameraFormat(pixelFormat: .i420, width: Int(info.size.width), height: Int(info.size.height),
                                          frameRate: Rational(Int32(clamping: info.framerate.num), Int32(clamping: max(info.framerate.denom, 1))))
                negotiated = format
                negotiatedMJPEG = true
                shared.withLock { $0.currentFormat = format }
                return
            }
            negotiatedMJPEG = false
            var info = spa_video_info_raw()
            guard spa_format_video_raw_parse(param, &info) >= 0,
                  let pixel = PipeWireVideoFormats.pixelFormat(spaFormat: info.format.rawValue) else { return }
            let format = CameraFormat(pixelFormat: pixel, width: Int(info.size.width), height: Int(info.size.height),
                                      frameRate: Rational(Int32(clamping: info.framerate.num), Int32(clamping: max(info.framerate.denom, 1))))
            negotiated = format
            pool = FramePool(capacity: VideoFrame.byteCount(format: pixel, width: format.width, height: format.height), limit: 4)
            shared.withLock { $0.currentFormat = format }
        }

        private func process() {
            guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
            defer { pw_stream_queue_buffer(stream, buffer) }
            guard let format = negotiated, let spaBuffer = buffer.pointee.buffer, let datas = spaBuffer.pointee.datas,
                  spaBuffer.pointee.n_datas > 0 else { return }
            // The producer's time for the frame when its buffer has a plausible one, else now (a buffer that
            // waited in the stream's queue keeps its own time).
            // Its arrival (now) says the camera is alive; its capture time says how old the picture is.
            let now = clock.now()
            let captureTime = PipeWireBufferTime.captureTime(of: spaBuffer, now: now)
            if negotiatedMJPEG {
                takeCompressed(datas[0], at: captureTime, arrived: now)
                return
            }
            var frame = VideoFrame.allocate(format: format.pixelFormat, width: format.width, height: format.height, pool: pool,
                                            captureTime: captureTime, sequence: sequence)
            frame.arrivalTime = now
            if !PipeWireFrameCopy.copy(datas: datas, count: Int(spaBuffer.pointee.n_datas), into: frame) {
                shared.withLock { $0.statistics.framesCorrupt += 1 }
                return
            }
            publish(frame)
        }
    }
}

extension PipeWireCamera.Core {
    /// Loop thread: copies the JPEG bytes of one buffer for the camera thread and wakes it. A newer frame
    /// replaces one not yet decoded (counted as dropped); a flagged or empty chunk is counted as corrupt.
    fileprivate func takeCompressed(_ data: spa_data, at captureTime: UInt64, arrived: UInt64) {
        guard let base = data.data, let chunk = data.chunk?.pointee, chunk.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0,
              chunk.size > 0 else {
            shared.withLock { $0.statistics.framesCorrupt += 1 }
            return
        }
        guard let compressed else { return }
        let offset = Int(chunk.offset % max(data.maxsize, 1))
        let size = min(Int(chunk.size), Int(data.maxsize) - offset)
        // Every JPEG as it came, for the decoder and a passthrough ISO.
        let replaced = compressed.take(UnsafeRawBufferPointer(start: UnsafeRawPointer(base) + offset, count: size), captureTime: captureTime,
                                       arrived: arrived, width: negotiated?.width ?? 0, height: negotiated?.height ?? 0)
        counted(arrived: arrived)
        if replaced { shared.withLock { $0.statistics.framesDropped += 1 } }
    }
}
