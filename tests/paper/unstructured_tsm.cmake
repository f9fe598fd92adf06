# SPDX-License-Identifier: BSD-3-Clause
# unstructured's TSM versions (one executable per step of the paper's Table 2).
foreach(step initial partition1 partition2 padding reduction)
  foreach(n 1 2 4)
    set(test unstructured_tsm_${step}.n${n})
    add_test(NAME ${test} COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:unstructured_tsm_${step}>
      --nodes 2000 --iterations 5 --json)
    set_tests_properties(${test} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 120
      PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"tsm_${step}\",\"nodes\":${n},.*\"checksum_ok\":\"true\".*}\n$")
  endforeach()
endforeach()

# The counts fall from step to step (2 nodes, small size).
add_test(NAME unstructured_tsm_steps
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/unstructured_tsm_steps.sh $<TARGET_FILE:squallrun> $<TARGET_FILE_DIR:unstructured_tsm_initial>)
set_tests_properties(unstructured_tsm_steps PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "\nok\n$")
