# cmake -DKILN_SOURCE_DIR=... -DKILN_VERSION=... -DKILN_VERSION_HEADER=... -P write_version.cmake
# The commit is HEAD's, with "-dirty" when tracked files differ from it: numbers measured on a
# modified tree must not be credited to the commit.
execute_process(
  COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${KILN_SOURCE_DIR}
  OUTPUT_VARIABLE KILN_GIT_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT KILN_GIT_COMMIT)
  set(KILN_GIT_COMMIT "unknown")
else()
  execute_process(
    COMMAND git diff --quiet HEAD --
    WORKING_DIRECTORY ${KILN_SOURCE_DIR}
    RESULT_VARIABLE dirty
    ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND KILN_GIT_COMMIT "-dirty")
  endif()
endif()
set(PROJECT_VERSION ${KILN_VERSION})
configure_file(${KILN_SOURCE_DIR}/cmake/version.h.in ${KILN_VERSION_HEADER} @ONLY)
