# SPDX-License-Identifier: BSD-3-Clause
# unstructured's CHAOS, XSM and MPI versions at the small size (--nodes 2000 --iterations 5).
foreach(version chaos xsm_direct_reduction xsm_block_update xsm_node_update)
  if(NOT TARGET unstructured_${version})
    continue()
  endif()
  foreach(n 1 2 4)
    set(test unstructured_${version}.n${n})
    add_test(NAME ${test} COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:unstructured_${version}>
      --nodes 2000 --iterations 5 --json)
    set_tests_properties(${test} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 120
      PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"${version}\",\"nodes\":${n},.*\"checksum_ok\":\"true\".*}\n$")
  endforeach()
endforeach()
if(TARGET unstructured_mpi AND MPIEXEC_EXECUTABLE)
  foreach(n 1 2 4)
    set(test unstructured_mpi.n${n})
    add_test(NAME ${test} COMMAND ${MPIEXEC_EXECUTABLE} -n ${n} --oversubscribe --bind-to none
      $<TARGET_FILE:unstructured_mpi> --nodes 2000 --iterations 5 --json)
    set_tests_properties(${test} PROPERTIES LABELS "apps;paper;mpirun;no-sanitizer" TIMEOUT 120
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"mpi\",\"nodes\":${n},.*\"checksum_ok\":\"true\".*}\n$")
  endforeach()
endif()

# A mesh of fewer nodes than the job (--nodes 5 makes 8; 9 nodes or processes) cannot give
# every node a part: CHAOS's RCB and the MPI version's refused it, each in its own words and
# with status 1, while the TSM versions ran. Every version now refuses it alike (status 2),
# node 0 (rank 0) alone saying why.
set(too_small_said "--nodes 5 makes a mesh of 8 nodes, too few to give each of the job's 9 nodes \\(or MPI processes\\) a part")
foreach(version chaos xsm_direct_reduction xsm_block_update xsm_node_update tsm_initial tsm_partition1 tsm_partition2
        tsm_padding tsm_reduction)
  if(NOT TARGET unstructured_${version})
    continue()
  endif()
  add_test(NAME unstructured_${version}.mesh_smaller_than_job
    COMMAND sh -c "\"$@\"; echo \"exit status $?\"" sh $<TARGET_FILE:squallrun> -n 9
      $<TARGET_FILE:unstructured_${version}> --nodes 5 --iterations 2)
  set_tests_properties(unstructured_${version}.mesh_smaller_than_job PROPERTIES LABELS "apps;paper;multinode"
    TIMEOUT 120 PASS_REGULAR_EXPRESSION "unstructured_${version}: ${too_small_said}.*exit status 2\n$"
    FAIL_REGULAR_EXPRESSION "unstructured_${version}: ${too_small_said}.*unstructured_${version}: ${too_small_said}")
endforeach()
if(TARGET unstructured_mpi AND MPIEXEC_EXECUTABLE)
  add_test(NAME unstructured_mpi.mesh_smaller_than_job
    COMMAND sh -c "\"$@\"; echo \"exit status $?\"" sh ${MPIEXEC_EXECUTABLE} -n 9 --oversubscribe --bind-to none
      $<TARGET_FILE:unstructured_mpi> --nodes 5 --iterations 2)
  set_tests_properties(unstructured_mpi.mesh_smaller_than_job PROPERTIES LABELS "apps;paper;mpirun;no-sanitizer"
    TIMEOUT 120 ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    PASS_REGULAR_EXPRESSION "unstructured_mpi: ${too_small_said}.*exit status 2\n$"
    FAIL_REGULAR_EXPRESSION "unstructured_mpi: ${too_small_said}.*unstructured_mpi: ${too_small_said}")
endif()

# The MPI version's serial partition is the Squall versions' chaos partition; the renaming
# gives each node whole blocks.
if(TARGET squall_app_unstructured_parallel AND TARGET squall_multinode_main)
  add_executable(unstructured_partition_test ${CMAKE_CURRENT_LIST_DIR}/unstructured_partition_test.cpp
    $<TARGET_OBJECTS:squall_multinode_main>)
  target_link_libraries(unstructured_partition_test PRIVATE squall_app_unstructured_parallel GTest::gtest squall_warnings)
  # 3 nodes too: blocks of the edge and face lists that do not divide evenly.
  foreach(n 1 2 3 4)
    add_test(NAME unstructured_partition_test.n${n} COMMAND $<TARGET_FILE:squallrun> -n ${n}
      $<TARGET_FILE:unstructured_partition_test>)
    set_tests_properties(unstructured_partition_test.n${n} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 120)
  endforeach()
endif()
# (The plain Open MPI version is labelled no-sanitizer: it is not Squall's code, and under ASan
# Open MPI's own allocations, kept for the process's life, are reported as leaks.)
