#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "CSystem.h"

int csys_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

FILE *csys_standard_error_stream(void) {
    return stderr;
}
