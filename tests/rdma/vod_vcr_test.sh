#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VoD core: runs the VCR GoogleTest suite (vcr_test.cpp) against a vod-server in this session.
source "$(dirname "$0")/vod_test_lib.sh"
media=$work/media
mkdir -p "$media"
"$build/tests/rdma/make_pattern" $((48 * 1024 * 1024 + 5)) 1 "$media/pattern-a.bin"
"$build/tests/rdma/make_pattern" $((3 * 1024 * 1024 + 7)) 2 "$media/pattern-b.bin"
cp "$test_media/test-480p-60s.ts" "$media/"
start_server "$media"
VOD_TEST_URI=$(uri) VOD_TEST_SERVER_LOG=$server_log VOD_TEST_MEDIA_DIR=$media "$build/tests/rdma/vod_vcr_tests"
# The non-blocking connect against a hung server: stopped, it never answers the connect request.
kill -STOP "$server_pid"
rc=0
VOD_TEST_URI=$(uri) VOD_TEST_SERVER_STOPPED=1 "$build/tests/rdma/vod_vcr_tests" --gtest_filter='ConnectorStopped.*' || rc=$?
kill -CONT "$server_pid"
[[ $rc -eq 0 ]] || fail "the connector against a stopped server"
stop_server
