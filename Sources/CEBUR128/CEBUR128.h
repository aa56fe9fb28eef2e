// libebur128 for Swift: the program's EBU R128 loudness (Mixer's LoudnessMeter). Shims are prefixed `cebur_`.
#ifndef STUDIO_CEBUR128_H
#define STUDIO_CEBUR128_H
#include <ebur128.h>
#include <stddef.h>
#include <string.h>

// Why this shim exists: ebur128.h declares its mode flags and result codes as members of C enums named
// plainly `mode` and `error` (no typedef, no prefix), which Swift imports as structs of those generic
// names, while ebur128_init takes the flags OR-ed together as an `int` and every call returns an `int`.
// Prefixed constants hold the set the mixer measures and the success code, so Swift never touches
// those enum types.

/// What the mixer's LoudnessMeter asks of libebur128: the K-weighting with a 400 ms buffer (momentary
/// mode), read as 100 ms windows, and the sample peak. The meter makes the short-term, integrated and
/// range readings from those windows (libebur128's integrated and range modes sum every 400 ms and 3 s
/// block anew); true peak is the mixer's own TruePeakMeter (the same 4x oversampling filter in SIMD).
static const int cebur_window_modes = EBUR128_MODE_M | EBUR128_MODE_SAMPLE_PEAK;

/// Every reading the mixer gives, from libebur128 itself (histogram mode: integrated and range in
/// constant memory, as the meter keeps them): the reference the tests hold LoudnessMeter to.
static const int cebur_program_modes =
    EBUR128_MODE_M | EBUR128_MODE_S | EBUR128_MODE_I | EBUR128_MODE_LRA |
    EBUR128_MODE_SAMPLE_PEAK | EBUR128_MODE_HISTOGRAM;

/// libebur128's own true peak (with the momentary loudness it requires): the reference the tests hold
/// TruePeakMeter to.
static const int cebur_reference_true_peak_modes = EBUR128_MODE_M | EBUR128_MODE_TRUE_PEAK;

/// EBUR128_SUCCESS as a plain int (the result codes are members of the enum `error`).
static const int cebur_success = EBUR128_SUCCESS;

/// Not libebur128: studio's true-peak oversampler for one channel (TruePeakMeter in module Mixer holds
/// the filter and the state), here in C with clang's vector extensions so that a debug build runs it at
/// C speed (Swift's SIMD types are generic calls at -Onone: the audio thread of a debug build fell behind).
///
/// Runs `frames` samples of one channel (`stride` floats apart, from `samples`) through a 4-phase FIR of
/// 12 taps per phase (`coefficients`: 48 floats, tap t's 4 phases at 4t..4t+3; phase p's output for input
/// n is the sum over t of coefficients[4t + p] * x[n - t]), after `history` (the channel's last 11 input
/// samples, oldest first; updated). Returns the highest magnitude of the output, at least `peak`.
static inline float cebur_true_peak_channel(const float *samples, size_t frames, size_t stride, float *history,
                                            const float *coefficients, float peak) {
    typedef float cebur_float4 __attribute__((vector_size(16)));
    enum { taps = 12, kept = taps - 1, chunk = 256 };
    cebur_float4 phases[taps];
    memcpy(phases, coefficients, sizeof phases);
    float line[kept + chunk];
    memcpy(line, history, kept * sizeof(float));
    cebur_float4 high = {peak, peak, peak, peak};
    for (size_t done = 0; done < frames;) {
        size_t count = frames - done < chunk ? frames - done : chunk;
        for (size_t i = 0; i < count; i++) line[kept + i] = samples[(done + i) * stride];
        for (size_t i = 0; i < count; i++) {
            const float *newest = line + kept + i;
            cebur_float4 sum = {0, 0, 0, 0};
            for (int t = 0; t < taps; t++) {
                float x = newest[-t];
                cebur_float4 lanes = {x, x, x, x};
                sum += phases[t] * lanes;
            }
            high = __builtin_elementwise_max(high, __builtin_elementwise_abs(sum));
        }
        memmove(line, line + count, kept * sizeof(float));
        done += count;
    }
    memcpy(history, line, kept * sizeof(float));
    float result = high[0];
    for (int lane = 1; lane < 4; lane++) result = high[lane] > result ? high[lane] : result;
    return result;
}
#endif
