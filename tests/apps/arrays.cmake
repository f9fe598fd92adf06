# SPDX-License-Identifier: BSD-3-Clause
# libarrays' examples (apps/arrays) at their --small sizes on 1, 2 and 4 nodes: each compares
# itself with its sequential version on node 0 and prints OK (after every node has finished)
# or MISMATCH. The quadtree mesh makes 16 adaptations in 80 steps (44 leaves refine, 16 sets of
# 4 coarsen); the voxels are deleted and created again as the boxes move. The _migrate runs
# move every Jacobi block (quadtree leaf, box) to the next node every 2 steps.
set(arrays_apps_jacobi arrays_jacobi --small)
set(arrays_apps_jacobi_migrate arrays_jacobi --small --migrate-every 2)
set(arrays_apps_docindex arrays_docindex --small)
set(arrays_apps_quadtree arrays_quadtree --small)
set(arrays_apps_quadtree_migrate arrays_quadtree --small --migrate-every 2)
set(arrays_apps_voxels arrays_voxels --small)
set(arrays_apps_voxels_migrate arrays_voxels --small --migrate-every 2)
foreach(run jacobi jacobi_migrate docindex quadtree quadtree_migrate voxels voxels_migrate)
  list(POP_FRONT arrays_apps_${run} program)
  foreach(n 1 2 4)
    add_test(NAME apps_arrays_${run}.n${n}
      COMMAND $<TARGET_FILE:squallrun> -n ${n} $<TARGET_FILE:${program}> ${arrays_apps_${run}})
    set_tests_properties(apps_arrays_${run}.n${n} PROPERTIES LABELS "apps;arrays;multinode" TIMEOUT 300
      PASS_REGULAR_EXPRESSION "(^|\n)OK\r?\n" FAIL_REGULAR_EXPRESSION "MISMATCH")
  endforeach()
endforeach()
