import CV4L2
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

extension V4L2Camera {
    /// State shared between the camera object and its capture thread (which holds the core, so the
    /// camera object may go away first; its deinit asks the thread to stop).
    final class Core: Sendable {
        let id: CameraID
        let path: String
        let modes: [V4L2Mode]
        let program: ProgramFormat
        let frames: LatestValue<VideoFrame>
        let log: CaptureLog
        /// Stamps each frame's capture (and arrival) time.
        let clock: any Clock
        /// A camera that started in an MJPEG mode: its JPEGs, from the capture thread to the decoding
        /// thread and the passthrough tap.
        let compressed: CompressedCapture?
        private let shared: Mutex<Snapshot>
        private let lossHandler = Mutex<(@Sendable () -> Void)?>(nil)
        private let worker = WorkerThread()
        /// Decodes an MJPEG camera's JPEGs by demand (`dec.<id>`), beside the capture thread.
        private let decoder = WorkerThread()
        /// Why the decoding thread could not go on (no decoder could be made): the capture thread ends
        /// the session with it.
        private let decoderFailure = Mutex<String?>(nil)
        private let running = Atomic<Bool>(false)

        init(id: CameraID, path: String, modes: [V4L2Mode], program: ProgramFormat, choice: V4L2ModeChoice.Choice,
             frames: LatestValue<VideoFrame>, compressed: CompressedCapture?, clock: any Clock, log: @escaping CaptureLog) {
            self.id = id
            self.clock = clock
            self.path = path
            self.modes = modes
            self.program = program
            self.frames = frames
            self.compressed = compressed
            self.log = log
            shared = Mutex(Snapshot(choice: choice))
        }

        var snapshot: Snapshot { shared.withLock { $0 } }

        func setLossHandler(_ handler: @escaping @Sendable () -> Void) { lossHandler.withLock { $0 = handler } }

        func injectStreamOnFailures(errno: Int32, count: Int) { shared.withLock { $0.streamOnFaults = (errno, count) } }

        func start() {
            worker.start(name: "cap.\(id.name)", prepare: {
                running.store(true, ordering: .sequentiallyConsistent)
                shared.withLock {
                    $0.state = .starting
                    $0.lossReason = nil
                }
            }) { [self] in
                run()
                running.store(false, ordering: .sequentiallyConsistent)
            }
            if let compressed {
                decoderFailure.withLock { $0 = nil }
                decoder.start(name: "dec.\(id.name)") { [self] in runDecoder(compressed) }
            }
        }

        func requestStop() {
            worker.requestStop()
            decoder.requestStop()
        }

        func stop() {
            worker.stop()
            decoder.stop()
            shared.withLock {
                if $0.state != .lost { $0.state = .stopped }
                $0.pendingChange?.finish(.failure(CaptureError(camera: id, message: "the camera stopped")))
                $0.pendingChange = nil
            }
        }

        private var stopping: Bool { worker.isStopRequested }

        // MARK: Mode changes

        func changeMode(_ request: CameraModeRequest) throws(CaptureError) -> CameraFormat {
            if let width = request.width, let height = request.height, width <= 0 || height <= 0 || width > 16384 || height > 16384 {
                throw CaptureError(camera: id, message: "size \(width)x\(height) is not a picture size")
            }
            if let rate = request.frameRate, rate.numerator <= 0 || rate.denominator <= 0 || rate.doubleValue > 1000 {
                throw CaptureError(camera: id, message: "frame rate \(rate) is not a rate")
            }
            let current = snapshot.choice
            let width = request.width ?? current.width, height = request.height ?? current.height
            let rate = request.frameRate ?? current.frameRate ?? program.frameRate
            guard let choice = V4L2ModeChoice.forChange(from: current, in: modes, width: width, height: height, frameRate: rate) else {
                throw CaptureError(camera: id, message: "the device offers no mode studio can capture")
            }
            if running.load(ordering: .sequentiallyConsistent) {
                let change = ModeChange(choice: choice)
                shared.withLock {
                    $0.pendingChange?.finish(.failure(CaptureError(camera: id, message: "replaced by a newer mode change")))
                    $0.pendingChange = change
                }
                guard let result = change.wait(timeoutSeconds: 5) else {
                    throw CaptureError(camera: id, message: "the capture thread did not apply the mode within 5 s")
                }
                return try result.get()
            }
            // Not capturing: apply it to the device now to learn what it grants, and start with it later.
            do {
                let device = try V4L2Device(path: path)
                let granted = try device.setFormat(choice.fourcc, width: choice.width, height: choice.height)
                let grantedRate = try choice.frameRate.flatMap { try device.setFrameRate($0) } ?? (try? device.frameRate()) ?? nil
                let grantedChoice = V4L2ModeChoice.Choice(fourcc: granted.fourcc, width: granted.width, height: granted.height, frameRate: grantedRate)
                shared.withLock { $0.choice = grantedChoice }
                guard let format = granted.fourcc.publishedFormat else {
                    throw CaptureError(camera: id, message: "the device switched to \(granted.fourcc), which studio cannot capture")
                }
                return CameraFormat(pixelFormat: format, width: granted.width, height: granted.height, frameRate: grantedRate ?? rate)
            } catch let error as CaptureError {
                throw error
            } catch {
                throw CaptureError(camera: id, message: "cannot set the mode: \(error)")
            }
        }

        // MARK: The capture thread

        private func run() {
            let device: V4L2Device
            do { device = try V4L2Device(path: path) } catch {
                lose("cannot open \(path): \(error)")
                return
            }
            var stream: V4L2Stream
            do {
                stream = try startStream(on: device, choice: snapshot.choice)
            } catch {
                device.close()
                lose(error.message)
                return
            }
            var decoder: MJPEGDecoder?
            var lastSequence: UInt32?
            var failures = 0
            while !stopping {
                if let why = decoderFailure.withLock({ $0 }) {
                    stream.stop(); device.close(); lose(why); return
                }
                if let change = shared.withLock({ state -> ModeChange? in defer { state.pendingChange = nil }; return state.pendingChange }) {
                    let previous = snapshot.choice
                    stream.stop()
                    lastSequence = nil
                    do {
                        stream = try startStream(on: device, choice: change.choice)
                        change.finish(.success(snapshot.currentFormat!))
                    } catch {
                        change.finish(.failure(error))
                        // Back to the mode that worked; only if that fails too is the camera lost.
                        do { stream = try startStream(on: device, choice: previous) } catch {
                            device.close()
                            lose("the device refused the new mode and the previous one: \(error.message)")
                            return
                        }
                    }
                }
                let period = stream.format.frameRate?.periodNanoseconds ?? 33_333_333
                let timeoutMs = Int32(min(max(period * 3 / 1_000_000, 100), 2000))
                var descriptor = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
                let ready: Int32
                do { ready = try syscall("poll") { poll(&descriptor, 1, timeoutMs) } } catch {
                    stream.stop(); device.close(); lose("\(error)"); return
                }
                if ready == 0 { continue }  // silent for a few frame periods: the server's silence check decides
                var newest: v4l2_buffer?
                var dequeueError: SystemError?
                while true {
                    do {
                        guard let buffer = try device.dequeueBuffer() else { break }
                        if let older = newest { try? device.queueBuffer(Int(older.index)) }
                        newest = buffer
                    } catch {
                        dequeueError = error
                        break
                    }
                }
                if let buffer = newest {
                    failures = 0
                    deliver(buffer, from: stream, decoder: &decoder, lastSequence: &lastSequence)
                    do { try device.queueBuffer(Int(buffer.index)) } catch { dequeueError = dequeueError ?? error }
                }
                let hangUp = descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
                if dequeueError != nil || (hangUp && newest == nil) {
                    // Possible loss. A vanished device fails QUERYCAP too (ENODEV); one that answers gets
                    // its stream restarted, a few times at most.
                    let reason = dequeueError.map { "\($0)" } ?? "poll reported an error on the device"
                    if (try? device.capabilities()) == nil {
                        stream.stop(); device.close()
                        lose("device gone (\(reason); VIDIOC_QUERYCAP fails too)")
                        return
                    }
                    failures += 1
                    if failures > 3 {
                        stream.stop(); device.close()
                        lose("the stream keeps failing: \(reason)")
                        return
                    }
                    log("\(id): \(reason); the device still answers, restarting its stream")
                    stream.stop()
                    do { stream = try startStream(on: device, choice: snapshot.choice) } catch {
                        device.close()
                        lose(error.message)
                        return
                    }
                }
            }
            stream.stop()
            device.close()
        }

        private func lose(_ reason: String) {
            log("\(id): capture ended: \(reason)")
            shared.withLock {
                $0.state = .lost
                $0.lossReason = reason
                $0.stream = nil
                $0.pendingChange?.finish(.failure(CaptureError(camera: id, message: "the camera was lost: \(reason)")))
                $0.pendingChange = nil
            }
            if !stopping, let handler = lossHandler.withLock({ $0 }) { handler() }
        }

        /// Configures and starts streaming `choice`; when the bus has no room (ENOSPC) tries lighter
        /// modes (a compressed format, then smaller sizes) and logs what it took.
        private func startStream(on device: V4L2Device, choice: V4L2ModeChoice.Choice) throws(CaptureError) -> V4L2Stream {
            let rate = choice.frameRate ?? program.frameRate
            var candidates = [choice]
            var alternativesAdded = false
            var index = 0
            while index < candidates.count, index < 8 {
                let candidate = candidates[index]
                index += 1
                let fault = shared.withLock { state -> Int32? in
                    guard state.streamOnFaults.count > 0 else { return nil }
                    state.streamOnFaults.count -= 1
                    return state.streamOnFaults.errno
                }
                do {
                    let stream = try V4L2Stream(device: device, choice: candidate, injectedStreamOnError: fault)
                    guard let published = stream.format.fourcc.publishedFormat else {
                        stream.stop()
                        throw CaptureError(camera: id, message: "the device gave \(stream.format.fourcc) instead of \(candidate.fourcc)")
                    }
                    let format = CameraFormat(pixelFormat: published, width: stream.format.width, height: stream.format.height,
                                              frameRate: stream.format.frameRate ?? rate)
                    if candidate != choice { log("\(id): capturing \(stream.format) instead of \(choice) (the USB bus had no room)") }
                    shared.withLock {
                        $0.stream = stream.format
                        $0.currentFormat = format
                        $0.choice = V4L2ModeChoice.Choice(fourcc: stream.format.fourcc, width: stream.format.width,
                                                          height: stream.format.height, frameRate: stream.format.frameRate)
                    }
                    return stream
                } catch let error as SystemError where error.errno == ENOSPC {
                    log("\(id): no room on the USB bus for \(candidate) (VIDIOC_STREAMON: No space left on device); trying a lighter mode")
                    if !alternativesAdded {
                        alternativesAdded = true
                        candidates += V4L2ModeChoice.lighterAlternatives(to: choice, in: modes, frameRate: rate)
                    }
                } catch let error as CaptureError {
                    throw error
                } catch {
                    throw CaptureError(camera: id, message: "cannot start \(candidate): \(error)")
                }
            }
            throw CaptureError(camera: id, message: "no mode fits on the USB bus (VIDIOC_STREAMON: No space left on device for \(choice) and every lighter mode tried)")
        }

        private func deliver(_ buffer: v4l2_buffer, from stream: V4L2Stream, decoder: inout MJPEGDecoder?,
                             lastSequence: inout UInt32?) {
            let now = clock.now()
            let gap = lastSequence.map { buffer.sequence &- $0 &- 1 } ?? 0
            lastSequence = buffer.sequence
            let dropped = UInt64(gap < 1_000_000 ? gap : 0)
            let bytes = stream.bytes(of: buffer)
            if stream.format.fourcc.isCompressed, let compressed {
                take(bytes, flagged: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0, into: compressed, stream: stream, arrived: now, dropped: dropped)
                return
            }
            var frame: VideoFrame?
            if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) == 0, !bytes.isEmpty {
                if stream.format.fourcc.isCompressed {
                    if decoder == nil { decoder = try? MJPEGDecoder() }
                    let sequence = snapshot.statistics.framesCaptured
                    frame = try? decoder?.decode(bytes, captureTime: now, sequence: sequence)
                } else {
                    frame = stream.copyFrame(bytes, captureTime: now, sequence: snapshot.statistics.framesCaptured)
                }
            }
            shared.withLock {
                $0.statistics.framesDropped += dropped
                if frame != nil {
                    $0.statistics.framesCaptured += 1
                    $0.statistics.lastFrameTime = now
                    $0.state = .live
                } else {
                    $0.statistics.framesCorrupt += 1
                }
            }
            if let frame { frames.publish(frame) }
        }

        /// Capture thread: hands one JPEG on as it came (the decoding thread decodes it by demand; a
        /// passthrough ISO copies it) and counts it, the camera live as it arrives. A newer JPEG replaces
        /// one not decoded yet (counted as dropped); a flagged or empty buffer is counted as corrupt.
        private func take(_ bytes: UnsafeRawBufferPointer, flagged: Bool, into compressed: CompressedCapture, stream: V4L2Stream,
                          arrived: UInt64, dropped: UInt64) {
            guard !flagged, !bytes.isEmpty else {
                shared.withLock {
                    $0.statistics.framesDropped += dropped
                    $0.statistics.framesCorrupt += 1
                }
                return
            }
            let replaced = compressed.take(bytes, captureTime: arrived, arrived: arrived, width: stream.format.width, height: stream.format.height)
            shared.withLock {
                $0.statistics.framesDropped += dropped + (replaced ? 1 : 0)
                $0.statistics.framesCaptured += 1
                $0.statistics.lastFrameTime = arrived
                $0.state = .live
            }
        }

        /// The decoding thread: the newest JPEG, decoded as the demand wants, published.
        private func runDecoder(_ compressed: CompressedCapture) {
            let decoding = DemandDecoding()
            var newest = CompressedFrame()
            while !decoder.isStopRequested {
                let width = shared.withLock { $0.stream?.width } ?? 0
                switch compressed.decodeNewest(decoding, newest: &newest, width: width) {
                case .idle: break
                case .skipped: shared.withLock { $0.statistics.framesNotDecoded += 1 }
                case .corrupt: shared.withLock { $0.statistics.framesCorrupt += 1 }
                case .failed(let why):
                    decoderFailure.withLock { $0 = "cannot decode its MJPEG: \(why)" }
                    return
                case .decoded(let frame):
                    shared.withLock {
                        if frame.reduction > 1 { $0.statistics.framesDecodedReduced += 1 } else { $0.statistics.framesDecodedFull += 1 }
                    }
                    frames.publish(frame)
                    compressed.published(frame)
                }
                // A JPEG or a demand that came while decoding left its signal: no wait then.
                compressed.wait(seconds: 0.05)
            }
        }
    }
}
