# SPDX-License-Identifier: Apache-2.0
# Runs `node tests/node/mcp_interop.mjs -- SERVER`; fails with the fix when
# Node or the SDK is not installed, so a missing client never passes silently.
find_program(NODE_EXECUTABLE node)
set(fix "run `npm ci --prefix tests/node` (needs Node.js >= 18)")
if(NOT NODE_EXECUTABLE)
  message(FATAL_ERROR "node is not on PATH: install Node.js >= 18 and ${fix}")
endif()
if(NOT EXISTS "${NODE_DIR}/node_modules/@modelcontextprotocol/sdk/package.json")
  message(FATAL_ERROR "${NODE_DIR}/node_modules has no @modelcontextprotocol/sdk: ${fix}")
endif()
execute_process(
  COMMAND ${NODE_EXECUTABLE} ${NODE_DIR}/mcp_interop.mjs -- ${SERVER}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "mcp_interop.mjs failed (${status})")
endif()
