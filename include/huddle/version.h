/* version.h -- the huddle release and the commit it was built from. The
 * release has one source, `project(huddle VERSION ...)` in
 * CMakeLists.txt, which also names the Debian package (CPack). */
#ifndef HUDDLE_VERSION_H
#define HUDDLE_VERSION_H

/* The release, "MAJOR.MINOR.PATCH" (what MCP's serverInfo reports). */
const char *hd_version(void);

/* The git commit built (`git describe --always --dirty` at build time),
 * or "unknown" when built outside a git checkout. */
const char *hd_version_commit(void);

#endif
