// The result of decoding wire data: a value, or an error that says precisely what was wrong.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace vod::proto {

// What class of fault a decode error is. A server maps it to a reject code.
enum class DecodeFault {
  truncated,            // fewer bytes than the format or the length field requires
  bad_magic,            // not rdma-vod data at all
  unsupported_version,  // a protocol major version this build does not speak
  wrong_type,           // a valid message of another type
  bad_length,           // the length field is impossible for this message
  bad_field,            // a field holds a value outside its domain
  inconsistent,         // fields disagree with each other or with the region bounds
};

const char* to_string(DecodeFault f) noexcept;

struct DecodeError {
  DecodeFault fault;
  std::string message;  // names the message, the field and the offending value
};

template <class T>
class [[nodiscard]] Decoded {
 public:
  Decoded(T value) : value_(std::move(value)) {}            // NOLINT: implicit success
  Decoded(DecodeError error) : error_(std::move(error)) {}  // NOLINT: implicit failure

  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }

  const T& value() const& {
    if (!value_) throw std::logic_error("Decoded::value() on an error: " + error_.message);
    return *value_;
  }
  T&& value() && {
    if (!value_) throw std::logic_error("Decoded::value() on an error: " + error_.message);
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const DecodeError& error() const noexcept { return error_; }

 private:
  std::optional<T> value_;
  DecodeError error_{DecodeFault::bad_field, {}};
};

}  // namespace vod::proto
