import Foundation
import StudioCore
import Control
import EventStore

/// `levels` (and `status`'s `audio.levels`): the program audio's levels in dBFS, one number per channel
/// (left, right), over the last 100 ms; the peak hold is the highest peak over the last 1.5 s. Silence
/// reads `floor_dbfs` (-96), never -inf.
public struct LevelsReply: Codable, Sendable, Equatable {
    public var peakDBFS: [Double]
    public var rmsDBFS: [Double]
    public var peakHoldDBFS: [Double]
    public var floorDBFS = AudioLevels.floor

    public init(_ levels: AudioLevels) {
        func tenths(_ values: [Double]) -> [Double] { values.map { ($0 * 10).rounded() / 10 } }
        peakDBFS = tenths(levels.peakDBFS)
        rmsDBFS = tenths(levels.rmsDBFS)
        peakHoldDBFS = tenths(levels.peakHoldDBFS)
    }

    enum CodingKeys: String, CodingKey {
        case peakDBFS = "peak_dbfs"
        case rmsDBFS = "rms_dbfs"
        case peakHoldDBFS = "peak_hold_dbfs"
        case floorDBFS = "floor_dbfs"
    }
}

/// `metrics`: the Prometheus text exposition format (0.0.4), one string.
public struct MetricsReply: Codable, Sendable {
    public var text: String

    public init(text: String) {
        self.text = text
    }
}
