# SPDX-License-Identifier: BSD-3-Clause
# Checkpoint on 4 nodes, restart on 2 and on 3: the three jobs must print the same RESULT;
# then a checkpoint over it whose last node is killed while it writes its file must leave it
# whole (restart on 2 prints the same RESULT); then with one file emptied, a restart on 3 must
# fail with status 1, every node naming it.
# Run with -DSQUALLRUN=... -DPROGRAM=... -DDIR=...
file(REMOVE_RECURSE ${DIR})
function(run nodes mode out)
  execute_process(COMMAND ${SQUALLRUN} -n ${nodes} ${PROGRAM} ${mode} ${DIR}
    OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} on ${nodes} nodes failed (${rc}):\n${text}\n${err}")
  endif()
  string(REGEX MATCH "RESULT [0-9a-f]+" line "${text}")
  if(line STREQUAL "")
    message(FATAL_ERROR "${mode} on ${nodes} nodes printed no RESULT:\n${text}\n${err}")
  endif()
  message(STATUS "${mode} on ${nodes} nodes: ${line}")
  set(${out} "${line}" PARENT_SCOPE)
endfunction()
run(4 write written)
run(2 read on_two)
run(3 read on_three)
if(NOT written STREQUAL on_two OR NOT written STREQUAL on_three)
  message(FATAL_ERROR "restart changed the result: 4 nodes ${written}, restarted on 2 ${on_two}, on 3 ${on_three}")
endif()
# A node killed part way through a checkpoint over the first: the job fails, the directory
# still holds the first checkpoint, whole. Before, its files were written over in place, and
# the restart failed on the killed node's truncated file.
execute_process(COMMAND ${SQUALLRUN} -n 4 ${PROGRAM} crash ${DIR} OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "crash on 4 nodes ended with status 0:\n${text}\n${err}")
endif()
message(STATUS "crash on 4 nodes: status ${rc}")
run(2 read after_crash)
if(NOT written STREQUAL after_crash)
  message(FATAL_ERROR "a checkpoint killed part way changed the one its directory held: ${written}, then ${after_crash}")
endif()
# A damaged file on a restart on another node count: an error naming it, not another RESULT;
# exit status 1 (not an abort), and each of the 3 nodes says so in one whole line.
# (the killed checkpoint's partial files are there too: the manifest names the good one's)
file(STRINGS ${DIR}/manifest last REGEX "^array-0[.]node-3[.]")
string(REGEX REPLACE " .*" "" last "${last}")
if(last STREQUAL "")
  message(FATAL_ERROR "the manifest in ${DIR} names no array-0.node-3 file")
endif()
file(WRITE ${DIR}/${last} "")
execute_process(COMMAND ${SQUALLRUN} -n 3 ${PROGRAM} read ${DIR} OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
string(REPLACE "\n" ";" lines "${err}")
set(said 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^checkpoint_program: squall: libarrays: .*/array-0.node-3[.0-9a-f]*: 0 bytes, the manifest says [0-9]+$")
    math(EXPR said "${said} + 1")
  endif()
endforeach()
if(NOT rc EQUAL 1 OR NOT said EQUAL 3)
  message(FATAL_ERROR "restart on 3 nodes from an emptied file gave (${rc}, ${said} of 3 lines):\n${text}\n${err}")
endif()
message(STATUS "read on 3 nodes with array-0.node-3 emptied: refused")
file(REMOVE_RECURSE ${DIR})
