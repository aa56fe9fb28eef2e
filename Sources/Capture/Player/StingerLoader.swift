import CFFmpeg
import MediaSupport
import StudioCore

/// Decodes a stinger's clip whole, ahead (at start and on `studio reload`, never on the program thread),
/// through the players' reader (`PlayerReader.open`: the network cameras' demuxer and decoders on a file;
/// VP9 with alpha through libvpx's decoder), each picture scaled to the program's size as I420 with its
/// alpha plane in one libswscale pass. Alpha comes from any format that has it (yuva420p, yuva444p10le,
/// ProRes 4444, qtrle or PNG in MOV as argb/rgba, VP9 with alpha); a clip without alpha is accepted (it
/// covers the whole picture while it plays, as vMix plays it) with a warning in the log. Refused, naming
/// the file: missing, unreadable, no picture (0 frames), damaged, longer than `TransitionSpec.maxSeconds`,
/// or a `cut_at_ms` outside it. Its sound, where it has some, is decoded with it (resampled by the reader
/// to the program's format: `AudioResampler`) and kept from its first picture's time to its end, counted
/// in the same memory bound.
public enum StingerLoader {
    /// The clips of the stingers among `transitions` (each clip once), or the first that cannot be used.
    public static func load(_ transitions: [TransitionSpec], width: Int, height: Int,
                            log: (String) -> Void) throws(StingerError) -> [StingerClip] {
        var clips: [String: StingerClip] = [:]
        for spec in transitions where spec.kind == .stinger {
            guard let path = spec.clip else { continue }
            let clip: StingerClip
            if let loaded = clips[path] { clip = loaded } else { clip = try load(path, width: width, height: height, log: log) }
            if let problem = clip.problem(cutAtMilliseconds: spec.cutAtMilliseconds) { throw StingerError(problem) }
            clips[path] = clip
        }
        return clips.keys.sorted().compactMap { clips[$0] }
    }

    /// `path` decoded whole at `width` x `height`, its pictures holding at most `maximumBytes`.
    public static func load(_ path: String, width: Int, height: Int, maximumBytes: Int = StingerClip.maximumBytes,
                            log: (String) -> Void) throws(StingerError) -> StingerClip {
        let connection: PullConnection
        do { connection = try PlayerReader.open(path) } catch { throw StingerError("stinger \(error.description)") }
        let limit = Int64(TransitionSpec.maxSeconds * 1e9)
        let converter = FrameConverter()
        var pictures: [(time: Int64, picture: StingerClip.Picture)] = []
        var zero: Int64?
        var failure: String?
        var withoutAlpha: String?
        var sound = StingerSoundTrack()
        let body: (PullConnection.Item) -> Void = { item in
            if case .audio(let samples, let media) = item, failure == nil {
                sound.chunks.append((media, samples))
                sound.bytes += samples.count * MemoryLayout<Float>.size
            }
            guard case .video(let decoded, let media) = item, failure == nil else { return }
            let time = media - (zero ?? media)
            if zero == nil { zero = media }
            guard time < limit else {
                failure = "stinger \(path): longer than \(Int(TransitionSpec.maxSeconds)) s, the longest a transition lasts"
                return
            }
            let bytes = StingerClip.bytes(perPictureOf: width, height)
            guard (pictures.count + 1) * bytes + sound.bytes <= maximumBytes else {
                failure = "stinger \(path): more than \(pictures.count) pictures at \(width)x\(height) would hold over "
                    + "\(maximumBytes >> 20) MB in memory, the most a stinger may (shorten it, or lower its frame rate)"
                return
            }
            let format = AVPixelFormat(rawValue: decoded.pointee.format)
            let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
            var alpha: [UInt8]?
            do {
                if hasAlpha(format) {
                    var plane = [UInt8](repeating: 255, count: width * height)
                    try plane.withUnsafeMutableBufferPointer { buffer throws(FFmpegError) in
                        try converter.convert(decoded, into: frame, alpha: buffer.baseAddress!, alphaStride: width)
                    }
                    alpha = plane
                } else {
                    try converter.convert(decoded, into: frame)
                    withoutAlpha = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "format \(format.rawValue)"
                }
            } catch {
                failure = "stinger \(path): its picture at \(time / 1_000_000) ms cannot be converted: \(error)"
                return
            }
            pictures.append((time, StingerClip.Picture(frame: frame, alpha: alpha)))
        }
        while failure == nil {
            do { try connection.readAndDecode(body) } catch {
                connection.drain(body)
                if !error.endOfStream, failure == nil {
                    failure = "stinger \(path): \(error.description) after \(pictures.count) pictures (damaged or truncated?)"
                }
                break
            }
        }
        if let failure { throw StingerError(failure) }
        guard !pictures.isEmpty else { throw StingerError("stinger \(path): it has no picture (0 frames)") }
        pictures.sort { $0.time < $1.time }
        let times = pictures.map(\.time)
        let step = connection.frameRate.map { Int64(1e9 * Double($0.denominator) / Double($0.numerator)) }
            ?? (times.count > 1 ? times[times.count - 1] - times[times.count - 2] : 33_333_333)
        let length = times[times.count - 1] + step
        guard length <= limit + StingerTiming.tolerance else {
            throw StingerError("stinger \(path): \(length / 1_000_000) ms, longer than \(Int(TransitionSpec.maxSeconds)) s, the longest a transition lasts")
        }
        if let withoutAlpha {
            log("warning: stinger \(path) has no alpha (\(withoutAlpha)): it covers the whole program while it plays")
        }
        let track = zero.flatMap { sound.interleaved(from: $0, length: length) }
        if let track, pictures.count * StingerClip.bytes(perPictureOf: width, height) + track.count * MemoryLayout<Float>.size > maximumBytes {
            throw StingerError("stinger \(path): its pictures and sound would hold over \(maximumBytes >> 20) MB in memory, the most a stinger may (shorten it)")
        }
        return StingerClip(path: path, pictures: pictures.map(\.picture), timing: StingerTiming(times: times, length: length), sound: track)
    }
}

/// A stinger's sound as the reader gives it: chunks at the program's format with their media times.
struct StingerSoundTrack {
    var chunks: [(media: Int64, samples: [Float])] = []
    var bytes = 0

    /// One track from the clip's first picture (`zero`, media time) to its end (`length` ns after),
    /// each chunk at its time (a gap is silence; sound before the first picture or after the end is
    /// cut off); nil when the clip has no sound.
    func interleaved(from zero: Int64, length: Int64, format: AudioFormat = .program) -> [Float]? {
        guard !chunks.isEmpty else { return nil }
        let channels = max(1, format.channels), rate = Int64(format.sampleRate)
        let frames = Int(length * rate / 1_000_000_000)
        var track = [Float](repeating: 0, count: frames * channels)
        for (media, samples) in chunks {
            // The chunk's first frame on the track (rounded to the nearest frame).
            let start = Int(((media - zero) * rate + 500_000_000).floorDivided(by: 1_000_000_000))
            let count = samples.count / channels
            let from = max(0, -start), to = min(count, frames - start)
            guard from < to else { continue }
            for frame in from..<to {
                for channel in 0..<channels { track[(start + frame) * channels + channel] = samples[frame * channels + channel] }
            }
        }
        return track
    }
}

private extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
