# install.cmake -- what `make install` puts where, and the Debian package
# `make package` builds from the same rules (CPack). Included by
# CMakeLists.txt once the huddle target exists.
#
# Under the install prefix (given at install time: cmake --install
# --prefix, or CPack's /usr), with DESTDIR honoured throughout:
#   bin/huddle                                the binary (web/ embedded)
#   share/man/man1/huddle.1                   the man page        } when the
#   share/bash-completion/completions/huddle  bash completion     } source
#   share/zsh/vendor-completions/_huddle      zsh completion      } has them
#   share/doc/huddle/examples/*.json          the example teams
#   lib/systemd/user/huddle.service           the systemd user unit
# The unit is written at install time from dist/huddle.service.in with
# ExecStart naming the installed binary by its full path (systemd looks a
# bare name up only in /usr/bin and the like). Under ~/.local (the
# Makefile's default PREFIX) it goes to share/systemd/user instead, the
# user directory systemd reads ($XDG_DATA_HOME/systemd/user).
# Every file installed is listed in install_manifest.txt, which
# cmake/uninstall.cmake (make uninstall) reads back.
include(GNUInstallDirs)
install(TARGETS huddle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The man page and completions, those the source has (a glob the build
# checks again, so one added later is installed without reconfiguring by
# hand; no empty directory is made for one that is missing).
file(GLOB HD_MAN CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/man/huddle.1)
file(GLOB HD_BASH CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/completions/huddle.bash)
file(GLOB HD_ZSH CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/completions/_huddle)
if(HD_MAN)
  install(FILES ${HD_MAN} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
if(HD_BASH)
  install(FILES ${HD_BASH} RENAME huddle
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
endif()
if(HD_ZSH)
  install(FILES ${HD_ZSH}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples FILES_MATCHING PATTERN "*.json")
# The unit, made for the prefix this install is for. Its copy is kept in
# a directory of its own per DESTDIR and prefix, so two installs at once
# (a package and a DESTDIR install) never write the same file.
install(CODE "
  set(hd_prefix \"\${CMAKE_INSTALL_PREFIX}\")
  set(hd_unitdir \"\${hd_prefix}/lib/systemd/user\")
  if(DEFINED ENV{HOME} AND hd_prefix STREQUAL \"\$ENV{HOME}/.local\")
    set(hd_unitdir \"\${hd_prefix}/share/systemd/user\")
  endif()
  set(HUDDLE_BIN \"\${hd_prefix}/${CMAKE_INSTALL_BINDIR}/huddle\")
  string(MD5 hd_key \"\$ENV{DESTDIR}|\${hd_prefix}\")
  set(hd_unit \"${CMAKE_BINARY_DIR}/dist/\${hd_key}/huddle.service\")
  configure_file(\"${PROJECT_SOURCE_DIR}/dist/huddle.service.in\"
    \"\${hd_unit}\" @ONLY)
  file(INSTALL DESTINATION \"\${hd_unitdir}\" TYPE FILE FILES \"\${hd_unit}\")
")

# make package: build/huddle_<version>_<arch>.deb. Its Depends are the
# Debian packages of the libraries the binary links, as dpkg-shlibdeps
# finds them (dpkg-dev) -- libpq5 among them, for the store's PostgreSQL
# backend (the linker's --as-needed keeps libpq.so.5 only once the store
# calls it; tests/e2e/test-package.sh checks both) -- and tzdata: routines
# read their time zones from the system's database (/usr/share/zoneinfo),
# which no library pulls in.
# The binary is stripped.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME huddle)
set(CPACK_PACKAGE_VENDOR huddle)
set(CPACK_PACKAGE_CONTACT "huddle developers <huddle@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "one shared place for a team of AI agents on different runtimes")
set(CPACK_PACKAGE_DESCRIPTION
  "huddle gives a team of AI agents on different runtimes a board of tasks,
a room transcript and mailboxes, over MCP (stdio and HTTP), a REST API
with live events, a dashboard and a CLI.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS tzdata)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
include(CPack)
