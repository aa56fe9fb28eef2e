import Foundation
import StudioCore

extension StudioConfiguration {
    /// The configuration as compact JSON with sorted keys, for the session's config snapshot in the
    /// event store. Keys follow the YAML file; output URLs have their stream keys masked.
    public func jsonSnapshot() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Snapshot(self)), let text = String(data: data, encoding: .utf8) else {
            // Encoding plain strings and numbers cannot fail; keep a valid JSON value regardless.
            return "{}"
        }
        return text
    }
}

/// The snapshot's shape. Optional paths are written as null, so every key is always present.
private struct Snapshot: Encodable {
    struct Program: Encodable {
        var format: String, width: Int, height: Int, fps: String
    }
    struct Video: Encodable {
        var encoder: String, preset: String, bitrate: Int
        var keyframe_interval: Double
    }
    struct Audio: Encodable {
        var source: String, bitrate: Int
    }
    struct Output: Encodable {
        var name: String, url: String
    }
    struct Pin: Encodable {
        var match: String, name: String
        var iso: Bool?
        var encoder: String?
        var size: String?
        var fps: String?
        var controls: [String: String]?
    }
    struct Cameras: Encodable {
        var backends: [String]
        var demo: Int, pins: [Pin]
        var iso: Bool, iso_preset: String, iso_encoder: String?
    }

    var program: Program
    var video: Video
    var audio: Audio
    var outputs: [Output]
    var record: String?
    var database: String?
    var socket: String?
    var socket_group: String?
    var cameras: Cameras

    init(_ config: StudioConfiguration) {
        program = Program(format: config.program.description, width: config.program.width, height: config.program.height,
                          fps: config.program.frameRate.description)
        video = Video(encoder: config.video.encoder.rawValue, preset: config.video.preset, bitrate: config.video.bitRate,
                      keyframe_interval: config.video.keyframeIntervalSeconds)
        audio = Audio(source: config.audio.source.description, bitrate: config.audio.bitRate)
        outputs = config.outputs.map { Output(name: $0.name, url: $0.maskedURL) }
        record = config.recordDirectory
        database = config.databasePath
        socket = config.socketPath
        socket_group = config.socketGroup
        cameras = Cameras(backends: config.cameras.backends.sorted().map(\.rawValue), demo: config.cameras.demoCount, pins: config.cameras.pins.map { Pin(match: $0.match, name: $0.name.name, iso: $0.iso, encoder: $0.encoder?.rawValue,
                                                       size: $0.size.map { "\($0.width)x\($0.height)" }, fps: $0.fps?.description,
                                                       controls: $0.controls.isEmpty ? nil : Dictionary($0.controls.map { ($0.name, $0.value) },
                                                                                                        uniquingKeysWith: { _, last in last })) },
                          iso: config.cameras.iso, iso_preset: config.cameras.isoPreset,
                          iso_encoder: config.cameras.isoEncoder?.rawValue)
    }

    enum CodingKeys: String, CodingKey {
        case program, video, audio, outputs, record, database, socket, socket_group, cameras
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(program, forKey: .program)
        try container.encode(video, forKey: .video)
        try container.encode(audio, forKey: .audio)
        try container.encode(outputs, forKey: .outputs)
        try container.encode(record, forKey: .record)
        try container.encode(database, forKey: .database)
        try container.encode(socket, forKey: .socket)
        try container.encodeIfPresent(socket_group, forKey: .socket_group)
        try container.encode(cameras, forKey: .cameras)
    }
}
