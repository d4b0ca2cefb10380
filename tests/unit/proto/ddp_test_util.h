// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Helpers shared by the DDP/RDMAP/Terminate unit tests.
#ifndef KIWI_TESTS_DDP_TEST_UTIL_H
#define KIWI_TESTS_DDP_TEST_UTIL_H

#include <cstdint>
#include <vector>

extern "C" {
#include "proto/ddp.h"
#include "proto/rdmap.h"
#include "proto/term.h"
}

namespace ddptest {

using Bytes = std::vector<uint8_t>;

inline Bytes encode(const kiwi_ddp_hdr &h)
{
	Bytes b(KIWI_DDP_HDR_MAX);
	b.resize(kiwi_ddp_hdr_encode(&h, b.data()));
	return b;
}

inline kiwi_ddp_hdr untagged(uint8_t op, uint32_t qn, uint32_t msn, uint32_t mo,
			     bool last = true)
{
	kiwi_ddp_hdr h{};
	h.last = last;
	h.dv = KIWI_DDP_VERSION;
	h.ulp_ctrl = kiwi_rdmap_ctrl(op);
	h.qn = qn;
	h.msn = msn;
	h.mo = mo;
	return h;
}

inline kiwi_ddp_hdr tagged(uint8_t op, uint32_t stag, uint64_t to,
			   bool last = true)
{
	kiwi_ddp_hdr h{};
	h.tagged = true;
	h.last = last;
	h.dv = KIWI_DDP_VERSION;
	h.ulp_ctrl = kiwi_rdmap_ctrl(op);
	h.stag = stag;
	h.to = to;
	return h;
}

} // namespace ddptest

#endif
