# cmake -DTESSERA=<bin> -DSUITE=<dir> -DFLOOR=<n> [-DEXTRA=--round-trip] -P conformance_floor.cmake
# Runs `tessera conformance SUITE [EXTRA]` and fails when fewer than FLOOR cases pass
# (or the run crashes). The floor is the committed pass count: raise it when
# more cases pass, never lower it silently.
foreach(var TESSERA SUITE FLOOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "conformance_floor.cmake: -D${var}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${TESSERA} conformance ${SUITE} ${EXTRA}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
# 0: all ran cases passed, 1: some failed; anything else is a crash or internal error.
if(NOT rc STREQUAL "0" AND NOT rc STREQUAL "1")
  message(FATAL_ERROR "tessera conformance ${SUITE} exited with '${rc}'\n${err}")
endif()
string(REGEX MATCH "([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped" summary "${out}")
if(NOT summary)
  message(FATAL_ERROR "no 'N passed, N failed, N skipped' line in the output of ${SUITE}:\n${out}")
endif()
set(passed ${CMAKE_MATCH_1})
set(failed ${CMAKE_MATCH_2})
set(skipped ${CMAKE_MATCH_3})
message(STATUS "${SUITE}: ${passed} passed, ${failed} failed, ${skipped} skipped (floor ${FLOOR})")
if(passed LESS FLOOR)
  string(REGEX MATCHALL "FAIL [^\n]*" fails "${out}")
  string(REPLACE ";" "\n" fails "${fails}")
  message(FATAL_ERROR "${SUITE}: ${passed} cases pass, below the committed floor of ${FLOOR}\n${fails}")
endif()
