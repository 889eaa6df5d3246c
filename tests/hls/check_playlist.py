#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# An HLS playlist checker with the rules of RFC 8216 that a server's playlists must follow (and, for
# Low-Latency HLS, those of its successor draft, rfc8216bis). Apple's mediastreamvalidator runs only
# on macOS and no open-source tool checks the server rules, so the project has its own.
#
# usage: check_playlist.py PLAYLIST_FILE [--url URL]
#        check_playlist.py --same-segments MEDIA_PLAYLIST... (a title's variants list the same segments)
# Prints one line per violation and exits 1 when there is any; prints a summary and exits 0 otherwise.
import math
import re
import sys

ATTRIBUTE = re.compile(r'([A-Z0-9-]+)=("[^"\r\n]*"|[^",\s]*)(,|$)')
DECIMAL_INTEGER = re.compile(r'^[0-9]{1,20}$')
FLOAT = re.compile(r'^-?[0-9]+(\.[0-9]+)?$')
RESOLUTION = re.compile(r'^[0-9]+x[0-9]+$')
BYTERANGE = re.compile(r'^([0-9]+)(@([0-9]+))?$')
DATE_TIME = re.compile(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})$')

MEDIA_SEGMENT_TAGS = {"EXTINF", "EXT-X-BYTERANGE", "EXT-X-DISCONTINUITY", "EXT-X-KEY", "EXT-X-MAP", "EXT-X-PROGRAM-DATE-TIME",
                      "EXT-X-DATERANGE", "EXT-X-GAP", "EXT-X-BITRATE", "EXT-X-PART"}
MEDIA_PLAYLIST_TAGS = {"EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-ENDLIST",
                       "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL", "EXT-X-PRELOAD-HINT",
                       "EXT-X-RENDITION-REPORT", "EXT-X-SKIP"}
MULTIVARIANT_TAGS = {"EXT-X-MEDIA", "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
                     "EXT-X-CONTENT-STEERING"}
BOTH_TAGS = {"EXT-X-VERSION", "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-START", "EXT-X-DEFINE"}


class Checker:
    def __init__(self, text, name):
        self.name = name
        self.errors = []
        self.lines = text.split("\n")
        if text.endswith("\n"):
            self.lines.pop()
        self.text = text

    def error(self, line_no, message):
        self.errors.append(f"{self.name}:{line_no}: {message}")

    def attributes(self, line_no, value):
        """An attribute list (RFC 8216, 4.2): NAME=VALUE pairs, names unique."""
        out, at = {}, 0
        while at < len(value):
            m = ATTRIBUTE.match(value, at)
            if not m:
                self.error(line_no, f"malformed attribute list at '{value[at:]}'")
                return out
            if m.group(1) in out:
                self.error(line_no, f"attribute {m.group(1)} appears twice")
            out[m.group(1)] = m.group(2)
            at = m.end()
        return out

    def quoted(self, line_no, attrs, key, required=False):
        v = attrs.get(key)
        if v is None:
            if required:
                self.error(line_no, f"{key} is required")
            return None
        if not (len(v) >= 2 and v[0] == '"' and v[-1] == '"'):
            self.error(line_no, f"{key} must be a quoted-string")
            return None
        return v[1:-1]

    def check(self):
        if not self.lines or self.lines[0] != "#EXTM3U":
            self.error(1, "the first line must be #EXTM3U")
            return self
        if "\r" in self.text and not self.text.replace("\r\n", "").count("\r") == 0:
            self.error(1, "a lone carriage return")
        tags = [(i + 1, l) for i, l in enumerate(self.lines) if l.startswith("#EXT")]
        names = {l[1:].split(":", 1)[0] for _, l in tags}
        multivariant = bool(names & MULTIVARIANT_TAGS)
        media = bool(names & (MEDIA_SEGMENT_TAGS | MEDIA_PLAYLIST_TAGS))
        if multivariant and media:
            self.error(1, "both Media Playlist and Multivariant Playlist tags (RFC 8216, 4.1)")
        for tag in ("EXT-X-VERSION", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-PLAYLIST-TYPE", "EXT-X-ENDLIST",
                    "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-INDEPENDENT-SEGMENTS"):
            count = sum(1 for _, l in tags if l[1:].split(":", 1)[0] == tag)
            if count > 1:
                self.error(1, f"{tag} appears {count} times; at most once")
        self.version = 1
        for n, l in tags:
            if l.startswith("#EXT-X-VERSION:"):
                v = l.split(":", 1)[1]
                if not DECIMAL_INTEGER.match(v):
                    self.error(n, "EXT-X-VERSION is not a decimal-integer")
                else:
                    self.version = int(v)
        if multivariant:
            self.check_multivariant()
        else:
            self.check_media()
        return self

    def check_multivariant(self):
        variants = 0
        without_codecs = []
        expect_uri = None
        for i, l in enumerate(self.lines):
            n = i + 1
            if expect_uri is not None:
                if l == "" or l.startswith("#"):
                    if l.startswith("#EXT"):
                        self.error(n, f"EXT-X-STREAM-INF of line {expect_uri} is not followed by its URI")
                        expect_uri = None
                    continue
                variants += 1
                expect_uri = None
                continue
            if l.startswith("#EXT-X-STREAM-INF:"):
                a = self.attributes(n, l.split(":", 1)[1])
                for key in ("BANDWIDTH", "AVERAGE-BANDWIDTH"):
                    if key in a and not DECIMAL_INTEGER.match(a[key]):
                        self.error(n, f"{key} is not a decimal-integer")
                if "BANDWIDTH" not in a:
                    self.error(n, "BANDWIDTH is required (RFC 8216, 4.3.4.2)")
                elif int(a.get("AVERAGE-BANDWIDTH", "0") or 0) > int(a["BANDWIDTH"] or 0):
                    self.error(n, "AVERAGE-BANDWIDTH exceeds BANDWIDTH (the peak)")
                codecs = self.quoted(n, a, "CODECS")
                if codecs is not None:
                    for c in codecs.split(","):
                        if not re.match(r"^(avc1\.[0-9a-fA-F]{6}|mp4a\.40\.[0-9]{1,2}|hvc1\..+|ac-3|ec-3)$", c):
                            self.error(n, f"CODECS entry '{c}' is not an RFC 6381 string this checker knows")
                if "RESOLUTION" in a and not RESOLUTION.match(a["RESOLUTION"]):
                    self.error(n, "RESOLUTION is not a decimal-resolution")
                if "FRAME-RATE" in a and not re.match(r"^[0-9]+\.[0-9]{1,3}$|^[0-9]+$", a["FRAME-RATE"]):
                    self.error(n, "FRAME-RATE is not a decimal-floating-point of at most three decimals")
                if codecs is None:
                    without_codecs.append(n)
                expect_uri = n
            elif l.startswith("#") and not l.startswith("#EXT"):
                continue
            elif l.startswith("#EXT") and l[1:].split(":", 1)[0] not in (MULTIVARIANT_TAGS | BOTH_TAGS | {"EXTM3U"}):
                self.error(n, f"{l.split(':', 1)[0]} does not belong in a Multivariant Playlist")
            elif l and not l.startswith("#"):
                self.error(n, "a URI line without EXT-X-STREAM-INF before it")
        if expect_uri is not None:
            self.error(expect_uri, "EXT-X-STREAM-INF without a URI line after it")
        if variants == 0:
            self.error(1, "no variant stream")
        if variants > 1:  # a player choosing between variants needs their codecs (RFC 8216, 4.3.4.2: SHOULD; Apple: MUST)
            for n in without_codecs:
                self.error(n, "a variant of several without CODECS")
        self.summary = f"multivariant playlist, {variants} variant(s)"

    def check_media(self):
        target = None
        part_target = None
        server_control = {}
        segments, parts, ended, has_map, byteranges, float_durations = 0, 0, False, False, False, False
        pending_inf = None     # line of the EXTINF awaiting its URI
        pending_range = None
        last_range_uri = {}    # uri -> end of its last range (for ranges without an offset)
        durations = []
        first_segment_line = None
        hints = 0
        segment_parts = []     # (line, duration, independent) of the parts of the segment being read

        def check_parts(parts_of_segment, complete):
            # rfc8216bis 4.4.4.9: every part but a segment's last, and those INDEPENDENT=YES, lasts at
            # least 85% of PART-TARGET; a complete segment's parts add up to its EXTINF.
            if part_target is None:
                return
            for n, d, independent in parts_of_segment[:-1]:
                if not independent and d < 0.85 * part_target - 1e-9:
                    self.error(n, f"a part of {d} s, not its segment's last, is under 85% of PART-TARGET {part_target} (rfc8216bis 4.4.4.9)")
            if complete is not None and parts_of_segment:
                total = sum(d for _, d, _ in parts_of_segment)
                if abs(total - complete[1]) > 0.05:
                    self.error(complete[0], f"the segment's parts add up to {total:.3f} s, its EXTINF says {complete[1]}")

        for i, l in enumerate(self.lines):
            n = i + 1
            if l == "" or (l.startswith("#") and not l.startswith("#EXT")):
                continue
            if ended and not l.startswith("#EXT-X-ENDLIST"):
                self.error(n, "a line after EXT-X-ENDLIST")
            if not l.startswith("#"):
                if pending_inf is None:
                    self.error(n, "a URI line without EXTINF before it")
                else:
                    segments += 1
                    check_parts(segment_parts, durations[-1] if durations and durations[-1][0] == pending_inf else None)
                    segment_parts = []
                    if pending_range is not None:
                        length, offset = pending_range
                        if offset is None:
                            if l not in last_range_uri:
                                self.error(n, "EXT-X-BYTERANGE without an offset, and no earlier range of the same URI")
                            offset = last_range_uri.get(l, 0)
                        last_range_uri[l] = offset + length
                pending_inf, pending_range = None, None
                continue
            tag, _, value = l[1:].partition(":")
            if tag in MULTIVARIANT_TAGS:
                self.error(n, f"{tag} does not belong in a Media Playlist")
            if tag == "EXT-X-TARGETDURATION":
                if not DECIMAL_INTEGER.match(value):
                    self.error(n, "EXT-X-TARGETDURATION is not a decimal-integer")
                else:
                    target = int(value)
            elif tag == "EXT-X-MEDIA-SEQUENCE":
                if first_segment_line is not None:
                    self.error(n, "EXT-X-MEDIA-SEQUENCE after the first segment (RFC 8216, 4.3.3.2)")
                if not DECIMAL_INTEGER.match(value):
                    self.error(n, "EXT-X-MEDIA-SEQUENCE is not a decimal-integer")
            elif tag == "EXTINF":
                if pending_inf is not None:
                    self.error(n, f"EXTINF of line {pending_inf} has no URI")
                first_segment_line = first_segment_line or n
                duration = value.split(",", 1)[0]
                if not FLOAT.match(duration) or "," not in value:
                    self.error(n, "EXTINF must be <duration>,[<title>]")
                else:
                    durations.append((n, float(duration)))
                    float_durations |= "." in duration
                pending_inf = n
            elif tag == "EXT-X-BYTERANGE":
                byteranges = True
                m = BYTERANGE.match(value)
                if not m:
                    self.error(n, "EXT-X-BYTERANGE must be <n>[@<o>]")
                else:
                    pending_range = (int(m.group(1)), int(m.group(3)) if m.group(3) else None)
                    if int(m.group(1)) == 0:
                        self.error(n, "an empty byte range")
            elif tag == "EXT-X-MAP":
                has_map = True
                a = self.attributes(n, value)
                self.quoted(n, a, "URI", required=True)
                br = self.quoted(n, a, "BYTERANGE")
                if br is not None:
                    m = BYTERANGE.match(br)
                    if not m or m.group(3) is None:
                        self.error(n, "EXT-X-MAP's BYTERANGE needs <n>@<o> (RFC 8216, 4.3.2.5)")
            elif tag == "EXT-X-PROGRAM-DATE-TIME":
                if not DATE_TIME.match(value):
                    self.error(n, f"EXT-X-PROGRAM-DATE-TIME '{value}' is not an ISO 8601 date and time with a zone")
            elif tag == "EXT-X-DISCONTINUITY-SEQUENCE":
                if first_segment_line is not None or segment_parts:
                    self.error(n, "EXT-X-DISCONTINUITY-SEQUENCE after the first segment (RFC 8216, 4.3.3.3)")
                if not DECIMAL_INTEGER.match(value):
                    self.error(n, "EXT-X-DISCONTINUITY-SEQUENCE is not a decimal-integer")
            elif tag == "EXT-X-PLAYLIST-TYPE":
                if value not in ("VOD", "EVENT"):
                    self.error(n, "EXT-X-PLAYLIST-TYPE must be VOD or EVENT")
            elif tag == "EXT-X-ENDLIST":
                ended = True
                if pending_inf is not None:
                    self.error(n, f"EXTINF of line {pending_inf} has no URI")
            elif tag == "EXT-X-PART-INF":
                a = self.attributes(n, value)
                if "PART-TARGET" not in a or not FLOAT.match(a["PART-TARGET"]):
                    self.error(n, "EXT-X-PART-INF needs a decimal PART-TARGET")
                else:
                    part_target = float(a["PART-TARGET"])
            elif tag == "EXT-X-SERVER-CONTROL":
                server_control = self.attributes(n, value)
            elif tag == "EXT-X-PART":
                parts += 1
                a = self.attributes(n, value)
                self.quoted(n, a, "URI", required=True)
                if "DURATION" not in a or not FLOAT.match(a["DURATION"]):
                    self.error(n, "EXT-X-PART needs a decimal DURATION")
                else:
                    segment_parts.append((n, float(a["DURATION"]), a.get("INDEPENDENT") == "YES"))
                    if part_target is not None and float(a["DURATION"]) > part_target + 1e-9:
                        self.error(n, f"a part of {a['DURATION']} s exceeds PART-TARGET {part_target}")
            elif tag == "EXT-X-PRELOAD-HINT":
                hints += 1
                a = self.attributes(n, value)
                if a.get("TYPE") not in ("PART", "MAP"):
                    self.error(n, "EXT-X-PRELOAD-HINT TYPE must be PART or MAP")
                self.quoted(n, a, "URI", required=True)
        if pending_inf is not None:
            self.error(pending_inf, "EXTINF without a URI line after it")
        check_parts(segment_parts, None)  # the segment being made: its last part may still be its final one
        if target is None:
            self.error(1, "EXT-X-TARGETDURATION is required (RFC 8216, 4.3.3.1)")
        else:
            for n, d in durations:
                if math.floor(d + 0.5) > target:
                    self.error(n, f"EXTINF {d} rounds to more than EXT-X-TARGETDURATION {target} (RFC 8216, 4.3.3.1)")
        playlist_type = next((l.split(":", 1)[1] for l in self.lines if l.startswith("#EXT-X-PLAYLIST-TYPE:")), None)
        if playlist_type == "VOD" and not ended:
            self.error(1, "EXT-X-PLAYLIST-TYPE:VOD without EXT-X-ENDLIST")
        # Compatibility version (RFC 8216, 7).
        if byteranges and self.version < 4:
            self.error(1, f"EXT-X-BYTERANGE needs EXT-X-VERSION 4 or more, not {self.version}")
        if float_durations and self.version < 3:
            self.error(1, f"decimal EXTINF durations need EXT-X-VERSION 3 or more, not {self.version}")
        if has_map and self.version < 6:
            self.error(1, f"EXT-X-MAP outside an I-frames-only playlist needs EXT-X-VERSION 6 or more, not {self.version}")
        # Low-Latency HLS (rfc8216bis).
        if parts or part_target is not None:
            if part_target is None:
                self.error(1, "EXT-X-PART without EXT-X-PART-INF")
            if "PART-HOLD-BACK" not in server_control:
                self.error(1, "EXT-X-SERVER-CONTROL needs PART-HOLD-BACK with parts (rfc8216bis, 4.4.3.8)")
            elif part_target is not None and float(server_control["PART-HOLD-BACK"]) < 3 * part_target - 1e-9:
                self.error(1, f"PART-HOLD-BACK {server_control['PART-HOLD-BACK']} is less than 3 x PART-TARGET {part_target}")
            if server_control.get("CAN-BLOCK-RELOAD") != "YES" and not ended:
                self.error(1, "a live playlist with parts needs CAN-BLOCK-RELOAD=YES (rfc8216bis 4.4.3.8)")
        if "HOLD-BACK" in server_control and target is not None and float(server_control["HOLD-BACK"]) < 3 * target - 1e-9:
            self.error(1, f"HOLD-BACK {server_control['HOLD-BACK']} is less than 3 x EXT-X-TARGETDURATION {target}")
        if hints > 1:
            self.error(1, "more than one EXT-X-PRELOAD-HINT")
        if segments == 0 and not parts:
            self.error(1, "no media segment")
        self.summary = f"media playlist, {segments} segments, {parts} parts, target {target} s, version {self.version}" + \
            (", ended" if ended else ", live")


def same_segments(files):
    """The multivariant rule that lets a player switch at any segment: every variant's media playlist
    lists the same EXTINF durations, in order. Returns the violations."""
    lists = []
    for f in files:
        with open(f, encoding="utf-8") as text:
            lists.append([l.split(":", 1)[1].split(",")[0] for l in text.read().split("\n") if l.startswith("#EXTINF:")])
    return [f"FAIL: {files[i]}: its {len(l)} segments' EXTINF differ from {files[0]}'s {len(lists[0])}"
            for i, l in enumerate(lists) if l != lists[0]]


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--same-segments":  # check_playlist.py --same-segments MEDIA_PLAYLIST...
        errors = same_segments(sys.argv[2:])
        print("\n".join(errors) if errors else f"ok: {len(sys.argv) - 2} media playlists list the same segment durations")
        return 1 if errors else 0
    if len(sys.argv) < 2:
        print("usage: check_playlist.py PLAYLIST_FILE [NAME]", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    c = Checker(text, sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]).check()
    for e in c.errors:
        print(f"FAIL: {e}")
    if c.errors:
        return 1
    print(f"ok: {c.name}: {c.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
