// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// A ring area in ordinary memory, with helpers that play the kernel's side.
#pragma once

#include "ring.h"

#include <rdma/kiwi-abi.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kiwi::test {

template <typename Elem> class FakeRing {
public:
	// A zeroed ring of num_entries elements whose indices both start at
	// start (to test wrap-around of the free-running counters).
	explicit FakeRing(uint32_t num_entries, uint32_t start = 0)
		: num_(num_entries),
		  words_((ring_bytes(num_entries, sizeof(Elem)) + 7) / 8, 0)
	{
		ctrl().producer = start;
		ctrl().consumer = start;
	}

	void *area() { return words_.data(); }
	kiwi_ring_ctrl &ctrl()
	{
		return *static_cast<kiwi_ring_ctrl *>(area());
	}

	// The element that index (a free-running counter value) addresses.
	Elem &at_index(uint32_t index)
	{
		auto *elems = reinterpret_cast<Elem *>(
			static_cast<unsigned char *>(area()) +
			KIWI_RING_CTRL_SIZE);
		return elems[index & (num_ - 1)];
	}

	uint32_t pending()
	{
		return ring_word(ctrl().producer)
			       .load(std::memory_order_acquire) -
		       ring_word(ctrl().consumer)
			       .load(std::memory_order_acquire);
	}

	// Kernel as consumer (SQ/RQ): copies out the next element.
	bool kernel_take(Elem &out)
	{
		if (pending() == 0)
			return false;
		std::memcpy(&out, &at_index(ctrl().consumer), sizeof(out));
		ring_word(ctrl().consumer)
			.fetch_add(1, std::memory_order_release);
		return true;
	}

	// Kernel as producer (CQ).
	bool kernel_put(const Elem &e)
	{
		if (pending() == num_)
			return false;
		std::memcpy(&at_index(ctrl().producer), &e, sizeof(e));
		ring_word(ctrl().producer)
			.fetch_add(1, std::memory_order_release);
		return true;
	}

private:
	uint32_t num_;
	std::vector<uint64_t> words_;
};

} // namespace kiwi::test
