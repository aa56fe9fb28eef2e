import Graphics
import StudioCore

/// What a picture change did: `settings` apply to the camera's frames from program frame `frameNumber`,
/// pts `programTime`, on (whether or not the camera is shown then).
public struct PictureOutcome: Sendable, Hashable {
    public var camera: CameraID
    public var settings: PictureSettings
    /// What applied before.
    public var previous: PictureSettings
    public var programTime: MediaTime
    public var frameNumber: Int64

    public init(camera: CameraID, settings: PictureSettings, previous: PictureSettings, programTime: MediaTime, frameNumber: Int64) {
        self.camera = camera
        self.settings = settings
        self.previous = previous
        self.programTime = programTime
        self.frameNumber = frameNumber
    }
}

extension ProgramSwitcher {
    /// A picture change waiting for the next program frame.
    struct PictureRequest: Sendable {
        var camera: CameraID
        var settings: PictureSettings
        var completion: (@Sendable (Result<PictureOutcome, SwitchError>) -> Void)?
    }

    /// The picture changes that took effect on one frame: the settings of every camera from then on,
    /// and the events and replies that go out after the frame.
    struct PictureTick {
        var settings: [CameraID: PictureSettings]
        var events: [StudioEvent] = []
        var replies: [() -> Void] = []
    }
}

extension ProgramSwitcher.Core {
    func setPicture(_ settings: PictureSettings, for camera: CameraID,
                    completion: (@Sendable (Result<PictureOutcome, SwitchError>) -> Void)?) throws(SwitchError) {
        if let problem = settings.problem { throw .invalidPicture(problem) }
        try shared.withLock { s throws(SwitchError) in
            guard s.sources[camera] != nil else {
                throw s.known.contains(camera) ? .removedCamera(camera, available: s.sortedSources) : .unknownCamera(camera, available: s.sortedSources)
            }
            s.pendingPictures.append(ProgramSwitcher.PictureRequest(camera: camera, settings: settings, completion: completion))
        }
    }

    /// The newest settings asked for (pending ones included), so changes made in quick succession add up.
    func picture(of camera: CameraID) -> PictureSettings {
        shared.withLock { s in s.pendingPictures.last { $0.camera == camera }?.settings ?? s.pictures[camera] ?? PictureSettings() }
    }

    /// On the program thread, at the start of the tick that renders frame `tick` (pts `pts`): the
    /// changes asked for since the previous tick take effect, each with a `picture_changed` event
    /// (unless it changed nothing) and its reply after the frame is out.
    func takePictureChanges(at pts: MediaTime, tick: Int64) -> ProgramSwitcher.PictureTick {
        let (requests, settings, previous) = shared.withLock { s in
            let requests = s.pendingPictures
            let previous = requests.map { s.pictures[$0.camera] ?? PictureSettings() }
            if !requests.isEmpty {
                s.pendingPictures.removeAll()
                for request in requests {
                    s.pictures[request.camera] = request.settings.isIdentity ? nil : request.settings
                }
                s.status.pictures = Dictionary(uniqueKeysWithValues: s.pictures.map { ($0.key.name, $0.value) })
            }
            return (requests, s.pictures, previous)
        }
        var result = ProgramSwitcher.PictureTick(settings: settings)
        for (request, old) in zip(requests, previous) {
            let changes = request.settings.changes(from: old)
            if !changes.isEmpty {
                result.events.append(StudioEvent(kind: .pictureChanged, camera: request.camera, programTime: pts,
                                                 details: Dictionary(uniqueKeysWithValues: changes.map { ($0.key.rawValue, $0.change) })))
            }
            if let completion = request.completion {
                let outcome = PictureOutcome(camera: request.camera, settings: request.settings, previous: old, programTime: pts, frameNumber: tick)
                result.replies.append { completion(.success(outcome)) }
            }
        }
        return result
    }

    /// Fails the changes that never reached a frame (the program stopped).
    func abandonPictureChanges() {
        let abandoned = shared.withLock { s in
            defer { s.pendingPictures.removeAll() }
            return s.pendingPictures
        }
        for request in abandoned { request.completion?(.failure(.stoppedBefore("the picture change of '\(request.camera.name)'"))) }
    }
}

/// Each camera's picture settings applied to its newest frame, on the program thread, before the frame
/// is composed: one `PictureProcessor` per camera with settings, called at most once per tick for a
/// camera that is shown, and not again while the camera's newest frame and its settings stay the same
/// (a slower camera's repeated frame is not processed twice). Identity settings pass the frame on
/// untouched (same storage). A frame that cannot be processed shows a "CAMERA ERROR" slate in the
/// camera's place, its error kept for one error event. Not thread-safe.
final class PictureStage {
    private struct Processed {
        var input: VideoFrame
        var settings: PictureSettings
        var output: VideoFrame
    }

    private var processors: [CameraID: PictureProcessor] = [:]
    private var processed: [CameraID: Processed] = [:]
    /// Failures since the last `takeErrors()`: (camera, error text).
    private var errors: [(camera: CameraID, error: String)] = []

    /// `frame` of `camera` with `settings` applied (the frame itself when they change nothing).
    func picture(_ frame: VideoFrame, of camera: CameraID, settings: PictureSettings?) -> CameraPicture {
        guard let settings, !settings.isIdentity else {
            if processors[camera] != nil {
                // Back to no settings: the processor's buffers go.
                processors[camera] = nil
                processed[camera] = nil
            }
            return .frame(frame)
        }
        if let last = processed[camera], last.settings == settings, last.input.storage === frame.storage,
           last.input.sequence == frame.sequence, last.input.captureTime == frame.captureTime {
            return .frame(last.output)
        }
        let processor = processors[camera] ?? PictureProcessor()
        processors[camera] = processor
        do {
            let output = try processor.process(frame, settings: settings)
            processed[camera] = Processed(input: frame, settings: settings, output: output)
            return .frame(output)
        } catch {
            processed[camera] = nil
            errors.append((camera, "picture settings on \(frame.format.rawValue) \(frame.width)x\(frame.height): \(error)"))
            return .slate(["CAMERA ERROR", camera.name])
        }
    }

    func takeErrors() -> [(camera: CameraID, error: String)] {
        defer { errors.removeAll() }
        return errors
    }
}
