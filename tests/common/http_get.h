// SPDX-License-Identifier: Apache-2.0
// A plain HTTP/1.0 GET on the loopback, for the tests that scrape /metrics or ask Prometheus.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace ingero::testing {

// The whole reply (status line, headers, body) to GET path on 127.0.0.1:port; "" when nothing listens.
inline std::string http_reply(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    (void)!write(fd, request.data(), request.size());  // a short write shows as a reply the test rejects
    char buf[8192];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

// The body of a reply whose status is 200; "" for any other (nothing listening included).
inline std::string ok_body(const std::string& reply) {
  const size_t body = reply.find("\r\n\r\n");
  if (reply.find(" 200 ") == std::string::npos || body == std::string::npos) return "";
  return reply.substr(body + 4);
}

}  // namespace ingero::testing
