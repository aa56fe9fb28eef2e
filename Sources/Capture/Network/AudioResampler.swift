import CFFmpeg
import StudioCore

/// libswresample from a decoded stream's rate, layout and sample format to the program's interleaved
/// F32 (`AudioFormat`): 44.1 kHz mono AAC comes out 48 kHz stereo. A mono source is resampled as mono
/// and put in every channel at its level (libswresample's own upmix would lower it by 3 dB: a phone's
/// voice is not a centre speaker).
final class AudioResampler {
    private var context: OpaquePointer?
    private let sampleRate: Int32, format: Int32, channels: Int32
    private let output: AudioFormat
    /// The channels libswresample writes: 1 for a mono source (copied to every channel after), else the output's.
    private let resampledChannels: Int

    init?(from frame: UnsafePointer<AVFrame>, to output: AudioFormat) {
        self.output = output
        sampleRate = frame.pointee.sample_rate
        format = frame.pointee.format
        channels = frame.pointee.ch_layout.nb_channels
        resampledChannels = frame.pointee.ch_layout.nb_channels == 1 ? 1 : output.channels
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Int32(resampledChannels))
        var inLayout = AVChannelLayout()
        // A shallow copy to point at (the frame's own stays its owner's; only `inLayout` is freed).
        var frameLayout = frame.pointee.ch_layout
        if av_channel_layout_check(&frameLayout) != 0 {
            av_channel_layout_copy(&inLayout, &frameLayout)
        } else {
            av_channel_layout_default(&inLayout, max(1, channels))
        }
        defer { av_channel_layout_uninit(&inLayout); av_channel_layout_uninit(&outLayout) }
        guard swr_alloc_set_opts2(&context, &outLayout, AV_SAMPLE_FMT_FLT, Int32(output.sampleRate),
                                  &inLayout, AVSampleFormat(rawValue: format), sampleRate, 0, nil) >= 0,
              swr_init(context) >= 0 else { swr_free(&context); return nil }
    }

    deinit { swr_free(&context) }

    func matches(_ frame: UnsafePointer<AVFrame>) -> Bool {
        frame.pointee.sample_rate == sampleRate && frame.pointee.format == format && frame.pointee.ch_layout.nb_channels == channels
    }

    /// The frame's samples at the output format, interleaved.
    func convert(_ frame: UnsafePointer<AVFrame>) -> [Float]? {
        let capacity = Int(swr_get_out_samples(context, frame.pointee.nb_samples))
        guard capacity > 0 else { return nil }
        var samples = [Float](repeating: 0, count: capacity * resampledChannels)
        let produced = samples.withUnsafeMutableBytes { bytes -> Int32 in
            var out: UnsafeMutablePointer<UInt8>? = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            // extended_data is `uint8_t **`; swr_convert reads it as `const uint8_t **`: the same pointers.
            let input = UnsafeMutablePointer<UnsafePointer<UInt8>?>(OpaquePointer(frame.pointee.extended_data))
            return swr_convert(context, &out, Int32(capacity), input, frame.pointee.nb_samples)
        }
        guard produced > 0 else { return nil }
        samples.removeLast((capacity - Int(produced)) * resampledChannels)
        guard resampledChannels == 1, output.channels > 1 else { return samples }
        var spread = [Float](repeating: 0, count: samples.count * output.channels)
        for (index, sample) in samples.enumerated() {
            for channel in 0..<output.channels { spread[index * output.channels + channel] = sample }
        }
        return spread
    }
}
