#ifndef AA_VERSION_H
#define AA_VERSION_H

#define AA_VERSION_STRING "0.1.0"

#endif
