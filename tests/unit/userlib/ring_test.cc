// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Index arithmetic of the two ring ends: empty, full, wrap at 2^32 and
// indices the kernel could never have written.
#include "fake_ring.h"
#include "ring.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace kiwi {
namespace {

using test::FakeRing;

struct Elem {
	uint64_t value;
};

TEST(RingGeometry, EntriesMustBeAPowerOfTwo)
{
	EXPECT_FALSE(ring_entries_valid(0));
	EXPECT_TRUE(ring_entries_valid(1));
	EXPECT_TRUE(ring_entries_valid(2));
	EXPECT_FALSE(ring_entries_valid(3));
	EXPECT_FALSE(ring_entries_valid(96));
	EXPECT_TRUE(ring_entries_valid(1024));
	EXPECT_TRUE(ring_entries_valid(1u << 31));
	EXPECT_FALSE(ring_entries_valid(0xffffffffu));
}

TEST(RingGeometry, BytesAreControlBlockPlusElements)
{
	EXPECT_EQ(ring_bytes(1, 32), 128u + 32u);
	EXPECT_EQ(ring_bytes(256, sizeof(kiwi_sqe)), 128u + 256u * 128u);
	// No 32-bit overflow for the largest ring.
	EXPECT_EQ(ring_bytes(1u << 31, 128), 128u + (uint64_t{1} << 38));
}

TEST(ProducerRing, EmptyRingHasAllSlotsFree)
{
	FakeRing<Elem> mem(8);
	ProducerRing<Elem> ring(mem.area(), 8);

	EXPECT_EQ(ring.capacity(), 8u);
	EXPECT_EQ(ring.space(), 8u);
}

TEST(ProducerRing, FillsUpAndDrains)
{
	FakeRing<Elem> mem(4);
	ProducerRing<Elem> ring(mem.area(), 4);

	for (uint32_t i = 0; i < 4; i++)
		ring.slot(i).value = 100 + i;
	ring.publish(4);
	EXPECT_EQ(mem.ctrl().producer, 4u);
	EXPECT_EQ(ring.space(), 0u);

	Elem e{};
	ASSERT_TRUE(mem.kernel_take(e));
	EXPECT_EQ(e.value, 100u);
	EXPECT_EQ(ring.space(), 1u);
	ring.slot(0).value = 104;
	ring.publish(1);
	EXPECT_EQ(ring.space(), 0u);
	// The new element reused slot 0.
	EXPECT_EQ(mem.at_index(4).value, 104u);
	EXPECT_EQ(mem.at_index(0).value, 104u);
}

TEST(ProducerRing, UnpublishedSlotsAreInvisible)
{
	FakeRing<Elem> mem(4);
	ProducerRing<Elem> ring(mem.area(), 4);

	ring.slot(0).value = 1;
	EXPECT_EQ(mem.ctrl().producer, 0u);
	Elem e{};
	EXPECT_FALSE(mem.kernel_take(e));
}

TEST(ProducerRing, WrapsAt2To32)
{
	const uint32_t start = 0xfffffffeu;
	FakeRing<Elem> mem(8, start);
	ProducerRing<Elem> ring(mem.area(), 8);

	for (uint32_t i = 0; i < 5; i++)
		ring.slot(i).value = i;
	ring.publish(5);
	EXPECT_EQ(mem.ctrl().producer, 3u); // 0xfffffffe + 5 mod 2^32
	EXPECT_EQ(ring.space(), 3u);
	for (uint32_t i = 0; i < 5; i++) {
		Elem e{};
		ASSERT_TRUE(mem.kernel_take(e));
		EXPECT_EQ(e.value, i);
	}
	EXPECT_EQ(mem.ctrl().consumer, 3u);
	EXPECT_EQ(ring.space(), 8u);
	// Slot of index 0xfffffffe is 6, of index 0 is 0.
	EXPECT_EQ(mem.at_index(start).value, 0u);
	EXPECT_EQ(mem.at_index(0).value, 2u);
}

TEST(ProducerRing, ConsumerAheadOfProducerReadsAsFull)
{
	FakeRing<Elem> mem(8);
	ProducerRing<Elem> ring(mem.area(), 8);

	mem.ctrl().consumer = 5; // nothing was produced yet
	EXPECT_EQ(ring.space(), 0u);
	mem.ctrl().consumer = 0xfffffff0u;
	EXPECT_EQ(ring.space(), 0u);
}

TEST(ConsumerRing, EmptyUntilTheKernelProduces)
{
	FakeRing<Elem> mem(4);
	ConsumerRing<Elem> ring(mem.area(), 4);

	EXPECT_EQ(ring.ready(), 0u);
	ASSERT_TRUE(mem.kernel_put(Elem{7}));
	ASSERT_TRUE(mem.kernel_put(Elem{8}));
	EXPECT_EQ(ring.ready(), 2u);
	EXPECT_EQ(ring.at(0).value, 7u);
	EXPECT_EQ(ring.at(1).value, 8u);
	ring.consume(1);
	EXPECT_EQ(mem.ctrl().consumer, 1u);
	EXPECT_EQ(ring.ready(), 1u);
	EXPECT_EQ(ring.at(0).value, 8u);
}

TEST(ConsumerRing, FullRingAndWrap)
{
	const uint32_t start = 0xfffffffdu;
	FakeRing<Elem> mem(4, start);
	ConsumerRing<Elem> ring(mem.area(), 4);

	for (uint64_t i = 0; i < 4; i++)
		ASSERT_TRUE(mem.kernel_put(Elem{i}));
	EXPECT_FALSE(mem.kernel_put(Elem{99}));
	EXPECT_EQ(ring.ready(), 4u);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(ring.at(i).value, i);
	ring.consume(4);
	EXPECT_EQ(mem.ctrl().consumer, 1u);
	EXPECT_EQ(ring.ready(), 0u);
}

TEST(ConsumerRing, ProducerTooFarAheadIsClamped)
{
	FakeRing<Elem> mem(4);
	ConsumerRing<Elem> ring(mem.area(), 4);

	mem.ctrl().producer = 1000;
	EXPECT_EQ(ring.ready(), 4u);
	mem.ctrl().producer = 0xffffffffu; // "behind" the consumer
	EXPECT_EQ(ring.ready(), 4u);
}

TEST(ConsumerRing, ArmStoresTheRequestedMode)
{
	FakeRing<Elem> mem(4);
	ConsumerRing<Elem> ring(mem.area(), 4);

	ring.arm(KIWI_CQ_ARM_SOLICITED);
	EXPECT_EQ(mem.ctrl().arm, static_cast<uint32_t>(KIWI_CQ_ARM_SOLICITED));
	ring.arm(KIWI_CQ_ARM_NEXT);
	EXPECT_EQ(mem.ctrl().arm, static_cast<uint32_t>(KIWI_CQ_ARM_NEXT));
}

} // namespace
} // namespace kiwi
