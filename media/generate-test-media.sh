#!/usr/bin/env bash
# generate-test-media.sh: deterministic test movies, made with ffmpeg from synthetic sources (nothing
# is downloaded). Used by the tests, the demo and the benchmarks.
#
#   media/generate-test-media.sh --out DIR [--duration SECONDS] [--variants LIST] [--containers LIST]
#
#   variants    1080p (H.264 ~8.7 Mbps total, the dissertation's full-HD rate), 720p (~5.3 Mbps),
#               480p (~1 Mbps), 240p (~0.3 Mbps: light to decode, for players under emulation);
#               default: the first three
#   containers  mp4 (moov at the end), mp4-faststart (moov first), fmp4 (fragmented MP4, a fragment
#               per keyframe), ts (MPEG-TS), mkv (Matroska); default: all five
#   duration    default 60 s, long enough for the seek tests
#
# Every movie has 25 fps H.264 with a closed GOP of 2 s (50 frames, no scene-cut keyframes) and
# 48 kHz stereo AAC. Each variant is encoded once, to MP4, and remuxed without re-encoding to the
# other containers. Output is bit-exact for a given ffmpeg build: bitexact flags, no creation times,
# and a single x264 thread (with frame threads, x264's CBR rate control varies from run to run).
# Files already present with a matching recipe stamp are kept.
set -euo pipefail

out= duration=60 variants=1080p,720p,480p containers=mp4,mp4-faststart,fmp4,ts,mkv
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --containers) containers=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "generate-test-media: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || { echo "generate-test-media: --out DIR is required" >&2; exit 2; }
command -v ffmpeg >/dev/null || { echo "generate-test-media: ffmpeg not found; run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$out"

# variant -> "width height video_bitrate audio_bitrate"
declare -A spec=(
  [1080p]="1920 1080 8550k 128k"
  [720p]="1280 720 5200k 96k"
  [480p]="854 480 920k 64k"
  [240p]="426 240 250k 48k"
)
declare -A suffix=([mp4]=mp4 [mp4-faststart]=faststart.mp4 [fmp4]=fragmented.mp4 [ts]=ts [mkv]=mkv)

ffmpeg_quiet=(ffmpeg -hide_banner -loglevel error -nostdin -y)
bitexact=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1)

IFS=, read -r -a variant_list <<< "$variants"
IFS=, read -r -a container_list <<< "$containers"
for v in "${variant_list[@]}"; do
  [[ -n ${spec[$v]:-} ]] || { echo "generate-test-media: unknown variant '$v' (1080p, 720p, 480p, 240p)" >&2; exit 2; }
  read -r width height vbit abit <<< "${spec[$v]}"
  base="$out/test-$v-${duration}s"
  recipe="$v $width $height $vbit $abit $duration $(ffmpeg -version | head -n 1) v1"
  master="$base.mp4"
  if [[ ! -f $master || "$(cat "$out/.$(basename "$base").recipe" 2>/dev/null)" != "$recipe" ]]; then
    echo "generate-test-media: encoding $v (${width}x$height, ${duration}s, video $vbit, audio $abit)" >&2
    "${ffmpeg_quiet[@]}" \
      -f lavfi -i "testsrc2=size=${width}x${height}:rate=25:duration=$duration" \
      -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000:duration=$duration" \
      -filter_complex "[1:a]aformat=channel_layouts=stereo[a]" -map 0:v -map "[a]" \
      -c:v libx264 -preset veryfast -threads 1 -profile:v high -pix_fmt yuv420p \
      -b:v "$vbit" -minrate "$vbit" -maxrate "$vbit" -bufsize "$vbit" -x264-params "filler=1:force-cfr=1" \
      -g 50 -keyint_min 50 -sc_threshold 0 -flags +cgop \
      -c:a aac -b:a "$abit" "${bitexact[@]}" -f mp4 "$master.tmp"
    mv "$master.tmp" "$master"
    echo "$recipe" > "$out/.$(basename "$base").recipe"
    rm -f "$base".faststart.mp4 "$base".fragmented.mp4 "$base".ts "$base".mkv
  fi
  for c in "${container_list[@]}"; do
    [[ -n ${suffix[$c]:-} ]] || { echo "generate-test-media: unknown container '$c'" >&2; exit 2; }
    target="$base.${suffix[$c]}"
    [[ -f $target ]] && continue
    case $c in
      mp4) ;;
      mp4-faststart) "${ffmpeg_quiet[@]}" -i "$master" -c copy "${bitexact[@]}" -movflags +faststart -f mp4 "$target.tmp" ;;
      fmp4) "${ffmpeg_quiet[@]}" -i "$master" -c copy "${bitexact[@]}" -movflags +frag_keyframe+empty_moov+default_base_moof -f mp4 "$target.tmp" ;;
      ts) "${ffmpeg_quiet[@]}" -i "$master" -c copy "${bitexact[@]}" -bsf:v h264_mp4toannexb -f mpegts "$target.tmp" ;;
      mkv) "${ffmpeg_quiet[@]}" -i "$master" -c copy "${bitexact[@]}" -f matroska "$target.tmp" ;;
    esac
    [[ -f $target.tmp ]] && mv "$target.tmp" "$target"
  done
done

ls -l "$out" | awk 'NR > 1 { printf "generate-test-media: %s %d bytes\n", $NF, $5 }' >&2
