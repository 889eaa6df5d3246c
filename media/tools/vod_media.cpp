// vod-media: what the server learns about a movie, from the command line.
//
//   vod-media probe FILE...          container, codecs, resolution, duration, bitrate, MIME type
//   vod-media index FILE             the keyframe index as "time_us offset" lines, with progress
//   vod-media remux-ts IN OUT        remux to MPEG-TS without re-encoding (what --remux ts does)
//   vod-media ladder IN OUTDIR       an aligned ladder of renditions, in the title convention
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ladder_run.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/remux.hpp"

namespace po = boost::program_options;
using namespace vod::media;

namespace {

void print_probe(const std::string& path) {
  MappedFile file(path);
  const MediaInfo info = probe(file.bytes(), path);
  std::printf(
      "%s\n  media: %s\n  container: %s (%s)\n  mime: %s\n  video: %s %ux%u\n  audio: %s\n"
      "  duration_us: %llu\n  bitrate_bps: %llu\n  fragmented: %s\n",
      path.c_str(), info.is_media ? "yes" : "no", info.container.c_str(), info.format_name.c_str(), info.mime_type.c_str(),
      info.video_codec.c_str(), info.width, info.height, info.audio_codec.c_str(), static_cast<unsigned long long>(info.duration_us),
      static_cast<unsigned long long>(info.bitrate_bps), info.fragmented ? "yes" : "no");
  if (info.frame_rate_den) std::printf("  frame_rate: %u/%u\n", info.frame_rate_num, info.frame_rate_den);
  for (const auto& t : info.tracks)
    std::printf("  %s %d: %s%s, language %s%s%s%s\n", t.kind == StreamTrack::Kind::audio ? "audio" : "subtitles", t.stream, t.codec.c_str(),
                t.kind == StreamTrack::Kind::audio ? (" " + std::to_string(t.channels) + " channels").c_str()
                                                   : (t.text ? " (text)" : " (pictures)"),
                t.language.empty() ? "not given" : t.language.c_str(), t.title.empty() ? "" : (", \"" + t.title + "\"").c_str(),
                t.is_default ? ", default" : "", "");
  if (!info.note.empty()) std::printf("  note: %s\n", info.note.c_str());
}

void print_index(const std::string& path) {
  MappedFile file(path);
  const MediaInfo info = probe(file.bytes(), path);
  const bool tty = isatty(fileno(stderr));
  auto progress = [&](std::uint64_t done, std::uint64_t total) {
    if (tty) std::fprintf(stderr, "\rindexing %s: %3.0f%%", path.c_str(), 100.0 * static_cast<double>(done) / static_cast<double>(total));
  };
  const auto index = index_keyframes(file.bytes(), info, progress);
  if (tty) std::fprintf(stderr, "\n");
  std::printf("# %zu keyframes, flags 0x%x\n", index.entries.size(), index.flags);
  for (const auto& k : index.entries)
    std::printf("%llu %llu\n", static_cast<unsigned long long>(k.time_us), static_cast<unsigned long long>(k.offset));
}

void remux(const std::string& in, const std::string& out) {
  MappedFile file(in);
  const auto bytes = remux_to_mpegts(file.bytes(), in);
  std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::printf("%s: %zu bytes of MPEG-TS\n", out.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string command, renditions = "1080p,720p,480p,360p";
  double keyframe_seconds = 2.0;
  std::vector<std::string> files;
  po::options_description opts(
      "vod-media: probe, index and remux movies as vod-server does\n"
      "usage: vod-media probe FILE... | index FILE | remux-ts IN OUT | ladder IN OUTDIR\noptions");
  opts.add_options()("help,h", "show this help")("version,V", "show the version")(
      "renditions", po::value(&renditions), "ladder: the heights to make, such as 1080p,720p,480p,360p (none above the source's)")(
      "keyframe-seconds", po::value(&keyframe_seconds), "ladder: a keyframe in every rendition at each multiple of this (2)");
  po::options_description hidden;
  hidden.add_options()("command", po::value(&command))("files", po::value(&files));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("command", 1).add("files", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("version")) {
      std::cout << "vod-media " VOD_VERSION "\n";
      return 0;
    }
    if (vm.count("help") || command.empty()) {
      std::cout << opts << "\n";
      return command.empty() && !vm.count("help") ? 2 : 0;
    }
    if (command == "probe" && !files.empty()) {
      for (const auto& f : files) print_probe(f);
    } else if (command == "index" && files.size() == 1) {
      print_index(files[0]);
    } else if (command == "remux-ts" && files.size() == 2) {
      remux(files[0], files[1]);
    } else if (command == "ladder" && files.size() == 2) {
      std::vector<std::string> labels;
      for (std::size_t at = 0; at <= renditions.size();) {
        const std::size_t comma = std::min(renditions.find(',', at), renditions.size());
        if (comma > at) labels.push_back(renditions.substr(at, comma - at));
        at = comma + 1;
      }
      return run_ladder(files[0], files[1], labels, keyframe_seconds);
    } else {
      std::cerr << "vod-media: expected 'probe FILE...', 'index FILE', 'remux-ts IN OUT' or 'ladder IN OUTDIR' (see --help)\n";
      return 2;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "vod-media: error: " << e.what() << "\n";
    return 1;
  }
}
