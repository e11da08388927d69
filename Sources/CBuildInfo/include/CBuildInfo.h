#ifndef SUBDESK_C_BUILD_INFO_H
#define SUBDESK_C_BUILD_INFO_H

/// What the build that made this binary knew about itself: the commit (with `-dirty` when
/// the tree had changes), the build time in seconds since 1970 (`SOURCE_DATE_EPOCH` where
/// set) and how it was linked. "unknown" (and 0) for a build that was not told.
const char *subdesk_build_commit(void);
long long subdesk_build_epoch(void);
const char *subdesk_build_linking(void);

#endif
