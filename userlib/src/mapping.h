// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Owner of one shared mapping of a kernel ring (RAII around mmap/munmap).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiwi {

class Mapping {
public:
	Mapping() noexcept = default;
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&other) noexcept;
	Mapping &operator=(Mapping &&other) noexcept;
	~Mapping() { reset(); }

	// Maps length bytes of fd at offset key read/write and shared.
	// Returns 0 or an errno value; replaces any earlier mapping.
	int map(int fd, uint64_t key, size_t length) noexcept;
	void reset() noexcept;

	[[nodiscard]] void *addr() const noexcept { return addr_; }
	[[nodiscard]] size_t length() const noexcept { return length_; }

private:
	void *addr_ = nullptr;
	size_t length_ = 0;
};

// Checks the ring description of a create response (mmap key, number of
// elements) and maps the ring of fd into map. Returns 0, EPROTO for a
// description that breaks the ABI, or mmap's errno.
int map_ring(int fd, uint64_t key, uint32_t num_entries, size_t elem_size,
	     Mapping &map) noexcept;

} // namespace kiwi
