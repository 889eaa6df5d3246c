// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/channels.hpp"

#include <gst/gst.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/write_record.hpp"
#include "vod/rdma/error.hpp"
#include "vod/units.hpp"

namespace vod::server::live {

namespace {
constexpr std::size_t kMinRing = 256u << 10;  // room for a few records of 64 KiB at any bitrate

proto::RegionDescriptor describe(const ibv_mr* mr, std::uint64_t length) {
  return {reinterpret_cast<std::uint64_t>(mr->addr), length, mr->rkey};
}
}  // namespace

Channels::Channels(loop::Reactor& reactor, std::vector<ChannelConfig> configs, LiveOptions options)
    : reactor_(reactor), options_(std::move(options)) {
  if (configs.empty()) return;
  wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  wake_in_loop_ = reactor_.add(wake_fd_.get(), [this] { on_wake(); });
  if (options_.record) {
    std::vector<std::string> names;
    for (const auto& c : configs) names.push_back(c.name);
    recordings_ = std::make_unique<Recordings>(reactor_, *options_.record, std::move(names), [this] {
      if (on_recorded_) on_recorded_();
    });
  }
  bool gst = false;
  for (auto& c : configs) {
    for (const auto& other : channels_)
      if (other.channel->name() == c.name) throw std::invalid_argument("--live: the channel name '" + c.name + "' is given twice");
    double bps = estimated_bitrate_bps(c.source);
    const bool known = bps > 0;
    if (!known) bps = options_.assumed_bitrate_bps;
    auto ring = std::max(kMinRing, static_cast<std::size_t>(options_.buffer_seconds * bps / 8));
    // With a window, the ring holds at least a chunk and two records more: every byte older than the
    // ring is then in a chunk written whole, which the cache can serve.
    if (options_.dvr) ring = std::max<std::size_t>(ring, options_.dvr->options.segment_size + 2 * options_.max_record_bytes);
    ChannelSlot slot;
    slot.channel = std::make_unique<Channel>(c.name, ring, options_.max_record_bytes, wake_fd_.get());
    slot.source = make_source(c.source, options_.source);
    log::info("live", c.name + ": " + c.source.text + ", ring of " + std::to_string(ring >> 10) + " KiB (" +
                          std::to_string(options_.buffer_seconds).substr(0, 4) + " s at " + std::to_string(static_cast<long>(bps / 1000)) +
                          " kb/s" + (known ? "" : ", assumed: --live-bitrate") + ")");
    gst = gst || c.source.kind == SourceSpec::Kind::gst;
    if (options_.multicast) attach_multicast(slot);
    if (options_.dvr) attach_window(slot, bps);
    if (recordings_) slot.channel->set_recorder(std::make_unique<Recorder>(c.name, recordings_->options(), recordings_->sink()));
    channels_.push_back(std::move(slot));
  }
  if (gst) {
    GError* error = nullptr;
    if (!gst_init_check(nullptr, nullptr, &error)) {
      const std::string why = error ? error->message : "unknown error";
      if (error) g_error_free(error);
      throw std::runtime_error("GStreamer cannot start (gst: sources need it): " + why);
    }
  }
}

void Channels::attach_multicast(ChannelSlot& slot) {
  slot.multicast = std::make_unique<udp::MulticastSender>(*options_.multicast);
  const std::uint32_t id = proto::live_channel_id(slot.channel->name());
  slot.channel->set_tap([sender = slot.multicast.get(), id](const RecordInfo& info, std::span<const std::uint8_t> bytes) {
    udp::MulticastRecord r;
    r.channel_id = id;
    r.stream_id = info.stream_id;
    r.number = info.number;
    r.stream_offset = info.offset;
    r.flags = static_cast<std::uint16_t>(((info.flags & proto::kLiveKeyframe) ? proto::kRecordKeyframe : 0) |
                                         ((info.flags & proto::kLiveUnitStart) ? proto::kRecordUnitStart : 0) |
                                         ((info.flags & proto::kLiveDiscontinuity) ? proto::kRecordDiscontinuity : 0) |
                                         ((info.flags & proto::kLiveEndOfStream) ? proto::kRecordEndOfStream : 0));
    r.bytes = bytes;
    sender->send(r);
  });
  char id_text[16];
  std::snprintf(id_text, sizeof id_text, "%08x", id);
  log::info("live", slot.channel->name() + ": multicast to " + slot.multicast->destination() + " as channel id " + id_text + ", " +
                        std::to_string(slot.multicast->payload()) + "-byte payloads");
}

void Channels::attach_window(ChannelSlot& slot, double bitrate_bps) {
  static std::uint64_t next_id = 3ull << 62;  // apart from the ids of files on disk and at an origin
  const auto& dvr = *options_.dvr;
  DvrOptions o = dvr.options;
  const std::string& name = slot.channel->name();
  if (o.bytes == 0)  // the duration at half again the channel's bitrate, for a bitrate that rises
    o.bytes = static_cast<std::uint64_t>(static_cast<double>(o.duration.count()) / 1000 * bitrate_bps / 8 * 1.5);
  auto movie = std::make_shared<LoadedMovie>();
  movie->name = proto::window_entry_name(name);
  movie->index_bytes = HostBuffer(static_cast<std::size_t>(DvrWindow::index_length(o.duration)));
  try {
    slot.window = std::make_unique<DvrWindow>(name, o, movie->index_bytes.data());
  } catch (const std::runtime_error& e) {  // a disk without room for it: the channel goes on without a window
    log::error("live", name + ": no DVR window: " + e.what());
    return;
  }
  movie->path = slot.window->path().string();
  movie->file_size = slot.window->bytes();
  movie->cached = std::make_shared<cache::CachedFile>(next_id++, movie->path, movie->file_size, *slot.window, dvr.layout);
  movie->live_window = true;
  movie->info.is_media = true;
  movie->info.container = "mpegts";
  movie->info.mime_type = "video/mp2t";
  movie->info.duration_us = static_cast<std::uint64_t>(o.duration.count()) * 1000;
  movie->info.bitrate_bps = static_cast<std::uint64_t>(bitrate_bps);
  slot.channel->set_window(slot.window.get());
  windows_.push_back(std::move(movie));
  log::info("live", name + ": a DVR window of " + format_duration(o.duration) + " in " + std::to_string(slot.window->segments()) +
                        " chunks of " + std::to_string(slot.window->segment_size() >> 10) + " KiB (" +
                        std::to_string(slot.window->bytes() >> 20) + " MiB reserved in " + slot.window->path().string() + ")");
}

Channels::~Channels() {
  for (auto& c : channels_) {
    c.thread.request_stop();
    if (c.thread.joinable()) c.thread.join();
    if (c.multicast) {
      const auto& m = c.multicast->stats();
      log::info("live", c.channel->name() + ": multicast sent " + std::to_string(m.records) + " records in " + std::to_string(m.datagrams) +
                            " datagrams, " + std::to_string(m.bytes) + " bytes; " + std::to_string(m.send_errors) + " send errors");
    }
  }
}

bool Channels::has(const std::string& name) const noexcept { return find(name).has_value(); }

std::optional<std::size_t> Channels::find(const std::string& name) const noexcept {
  for (std::size_t i = 0; i < channels_.size(); ++i)
    if (channels_[i].channel->name() == name) return i;
  return std::nullopt;
}

void Channels::start() {
  for (auto& c : channels_)
    c.thread = std::jthread([&c](std::stop_token stop) {
      try {
        c.source->run(stop, *c.channel);
      } catch (const std::exception& e) {
        log::error("live", c.channel->name() + ": the source stopped: " + e.what());
        c.channel->end_stream(e.what());
      }
    });
}

void Channels::register_device(const std::shared_ptr<Device>& device) {
  if (channels_.empty() || std::find(devices_.begin(), devices_.end(), device) != devices_.end()) return;
  devices_.push_back(device);
  for (auto& c : channels_) {
    // REMOTE_READ only (or, with memory windows, binding only), and exactly the bytes the catalog advertises.
    Regions r;
    r.ring = rdma::register_memory(device->pd.get(), c.channel->ring().ring_memory().data(), c.channel->ring().size(),
                                   device->region_access(), "the ring of live channel " + c.channel->name());
    r.header = rdma::register_memory(device->pd.get(), c.channel->ring().header_memory().data(), sizeof(proto::WireLiveHeader),
                                     device->region_access(), "the live header of " + c.channel->name());
    c.regions[device->context] = std::move(r);
  }
}

std::vector<proto::CatalogEntry> Channels::catalog_entries(ibv_context* ctx) const {
  std::vector<proto::CatalogEntry> out;
  for (const auto& c : channels_) {
    auto r = c.regions.find(ctx);
    if (ctx && r == c.regions.end()) continue;
    proto::CatalogEntry e;
    e.name = c.channel->name();
    e.size = c.channel->ring().size();
    e.movie = ctx ? describe(r->second.ring.get(), e.size) : proto::RegionDescriptor{0, e.size, 0};
    e.index = ctx ? describe(r->second.header.get(), sizeof(proto::WireLiveHeader))
                  : proto::RegionDescriptor{0, sizeof(proto::WireLiveHeader), 0};
    e.flags = proto::kEntryIsMedia | proto::kEntryLive;
    e.container = "mpegts";
    e.mime_type = "video/mp2t";
    out.push_back(std::move(e));
  }
  return out;
}

void Channels::on_wake() {
  std::uint64_t n = 0;
  (void)!::read(wake_fd_.get(), &n, sizeof n);
  std::vector<RecordInfo> fresh;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    fresh.clear();
    channels_[i].channel->drain(fresh);
    if (fresh.empty()) continue;
    for (const auto& r : fresh) channels_[i].view.add(r);
    if (on_records_) on_records_(i);
  }
}

}  // namespace vod::server::live
