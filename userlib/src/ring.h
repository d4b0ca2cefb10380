// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The two ends of a kiwi ring as user space sees them (see kiwi-abi.h):
// a ProducerRing for SQ/RQ/SRQ, a ConsumerRing for CQs. Both are views of
// memory owned elsewhere (a mmap'd area or, in the unit tests, a buffer) and
// are not thread-safe; the queue that owns one serialises access.
#pragma once

#include <rdma/kiwi-abi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kiwi {

// Largest ring libkiwi accepts from the kernel: a distance between two
// free-running 32-bit indices is only unambiguous up to 2^31.
inline constexpr uint32_t kMaxRingEntries = 1u << 31;

// True when num_entries is usable as a ring size.
constexpr bool ring_entries_valid(uint32_t num_entries) noexcept
{
	return num_entries != 0 && num_entries <= kMaxRingEntries &&
	       (num_entries & (num_entries - 1)) == 0;
}

// Bytes of a ring area: the control block and num_entries elements.
constexpr size_t ring_bytes(uint32_t num_entries, size_t elem_size) noexcept
{
	return KIWI_RING_CTRL_SIZE +
	       static_cast<size_t>(num_entries) * elem_size;
}

static_assert(sizeof(kiwi_ring_ctrl) == KIWI_RING_CTRL_SIZE);
static_assert(offsetof(kiwi_ring_ctrl, consumer) == 64);
static_assert(std::atomic_ref<uint32_t>::required_alignment <=
	      alignof(uint32_t));

inline std::atomic_ref<uint32_t> ring_word(uint32_t &word) noexcept
{
	return std::atomic_ref<uint32_t>(word);
}

// User space produces: fills slots, then publishes them to the kernel.
template <typename Elem> class ProducerRing {
public:
	ProducerRing() noexcept = default;

	// area: ring area of ring_bytes(num_entries, sizeof(Elem)) bytes;
	// num_entries must satisfy ring_entries_valid().
	ProducerRing(void *area, uint32_t num_entries) noexcept
		: ctrl_(static_cast<kiwi_ring_ctrl *>(area)),
		  elems_(reinterpret_cast<Elem *>(
			  static_cast<std::byte *>(area) +
			  KIWI_RING_CTRL_SIZE)),
		  mask_(num_entries - 1),
		  prod_(ring_word(ctrl_->producer)
				.load(std::memory_order_relaxed))
	{}

	[[nodiscard]] uint32_t capacity() const noexcept { return mask_ + 1; }

	// Slots that may be filled now. A consumer index the kernel never
	// could have written (ahead of the producer) reads as "full".
	[[nodiscard]] uint32_t space() const noexcept
	{
		const uint32_t cons = ring_word(ctrl_->consumer)
					      .load(std::memory_order_acquire);
		const uint32_t used = prod_ - cons;

		return used >= capacity() ? 0 : capacity() - used;
	}

	// The k-th slot after the last published one (k < space()).
	Elem &slot(uint32_t k) noexcept { return elems_[(prod_ + k) & mask_]; }

	// Hands the next count filled slots to the kernel.
	void publish(uint32_t count) noexcept
	{
		prod_ += count;
		ring_word(ctrl_->producer)
			.store(prod_, std::memory_order_release);
	}

	// The kernel stopped consuming: the QP is in the error state. Call it
	// after publish(). The kernel sets the flag, fences and only then
	// reads the producer index to flush the ring (kiwi_qp_flush()); the
	// full fence here orders the producer store before the flag load. So
	// of a publish that races with the QP's move to error, either that
	// flush takes the new elements or this sees the flag.
	[[nodiscard]] bool in_error() const noexcept
	{
		std::atomic_thread_fence(std::memory_order_seq_cst);
		return (ring_word(ctrl_->flags)
				.load(std::memory_order_relaxed) &
			KIWI_RING_F_ERROR) != 0;
	}

	// SQ of a QP with KIWI_QP_FEAT_SQ_DOORBELL: does the kernel need the
	// doorbell for what publish() just handed over? Call it after
	// publish(). The other half of a store-buffering pair with the
	// kernel's transmit engine (kiwi_tx_park()):
	//
	//   libkiwi (here)                 kiwi.ko, TX going idle
	//   store producer (release)       store KIWI_RING_F_DOORBELL
	//   fence (seq_cst)                smp_mb()
	//   load flags                     load producer
	//
	// Both loads cannot miss both stores: either TX sees the new producer
	// index and sends the new elements, or this sees the flag and the
	// caller rings. The kernel sets KIWI_RING_F_DOORBELL with
	// KIWI_RING_F_ERROR (kiwi_qp_flush()); either flag asks for it.
	[[nodiscard]] bool needs_doorbell() const noexcept
	{
		std::atomic_thread_fence(std::memory_order_seq_cst);
		return (ring_word(ctrl_->flags)
				.load(std::memory_order_relaxed) &
			(KIWI_RING_F_DOORBELL | KIWI_RING_F_ERROR)) != 0;
	}

private:
	kiwi_ring_ctrl *ctrl_ = nullptr;
	Elem *elems_ = nullptr;
	uint32_t mask_ = 0;
	uint32_t prod_ = 0; // private copy: user space is the only writer
};

// The kernel produces, user space consumes (CQ).
template <typename Elem> class ConsumerRing {
public:
	ConsumerRing() noexcept = default;

	ConsumerRing(void *area, uint32_t num_entries) noexcept
		: ctrl_(static_cast<kiwi_ring_ctrl *>(area)),
		  elems_(reinterpret_cast<const Elem *>(
			  static_cast<std::byte *>(area) +
			  KIWI_RING_CTRL_SIZE)),
		  mask_(num_entries - 1),
		  cons_(ring_word(ctrl_->consumer)
				.load(std::memory_order_relaxed))
	{}

	[[nodiscard]] uint32_t capacity() const noexcept { return mask_ + 1; }

	// Elements ready to be read; never more than the ring holds.
	[[nodiscard]] uint32_t ready() const noexcept
	{
		const uint32_t prod = ring_word(ctrl_->producer)
					      .load(std::memory_order_acquire);
		const uint32_t avail = prod - cons_;

		return avail > capacity() ? capacity() : avail;
	}

	// The k-th unread element (k < ready()).
	[[nodiscard]] const Elem &at(uint32_t k) const noexcept
	{
		return elems_[(cons_ + k) & mask_];
	}

	// Gives the next count slots back to the kernel.
	void consume(uint32_t count) noexcept
	{
		cons_ += count;
		ring_word(ctrl_->consumer)
			.store(cons_, std::memory_order_release);
	}

	// Stores a KIWI_CQ_ARM_* value. The full fence orders the store
	// before any later look at the producer index, so a CQE produced
	// after arming is either seen by the caller's next poll or raises
	// an event.
	void arm(uint32_t how) noexcept
	{
		ring_word(ctrl_->arm).store(how, std::memory_order_release);
		std::atomic_thread_fence(std::memory_order_seq_cst);
	}

private:
	kiwi_ring_ctrl *ctrl_ = nullptr;
	const Elem *elems_ = nullptr;
	uint32_t mask_ = 0;
	uint32_t cons_ = 0; // private copy: user space is the only writer
};

} // namespace kiwi
