// SPDX-License-Identifier: LGPL-2.1-or-later
// A client's connection to one vod-server: connect by URI, read the catalog and the movie's
// keyframe index, random-access reads of the movie, movie switches, and reconnection. All state
// that makes a stream resumable (which movie, which bytes) lives here, in the client: that is what
// lets the server be stateless.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "vod/client/buffer_pool.hpp"
#include "vod/client/errors.hpp"
#include "vod/client/interrupter.hpp"
#include "vod/client/read_engine.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/client/uri.hpp"
#include "vod/cluster/member_directory.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::client {

// How a session reads: one-sided RDMA Read (an RDMA device on both ends), or UDP Write-Record (any
// Linux machine; the server must run with --udp-port). docs/write-record.md.
enum class Transport { rdma, udp };

struct UdpOptions {
  std::uint16_t port = proto::kWriteRecordPort;   // the server's UDP port (not the URI's, which is RDMA's)
  double rate_bps = defaults::kUdpClientRateBps;  // the rate this client asks the server to send at
  std::uint32_t max_payload = 0;                  // bytes per datagram at most; 0: what the path MTU allows
  unsigned depth = 8;                             // records (chunks) asked for at once
  std::chrono::milliseconds first_timeout{150};   // for a record's first datagram, beyond its transfer time
  std::chrono::milliseconds gap_timeout{60};      // between two datagrams of a record: then ask for the holes
  unsigned retries = 10;                          // repairs of one record before the session reconnects
};

struct SessionOptions {
  EngineOptions engine;
  Transport transport = Transport::rdma;
  UdpOptions udp;
  // The completion queue (per device) this session's connection shares with the others a thread
  // drives; the session holds a reference. Null: the session makes one of its own.
  std::shared_ptr<rdma::CompletionHub> hub;
  // When > 0, the read-ahead window is this many seconds of the movie's bitrate (at least one
  // chunk, at most engine.readahead_bytes); otherwise engine.readahead_bytes.
  double readahead_seconds = 0;
  std::chrono::milliseconds connect_timeout = defaults::kConnectTimeout;
  // The QP's local ACK timeout exponent (defaults::kAckTimeout): a server that died or vanished
  // under a Read is noticed sooner, and the session reconnects, in a fleet to another member.
  std::uint8_t ack_timeout = defaults::kAckTimeout;
  // After a connection breaks: retry with exponential backoff, for at most give_up_after in all.
  ReconnectPolicy reconnect;
  // In a fleet (rdma+etcd:// URIs): this client's id, which picks among a movie's top k servers;
  // 0: one drawn at random per process.
  std::uint64_t client_id = 0;
};

class Session {
 public:
  // Connects to uri.host:uri.port for uri.movie (or catalog-only without one). Over RDMA with a
  // movie it returns once the connection is up and the movie's first bytes are on their way: the
  // accept says where the movie is, so pread() needs nothing else. The catalog (what movie()
  // and catalog() give) and the keyframe index (index()) are read behind those first bytes, and
  // the first call that needs one waits for it. Catalog-only and UDP sessions read the catalog
  // before returning (it is what says where the movie is). Throws ClientError.
  explicit Session(Uri uri, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Uri& uri() const noexcept { return uri_; }
  const SessionOptions& options() const noexcept { return options_; }
  std::string server() const;  // "host:port"
  // The server's catalog, and the current movie's entry in it (null for a catalog-only session).
  // Both wait for the catalog when it is still on its way (reconnecting like pread), and throw
  // ClientError(protocol_error) when it does not decode or does not list what the accept said.
  const proto::Catalog& catalog();
  const proto::CatalogEntry* movie();
  // The current movie's size in bytes, without waiting for the catalog (the accept gives it); 0
  // for a catalog-only session.
  std::uint64_t size() const noexcept;
  // True when the session was opened for a movie (or switched to one), catalog confirmed or not.
  bool has_movie() const noexcept { return movie_ || !accepted_name_.empty(); }
  // The current movie's keyframe index. Only time seeks and pictures need it, so a start does not
  // wait for it: it is read behind the movie's first bytes, and the first call waits until it has
  // landed (reconnecting like pread). Throws ClientError(protocol_error) when it does not decode.
  const proto::KeyframeIndex& index();
  bool index_ready() const noexcept { return index_read_.state == BackgroundRead::State::ready; }
  const proto::AcceptData& accept() const noexcept { return accept_; }
  // A session of a live channel's DVR window (its URI names ".dvr/NAME", vod/protocol/live_window.hpp):
  // pread() takes stream offsets, size() is proto::kWindowStreamBytes, no read-ahead goes past
  // engine().set_readahead_limit(), and a read of bytes no longer in the window throws
  // ClientError(out_of_range). read_window_index() reads its window index afresh: the whole region,
  // or `bytes` of it from `offset` (the 128-byte header, the marks published since; window_reader.hpp).
  bool window() const noexcept { return window_; }
  std::vector<std::uint8_t> read_window_index(std::uint64_t offset = 0, std::optional<std::size_t> bytes = std::nullopt);
  unsigned read_depth() const noexcept { return read_depth_; }

  // Switches to another movie of the catalog on the same connection: no message to the server.
  // When the server binds memory windows per connection (entries flagged kEntryWindowed), the
  // switch makes a new connection for the movie instead, with the same token; the caller notices
  // nothing unless the token does not cover it (ClientError unauthorized; the current movie stays).
  // Throws ClientError(unknown_movie) listing the catalog's names.
  void switch_movie(const std::string& name);

  // Registered buffers for zero-copy reads (docs/client.md, "Zero copy"): a pread or pread_async
  // into one has its blocks fetched straight into it by RDMA Read (direct transfers), unless
  // SessionOptions::engine.direct is off or the transport is UDP, when they go through the ring
  // like any other memory. Queuing pread_asyncs into several buffers ahead of the reader is how a
  // reader advertises them: they are its read-ahead. The pool is made by the first call, with
  // `options` (later calls return it as it is); it outlives reconnects and movie switches, and every
  // buffer taken from it stays valid after the session is gone.
  const std::shared_ptr<BufferPool>& buffers(const BufferPoolOptions& options = {});
  // Makes `pool` the session's buffers() instead: one pool shared by several sessions (vod-proxy's
  // movies), each connection registering its arenas on its own PD.
  void use_buffers(std::shared_ptr<BufferPool> pool);
  // True when reads into buffers() land there directly now (RDMA, and not forced off).
  bool zero_copy_active() const noexcept { return engine_.direct_active(); }

  // Blocking read of the current movie; reconnects and re-drives on connection loss.
  std::size_t pread(std::uint64_t offset, std::span<std::uint8_t> dest);
  // Asynchronous read: `done` runs from a later progress(). Returns an id for cancel().
  std::uint64_t pread_async(std::uint64_t offset, std::span<std::uint8_t> dest, ReadEngine::Callback done);
  // Forgets a request. A direct Read of it already posted still lands in its buffer: the engine
  // fences that memory (a later request into it waits for the Read), and a buffer given back to
  // its pool is free again only once the Read has completed.
  void cancel(std::uint64_t id) noexcept { engine_.cancel(id); }
  // Drives reads (ReadEngine::progress), reconnecting when the connection breaks.
  void progress(std::chrono::milliseconds wait);

  // Thread-safe: makes a blocking call in another thread (pread, progress, a reconnect's backoff)
  // throw Interrupted until clear_interrupt().
  void interrupt() noexcept { interrupter_.raise(); }
  void clear_interrupt() noexcept { interrupter_.clear(); }

  // Over UDP: the receiver's figures (repairs, datagrams dropped and why); empty over RDMA.
  std::string transport_summary() const;

  // How long the last (re)connect took: the rdma_cm connect alone (or the UDP hello; the ring's
  // registration overlaps the connect's round trip), then what describes the movie before the
  // constructor returns (over RDMA with a movie: decoding the accept and posting the movie's first
  // bytes, the catalog being read behind them; otherwise reading the catalog).
  struct StartupTimes {
    std::chrono::microseconds connect{0};
    std::chrono::microseconds describe{0};
  };
  const StartupTimes& startup() const noexcept { return startup_; }

  ReadEngine& engine() noexcept { return engine_; }
  // For an event loop that drives the session with progress(0) (vod-proxy): whether it has a
  // connection (disconnected after a loss with ReconnectPolicy::in_place = false, until its owner
  // opens another session), the fds to watch, and the next moment progress(0) must run even if
  // none of them became readable (ReadEngine::next_deadline: a UDP record's repair timer, the
  // stuck-Read check). A loop that waits only on the fds misses a server that went quiet.
  enum class State { connected, disconnected };
  State state() const noexcept { return engine_.attached() ? State::connected : State::disconnected; }
  std::vector<int> wait_fds() const { return engine_.wait_fds(); }
  std::optional<ReadEngine::Clock::time_point> next_deadline() const { return engine_.next_deadline(); }
  const std::shared_ptr<rdma::CompletionHub>& hub() const noexcept { return hub_; }
  // The engine's figures, and the reconnects of this session (a snapshot).
  Stats stats() const;

 private:
  void connect();                 // to the URI's server, or in a fleet to the first member that accepts
  void connect_to_server();       // uri_.host:uri_.port
  void connect_in_fleet();        // session_fleet.cpp
  std::string member_id() const;  // the member connected to, as its record names it (host:port)
  void describe_from_accept(const std::string& name);
  // Points the engine's movie region at a movie: its bytes, or for one the server serves from its
  // segment cache (a segment table), its segments, which the fetcher reads through the table.
  void select_movie_region(const proto::RegionDescriptor& movie, const proto::RegionDescriptor& segments, std::uint32_t index,
                           std::uint64_t size);
  void describe_from_catalog(const std::string& name);
  void adopt(proto::CatalogEntry entry);  // checks it, then makes it the current movie
  // A reconnect (here, or on another member) continues only onto the same content identity: else it
  // starts over when nothing was delivered yet, or throws movie_changed (rejected while the server
  // does not know the identity yet: a retry may find it known). `where` names the new server.
  void check_same_version(const proto::CatalogEntry& entry);
  void switch_by_connecting(const std::string& name);
  // Each returns when its connection came back (the rdma_cm connect, or the UDP hello), for startup().
  std::chrono::steady_clock::time_point open_rdma(const std::string& name);
  std::chrono::steady_clock::time_point open_udp();
  void read_catalog();
  void set_catalog(std::span<const std::uint8_t> bytes);  // decodes it, or throws protocol_error
  void set_index(std::span<const std::uint8_t> bytes);    // the current movie's; empty: no index
  void reconnect(const std::string& why);
  void drop_connection() noexcept;  // the engine detached (its fetcher gone), the connection gone
  // Connects with `request` (rdma/server_connection.hpp) and makes the new connection the engine's:
  // endpoint_, read_depth_ and accept_. An unknown movie's refusal lists what the catalog has.
  rdma::ClientEndpoint& open_endpoint(const proto::ConnectRequest& request);
  std::string catalog_names() const;
  // A region read behind the movie's first bytes (the catalog, the keyframe index): posted by the
  // next progress(), decoded when it has landed and a caller needs it.
  struct BackgroundRead {
    enum class State { none, reading, ready } state = State::none;
    std::vector<std::uint8_t> bytes;  // where the Read lands
    std::uint64_t request = 0;
    bool landed = false;
  };
  void start_background(BackgroundRead& b, Region r, std::uint64_t length);
  void cancel_background(BackgroundRead& b) noexcept;
  void start_index_read(const proto::RegionDescriptor& index);  // the current movie's (see index())
  void confirm_catalog();                                       // a landed catalog: decoded, checked against the accept, adopted
  void settle_catalog();                                        // waits for a catalog still on its way, then confirms it
  void confirm_landed_catalog();                                // confirm_catalog() if the background catalog Read has landed
  void size_readahead();

  Uri uri_;
  SessionOptions options_;
  std::shared_ptr<rdma::CompletionHub> hub_;  // before engine_ and endpoint_: outlives both
  Interrupter interrupter_;
  ReadEngine engine_;
  std::unique_ptr<rdma::ClientEndpoint> endpoint_;  // after engine_: destroyed first
  proto::AcceptData accept_;
  proto::Catalog catalog_;
  std::optional<proto::CatalogEntry> movie_;
  std::string accepted_name_;  // the movie the accept described, until the catalog confirms it
  BackgroundRead catalog_read_;
  proto::KeyframeIndex index_;
  BackgroundRead index_read_;
  // A movie of the segment cache whose index the server is still building: none for now, read
  // again when asked for at least kIndexRecheck after the last read.
  bool index_pending_ = false;
  std::chrono::steady_clock::time_point index_checked_{};
  unsigned read_depth_ = 0;
  StartupTimes startup_;
  std::uint64_t resume_at_ = 0;   // the offset of the last read asked for: a (re)connect prefetches there
  bool window_ = false;           // a live channel's DVR window (".dvr/NAME"): read by stream offsets
  bool delivered_ = false;        // a read of the current movie completed with bytes: its version is fixed
  std::uint64_t reads_done_ = 0;  // reads that completed with bytes, for the rule below
  // The last reconnect's reason and reads_done_ then: a server that fails the same read again for
  // the same reason right after a reconnect (its origin is down, its disk fails) is not retried.
  std::string last_loss_;
  std::uint64_t reads_at_last_loss_ = 0;
  std::string served_by_;  // the server the current movie's version came from (movie_changed names it)
  // The catalog movie_ was taken from: within one server process (instance) and one generation an
  // entry names one version, known identity or not (docs/protocol.md, "Catalog region").
  std::uint64_t movie_instance_ = 0;
  std::uint32_t movie_generation_ = 0;
  std::uint64_t reconnects_ = 0;
  // In a fleet: the member list, and the member a connection was lost to (tried last on reconnect).
  std::shared_ptr<cluster::MemberDirectory> fleet_;
  std::string lost_member_;
  std::shared_ptr<BufferPool> pool_;  // buffers(): made on first use
};

// The names in a catalog, comma-separated, for error messages.
std::string list_names(const proto::Catalog& catalog, std::size_t max_names = 20);

}  // namespace vod::client
