// SPDX-License-Identifier: Apache-2.0
// What the MCP client tests share: counted checks that throw a Mismatch, the SDK loaded
// with its fix when missing, and the text of a tool result.
import { isDeepStrictEqual } from 'node:util';

export const FIX = 'run `npm ci --prefix tests/node`';

export class Mismatch extends Error {}

let count = 0;
export const checksMade = () => count;

export function check(condition, what) {
  count += 1;
  if (!condition) throw new Mismatch(what);
}

export function checkEqual(actual, expected, what) {
  check(isDeepStrictEqual(actual, expected),
        `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

// Dynamic imports so that a missing SDK is reported with its fix, not as a bare resolution error.
export async function loadSdk() {
  try {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    return { Client, StdioClientTransport };
  } catch (error) {
    throw new Mismatch(`cannot load @modelcontextprotocol/sdk (${error.message}): ${FIX}`);
  }
}

export function textOf(result) {
  check(Array.isArray(result.content) && result.content.length >= 1, `content is a non-empty array: ${JSON.stringify(result)}`);
  check(result.content[0].type === 'text', `content[0] is text: ${JSON.stringify(result.content[0])}`);
  return result.content[0].text;
}
