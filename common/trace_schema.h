// SPDX-License-Identifier: Apache-2.0
// Creating, checking and upgrading the trace DB schema (common/schema.sql). Writers
// create or upgrade a file in place; readers, which never write, upgrade an in-memory
// copy of an older file instead (reports/data/trace_data.cc).
#pragma once

#include <string>

#include "common/result.h"
#include "common/sqlite.h"

namespace ingero::schema {

// PRAGMA user_version of an open file; a file that is not SQLite is bad input naming it.
Result<int> version_of(const sql::Connection& db);

// Empty file: creates the current schema and the ops table. An older version: upgrades it.
// Current version: adds the ops this build knows that the file lacks. Anything else
// (a newer version, a SQLite file that is not a trace DB, ops that disagree) is bad
// input with a message naming the file and what to do.
Status create_or_upgrade(const sql::Connection& db);

// Upgrades an older trace DB (version kOldestReadableSchema on) to the current schema, in one
// transaction.
Status upgrade(const sql::Connection& db, int from_version);

}  // namespace ingero::schema
