// libsrt 1.5 for Swift (the SRT listener of network cameras). Debian's GnuTLS build: the same libsrt
// libavformat links, so the process holds one copy. Shims are `static inline`, prefixed `csrt_`, and
// each says why it exists.
#ifndef STUDIO_CSRT_H
#define STUDIO_CSRT_H
#include <srt/srt.h>
#include <srt/access_control.h>

// The access-control reject codes are macros; Swift imports them, but as Int32 of the wrong sign for
// srt_setrejectreason in some toolchains: these name the ones studio answers with.
static inline int csrt_reject_forbidden(void) { return SRT_REJX_FORBIDDEN; }
static inline int csrt_reject_bad_request(void) { return SRT_REJX_BAD_REQUEST; }
static inline int csrt_reject_overload(void) { return SRT_REJX_OVERLOAD; }
static inline int csrt_reject_conflict(void) { return SRT_REJX_CONFLICT; }
#endif
