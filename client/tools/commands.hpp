// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client's subcommands. Each parses its own options (Boost.Program_options) and returns the
// process exit status.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "vod/client/session.hpp"
#include "vod/client/title_reader.hpp"

namespace vod::client::cli {

int run_list(const std::vector<std::string>& args);
int run_get(const std::vector<std::string>& args);
int run_play(const std::vector<std::string>& args);
int run_bench(const std::vector<std::string>& args);
int run_cluster(const std::vector<std::string>& args);

// Exit statuses, documented in `vod-client --help`.
enum Exit : int {
  exit_ok = 0,
  exit_error = 1,
  exit_usage = 2,
  exit_unknown_movie = 3,
  exit_unreachable = 4,
  exit_no_device = 5,
  exit_out_of_range = 6,
  exit_connection_lost = 7,
};

int exit_status_for(ErrorKind kind) noexcept;

// Options every subcommand takes: the read pipeline, connection behaviour, logging. Defaults are
// those of SessionOptions and EngineOptions, so --help and the library agree.
struct CommonOptions {
  SessionOptions session;
  std::string log_level = "warn";
  std::string log_format = "text";
  std::size_t chunk_kib = 0;
  std::size_t readahead_kib = 0;
  double readahead_seconds = 0;
  unsigned depth = 0;
  unsigned readahead_depth = 0;
  std::size_t first_read_kib = 0;
  double connect_timeout_s = 0;
  double reconnect_for_s = 0;
  std::string transport = "rdma";
  unsigned udp_port = 0;
  double udp_rate_mbps = 0;
  unsigned udp_payload = 0;
  std::string cluster;             // --cluster etcd://HOST[:PORT][/PREFIX]: URIs are movie names placed over the fleet
  cluster::EtcdSecurity etcd;      // --etcd-*: TLS and authentication for the fleet's etcd
  std::string zero_copy = "auto";  // --zero-copy auto|off
};
boost::program_options::options_description common_options(CommonOptions& o);
// Applies what was parsed: log level, sizes; throws ClientError(usage) for bad values.
void apply(CommonOptions& o);

// The command's URI: parse_uri(text), or with --cluster a movie NAME (or live/NAME) in that fleet.
Uri command_uri(const std::string& text, const CommonOptions& o);

// Parses `args` with `opts` and one positional URI (and `extra` positionals). Returns false after
// printing help when --help was given.
bool parse(const std::vector<std::string>& args, const boost::program_options::options_description& opts, const std::string& usage,
           std::string& uri, boost::program_options::variables_map& vm);

// vod-client bench --pattern live (bench_live.cpp): `clients` viewers of one live channel for
// `duration` seconds, each letting the server send `credits` notifications ahead.
int bench_live(const Uri& uri, unsigned clients, double duration, const CommonOptions& common, unsigned credits);

// A title's options for vod-client: MP4 and Matroska renditions remuxed to MPEG-TS by vod_media,
// pinned to `rendition` unless it is empty.
TitleOptions title_options(const std::string& rendition);

// Whether `uri` names a title (a folder of renditions in its server's catalog) and not a movie.
bool names_a_title(const Uri& uri, const SessionOptions& options);

// vod-client bench rdma://host/TITLE (bench_title.cpp): `clients` players of a title, each on its
// own connection and thread, paced as a player is, for `duration` seconds; pinned to `rendition`
// unless it is empty.
int bench_title(const Uri& uri, unsigned clients, double duration, const CommonOptions& common, const std::string& rendition);

}  // namespace vod::client::cli
