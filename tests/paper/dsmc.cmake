# SPDX-License-Identifier: BSD-3-Clause
# DSMC's versions at the small size: the JSON line must say checksum_ok true (the exact
# sequential checksum), and the exit status is 1 otherwise.
set(squall_dsmc_small --cells 12 8 8 --steps 40 --json)
set(squall_dsmc_ok "\"app\":\"dsmc\".*\"checksum_ok\":\"true\"")
foreach(version chaos tsm xsm)
  if(NOT TARGET dsmc_${version})
    continue()
  endif()
  foreach(n 1 2 4)
    add_test(NAME paper_dsmc_${version}.n${n}
             COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:dsmc_${version}> ${squall_dsmc_small})
    set_tests_properties(paper_dsmc_${version}.n${n} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 300
                         PASS_REGULAR_EXPRESSION "${squall_dsmc_ok}")
  endforeach()
endforeach()
# A receive buffer too small for the gas (here 150 particles a cell): the run ends with the
# message naming it, found by one node alone, not with the collective mismatch its unwinding
# caused.
if(TARGET dsmc_tsm)
  add_test(NAME paper_dsmc_tsm.overflow
           COMMAND $<TARGET_FILE:squallrun> -n 2 $<TARGET_FILE:dsmc_tsm> --cells 12 8 8 --per-cell 150 --steps 1)
  set_tests_properties(paper_dsmc_tsm.overflow PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "dsmc_tsm: node [0-9]+'s side receive buffer \\([0-9]+ particles\\) overflowed"
                       FAIL_REGULAR_EXPRESSION "collective mismatch")
endif()
find_package(MPI QUIET COMPONENTS CXX)
if(TARGET dsmc_mpi AND MPIEXEC_EXECUTABLE)
  foreach(n 1 2 4)
    add_test(NAME paper_dsmc_mpi.n${n}
             COMMAND ${MPIEXEC_EXECUTABLE} -n ${n} --oversubscribe --bind-to none $<TARGET_FILE:dsmc_mpi>
                     ${squall_dsmc_small})
    set_tests_properties(paper_dsmc_mpi.n${n} PROPERTIES LABELS "apps;paper;mpirun;no-sanitizer" TIMEOUT 300
                         PASS_REGULAR_EXPRESSION "${squall_dsmc_ok}"
                         ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endif()
# (The plain Open MPI version is labelled no-sanitizer: it is not Squall's code, and under ASan
# Open MPI's own allocations, kept for the process's life, are reported as leaks.)
