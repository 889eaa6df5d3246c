// SPDX-License-Identifier: LGPL-2.1-or-later
#include "library_walk.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "vod/log.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::server {

namespace fs = std::filesystem;

namespace {

// One walk: the media directory's real path, the folders being listed (their real paths, to refuse
// loops), and what was found.
class Walk {
 public:
  Walk(const fs::path& root, const std::set<std::string>& reserved) : root_(root), reserved_(reserved) {}

  void folder(const fs::path& at, const std::string& prefix, std::vector<LibraryFile>& out) {
    std::error_code ec;
    fs::directory_iterator it(at, ec);
    if (ec) {
      if (prefix.empty()) throw std::runtime_error("cannot list the media directory " + at.string() + ": " + ec.message());
      log::warn("library", "skipping the folder " + prefix + ": " + ec.message());
      return;
    }
    const fs::path real = fs::canonical(at, ec);
    if (!ec) open_.push_back(real);
    for (const auto& entry : it) visit(entry, prefix, out);
    if (!ec) open_.pop_back();
  }

 private:
  void visit(const fs::directory_entry& entry, const std::string& prefix, std::vector<LibraryFile>& out) {
    const std::string leaf = entry.path().filename().string();
    if (leaf.empty() || leaf[0] == '.') return;  // hidden: editor swap files, generator stamps, .live/
    const std::string name = prefix + leaf;
    std::error_code ec;
    const bool link = entry.is_symlink(ec);
    fs::path target = entry.path();
    if (link) {
      target = fs::canonical(entry.path(), ec);
      if (ec) return skip(name, "a symlink whose target cannot be resolved (" + ec.message() + ")");
      if (!inside(target)) return skip(name, "a symlink to " + target.string() + ", outside the media directory");
    }
    const fs::file_status st = fs::status(target, ec);
    if (ec) return skip(name, ec.message());
    const bool folder_here = fs::is_directory(st);
    if (prefix.empty() && kReservedRootNames.count(leaf))
      return skip(name, std::string("'") + leaf + "' is reserved at the top (rdma://HOST/" + leaf + "/ and vod-proxy's /" + leaf +
                            "/ mean something else): rename or move it");
    if (prefix.empty() && reserved_.count(leaf)) return skip(name, "a live channel has that name");
    // A folder's own path obeys the rule too: nothing below a folder that breaks it could.
    if (const char* why = proto::invalid_name_reason(name)) return skip(name, why);
    if (folder_here) {
      const fs::path real = link ? target : fs::canonical(entry.path(), ec);
      if (!ec && std::find(open_.begin(), open_.end(), real) != open_.end())
        return skip(name, "a symlink that loops back to a folder above it");
      // Links to folders multiply what is below them (two links to one folder list it twice); a
      // bound on how many one path may pass through keeps a tree of them from growing the walk
      // beyond reason.
      if (link && links_ == kMaxFolderLinks)
        return skip(name, "a symlink below " + std::to_string(kMaxFolderLinks) + " other symlinks to folders");
      links_ += link;
      folder(target, name + "/", out);
      links_ -= link;
      return;
    }
    if (!fs::is_regular_file(st)) return skip(name, "neither a regular file nor a folder");
    out.push_back({name, (link ? target : entry.path()).string()});
  }

  bool inside(const fs::path& real) const {
    auto [r, t] = std::mismatch(root_.begin(), root_.end(), real.begin(), real.end());
    return r == root_.end();
  }

  static void skip(const std::string& name, const std::string& why) { log::warn("library", "skipping " + name + ": " + why); }

  static constexpr unsigned kMaxFolderLinks = 8;

  fs::path root_;
  const std::set<std::string>& reserved_;
  std::vector<fs::path> open_;
  unsigned links_ = 0;  // symlinks to folders on the path being listed
};

}  // namespace

std::vector<LibraryFile> walk_library(const std::string& dir, const std::set<std::string>& reserved) {
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) throw std::runtime_error("cannot list the media directory " + dir + ": " + ec.message());
  std::vector<LibraryFile> out;
  Walk(root, reserved).folder(fs::path(dir), "", out);
  std::sort(out.begin(), out.end(), [](const LibraryFile& a, const LibraryFile& b) { return a.name < b.name; });
  return out;
}

}  // namespace vod::server
