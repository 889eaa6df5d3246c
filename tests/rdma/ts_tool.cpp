// SPDX-License-Identifier: LGPL-2.1-or-later
// ts_tool: MPEG-TS helpers for the live tests.
//
//   ts_tool check FILE [--allow-at BYTE]... [--pattern]
//       Every 188 bytes start with a sync byte; the continuity counter of every PID goes up by one
//       per packet with payload (a repeated packet may repeat it; the adaptation field's
//       discontinuity indicator resets it) except at the allowed output byte offsets, where the
//       test expects a discontinuity (a loop, a skip). With --pattern, the packets of PID 0x100
//       made by `ts_tool pattern` must each carry one sequence number in all their words, and the
//       numbers must go up by exactly one except at the allowed offsets, and up at those: a record
//       read while the source overwrote it would show two laps of the ring. Prints a summary; exit 1 on any fault.
//
//   ts_tool pattern [--packets N] [--rate MBPS] [--gop PACKETS]
//       Writes a TS to stdout: PAT and PMT (H.264 video on PID 0x100) every 100 packets, then
//       pattern packets on PID 0x100 whose last 168 bytes are their sequence number, 21 times,
//       big-endian. Every GOP-th starts a PES with the random access indicator (a "keyframe"), so
//       live viewers can join and skip. --rate paces it (0: as fast as the reader takes it).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../unit/ts_packets.hpp"
#include "vod/media/ts_scanner.hpp"

namespace {

using vod::media::kTsPacketSize;
constexpr std::uint16_t kPatternPid = 0x100;
constexpr std::size_t kWords = 21;  // 168 bytes at the end of the packet

std::uint64_t be64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

int check(const std::string& path, const std::set<std::uint64_t>& allowed, bool pattern) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "ts_tool: cannot read %s\n", path.c_str());
    return 2;
  }
  const std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() % kTsPacketSize) {
    std::printf("FAULT: %zu bytes is not a whole number of 188-byte packets\n", data.size());
    return 1;
  }
  std::vector<int> cc(8192, -1);
  std::uint64_t packets = 0, faults = 0, pattern_packets = 0, resets = 0;
  bool have_seq = false;  // (not std::optional: g++ 12 warns it may be read uninitialized)
  std::uint64_t last_seq = 0;
  bool any_seq = false;
  auto fault = [&](std::uint64_t at, const std::string& what) {
    if (++faults <= 10) std::printf("FAULT at byte %llu: %s\n", static_cast<unsigned long long>(at), what.c_str());
  };
  for (std::uint64_t at = 0; at < data.size(); at += kTsPacketSize) {
    ++packets;
    if (allowed.count(at)) {  // a discontinuity the viewer reported: start over
      std::fill(cc.begin(), cc.end(), -1);
      have_seq = false;
      ++resets;
    }
    auto p = vod::media::parse_ts_packet(std::span<const std::uint8_t>(data).subspan(at, kTsPacketSize));
    if (!p) {
      fault(at, "no sync byte, or a malformed adaptation field");
      continue;
    }
    if (p->pid == 0x1fff) continue;                   // null packets carry no counter worth checking
    const bool payload = (data[at + 3] & 0x10) != 0;  // adaptation_field_control: a payload follows
    int& last = cc[p->pid];
    if (p->discontinuity || last < 0) {
      last = p->continuity_counter;
    } else if (payload) {
      const int want = (last + 1) & 15;
      if (p->continuity_counter != want && p->continuity_counter != last)
        fault(at, "PID " + std::to_string(p->pid) + " continuity counter " + std::to_string(p->continuity_counter) + " after " +
                      std::to_string(last));
      last = p->continuity_counter;
    }
    if (pattern && p->pid == kPatternPid) {
      ++pattern_packets;
      const std::uint8_t* words = data.data() + at + kTsPacketSize - kWords * 8;
      const std::uint64_t seq = be64(words);
      for (std::size_t w = 1; w < kWords; ++w)
        if (be64(words + 8 * w) != seq) {
          fault(at, "torn pattern packet: word " + std::to_string(w) + " differs from word 0");
          break;
        }
      if (have_seq && seq != last_seq + 1)
        fault(at, "pattern sequence " + std::to_string(seq) + " after " + std::to_string(last_seq) + " without a reported discontinuity");
      // A reported discontinuity skips forward (the source only counts up): never back to bytes
      // already delivered or older ones, which only an overwritten ring or window would hold.
      if (!have_seq && any_seq && seq <= last_seq)
        fault(at, "pattern sequence " + std::to_string(seq) + " after " + std::to_string(last_seq) + ": a discontinuity that went back");
      last_seq = seq;
      any_seq = true;
      have_seq = true;
    }
  }
  std::printf("ts_tool check %s: %llu packets, %llu pattern packets, %llu allowed discontinuities, %llu faults\n", path.c_str(),
              static_cast<unsigned long long>(packets), static_cast<unsigned long long>(pattern_packets),
              static_cast<unsigned long long>(resets), static_cast<unsigned long long>(faults));
  return faults ? 1 : 0;
}

void put_section(std::vector<std::uint8_t>& p, std::uint16_t pid, std::uint8_t& cc, std::vector<std::uint8_t> section) {
  p.assign(kTsPacketSize, 0xff);
  p[0] = 0x47;
  p[1] = static_cast<std::uint8_t>(0x40 | (pid >> 8));
  p[2] = static_cast<std::uint8_t>(pid);
  p[3] = static_cast<std::uint8_t>(0x10 | (cc++ & 15));
  p[4] = 0;  // pointer field
  std::copy(section.begin(), section.end(), p.begin() + 5);
}

int pattern(std::uint64_t count, double rate_mbps, std::uint64_t gop) {
  std::vector<std::uint8_t> out;
  std::uint8_t pat_cc = 0, pmt_cc = 0, video_cc = 0;
  std::vector<std::uint8_t> p;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t written = 0, seq = 0;
  for (std::uint64_t i = 0; count == 0 || seq < count; ++i) {
    if (i % 100 == 0) {
      put_section(p, 0, pat_cc, {0x00, 0xb0, 0x0d, 0, 1, 0xc1, 0, 0, 0, 1, 0xf0, 0x00, 0, 0, 0, 0});  // program 1: PMT on 0x1000
      out.insert(out.end(), p.begin(), p.end());
      put_section(p, 0x1000, pmt_cc, {0x02, 0xb0, 0x12, 0, 1, 0xc1, 0, 0, 0xe1, 0x00, 0xf0, 0, 0x1b, 0xe1, 0x00, 0xf0, 0, 0, 0, 0, 0});
      out.insert(out.end(), p.begin(), p.end());
      continue;
    }
    p.assign(kTsPacketSize, 0);
    p[0] = 0x47;
    const bool key = seq % gop == 0;
    p[1] = static_cast<std::uint8_t>((key ? 0x40 : 0) | (kPatternPid >> 8));
    p[2] = static_cast<std::uint8_t>(kPatternPid & 0xff);
    // An adaptation field fills the bytes between the header and the PES header or the words.
    const std::size_t payload_start = kTsPacketSize - kWords * 8 - (key ? 14 : 0);
    p[3] = static_cast<std::uint8_t>(0x30 | (video_cc++ & 15));
    p[4] = static_cast<std::uint8_t>(payload_start - 5);
    p[5] = key ? 0x40 : 0x00;  // random access indicator on keyframes
    std::fill(p.begin() + 6, p.begin() + static_cast<std::ptrdiff_t>(payload_start), 0xff);
    if (key) {  // a PES header with a PTS: 00 00 01 e0, length 0, flags, 5 header bytes
      const std::uint64_t pts = seq * 90;
      const std::vector<std::uint8_t> header = vod::test::pes(pts, {});  // the unit tests' PES builder
      std::copy(header.begin(), header.end(), p.begin() + static_cast<std::ptrdiff_t>(payload_start));
    }
    for (std::size_t w = 0; w < kWords; ++w)
      for (int b = 0; b < 8; ++b)
        p[kTsPacketSize - kWords * 8 + w * 8 + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(seq >> (56 - 8 * b));
    ++seq;
    out.insert(out.end(), p.begin(), p.end());
    if (out.size() >= 64 * kTsPacketSize) {
      for (std::size_t done = 0; done < out.size();) {
        const ssize_t n = ::write(STDOUT_FILENO, out.data() + done, out.size() - done);
        if (n <= 0) return 0;  // the reader went away
        done += static_cast<std::size_t>(n);
      }
      written += out.size();
      out.clear();
      if (rate_mbps > 0) {
        const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(written * 8 / (rate_mbps * 1e6)));
        std::this_thread::sleep_until(due);
      }
    }
  }
  if (!out.empty()) (void)!::write(STDOUT_FILENO, out.data(), out.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "check") {
    std::set<std::uint64_t> allowed;
    bool with_pattern = false;
    for (std::size_t i = 2; i < args.size(); ++i) {
      if (args[i] == "--pattern") with_pattern = true;
      else if (args[i] == "--allow-at" && i + 1 < args.size()) allowed.insert(std::stoull(args[++i]));
      else {
        std::fprintf(stderr, "ts_tool check: unknown argument %s\n", args[i].c_str());
        return 2;
      }
    }
    return check(args[1], allowed, with_pattern);
  }
  if (!args.empty() && args[0] == "pattern") {
    std::uint64_t packets = 0, gop = 500;
    double rate = 0;
    for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
      if (args[i] == "--packets") packets = std::stoull(args[i + 1]);
      else if (args[i] == "--rate") rate = std::stod(args[i + 1]);
      else if (args[i] == "--gop") gop = std::max<std::uint64_t>(1, std::stoull(args[i + 1]));
    }
    return pattern(packets, rate, gop);
  }
  std::fprintf(stderr,
               "usage: ts_tool check FILE [--allow-at BYTE]... [--pattern] | ts_tool pattern [--packets N] [--rate MBPS] [--gop N]\n");
  return 2;
}
