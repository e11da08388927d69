#include "CBuildInfo.h"

// deploy/package.sh writes .build/build-info.h (the commit, SOURCE_DATE_EPOCH, the linking)
// before it builds and removes it after, so the tree stays clean and a plain `swift build`
// says "unknown". The compiler's dependency file names the header, so a new one rebuilds
// this file alone.
#if __has_include("../../.build/build-info.h")
#include "../../.build/build-info.h"
#endif

#ifndef SUBDESK_BUILD_COMMIT
#define SUBDESK_BUILD_COMMIT "unknown"
#endif
#ifndef SUBDESK_BUILD_EPOCH
#define SUBDESK_BUILD_EPOCH 0
#endif
#ifndef SUBDESK_BUILD_LINKING
#define SUBDESK_BUILD_LINKING "unknown"
#endif

const char *subdesk_build_commit(void) { return SUBDESK_BUILD_COMMIT; }
long long subdesk_build_epoch(void) { return SUBDESK_BUILD_EPOCH; }
const char *subdesk_build_linking(void) { return SUBDESK_BUILD_LINKING; }
