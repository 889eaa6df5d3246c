// SPDX-License-Identifier: LGPL-2.1-or-later
// The active side's connect as a state machine that never waits: each step is started when the
// event that ends the one before arrives on the connector's CM channel, so an event loop (asio, a
// Reactor, poll) drives it from the channel's fd and its deadline, and a hung or absent server never
// holds the loop. rdma::connect() is this, driven by a poll() of its own.
//
//   resolving_address --ADDR_RESOLVED--> resolving_route --ROUTE_RESOLVED--> connecting --ESTABLISHED--> established
//   any of the first three --REJECTED, any other event, an error, or the step's deadline--> failed
//
// Each step has `ConnectOptions::timeout` (as the blocking connect always had). The transitions are
// a pure function (connect_transition), table-tested; the Soft-RoCE tests drive a Connector against
// a live server, a missing listener and a stopped (SIGSTOP) one.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <rdma/rdma_cma.h>

#include "vod/rdma/connection.hpp"

namespace vod::rdma {

enum class ConnectState { resolving_address, resolving_route, connecting, established, failed };
const char* to_string(ConnectState s) noexcept;

enum class ConnectAction {
  none,                   // not an event this state waits for, and no reason to fail
  resolve_route,          // ADDR_RESOLVED: rdma_resolve_route
  create_qp_and_connect,  // ROUTE_RESOLVED: PD, CQ share, QP, rdma_connect, while_connecting
  take_accept,            // ESTABLISHED: copy the accept's private data; done
  fail_rejected,          // REJECTED: ConnectRejected (no listener, or the server's reject)
  fail_event,             // an unexpected event (ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, ...): ConnectFailed
};

struct ConnectStep {
  ConnectState next;
  ConnectAction action;
};

// What `event` means in `state`. Pure.
ConnectStep connect_transition(ConnectState state, rdma_cm_event_type event) noexcept;

class Connector {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts resolving (rdma_resolve_addr) and returns at once. A host name is resolved here with
  // rdma_getaddrinfo, which may ask DNS: pass a numeric address to never wait. Throws what
  // rdma::connect throws for what fails at once (NoDeviceError, ConnectFailed, RdmaError). The
  // device list is looked at only when something failed while resolving the address: with no
  // RDMA device at all the failure is NoDeviceError, whatever call noticed it.
  explicit Connector(ConnectOptions options);
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // The CM channel's fd: readable when step() has an event to take.
  int fd() const noexcept;
  // When the step under way times out.
  Clock::time_point deadline() const noexcept { return deadline_; }
  ConnectState state() const noexcept { return state_; }

  // Takes the events that are there (never waits) and moves on; fails the connect once `now` is
  // past the deadline. Returns the state it is in.
  ConnectState step(Clock::time_point now = Clock::now());
  // The endpoint, once established (null before; once only).
  std::unique_ptr<ClientEndpoint> take();
  // Once failed: throws what rdma::connect would have thrown (ConnectRejected, ConnectFailed, ...).
  [[noreturn]] void rethrow() const;

 private:
  std::optional<CmEvent> poll_event() noexcept;  // the next event without waiting; a failure fails the connect
  void act(ConnectAction action, CmEvent& event);
  void fail(std::exception_ptr e) noexcept;
  void create_qp_and_connect();
  std::string step_text() const;

  ConnectOptions options_;
  std::string target_;
  std::unique_ptr<ClientEndpoint> ep_;
  ConnectState state_ = ConnectState::resolving_address;
  Clock::time_point deadline_;
  std::exception_ptr error_;
};

}  // namespace vod::rdma
