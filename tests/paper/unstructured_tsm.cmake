# SPDX-License-Identifier: BSD-3-Clause
# unstructured's TSM versions (one executable per step of the paper's Table 2).
# The initial step (a lock per update of an external node, half the edges cut) runs a smaller
# mesh: at the small size it takes 8 s on 4 nodes optimised and over 2 minutes under ASan.
foreach(step initial partition1 partition2 padding reduction)
  set(size --nodes 2000 --iterations 5)
  if(step STREQUAL "initial")
    set(size --nodes 1000 --iterations 2)
  endif()
  foreach(n 1 2 4)
    set(test unstructured_tsm_${step}.n${n})
    add_test(NAME ${test} COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:unstructured_tsm_${step}>
      ${size} --json)
    set_tests_properties(${test} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 600
      PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"tsm_${step}\",\"nodes\":${n},.*\"checksum_ok\":\"true\".*}\n$")
  endforeach()
endforeach()

# Blocks of 1 MiB under the initial step's locks and false sharing: the home's own write
# misses send invalidations that may wait for room while the whole-block answers come in (a
# second grant of one transaction, to no node, ended node 0 by SIGSEGV in most runs).
add_test(NAME unstructured_tsm_initial.n2.block_1MiB COMMAND $<TARGET_FILE:squallrun> -n 2
  $<TARGET_FILE:unstructured_tsm_initial> --nodes 2000 --iterations 5 --block-size 1048576 --json)
set_tests_properties(unstructured_tsm_initial.n2.block_1MiB PROPERTIES LABELS "apps;paper;multinode;tsm" TIMEOUT 600
  PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"tsm_initial\",\"nodes\":2,.*\"checksum_ok\":\"true\".*}\n$")

# The counts fall from step to step (2 nodes, small size).
add_test(NAME unstructured_tsm_steps
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/unstructured_tsm_steps.sh $<TARGET_FILE:squallrun> $<TARGET_FILE_DIR:unstructured_tsm_initial>)
set_tests_properties(unstructured_tsm_steps PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "\nok\n$")
