// SPDX-License-Identifier: Apache-2.0
// Live metrics with the real servers: Debian's prometheus (127.0.0.1, a 1 s scrape, the rules of
// docs/prometheus/rules.yml) scrapes `trace --metrics-addr` of a DataLoader job and of two Gloo
// ranks, one slowed by construction; prometheus-pushgateway receives --metrics-push; bad addresses
// and ports in use exit 2 before anything is traced; a killed tracer leaves no listening socket.
// Root only (tracing); each test skips, saying why, without root or without the servers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/common/http_get.h"
#include "tests/e2e/command.h"

namespace {

namespace fs = std::filesystem;
using ingero::testing::capture;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kBinary = INGERO_BENCH_BINARY;
const std::string kJob = INGERO_METRICS_JOB;
const std::string kRules = INGERO_RULES;
const std::string kPython = "/usr/bin/python3";

// A free loopback port (taken and given back: the servers bind it next).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

// GET path on 127.0.0.1:port: the body when the answer is 200, else "" (nothing listening included).
std::string http_get(int port, const std::string& path) {
  return ingero::testing::ok_body(ingero::testing::http_reply(port, path));
}

std::string url_encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      char hex[4];
      snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// A command line run in the background through sh (exec'd: its pid is the command's).
struct Background {
  pid_t pid = -1;
  explicit Background(const std::string& command) {
    pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // Its exit code, or -1 when it had not ended in time (then it is killed).
  int wait(std::chrono::seconds limit) {
    const auto until = Clock::now() + limit;
    int status = 0;
    while (Clock::now() < until) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }
  ~Background() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

bool wait_until(std::chrono::seconds limit, const std::function<bool()>& ready) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

double query_double(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  double v = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_double(st, 0);
  else
    ADD_FAILURE() << sqlite3_errmsg(db) << " in " << sql;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// Our workload's pushed batch counter: `ingero_dataloader_batches_total{instance="...",job="ingero_bench",
// loader="0",role="main"} N`, from its end.
std::string fmt_batches(double batches) {
  return R"(job="ingero_bench",loader="0",role="main"} )" + std::to_string(static_cast<int64_t>(batches)) + "\n";
}

bool on_path(const std::string& program) { return capture("command -v " + program).exit_code == 0; }

// One prometheus for the suite, started by the first test that queries it: a 1 s scrape of the loader
// job's and the two ranks' exporters, the rules evaluated every second.
class Metrics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0 || !on_path("prometheus") || capture(kPython + " -c 'import torch'").exit_code != 0) return;
    dir_ = new std::string(fs::temp_directory_path() / ("ingero-metrics-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
  }
  static bool start_prometheus() {
    if (prometheus_ != nullptr) return ready_;
    prometheus_port_ = free_port();
    loader_port_ = free_port();
    ddp_port_ = free_port();
    // The rules as users load them, their 1-minute rate window shortened to 5 s for jobs of seconds
    // (five scrapes a second apart).
    std::string rules = read_text(kRules);
    for (size_t at; (at = rules.find("[1m]")) != std::string::npos;) rules.replace(at, 4, "[5s]");
    std::ofstream(*dir_ + "/rules.yml") << rules;
    std::ofstream(*dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                             << "rule_files: ['" << *dir_ << "/rules.yml']\n"
                                             << "scrape_configs:\n"
                                             << "  - job_name: loader\n    static_configs:\n      - targets: ['127.0.0.1:"
                                             << loader_port_ << "']\n"
                                             << "  - job_name: ddp\n    static_configs:\n      - targets: ['127.0.0.1:"
                                             << ddp_port_ << "']\n";
    prometheus_ = new Background("prometheus --config.file=" + *dir_ + "/prometheus.yml --storage.tsdb.path=" + *dir_ +
                                 "/tsdb --web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_) + " > " +
                                 *dir_ + "/prometheus.log 2>&1");
    ready_ = wait_until(std::chrono::seconds(30), [] { return !http_get(prometheus_port_, "/-/ready").empty(); });
    return ready_;
  }
  static void TearDownTestSuite() {
    delete prometheus_;  // SIGKILL: its data dir goes next
    prometheus_ = nullptr;
    if (dir_ != nullptr) fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "tracing needs root (run the e2e tests with sudo)";
    if (!on_path("prometheus") || !on_path("promtool"))
      GTEST_SKIP() << "Debian's prometheus is missing (scripts/setup --tests installs it)";
    if (dir_ == nullptr) GTEST_SKIP() << kPython << " cannot import torch";
  }
  static void expect_prometheus() {
    ASSERT_TRUE(start_prometheus()) << "prometheus did not start:\n" << read_text(*dir_ + "/prometheus.log");
  }

  // An instant query's result vector.
  static json query(const std::string& promql) {
    const std::string body = http_get(prometheus_port_, "/api/v1/query?query=" + url_encode(promql));
    const json answer = json::parse(body.empty() ? "{}" : body, nullptr, false);
    if (answer.is_discarded() || answer.value("status", "") != "success") {
      ADD_FAILURE() << promql << ": " << body;
      return json::array();
    }
    return answer["data"]["result"];
  }
  static double value(const json& sample) { return std::stod(sample["value"][1].get<std::string>()); }

  static std::string trace(int port, const std::string& db) {
    return kBinary + " trace --db " + db + " --metrics-addr 127.0.0.1:" + std::to_string(port) + " -- ";
  }

  static inline std::string* dir_ = nullptr;
  static inline Background* prometheus_ = nullptr;
  static inline bool ready_ = false;
  static inline int prometheus_port_ = 0, loader_port_ = 0, ddp_port_ = 0;
};

TEST_F(Metrics, TheScrapedWaitCounterAgreesWithTheDbAndTheExpositionIsClean) {
  ASSERT_NO_FATAL_FAILURE(expect_prometheus());
  const std::string db = *dir_ + "/loader.db", log = *dir_ + "/loader.log";
  // 2 epochs of 12 batches; each sample sleeps 5 ms in the one worker: the loop waits for most batches.
  Background job(trace(loader_port_, db) + kPython + " " + kJob +
                 " --epochs 2 --samples 96 --batch 8 --sample-ms 5 --linger 3 > " + log + " 2>&1");
  std::string exposition;
  const std::string final_batches = R"(ingero_dataloader_batches_total{loader="0",role="main"} 24)";
  wait_until(std::chrono::seconds(90), [&] {
    exposition = http_get(loader_port_, "/metrics");
    return exposition.find(final_batches) != std::string::npos;
  });
  ASSERT_EQ(job.wait(std::chrono::seconds(120)), 0) << read_text(log);
  ASSERT_NE(exposition.find(final_batches), std::string::npos) << "the final batches were not served\n" << exposition;

  // promtool check metrics: the exposition follows the format and the naming conventions.
  std::ofstream(*dir_ + "/exposition.txt") << exposition;
  const auto lint = capture("promtool check metrics < " + *dir_ + "/exposition.txt");
  EXPECT_EQ(lint.exit_code, 0) << lint.text;
  EXPECT_EQ(lint.text, "") << lint.text;

  // The counter as Prometheus scraped it: it started at 0 as the loader was built and ended at the
  // job's total (the job lingers for more than a scrape after its last batch).
  const double db_wait_s =
      query_double(db, "SELECT SUM(e.dur_ns) / 1e9 FROM events e JOIN ops o ON o.op = e.op WHERE o.name = 'batch_wait'");
  ASSERT_GT(db_wait_s, 0.05) << "the job should wait for its sleepy samples";
  const json last = query(R"(max_over_time(ingero_dataloader_wait_seconds_total{job="loader"}[5m]))");
  ASSERT_EQ(last.size(), 1u) << last.dump();
  EXPECT_NEAR(value(last[0]), db_wait_s, 1e-3) << "scraped " << value(last[0]) << " s, DB " << db_wait_s << " s";
  // And it was served while the job ran, a scrape a second.
  const json scrapes = query(R"(count_over_time(ingero_dataloader_wait_seconds_total{job="loader"}[5m]))");
  ASSERT_EQ(scrapes.size(), 1u);
  EXPECT_GE(value(scrapes[0]), 2);
  // Host metrics of the same job: the worker's CPU time.
  EXPECT_FALSE(query(R"(max_over_time(ingero_cpu_seconds_total{job="loader",role="worker"}[5m]) > 0)").empty());

  // What the metrics cost the tracer's process, measured in the run: publishing each second and serving
  // the scrapes (prometheus's and this test's), and explain says it as a share of the job's CPU.
  const auto setting = [&](const char* key) {
    return query_double(db, std::string("SELECT value FROM run_settings WHERE key = '") + key + "'");
  };
  const double publish_ns = setting("metrics_publish_cpu_ns"), serve_ns = setting("metrics_serve_cpu_ns");
  EXPECT_GT(publish_ns, 0);
  EXPECT_GT(serve_ns, 0);
  EXPECT_GE(setting("metrics_scrapes"), 2);
  const auto explain = capture(kBinary + " explain --db " + db + " --json");
  ASSERT_EQ(explain.exit_code, 0) << explain.text;
  const json cost = json::parse(explain.text, nullptr, false)["tracing_cost"];
  ASSERT_TRUE(cost.is_object() && cost["live_metrics"].is_object()) << cost.dump(1);
  EXPECT_EQ(cost["live_metrics"]["cpu_ns"].get<double>(), publish_ns + serve_ns);
  EXPECT_GT(cost["live_metrics"]["job_share"].get<double>(), 0);
  ASSERT_EQ(cost["live_metrics"]["parts"].size(), 2u) << cost["live_metrics"].dump();
  EXPECT_EQ(cost["live_metrics"]["parts"][1]["part"], "serve");
  EXPECT_GE(cost["live_metrics"]["parts"][1]["count"].get<int>(), 2);
  bool said = false;
  for (const json& line : cost["lines"])
    said |= line.get<std::string>().rfind("the live metrics took ", 0) == 0 &&
            line.get<std::string>().find("of the job's CPU") != std::string::npos;
  EXPECT_TRUE(said) << cost["lines"].dump(1);
}

TEST_F(Metrics, TheRulesStragglerQueryNamesTheSlowRank) {
  ASSERT_NO_FATAL_FAILURE(expect_prometheus());
  const std::string db = *dir_ + "/ddp.db", log = *dir_ + "/ddp.log";
  // Two Gloo ranks all-reducing each step; rank 1's samples take 20 ms, rank 0's 1 ms (about 5 s of waiting).
  Background job(trace(ddp_port_, db) + kPython + " " + kJob +
                 " --ranks 2 --epochs 2 --samples 128 --batch 8 --sample-ms 1 --slow-rank 1 --slow-sample-ms 20"
                 " --linger 2 > " +
                 log + " 2>&1");
  ASSERT_EQ(job.wait(std::chrono::seconds(180)), 0) << read_text(log);
  // Both ranks were scraped.
  std::set<std::string> ranks;
  for (const json& s : query(R"(count by (rank) (max_over_time(ingero_dataloader_wait_seconds_total{job="ddp"}[5m])))"))
    ranks.insert(s["metric"].value("rank", ""));
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"}));
  // The straggler query of docs/prometheus/rules.yml, over the job's run: rank 1, and only it.
  const json stragglers =
      query(R"(avg_over_time(job_rank:ingero_dataloader_wait:ratio_above_median{job="ddp"}[5m]) > 0.1)");
  ASSERT_EQ(stragglers.size(), 1u) << stragglers.dump() << "\n"
                                   << query(R"(job_rank:ingero_dataloader_wait:ratio_rate1m[5m])").dump();
  EXPECT_EQ(stragglers[0]["metric"].value("rank", ""), "1");
}

TEST_F(Metrics, PushesTheFinalValuesToAPushgateway) {
  if (!on_path("prometheus-pushgateway")) GTEST_SKIP() << "prometheus-pushgateway is missing (scripts/setup --tests)";
  const int port = free_port();
  Background gateway("prometheus-pushgateway --web.listen-address=127.0.0.1:" + std::to_string(port) + " > " + *dir_ +
                     "/pushgateway.log 2>&1");
  ASSERT_TRUE(wait_until(std::chrono::seconds(20), [&] { return !http_get(port, "/-/ready").empty(); }));
  const auto run = capture(kBinary + " trace --db " + *dir_ + "/push.db --metrics-push http://127.0.0.1:" +
                           std::to_string(port) + " -- " + kPython + " " + kJob +
                           " --epochs 1 --samples 32 --batch 8 --sample-ms 1 --linger 0");
  ASSERT_EQ(run.exit_code, 0) << run.text;
  EXPECT_NE(run.text.find("metrics pushed to http://127.0.0.1:" + std::to_string(port)), std::string::npos) << run.text;
  const std::string pushed = http_get(port, "/metrics");
  EXPECT_NE(pushed.find(R"(ingero_dataloader_batches_total{instance=")"), std::string::npos) << pushed;
  EXPECT_NE(pushed.find(R"(job="ingero_bench",loader="0",role="main"} 4)"), std::string::npos) << pushed;

  // One of our workload runs pushes too, replacing what this host pushed before.
  const auto workload = capture(kBinary + " --workload dataloader --device cpu --mode direct --samples 1024"
                                " --batch-size 64 --features 16 --hidden 32 --epochs 1 --db " + *dir_ +
                                "/push.db --out " + *dir_ + "/runs --metrics-push http://127.0.0.1:" +
                                std::to_string(port));
  ASSERT_EQ(workload.exit_code, 0) << workload.text;
  const std::string replaced = http_get(port, "/metrics");
  EXPECT_NE(replaced.find(R"(ingero_cpu_seconds_total{instance=")"), std::string::npos) << replaced;
  // Its batches come exact from its record as the run ends, with its knobs.
  const double batches = query_double(*dir_ + "/push.db", "SELECT count(*) FROM events e JOIN ops o ON o.op = e.op "
                                                          "WHERE o.name = 'batch_wait' AND e.run_id = (SELECT max(run_id) "
                                                          "FROM runs)");
  ASSERT_GT(batches, 0);
  EXPECT_NE(replaced.find(fmt_batches(batches)), std::string::npos) << replaced;
  EXPECT_NE(replaced.find(R"(ingero_dataloader_info{batch_size="64",instance=")"), std::string::npos) << replaced;
  EXPECT_EQ(replaced.find(R"(estimated="true")"), std::string::npos) << replaced;
}

// An attached job (trace --pid: no observer) serves its waits for data live, estimated from the
// wake-ups and labelled so, and its workers' health; the exposition stays clean.
TEST_F(Metrics, AnAttachedJobServesEstimatedWaitsAndWorkerHealth) {
  const std::string log = *dir_ + "/attached.log";
  Background job(kPython + " " + kJob + " --epochs 40 --samples 96 --batch 8 --sample-ms 5 --linger 0 > " + log +
                 " 2>&1");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // torch imported, the worker forked
  const int port = free_port();
  Background tracer(kBinary + " trace --db " + *dir_ + "/attached.db --pid " + std::to_string(job.pid) +
                    " --duration 12s --health-interval-ms 200 --metrics-addr " + std::to_string(port) + " > " +
                    *dir_ + "/attached-trace.log 2>&1");
  std::string exposition;
  const std::string waits = R"(ingero_dataloader_wait_seconds_total{estimated="true",role="main"} )";
  const std::string dirty = R"(ingero_process_private_dirty_bytes{role="worker"} )";
  // Each epoch forks its worker anew, and a forked worker copies pages it shares as it writes them.
  const std::string copied = R"(ingero_copy_on_write_bytes_total{role="worker"} )";
  auto value = [&](const std::string& series) {
    const size_t at = exposition.find(series);
    return at == std::string::npos ? -1.0 : std::stod(exposition.substr(at + series.size()));
  };
  wait_until(std::chrono::seconds(30), [&] {
    exposition = http_get(port, "/metrics");
    return value(waits) > 0.05 && exposition.find(dirty) != std::string::npos && value(copied) > 0;
  });
  EXPECT_GT(value(copied), 0) << exposition;
  EXPECT_NE(exposition.find(waits), std::string::npos) << exposition;
  EXPECT_NE(exposition.find(R"(ingero_dataloader_batches_total{estimated="true",role="main"} )"), std::string::npos);
  EXPECT_NE(exposition.find(dirty), std::string::npos) << exposition;
  for (const char* series : {R"(ingero_process_open_fds{role="main"} )", R"(ingero_process_fd_limit{role="main"} )",
                             "ingero_shm_free_bytes ", "ingero_stalled_seconds "})
    EXPECT_NE(exposition.find(series), std::string::npos) << series << "\n" << exposition;
  std::ofstream(*dir_ + "/attached-exposition.txt") << exposition;
  const auto lint = capture("promtool check metrics < " + *dir_ + "/attached-exposition.txt");
  EXPECT_EQ(lint.exit_code, 0) << lint.text;
  EXPECT_EQ(lint.text, "") << lint.text;
  EXPECT_EQ(tracer.wait(std::chrono::seconds(60)), 0) << read_text(*dir_ + "/attached-trace.log");
}

TEST_F(Metrics, ABadAddressOrAPortInUseExitsTwoBeforeTracing) {
  const std::string db = *dir_ + "/bad.db";
  for (const std::string addr : {"127.0.0.1:99999", "node7:9478", "192.0.2.1:9478"}) {
    const auto run = capture(kBinary + " trace --db " + db + " --metrics-addr " + addr + " -- /bin/true");
    EXPECT_EQ(run.exit_code, 2) << addr << ": " << run.text;
    EXPECT_NE(run.text.find("--metrics-addr"), std::string::npos) << run.text;
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  listen(fd, 1);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  const auto run = capture(kBinary + " trace --db " + db + " --metrics-addr " + std::to_string(ntohs(sa.sin_port)) +
                           " -- /bin/true");
  close(fd);
  EXPECT_EQ(run.exit_code, 2) << run.text;
  EXPECT_NE(run.text.find("in use"), std::string::npos) << run.text;
  EXPECT_FALSE(fs::exists(db)) << "nothing is traced or stored before the address is found good";
}

TEST_F(Metrics, ANodeAgentServesUntilTerminatedThenStopsListening) {
  const int port = free_port();
  const std::string db = *dir_ + "/agent.db";
  Background agent(kBinary + " trace --db " + db + " --metrics-addr " + std::to_string(port) + " > " + *dir_ +
                   "/agent.log 2>&1");
  ASSERT_TRUE(wait_until(std::chrono::seconds(30), [&] {
    return http_get(port, "/metrics").find("ingero_events_lost_total{") != std::string::npos;
  })) << read_text(*dir_ + "/agent.log");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(http_get(port, "/metrics").empty()) << "still serving, with no --duration";
  kill(agent.pid, SIGTERM);
  EXPECT_NE(agent.wait(std::chrono::seconds(60)), -1) << read_text(*dir_ + "/agent.log");
  EXPECT_EQ(http_get(port, "/metrics"), "");
  EXPECT_EQ(query_double(db, "SELECT count(*) FROM runs WHERE label LIKE '%until interrupted%'"), 1);
}

// --db-max-mb on a long, event-heavy trace (a thread that sleeps 0.2 ms thousands of times a second,
// every sleep an event): the file stays under its 2 MiB cap, explain says what was dropped and up to
// when, and the newest events are there. A cap of 0, and a file other runs already fill, exit 2.
TEST_F(Metrics, ACappedDbStaysUnderItsCapAndSaysWhatWasDropped) {
  const std::string db = *dir_ + "/capped.db";
  constexpr uintmax_t kCap = 2u << 20;
  const std::string job = kPython + " -c 'import time\nend = time.time() + 15\nwhile time.time() < end: "
                                    "time.sleep(0.0002)'";
  Background tracer(kBinary + " trace --db " + db + " --db-max-mb 2 --offcpu-min-us 0 --profile-hz 0 -- " + job +
                    " > " + *dir_ + "/capped.log 2>&1");
  uintmax_t largest = 0;
  int code = -1;
  for (const auto until = Clock::now() + std::chrono::seconds(90); Clock::now() < until && code == -1;) {
    std::error_code ec;
    if (const uintmax_t size = fs::file_size(db, ec); !ec) largest = std::max(largest, size);
    code = tracer.wait(std::chrono::seconds(1));
  }
  ASSERT_EQ(code, 0) << read_text(*dir_ + "/capped.log");
  largest = std::max(largest, fs::file_size(db));
  EXPECT_LE(largest, kCap) << "the file grew past its cap";
  EXPECT_FALSE(fs::exists(db + "-wal"));
  const double dropped = query_double(db, "SELECT value FROM run_settings WHERE key = 'events_dropped'");
  EXPECT_GT(dropped, 20'000) << "the job made enough events to reach the cap";
  const double cut = query_double(db, "SELECT value FROM run_settings WHERE key = 'events_dropped_before_ns'");
  EXPECT_GE(query_double(db, "SELECT min(ts_ns) FROM events WHERE op = (SELECT op FROM ops WHERE name = "
                             "'offcpu_blocked')"),
            cut);
  // The newest: the job's last second is there.
  EXPECT_GT(query_double(db, "SELECT count(*) FROM events e, runs r WHERE e.ts_ns > r.end_ns - 3e9"), 1000);
  const auto explain = capture(kBinary + " explain --db " + db + " --json");
  ASSERT_EQ(explain.exit_code, 0) << explain.text;
  const json notes = json::parse(explain.text, nullptr, false).value("notes", json::array());
  bool said = false;
  for (const json& note : notes) said |= note.get<std::string>().find("were dropped to keep the DB under 2 MiB") !=
                                         std::string::npos;
  EXPECT_TRUE(said) << notes.dump(1);
  // Unmetered: no metrics cost recorded, and none said.
  EXPECT_EQ(query_double(db, "SELECT count(*) FROM run_settings WHERE key LIKE 'metrics_%'"), 0);
  const json cost = json::parse(explain.text, nullptr, false)["tracing_cost"];
  EXPECT_TRUE(cost["live_metrics"].is_null()) << cost.dump(1);
  for (const json& line : cost["lines"]) EXPECT_EQ(line.get<std::string>().find("live metrics"), std::string::npos);

  for (const std::string cap : {"0", "-1", "two"}) {
    const auto run = capture(kBinary + " trace --db " + *dir_ + "/zero.db --db-max-mb " + cap + " -- /bin/true");
    EXPECT_EQ(run.exit_code, 2) << cap << ": " << run.text;
    EXPECT_NE(run.text.find("--db-max-mb"), std::string::npos) << run.text;
  }
  const auto full = capture(kBinary + " trace --db " + db + " --db-max-mb 1 -- /bin/true");
  EXPECT_EQ(full.exit_code, 2) << full.text;
  EXPECT_NE(full.text.find("other runs"), std::string::npos) << full.text;
}

TEST_F(Metrics, KillingTheTracerLeavesNoListeningSocket) {
  const int port = free_port();
  Background tracer(trace(port, *dir_ + "/killed.db") + "sleep 6 > " + *dir_ + "/killed.log 2>&1");
  ASSERT_TRUE(wait_until(std::chrono::seconds(30), [&] { return !http_get(port, "/metrics").empty(); }))
      << read_text(*dir_ + "/killed.log");
  kill(tracer.pid, SIGKILL);
  waitpid(tracer.pid, nullptr, 0);
  tracer.pid = -1;
  // The job (sleep) outlives the tracer, as a user's job does: it must not hold the socket.
  EXPECT_EQ(http_get(port, "/metrics"), "");
  EXPECT_EQ(capture("ss -Hltn 'sport = :" + std::to_string(port) + "'").text, "");
}

}  // namespace
