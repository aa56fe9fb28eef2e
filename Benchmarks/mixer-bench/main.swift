import BenchmarkSupport
import Foundation
import Mixer
import StudioCore
import TestSupport

/// Measures the program's audio mixer (`AudioMixer`) on 8 inputs of camera-like audio (speech-like
/// noise bursts over a quiet tone, a different voice and tone per input), with its meters and EBU R128
/// loudness, in 10 ms blocks as the audio thread mixes them; and writes the same 8 inputs as WAV files
/// so scripts/bench-mixer.sh can run ffmpeg's amix + alimiter + ebur128 on the same job.
///
/// The mixer's settings: gains from -6 to +6 dB, pans across the stereo picture, one 40 ms delay, one
/// input following a camera that goes on and off air every 2 s, a master ceiling of -1 dBFS.
///
/// Usage: mixer-bench DIRECTORY [SECONDS of audio (default 60)] [REPEATS, the least counts (default 3)]
/// Writes DIRECTORY/micN.wav (N = 1...8). Prints tab-separated lines:
///   mixer  CPU_MS_PER_SECOND_OF_AUDIO  LIMITED_FRAMES  INTEGRATED_LUFS
///   loudness  CPU_MS_PER_SECOND_OF_AUDIO  (the R128 meter alone on the program, part of the above)
///   graph  FFMPEG_FILTER_GRAPH  (the same job for `ffmpeg -filter_complex`, inputs in order mic1...mic8)
let arguments = BenchmarkArguments(usage: "mixer-bench DIRECTORY [SECONDS] [REPEATS]")
let directory = arguments.first
let seconds = arguments.int(2, default: 60)
let repeats = arguments.int(3, default: 3)
let rate = 48_000, frames = seconds * rate, block = 480
let tones = [220.0, 330, 440, 550, 660, 880, 1000, 1200]
let names = (1...8).map { "mic\($0)" }
var signals: [[Float]] = []
for (index, name) in names.enumerated() {
    let signal = AudioSignals.speechLike(frames: frames, seed: UInt64(index + 1) * 7919, tone: tones[index])
    do {
        try AudioSignals.writeWAV(signal, to: URL(fileURLWithPath: "\(directory)/\(name).wav"))
    } catch {
        FileHandle.standardError.write(Data("mixer-bench: cannot write \(directory)/\(name).wav: \(error)\n".utf8))
        exit(1)
    }
    signals.append(signal)
}
// The inputs cut into the blocks the audio thread gets (untimed: capture does this).
let blocks: [[String: [Float]]] = stride(from: 0, to: frames, by: block).map { start in
    Dictionary(uniqueKeysWithValues: names.indices.map { (names[$0], Array(signals[$0][(2 * start)..<(2 * (start + block))])) })
}

let settings = try names.indices.map { index in
    try MixerInputSettings(gainDB: Double(index % 5) * 3 - 6, pan: index == 7 ? .monoToBoth : .position(Double(index) / 3.5 - 1),
                           delayMS: index == 2 ? 40 : 0, follow: index == 5 ? "cam2" : nil, fadeMS: 100)
}
let ceiling = MixerMasterSettings.standard.ceilingDBFS

func configure(_ mixer: AudioMixer) {
    for (name, settings) in zip(names, settings) { mixer.controls.post(.input(name, settings), at: 0) }
    // cam1 on air for 2 s, then cam2 for 2 s, and so on.
    for cut in stride(from: 0, to: frames, by: 2 * rate) {
        mixer.controls.post(.onAir(cut % (4 * rate) == 0 ? ["cam1"] : ["cam2"]), at: Int64(cut))
    }
}

/// The same job as an ffmpeg filter graph: per input volume, pan, adelay and (following cam2) a volume
/// that is 1 while cam2 is on air (no fade), then amix (summing, not averaging), alimiter at the
/// ceiling, ebur128 with true peak.
func ffmpegGraph() -> String {
    var parts: [String] = []
    for (index, settings) in settings.enumerated() {
        var chain = ["volume=\(settings.gainDB)dB"]
        switch settings.pan {
        case .monoToBoth: chain.append("pan=stereo|c0=0.5*c0+0.5*c1|c1=0.5*c0+0.5*c1")
        case .position(let position):
            chain.append("pan=stereo|c0=\(position > 0 ? 1 - position : 1)*c0|c1=\(position < 0 ? 1 + position : 1)*c1")
        }
        if settings.delayMS > 0 { chain.append("adelay=delays=\(Int(settings.delayMS)):all=1") }
        if settings.follow != nil { chain.append("volume=volume='gte(mod(t\\,4)\\,2)':eval=frame") }
        parts.append("[\(index):a]" + chain.joined(separator: ",") + "[a\(index)]")
    }
    let inputs = names.indices.map { "[a\($0)]" }.joined()
    parts.append("\(inputs)amix=inputs=\(names.count):normalize=0,alimiter=limit=\(linearGain(decibels: ceiling)):level=false,ebur128=peak=true:framelog=verbose")
    return parts.joined(separator: ";")
}

var best = Double.infinity, limited = 0, integrated: Double?
var program: [Float] = []
for _ in 0..<repeats {
    let mixer = AudioMixer()
    configure(mixer)
    var output: [Float] = []
    output.reserveCapacity(2 * frames)
    let start = cpuSeconds()
    for (index, inputs) in blocks.enumerated() {
        output += mixer.mix(inputs, from: Int64(index * block), frames: block).samples
    }
    let used = cpuSeconds() - start
    if used < best { best = used }
    limited = mixer.limitedFrames
    integrated = mixer.controls.meters.loudness.integratedLUFS
    program = output
}
print("mixer\t\(String(format: "%.3f", best * 1000 / Double(seconds)))\t\(limited)\t\(integrated.map { String(format: "%.1f", $0) } ?? "-")")

// The loudness meter alone, on the program in the same blocks.
var bestLoudness = Double.infinity
for _ in 0..<repeats {
    guard let meter = LoudnessMeter() else { exit(1) }
    let start = cpuSeconds()
    program.withUnsafeBufferPointer { buffer in
        for offset in stride(from: 0, to: buffer.count, by: 2 * block) {
            meter.add(UnsafeBufferPointer(rebasing: buffer[offset..<min(buffer.count, offset + 2 * block)]))
            if offset % (2 * rate / 10) == 0 { _ = meter.loudness }
        }
    }
    bestLoudness = min(bestLoudness, cpuSeconds() - start)
}
print("loudness\t\(String(format: "%.3f", bestLoudness * 1000 / Double(seconds)))")
print("graph\t\(ffmpegGraph())")
