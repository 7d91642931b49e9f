/*
 * The one source of the aeron_async version: setup.py reads AA_VERSION_STRING from this file for
 * the package metadata, the C library reports it (aa_version(), the "aeron_async software" counter)
 * and aeron_async.__version__ is aa_version() of the loaded native core.
 */
#ifndef AA_VERSION_H
#define AA_VERSION_H

#define AA_VERSION_STRING "0.1.0"

const char *aa_version(void);

#endif
