# Included by tests/CMakeLists.txt (its directory scope).
# The class kit (tests/class/, label "class"): each break-it lab's symptom as
# the lab sheet states it ("class:symptom:<bug>", named as in the
# facilitator's key, bugs/ANSWERS.md, which gives each bug's lab code; and a
# few controls against the unbroken rungs), planted in a scratch copy and built with the rung's
# Makefile, as students do.
if(NOT LADDER_SANITIZE STREQUAL "thread")
  add_executable(symptoms class/symptoms.c)
  target_link_libraries(symptoms PRIVATE ladder_harness)
  foreach(lab sigpipe dropped-tail short-write write-interest emfile-spin blocking-listener
              fd-setsize eintr-fatal leak leak-quiet no-reaper reaper-once parent-keeps-fd
              thread-fd-closed shared-buffer reuseport et-one-read)
    add_test(NAME class:symptom:${lab}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/symptoms.sh $<TARGET_FILE:symptoms>
                     ${lab})
    set_tests_properties(class:symptom:${lab} PROPERTIES TIMEOUT 120 LABELS "class;symptom"
                         SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME class:symptom-controls
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/symptoms.sh $<TARGET_FILE:symptoms>
                   --control sigpipe dropped-tail short-write eintr-fatal blocking-listener
                   et-one-read)
  set_tests_properties(class:symptom-controls PROPERTIES TIMEOUT 180 LABELS "class;symptom"
                       SKIP_RETURN_CODE 77)

  # scripts/doctor.sh on this machine, then made to lack a compiler, clang
  # a new enough cmake or enough descriptors: it must say so and exit 1.
  foreach(case ready no-compiler no-clang old-cmake low-fds)
    add_test(NAME class:doctor-${case}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/doctor_check.sh ${case})
    set_tests_properties(class:doctor-${case} PROPERTIES TIMEOUT 60 LABELS "class;doctor"
                                                        SKIP_RETURN_CODE 77)
  endforeach()

  # The time-outs below only stop a hang. These tests run in the crowd of
  # the test command, where they take up to ten times what they take alone
  # (lab-secrecy: 26 s alone, 240 s there; lab-rehearsal: 12 s, 113 s).
  # A student played on the kits that `scripts/lab.sh kit` makes, as cloned:
  # every git command and file look must find nothing of any lab (and must
  # find lab L1 in a clone of this repository with it planted, the control).
  add_test(NAME class:lab-secrecy COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_secrecy.sh)
  set_tests_properties(class:lab-secrecy PROPERTIES TIMEOUT 900 LABELS "class")
  # The facilitator's rehearsal here: every lab planted in a scratch clone
  # stays out of git show, diff and status; reset gives the tree back.
  add_test(NAME class:lab-rehearsal COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_rehearsal.sh)
  set_tests_properties(class:lab-rehearsal PROPERTIES TIMEOUT 600 LABELS "class")
  # Every lab and solution still applies and compiles after a refactor of
  # the code around them (a scratch copy: comments, banners, two functions
  # swapped), which the line patches of the tree as it was do not survive.
  add_test(NAME class:lab-refactor COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_refactor.sh)
  set_tests_properties(class:lab-refactor PROPERTIES TIMEOUT 600 LABELS "class")

  # One per-platform lab list (docs/workshop/bugs/labs.txt) against the
  # patches, the lab sheet, the documents' tables and doctor.sh; again under
  # posh and BWK awk where they are installed.
  add_test(NAME class:lab-platforms COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_platforms.sh)
  set_tests_properties(class:lab-platforms PROPERTIES TIMEOUT 120 LABELS "class")
  find_program(LADDER_POSH posh)
  find_program(LADDER_ORIGINAL_AWK original-awk)
  if(LADDER_POSH AND LADDER_ORIGINAL_AWK)
    file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/class-bwk-awk)
    file(CREATE_LINK ${LADDER_ORIGINAL_AWK} ${CMAKE_CURRENT_BINARY_DIR}/class-bwk-awk/awk SYMBOLIC)
    add_test(NAME class:lab-platforms-posh
             COMMAND ${CMAKE_COMMAND} -E env
                     "PATH=${CMAKE_CURRENT_BINARY_DIR}/class-bwk-awk:$ENV{PATH}"
                     LAB_SH=${LADDER_POSH}
                     ${LADDER_POSH} ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_platforms.sh)
    set_tests_properties(class:lab-platforms-posh PROPERTIES TIMEOUT 120 LABELS "class")
  endif()
  # Every lab's plant and check on the emulated Mac path (LADDER_FORCE_PORTABLE=1,
  # posh, BWK awk): RED then GREEN, or "not on this system" (77), never a lie.
  # It builds a scratch clone's dev tree, then checks each lab: two minutes,
  # so in two halves side by side, about a minute each: L3, L12 and L15 (the
  # longest, L15 checked for real), and every other lab (L6 checked for real).
  set(_labs L3 L12 L15)
  add_test(NAME class:lab-verdicts-1
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_verdicts.sh ${_labs})
  add_test(NAME class:lab-verdicts-2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/lab_verdicts.sh --except ${_labs})
  set_tests_properties(class:lab-verdicts-1 class:lab-verdicts-2 PROPERTIES TIMEOUT 1200
                       LABELS "class")

  # A selection of tests that matches nothing fails, in ctest's presets and
  # in scripts/test.sh (which then builds and runs nothing).
  add_test(NAME class:empty-selection
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/empty_selection.sh)
  set_tests_properties(class:empty-selection PROPERTIES TIMEOUT 120 LABELS "class")

  # The guide's student commands in order on a scratch clone: an edit, a
  # git apply, a git apply -R and a planted lab, each followed by a check
  # that must see it (a check passing against a stale build fails it).
  add_test(NAME class:student-steps COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/class/student_steps.sh)
  set_tests_properties(class:student-steps PROPERTIES TIMEOUT 300 LABELS "class"
                       SKIP_RETURN_CODE 77)
endif()
