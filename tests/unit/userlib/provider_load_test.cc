// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Loads the built libkiwi through libibverbs against the fake sysfs tree
// and /dev/infiniband that run_load_test.sh sets up (see there): checks
// that libkiwi claims the devices carrying kiwi/abi_version of its ABI,
// whatever their name, and nothing else; reports them as iWARP; and that
// alloc_context refuses a "kernel" (/dev/null) that sends no kiwi response.
#include <infiniband/verbs.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

class ProviderLoad : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (!std::getenv("KIWI_FAKE_SYSFS"))
			GTEST_SKIP() << "run through run_load_test.sh";
		list_ = ibv_get_device_list(&num_);
		ASSERT_NE(list_, nullptr) << std::strerror(errno);
	}

	void TearDown() override
	{
		if (list_)
			ibv_free_device_list(list_);
	}

	ibv_device *find(const std::string &name)
	{
		for (int i = 0; i < num_; i++)
			if (name == ibv_get_device_name(list_[i]))
				return list_[i];
		return nullptr;
	}

	ibv_device **list_ = nullptr;
	int num_ = 0;
};

TEST_F(ProviderLoad, ClaimsKiwiDevicesAsIwarp)
{
	ibv_device *dev = find("kiwi0");

	ASSERT_NE(dev, nullptr) << "libkiwi did not claim kiwi0";
	EXPECT_EQ(dev->node_type, IBV_NODE_RNIC);
	EXPECT_EQ(dev->transport_type, IBV_TRANSPORT_IWARP);
	EXPECT_STREQ(dev->dev_name, "uverbs0");
}

TEST_F(ProviderLoad, ClaimsAKiwiDeviceOfAnyName)
{
	ibv_device *dev = find("eth0_kiwi");

	ASSERT_NE(dev, nullptr) << "libkiwi did not claim eth0_kiwi";
	EXPECT_EQ(dev->transport_type, IBV_TRANSPORT_IWARP);
}

TEST_F(ProviderLoad, LeavesOtherDevicesAlone)
{
	EXPECT_EQ(find("other0"), nullptr);
	EXPECT_EQ(find("kiwi_fake"), nullptr)
		<< "a kiwi-like name without kiwi/abi_version was claimed";
}

TEST_F(ProviderLoad, RefusesAnotherKiwiAbiFile)
{
	EXPECT_EQ(find("kiwi2"), nullptr)
		<< "kiwi2 has kiwi/abi_version 3, an older kiwi.ko";
}

TEST_F(ProviderLoad, RefusesAnotherAbiVersion)
{
	EXPECT_EQ(find("kiwi1"), nullptr) << "kiwi1 has uverbs ABI 2";
}

TEST_F(ProviderLoad, RefusesAKernelWithoutKiwiResponse)
{
	ibv_device *dev = find("kiwi0");
	ASSERT_NE(dev, nullptr);

	errno = 0;
	ibv_context *ctx = ibv_open_device(dev);
	const int err = errno;
	if (ctx)
		ibv_close_device(ctx);
	EXPECT_EQ(ctx, nullptr);
	EXPECT_EQ(err, EPROTO);
}

} // namespace
