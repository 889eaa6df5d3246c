#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vendor-web-players.sh: puts the watch page's two players, pinned, into its static files:
#   hls.js (Apache-2.0): dist/hls.min.js, the full build (alternate audio, subtitles), for browsers
#     without HLS of their own and for titles, whose audio and subtitle menus need its track API;
#   dash.js (BSD-3-Clause): dist/modern/umd/dash.mediaplayer.min.js, the player without the
#     offline, MSS, protection and reporting modules, for ?player=dash.js (a title's DASH manifest).
# Each release tarball comes from the npm registry and must match the registry's sha512 integrity
# recorded here; the file and its licence are copied to proxy/web/static/ and committed, so no
# build, test or page ever fetches them. Run this only to move to another version (then update the
# versions and integrities here, README.md and docs/proxy.md).
set -euo pipefail
dest=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/proxy/web/static
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# vendor PACKAGE VERSION INTEGRITY FILE_IN_TARBALL LICENCE_IN_TARBALL OUT_NAME LICENCE_NAME WHAT [NOTICES_IN_TARBALL]
#   NOTICES: the bundled third-party licences a minified file points to, appended to its licence.
vendor() {
  local package=$1 version=$2 integrity=$3 file=$4 licence=$5 out=$6 licence_out=$7 what=$8 notices=${9:-}
  local url=https://registry.npmjs.org/$package/-/$package-$version.tgz
  echo "fetching $url"
  rm -rf "$work/package"
  curl -fsSL --max-time 120 -o "$work/$package.tgz" "$url"
  local got=sha512-$(openssl dgst -sha512 -binary "$work/$package.tgz" | base64 -w0)
  [[ $got == "$integrity" ]] || { echo "error: $url has integrity $got, not the pinned $integrity" >&2; exit 1; }
  tar -xzf "$work/$package.tgz" -C "$work" "package/$file" "package/$licence" ${notices:+"package/$notices"} package/package.json
  grep -q "\"version\": \"$version\"" "$work/package/package.json" || { echo "error: the tarball is not $package $version" >&2; exit 1; }
  cp "$work/package/$file" "$dest/$out"
  { echo "$package $version (https://www.npmjs.com/package/$package), $file ($what), npm integrity $integrity"; echo; cat "$work/package/$licence"
    [[ -z $notices ]] || { echo; echo "Bundled in $file ($notices):"; cat "$work/package/$notices"; }; } > "$dest/$licence_out"
  echo "$package $version: $(stat -c %s "$dest/$out") bytes in $dest/$out, licence in $dest/$licence_out"
}

vendor hls.js 1.7.4 sha512-3GlxGdPvT2YHvQYOt+yOzT/DEior/qJVNIylHA77kgeoBTdQQqi70GwefNEUmHQeNGyjC8U62+bruqW/Tpm+tg== \
  dist/hls.min.js LICENSE hls.min.js hls.js-LICENSE.txt "the full build: alternate audio, subtitles, DRM, CMCD"
vendor dashjs 5.2.1 sha512-axcJmLeJCTJMLUfQRErUJB1KOiU5iHF+DMLBc3FKeox1HPYtGUQlC6Xm5Mm6vhBUR3CHHLIPOqw0JDIqMtP+Dw== \
  dist/modern/umd/dash.mediaplayer.min.js LICENSE.md dash.mediaplayer.min.js dash.js-LICENSE.txt \
  "the media player without the offline, MSS, protection and reporting modules" \
  dist/modern/umd/dash.mediaplayer.min.js.LICENSE.txt
