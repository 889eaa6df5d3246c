#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vendor-hls-js.sh: puts hls.js, pinned, into the watch page's static files, for browsers without
# HLS of their own (Firefox). The release tarball comes from the npm registry and must match the
# registry's sha512 integrity recorded here; its minified build and its licence (Apache-2.0) are
# (the light build) copied to proxy/web/static/ and committed, so no build, test or page ever fetches it: run this
# only to move to another version (then update VERSION and INTEGRITY, and docs/proxy.md).
set -euo pipefail
VERSION=1.7.4
INTEGRITY=sha512-3GlxGdPvT2YHvQYOt+yOzT/DEior/qJVNIylHA77kgeoBTdQQqi70GwefNEUmHQeNGyjC8U62+bruqW/Tpm+tg==
dest=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/proxy/web/static
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
url=https://registry.npmjs.org/hls.js/-/hls.js-$VERSION.tgz
echo "fetching $url"
curl -fsSL --max-time 120 -o "$work/hls.tgz" "$url"
got=sha512-$(openssl dgst -sha512 -binary "$work/hls.tgz" | base64 -w0)
[[ $got == "$INTEGRITY" ]] || { echo "error: $url has integrity $got, not the pinned $INTEGRITY" >&2; exit 1; }
tar -xzf "$work/hls.tgz" -C "$work" package/dist/hls.light.min.js package/LICENSE package/package.json
grep -q "\"version\": \"$VERSION\"" "$work/package/package.json" || { echo "error: the tarball is not hls.js $VERSION" >&2; exit 1; }
cp "$work/package/dist/hls.light.min.js" "$dest/hls.light.min.js"
{ echo "hls.js $VERSION (https://www.npmjs.com/package/hls.js), dist/hls.light.min.js (the build without subtitles, alternate audio, DRM and CMCD), npm integrity $INTEGRITY"; echo; cat "$work/package/LICENSE"; } > "$dest/hls.js-LICENSE.txt"
echo "hls.js $VERSION: $(stat -c %s "$dest/hls.light.min.js") bytes in $dest/hls.light.min.js, licence in $dest/hls.js-LICENSE.txt"
