// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The C ABI boundary: entry<&f> is a noexcept function with f's signature
// that libibverbs may call. If f can throw, an exception becomes the op's
// error report instead of unwinding into C: errno plus NULL for pointer
// results, errno plus the positive errno value for int results (the
// ibverbs convention of the ops that can throw), nothing for void.
// std::bad_alloc reports ENOMEM, anything else EIO.
#pragma once

#include <cerrno>
#include <new>
#include <type_traits>

namespace kiwi {

// The value an op of return type R reports for errno value err.
template <typename R> R failure(int err) noexcept
{
	static_assert(std::is_pointer_v<R> || std::is_same_v<R, int> ||
			      std::is_void_v<R>,
		      "no error convention for this return type");
	errno = err;
	if constexpr (std::is_pointer_v<R>)
		return nullptr;
	else if constexpr (std::is_same_v<R, int>)
		return err;
}

template <auto Fn> struct Entry;

template <typename R, typename... Args, R (*Fn)(Args...)> struct Entry<Fn> {
	static R call(Args... args) noexcept
	{
		if constexpr (noexcept(Fn(args...))) {
			return Fn(args...);
		} else {
			try {
				return Fn(args...);
			} catch (const std::bad_alloc &) {
				return failure<R>(ENOMEM);
			} catch (...) {
				return failure<R>(EIO);
			}
		}
	}
};

template <auto Fn> inline constexpr auto entry = &Entry<Fn>::call;

} // namespace kiwi
