// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Independent wire check: DDP segments, RDMAP messages and Terminates built
// by kernel/proto are framed into MPA FPDUs (CRC on, no markers) inside a
// synthetic TCP stream, written to a pcap and decoded by Wireshark's iWARP
// dissectors (tshark). Every field tshark reports must equal the value the
// message was built from. Skipped when tshark is not installed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

const char *const fields[] = {
	"frame.number",
	"iwarp_ddp.tagged_flag",
	"iwarp_ddp.last_flag",
	"iwarp_ddp.dv",
	"iwarp_ddp.stag",
	"iwarp_ddp.tagged_offset",
	"iwarp_ddp.qn",
	"iwarp_ddp.msn",
	"iwarp_ddp.mo",
	"iwarp_rdma.version",
	"iwarp_rdma.opcode",
	"iwarp_rdma.inval_stag",
	"iwarp_rdma.sinkstag",
	"iwarp_rdma.sinkto",
	"iwarp_rdma.rdmardsz",
	"iwarp_rdma.srcstag",
	"iwarp_rdma.srcto",
	"iwarp_rdma.term_layer",
	"iwarp_rdma.term_etype_rdma",
	"iwarp_rdma.term_etype_ddp",
	"iwarp_rdma.term_etype_llp",
	"iwarp_rdma.term_errcode_rdma",
	"iwarp_rdma.term_errcode_ddp_tagged",
	"iwarp_rdma.term_errcode_ddp_untagged",
	"iwarp_rdma.term_errcode_llp",
	"iwarp_rdma.term_hdrct_m",
	"iwarp_rdma.hdrct_d",
	"iwarp_rdma.hdrct_r",
	"iwarp_rdma.term_ddp_seg_len",
};

using Row = std::map<std::string, std::string>;

void put16(Bytes &b, uint16_t v)
{
	b.push_back(uint8_t(v >> 8));
	b.push_back(uint8_t(v));
}

void put32(Bytes &b, uint32_t v)
{
	put16(b, uint16_t(v >> 16));
	put16(b, uint16_t(v));
}

void le32(Bytes &b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b.push_back(uint8_t(v >> (8 * i)));
}

// One FPDU: length, ULPDU, pad, CRC32c (least significant octet first).
Bytes fpdu(const Bytes &ulpdu)
{
	Bytes b;

	put16(b, uint16_t(ulpdu.size()));
	b.insert(b.end(), ulpdu.begin(), ulpdu.end());
	while (b.size() % 4)
		b.push_back(0);
	le32(b, ~kiwi_crc32c(~0U, b.data(), b.size()));
	return b;
}

class Pcap {
public:
	// Direction 0: initiator 10.0.0.1:40000 -> responder 10.0.0.2:4791.
	void add(int dir, const Bytes &payload)
	{
		Bytes p(12, 0x02);
		Bytes ip, tcp;

		p.push_back(0x08);
		p.push_back(0x00);
		ip = {0x45, 0};
		put16(ip, uint16_t(40 + payload.size()));
		put32(ip, 0x00010000);
		put16(ip, 0x4006);
		put16(ip, 0);
		put32(ip, dir ? 0x0a000002 : 0x0a000001);
		put32(ip, dir ? 0x0a000001 : 0x0a000002);
		put16(tcp, dir ? 4791 : 40000);
		put16(tcp, dir ? 40000 : 4791);
		put32(tcp, seq[dir]);
		put32(tcp, seq[!dir]);
		put16(tcp, 0x5018);
		put16(tcp, 0xffff);
		put32(tcp, 0);
		seq[dir] += uint32_t(payload.size());
		p.insert(p.end(), ip.begin(), ip.end());
		p.insert(p.end(), tcp.begin(), tcp.end());
		p.insert(p.end(), payload.begin(), payload.end());
		le32(rec, uint32_t(n++));
		le32(rec, 0);
		le32(rec, uint32_t(p.size()));
		le32(rec, uint32_t(p.size()));
		rec.insert(rec.end(), p.begin(), p.end());
	}

	bool write(const std::string &path) const
	{
		Bytes h;
		FILE *f = fopen(path.c_str(), "wb");

		if (!f)
			return false;
		le32(h, 0xa1b2c3d4);
		h.insert(h.end(), {2, 0, 4, 0});
		le32(h, 0);
		le32(h, 0);
		le32(h, 65535);
		le32(h, 1); // Ethernet
		bool ok = fwrite(h.data(), 1, h.size(), f) == h.size() &&
			  fwrite(rec.data(), 1, rec.size(), f) == rec.size();
		return fclose(f) == 0 && ok;
	}

private:
	uint32_t seq[2] = {1000, 5000};
	int n = 0;
	Bytes rec;
};

std::vector<std::string> run(const std::string &cmd)
{
	std::vector<std::string> out;
	char line[4096];
	FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r");

	if (!p)
		return out;
	while (fgets(line, sizeof(line), p)) {
		std::string s(line);
		out.push_back(s.substr(0, s.find('\n')));
	}
	pclose(p);
	return out;
}

std::vector<Row> tshark(const std::string &pcap)
{
	std::string cmd = "tshark -r " + pcap + " -T fields -E separator='|'";
	std::vector<Row> rows;

	for (const char *f : fields)
		cmd += std::string(" -e ") + f;
	for (const std::string &line : run(cmd)) {
		std::stringstream ss(line);
		std::string v;
		Row r;
		for (const char *f : fields) {
			std::getline(ss, v, '|');
			r[f] = v;
		}
		rows.push_back(r);
	}
	return rows;
}

// Wireshark verifies each FPDU's CRC (C = 1) and says so in the tree.
size_t good_crcs(const std::string &pcap)
{
	size_t n = 0;

	for (const std::string &line : run("tshark -V -r " + pcap))
		if (line.find("(Good CRC32)") != std::string::npos)
			n++;
	return n;
}

uint64_t num(const Row &r, const char *f)
{
	return strtoull(r.at(f).c_str(), nullptr, 0);
}

Bytes mpa_frame(const char *key)
{
	Bytes b(key, key + 16);

	b.insert(b.end(), {0x40, 0x01, 0x00, 0x00}); // C = 1, Rev 1, no PD
	return b;
}

Bytes untagged_msg(uint8_t op, uint32_t stag, uint32_t msn,
		   const Bytes &payload)
{
	kiwi_ddp_seg seg{};
	kiwi_ddp_hdr h;

	seg.len = uint32_t(payload.size());
	seg.last = true;
	EXPECT_EQ(0, kiwi_rdmap_seg_hdr(&h, op, stag, msn, &seg));
	Bytes b = encode(h);
	b.insert(b.end(), payload.begin(), payload.end());
	return b;
}

class DdpTshark : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (std::system("command -v tshark >/dev/null 2>&1"))
			GTEST_SKIP() << "tshark not installed";
		char tmpl[] = "/tmp/kiwi-ddp-XXXXXX";
		int fd = mkstemp(tmpl);
		ASSERT_GE(fd, 0);
		close(fd);
		path = tmpl;
	}

	void TearDown() override
	{
		if (!path.empty())
			unlink(path.c_str());
	}

	std::string path;
};

// DDP-014/021/029/044, RDMAP-01/02/08/09/19: every message type, decoded by
// an implementation that shares no code with kiwi.
TEST_F(DdpTshark, WiresharkDecodesWhatKiwiBuilds)
{
	Pcap pc;
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;
	kiwi_ddp_hdr h;
	Bytes data(3000, 0x5a);

	pc.add(0, mpa_frame("MPA ID Req Frame"));
	pc.add(1, mpa_frame("MPA ID Rep Frame"));
	pc.add(0, fpdu(untagged_msg(KIWI_RDMAP_SEND, 0, 1,
				    Bytes(24, 0)))); // frame 3
	ASSERT_EQ(0, kiwi_ddp_seg_init(&it, true, 3000, 16384, 1500));
	while (kiwi_ddp_seg_next(&it, &s)) { // frames 4-6
		ASSERT_EQ(0, kiwi_rdmap_seg_hdr(&h, KIWI_RDMAP_WRITE, 0xabcd01,
						0, &s));
		Bytes u = encode(h);
		u.insert(u.end(), data.begin() + s.off,
			 data.begin() + s.off + s.len);
		pc.add(0, fpdu(u));
	}
	pc.add(0, fpdu(untagged_msg(KIWI_RDMAP_SEND_SE_INV, 0x1234567, 2,
				    Bytes(8, 1))));
	kiwi_rdmap_rreq rr = {0x11, 0x4000, 0x800, 0x100, 0x7fff00001000ull};
	Bytes rh(28);
	kiwi_rdmap_rreq_encode(&rr, rh.data());
	Bytes rreq = untagged_msg(KIWI_RDMAP_READ_REQ, 0, 1, rh);
	pc.add(0, fpdu(rreq)); // frame 8

	struct {
		kiwi_term_err err;
		Bytes seg;
	} terms[] = {
		{KIWI_TERM_ERR_DDP_U_MSN_NOBUF,
		 untagged_msg(KIWI_RDMAP_SEND, 0, 3, Bytes(40, 0))},
		{KIWI_TERM_ERR_DDP_T_BOUNDS,
		 encode(tagged(KIWI_RDMAP_WRITE, 9, 0x10))},
		{KIWI_TERM_ERR_RDMAP_ACCESS, rreq},
		{KIWI_TERM_ERR_RDMAP_OPCODE, {}},
		{KIWI_TERM_ERR_LLP_CRC, {}},
		{KIWI_TERM_ERR_LLP_NO_RTR, {}},
	};
	for (auto &t : terms) { // frames 9-14
		kiwi_term term;
		uint8_t msg[KIWI_TERM_MSG_MAX];
		ASSERT_EQ(0, kiwi_term_from_err(&term, t.err,
						t.seg.empty() ? nullptr
							      : t.seg.data(),
						uint32_t(t.seg.size())));
		int n = kiwi_term_build_msg(&term, 1, msg, sizeof(msg));
		ASSERT_GT(n, 0);
		pc.add(1, fpdu(Bytes(msg, msg + n)));
	}
	ASSERT_TRUE(pc.write(path));

	std::vector<Row> rows = tshark(path);
	ASSERT_EQ(14u, rows.size());
	EXPECT_EQ(12u, good_crcs(path));
	for (size_t i = 2; i < rows.size(); i++) {
		EXPECT_EQ(1u, num(rows[i], "iwarp_ddp.dv")) << i;
		EXPECT_EQ(1u, num(rows[i], "iwarp_rdma.version")) << i;
	}
	const Row &send = rows[2];
	EXPECT_EQ(0u, num(send, "iwarp_ddp.tagged_flag"));
	EXPECT_EQ(1u, num(send, "iwarp_ddp.last_flag"));
	EXPECT_EQ(3u, num(send, "iwarp_rdma.opcode"));
	EXPECT_EQ(0u, num(send, "iwarp_ddp.qn"));
	EXPECT_EQ(1u, num(send, "iwarp_ddp.msn"));
	EXPECT_EQ(0u, num(send, "iwarp_ddp.mo"));
	const uint64_t to[] = {16384, 17870, 19356};
	for (int k = 0; k < 3; k++) {
		const Row &w = rows[3 + k];
		EXPECT_EQ(1u, num(w, "iwarp_ddp.tagged_flag")) << k;
		EXPECT_EQ(k == 2 ? 1u : 0u, num(w, "iwarp_ddp.last_flag")) << k;
		EXPECT_EQ(0xabcd01u, num(w, "iwarp_ddp.stag")) << k;
		EXPECT_EQ(to[k], num(w, "iwarp_ddp.tagged_offset")) << k;
		EXPECT_EQ(0u, num(w, "iwarp_rdma.opcode")) << k;
	}
	const Row &inv = rows[6];
	EXPECT_EQ(6u, num(inv, "iwarp_rdma.opcode"));
	EXPECT_EQ(0x1234567u, num(inv, "iwarp_rdma.inval_stag"));
	EXPECT_EQ(2u, num(inv, "iwarp_ddp.msn"));
	const Row &rq = rows[7];
	EXPECT_EQ(1u, num(rq, "iwarp_rdma.opcode"));
	EXPECT_EQ(1u, num(rq, "iwarp_ddp.qn"));
	EXPECT_EQ(rr.sink_stag, num(rq, "iwarp_rdma.sinkstag"));
	EXPECT_EQ(rr.sink_to, num(rq, "iwarp_rdma.sinkto"));
	EXPECT_EQ(rr.size, num(rq, "iwarp_rdma.rdmardsz"));
	EXPECT_EQ(rr.src_stag, num(rq, "iwarp_rdma.srcstag"));
	EXPECT_EQ(rr.src_to, num(rq, "iwarp_rdma.srcto"));

	const struct {
		uint8_t layer;
		const char *etype, *ecode;
		uint64_t et, ec;
		bool d, r;
		uint64_t seg_len;
	} want[] = {
		{1, "iwarp_rdma.term_etype_ddp",
		 "iwarp_rdma.term_errcode_ddp_untagged", 2, 2, true, false, 58},
		{1, "iwarp_rdma.term_etype_ddp",
		 "iwarp_rdma.term_errcode_ddp_tagged", 1, 1, true, false, 14},
		{0, "iwarp_rdma.term_etype_rdma",
		 "iwarp_rdma.term_errcode_rdma", 1, 2, true, true, 46},
		{0, "iwarp_rdma.term_etype_rdma",
		 "iwarp_rdma.term_errcode_rdma", 2, 6, false, false, 0},
		{2, "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_errcode_llp",
		 0, 2, false, false, 0},
		{2, "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_errcode_llp",
		 0, 7, false, false, 0},
	};
	for (int k = 0; k < 6; k++) {
		const Row &t = rows[8 + k];
		EXPECT_EQ(7u, num(t, "iwarp_rdma.opcode")) << k;
		EXPECT_EQ(2u, num(t, "iwarp_ddp.qn")) << k;
		EXPECT_EQ(want[k].layer, num(t, "iwarp_rdma.term_layer")) << k;
		EXPECT_EQ(want[k].et, num(t, want[k].etype)) << k;
		EXPECT_EQ(want[k].ec, num(t, want[k].ecode)) << k;
		EXPECT_EQ(want[k].d, num(t, "iwarp_rdma.term_hdrct_m") == 1)
			<< k;
		EXPECT_EQ(want[k].d, num(t, "iwarp_rdma.hdrct_d") == 1) << k;
		EXPECT_EQ(want[k].r, num(t, "iwarp_rdma.hdrct_r") == 1) << k;
		if (want[k].d) {
			EXPECT_EQ(want[k].seg_len,
				  strtoull(t.at("iwarp_rdma.term_ddp_seg_len")
						   .c_str(),
					   nullptr, 16))
				<< k;
		}
	}
}

} // namespace
