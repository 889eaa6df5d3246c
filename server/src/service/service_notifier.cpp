// SPDX-License-Identifier: LGPL-2.1-or-later
#include "service/service_notifier.hpp"

#include <systemd/sd-daemon.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "vod/log.hpp"

namespace vod::server {

namespace {
std::string count(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }
}  // namespace

std::string status_line(const ServiceStatus& s) {
  return count(s.clients, "client", "clients") + ", " + count(s.movies, "movie", "movies") + ", " +
         count(s.live_channels, "live channel", "live channels") + ", catalog generation " + std::to_string(s.generation);
}

ServiceNotifier::ServiceNotifier() : active_(std::getenv("NOTIFY_SOCKET") != nullptr) {}

void ServiceNotifier::send(const std::string& message) {
  if (!active_) return;
  const int rc = sd_notify(0, message.c_str());
  if (rc < 0) log::warn("server", "sd_notify(" + message.substr(0, message.find('\n')) + "): " + std::strerror(-rc));
}

void ServiceNotifier::ready(const ServiceStatus& s) {
  last_status_ = status_line(s);
  send("READY=1\nSTATUS=" + last_status_);
}

void ServiceNotifier::reloading() { send("RELOADING=1\nSTATUS=rescanning the media directory"); }

void ServiceNotifier::status(const ServiceStatus& s) {
  std::string line = status_line(s);
  if (line == last_status_) return;
  last_status_ = std::move(line);
  send("STATUS=" + last_status_);
}

void ServiceNotifier::stopping() { send("STOPPING=1\nSTATUS=draining"); }

}  // namespace vod::server
