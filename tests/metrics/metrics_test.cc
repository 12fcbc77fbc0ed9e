// SPDX-License-Identifier: Apache-2.0
// metrics/: the registry fed by live totals (counters advance by what the totals gained, across
// runs, and never go back; the histograms' buckets), the listen address and push URL parsing, and
// the service's exposer answering GET /metrics, or bad input (exit 2) for a port in use.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <prometheus/text_serializer.h>

#include "metrics/live_metrics.h"
#include "metrics/metrics_service.h"
#include "tests/common/http_get.h"

namespace ingero::metrics {
namespace {

std::string exposition(LiveMetrics& m) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, m.registry()->Collect());
  return out.str();
}

// The value of the series whose line starts with `series` (name and labels as serialized), or -1.
double value_of(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

tracer::LiveTotals totals(int64_t run, uint64_t wait_ns, uint64_t batches, uint64_t oncpu_ns) {
  tracer::LiveTotals t;
  t.run_id = run;
  tracer::LiveLoaderWaits l;
  l.loader = 0;
  l.rank = 1;
  l.role = "main";
  l.batches = batches;
  l.wait_ns = wait_ns;
  l.wait_buckets.assign(tracer::kBatchWaitBounds.size() + 1, 0);
  l.wait_buckets[5] = batches;  // (5 ms, 10 ms]
  l.knobs = {{"num_workers", "2"}, {"pin_memory", "false"}};
  t.loaders.push_back(l);
  tracer::LiveThreadGroup g;
  g.role = "worker";
  g.rank = 1;
  g.oncpu_ns = oncpu_ns;
  g.offcpu_io_ns = 3'000'000'000;
  t.threads.push_back(g);
  return t;
}

TEST(LiveMetrics, CountersAdvanceByWhatTheTotalsGainedAndKeepCountingAcrossRuns) {
  LiveMetrics m;
  m.publish(totals(1, 1'500'000'000, 10, 2'000'000'000));
  std::string text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_total{loader="0",rank="1",role="main"})"), 1.5) << text;
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_batches_total{loader="0",rank="1",role="main"})"), 10);
  EXPECT_EQ(value_of(text, R"(ingero_cpu_seconds_total{rank="1",role="worker"})"), 2);
  EXPECT_EQ(value_of(text, R"(ingero_offcpu_seconds_total{rank="1",reason="io",role="worker"})"), 3);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_info{loader="0",num_workers="2",pin_memory="false",rank="1"})"), 1);
  // The same run a second later; then a total that went back (never shown as a decrease).
  m.publish(totals(1, 2'000'000'000, 14, 2'500'000'000));
  m.publish(totals(1, 1'000'000'000, 14, 2'500'000'000));
  text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_total{loader="0",rank="1",role="main"})"), 2.0);
  // A new run counts from zero: its totals add to what the counters hold.
  m.publish(totals(2, 500'000'000, 4, 1'000'000'000));
  text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_total{loader="0",rank="1",role="main"})"), 2.5);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_batches_total{loader="0",rank="1",role="main"})"), 18);
  EXPECT_EQ(value_of(text, R"(ingero_cpu_seconds_total{rank="1",role="worker"})"), 3.5);
  // The histogram: every batch in the (5 ms, 10 ms] bucket, cumulative from there on.
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_bucket{loader="0",rank="1",role="main",le="0.005"})"), 0);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_bucket{loader="0",rank="1",role="main",le="0.01"})"), 18);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_count{loader="0",rank="1",role="main"})"), 18);
}

TEST(LiveMetrics, AProcessWithoutARankHasNoRankLabel) {
  LiveMetrics m;
  tracer::LiveTotals t;
  t.threads.push_back({"main", std::nullopt, 1'000'000'000, 0, 0, 0, 0, 7, 8192});
  m.publish(t);
  EXPECT_EQ(value_of(exposition(m), R"(ingero_page_faults_total{role="main"})"), 7);
  EXPECT_EQ(value_of(exposition(m), R"(ingero_copy_on_write_bytes_total{role="main"})"), 8192);
}

TEST(LiveMetrics, CallLatencySlotsFallWholeIntoPowerOfTwoBuckets) {
  LiveMetrics m;
  tracer::LiveTotals t;
  tracer::LiveCalls c;
  c.function = "cudaMemcpy";
  c.calls = 5;
  c.latency_slots.assign(40, 0);
  c.latency_slots[20] = 3;  // [2^20, 2^21) ns: into le 2^22 ns
  c.latency_slots[5] = 2;   // under a microsecond: the first bucket, 2^10 ns
  c.timed = 5;
  c.timed_ns = 4'000'000;
  t.calls.push_back(c);
  t.gpus.push_back({0, "GPU-1234", 0.75});
  m.publish(t);
  // Then hot: its count goes on in the estimated series, the total not counted twice.
  c.calls = 50;
  c.estimated = true;
  t.calls = {c};
  m.publish(t);
  const std::string text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_cuda_calls_total{estimated="false",function="cudaMemcpy"})"), 5) << text;
  EXPECT_EQ(value_of(text, R"(ingero_cuda_calls_total{estimated="true",function="cudaMemcpy"})"), 45);
  EXPECT_EQ(value_of(text, R"(ingero_cuda_call_seconds_bucket{function="cudaMemcpy",le="1.024e-06"})"), 2);
  EXPECT_EQ(value_of(text, R"(ingero_cuda_call_seconds_bucket{function="cudaMemcpy",le="0.001048576"})"), 2);
  EXPECT_EQ(value_of(text, R"(ingero_cuda_call_seconds_bucket{function="cudaMemcpy",le="0.004194304"})"), 5);
  EXPECT_EQ(value_of(text, R"(ingero_gpu_busy_ratio{UUID="GPU-1234",gpu="0"})"), 0.75);
}

// An attached job's waits, estimated from wake-ups: labelled so, with no loader (the estimate does
// not know which one).
TEST(LiveMetrics, AnEstimatedWaitIsLabelledAndNamesNoLoader) {
  LiveMetrics m;
  tracer::LiveTotals t = totals(1, 2'000'000'000, 8, 0);
  t.loaders[0].estimated = true;
  t.loaders[0].loader = -1;
  t.loaders[0].knobs.clear();
  m.publish(t);
  const std::string text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_wait_seconds_total{estimated="true",rank="1",role="main"})"), 2) << text;
  EXPECT_EQ(value_of(text, R"(ingero_dataloader_batches_total{estimated="true",rank="1",role="main"})"), 8);
  EXPECT_EQ(text.find("ingero_dataloader_info{"), std::string::npos);
}

// Health gauges follow the latest sample: a group whose processes exited is removed, not left at
// its last value; OOM kills count up.
TEST(LiveMetrics, HealthGaugesShowWhatIsThereNow) {
  LiveMetrics m;
  tracer::LiveTotals t;
  t.run_id = 1;
  t.health.push_back({"worker", 0, 2, 8'000'000, 3'000'000, 40, 1024});
  t.health.push_back({"main", 0, 1, 9'000'000, 1'000'000, 12, 1024});
  t.shm = tracer::LiveShm{1 << 30, 1 << 20};
  t.oom_kills["worker"] = 1;
  t.stalled_seconds[0] = 4.5;
  m.publish(t);
  std::string text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_process_private_dirty_bytes{rank="0",role="worker"})"), 3e6) << text;
  EXPECT_EQ(value_of(text, R"(ingero_process_open_fds{rank="0",role="worker"})"), 40);
  EXPECT_EQ(value_of(text, R"(ingero_process_fd_limit{rank="0",role="worker"})"), 1024);
  EXPECT_EQ(value_of(text, R"(ingero_processes{rank="0",role="worker"})"), 2);
  EXPECT_EQ(value_of(text, "ingero_shm_free_bytes"), 1 << 20);
  EXPECT_EQ(value_of(text, R"(ingero_oom_kills_total{role="worker"})"), 1);
  EXPECT_EQ(value_of(text, R"(ingero_stalled_seconds{rank="0"})"), 4.5);
  t.health.erase(t.health.begin());  // the workers exited
  t.oom_kills["worker"] = 2;
  m.publish(t);
  text = exposition(m);
  EXPECT_EQ(value_of(text, R"(ingero_process_private_dirty_bytes{rank="0",role="worker"})"), -1) << text;
  EXPECT_EQ(value_of(text, R"(ingero_process_private_dirty_bytes{rank="0",role="main"})"), 1e6);
  EXPECT_EQ(value_of(text, R"(ingero_oom_kills_total{role="worker"})"), 2);
}

// Every metric served is documented in docs/metrics.md, in its table.
TEST(LiveMetrics, EveryServedMetricIsDocumented) {
  LiveMetrics m;
  const std::string doc = [] {
    std::ifstream in(INGERO_METRICS_DOC);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  ASSERT_FALSE(doc.empty()) << INGERO_METRICS_DOC;
  tracer::LiveTotals t = totals(1, 1, 1, 1);  // a series of every family (an empty family is not served)
  tracer::LiveCalls c;
  c.function = "cudaMemcpy";
  c.calls = c.errors = c.timed = 1;
  c.latency_slots = {0, 1};
  t.calls.push_back(c);
  t.gpus.push_back({0, "GPU-1", 0.5});
  t.losses.push_back({"sched", 1});
  t.tracing_cost_ratio = 0.01;
  t.health.push_back({"worker", 0, 1, 1, 1, 1, 1});
  t.shm = tracer::LiveShm{2, 1};
  t.oom_kills["worker"] = 1;
  t.stalled_seconds[0] = 1;
  m.publish(t);
  size_t families = 0;
  for (const prometheus::MetricFamily& family : m.registry()->Collect()) {
    ++families;
    EXPECT_NE(doc.find("| `" + family.name + "` |"), std::string::npos) << family.name << " is not in docs/metrics.md";
  }
  EXPECT_EQ(families, 24u) << "a family added: publish a series of it above";
}

TEST(ListenAddress, APortAloneBindsLoopbackOnlyAndOtherAddressesOnlyWhenGiven) {
  auto a = parse_listen_address("9478");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->text(), "127.0.0.1:9478");
  EXPECT_EQ(parse_listen_address(":9478")->text(), "127.0.0.1:9478");
  EXPECT_EQ(parse_listen_address("0.0.0.0:9478")->text(), "0.0.0.0:9478");
  EXPECT_EQ(parse_listen_address("[::1]:9478")->text(), "[::1]:9478");
  EXPECT_EQ(parse_listen_address("localhost:80")->text(), "127.0.0.1:80");
  for (const char* bad : {"", "nine", "127.0.0.1", "127.0.0.1:", "1.2.3:9478", "node7:9478", "::1:9478", "1:70000",
                          "[::1]9478"}) {
    auto r = parse_listen_address(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().exit_code, 2) << bad;
    EXPECT_NE(r.error().hint.find("--metrics-addr"), std::string::npos) << bad;
  }
}

TEST(PushUrl, NeedsAnHttpUrlWithoutAPath) {
  auto t = parse_push_url("http://127.0.0.1:9091");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "http://127.0.0.1");
  EXPECT_EQ(t->port, "9091");
  EXPECT_EQ(parse_push_url("https://gw.example/")->port, "9091");
  for (const char* bad : {"127.0.0.1:9091", "ftp://x", "http://x:9091/metrics/job/a", "http://:9091", "http://x:port"})
    EXPECT_FALSE(parse_push_url(bad)) << bad;
}

// A listening socket on a free loopback port, held for the test.
struct Listener {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  Listener() {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    listen(fd, 1);
    getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    port = ntohs(sa.sin_port);
  }
  ~Listener() { close(fd); }
};

std::string http_get(int port, const std::string& path) { return ingero::testing::http_reply(port, path); }

TEST(MetricsService, APortInUseIsBadInputNamingTheFix) {
  Listener taken;
  auto service = MetricsService::start("127.0.0.1:" + std::to_string(taken.port), "");
  ASSERT_FALSE(service);
  EXPECT_EQ(service.error().exit_code, 2);
  EXPECT_NE(service.error().message.find("in use"), std::string::npos) << service.error().message;
  EXPECT_NE(service.error().hint.find("free port"), std::string::npos);
}

TEST(MetricsService, AnAddressNotOnThisMachineIsBadInput) {
  auto service = MetricsService::start("192.0.2.1:9478", "");  // TEST-NET-1: no machine has it
  ASSERT_FALSE(service);
  EXPECT_EQ(service.error().exit_code, 2);
  EXPECT_NE(service.error().message.find("not an address of this machine"), std::string::npos)
      << service.error().message;
}

TEST(MetricsService, ServesTheRegistryAtMetricsAndStopsWhenDestroyed) {
  auto service = MetricsService::start("127.0.0.1:0", "");
  ASSERT_TRUE(service) << service.error().message;
  ASSERT_TRUE(*service && (*service)->port());
  const int port = *(*service)->port();
  (*service)->sink()->publish(totals(1, 250'000'000, 3, 1'000'000'000));
  const std::string reply = http_get(port, "/metrics");
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  EXPECT_NE(reply.find(R"(ingero_dataloader_wait_seconds_total{loader="0",rank="1",role="main"} 0.25)"),
            std::string::npos)
      << reply;
  EXPECT_EQ(http_get(port, "/").find("200 OK"), std::string::npos);  // only /metrics is served
  service->reset();
  EXPECT_EQ(http_get(port, "/metrics"), "");  // nothing listens any more
}

// A run's serving cost: the exposer's threads' CPU time and the scrapes they answered, as differences
// (a sweep's runs share one service). Only pushing, nothing is served.
TEST(MetricsService, SaysWhatServingScrapesCostItsThreads) {
  auto service = MetricsService::start("127.0.0.1:0", "");
  ASSERT_TRUE(service && *service) << (service ? "" : service.error().message);
  (*service)->sink()->publish(totals(1, 250'000'000, 3, 1'000'000'000));
  const auto before = (*service)->serving_cost();
  ASSERT_TRUE(before);
  for (int i = 0; i < 20; ++i) ASSERT_NE(http_get(*(*service)->port(), "/metrics").find("200 OK"), std::string::npos);
  const auto after = (*service)->serving_cost();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->scrapes - before->scrapes, 20u);
  EXPECT_GT(after->cpu_ns, before->cpu_ns) << "the civetweb threads' CPU time was not found";
  http_get(*(*service)->port(), "/");  // not a scrape
  EXPECT_EQ((*service)->serving_cost()->scrapes, after->scrapes);

  auto pushing = MetricsService::start("", "http://127.0.0.1:9");
  ASSERT_TRUE(pushing && *pushing);
  EXPECT_FALSE((*pushing)->serving_cost());
}

TEST(MetricsService, NeitherFlagStartsNothing) {
  auto service = MetricsService::start("", "");
  ASSERT_TRUE(service);
  EXPECT_EQ(*service, nullptr);
}

}  // namespace
}  // namespace ingero::metrics
