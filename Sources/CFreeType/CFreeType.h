// FreeType 2 for Swift: text layers (titles, name captions) are rendered with it (Graphics).
// ft2build.h's include-by-macro is resolved here, once, for Swift. Shims are prefixed `cft_`.
#ifndef STUDIO_CFREETYPE_H
#define STUDIO_CFREETYPE_H
#include <ft2build.h>
#include FT_FREETYPE_H

// FreeType's text for an error code. FT_Error_String returns NULL unless FreeType was built with
// FT_CONFIG_OPTION_ERROR_STRINGS, which Debian's is not; fterrors.h's documented X-macro builds the
// table from FreeType's own list (fterrdef.h) instead, so the texts stay FreeType's.
#undef FTERRORS_H_
#define FT_ERRORDEF(e, v, s) {v, s},
#define FT_ERROR_START_LIST static const struct cft_error_text { int code; const char *text; } cft_error_texts[] = {
#define FT_ERROR_END_LIST {0, 0}};
#include FT_ERRORS_H

/// FreeType's description of `error` ("cannot open resource"), or NULL for a code it does not list.
static inline const char *cft_error_string(FT_Error error) {
    for (int index = 0; cft_error_texts[index].text; index++) {
        if (cft_error_texts[index].code == error) return cft_error_texts[index].text;
    }
    return 0;
}
#endif
