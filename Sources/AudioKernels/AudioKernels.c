#include "AudioKernels.h"
#include <math.h>
#include <string.h>

// Every multiply and add as written (no contraction into fused multiply-adds behind our back): the
// read position must be the resampler's to the bit (a frame further would read past the input it asked
// for), and the baseline loop the Swift one's.
#pragma clang fp contract(off)

typedef float ak_float4 __attribute__((vector_size(16)));
typedef float ak_float8 __attribute__((vector_size(32)));

enum { ak_width = 2 * AK_RESAMPLER_TAPS, ak_lookahead = AK_RESAMPLER_TAPS / 2 };

int ak_has_avx2_fma(void) {
#if defined(__x86_64__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

/// What output frame `frame` reads, as `AdaptiveResampler` computes it: its first input sample, its two
/// rows of the table and the blend between them.
typedef struct {
    const float *x, *low, *high;
    float blend;
} ak_frame_taps;

static inline ak_frame_taps ak_frame(const float *input, const float *table, int phases, double start, double step,
                                     size_t frame) {
    double position = start + (double)frame * step;
    double whole = floor(position);
    double scaled = (position - whole) * (double)phases;
    int phase = (int)scaled;
    if (phase > phases - 1) phase = phases - 1;
    const float *low = table + (size_t)phase * ak_width;
    return (ak_frame_taps){input + ((long)whole - (ak_lookahead - 1)) * 2, low, low + ak_width, (float)(scaled - (double)phase)};
}

/// Lanes 0 and 2 are left, 1 and 3 right.
static inline void ak_store(float *output, size_t frame, ak_float4 sum) {
    output[2 * frame] = sum[0] + sum[2];
    output[2 * frame + 1] = sum[1] + sum[3];
}

static void ak_resample_stereo_baseline(const float *input, const float *table, int phases, double start, double step,
                                        size_t frames, float *output) {
    for (size_t frame = 0; frame < frames; frame++) {
        ak_frame_taps taps = ak_frame(input, table, phases, start, step, frame);
        ak_float4 sum = {0, 0, 0, 0};
        for (int lane = 0; lane < ak_width; lane += 4) {
            ak_float4 l, h, v;
            memcpy(&l, taps.low + lane, sizeof l);
            memcpy(&h, taps.high + lane, sizeof h);
            memcpy(&v, taps.x + lane, sizeof v);
            sum += (l + taps.blend * (h - l)) * v;
        }
        ak_store(output, frame, sum);
    }
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void ak_resample_stereo_avx2(const float *input, const float *table, int phases, double start, double step,
                                    size_t frames, float *output) {
    for (size_t frame = 0; frame < frames; frame++) {
        ak_frame_taps taps = ak_frame(input, table, phases, start, step, frame);
        ak_float8 b = {taps.blend, taps.blend, taps.blend, taps.blend, taps.blend, taps.blend, taps.blend, taps.blend};
        ak_float8 sum = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int lane = 0; lane < ak_width; lane += 8) {
            ak_float8 l, h, v;
            memcpy(&l, taps.low + lane, sizeof l);
            memcpy(&h, taps.high + lane, sizeof h);
            memcpy(&v, taps.x + lane, sizeof v);
            sum = __builtin_elementwise_fma(__builtin_elementwise_fma(b, h - l, l), v, sum);
        }
        ak_store(output, frame, __builtin_shufflevector(sum, sum, 0, 1, 2, 3) + __builtin_shufflevector(sum, sum, 4, 5, 6, 7));
    }
}
#endif

void ak_resample_stereo(const float *input, const float *table, int phases, double start, double step, size_t frames,
                        float *output, ak_isa isa) {
#if defined(__x86_64__)
    if (isa == ak_isa_avx2_fma || (isa == ak_isa_best && ak_has_avx2_fma())) {
        ak_resample_stereo_avx2(input, table, phases, start, step, frames, output);
        return;
    }
#endif
    ak_resample_stereo_baseline(input, table, phases, start, step, frames, output);
}
