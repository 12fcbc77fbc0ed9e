// SPDX-License-Identifier: Apache-2.0
#include "metrics/metrics_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/gateway.h>
#include <prometheus/metric_family.h>

#include "common/proc_files.h"
#include "common/unique_fd.h"

namespace ingero::metrics {

namespace {

constexpr const char* kAddressFix =
    "pass --metrics-addr PORT (127.0.0.1), or HOST:PORT with an address of this machine, e.g. 127.0.0.1:9478 or "
    "0.0.0.0:9478 for every interface";
constexpr const char* kPushJob = "ingero_bench";

Result<uint16_t> parse_port(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(text) > 65535)
    return Error::bad_input(fmt::format("--metrics-addr '{}': '{}' is not a port (0-65535)", whole, text), kAddressFix);
  return static_cast<uint16_t>(std::stoul(text));
}

// Binds the address once, as the exposer will, so that the reason it cannot is ours to word.
Status check_can_listen(const ListenAddress& a) {
  UniqueFd fd(socket(a.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error::failure(fmt::format("--metrics-addr: cannot open a socket: {}", strerror(errno)));
  int on = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  int rc;
  if (a.ipv6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(a.port);
    inet_pton(AF_INET6, a.host.c_str(), &sa.sin6_addr);
    rc = bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr);
    rc = bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  if (rc == 0) return {};
  const int error = errno;
  if (error == EADDRINUSE)
    return Error::bad_input(fmt::format("--metrics-addr {}: the port is in use", a.text()),
                            "pass a free port (ss -ltn lists the ports in use), e.g. --metrics-addr 9478");
  if (error == EADDRNOTAVAIL)
    return Error::bad_input(fmt::format("--metrics-addr {}: {} is not an address of this machine", a.text(), a.host),
                            kAddressFix);
  if (error == EACCES)
    return Error::bad_input(fmt::format("--metrics-addr {}: ports below 1024 need root", a.text()),
                            "pass a port from 1024 up");
  return Error::bad_input(fmt::format("--metrics-addr {}: cannot listen there: {}", a.text(), strerror(error)),
                          kAddressFix);
}

// civetweb names its threads civetweb-master, civetweb-worker (and civetweb-timer where built with timers).
constexpr std::string_view kServerThreadPrefix = "civetweb-";

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

// The registry as the exposer collects it: one Collect() per GET /metrics, counted.
class MetricsService::CountedScrapes final : public prometheus::Collectable {
 public:
  explicit CountedScrapes(std::shared_ptr<prometheus::Registry> registry) : registry_(std::move(registry)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    scrapes_.fetch_add(1, std::memory_order_relaxed);
    return registry_->Collect();
  }
  uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::atomic<uint64_t> scrapes_{0};
};

std::string ListenAddress::text() const {
  return ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

Result<ListenAddress> parse_listen_address(const std::string& text) {
  ListenAddress a;
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Error::bad_input(fmt::format("--metrics-addr '{}' is not [IPV6]:PORT", text), kAddressFix);
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    a.ipv6 = true;
  } else if (const size_t colon = text.rfind(':'); colon == std::string::npos) {
    port = text;
  } else {
    if (text.find(':') != colon)
      return Error::bad_input(fmt::format("--metrics-addr '{}': an IPv6 address goes in brackets", text),
                              "pass e.g. --metrics-addr [::1]:9478");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  auto number = parse_port(port, text);
  if (!number) return number.error();
  a.port = *number;
  if (host.empty() || host == "localhost") host = a.ipv6 ? "::1" : "127.0.0.1";
  unsigned char bytes[16];
  if (inet_pton(a.ipv6 ? AF_INET6 : AF_INET, host.c_str(), bytes) != 1)
    return Error::bad_input(fmt::format("--metrics-addr '{}': '{}' is not an IP{} address", text, host,
                                        a.ipv6 ? "v6" : "v4"),
                            kAddressFix);
  a.host = host;
  return a;
}

Result<PushTarget> parse_push_url(const std::string& text) {
  const char* fix = "pass the Pushgateway's URL, e.g. --metrics-push http://127.0.0.1:9091";
  const size_t scheme_end = text.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : text.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return Error::bad_input(fmt::format("--metrics-push '{}' is not an http:// or https:// URL", text), fix);
  std::string rest = text.substr(scheme_end + 3);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos)
    return Error::bad_input(fmt::format("--metrics-push '{}': give the Pushgateway's address without a path", text),
                            fix);
  PushTarget t;
  const size_t colon = rest.rfind(':');
  const bool has_port = colon != std::string::npos && rest.find(']', colon) == std::string::npos;
  std::string host = has_port ? rest.substr(0, colon) : rest;
  t.port = has_port ? rest.substr(colon + 1) : "9091";
  if (host.empty() || t.port.empty() || t.port.find_first_not_of("0123456789") != std::string::npos)
    return Error::bad_input(fmt::format("--metrics-push '{}' is not http://HOST[:PORT]", text), fix);
  t.host = scheme + "://" + host;
  return t;
}

Result<std::shared_ptr<MetricsService>> MetricsService::start(const std::string& listen, const std::string& push_url) {
  if (listen.empty() && push_url.empty()) return std::shared_ptr<MetricsService>();
  std::shared_ptr<MetricsService> service(new MetricsService());
  service->metrics_ = std::make_shared<LiveMetrics>();
  if (!push_url.empty()) {
    auto target = parse_push_url(push_url);
    if (!target) return target.error();
    service->push_ = *target;
    service->push_url_ = push_url;
  }
  if (listen.empty()) return service;
  auto address = parse_listen_address(listen);
  if (!address) return address.error();
  if (Status s = check_can_listen(*address); !s) return s.error();
  try {
    service->exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address->text(), "num_threads", "2"});
  } catch (const std::exception& e) {
    return Error::bad_input(fmt::format("--metrics-addr {}: cannot serve there: {}", address->text(), e.what()),
                            kAddressFix);
  }
  service->served_ = std::make_shared<CountedScrapes>(service->metrics_->registry());
  service->exposer_->RegisterCollectable(service->served_);
  const auto ports = service->exposer_->GetListeningPorts();
  service->port_ = ports.empty() ? address->port : ports.front();
  ListenAddress served = *address;
  served.port = static_cast<uint16_t>(*service->port_);
  std::fprintf(stderr, "ingero-bench: serving metrics on http://%s/metrics\n", served.text().c_str());
  return service;
}

Status MetricsService::push() {
  if (!push_) return {};
  try {
    prometheus::Gateway gateway(push_->host, push_->port, kPushJob, prometheus::Gateway::GetInstanceLabel(hostname()));
    gateway.RegisterCollectable(metrics_->registry());
    // The host's group is replaced whole: series of an earlier job (its loaders, its functions) do not
    // linger beside this one's (prometheus-cpp's Push replaces only the metrics it sends).
    (void)gateway.DeleteForInstance();
    const int code = gateway.Push();
    if (code >= 200 && code < 300) return {};
    return Error::failure(code < 0 ? fmt::format("pushing the metrics to {} failed: no answer", push_url_)
                                   : fmt::format("pushing the metrics to {} failed: HTTP {}", push_url_, code),
                          "check that a Pushgateway listens there");
  } catch (const std::exception& e) {
    return Error::failure(fmt::format("pushing the metrics to {} failed: {}", push_url_, e.what()));
  }
}

std::optional<ServingCost> MetricsService::serving_cost() const {
  if (!exposer_) return std::nullopt;
  ServingCost cost;
  cost.scrapes = served_->scrapes();
  const pid_t self = getpid();
  for (pid_t tid : proc::thread_ids(self))
    if (proc::thread_name(self, tid).value_or("").rfind(kServerThreadPrefix, 0) == 0)
      cost.cpu_ns += proc::thread_cpu_ns(self, tid).value_or(0);
  return cost;
}

MetricsService::~MetricsService() {
  if (Status s = push(); !s) std::fprintf(stderr, "ingero-bench: %s\n", s.error().message.c_str());
  else if (push_) std::fprintf(stderr, "ingero-bench: metrics pushed to %s\n", push_url_.c_str());
}

}  // namespace ingero::metrics
