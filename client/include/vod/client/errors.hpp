// What goes wrong for a client, as a kind a program can act on and a message a person can.
#pragma once

#include <stdexcept>
#include <string>

#include "vod/protocol/private_data.hpp"

namespace vod::client {

enum class ErrorKind {
  unknown_movie,       // the server has no such movie (the message lists what it has)
  server_unreachable,  // nothing answers at that address and port
  no_device,           // no RDMA device here (the message says how to get one)
  rejected,            // the server refused for another reason (full, version, shutting down, ...)
  unauthorized,        // the server needs an access token and refused this one (or none): retrying will not help
  protocol_error,      // the server's private data or regions did not decode
  connection_lost,     // the connection broke and reconnecting gave up
  out_of_range,        // a seek or read past the movie
  movie_changed,       // after a reconnect the movie is another version (content identity): resuming would mix files
  usage,               // a bad argument from the caller
};

const char* to_string(ErrorKind k) noexcept;

// The kind of error a server's reject code means for the client.
ErrorKind kind_of(proto::RejectCode code) noexcept;

class ClientError : public std::runtime_error {
 public:
  ClientError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// The connection failed under a read (error completion, or a DISCONNECTED event). Sessions catch it
// and reconnect; it escapes only from a ReadEngine used on its own.
class ConnectionLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another thread asked a blocking call to return (Session::interrupt, e.g. GstBaseSrc::unlock).
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace vod::client
