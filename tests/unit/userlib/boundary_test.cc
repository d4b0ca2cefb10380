// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The C ABI boundary: exceptions become errno, results pass through.
#include "boundary.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace kiwi {
namespace {

int g_value;

int *ptr_ok(int v)
{
	g_value = v;
	return &g_value;
}

int *ptr_oom(int /*v*/)
{
	throw std::bad_alloc();
}

int int_throws(int /*v*/)
{
	throw std::runtime_error("boom");
}

int int_ok(int v)
{
	return v + 1;
}

int poll_like(int v) noexcept
{
	return -v;
}

int g_calls;

void void_throws()
{
	g_calls++;
	throw 42;
}

TEST(Boundary, EntriesAreNoexceptWithTheSameSignature)
{
	static_assert(std::is_same_v<decltype(entry<ptr_ok>),
				     int *(*const)(int) noexcept>);
	static_assert(noexcept(entry<int_throws>(1)));
	static_assert(noexcept(entry<void_throws>()));
}

TEST(Boundary, ResultsPassThrough)
{
	EXPECT_EQ(entry<ptr_ok>(5), &g_value);
	EXPECT_EQ(g_value, 5);
	EXPECT_EQ(entry<int_ok>(5), 6);
	// A noexcept op (poll_cq: negative errno) is called directly.
	EXPECT_EQ(entry<poll_like>(22), -22);
}

TEST(Boundary, BadAllocIsEnomem)
{
	errno = 0;
	EXPECT_EQ(entry<ptr_oom>(1), nullptr);
	EXPECT_EQ(errno, ENOMEM);
}

TEST(Boundary, OtherExceptionsAreEio)
{
	errno = 0;
	EXPECT_EQ(entry<int_throws>(1), EIO);
	EXPECT_EQ(errno, EIO);
	errno = 0;
	entry<void_throws>();
	EXPECT_EQ(g_calls, 1);
	EXPECT_EQ(errno, EIO);
}

} // namespace
} // namespace kiwi
