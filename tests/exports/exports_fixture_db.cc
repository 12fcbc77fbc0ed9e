// SPDX-License-Identifier: Apache-2.0
// Writes the fixture DBs of the export tests for the browser check:
//   exports_fixture_db SWEEPS.db PERFETTO.db [PROFILE.db]
// SWEEPS.db: two sweeps (export_fixtures.h, write_sweep_db); PERFETTO.db: run 1 with an event of every
// kind the Perfetto export maps; PROFILE.db: run 1, a job with a CPU profile (add_profiled_job).
#include <exception>
#include <iostream>

#include "tests/exports/export_fixtures.h"

namespace testing = ingero::reports::testing;

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: exports_fixture_db SWEEPS.db PERFETTO.db [PROFILE.db]\n";
    return 2;
  }
  try {
    testing::write_sweep_db(argv[1]);
    auto db = testing::TraceFixture::create(argv[2]);
    testing::add_perfetto_run(*db);
    if (argc == 4) testing::add_profiled_job(*testing::TraceFixture::create(argv[3]));
  } catch (const std::exception& e) {
    std::cerr << "exports_fixture_db: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
