// libebur128 for Swift: the program's EBU R128 loudness (Mixer's LoudnessMeter). Shims are prefixed `cebur_`.
#ifndef STUDIO_CEBUR128_H
#define STUDIO_CEBUR128_H
#include <ebur128.h>

// Why this shim exists: ebur128.h declares its mode flags and result codes as members of C enums named
// plainly `mode` and `error` (no typedef, no prefix), which Swift imports as structs of those generic
// names, while ebur128_init takes the flags OR-ed together as an `int` and every call returns an `int`.
// Prefixed constants hold the set the mixer measures and the success code, so Swift never touches
// those enum types.

/// Momentary, short-term, integrated, loudness range and sample peak (histogram mode: integrated and
/// range in constant memory over a show of any length). Not true peak: the mixer's own TruePeakMeter
/// runs the same 4x oversampling filter in SIMD at a small part of libebur128's cost.
static const int cebur_program_modes =
    EBUR128_MODE_M | EBUR128_MODE_S | EBUR128_MODE_I | EBUR128_MODE_LRA |
    EBUR128_MODE_SAMPLE_PEAK | EBUR128_MODE_HISTOGRAM;

/// libebur128's own true peak (with the momentary loudness it requires): the reference the tests hold
/// TruePeakMeter to.
static const int cebur_reference_true_peak_modes = EBUR128_MODE_M | EBUR128_MODE_TRUE_PEAK;

/// EBUR128_SUCCESS as a plain int (the result codes are members of the enum `error`).
static const int cebur_success = EBUR128_SUCCESS;
#endif
