// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/token_authority.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <ctime>
#include <stdexcept>

#include "auth/entry_file.hpp"
#include "vod/protocol/hex_text.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/units.hpp"

namespace vod::server::auth {

namespace {

// Domain separation: these MACs are never valid as anything else made with the same secret.
constexpr std::string_view kDomain = "rdma-vod access token v1";

std::string utc(std::uint32_t t) {
  const std::time_t tt = t;
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const char* scope_name(proto::TokenScope s) {
  switch (s) {
    case proto::TokenScope::all: return "everything";
    case proto::TokenScope::movie: return "one movie";
    case proto::TokenScope::live: return "one live channel";
    case proto::TokenScope::prefix: return "a name prefix";
  }
  return "?";
}

bool in_scope(const proto::AccessToken& t, const proto::CatalogEntry& e) {
  const bool live = (e.flags & proto::kEntryLive) != 0;
  switch (t.scope) {
    case proto::TokenScope::all: return true;
    case proto::TokenScope::movie: return !live && proto::name_hash(e.name) == t.scope_hash;
    case proto::TokenScope::live: return live && proto::name_hash(e.name) == t.scope_hash;
    case proto::TokenScope::prefix: {
      // Every prefix's hash in one pass (FNV-1a is a running hash): names are paths of up to 1024
      // bytes, and a folder's prefix ("Series/Show/") grants everything below it.
      std::uint64_t h = proto::kNameHashSeed;
      for (unsigned char c : e.name)
        if ((h = proto::name_hash_step(h, c)) == t.scope_hash) return true;
      return false;
    }
  }
  return false;
}

}  // namespace

TokenAuthority::TokenAuthority(std::map<std::uint8_t, std::vector<std::uint8_t>> keys) : keys_(std::move(keys)) {
  if (keys_.empty()) throw std::invalid_argument("no keys: an auth secret file needs at least one 'ID HEX' line");
  for (const auto& [id, secret] : keys_)
    if (secret.size() < kMinSecretBytes)
      throw std::invalid_argument("key " + std::to_string(id) + " has " + std::to_string(secret.size()) + " bytes of secret; at least " +
                                  std::to_string(kMinSecretBytes) + " are needed (e.g. openssl rand -hex 32)");
}

TokenAuthority TokenAuthority::load(const std::filesystem::path& file) {
  std::map<std::uint8_t, std::vector<std::uint8_t>> keys;
  for_each_entry(file, "auth secret file", [&](const std::vector<std::string>& f, const std::string& where) {
    if (f.size() != 2) throw std::runtime_error(where + "expected 'ID HEX' (a key id 0..255 and its secret in hex)");
    const auto id = parse_key_id(f[0]);
    if (!id) throw std::runtime_error(where + "the key id '" + f[0] + "' is not 0..255");
    const auto secret = proto::parse_hex(f[1]);
    if (!secret) throw std::runtime_error(where + "the secret is not hex digits");
    if (secret->size() < kMinSecretBytes)
      throw std::runtime_error(where + "the secret has " + std::to_string(secret->size()) + " bytes; at least " +
                               std::to_string(kMinSecretBytes) + " are needed (openssl rand -hex 32)");
    if (!keys.emplace(*id, *secret).second) throw std::runtime_error(where + "key id " + f[0] + " appears twice");
  });
  if (keys.empty()) throw std::runtime_error(file.string() + ": no keys (one 'ID HEX' line per key)");
  return TokenAuthority(std::move(keys));
}

std::array<std::uint8_t, proto::kTokenMacSize> TokenAuthority::mac(const proto::AccessToken& t, const proto::TokenAddress* address) const {
  const auto& secret = keys_.at(t.key_id);
  std::vector<std::uint8_t> m(kDomain.begin(), kDomain.end());
  const auto part = proto::signed_part(t);
  m.insert(m.end(), part.begin(), part.end());
  if (address) m.insert(m.end(), address->begin(), address->end());
  std::uint8_t out[EVP_MAX_MD_SIZE];
  unsigned out_len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), m.data(), m.size(), out, &out_len) ||
      out_len < proto::kTokenMacSize)
    throw std::runtime_error("HMAC-SHA256 of an access token failed (OpenSSL)");
  std::array<std::uint8_t, proto::kTokenMacSize> r{};
  std::memcpy(r.data(), out, r.size());
  return r;
}

proto::AccessToken TokenAuthority::mint(std::uint8_t key_id, proto::TokenScope scope, std::string_view name, std::uint32_t expires,
                                        const std::optional<proto::TokenAddress>& client) const {
  if (!keys_.count(key_id)) throw std::invalid_argument("there is no key " + std::to_string(key_id) + " in the secret file");
  proto::AccessToken t;
  t.key_id = key_id;
  t.scope = scope;
  t.expires = expires;
  if (scope != proto::TokenScope::all) {
    if (name.empty()) throw std::invalid_argument("a movie, live or prefix token needs a name");
    t.scope_hash = proto::name_hash(name);
  }
  if (client) {
    t.flags |= proto::kTokenBoundToAddress;
    t.address_hint = proto::address_hint(*client);
  } else {
    // A nonce: two tokens minted alike in the same second still differ, so each can be revoked alone.
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&t.address_hint), sizeof t.address_hint) != 1)
      throw std::runtime_error("RAND_bytes for a token nonce failed (OpenSSL)");
  }
  t.mac = mac(t, client ? &*client : nullptr);
  return t;
}

std::optional<std::string> TokenAuthority::refusal(const proto::ConnectRequest& request, const proto::CatalogEntry* entry,
                                                   std::uint64_t now, const proto::TokenAddress& peer) const {
  if (request.auth_type != proto::AuthType::token_v1)
    return "missing token: this server requires one (vod-token mints it; add ?token=... to the URI)";
  const auto token = proto::decode_access_token(request.auth_token);
  if (!token) return "malformed token: " + token.error().message;
  const proto::AccessToken& t = *token;
  if (!keys_.count(t.key_id)) return "bad token: key " + std::to_string(t.key_id) + " is not known here (rotated out or revoked)";
  const auto want = mac(t, t.bound_to_address() ? &peer : nullptr);
  if (CRYPTO_memcmp(want.data(), t.mac.data(), want.size()) != 0) {
    if (t.bound_to_address() && t.address_hint != proto::address_hint(peer))
      return "wrong address: the token was made for another client address";
    return "bad token: forged or corrupted (its MAC does not verify under key " + std::to_string(t.key_id) + ")";
  }
  if (now >= t.expires) return "expired token: it expired at " + utc(t.expires) + ", " + std::to_string(now - t.expires) + " s ago";
  return entry ? out_of_scope(t, *entry) : std::nullopt;
}

std::optional<std::string> TokenAuthority::out_of_scope(const proto::AccessToken& t, const proto::CatalogEntry& entry) {
  if (in_scope(t, entry)) return std::nullopt;
  return std::string("out of scope: the token grants ") + scope_name(t.scope) + ", not '" + entry.name + "'";
}

std::uint32_t parse_duration(const std::string& text) {
  const auto ms = vod::parse_duration(text, "duration").count();
  if (ms < 1000 || ms / 1000 > 0xffffffffll) throw std::invalid_argument("duration: '" + text + "' is not from 1 s to 136 years");
  return static_cast<std::uint32_t>(ms / 1000);
}

}  // namespace vod::server::auth
