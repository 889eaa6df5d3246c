// SPDX-License-Identifier: LGPL-2.1-or-later
// What the server tells its service manager (systemd, Type=notify) through sd_notify(3): READY once
// it listens with the library registered, RELOADING/READY around a SIGHUP rescan, STOPPING when it
// drains, and a STATUS line with its clients and movies. Outside systemd (no NOTIFY_SOCKET) every
// call does nothing.
#pragma once

#include <cstddef>
#include <string>

namespace vod::server {

struct ServiceStatus {
  std::size_t clients = 0;
  std::size_t movies = 0;
  std::size_t live_channels = 0;
  unsigned generation = 0;
};

// The STATUS= text, e.g. "3 clients, 12 movies, 1 live channel, catalog generation 2".
std::string status_line(const ServiceStatus& s);

class ServiceNotifier {
 public:
  ServiceNotifier();
  bool active() const noexcept { return active_; }  // started by a service manager that listens
  void ready(const ServiceStatus& s);
  void reloading();
  // Sends STATUS= only when the text changed since the last one.
  void status(const ServiceStatus& s);
  void stopping();

 private:
  void send(const std::string& message);
  bool active_ = false;
  std::string last_status_;
};

}  // namespace vod::server
