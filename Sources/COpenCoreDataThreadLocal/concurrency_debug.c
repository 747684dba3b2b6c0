#include "ocd_concurrency_debug.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ocd_concurrency_debug_level = 0;

static const char *const launchArgument = "-com.apple.CoreData.ConcurrencyDebug";

#if defined(__GLIBC__) || defined(__APPLE__)
// glibc and dyld call constructors with the program's arguments (musl and others do not).
__attribute__((constructor)) static void ocd_read_concurrency_debug(int argc, char **argv, char **envp) {
    (void)envp;
#else
__attribute__((constructor)) static void ocd_read_concurrency_debug(void) {
    int argc = 0;
    char **argv = NULL;
#endif
    const char *value = getenv("OCD_CONCURRENCY_DEBUG");
    if (value == NULL) value = getenv("com.apple.CoreData.ConcurrencyDebug");
    for (int index = 1; value == NULL && argv != NULL && index + 1 < argc; index++) {
        if (argv[index] != NULL && strcmp(argv[index], launchArgument) == 0) value = argv[index + 1];
    }
    int level = value != NULL ? atoi(value) : 0;
    ocd_concurrency_debug_level = level > 0 ? level : 0;
    // Apple's announcement, word for word, so that a log shows the assertions are on.
    if (ocd_concurrency_debug_level > 0) fputs("CoreData: annotation: Core Data multi-threading assertions enabled.\n", stderr);
}
