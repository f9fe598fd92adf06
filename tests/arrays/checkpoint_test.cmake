# SPDX-License-Identifier: BSD-3-Clause
# Checkpoint on 4 nodes, restart on 2 and on 3: the three jobs must print the same RESULT;
# then with one file emptied, a restart on 3 must fail, naming it.
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
# A damaged file on a restart on another node count: an error naming it, not another RESULT.
file(WRITE ${DIR}/array-0.node-3 "")
execute_process(COMMAND ${SQUALLRUN} -n 3 ${PROGRAM} read ${DIR} OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT err MATCHES "array-0.node-3: 0 bytes, the manifest says [0-9]+")
  message(FATAL_ERROR "restart on 3 nodes from an emptied file gave (${rc}):\n${text}\n${err}")
endif()
message(STATUS "read on 3 nodes with array-0.node-3 emptied: refused")
file(REMOVE_RECURSE ${DIR})
