# SPDX-License-Identifier: BSD-3-Clause
# Checkpoint on 4 nodes, restart on 2 and on 3: the three jobs must print the same RESULT.
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
file(REMOVE_RECURSE ${DIR})
