// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Ring mapping: what libkiwi accepts from a create response, and the RAII
// owner of the mapping. /dev/zero stands in for the uverbs file.
#include "mapping.h"
#include "ring.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace kiwi {
namespace {

class MapRing : public ::testing::Test {
protected:
	void SetUp() override
	{
		fd_ = open("/dev/zero", O_RDWR | O_CLOEXEC);
		ASSERT_GE(fd_, 0);
	}
	void TearDown() override
	{
		if (fd_ >= 0)
			close(fd_);
	}

	int fd_ = -1;
};

// True if addr..addr+len is mapped in this process.
bool mapped(void *addr, size_t len)
{
	unsigned char vec[4];

	return mincore(addr, std::min<size_t>(len, 4096), vec) == 0;
}

TEST_F(MapRing, MapsControlBlockAndElements)
{
	Mapping map;

	ASSERT_EQ(map_ring(fd_, 0, 64, sizeof(kiwi_sqe), map), 0);
	EXPECT_NE(map.addr(), nullptr);
	EXPECT_EQ(map.length(), ring_bytes(64, sizeof(kiwi_sqe)));
	// Writable and shared: a producer index store works.
	static_cast<kiwi_ring_ctrl *>(map.addr())->producer = 1;
}

TEST_F(MapRing, RejectsWhatBreaksTheAbi)
{
	Mapping map;

	EXPECT_EQ(map_ring(fd_, KIWI_INVALID_MMAP_KEY, 64, 32, map), EPROTO);
	EXPECT_EQ(map_ring(fd_, 0, 0, 32, map), EPROTO);
	EXPECT_EQ(map_ring(fd_, 0, 48, 32, map), EPROTO);
	EXPECT_EQ(map_ring(fd_, 0, 0xffffffffu, 32, map), EPROTO);
	EXPECT_EQ(map.addr(), nullptr);
}

TEST_F(MapRing, ReportsMmapErrors)
{
	Mapping map;

	EXPECT_EQ(map_ring(-1, 0, 4, 32, map), EBADF);
	// An offset mmap cannot take (not page aligned).
	EXPECT_EQ(map_ring(fd_, 123, 4, 32, map), EINVAL);
	// A key beyond off_t.
	EXPECT_EQ(map_ring(fd_, 0x8000000000000000ull, 4, 32, map), EINVAL);
	EXPECT_EQ(map.addr(), nullptr);
}

TEST_F(MapRing, MappingIsReleasedAndMovable)
{
	void *addr = nullptr;
	size_t len = 0;
	{
		Mapping a;
		ASSERT_EQ(map_ring(fd_, 0, 4, 32, a), 0);
		addr = a.addr();
		len = a.length();
		Mapping b(std::move(a));
		EXPECT_EQ(a.addr(), nullptr);
		EXPECT_EQ(b.addr(), addr);
		EXPECT_TRUE(mapped(addr, len));
		Mapping c;
		c = std::move(b);
		EXPECT_EQ(c.addr(), addr);
		EXPECT_TRUE(mapped(addr, len));
	}
	EXPECT_FALSE(mapped(addr, len));
}

TEST_F(MapRing, RemappingReplacesTheOldMapping)
{
	Mapping map;

	ASSERT_EQ(map_ring(fd_, 0, 4, 32, map), 0);
	void *first = map.addr();
	ASSERT_EQ(map_ring(fd_, 0, 8, 32, map), 0);
	EXPECT_EQ(map.length(), ring_bytes(8, 32));
	if (map.addr() != first) {
		EXPECT_FALSE(mapped(first, 4096));
	}
	map.reset();
	EXPECT_EQ(map.addr(), nullptr);
	EXPECT_EQ(map.length(), 0u);
}

} // namespace
} // namespace kiwi
