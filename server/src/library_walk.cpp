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
    std::error_code real_ec;
    const fs::path real = fs::canonical(at, real_ec);
    if (!real_ec) open_.push_back(real);
    // increment(ec), not a range for: a folder that fails half-way (EIO, ESTALE on NFS) ends its own
    // listing, not the scan.
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (++visited_ > kMaxEntries) {
        if (visited_ == kMaxEntries + 1)
          log::warn("library",
                    "the media directory holds more than " + std::to_string(kMaxEntries) + " files and folders: the rest are not listed");
        break;
      }
      visit(*it, prefix, out);
    }
    if (ec)
      log::warn("library", "the folder " + (prefix.empty() ? std::string("at the top") : prefix) + " was listed in part: " + ec.message());
    if (!real_ec) open_.pop_back();
  }

 private:
  void visit(const fs::directory_entry& entry, const std::string& prefix, std::vector<LibraryFile>& out) {
    const std::string leaf = entry.path().filename().string();
    if (leaf.empty() || leaf[0] == '.') return;  // hidden: editor swap files, generator stamps, .live/
    const std::string name = prefix + leaf;
    std::error_code ec;
    const bool link = entry.is_symlink(ec);
    // Where it really is (links resolved): it must be inside, and it is what the server opens
    // (open_resolved refuses a path that a link leads through later).
    const fs::path target = fs::canonical(entry.path(), ec);
    if (ec) return skip(name, link ? "a symlink whose target cannot be resolved (" + ec.message() + ")" : ec.message());
    if (!inside(target))
      return skip(name, std::string(link ? "a symlink to " : "resolves to ") + target.string() + ", outside the media directory");
    if (link)
      if (const char* why = hidden_or_reserved(target)) return skip(name, why);
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
      if (std::find(open_.begin(), open_.end(), target) != open_.end()) return skip(name, "a symlink that loops back to a folder above it");
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
    out.push_back({name, target.string()});
  }

  // What a link's target is below the top: a hidden file or folder, or a reserved top-level name,
  // is not served through a link either.
  const char* hidden_or_reserved(const fs::path& real) const {
    const fs::path rel = real.lexically_relative(root_);
    bool top = true;
    for (const auto& part : rel) {
      const std::string p = part.string();
      if (!p.empty() && p[0] == '.' && p != ".") return "a symlink into a hidden file or folder";
      if (top && (kReservedRootNames.count(p) || reserved_.count(p))) return "a symlink into a reserved top-level name";
      top = false;
    }
    return nullptr;
  }

  bool inside(const fs::path& real) const {
    auto [r, t] = std::mismatch(root_.begin(), root_.end(), real.begin(), real.end());
    return r == root_.end();
  }

  static void skip(const std::string& name, const std::string& why) { log::warn("library", "skipping " + name + ": " + why); }

  static constexpr unsigned kMaxFolderLinks = 8;
  // Files and folders one walk visits at most: links to folders multiply them (two links in each of
  // 8 nested folders list 256 times what is below), so the walk has a bound of its own.
  static constexpr std::size_t kMaxEntries = 1'000'000;

  fs::path root_;
  const std::set<std::string>& reserved_;
  std::vector<fs::path> open_;
  unsigned links_ = 0;  // symlinks to folders on the path being listed
  std::size_t visited_ = 0;
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
