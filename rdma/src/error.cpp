// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/error.hpp"

#include <cerrno>
#include <cstring>

namespace vod::rdma {

const char* const kGetADeviceHint =
    "rdma-vod needs an RDMA device: an RNIC (InfiniBand, RoCE, iWARP) or Soft-RoCE on an Ethernet "
    "interface, e.g. 'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0'; 'ibv_devices' "
    "lists what this host has, and tests/softroce/softroce-run runs a command in a Soft-RoCE guest";

namespace {
std::string describe(const std::string& call, int err, const std::string& device, const std::string& context) {
  std::string m = call + " failed";
  if (!device.empty()) m += " on " + device;
  m += ": ";
  m += std::strerror(err);
  m += " (errno " + std::to_string(err) + ")";
  if (!context.empty()) m += " while " + context;
  return m;
}
}  // namespace

RdmaError::RdmaError(std::string call, int err, std::string device, const std::string& context)
    : std::runtime_error(describe(call, err, device, context)), call_(std::move(call)), errno_(err), device_(std::move(device)) {}

NoDeviceError::NoDeviceError(const std::string& detail) : std::runtime_error(detail + "; " + kGetADeviceHint) {}

void throw_errno(const std::string& call, const std::string& device, const std::string& context) {
  throw RdmaError(call, errno, device, context);
}

void throw_error(const std::string& call, int err, const std::string& device, const std::string& context) {
  throw RdmaError(call, err, device, context);
}

}  // namespace vod::rdma
