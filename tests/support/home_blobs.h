// What a home's default content store holds, read from disk the way an operator would look:
// the rows of <home>/loom.db's blobs table (small blobs packed, ADR 0014) and the files of
// <home>/blobs (file names are the addresses). Opens loom.db read-only; a home without either
// holds none.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace loom::testing {

// Every stored address, sorted (an address held in both places appears once).
std::vector<std::string> homeBlobAddresses(const std::filesystem::path& home);

// True when the home stores a blob at `address`.
bool homeHasBlob(const std::filesystem::path& home, const std::string& address);

// The bytes of the blob at `address` (decoded when its row holds a zstd frame; not verified
// against the address); empty when the home holds none.
std::string homeBlobBytes(const std::filesystem::path& home, const std::string& address);

// The stored texts of execution `id`'s events in <home>/loom.db, in seq order, one per line,
// exactly as stored (a sealed event's ciphertext included): what "byte for byte" compares.
std::string homeStoredLog(const std::filesystem::path& home, const std::string& id);

// The same as they lie on disk: the row's bytes (a zstd frame when they compressed) or the
// file's.
std::string homeBlobStoredBytes(const std::filesystem::path& home, const std::string& address);

}  // namespace loom::testing
