# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: where the generated test media are (one directory for every build
# tree and the Soft-RoCE guest: ctest passes VOD_TEST_MEDIA_DIR), and what they are known to hold,
# computed natively before the guest starts (tests/media/make-expectations.sh).
test_media=${VOD_TEST_MEDIA_DIR:-${VOD_BUILD_DIR:?CTest sets VOD_BUILD_DIR}/test-media}
# expected MOVIE.WHAT: the path of that fact (see make-expectations.sh), failing when it is missing.
expected() {
  local f=$test_media/expected/$1
  [[ -s $f ]] || { echo "FAIL: $f is missing: the media fixture makes it natively (ctest -R media_fixture)" >&2; exit 1; }
  echo "$f"
}
