#pragma once
// The digest of a result's bytes (a run's gathered C): runs that must give bit-identical results
// (another algorithm, rank count or host count on integer fill) compare it. Not cryptographic:
// any single changed 8-byte word changes it.
#include <cstddef>
#include <string>

namespace scalebench {

// "fnv1a64w:" and 16 hex digits. The bytes are cut into 1 MiB chunks; each chunk is hashed in
// four interleaved lanes of FNV-1a over 64-bit little-endian words (word i to lane i % 4; the
// bytes past the last whole word to lane 0, one by one), its lanes folded by FNV-1a into the
// chunk's value; the chunks' values in order, then the byte count, by FNV-1a into the digest.
// Chunks are hashed on up to `threads` threads; the digest does not depend on their number.
std::string bytes_digest(const void* data, std::size_t bytes, int threads);

}  // namespace scalebench
