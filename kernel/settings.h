/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: per-device settings (settings.c). Each kiwi device carries its own
 * copy, readable and writable by root in /sys/class/infiniband/DEV/kiwi/;
 * the module parameters of the same names are the defaults a new device
 * starts from. Documentation/settings.md and kiwi(7) list them.
 */
#ifndef KIWI_SETTINGS_H
#define KIWI_SETTINGS_H

#include <linux/compiler.h>
#include <linux/types.h>

/**
 * enum kiwi_setting_id - the settings of a kiwi device
 * @KIWI_SET_MPA_TIMEOUT: seconds for TCP connect plus the MPA startup
 *	frames, and for the peer's FIN after ours (1-600)
 * @KIWI_SET_DRAIN_TIMEOUT: seconds a graceful close (SQD, or the Terminate
 *	after a local error) may take to send what is queued before the
 *	connection is reset (1-60)
 * @KIWI_SET_MPA_REV: highest MPA revision, 1 or 2
 * @KIWI_SET_MPA_CRC_OFF: ask the peer for no MPA CRC (C=0 in our frame)
 * @KIWI_SET_MPA_MARKERS: ask the peer for MPA markers (M=1 in our frame)
 * @KIWI_SET_MPA_P2P: an initiator asks for RFC 6581 peer-to-peer mode
 * @KIWI_SET_MPA_RTR: KIWI_MPA_RTR_* set an initiator offers and a
 *	responder accepts (RFC 6581 RTR message types)
 * @KIWI_SET_MPA_RESPONDER_WAITS: a responder outside peer-to-peer mode
 *	sends no FPDU before the initiator's first (RFC 5044 7.1.2)
 * @KIWI_SET_MPA_RDMAC: answer an RDMAC (MPA revision 0) peer as RFC 5044
 *	Appendix C.2.1/C.2.2 describe: a responder sends a revision 1 Reply,
 *	then both close gracefully (off: the connection is reset at once)
 * @KIWI_SET_LLP: the lower layer new connections use, enum kiwi_llp_kind
 *	(MPA over TCP, or DDP over SCTP: Documentation/sctp.md)
 * @KIWI_SET_ULPF00: MPA/TCP connections frame with the ULP framing
 *	draft-00 profile instead of MPA FPDUs, and refuse peers that do not
 *	(Documentation/ulpf.md)
 * @KIWI_SET_NUM: number of settings
 */
enum kiwi_setting_id {
	KIWI_SET_MPA_TIMEOUT,
	KIWI_SET_DRAIN_TIMEOUT,
	KIWI_SET_MPA_REV,
	KIWI_SET_MPA_CRC_OFF,
	KIWI_SET_MPA_MARKERS,
	KIWI_SET_MPA_P2P,
	KIWI_SET_MPA_RTR,
	KIWI_SET_MPA_RESPONDER_WAITS,
	KIWI_SET_MPA_RDMAC,
	KIWI_SET_LLP,
	KIWI_SET_ULPF00,
	KIWI_SET_NUM,
};

/**
 * enum kiwi_llp_kind - values of the llp setting
 * @KIWI_LLP_TCP: RDMAP/DDP over MPA over TCP (RFC 5044), the default
 * @KIWI_LLP_SCTP: RDMAP/DDP over SCTP (RFC 5043 draft)
 */
enum kiwi_llp_kind {
	KIWI_LLP_TCP,
	KIWI_LLP_SCTP,
};

/**
 * struct kiwi_settings - one device's settings
 * @val: value of each enum kiwi_setting_id, always valid. A sysfs write
 *	stores one value whole (WRITE_ONCE) after checking it; readers take
 *	it with READ_ONCE. A connection takes the values it starts with.
 */
struct kiwi_settings {
	u32 val[KIWI_SET_NUM];
};

struct attribute_group;

/* The "kiwi" sysfs group of every kiwi ib_device. */
extern const struct attribute_group kiwi_settings_group;

void kiwi_settings_init(struct kiwi_settings *s);

static inline u32 kiwi_setting(const struct kiwi_settings *s,
			       enum kiwi_setting_id id)
{
	return READ_ONCE(s->val[id]);
}

#endif /* KIWI_SETTINGS_H */
