// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Independent wire check of the MPA layer: startup frames from
// kiwi_mpa_frame_build() and FPDUs from kiwi_mpa_tx_plan(), markers and CRC
// on in both directions, are put in a synthetic TCP connection (one FPDU per
// segment), written to a pcap and decoded by Wireshark's MPA dissector
// (tshark), which shares no code with kiwi. It must report every FPDU with
// a good CRC, the ULPDU lengths and marker pointers kiwi intended, and the
// DDP headers behind the markers. Skipped when tshark is not installed.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "mpa_test_util.h"

extern "C" {
#include "proto/mpa_hs.h"
}

using namespace mpatest;

namespace {

void be16(Bytes &b, uint32_t v)
{
	b.push_back(uint8_t(v >> 8));
	b.push_back(uint8_t(v));
}

void be32(Bytes &b, uint32_t v)
{
	be16(b, v >> 16);
	be16(b, v & 0xffff);
}

void le32(Bytes &b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b.push_back(uint8_t(v >> (8 * i)));
}

// A TCP connection 192.0.2.1:50000 <-> 192.0.2.2:38000 as a pcap file.
struct Capture {
	Bytes records;
	uint32_t seq[2] = {0xfffff000u, 77}; // side 0 wraps its sequence
	uint32_t frames = 0;

	void segment(int side, const Bytes &data)
	{
		Bytes pkt(12, 0);
		pkt[5] = uint8_t(1 + side);
		pkt[11] = uint8_t(2 - side);
		be16(pkt, 0x0800);
		Bytes ip = {0x45, 0};
		be16(ip, uint32_t(40 + data.size()));
		be32(ip, 0x40000000u); // DF
		be16(ip, 0x4006);
		be16(ip, 0);
		be32(ip, side ? 0xc0000202u : 0xc0000201u);
		be32(ip, side ? 0xc0000201u : 0xc0000202u);
		be16(ip, side ? 38000 : 50000);
		be16(ip, side ? 50000 : 38000);
		be32(ip, seq[side]);
		be32(ip, seq[!side]);
		be16(ip, 0x5018);
		be16(ip, 0xfaf0);
		be32(ip, 0);
		seq[side] += uint32_t(data.size());
		pkt.insert(pkt.end(), ip.begin(), ip.end());
		pkt.insert(pkt.end(), data.begin(), data.end());
		le32(records, ++frames);
		le32(records, 0);
		le32(records, uint32_t(pkt.size()));
		le32(records, uint32_t(pkt.size()));
		records.insert(records.end(), pkt.begin(), pkt.end());
	}

	bool save(const std::string &path) const
	{
		Bytes h;
		le32(h, 0xa1b2c3d4u);
		h.insert(h.end(), {2, 0, 4, 0});
		le32(h, 0);
		le32(h, 0);
		le32(h, 262144);
		le32(h, 1);
		FILE *f = fopen(path.c_str(), "wb");
		if (!f)
			return false;
		bool ok = fwrite(h.data(), 1, h.size(), f) == h.size() &&
			  fwrite(records.data(), 1, records.size(), f) ==
				  records.size();
		return fclose(f) == 0 && ok;
	}
};

std::vector<std::string> lines(const std::string &cmd)
{
	std::vector<std::string> out;
	FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r");
	char buf[8192];
	if (!p)
		return out;
	while (fgets(buf, sizeof(buf), p)) {
		std::string s(buf);
		out.push_back(s.substr(0, s.find('\n')));
	}
	pclose(p);
	return out;
}

// One tshark row per frame: field -> comma-separated occurrences.
std::vector<std::vector<std::string>>
fields(const std::string &pcap, const std::vector<std::string> &names)
{
	std::string cmd =
		"tshark -o tcp.desegment_tcp_streams:FALSE -r " + pcap +
		" -T fields -E separator='|' -E occurrence=a -E aggregator=,";
	for (const auto &n : names)
		cmd += " -e " + n;
	std::vector<std::vector<std::string>> rows;
	for (const auto &l : lines(cmd)) {
		std::vector<std::string> row;
		std::stringstream ss(l);
		std::string v;
		for (size_t i = 0; i < names.size(); i++) {
			std::getline(ss, v, '|');
			row.push_back(v);
		}
		rows.push_back(row);
	}
	return rows;
}

std::vector<uint32_t> nums(const std::string &csv)
{
	std::vector<uint32_t> v;
	std::stringstream ss(csv);
	std::string x;
	while (std::getline(ss, x, ','))
		if (!x.empty())
			v.push_back(uint32_t(strtoul(x.c_str(), nullptr, 0)));
	return v;
}

// Marker pointers one FPDU must carry, from positions alone: a marker at
// stream offset k*512 points back to the FPDU's length field, or is 0 when it
// leads the FPDU (`off`: the FPDU's first stream offset, `len`: its size).
std::vector<uint32_t> markers_in(uint32_t off, size_t len)
{
	std::vector<uint32_t> v;
	uint32_t hdr = off % 512 ? off : off + 4;
	for (uint32_t i = 0; i < len; i++)
		if ((off + i) % 512 == 0)
			v.push_back(i ? off + i - hdr : 0);
	return v;
}

Bytes send_ulpdu(uint32_t msn, size_t payload, uint32_t seed)
{
	Bytes b = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0};
	be32(b, msn);
	be32(b, 0);
	Bytes p = pattern(payload, seed);
	b.insert(b.end(), p.begin(), p.end());
	return b;
}

class MpaTshark : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (std::system("command -v tshark >/dev/null 2>&1"))
			GTEST_SKIP() << "tshark not installed";
		char tmpl[] = "/tmp/kiwi-mpa-XXXXXX";
		int fd = mkstemp(tmpl);
		ASSERT_GE(fd, 0);
		close(fd);
		path = tmpl;
	}
	void TearDown() override
	{
		if (!path.empty())
			if (!getenv("KIWI_KEEP_PCAP"))
				unlink(path.c_str());
	}
	std::string path;
};

// MPA-011/014/018/019/021/022/031/032/033/049/051: what Wireshark sees.
TEST_F(MpaTshark, WiresharkAgreesWithKiwiFraming)
{
	kiwi_mpa_policy pol{};
	pol.rev = 1;
	pol.markers = true;
	pol.ird = pol.ord = 4;
	pol.ird_max = 8;
	kiwi_mpa_frame req, rep;
	kiwi_mpa_params rp;
	const uint8_t pd[5] = {'h', 'e', 'l', 'l', 'o'};
	ASSERT_EQ(0, kiwi_mpa_make_request(&pol, pd, 5, &req));
	ASSERT_EQ(KIWI_MPA_ST_OK, kiwi_mpa_respond(&pol, &req, &rep, &rp));
	ASSERT_TRUE(rp.tx_markers && rp.rx_markers && rp.crc);
	Bytes fb(KIWI_MPA_FRAME_MAX);
	size_t n;
	Capture cap;
	ASSERT_EQ(0, kiwi_mpa_frame_build(&req, fb.data(), fb.size(), &n));
	cap.segment(0, Bytes(fb.begin(), fb.begin() + long(n)));
	ASSERT_EQ(0, kiwi_mpa_frame_build(&rep, fb.data(), fb.size(), &n));
	cap.segment(1, Bytes(fb.begin(), fb.begin() + long(n)));

	// Initiator sends first (MPA-069), then both directions alternate.
	LibTx tx[2] = {LibTx(mpa_cfg(true, true)), LibTx(mpa_cfg(true, true))};
	struct Want {
		uint32_t ulpdu, msn;
		std::vector<uint32_t> ptrs;
	};
	std::vector<Want> want;
	const size_t sizes[] = {24, 464, 24, 1000, 3, 2000, 700, 18, 1500, 5};
	uint32_t msn[2] = {1, 1};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int side = int(i % 2);
		Bytes u = send_ulpdu(msn[side], sizes[i], uint32_t(i));
		uint32_t off = tx[side].tx.off;
		Bytes w = tx[side].fpdu({u});
		want.push_back({uint32_t(u.size()), msn[side]++,
				markers_in(off, w.size())});
		cap.segment(side, w);
	}
	ASSERT_TRUE(cap.save(path));

	auto rows =
		fields(path, {"frame.number", "iwarp_mpa.key.req",
			      "iwarp_mpa.key.rep", "iwarp_mpa.marker_flag",
			      "iwarp_mpa.crc_flag", "iwarp_mpa.rev",
			      "iwarp_mpa.pdlength", "iwarp_mpa.ulpdulength",
			      "iwarp_mpa.crc_check", "iwarp_mpa.marker_fpduptr",
			      "iwarp_ddp.msn", "iwarp_ddp.mo"});
	ASSERT_EQ(2 + want.size(), rows.size());
	EXPECT_FALSE(rows[0][1].empty()); // Request key recognised
	EXPECT_FALSE(rows[1][2].empty()); // Reply key recognised
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ("1", rows[i][3]) << "M flag, frame " << i;
		EXPECT_EQ("1", rows[i][4]) << "C flag, frame " << i;
		EXPECT_EQ("1", rows[i][5]);
	}
	EXPECT_EQ("5", rows[0][6]);
	for (size_t i = 0; i < want.size(); i++) {
		const auto &r = rows[i + 2];
		SCOPED_TRACE("FPDU " + std::to_string(i) + " frame " + r[0]);
		EXPECT_EQ(std::to_string(want[i].ulpdu), r[7]);
		EXPECT_FALSE(r[8].empty());
		EXPECT_EQ(want[i].ptrs, nums(r[9]));
		EXPECT_EQ(std::to_string(want[i].msn), r[10]);
		EXPECT_EQ("0", r[11]);
	}
	// Wireshark recomputed every FPDU's CRC and found it good.
	size_t good = 0, bad = 0;
	for (const auto &l :
	     lines("tshark -o tcp.desegment_tcp_streams:FALSE -V -r " + path)) {
		good += l.find("(Good CRC32)") != std::string::npos;
		bad += l.find("Bad CRC") != std::string::npos;
	}
	EXPECT_EQ(want.size(), good);
	EXPECT_EQ(0u, bad);
}

} // namespace
