// SPDX-License-Identifier: LGPL-2.1-or-later
// The order in which a segment reader's memory goes (client/src/rdma/segment_reader.hpp): its check
// words and message buffers are under an MR the endpoint owns, and Reads and receives it posted may
// land after the reader is destroyed, so that memory must be freed only with the endpoint, after its
// QP and MRs, never with the reader (it once was: a plain vector the reader owned). An endpoint
// opens the rdma_cm event channel, so this runs in the Soft-RoCE guest (vod_vcr_tests).
#include <gtest/gtest.h>

#include "rdma/segment_reader.hpp"

namespace vod::client {
namespace {

TEST(SegmentReaderMemory, OutlivesTheReaderUntilTheEndpointGoes) {
  std::weak_ptr<void> memory;
  {
    rdma::ClientEndpoint ep;  // no device: nothing gets posted, so no QP is touched
    rdma::ReadBatch batch;
    {
      SegmentReader reader(
          ep, 1, batch, 8, [] { return 0u; }, [](std::uint32_t, bool, const std::string&) {});
      ASSERT_EQ(ep.pinned.size(), 1u) << "the reader's memory is not the endpoint's to keep";
      memory = ep.pinned.back();
    }
    EXPECT_FALSE(memory.expired()) << "freed with the reader, while the endpoint's QP and MR may still write into it";
  }
  EXPECT_TRUE(memory.expired()) << "still held after the endpoint went";
}

TEST(SegmentReaderMemory, TheEndpointFreesItAfterItsRegistrations) {
  // Members go in reverse order of declaration: `pinned` is declared before the MRs and the QP.
  rdma::ClientEndpoint ep;
  const auto* base = reinterpret_cast<const char*>(&ep);
  EXPECT_LT(reinterpret_cast<const char*>(&ep.pinned) - base, reinterpret_cast<const char*>(&ep.memory) - base);
  EXPECT_LT(reinterpret_cast<const char*>(&ep.pinned) - base, reinterpret_cast<const char*>(&ep.qp) - base);
}

}  // namespace
}  // namespace vod::client
