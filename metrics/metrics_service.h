// SPDX-License-Identifier: Apache-2.0
// Serving the live metrics: /metrics over HTTP through prometheus-cpp's exposer (--metrics-addr),
// and the final values pushed to a Prometheus Pushgateway as the command ends (--metrics-push).
// The harness starts it before anything is traced, so that a bad address or a port in use is bad
// input before the job starts. It serves only GET /metrics: nothing it answers writes anything.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "metrics/live_metrics.h"

namespace prometheus {
class Exposer;
}

namespace ingero::metrics {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 address (IPv6 without brackets)
  uint16_t port = 0;  // 0: any free port (the one taken is printed)
  bool ipv6 = false;
  std::string text() const;  // 127.0.0.1:9478, [::1]:9478
};

// PORT, :PORT, HOST:PORT or [IPV6]:PORT; only a port binds 127.0.0.1. HOST is an address or localhost.
Result<ListenAddress> parse_listen_address(const std::string& text);

// What serving /metrics has cost this process since it began: the exposer's threads (civetweb's
// master and workers) by their CPU time, and the scrapes they answered.
struct ServingCost {
  uint64_t cpu_ns = 0;
  uint64_t scrapes = 0;
};

struct PushTarget {
  std::string host;  // scheme and host, as prometheus::Gateway takes it: http://gateway
  std::string port;
};

// http(s)://HOST[:PORT][/] (the port defaults to the Pushgateway's 9091).
Result<PushTarget> parse_push_url(const std::string& text);

class MetricsService {
 public:
  // Null when neither listen nor push_url is given. Binds the listening socket now: a bad address,
  // one not on this machine, or a port in use is bad input naming the fix.
  static Result<std::shared_ptr<MetricsService>> start(const std::string& listen, const std::string& push_url);
  // Pushes the final values (when a push URL was given; a failure is said on stderr) and stops serving.
  ~MetricsService();
  MetricsService(const MetricsService&) = delete;
  MetricsService& operator=(const MetricsService&) = delete;

  std::shared_ptr<LiveMetrics> sink() const { return metrics_; }
  // The port /metrics is served on (none when only pushing).
  std::optional<int> port() const { return port_; }
  // Pushes the values now (replacing what this instance pushed before).
  Status push();
  // None when not serving (only pushing). A run's cost is the difference over it: one service
  // serves every run of a sweep.
  std::optional<ServingCost> serving_cost() const;

 private:
  class CountedScrapes;
  MetricsService() = default;
  std::shared_ptr<LiveMetrics> metrics_;
  std::shared_ptr<CountedScrapes> served_;  // what the exposer collects: the registry, each scrape counted
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::optional<int> port_;
  std::optional<PushTarget> push_;
  std::string push_url_;
};

}  // namespace ingero::metrics
