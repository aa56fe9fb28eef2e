// Audio inner loops in C for Swift (module AudioKernels), compiled -O2 in every build (Package.swift):
// Swift's SIMD types are generic calls at -Onone, and a debug build's audio thread must keep up too.
// Symbols are prefixed `ak_`.
#ifndef STUDIO_AUDIO_KERNELS_H
#define STUDIO_AUDIO_KERNELS_H
#include <stddef.h>

/// Which instructions `ak_resample_stereo` runs on.
typedef enum {
    /// The best this CPU has: `ak_isa_avx2_fma` where `ak_has_avx2_fma`, else `ak_isa_baseline`.
    ak_isa_best = 0,
    /// 4-lane vectors (x86-64's baseline SSE), every CPU: the same operations in the same order as the
    /// Swift `SIMD4<Float>` loop this replaced, so the same output to the bit.
    ak_isa_baseline = 1,
    /// 8-lane vectors with fused multiply-adds (AVX2 and FMA): the same sums, rounded once per
    /// multiply-add and added in another order (within a few float ulps of the baseline).
    ak_isa_avx2_fma = 2,
} ak_isa;

/// Whether this CPU runs `ak_isa_avx2_fma`.
int ak_has_avx2_fma(void);

/// The resampler's filter length (`AdaptiveResampler.taps`).
#define AK_RESAMPLER_TAPS 16

/// The adaptive resampler's stereo loop (`AdaptiveResampler` in module Capture). Output frame f reads
/// input position p = start + f * step (in frames from `input`'s frame 0; p computed in double, exactly
/// so, as the resampler's accounting computes it); with w = floor(p), r = min(floor((p - w) * phases),
/// phases - 1) and blend b = (p - w) * phases - r, it is the sum over k < AK_RESAMPLER_TAPS of input
/// frame w - (AK_RESAMPLER_TAPS / 2 - 1) + k times (row r's tap k + b * (row r + 1's tap k - row r's)).
/// `table`: phases + 1 rows of 2 * AK_RESAMPLER_TAPS floats, each tap twice (left, right), so a row
/// lines up with the interleaved stereo frames. Writes 2 * `frames` interleaved floats to `output`.
void ak_resample_stereo(const float *input, const float *table, int phases, double start, double step, size_t frames,
                        float *output, ak_isa isa);

/// A mixer channel strip's delay line (`ChannelStrip` in module Mixer): `ring` holds `mask + 1` stereo
/// frames (a power of two), frame n at floats 2 * (n & mask). Writes frames first..<first + frames from
/// `input` (interleaved stereo; NULL: silence), a sample that is not finite as 0 (one NaN would poison
/// the program bus, the limiter and the show's integrated loudness for good).
void ak_strip_write(float *ring, size_t mask, long long first, const float *input, size_t frames);

/// A channel strip's steady mix (no fade moving): frames first..<first + frames, each read `delay`
/// frames back from `ring`, through the 2x2 `matrix` (left out = matrix[0] * left + matrix[1] * right,
/// right out = matrix[2] * left + matrix[3] * right) and added to `bus` (interleaved stereo, frame 0 =
/// `first`); each channel's highest magnitude out raises `peaks`, and its squares (float products, summed
/// in double) are added to `sums`.
void ak_strip_mix(const float *ring, size_t mask, long long first, long long delay, size_t frames, const float *matrix,
                  float *bus, float *peaks, double *sums);
#endif
