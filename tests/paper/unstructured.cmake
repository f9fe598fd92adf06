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
    set_tests_properties(${test} PROPERTIES LABELS "apps;paper;multinode;mpirun" TIMEOUT 120
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      PASS_REGULAR_EXPRESSION "\n{\"app\":\"unstructured\",\"version\":\"mpi\",\"nodes\":${n},.*\"checksum_ok\":\"true\".*}\n$")
  endforeach()
endif()
