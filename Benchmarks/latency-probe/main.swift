// latency-probe: plays a live stream (rtmp://... from nginx-rtmp, or any URL libavformat opens), decodes
// its video and reads the `CaptureStamp` bar code of each picture: the CLOCK_MONOTONIC time the picture
// was captured (same machine, so the same clock). For each frame it records when its packet arrived
// (wire latency: arrival - stamp) and when it was decoded (arrival + the decode). Prints one summary line:
//
//   latency LABEL frames=N misread=M wire_p50=.. wire_p95=.. wire_min=.. wire_max=.. decoded_p50=.. (ms)
//
//   latency-probe URL [--seconds 20] [--warmup 3] [--label NAME] [--samples FILE]
//
// Frames captured before --warmup seconds after the stream was probed are not counted (those read while
// probing arrive late by the probing). --samples writes "stamp_ns wire_ms decoded_ms" per frame.
import CFFmpeg
import Capture
import Foundation
import StudioSystem

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latency-probe: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let url = arguments.first, !url.hasPrefix("--") else { fail("usage: latency-probe URL [--seconds N] [--warmup N] [--label NAME] [--samples FILE]") }
arguments.removeFirst()
var options: [String: String] = ["--seconds": "20", "--warmup": "3", "--label": "stream"]
while arguments.count >= 2 { options[arguments.removeFirst()] = arguments.removeFirst() }
guard let seconds = Double(options["--seconds"]!), let warmup = Double(options["--warmup"]!) else { fail("bad --seconds or --warmup") }
let label = options["--label"]!

var context: UnsafeMutablePointer<AVFormatContext>?
var openOptions: OpaquePointer?
av_dict_set(&openOptions, "rtmp_live", "live", 0)
av_dict_set(&openOptions, "rtmp_buffer", "0", 0)
av_dict_set(&openOptions, "fflags", "nobuffer", 0)
av_dict_set(&openOptions, "rw_timeout", "15000000", 0)
if avformat_open_input(&context, url, nil, &openOptions) < 0 { fail("cannot open \(url)") }
av_dict_free(&openOptions)
guard let context else { fail("no context") }
context.pointee.max_analyze_duration = 5_000_000
if avformat_find_stream_info(context, nil) < 0 { fail("no stream info in \(url)") }
let videoIndex = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
guard videoIndex >= 0, let stream = context.pointee.streams[Int(videoIndex)] else { fail("no video stream in \(url)") }
guard let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id), let decoder = avcodec_alloc_context3(codec) else { fail("no decoder") }
avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
// One thread and low delay: a frame leaves the decoder for the packet that carried it (frame threads
// would hold frames back and add their delay to the measurement).
decoder.pointee.thread_count = 1
decoder.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
if avcodec_open2(decoder, codec, nil) < 0 { fail("cannot open the decoder") }
guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else { fail("out of memory") }

var wire: [Double] = [], decoded: [Double] = [], samples = ""
var misread = 0
// Frames captured before this were buffered while the stream was probed: their arrival is not theirs.
let start = MonotonicClock.now(), end = start + UInt64(seconds * 1e9), measuringFrom = start + UInt64(warmup * 1e9)
while MonotonicClock.now() < end {
    guard av_read_frame(context, packet) >= 0 else { break }
    let arrival = MonotonicClock.now()
    defer { av_packet_unref(packet) }
    guard packet.pointee.stream_index == videoIndex else { continue }
    guard avcodec_send_packet(decoder, packet) >= 0 else { continue }
    while avcodec_receive_frame(decoder, frame) >= 0 {
        let done = MonotonicClock.now()
        defer { av_frame_unref(frame) }
        guard let luma = frame.pointee.data.0,
              let stamp = CaptureStamp.read(luma: luma, stride: Int(frame.pointee.linesize.0), width: Int(frame.pointee.width), height: Int(frame.pointee.height)),
              stamp < arrival else {
            misread += 1
            continue
        }
        guard stamp >= measuringFrom else { continue }
        let wireMs = Double(arrival - stamp) / 1e6, decodedMs = Double(done - stamp) / 1e6
        wire.append(wireMs)
        decoded.append(decodedMs)
        samples += "\(stamp) \(String(format: "%.2f", wireMs)) \(String(format: "%.2f", decodedMs))\n"
    }
}
if let path = options["--samples"] { try? samples.write(toFile: path, atomically: true, encoding: .utf8) }

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}
func ms(_ value: Double) -> String { String(format: "%.1f", value) }
print("latency \(label) frames=\(wire.count) misread=\(misread) wire_p50=\(ms(percentile(wire, 0.5))) wire_p95=\(ms(percentile(wire, 0.95)))"
      + " wire_min=\(ms(wire.min() ?? .nan)) wire_max=\(ms(wire.max() ?? .nan)) decoded_p50=\(ms(percentile(decoded, 0.5)))")
exit(wire.isEmpty ? 1 : 0)
