// SPDX-License-Identifier: LGPL-2.1-or-later
#include "loop/signal_source.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vod::server::loop {

SignalSource::SignalSource(Reactor& reactor, std::initializer_list<int> signals, std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) throw std::runtime_error(std::string("sigprocmask: ") + std::strerror(errno));
  fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
  in_loop_ = reactor.add(fd_.get(), [this] { on_readable(); });
}

void SignalSource::on_readable() {
  signalfd_siginfo info{};
  while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) on_signal_(static_cast<int>(info.ssi_signo));
}

}  // namespace vod::server::loop
