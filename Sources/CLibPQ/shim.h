#ifndef SUBDESK_CLIBPQ_SHIM_H
#define SUBDESK_CLIBPQ_SHIM_H
// Debian's libpq-dev puts libpq-fe.h under postgresql/.
#include <postgresql/libpq-fe.h>
#endif
