#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

void *csys_duplicate_shared_mapping(void *page_aligned, size_t length) {
    void *copy = mremap(page_aligned, 0, length, MREMAP_MAYMOVE);
    if (copy == MAP_FAILED) return NULL;
    if (mprotect(copy, length, PROT_READ) != 0) {
        munmap(copy, length);
        return NULL;
    }
    return copy;
}
