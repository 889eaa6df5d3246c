// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's live channels: for each its ring and header (Channel), its source thread, what the
// event loop knows of it (ChannelView), its multicast sender (--live-multicast), and its
// registrations on every device (REMOTE_READ, or window binding only, and exactly the advertised
// bytes), described as catalog entries after the movies. Sources publish records from their
// threads and wake the loop through one eventfd, registered here; on_records() then hears which
// channel has new records (the live transport pumps its viewers).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "live/channel.hpp"
#include "live/channel_view.hpp"
#include "live/recordings.hpp"
#include "live/sources.hpp"
#include "loop/reactor.hpp"
#include "movie_library.hpp"
#include "registrations.hpp"
#include "udp/live_multicast.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/rdma/handles.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

struct LiveOptions {
  double buffer_seconds = 4;         // ring size, in seconds of the channel's bitrate
  double assumed_bitrate_bps = 8e6;  // for sources whose bitrate is not known before they run
  std::size_t max_record_bytes = 64 * 1024;
  SourceOptions source;
  std::optional<udp::MulticastOptions> multicast;  // --live-multicast: every record to this group too
  std::optional<RecordOptions> record;             // --live-record: every channel into the media directory too
  // --live-dvr: each channel's window on disk, served from the segment cache with this layout.
  struct Dvr {
    DvrOptions options;  // options.bytes: 0 to size it by the channel's bitrate
    cache::TableLayout layout;
  };
  std::optional<Dvr> dvr;
};

class Channels {
 public:
  struct Regions {
    rdma::MemoryRegion ring, header;
  };

  Channels(loop::Reactor& reactor, std::vector<ChannelConfig> channels, LiveOptions options);
  ~Channels();  // stops and joins the source threads first
  Channels(const Channels&) = delete;
  Channels& operator=(const Channels&) = delete;

  bool empty() const noexcept { return channels_.empty(); }
  std::size_t size() const noexcept { return channels_.size(); }
  bool has(const std::string& name) const noexcept;
  // Starts every source thread.
  void start();
  // Registers every ring and header on `device` (once per device).
  void register_device(const std::shared_ptr<Device>& device);
  // The channels as catalog entries, with `ctx`'s descriptors (null: lengths only, for UDP
  // clients); appended after the movies.
  std::vector<proto::CatalogEntry> catalog_entries(ibv_context* ctx) const;

  std::optional<std::size_t> find(const std::string& name) const noexcept;
  const std::string& name(std::size_t channel) const noexcept { return channels_[channel].channel->name(); }
  const ChannelView& view(std::size_t channel) const noexcept { return channels_[channel].view; }
  ChannelStats stats(std::size_t channel) const { return channels_[channel].channel->stats(); }
  // --live-dvr: the channels' windows, as cached movies for the catalog (after the library's).
  const std::vector<std::shared_ptr<const LoadedMovie>>& windows() const noexcept { return windows_; }
  // Its registrations on `ctx` (throws std::out_of_range for a device it was not registered on).
  const Regions& regions(std::size_t channel, ibv_context* ctx) const { return channels_[channel].regions.at(ctx); }
  // Called in the loop's thread with a channel's index once new records are in its view.
  void on_records(std::function<void(std::size_t)> f) { on_records_ = std::move(f); }
  // --live-record: called in the loop's thread once recordings were completed or deleted (the
  // server rescans its media directory).
  void on_recorded(std::function<void()> f) { on_recorded_ = std::move(f); }

 private:
  struct ChannelSlot {
    std::unique_ptr<Channel> channel;
    std::unique_ptr<Source> source;
    ChannelView view;
    std::map<ibv_context*, Regions> regions;          // per device
    std::unique_ptr<udp::MulticastSender> multicast;  // used by the source thread, through the channel's tap
    std::unique_ptr<DvrWindow> window;                // written by the source thread; its index memory is its movie's
    std::jthread thread;                              // last: stopped and joined first
  };
  void attach_multicast(ChannelSlot& slot);
  void attach_window(ChannelSlot& slot, double bitrate_bps);
  void on_wake();

  // Declared so that they are destroyed in reverse: the channels' MRs before the devices' PDs, the
  // fd's registration before the fd.
  loop::Reactor& reactor_;
  LiveOptions options_;
  UniqueFd wake_fd_;  // an eventfd: the source threads' records were published
  loop::Reactor::Registration wake_in_loop_;
  std::vector<std::shared_ptr<Device>> devices_;
  std::function<void(std::size_t)> on_records_;
  std::function<void()> on_recorded_;
  std::unique_ptr<Recordings> recordings_;  // before the channels: their recorders report to it
  std::vector<std::shared_ptr<const LoadedMovie>> windows_;
  std::vector<ChannelSlot> channels_;
};

}  // namespace vod::server::live
