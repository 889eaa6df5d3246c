// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "vod/media/title_remux_module.hpp"

namespace vod::media {

RemuxSegmentFn load_title_remux() {
  static std::once_flag once;
  static RemuxSegmentFn fn = nullptr;
  static std::string error;
  std::call_once(once, [] {
    // Kept loaded for the process's life: its function is called from TitleReader until exit.
    void* module = dlopen(kTitleRemuxModule, RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      error = std::string("cannot load ") + kTitleRemuxModule + ": " + dlerror();
      return;
    }
    using Entry = RemuxSegmentFn (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(module, kTitleRemuxEntry));
    if (!entry) {
      error = std::string(kTitleRemuxModule) + " has no " + kTitleRemuxEntry + ": " + dlerror();
      return;
    }
    fn = entry();
  });
  if (!fn) throw std::runtime_error(error + " (MP4 and Matroska renditions of a title are remuxed by it)");
  return fn;
}

}  // namespace vod::media
