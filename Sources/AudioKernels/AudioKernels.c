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

/// Output frame `frame`'s first input sample and its two rows, as `AdaptiveResampler` computes them.
static inline const float *ak_frame(const float *input, const float *table, int phases, double start, double step,
                                    size_t frame, const float **row, float *blend) {
    double position = start + (double)frame * step;
    double whole = floor(position);
    double scaled = (position - whole) * (double)phases;
    int phase = (int)scaled;
    if (phase > phases - 1) phase = phases - 1;
    *row = table + (size_t)phase * ak_width;
    *blend = (float)(scaled - (double)phase);
    return input + ((long)whole - (ak_lookahead - 1)) * 2;
}

static void ak_resample_stereo_baseline(const float *input, const float *table, int phases, double start, double step,
                                        size_t frames, float *output) {
    for (size_t frame = 0; frame < frames; frame++) {
        const float *low;
        float blend;
        const float *x = ak_frame(input, table, phases, start, step, frame, &low, &blend);
        const float *high = low + ak_width;
        ak_float4 sum = {0, 0, 0, 0};
        for (int lane = 0; lane < ak_width; lane += 4) {
            ak_float4 l, h, v;
            memcpy(&l, low + lane, sizeof l);
            memcpy(&h, high + lane, sizeof h);
            memcpy(&v, x + lane, sizeof v);
            sum += (l + blend * (h - l)) * v;
        }
        output[2 * frame] = sum[0] + sum[2];
        output[2 * frame + 1] = sum[1] + sum[3];
    }
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void ak_resample_stereo_avx2(const float *input, const float *table, int phases, double start, double step,
                                    size_t frames, float *output) {
    for (size_t frame = 0; frame < frames; frame++) {
        const float *low;
        float blend;
        const float *x = ak_frame(input, table, phases, start, step, frame, &low, &blend);
        const float *high = low + ak_width;
        ak_float8 b = {blend, blend, blend, blend, blend, blend, blend, blend};
        ak_float8 sum = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int lane = 0; lane < ak_width; lane += 8) {
            ak_float8 l, h, v;
            memcpy(&l, low + lane, sizeof l);
            memcpy(&h, high + lane, sizeof h);
            memcpy(&v, x + lane, sizeof v);
            sum = __builtin_elementwise_fma(__builtin_elementwise_fma(b, h - l, l), v, sum);
        }
        ak_float4 half = __builtin_shufflevector(sum, sum, 0, 1, 2, 3) + __builtin_shufflevector(sum, sum, 4, 5, 6, 7);
        output[2 * frame] = half[0] + half[2];
        output[2 * frame + 1] = half[1] + half[3];
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
