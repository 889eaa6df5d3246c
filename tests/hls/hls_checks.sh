# SPDX-License-Identifier: LGPL-2.1-or-later
# HLS checks on a running vod-proxy, shared by the native test (tests/hls/vod_hls_test.sh, over UDP)
# and the RDMA one (tests/rdma/vod_proxy_test.sh, in the guest). Source it; the caller defines
# fail() and pass(). HLS_DECODE=0 leaves out the reads and decodes of whole TS movies through ffmpeg
# and the decodes of whole fMP4 ones (the guest's TCG is slow): TS segments are still compared byte
# for byte, fMP4 packets one for one, and the 3 s after a seek decoded.
hls_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HLS_DECODE=${HLS_DECODE:-1}

# hls_url BASE NAME: the movie NAME's HLS directory on the proxy at BASE, the name percent-encoded.
hls_url() { echo "$1/hls/$(/usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$2")"; }

# The file's own frames and packets, to compare with, come from the expectations the media fixture
# made natively (tests/media/make-expectations.sh; expected() in tests/test_media.sh): REF, the
# generated medium FILE is a copy of, names them (default: FILE's base name).

# hls_check_ts_movie BASE FILE WORK [REF]: the TS movie FILE (its local copy; the proxy serves it under its
# base name) through /hls/NAME/:
#   - master.m3u8 and index.m3u8 pass check_playlist.py; CODECS agrees with ffprobe on the file
#   - EXT-X-MAP is the file's leading PAT/PMT; the map and the segments tile the file; every segment
#     fetched by its range is byte-exact
#   - ffmpeg decodes every video and audio frame of the playlist without an error, as many as of the file
#   - ffmpeg -ss 30 -t 3 -f framemd5 on the playlist: the video frames equal those of the file
hls_check_ts_movie() {
  local base=$1 file=$2 work=$3 name url
  name=$(basename "$file")
  local ref=${4:-$name}
  url=$(hls_url "$base" "$name")
  curl -sf -D "$work/master.h" -o "$work/master.m3u8" "$url/master.m3u8" || fail "GET $url/master.m3u8 failed"
  grep -qi '^Content-Type: application/vnd.apple.mpegurl' "$work/master.h" || fail "master.m3u8 is not application/vnd.apple.mpegurl"
  grep -qi '^Cache-Control: max-age=' "$work/master.h" || fail "a VoD playlist without a max-age"
  /usr/bin/python3 "$hls_here/check_playlist.py" "$work/master.m3u8" "$name/master.m3u8" || fail "the multivariant playlist breaks RFC 8216"
  curl -sf -o "$work/index.m3u8" "$url/index.m3u8" || fail "GET $url/index.m3u8 failed"
  /usr/bin/python3 "$hls_here/check_playlist.py" "$work/index.m3u8" "$name/index.m3u8" || fail "the media playlist breaks RFC 8216"

  # CODECS: avc1.PPCCLL from the SPS and mp4a.40.2 for AAC-LC, as ffprobe sees the file.
  local profile level want
  # (a TS lists its streams under its program too: the first line is the stream's)
  IFS=, read -r profile level <<< "$(ffprobe -v error -select_streams v:0 -show_entries stream=profile,level -of csv=p=0 "$file" | sed -n 1p)"
  case $profile in High) want=avc1.64;; Main) want=avc1.4d;; *Baseline*) want=avc1.42;; *) fail "unexpected H.264 profile $profile";; esac
  want=$want..$(printf '%02x' "$level")
  grep -qE "CODECS=\"$want,mp4a\\.40\\.2\"" "$work/master.m3u8" || fail "CODECS is not $want,mp4a.40.2 ($profile, level $level): $(cat "$work/master.m3u8")"
  local w h
  IFS=, read -r w h <<< "$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$file" | sed -n 1p)"
  grep -q "RESOLUTION=${w}x$h" "$work/master.m3u8" || fail "RESOLUTION is not ${w}x$h"
  want=$(sed -n 's/.*CODECS="\([^"]*\)".*/\1/p' "$work/master.m3u8")

  # The map and the segments tile the file, and each range is byte-exact.
  local size map_len map_off expect_off=0 n=0 len off
  size=$(stat -c %s "$file")
  read -r map_len map_off <<< "$(sed -n 's/^#EXT-X-MAP:.*BYTERANGE="\([0-9]*\)@\([0-9]*\)".*/\1 \2/p' "$work/index.m3u8")"
  [[ ${map_off:-x} == 0 && ${map_len:-0} -gt 0 ]] || fail "no EXT-X-MAP from byte 0"
  # The segments are ranges of the movie itself: /movies/NAME when the name ends in .ts, else movie.ts
  # beside the playlist (ffmpeg takes segments only by a media extension).
  local segments_uri segments_url
  case $name in *.ts) segments_uri=/movies/${url##*/};; *) segments_uri=movie.ts;; esac
  [[ $segments_uri == /* ]] && segments_url=$base$segments_uri || segments_url=$url/$segments_uri
  grep -q "^#EXT-X-MAP:URI=\"$segments_uri\"," "$work/index.m3u8" || fail "the map is not of $segments_uri"
  [[ $(grep -vc '^#' "$work/index.m3u8") == $(grep -cxF "$segments_uri" "$work/index.m3u8") ]] || fail "a segment URI other than $segments_uri"
  # The map is tables only: PIDs 0 (PAT), the PMT's, and SI/null packets; no PES.
  local pids
  pids=$(/usr/bin/python3 -c 'import sys; b = open(sys.argv[1], "rb").read(int(sys.argv[2]))
print(" ".join(str(p) for p in sorted({(b[i + 1] & 31) << 8 | b[i + 2] for i in range(0, len(b), 188)})))' "$file" "$map_len")
  [[ -n $pids ]] || fail "no packet in the map"
  local pmt
  pmt=$(ffprobe -v error -show_entries program=pmt_pid -of csv=p=0 "$file" | sed -n "1s/,.*//p")
  for p in $pids; do [[ $p == 0 || $p == "$pmt" || $p -lt 32 || $p == 8191 ]] || fail "the map holds PID $p, not a table"; done
  expect_off=$map_len
  # Every segment's range in one curl (a process start per segment is most of the time under TCG),
  # then each compared with the file's bytes at its offset.
  local ranges=() args=() sizes
  mapfile -t ranges < <(sed -n 's/^#EXT-X-BYTERANGE:\([0-9]*\)@\([0-9]*\)$/\1 \2/p' "$work/index.m3u8")
  for range in "${ranges[@]}"; do
    read -r len off <<< "$range"
    [[ $off == "$expect_off" ]] || fail "segment $n starts at $off, not where the last ended ($expect_off)"
    args+=(-sf -r "$off-$((off + len - 1))" -w '%{size_download}\n' -o "$work/seg$n" "$segments_url" --next)  # options per transfer
    expect_off=$((off + len)) n=$((n + 1))
  done
  [[ $expect_off == "$size" ]] || fail "the segments end at $expect_off, the file at $size"
  sizes=$(curl "${args[@]:0:${#args[@]}-1}") || fail "GET of the $n segments failed"
  n=0
  for got in $sizes; do
    read -r len off <<< "${ranges[$n]}"
    [[ $got == "$len" ]] && cmp -s -n "$len" -i "0:$off" "$work/seg$n" "$file" || fail "segment $n ($len@$off) is not the file's bytes ($got bytes)"
    n=$((n + 1))
  done
  [[ $n == "${#ranges[@]}" ]] || fail "curl answered $n of ${#ranges[@]} segments"
  pass "$name: playlists pass the RFC 8216 checks; CODECS $want ($profile, level $level), RESOLUTION ${w}x$h; map ($map_len B of tables) and $n segments tile the file, byte-exact"

  # ffmpeg reads every packet the file has, and decodes it all (natively: the segments' bytes are
  # the file's already, which is what the guest's light run relies on).
  local frames_file frames_hls="no whole-movie read"
  if [[ $HLS_DECODE == 1 ]]; then
    frames_file=$(ffmpeg -v error -i "$file" -c copy -f framemd5 - | awk -F, '/^[01],/ { print $1 $6 }' | md5sum)
    frames_hls=$(ffmpeg -v error -i "$url/master.m3u8" -c copy -f framemd5 - | awk -F, '/^[01],/ { print $1 $6 }' | md5sum)
    [[ $frames_hls == "$frames_file" ]] || fail "the playlist's packets are not the file's, one for one"
    frames_file=$(ffprobe -v error -count_frames -show_entries stream=codec_type,nb_read_frames -of csv=p=0 "$file" | sort -u | tr '\n' ' ')
    frames_hls=$(ffprobe -v error -count_frames -show_entries stream=codec_type,nb_read_frames -of csv=p=0 "$url/master.m3u8" 2> "$work/ffprobe.err" | sort -u | tr '\n' ' ')
    [[ $frames_hls == "$frames_file" ]] || fail "ffprobe counts '$frames_hls' through HLS, '$frames_file' in the file"
    ffmpeg -v error -xerror -i "$url/master.m3u8" -f null - 2> "$work/decode.err" || { cat "$work/decode.err"; fail "ffmpeg failed to decode the playlist"; }
    [[ -s $work/decode.err ]] && { cat "$work/decode.err"; fail "ffmpeg reported errors decoding the playlist"; }
  fi
  # Seeking: the segment holding 30 s, then the frames from 30 s are the file's.
  ffmpeg -y -v error -ss 30 -i "$url/index.m3u8" -t 3 -map 0:v -f framemd5 "$work/hls.md5" || fail "ffmpeg -ss 30 on the playlist failed"
  cp "$(expected "$ref.ss30-t3.video.framemd5")" "$work/file.md5"  # the file's, decoded natively
  [[ $(grep -c '^0,' "$work/hls.md5") -ge 70 ]] || fail "ffmpeg -ss 30 -t 3 gave $(grep -c '^0,' "$work/hls.md5") video frames"
  cmp -s "$work/hls.md5" "$work/file.md5" || { diff "$work/hls.md5" "$work/file.md5" | head; fail "-ss 30 -t 3: the video frames differ from the file's"; }
  pass "$name: $([[ $HLS_DECODE == 1 ]] && echo "ffmpeg reads the file's packets one for one and decodes every frame with no error ($frames_hls); ")-ss 30 -t 3 gives the file's $(grep -c '^0,' "$work/hls.md5") video frames, md5 for md5"
}

# hls_check_fmp4_movie BASE FILE WORK [REF]: the MP4 or Matroska movie FILE through /hls/NAME/, remuxed to fMP4:
#   - master.m3u8 and index.m3u8 pass check_playlist.py; CODECS agrees with ffprobe on the file
#   - init.mp4 and every seg-N.m4s in order make one fragmented MP4 whose decoded video frames are
#     the file's, frame for frame (md5 of each), and whose audio has as many frames
#   - ffmpeg decodes the playlist without an error
hls_check_fmp4_movie() {
  local base=$1 file=$2 work=$3 name url n
  name=$(basename "$file")
  local ref=${4:-$name}
  url=$(hls_url "$base" "$name")
  curl -sf -o "$work/master.m3u8" "$url/master.m3u8" || fail "GET $url/master.m3u8 failed"
  /usr/bin/python3 "$hls_here/check_playlist.py" "$work/master.m3u8" "$name/master.m3u8" || fail "the multivariant playlist breaks RFC 8216"
  curl -sf -o "$work/index.m3u8" "$url/index.m3u8" || fail "GET $url/index.m3u8 failed"
  /usr/bin/python3 "$hls_here/check_playlist.py" "$work/index.m3u8" "$name/index.m3u8" || fail "the media playlist breaks RFC 8216"
  grep -q '^#EXT-X-MAP:URI="init.mp4"$' "$work/index.m3u8" || fail "no EXT-X-MAP of init.mp4"
  local profile level want
  IFS=, read -r profile level <<< "$(ffprobe -v error -select_streams v:0 -show_entries stream=profile,level -of csv=p=0 "$file" | sed -n 1p)"
  want=$(sed -n 's/.*CODECS="\([^"]*\)".*/\1/p' "$work/master.m3u8")
  [[ $want == avc1.$([[ $profile == High ]] && echo 64 || echo ..)00$(printf '%02x' "$level"),mp4a.40.2 ]] ||
    fail "CODECS '$want' does not match $profile level $level with AAC-LC"
  # The pieces, in order, as one file.
  curl -sf -D "$work/h" -o "$work/fmp4.mp4" "$url/init.mp4" || fail "GET init.mp4 failed"
  grep -qi '^Content-Type: video/mp4' "$work/h" || fail "init.mp4 is not video/mp4"
  # Every segment in one curl, in order, appended to the init segment.
  local segs=() args=()
  mapfile -t segs < <(grep '^seg-' "$work/index.m3u8")
  n=${#segs[@]}
  [[ $n -ge 10 ]] || fail "only $n segments"
  for seg in "${segs[@]}"; do args+=("$url/$seg"); done
  curl -sf "${args[@]}" >> "$work/fmp4.mp4" || fail "GET of the $n segments failed"
  # The same video packets (the bytes of each, in order), and decoded the same frames.
  cp "$(expected "$ref.video.packet-md5s")" "$work/file.p"  # the file's, listed natively
  ffmpeg -v error -i "$work/fmp4.mp4" -map 0:v -c copy -f framemd5 - | awk -F, '/^0,/ { print $6 }' > "$work/fmp4.p"
  cmp -s "$work/file.p" "$work/fmp4.p" || fail "the fMP4 pieces hold $(wc -l < "$work/fmp4.p") video packets, not the file's $(wc -l < "$work/file.p") byte for byte"
  local what="packets"
  if [[ $HLS_DECODE == 1 ]]; then
    cp "$(expected "$ref.video.frame-md5s")" "$work/file.v"
    ffmpeg -v error -i "$work/fmp4.mp4" -map 0:v -f framemd5 - 2> "$work/fmp4.err" | awk -F, '/^0,/ { print $6 }' > "$work/fmp4.v"
    [[ -s $work/fmp4.err ]] && { cat "$work/fmp4.err"; fail "ffmpeg reported errors decoding the fMP4 pieces"; }
    cmp -s "$work/file.v" "$work/fmp4.v" || fail "the fMP4 pieces decode to $(wc -l < "$work/fmp4.v") video frames, not the file's $(wc -l < "$work/file.v") frame for frame"
    what="packets and decoded frames"
  fi
  local audio_file audio_fmp4
  audio_file=$(cat "$(expected "$ref.audio-packets")")
  audio_fmp4=$(ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/fmp4.mp4" | sed -n 1p)
  [[ $audio_fmp4 == "$audio_file" ]] || fail "the fMP4 pieces hold $audio_fmp4 audio packets, the file $audio_file"
  if [[ $HLS_DECODE == 1 ]]; then
    ffmpeg -v error -xerror -i "$url/master.m3u8" -f null - 2> "$work/decode.err" || { cat "$work/decode.err"; fail "ffmpeg failed to decode the playlist"; }
    [[ -s $work/decode.err ]] && { cat "$work/decode.err"; fail "ffmpeg reported errors decoding the playlist"; }
  fi
  pass "$name: playlists pass the RFC 8216 checks, CODECS $want; init.mp4 and $n fMP4 segments hold the file's $(wc -l < "$work/fmp4.p") video $what (md5 each) and $audio_fmp4 audio packets$([[ $HLS_DECODE == 1 ]] && echo "; ffmpeg plays the playlist without an error")"
}
