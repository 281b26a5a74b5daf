/* version.h -- the huddle release and the schema version it understands. */
#ifndef HUDDLE_VERSION_H
#define HUDDLE_VERSION_H

#define HD_VERSION "0.1.0"

/* The library version string, same as HD_VERSION of the built library. */
const char *hd_version(void);

#endif
