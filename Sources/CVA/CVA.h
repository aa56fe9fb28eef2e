// libva (Debian 12: libva-dev, VA-API 1.17) for Swift: the VA-API core and its DRM (render node) display.
//
// No shims are needed today (checked against Swift 6.3): VAStatus codes such as VA_STATUS_SUCCESS are
// plain integer macros and VA_VERSION_S a string macro, which Swift imports; VAProfile/VAEntrypoint are C
// enums (imported as structs with global constants); vaGetDisplayDRM, vaInitialize, vaTerminate,
// vaQueryConfigProfiles, vaQueryConfigEntrypoints, vaQueryVendorString, vaErrorStr, vaSetInfoCallback,
// vaMaxNumProfiles and vaMaxNumEntrypoints are ordinary functions. If one is ever needed (a function-like
// macro, a variadic call), add it here as `static inline`, prefixed `cva_`, with a comment saying why.
#ifndef STUDIO_CVA_H
#define STUDIO_CVA_H
#include <va/va.h>
#include <va/va_drm.h>
#endif
