// SPDX-License-Identifier: Apache-2.0
// The command line: bad values are bad input naming the flag, and every ingero-bench
// command the README, the docs, hints and help texts show parses as written.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "common/proc_files.h"
#include "harness/cli.h"
#include "harness/commands.h"

namespace ingero::harness {
namespace {

namespace fs = std::filesystem;

Result<ParsedCommand> parse(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> args;
  for (std::string word; in >> word;) {
    if (word.size() >= 2 && (word.front() == '\'' || word.front() == '"') && word.back() == word.front())
      word = word.substr(1, word.size() - 2);
    args.push_back(word);
  }
  return parse_command_line(args);
}

// The flags' defaults are the tracer's own: a command line that sets none of them hands the tracer
// its defaults unchanged (cli.h takes them from tracer::TraceOptions; tracer_options converts back).
TEST(Cli, TraceFlagDefaultsAreTheTracersOwn) {
  auto parsed = parse("trace --duration 1s");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto options = tracer_options(parsed->trace.trace);
  ASSERT_TRUE(options.ok()) << options.error().message;
  const tracer::TraceOptions d;
  const tracer::TraceOptions& o = *options;
  EXPECT_EQ(o.system_wide, d.system_wide);
  EXPECT_EQ(o.cuda_detail, d.cuda_detail);
  EXPECT_EQ(o.call_stream_min_ns, d.call_stream_min_ns);
  EXPECT_EQ(o.offcpu_min_ns, d.offcpu_min_ns);
  EXPECT_EQ(o.iowait_min_ns, d.iowait_min_ns);
  EXPECT_EQ(o.runq_min_ns, d.runq_min_ns);
  EXPECT_EQ(o.mem_burst_pages, d.mem_burst_pages);
  EXPECT_EQ(o.mem_burst_min_ns, d.mem_burst_min_ns);
  EXPECT_EQ(o.ringbuf_bytes, d.ringbuf_bytes);
  EXPECT_EQ(o.gpu_samples, d.gpu_samples);
  EXPECT_EQ(o.wakers, d.wakers);
  EXPECT_EQ(o.program_time, d.program_time);
  EXPECT_EQ(o.profile_hz, d.profile_hz);
  EXPECT_EQ(o.health_interval_ns, d.health_interval_ns);
  EXPECT_EQ(o.hang_after_ns, d.hang_after_ns);
  EXPECT_EQ(o.db_max_bytes, d.db_max_bytes);
  EXPECT_DOUBLE_EQ(o.sampling.hot_share, d.sampling.hot_share);
  EXPECT_EQ(o.sampling.window_ns, d.sampling.window_ns);
  EXPECT_EQ(o.sampling.period_ns, d.sampling.period_ns);
  // The main job's and the sweep's flags start from the same defaults.
  auto job = parse("--workload dataloader --no-trace");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->workload.trace.offcpu_min_us, parsed->trace.trace.offcpu_min_us);
  EXPECT_EQ(job->workload.trace.profile_hz, parsed->trace.trace.profile_hz);
}

TEST(Cli, BadValuesAreBadInputNamingTheFlag) {
  struct Case {
    const char* line;
    const char* names;
  };
  for (const Case& c : {Case{"--workload dataloader --epochs x", "--epochs"},
                        Case{"--workload dataloader --nonsense", "--nonsense"},
                        Case{"--workload dataloader --ringbuf-mb 0", "--ringbuf-mb"},
                        Case{"explain --db", "--db"},
                        Case{"explain --db t.db --run abc", "--run"},
                        Case{"explain --db t.db --run -4", "--run"},
                        Case{"compare --db t.db 1", "runs"},
                        Case{"sweep --max-repeats 0", "--max-repeats"}}) {
    auto parsed = parse(c.line);
    ASSERT_FALSE(parsed.ok()) << c.line << " parsed";
    EXPECT_EQ(parsed.error().exit_code, kExitBadInput) << c.line;
    EXPECT_NE(parsed.error().message.find(c.names), std::string::npos) << c.line << ": " << parsed.error().message;
  }
}

// Values that parse as numbers or strings but mean nothing sensible: NaN passes CLI11's ranges,
// "-1" becomes 2^64 - 1 in an unsigned seed, '' means "not given" (--pid '' a system-wide trace).
TEST(Cli, NanNegativeSeedsAndEmptyValuesAreBadInput) {
  struct Case {
    const char* line;
    const char* names;
  };
  for (const Case& c : {Case{"--workload dataloader --offcpu-min-us nan", "--offcpu-min-us"},
                        Case{"--workload dataloader --hot-share-pct nan", "--hot-share-pct"},
                        Case{"--workload dataloader --mem-burst-ms inf", "--mem-burst-ms"},
                        Case{"--workload dataloader --seed -1", "--seed"},
                        Case{"--workload dataloader --report ''", "--report"},
                        Case{"--workload dataloader --out ''", "--out"},
                        Case{"--workload dataloader --cudart ''", "--cudart"},
                        Case{"trace --pid ''", "--pid"},
                        Case{"trace --duration '' -- true", "--duration"},
                        Case{"runs --db t.db --report ''", "--report"},
                        Case{"export --db t.db --run 1 --out ''", "--out"}}) {
    auto parsed = parse(c.line);
    ASSERT_FALSE(parsed.ok()) << c.line << " parsed";
    EXPECT_EQ(parsed.error().exit_code, kExitBadInput) << c.line;
    EXPECT_NE(parsed.error().message.find(c.names), std::string::npos) << c.line << ": " << parsed.error().message;
  }
  EXPECT_EQ(parse("--workload dataloader --seed 18446744073709551615")->workload.base.seed, UINT64_MAX);
}

// The folded export takes the newest run when none is given and a role filter; Perfetto needs its run.
TEST(Cli, ExportFoldedTakesARoleAndAnOptionalRun) {
  auto folded = parse("export --db t.db --format folded --role worker --out w.folded");
  ASSERT_TRUE(folded.ok()) << folded.error().message;
  EXPECT_EQ(folded->command, Command::export_trace);
  EXPECT_EQ(folded->export_trace.format, "folded");
  EXPECT_EQ(folded->export_trace.role, "worker");
  EXPECT_FALSE(folded->export_trace.run);
  auto with_run = parse("export --db t.db --format folded --run 3 --out w.folded");
  ASSERT_TRUE(with_run.ok());
  EXPECT_EQ(with_run->export_trace.run, 3);
  auto perfetto = parse("export --db t.db --run 2 --out t.json");
  ASSERT_TRUE(perfetto.ok());
  EXPECT_EQ(perfetto->export_trace.run, 2);
  struct Case {
    const char* line;
    const char* names;
  };
  for (const Case& c : {Case{"export --db t.db --out t.json", "--run"},
                        Case{"export --db t.db --run 1 --role main --out t.json", "--role"},
                        Case{"export --db t.db --format folded --role gpu --out t.folded", "--role"},
                        Case{"export --db t.db --format svg --run 1 --out t.svg", "--format"}}) {
    auto parsed = parse(c.line);
    ASSERT_FALSE(parsed.ok()) << c.line << " parsed";
    EXPECT_EQ(parsed.error().exit_code, kExitBadInput) << c.line;
    EXPECT_NE(parsed.error().message.find(c.names), std::string::npos) << c.line << ": " << parsed.error().message;
  }
}

// CLI11 printed NonNegativeNumber's bound as DBL_MAX in 309 digits.
TEST(Cli, RangeErrorsPrintReadableBounds) {
  for (const char* line : {"--workload dataloader --offcpu-min-us -1", "sweep --budget -5",
                           "--workload dataloader --hot-share-pct 200", "sweep --loader -1"}) {
    auto parsed = parse(line);
    ASSERT_FALSE(parsed.ok()) << line;
    const std::string& message = parsed.error().message;
    EXPECT_LT(message.size(), 200u) << line << ": " << message;
    EXPECT_EQ(message.find("000000"), std::string::npos) << line << ": " << message;
  }
  EXPECT_NE(parse("--workload dataloader --offcpu-min-us -1").error().message.find("at least 0"), std::string::npos);
}

TEST(Cli, APidGivenTwiceIsAttachedOnce) {
  const std::string parent = std::to_string(getppid());
  auto pids = parse_pids(parent + "," + parent);
  ASSERT_TRUE(pids.ok()) << pids.error().message;
  EXPECT_EQ(*pids, std::vector<pid_t>{getppid()});
  EXPECT_FALSE(parse_pids(parent + ",").ok());
}

// A process that has exited but is not reaped yet (a zombie) has nothing left to trace: bad input
// naming it, not a run stored as failed.
TEST(Cli, AZombiePidIsBadInputNamingThatItExited) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  std::optional<proc::Stat> stat;
  for (int i = 0; i < 200 && !(stat && stat->state == 'Z'); ++i) {
    usleep(10'000);
    stat = proc::read_stat(child);
  }
  ASSERT_TRUE(stat && stat->state == 'Z');
  auto pids = parse_pids(std::to_string(child));
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(pids.ok());
  EXPECT_EQ(pids.error().exit_code, kExitBadInput);
  EXPECT_NE(pids.error().message.find("has exited"), std::string::npos) << pids.error().message;
  EXPECT_NE(pids.error().hint.find("running"), std::string::npos) << pids.error().hint;
}

TEST(Cli, TheTracedCommandIsEverythingAfterTheSeparatorFlagsIncluded) {
  for (const char* line : {"trace --db t.db --override num_workers=2 --override loader=0 -- python3 x.py --workers 0 -j 4",
                           "trace --db t.db --cudart /lib/libcudart.so -- python3 x.py --workers 0 -j 4",
                           "trace -- python3 x.py --workers 0 -j 4"}) {
    auto parsed = parse(line);
    ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.error().message;
    const std::vector<std::string> expected = {"python3", "x.py", "--workers", "0", "-j", "4"};
    EXPECT_EQ(parsed->trace.command, expected) << line;
  }
  EXPECT_EQ(parse("trace --override num_workers=2 --override loader=0 -- true")->trace.overrides,
            (std::vector<std::string>{"num_workers=2", "loader=0"}));
  EXPECT_FALSE(parse("explain --db t.db -- python3 x.py").ok());
}

TEST(Cli, IdsAndDurations) {
  EXPECT_EQ(parse_id("--run", "42").value(), 42);
  for (const char* bad : {"", "0", "-1", "+3", "1e3", "12x", "99999999999999999999"})
    EXPECT_FALSE(parse_id("--run", bad).ok()) << bad;
  EXPECT_DOUBLE_EQ(parse_duration("--duration", "60").value(), 60);
  EXPECT_DOUBLE_EQ(parse_duration("--duration", "60s").value(), 60);
  EXPECT_DOUBLE_EQ(parse_duration("--duration", "5m").value(), 300);
  EXPECT_DOUBLE_EQ(parse_duration("--duration", "1h").value(), 3600);
  EXPECT_DOUBLE_EQ(parse_duration("--duration", "250ms").value(), 0.25);
  for (const char* bad : {"", "0", "-5", "5 min", "abc", "1e999"})
    EXPECT_FALSE(parse_duration("--duration", bad).ok()) << bad;
}

TEST(Cli, NothingToDoIsBadInputAndHelpIsNot) {
  auto nothing = parse("");
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(nothing->command, Command::help);
  EXPECT_EQ(nothing->exit_code, kExitBadInput);
  auto help = parse("--help");
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->exit_code, 0);
  EXPECT_NE(help->help_text.find("sweep"), std::string::npos);
}

// The placeholders the texts use, as values the parser accepts.
std::string fill_placeholders(std::string line) {
  static const std::vector<std::pair<std::regex, std::string>> values = {
      {std::regex(R"(\bFILE\b)"), "/tmp/x.db"}, {std::regex(R"(\b(ID|RUN|RUN_A|N|A|PID|PIDS)\b)"), "1"}, {std::regex(R"(\b(RUN_B|B)\b)"), "2"},
      {std::regex(R"(\bPATH\b)"), "/tmp/x"},    {std::regex(R"(\bD\b)"), "60s"},
      {std::regex(R"(\bCMD( ARGS)?\b)"), "true"}};
  for (const auto& [pattern, value] : values) line = std::regex_replace(line, pattern, value);
  return line;
}

// Whether text[pos] lies inside a string literal (sources) or a code span or block (Markdown).
bool in_code(const std::string& text, size_t pos, bool markdown) {
  const size_t line_start = text.rfind('\n', pos) == std::string::npos ? 0 : text.rfind('\n', pos) + 1;
  const std::string before = text.substr(line_start, pos - line_start);
  if (!markdown) return std::count(before.begin(), before.end(), '"') % 2 == 1;
  if (std::count(before.begin(), before.end(), '`') % 2 == 1) return true;
  size_t fences = 0;
  for (size_t at = text.find("```"); at != std::string::npos && at < pos; at = text.find("```", at + 3)) ++fences;
  return fences % 2 == 1;
}

// The command part of `ingero-bench <command or flag> words...`: flags and their values,
// up to the first word that is neither (the prose that follows a command in a sentence).
std::optional<std::string> command_part(const std::string& words) {
  std::istringstream count_in(words), in(words);
  const size_t word_count = static_cast<size_t>(
      std::distance(std::istream_iterator<std::string>(count_in), std::istream_iterator<std::string>()));
  std::vector<std::string> kept;
  bool after_flag = false;
  for (std::string w; in >> w;) {
    if (w == "--") {  // trace -- CMD ARGS: the rest is the traced command
      kept.push_back(w);
      for (std::string rest; in >> rest;) kept.push_back(rest);
      break;
    }
    const bool flag = w.rfind("-", 0) == 0;
    const bool number = w.find_first_not_of("0123456789") == std::string::npos;  // compare's run ids
    const bool db_file = w.size() > 3 && w.compare(w.size() - 3, 3, ".db") == 0;  // merge's inputs
    if (!kept.empty() && !flag && !after_flag && !number && !db_file) break;
    kept.push_back(w);
    after_flag = flag && w.find('=') == std::string::npos;
  }
  // A literal that ends on a flag gets its value added by the code: not a whole command.
  if (kept.empty() || (after_flag && kept.size() == word_count)) return std::nullopt;
  // "ingero-bench ci:" is a title and "ingero-bench explain" alone names a command: neither
  // is an invocation to check.
  if (kept.front().back() == ':' || (kept.size() == 1 && kept.front() != "--workload")) return std::nullopt;
  std::string line;
  for (const auto& w : kept) line += (line.empty() ? "" : " ") + w;
  return line;
}

std::vector<std::string> commands_in(const std::string& text, bool markdown) {
  static const std::regex command(
      R"(ingero-bench ((--workload|[a-z][a-z0-9-]*)[^`"'\n|;&#>()\\]*))");
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), command); it != std::sregex_iterator(); ++it) {
    if (!in_code(text, static_cast<size_t>(it->position(0)), markdown)) continue;
    const std::string words = (*it)[1].str();
    // Templates (fmt and printf fields, [optional], <choice>, ...) are not commands as written.
    if (words.find_first_of("{}[]<%") != std::string::npos || words.find("...") != std::string::npos) continue;
    if (auto line = command_part(fill_placeholders(words))) found.push_back(*line);
  }
  return found;
}

TEST(Cli, EveryCommandTheDocsAndHintsShowParses) {
  const fs::path root = INGERO_SOURCE_DIR;
  std::vector<fs::path> files = {root / "README.md"};
  for (const char* dir : {"docs", "harness", "reports", "mcp", "workloads", "tracer"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension();
      if (ext == ".md" || ext == ".cc" || ext == ".h") files.push_back(entry.path());
    }
  }
  int checked = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    for (const std::string& line : commands_in(text.str(), file.extension() == ".md")) {
      ++checked;
      auto parsed = parse(line);
      EXPECT_TRUE(parsed.ok()) << file << ": ingero-bench " << line << "\n  -> "
                               << (parsed.ok() ? "" : parsed.error().message);
    }
  }
  EXPECT_GT(checked, 10);  // the scan itself found the commands
}

}  // namespace
}  // namespace ingero::harness
