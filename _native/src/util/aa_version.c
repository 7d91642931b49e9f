#include "util/aa_version.h"

const char *aa_version(void)
{
    return AA_VERSION_STRING;
}
