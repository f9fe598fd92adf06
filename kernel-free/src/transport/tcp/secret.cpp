// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/secret.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"

namespace squall::tcp {

job_secret make_secret() {
  job_secret s;
  std::size_t got = 0;
  while (got < s.size()) {
    const ssize_t r = ::getrandom(s.data() + got, s.size() - got, 0);
    if (r < 0 && errno != EINTR) fatal("getrandom for the job secret failed: %s", std::strerror(errno));
    if (r > 0) got += static_cast<std::size_t>(r);
  }
  return s;
}

std::string to_hex(std::span<const std::byte> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::byte b : bytes) {
    out += digits[static_cast<unsigned>(b) >> 4];
    out += digits[static_cast<unsigned>(b) & 15];
  }
  return out;
}

job_secret secret_from_env() {
  const char* text = std::getenv("SQUALL_JOB_SECRET");
  if (text == nullptr || *text == '\0') {
    fatal("SQUALL_JOB_SECRET is not set: TCP connections need the job's secret (squallrun, or the "
          "bootstrap under mpirun, sets it)");
  }
  job_secret s;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (std::strlen(text) != 2 * s.size()) fatal("SQUALL_JOB_SECRET must be %zu hex digits", 2 * s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) fatal("SQUALL_JOB_SECRET must be %zu hex digits", 2 * s.size());
    s[i] = static_cast<std::byte>(hi * 16 + lo);
  }
  return s;
}

mac authenticate(const job_secret& secret, std::span<const std::byte> message) {
  mac out;
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(),
           reinterpret_cast<unsigned char*>(out.data()), &len) == nullptr ||
      len != out.size()) {
    fatal("HMAC-SHA256 failed (OpenSSL)");
  }
  return out;
}

bool same_mac(const mac& a, const mac& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace squall::tcp
