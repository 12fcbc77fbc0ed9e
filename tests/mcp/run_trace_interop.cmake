# SPDX-License-Identifier: Apache-2.0
# Runs EXPLAIN_CMD (prints `explain --json` of RUN) into a file, then
# `node tests/node/trace_interop.mjs --db DB --run RUN --compare-with OTHER_RUN --explain FILE -- SERVER`.
# SERVER and EXPLAIN_CMD are command lines as CMake lists, so that they can become
# `ingero-bench mcp --db DB` and `ingero-bench explain --db DB --run RUN --json`.
# Fails with the fix when Node or the SDK is not installed: a missing client never passes silently.
foreach(var NODE_DIR DB RUN OTHER_RUN SERVER EXPLAIN_CMD WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_trace_interop.cmake needs -D${var}=...")
  endif()
endforeach()
find_program(NODE_EXECUTABLE node)
set(fix "run `npm ci --prefix tests/node` (needs Node.js >= 18)")
if(NOT NODE_EXECUTABLE)
  message(FATAL_ERROR "node is not on PATH: install Node.js >= 18 and ${fix}")
endif()
if(NOT EXISTS "${NODE_DIR}/node_modules/@modelcontextprotocol/sdk/package.json")
  message(FATAL_ERROR "${NODE_DIR}/node_modules has no @modelcontextprotocol/sdk: ${fix}")
endif()

file(MAKE_DIRECTORY "${WORK_DIR}")
set(expected "${WORK_DIR}/explain-run-${RUN}.json")
execute_process(COMMAND ${EXPLAIN_CMD} OUTPUT_FILE "${expected}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "EXPLAIN_CMD (${EXPLAIN_CMD}) failed (${status})")
endif()

execute_process(
  COMMAND ${NODE_EXECUTABLE} ${NODE_DIR}/trace_interop.mjs --db ${DB} --run ${RUN} --compare-with ${OTHER_RUN}
          --explain ${expected} -- ${SERVER}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "trace_interop.mjs failed (${status})")
endif()
