# SPDX-License-Identifier: BSD-3-Clause
# moldyn's parallel versions at the small size; each must print checksum_ok true (exit 0).
set(moldyn_small --cells 6 --steps 6 --rebuild-every 4 --json)
foreach(version chaos tsm_late_commit tsm_reduction xsm_bulk_reduction)
  foreach(n 1 2 4)
    add_test(NAME paper_moldyn_${version}.n${n}
      COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:moldyn_${version}> ${moldyn_small})
    set_tests_properties(paper_moldyn_${version}.n${n} PROPERTIES LABELS "apps;paper;multinode" TIMEOUT 300
      PASS_REGULAR_EXPRESSION "\"checksum_ok\":\"?true")
  endforeach()
endforeach()
# Blocks of 1 MiB on 4 nodes: a home's grant sent from its own fault waits for room in the
# lane, and a third node's request came in meanwhile; its invalidation overtook the grant,
# two nodes held the block writable and a write was lost (checksum_ok false in 6 of 16 runs;
# tsm_grant_race_test makes the same race in every run).
add_test(NAME paper_moldyn_tsm_reduction.n4.block_1MiB
  COMMAND $<TARGET_FILE:squallrun> -n 4 $<TARGET_FILE:moldyn_tsm_reduction> ${moldyn_small} --block-size 1048576)
set_tests_properties(paper_moldyn_tsm_reduction.n4.block_1MiB PROPERTIES LABELS "apps;paper;multinode;tsm" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "\"checksum_ok\":\"?true")
find_package(MPI COMPONENTS CXX)
if(TARGET moldyn_mpi AND MPIEXEC_EXECUTABLE)
  foreach(n 1 2 4)
    add_test(NAME paper_moldyn_mpi.n${n}
      COMMAND ${MPIEXEC_EXECUTABLE} -n ${n} --oversubscribe --bind-to none $<TARGET_FILE:moldyn_mpi> ${moldyn_small})
    # Open MPI refuses to start as root unless told; CI runs as root.
    set_tests_properties(paper_moldyn_mpi.n${n} PROPERTIES LABELS "apps;paper;mpirun;no-sanitizer" TIMEOUT 300
      PASS_REGULAR_EXPRESSION "\"checksum_ok\":\"?true"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endif()
# (The plain Open MPI version is labelled no-sanitizer: it is not Squall's code, and under ASan
# Open MPI's own allocations, kept for the process's life, are reported as leaks.)
