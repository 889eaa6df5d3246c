// SPDX-License-Identifier: LGPL-2.1-or-later
// Errors of the RDMA layer: each names the failing call, the errno and the device, plus context.
#pragma once

#include <stdexcept>
#include <string>

namespace vod::rdma {

class RdmaError : public std::runtime_error {
 public:
  RdmaError(std::string call, int err, std::string device, const std::string& context);

  const std::string& call() const noexcept { return call_; }
  int error_number() const noexcept { return errno_; }
  const std::string& device() const noexcept { return device_; }

 private:
  std::string call_;
  int errno_;
  std::string device_;
};

// No RDMA device is present, or none is usable: the message says how to get one.
class NoDeviceError : public std::runtime_error {
 public:
  explicit NoDeviceError(const std::string& detail);
};

// Throws RdmaError for `call` with the current errno (or `err` when the call returns it).
[[noreturn]] void throw_errno(const std::string& call, const std::string& device, const std::string& context);
[[noreturn]] void throw_error(const std::string& call, int err, const std::string& device, const std::string& context);

// The hint appended to every "no device" error.
extern const char* const kGetADeviceHint;

}  // namespace vod::rdma
