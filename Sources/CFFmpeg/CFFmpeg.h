// FFmpeg 5.1 (Debian 12) for Swift. Shims are `static inline`, prefixed `cff_`, and each says why it exists.
#ifndef STUDIO_CFFMPEG_H
#define STUDIO_CFFMPEG_H
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/hwcontext.h>
// SHA-256 of recordings (FileDigest): libavutil has it, so studio needs no other crypto library.
#include <libavutil/hash.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

// AVERROR(e) and AVERROR_EOF are macros built from MKTAG/negation: Swift cannot import them.
static inline int cff_averror(int posixError) { return AVERROR(posixError); }
static inline int cff_averror_eof(void) { return AVERROR_EOF; }
static inline int cff_averror_external(void) { return AVERROR_EXTERNAL; }
static inline int cff_averror_exit(void) { return AVERROR_EXIT; }

// AV_NOPTS_VALUE is a macro with a cast (INT64_C(0x8000000000000000)): Swift sees no constant.
static inline int64_t cff_nopts_value(void) { return AV_NOPTS_VALUE; }

// av_log_set_callback wants a callback taking a va_list, which Swift cannot implement. This one formats
// the line (av_log_format_line2) and hands it to `studio_ffmpeg_log_line`, a plain C-callable function
// that the MediaSupport module implements in Swift (@_cdecl) and that only enqueues the text: libav* then
// never writes to stderr itself from a media thread.
void studio_ffmpeg_log_line(int level, const char *line);
static inline void cff_log_forward(void *context, int level, const char *format, va_list arguments) {
    if (level > av_log_get_level()) return;
    char line[1024];
    int printPrefix = 1;
    av_log_format_line2(context, level, format, arguments, line, sizeof line, &printPrefix);
    studio_ffmpeg_log_line(level, line);
}
static inline void cff_install_log_forwarding(void) { av_log_set_callback(cff_log_forward); }

// AVFrame.data/linesize/buf are fixed-size C arrays that Swift imports as tuples, which cannot be
// indexed by a runtime plane number; these read and write one plane.
static inline void cff_frame_set_plane(AVFrame *frame, int plane, uint8_t *data, int linesize) {
    frame->data[plane] = data;
    frame->linesize[plane] = linesize;
}
static inline uint8_t *cff_frame_plane(const AVFrame *frame, int plane) { return frame->data[plane]; }
static inline void cff_frame_set_buffer(AVFrame *frame, int index, AVBufferRef *buffer) { frame->buf[index] = buffer; }

#endif
