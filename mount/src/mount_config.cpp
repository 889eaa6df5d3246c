// SPDX-License-Identifier: LGPL-2.1-or-later
#include "mount_config.hpp"

#include "vod/cluster/etcd_options.hpp"

#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <sstream>

#include "vod/client/buffer_pool.hpp"

namespace vod::mount {

namespace po = boost::program_options;

namespace {

const char* const kUsage =
    "vod-mount: a vod-server's catalog as a read-only file system; any program opens a movie as a file\n"
    "and its reads are one-sided RDMA Reads\n\n"
    "usage: vod-mount rdma://host[:port] MOUNTPOINT [-f] [-o option[,option...]] [options]\n"
    "       fusermount3 -u MOUNTPOINT   (unmounts)\n\n"
    "options (each also works as -o name=value, e.g. from /etc/fstab)";

po::options_description own_options(MountConfig& c) {
  po::options_description d(kUsage);
  // An option table, laid out by hand: one option a line.
  // clang-format off
  d.add_options()
      ("refresh", po::value(&c.refresh)->default_value(c.refresh), "seconds a catalog is trusted before it is read again (new and removed movies appear after this)")
      ("sessions", po::value(&c.sessions)->default_value(c.sessions), "connections per movie at most, shared by the files open on it")
      ("idle-close", po::value(&c.idle_close)->default_value(c.idle_close), "seconds an unused connection stays open")
      ("page-cache", po::value<std::string>()->default_value("on"), "on: the kernel caches pages and reads ahead; off: direct I/O, each read() comes here")
      ("readahead-kib", po::value(&c.readahead_kib)->default_value(c.readahead_kib), "vod-mount's own read-ahead per sequential reader, in KiB (0: none); with zero copy and the page cache on, the kernel's read-ahead takes its place")
      ("zero-copy", po::value<std::string>()->default_value("auto"), "auto: RDMA Reads land in registered buffers and the reply to the kernel is written from them; off: through the session's ring, copied (for tests and bisecting)")
      ("zero-copy-buffers", po::value(&c.zero_copy_buffers)->default_value(c.zero_copy_buffers), "registered 128 KiB buffers in use at once, all reads together (beyond them a read is copied)")
      ("chunk-kib", po::value(&c.chunk_kib)->default_value(c.chunk_kib), "bytes per RDMA Read, in KiB")
      ("depth", po::value(&c.depth)->default_value(c.depth), "RDMA Reads in flight per connection at most")
      ("reconnect-for", po::value(&c.reconnect_for)->default_value(c.reconnect_for), "seconds reads wait while the server is away; then they fail with EIO")
      ("connect-timeout", po::value(&c.connect_timeout)->default_value(c.connect_timeout), "seconds one connection attempt may take")
      ("transport", po::value(&c.transport)->default_value(c.transport), "rdma, or udp: Write-Record over UDP (the server needs --udp-port; no RDMA device here)")
      ("udp-port", po::value(&c.udp_port)->default_value(c.udp_port), "the server's Write-Record port, with --transport udp")
      ("log-level", po::value(&c.log_level)->default_value(c.log_level), "debug, info, warn or error")
      ("log-format", po::value(&c.log_format)->default_value(c.log_format), "text (one line per event) or json (one object per line, for log shippers)")
      ("log-file", po::value(&c.log_file), "in the background, append log lines to FILE (default: they are dropped)");
  // clang-format on
  cluster::add_etcd_options(d, c.etcd);
  return d;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

std::optional<MountConfig> parse_mount_config(const std::vector<std::string>& args) {
  MountConfig c;
  std::vector<std::string> positional, dash_o;
  po::options_description own = own_options(c);
  po::options_description all;
  // An option table, laid out by hand: one option a line.
  // clang-format off
  all.add(own).add_options()
      ("help,h", "show this help")
      ("version,V", "show the version")
      ("foreground,f", po::bool_switch(&c.foreground), "stay in the foreground")
      ("debug,d", po::bool_switch(&c.debug), "libfuse's debug output (implies -f)")
      ("single-thread,s", po::bool_switch(&c.single_thread), "one FUSE thread")
      ("option,o", po::value(&dash_o)->composing(), "mount options")
      ("positional", po::value(&positional)->composing(), "");
  // clang-format on
  po::positional_options_description p;
  p.add("positional", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(p).run(), vm);
    if (vm.count("help")) {
      std::cout << own << "\n  -f                     stay in the foreground (logs to stderr)\n"
                << "  -d                     libfuse's debug output; implies -f\n"
                << "  -s                     one FUSE thread\n"
                << "  -o OPT[,OPT...]        mount options: the above as name=value, or libfuse's own\n"
                << "                         (allow_other, default_permissions, max_read=N, ...)\n\n"
                << "/etc/fstab: rdma://host /mnt/vod fuse.vod-mount ro,_netdev,allow_other 0 0\n";
      return std::nullopt;
    }
    if (vm.count("version")) {
      std::cout << "vod-mount " VOD_VERSION "\n";
      return std::nullopt;
    }
    po::notify(vm);
    // -o name=value for vod-mount's own options; everything else is libfuse's.
    std::ostringstream ours;
    for (const auto& group : dash_o) {
      for (const auto& item : split_commas(group)) {
        const auto eq = item.find('=');
        std::string key = item.substr(0, eq);
        for (auto& ch : key)
          if (ch == '_') ch = '-';
        if (eq != std::string::npos && own.find_nothrow(key, false)) ours << key << '=' << item.substr(eq + 1) << '\n';
        else if (own.find_nothrow(key, false)) throw std::invalid_argument("-o " + item + " needs a value: -o " + key + "=VALUE");
        else c.fuse_options.push_back(item);
      }
    }
    std::istringstream in(ours.str());
    po::variables_map from_o;
    po::store(po::parse_config_file(in, own), from_o);
    // The command line's --name wins over -o name=value: apply -o only to what was left at its default.
    for (const auto& [key, value] : from_o) {
      if (!value.defaulted() && (vm.count(key) == 0 || vm[key].defaulted())) vm.erase(key), vm.emplace(key, value);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(std::string(e.what()) + " (see vod-mount --help)");
  }
  if (positional.size() != 2)
    throw std::invalid_argument(
        "expected the server and the mount point: vod-mount rdma://host[:port] MOUNTPOINT, or for a fleet vod-mount etcd://host:2379 "
        "MOUNTPOINT (see vod-mount --help)");
  c.server = positional[0];
  c.mountpoint = positional[1];
  try {
    cluster::set_etcd_security(c.etcd);  // before the server's etcd URL is parsed
  } catch (const cluster::ClusterError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string page_cache = vm["page-cache"].as<std::string>();
  if (page_cache == "on" || page_cache == "yes" || page_cache == "1") c.page_cache = true;
  else if (page_cache == "off" || page_cache == "no" || page_cache == "0") c.page_cache = false;
  else throw std::invalid_argument("--page-cache must be on or off, not '" + page_cache + "'");
  c.zero_copy = client::parse_zero_copy(vm["zero-copy"].as<std::string>());
  if (c.zero_copy_buffers == 0 || c.zero_copy_buffers > 65536) throw std::invalid_argument("--zero-copy-buffers must be 1..65536");
  if (c.debug) c.foreground = true;
  if (!(c.refresh >= 0 && c.refresh <= 86400)) throw std::invalid_argument("--refresh must be 0..86400 seconds");
  if (c.sessions == 0 || c.sessions > 64) throw std::invalid_argument("--sessions must be 1..64");
  if (c.chunk_kib < 8) throw std::invalid_argument("--chunk-kib must be at least 8");
  if (c.depth == 0) throw std::invalid_argument("--depth must be at least 1");
  if (!(c.reconnect_for >= 0)) throw std::invalid_argument("--reconnect-for must be 0 or more seconds");
  if (!(c.connect_timeout > 0)) throw std::invalid_argument("--connect-timeout must be more than 0 seconds");
  if (!(c.idle_close >= 0)) throw std::invalid_argument("--idle-close must be 0 or more seconds");
  if (c.transport != "rdma" && c.transport != "udp") throw std::invalid_argument("--transport must be rdma or udp");
  if (c.udp_port == 0 || c.udp_port > 65535) throw std::invalid_argument("--udp-port must be 1..65535");
  return c;
}

std::vector<std::string> fuse_arguments(const MountConfig& c) {
  std::vector<std::string> args{"vod-mount"};
  // Never writable, whatever the user passes: "rw" from fstab is dropped, "ro" always added.
  std::string opts = "ro,default_permissions,fsname=" + c.server + ",subtype=vod";
  static const std::set<std::string> dropped{"rw", "ro", "default_permissions"};
  for (const auto& o : c.fuse_options) {
    if (dropped.count(o)) continue;
    if (o.find(',') != std::string::npos) continue;  // split already; a comma here would smuggle options
    opts += "," + o;
  }
  args.push_back("-o");
  args.push_back(opts);
  if (c.debug) args.push_back("-d");
  return args;
}

}  // namespace vod::mount
