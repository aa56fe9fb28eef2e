// Linux/glibc calls that Swift cannot reach directly. Every symbol is prefixed `csys_`.
#ifndef STUDIO_CSYSTEM_H
#define STUDIO_CSYSTEM_H
#include <stddef.h>
#include <stdio.h>

// pthread_setname_np is declared only under _GNU_SOURCE, which Swift's Glibc module does not set;
// prctl(PR_SET_NAME) is variadic. Names the calling thread (the kernel keeps 15 characters).
int csys_set_thread_name(const char *name);

// C's `stderr` is a mutable global, which Swift 6 refuses to read. The process's standard error stream.
FILE *csys_standard_error_stream(void);

#endif
