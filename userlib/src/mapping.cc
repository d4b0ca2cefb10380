// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#include "mapping.h"

#include "ring.h"

#include <sys/mman.h>
#include <sys/types.h>

#include <cerrno>
#include <limits>
#include <utility>

namespace kiwi {

Mapping::Mapping(Mapping &&other) noexcept
	: addr_(std::exchange(other.addr_, nullptr)),
	  length_(std::exchange(other.length_, 0))
{}

Mapping &Mapping::operator=(Mapping &&other) noexcept
{
	if (this != &other) {
		reset();
		addr_ = std::exchange(other.addr_, nullptr);
		length_ = std::exchange(other.length_, 0);
	}
	return *this;
}

int Mapping::map(int fd, uint64_t key, size_t length) noexcept
{
	reset();
	if (length == 0 ||
	    key > static_cast<uint64_t>(std::numeric_limits<off_t>::max()))
		return EINVAL;

	void *addr = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED,
			  fd, static_cast<off_t>(key));
	if (addr == MAP_FAILED)
		return errno;
	addr_ = addr;
	length_ = length;
	return 0;
}

int map_ring(int fd, uint64_t key, uint32_t num_entries, size_t elem_size,
	     Mapping &map) noexcept
{
	if (key == KIWI_INVALID_MMAP_KEY || !ring_entries_valid(num_entries))
		return EPROTO;
	return map.map(fd, key, ring_bytes(num_entries, elem_size));
}

void Mapping::reset() noexcept
{
	if (addr_)
		munmap(addr_, length_);
	addr_ = nullptr;
	length_ = 0;
}

} // namespace kiwi
