// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma/server_connection.hpp"

#include <algorithm>

#include "vod/client/errors.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/rdma/error.hpp"

namespace vod::client {

std::string server_name(const Uri& uri) { return cluster::format_host_port(uri.host, uri.port); }

ServerConnection connect_to(const Uri& uri, ServerConnectOptions options) {
  add_token(options.request, uri);
  rdma::ConnectOptions o;
  o.host = uri.host;
  o.port = uri.port;
  o.private_data = proto::encode(options.request);
  o.wanted_read_depth = options.read_depth;
  o.send_queue_depth = options.send_queue_depth;
  o.recv_queue_depth = options.recv_queue_depth;
  o.timeout = options.timeout;
  o.ack_timeout = options.ack_timeout;
  o.hub = options.hub;
  o.while_connecting = std::move(options.while_connecting);
  const std::string server = server_name(uri);
  ServerConnection c;
  try {
    c.endpoint = rdma::connect(o);
  } catch (const rdma::ConnectRejected& r) {
    if (r.no_listener())
      throw ClientError(ErrorKind::server_unreachable, "nothing listens on " + server + " (is vod-server running there?)");
    auto reject = proto::decode_reject(r.private_data());
    if (!reject)
      throw ClientError(ErrorKind::rejected,
                        server + " refused the connection (" + r.what() + ") without a readable reason: " + reject.error().message);
    throw ClientError(kind_of(reject->code),
                      server + " rejected " + options.what + ": " + proto::to_string(reject->code) + ": " + reject->reason);
  } catch (const rdma::ConnectFailed& e) {
    throw ClientError(ErrorKind::server_unreachable, "cannot reach " + server + ": " + e.what());
  } catch (const rdma::NoDeviceError& e) {
    throw ClientError(ErrorKind::no_device, e.what());
  }
  auto accept = proto::decode_accept(c.endpoint->accept_data);
  if (!accept) throw ClientError(ErrorKind::protocol_error, server + " sent an accept that does not decode: " + accept.error().message);
  c.accept = *accept;
  c.read_depth = std::max(1u, std::min<unsigned>(c.endpoint->initiator_depth, c.accept.granted_read_depth));
  c.max_read = std::min<std::size_t>(c.accept.max_message_size, c.endpoint->limits.max_msg_size);
  return c;
}

}  // namespace vod::client
