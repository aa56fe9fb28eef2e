// libyaml for Swift. No shim is needed yet: the event parser API imports as it is.
#ifndef STUDIO_CYAML_H
#define STUDIO_CYAML_H
#include <yaml.h>
#endif
