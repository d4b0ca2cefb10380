// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// A small lock for the fast paths: no allocation and no system call while
// uncontended, a yield only after spinning for a while.
#pragma once

#include <atomic>
#include <thread>

namespace kiwi {

class SpinLock {
public:
	void lock() noexcept
	{
		unsigned int spins = 0;

		while (busy_.exchange(true, std::memory_order_acquire)) {
			while (busy_.load(std::memory_order_relaxed)) {
				if (++spins % kSpinsBeforeYield == 0)
					std::this_thread::yield();
				else
					__builtin_ia32_pause();
			}
		}
	}

	void unlock() noexcept
	{
		busy_.store(false, std::memory_order_release);
	}

private:
	static constexpr unsigned int kSpinsBeforeYield = 128;
	std::atomic<bool> busy_{false};
};

} // namespace kiwi
