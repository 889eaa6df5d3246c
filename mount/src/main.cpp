// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-mount: a vod-server's catalog as a read-only FUSE file system (libfuse3). Any program opens
// /mnt/vod/NAME as a file; its reads become one-sided RDMA Reads through libvodclient.
//
// Start-up is checked before the program returns: the server is reached and the catalog read, and
// the file system is mounted, and only then does the background process detach. So `vod-mount`
// (or `mount`, through mount.fuse3 from /etc/fstab) fails with a message and an exit status when
// the server is unreachable, the device missing or the mount point wrong, instead of leaving a dead
// mount. libfuse's fuse_daemonize() is not used because it forks after our RDMA set-up would
// have to happen (verbs resources do not survive a fork) or before the checks could report.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "mount_config.hpp"
#include "vod/log.hpp"
#include "vod_fs.hpp"

namespace {

using namespace vod;

enum Exit { ok = 0, failed = 1, usage = 2, no_device = 3 };

// The pipe the background process reports its start-up on: one status byte, then a message.
struct StartupReport {
  int fd = -1;
  void send(int status, const std::string& message) {
    if (fd < 0) {
      if (!message.empty()) std::fprintf(stderr, "vod-mount: %s\n", message.c_str());
      return;
    }
    const std::string line = std::string(1, static_cast<char>(status)) + message;
    [[maybe_unused]] const auto n = ::write(fd, line.data(), line.size());
    ::close(fd);
    fd = -1;
  }
};

// The parent waits for the child's report and exits with its status.
int wait_for_child(pid_t child, int fd) {
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  if (got.empty()) {  // died without a word
    int status = 0;
    ::waitpid(child, &status, 0);
    std::fprintf(stderr, "vod-mount: the mount process ended before mounting (status %d)\n", status);
    return failed;
  }
  if (got.size() > 1) std::fprintf(stderr, "vod-mount: %s\n", got.c_str() + 1);
  return static_cast<unsigned char>(got[0]);
}

int serve(const mount::MountConfig& config, StartupReport& report) {
  client::Uri server;
  try {
    server = client::parse_server_uri(config.server);
    if (server.movie)
      throw std::invalid_argument(
          "the server is rdma://host[:port] (or a fleet, etcd://host:2379), without a movie: the mount lists them all");
  } catch (const std::exception& e) {
    report.send(usage, e.what());
    return usage;
  }
  client::SessionOptions options;
  options.engine.chunk_size = std::size_t{config.chunk_kib} * 1024;
  options.engine.read_depth = config.depth;
  options.connect_timeout = std::chrono::milliseconds(static_cast<long>(config.connect_timeout * 1000));
  options.reconnect.give_up_after = std::chrono::milliseconds(static_cast<long>(config.reconnect_for * 1000));
  if (config.transport == "udp") options.transport = client::Transport::udp;
  options.udp.port = static_cast<std::uint16_t>(config.udp_port);

  const auto refresh = std::chrono::milliseconds(static_cast<long>(config.refresh * 1000));
  mount::CatalogCache catalog(server, options, refresh);
  try {
    catalog.load();
  } catch (const client::ClientError& e) {
    report.send(e.kind() == client::ErrorKind::no_device ? no_device : failed,
                std::string("cannot mount ") + server.to_string() + ": " + e.what());
    return e.kind() == client::ErrorKind::no_device ? no_device : failed;
  } catch (const std::exception& e) {
    report.send(failed, std::string("cannot mount ") + server.to_string() + ": " + e.what());
    return failed;
  }
  const auto first = catalog.get();
  mount::PoolLimits limits;
  limits.sessions = config.sessions;
  limits.idle_close = std::chrono::milliseconds(static_cast<long>(config.idle_close * 1000));
  limits.readahead_bytes = std::size_t{config.readahead_kib} * 1024;
  limits.zero_copy = config.zero_copy;
  limits.kernel_readahead = config.page_cache;
  limits.max_buffers = config.zero_copy_buffers;
  mount::MoviePool pool(server, options, limits);
  mount::FsSettings settings;
  settings.page_cache = config.page_cache;
  settings.attr_seconds = config.refresh;
  mount::VodFs fs(catalog, pool, settings);

  std::vector<std::string> args = mount::fuse_arguments(config);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  const fuse_lowlevel_ops ops = mount::VodFs::operations();
  // fuse_session_new parses (and rejects, with its own message) the -o options.
  std::unique_ptr<fuse_session, decltype(&fuse_session_destroy)> f(fuse_session_new(&fargs, &ops, sizeof ops, &fs), &fuse_session_destroy);
  if (!f) {
    report.send(usage, "libfuse refused the mount options (" + args.back() + "); see vod-mount --help");
    return usage;
  }
  if (fuse_session_mount(f.get(), config.mountpoint.c_str()) != 0) {
    report.send(
        failed,
        "cannot mount on " + config.mountpoint +
            " (is /dev/fuse there, the fuse module loaded, fusermount3 installed, and the mount point an empty directory you own?)");
    return failed;
  }
  if (fuse_set_signal_handlers(f.get()) != 0) {
    fuse_session_unmount(f.get());
    report.send(failed, "cannot install signal handlers");
    return failed;
  }
  if (!config.foreground) {
    report.send(ok, "");
    // Detached from the terminal: log lines go to --log-file, or nowhere.
    const int null = ::open("/dev/null", O_RDWR);
    const int log_fd = config.log_file.empty() ? null : ::open(config.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(log_fd >= 0 ? log_fd : null, STDERR_FILENO);
    if (log_fd >= 0 && log_fd != null) ::close(log_fd);
    if (null > STDERR_FILENO) ::close(null);
    [[maybe_unused]] const int rc = ::chdir("/");
  }
  log::info("mount", server.to_string() + " mounted on " + config.mountpoint + ": " + std::to_string(first->catalog.entries.size()) +
                         " movies, catalog generation " + std::to_string(first->catalog.generation) + ", page cache " +
                         (config.page_cache ? "on" : "off"));

  // Idle connections close on their own, from a thread that sleeps in between.
  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::thread sweeper([&] {
    std::unique_lock lock(stop_mutex);
    while (!stop_cv.wait_for(lock, std::chrono::seconds(5), [&] { return stopping; })) pool.close_idle();
  });

  int rc = 0;
  if (config.single_thread) {
    rc = fuse_session_loop(f.get());
  } else {
    std::unique_ptr<fuse_loop_config, decltype(&fuse_loop_cfg_destroy)> loop(fuse_loop_cfg_create(), &fuse_loop_cfg_destroy);
    fuse_loop_cfg_set_clone_fd(loop.get(), 0);
    fuse_loop_cfg_set_idle_threads(loop.get(), 10);
    rc = fuse_session_loop_mt(f.get(), loop.get());
  }
  {
    std::lock_guard lock(stop_mutex);
    stopping = true;
  }
  stop_cv.notify_all();
  sweeper.join();
  pool.close();  // its connections' threads answer reads on the session: they stop before it goes
  fuse_remove_signal_handlers(f.get());
  fuse_session_unmount(f.get());
  log::info("mount", config.mountpoint + " unmounted");
  return rc == 0 ? ok : failed;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<mount::MountConfig> config;
  try {
    config = mount::parse_mount_config(std::vector<std::string>(argv + 1, argv + argc));
    if (!config) return ok;
    log::set_level(log::parse_level(config->log_level));
    log::set_format(log::parse_format(config->log_format));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vod-mount: %s\n", e.what());
    return usage;
  }
  struct stat st {};
  if (::stat(config->mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "vod-mount: the mount point %s is not a directory (%s); create it first\n", config->mountpoint.c_str(),
                 ::stat(config->mountpoint.c_str(), &st) != 0 ? std::strerror(errno) : "not a directory");
    return usage;
  }
  std::signal(SIGPIPE, SIG_IGN);
  StartupReport report;
  if (!config->foreground) {
    // Fork before anything touches RDMA; the parent only waits for the child's start-up report.
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "vod-mount: pipe2: %s\n", std::strerror(errno));
      return failed;
    }
    const pid_t child = ::fork();
    if (child < 0) {
      std::fprintf(stderr, "vod-mount: fork: %s\n", std::strerror(errno));
      return failed;
    }
    if (child > 0) {
      ::close(fds[1]);
      return wait_for_child(child, fds[0]);
    }
    ::close(fds[0]);
    ::setsid();
    report.fd = fds[1];
  }
  return serve(*config, report);
}
