#include "AudioKernels.h"
#include <math.h>
#include <string.h>

// The channel strip's loops on explicit 4-lane vectors (two stereo frames at a time, x86-64's baseline
// SSE): clang did not vectorize the plain loops (interleaved stereo, the peaks and the double sums),
// and they ran at scalar speed. Contiguous runs of the ring, split where it wraps.

typedef float ak_strip_float4 __attribute__((vector_size(16)));
typedef int ak_strip_int4 __attribute__((vector_size(16)));
typedef double ak_strip_double2 __attribute__((vector_size(16)));

static inline ak_strip_float4 ak_strip_load(const float *p) {
    ak_strip_float4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void ak_strip_store(float *p, ak_strip_float4 v) { memcpy(p, &v, sizeof v); }

/// The frames of a run that starts at ring slot `slot`: up to the ring's end.
static inline size_t ak_strip_run(size_t slot, size_t mask, size_t left) {
    size_t room = mask + 1 - slot;
    return left < room ? left : room;
}

void ak_strip_write(float *ring, size_t mask, long long first, const float *input, size_t frames) {
    const ak_strip_int4 exponent = {0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000};
    size_t done = 0;
    while (done < frames) {
        size_t slot = (size_t)(first + (long long)done) & mask;
        size_t run = ak_strip_run(slot, mask, frames - done), samples = 2 * run, i = 0;
        float *out = ring + 2 * slot;
        if (input) {
            const float *in = input + 2 * done;
            for (; i + 4 <= samples; i += 4) {
                ak_strip_float4 v = ak_strip_load(in + i);
                // Finite where the exponent bits are not all ones (infinity and NaN are): others become 0.
                ak_strip_int4 finite = ((ak_strip_int4)v & exponent) != exponent;
                ak_strip_store(out + i, (ak_strip_float4)((ak_strip_int4)v & finite));
            }
            for (; i < samples; i++) out[i] = isfinite(in[i]) ? in[i] : 0.0f;
        } else {
            memset(out, 0, samples * sizeof(float));
        }
        done += run;
    }
}

void ak_strip_mix(const float *ring, size_t mask, long long first, long long delay, size_t frames, const float *matrix,
                  float *bus, float *peaks, double *sums) {
    const float ll = matrix[0], rl = matrix[1], lr = matrix[2], rr = matrix[3];
    // Lanes are left, right, left, right: out = direct * frame + crossed * (the frame's channels swapped).
    const ak_strip_float4 direct = {ll, rr, ll, rr}, crossed = {rl, lr, rl, lr};
    const ak_strip_int4 magnitude = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    ak_strip_float4 peak = {peaks[0], peaks[1], peaks[0], peaks[1]};
    ak_strip_double2 sumEven = {0, 0}, sumOdd = {0, 0};
    float peakLeft = peaks[0], peakRight = peaks[1];
    double sumLeft = 0, sumRight = 0;
    size_t done = 0;
    while (done < frames) {
        size_t slot = (size_t)(first + (long long)done - delay) & mask;
        size_t run = ak_strip_run(slot, mask, frames - done), i = 0;
        const float *in = ring + 2 * slot;
        float *out = bus + 2 * done;
        for (; i + 2 <= run; i += 2) {
            ak_strip_float4 v = ak_strip_load(in + 2 * i);
            ak_strip_float4 o = direct * v + crossed * __builtin_shufflevector(v, v, 1, 0, 3, 2);
            ak_strip_store(out + 2 * i, ak_strip_load(out + 2 * i) + o);
            ak_strip_float4 size = (ak_strip_float4)((ak_strip_int4)o & magnitude);
            peak = __builtin_elementwise_max(size, peak);
            ak_strip_float4 square = o * o;
            sumEven += __builtin_convertvector(__builtin_shufflevector(square, square, 0, 1), ak_strip_double2);
            sumOdd += __builtin_convertvector(__builtin_shufflevector(square, square, 2, 3), ak_strip_double2);
        }
        for (; i < run; i++) {
            float left = in[2 * i], right = in[2 * i + 1];
            float outLeft = ll * left + rl * right, outRight = lr * left + rr * right;
            out[2 * i] += outLeft;
            out[2 * i + 1] += outRight;
            peakLeft = fabsf(outLeft) > peakLeft ? fabsf(outLeft) : peakLeft;
            peakRight = fabsf(outRight) > peakRight ? fabsf(outRight) : peakRight;
            sumLeft += (double)(outLeft * outLeft);
            sumRight += (double)(outRight * outRight);
        }
        done += run;
    }
    float lanesLeft = peak[0] > peak[2] ? peak[0] : peak[2], lanesRight = peak[1] > peak[3] ? peak[1] : peak[3];
    peaks[0] = lanesLeft > peakLeft ? lanesLeft : peakLeft;
    peaks[1] = lanesRight > peakRight ? lanesRight : peakRight;
    sums[0] += sumEven[0] + sumOdd[0] + sumLeft;
    sums[1] += sumEven[1] + sumOdd[1] + sumRight;
}
