// FreeType 2 for Swift: text layers (titles, name captions) are rendered with it (Graphics).
// No shim is needed yet: ft2build.h's include-by-macro is resolved here, once, for Swift.
#ifndef STUDIO_CFREETYPE_H
#define STUDIO_CFREETYPE_H
#include <ft2build.h>
#include FT_FREETYPE_H
#endif
