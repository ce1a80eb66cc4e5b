# Makes the version and the git commit available to the code as kiln/version.h. The header is
# written at configure time and refreshed by the kiln_version target on every build (a commit made
# after configuring had left binaries, engines and timing caches naming the older one); it is
# rewritten only when its text changes, so an unchanged commit rebuilds nothing.
set(KILN_VERSION_HEADER ${CMAKE_BINARY_DIR}/generated/kiln/version.h)
set(KILN_VERSION_ARGS -DKILN_SOURCE_DIR=${CMAKE_SOURCE_DIR} -DKILN_VERSION=${PROJECT_VERSION}
                      -DKILN_VERSION_HEADER=${KILN_VERSION_HEADER})
execute_process(COMMAND ${CMAKE_COMMAND} ${KILN_VERSION_ARGS} -P
                        ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake)
add_custom_target(
  kiln_version
  COMMAND ${CMAKE_COMMAND} ${KILN_VERSION_ARGS} -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${KILN_VERSION_HEADER}
  COMMENT "kiln/version.h: the git commit"
  VERBATIM)
