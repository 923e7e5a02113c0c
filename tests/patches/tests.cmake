# Included by tests/CMakeLists.txt (its directory scope) in the workshop
# preset's build (LADDER_WORKSHOP_CHECKS; scripts/check-workshop.sh): the
# workshop's patches still apply and do what they say, label "workshop".
#
# Each patch (docs/workshop/solutions/NAME.edits, docs/workshop/bugs/L*.edits)
# is one fixture: "NAME:build" applies it to a scratch copy of this tree and
# builds what it changes by the dev preset (tests/patches/tree.sh), then its
# tests run against those servers, named "<rung>.NAME:<test>" so that the
# suite's scheduling (the lists below in tests/CMakeLists.txt) treats them
# as the <test> they are, and `ctest -R 05-poll:half-close` does not pick
# them:
#   solution: every test of the rungs whose folders it changes (every rung,
#     if it changes only common/) except its Changes: ones, plus the tests
#     it Adds: (run alone). A test that skips itself (77) is skipped.
#   bug: every test named in Caught-by: must fail (tests/patches/caught.sh;
#     skipping catches nothing).
# The builds share one scratch tree, "workshop:tree" copies it afresh each
# run, and a lock keeps them one at a time. Label "patch=NAME" selects one.
set(_wdir ${CMAKE_CURRENT_SOURCE_DIR}/patches)
set(_wtree ${CMAKE_CURRENT_BINARY_DIR}/workshop/tree)
get_property(_suite DIRECTORY PROPERTY TESTS)
add_test(NAME workshop:tree COMMAND sh ${_wdir}/tree.sh copy ${PROJECT_SOURCE_DIR} ${_wtree})
set_tests_properties(workshop:tree PROPERTIES TIMEOUT 120 LABELS workshop
                     FIXTURES_SETUP workshop-tree RESOURCE_LOCK workshop-tree)


file(GLOB _wpatches CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/workshop/solutions/*.edits
     ${PROJECT_SOURCE_DIR}/docs/workshop/bugs/*.edits)
foreach(_edits ${_wpatches})
  get_filename_component(_name ${_edits} NAME_WE)
  get_filename_component(_kind ${_edits} DIRECTORY)
  get_filename_component(_kind ${_kind} NAME)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/workshop/${_name})
  set(_labels "workshop;patch=${_name}")
  # The description's "Key: words" lines (before the first edit).
  file(STRINGS ${_edits} _lines REGEX "^(Caught-by|Changes|Adds): |^@@ ")
  set(_caught)
  set(_changes)
  set(_adds)
  set(_rungs)
  # What makes the patch's description wrong: "NAME:unchecked" fails, saying it.
  set(_why)
  foreach(_l ${_lines})
    if(_l MATCHES "^(Caught-by|Changes|Adds): (.*)$")
      set(_key ${CMAKE_MATCH_1})
      string(REGEX REPLACE "[ \t]+" ";" _words "${CMAKE_MATCH_2}")
      list(REMOVE_ITEM _words "")
      if(_key STREQUAL "Caught-by")
        list(APPEND _caught ${_words})
      elseif(_key STREQUAL "Changes")
        list(APPEND _changes ${_words})
      else()
        list(APPEND _adds ${_words})
      endif()
    elseif(_l MATCHES "^@@ [a-z]+ (beyond/)?([0-9][0-9]-[^/ ]*)/")
      # A solution's rung folders (a bug's edits are rot13'd: its rungs are
      # its Caught-by: ones, and tree.sh builds whatever it touches).
      list(APPEND _rungs ${CMAKE_MATCH_2})
    endif()
  endforeach()
  set(_targets)
  set(_tests)
  if(_kind STREQUAL "bugs")
    if(NOT _caught)
      list(APPEND _why "no Caught-by: line")
    endif()
    foreach(_t ${_caught})
      if(NOT _t IN_LIST _suite)
        list(APPEND _why "Caught-by: ${_t} is no test of the suite")
        continue()
      endif()
      string(REGEX REPLACE ":.*" "" _rung ${_t})
      string(REGEX REPLACE "^[^:]*:" "" _test ${_t})
      list(APPEND _targets ${_rung})
      add_test(NAME ${_rung}.${_name}:${_test}
               COMMAND sh ${_wdir}/caught.sh $<TARGET_FILE:echo_tests> ${_out}/${_rung} ${_test})
      list(APPEND _tests ${_rung}.${_name}:${_test})
    endforeach()
  else()
    if(NOT _rungs)
      set(_rungs ${ALL_RUNGS})
    endif()
    list(REMOVE_DUPLICATES _rungs)
    foreach(_t ${_changes} ${_adds})
      if(NOT _t IN_LIST _suite AND NOT _t IN_LIST _adds)
        list(APPEND _why "Changes: ${_t} is no test of the suite")
      endif()
    endforeach()
    foreach(_t ${_suite})
      string(REGEX REPLACE ":.*" "" _rung ${_t})
      string(REGEX REPLACE "^[^:]*:" "" _test ${_t})
      if(_rung IN_LIST _rungs AND NOT _t IN_LIST _changes)
        add_test(NAME ${_rung}.${_name}:${_test}
                 COMMAND echo_tests ${_out}/${_rung} ${_test})
        set_tests_properties(${_rung}.${_name}:${_test} PROPERTIES SKIP_RETURN_CODE 77)
        list(APPEND _tests ${_rung}.${_name}:${_test})
      endif()
    endforeach()
    set(_targets ${_rungs})
    # What it Adds: its tests/workshop/*.cmake's add_test(NAME RUNG:TEST
    # COMMAND PROGRAM $<TARGET_FILE:RUNG>), with PROGRAM built in the tree.
    file(STRINGS ${_edits} _added REGEX "^\\+ *add_test\\(NAME ")
    foreach(_t ${_adds})
      set(_found)
      foreach(_l ${_added})
        if(_l MATCHES "add_test\\(NAME ${_t} COMMAND ([^ ]+) \\$<TARGET_FILE:([^>]+)>\\)")
          set(_found ${CMAKE_MATCH_1})
          set(_rung ${CMAKE_MATCH_2})
        endif()
      endforeach()
      if(NOT _found)
        list(APPEND _why "Adds: ${_t}, which no added add_test() names")
        continue()
      endif()
      string(REGEX REPLACE "^[^:]*:" "" _test ${_t})
      list(APPEND _targets ${_found})
      add_test(NAME ${_rung}.${_name}:${_test} COMMAND ${_out}/${_found} ${_out}/${_rung})
      set_tests_properties(${_rung}.${_name}:${_test} PROPERTIES RUN_SERIAL ON)
      list(APPEND _tests ${_rung}.${_name}:${_test})
    endforeach()
  endif()
  if(NOT _tests AND NOT _why)
    list(APPEND _why "no test to run (it touches no rung?)")
  endif()
  if(_why)
    string(REPLACE ";" "; " _why "${_why}")
    add_test(NAME ${_name}:unchecked COMMAND sh -c "echo '${_edits}: ${_why}'; exit 1")
    set_tests_properties(${_name}:unchecked PROPERTIES LABELS "${_labels}")
  endif()
  if(NOT _tests)
    continue()
  endif()
  list(REMOVE_DUPLICATES _targets)
  # The scratch tree is built with this tree's compiler.
  add_test(NAME ${_name}:build
           COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER}
                   sh ${_wdir}/tree.sh build ${PROJECT_SOURCE_DIR} ${_wtree} ${_edits} ${_out}
                   ${_targets})
  set_tests_properties(${_name}:build PROPERTIES TIMEOUT 600 LABELS "${_labels}"
                       FIXTURES_REQUIRED workshop-tree FIXTURES_SETUP workshop-${_name}
                       RESOURCE_LOCK workshop-tree)
  set_tests_properties(${_tests} PROPERTIES TIMEOUT ${LADDER_TEST_TIMEOUT} LABELS "${_labels}"
                       FIXTURES_REQUIRED workshop-${_name})
endforeach()
