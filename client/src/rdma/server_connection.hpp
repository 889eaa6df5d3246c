// SPDX-License-Identifier: LGPL-2.1-or-later
// Opening an RDMA connection to one vod-server: the one place a client (Session for movies and the
// catalog, LiveSession for live channels) turns its options into rdma_cm connect options (the ack
// timeout among them), turns a refusal into a ClientError with the server's reason, decodes the
// accept and negotiates the Read depth and the largest Read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "vod/client/uri.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::client {

struct ServerConnectOptions {
  proto::ConnectRequest request;  // kind and selector; the URI's token is added to it
  std::string what;               // what is asked for, in a refusal: "the connection", "live channel 'cam'"
  unsigned read_depth = 16;       // Reads in flight wanted
  std::uint32_t send_queue_depth = 64;
  std::uint32_t recv_queue_depth = 0;
  std::chrono::milliseconds timeout = defaults::kConnectTimeout;
  std::uint8_t ack_timeout = 0;
  rdma::CompletionHub* hub = nullptr;
  std::function<void(rdma::ClientEndpoint&)> while_connecting;
};

struct ServerConnection {
  std::unique_ptr<rdma::ClientEndpoint> endpoint;
  proto::AcceptData accept;
  unsigned read_depth = 1;   // min(what the device gave this side, what the server granted), at least 1
  std::size_t max_read = 0;  // the largest Read: min(the server port's max_msg_sz, this device's)
};

// "host:port" as a client names a server in messages (IPv6 in brackets).
std::string server_name(const Uri& uri);

// Connects to uri's server. Throws ClientError: server_unreachable (nothing listens, no route, no
// answer), no_device, protocol_error (an accept that does not decode), or the kind of the server's
// reject code with its reason (unknown_movie, unauthorized, rejected).
ServerConnection connect_to(const Uri& uri, ServerConnectOptions options);

}  // namespace vod::client
