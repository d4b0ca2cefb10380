// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: per-device settings and their defaults.
 *
 * Every setting exists twice under one name: as a module parameter
 * (/sys/module/kiwi/parameters/NAME, modprobe NAME=VALUE), the default a
 * new device starts from, and as an attribute of each kiwi ib_device
 * (/sys/class/infiniband/DEV/kiwi/NAME), which that device's new
 * connections use. Both go through one parser: a value outside the
 * setting's domain is refused with -EINVAL and a log line saying what was
 * expected, and the old value stays.
 *
 * Why sysfs attributes of the ib_device: the RDMA netlink interface has no
 * room for driver settings (rdma(8) cannot be extended from outside the
 * tree), while a device attribute lives and dies with its device, follows
 * a rename, is visible to `grep -r . /sys/class/infiniband/DEV/kiwi` and
 * can be set by a udev rule when the device appears. The same group
 * carries abi_version, by which libkiwi recognises a kiwi device whatever
 * its name.
 */
#include <linux/ctype.h>
#include <linux/moduleparam.h>
#include <linux/ratelimit.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "kiwi.h"
#include "conn.h"

#define KIWI_TIMEOUT_MAX	600
#define KIWI_DRAIN_MAX		60

enum kiwi_setting_kind {
	KIWI_KIND_UINT,		/* an integer in [min, max] */
	KIWI_KIND_BOOL,		/* Y/N (kstrtobool: also 1/0, on/off) */
	KIWI_KIND_RTR,		/* a non-empty list of RTR message types */
	KIWI_KIND_LLP,		/* a lower layer's name: tcp or sctp */
	KIWI_KIND_COUNT
};

/**
 * struct kiwi_setting_desc - the domain of one setting
 * @name: attribute and module parameter name
 * @kind: enum kiwi_setting_kind
 * @min: KIWI_KIND_UINT: smallest value
 * @max: KIWI_KIND_UINT: largest value
 */
struct kiwi_setting_desc {
	const char *name;
	enum kiwi_setting_kind kind;
	u32 min;
	u32 max;
};

static const struct kiwi_setting_desc kiwi_setting_descs[KIWI_SET_NUM] = {
	[KIWI_SET_MPA_TIMEOUT] = { "mpa_timeout", KIWI_KIND_UINT, 1,
				   KIWI_TIMEOUT_MAX },
	[KIWI_SET_DRAIN_TIMEOUT] = { "drain_timeout", KIWI_KIND_UINT, 1,
				     KIWI_DRAIN_MAX },
	[KIWI_SET_MPA_REV] = { "mpa_rev", KIWI_KIND_UINT, KIWI_MPA_REV_1,
			       KIWI_MPA_REV_2 },
	[KIWI_SET_MPA_CRC_OFF] = { "mpa_crc_off", KIWI_KIND_BOOL },
	[KIWI_SET_MPA_MARKERS] = { "mpa_markers", KIWI_KIND_BOOL },
	[KIWI_SET_MPA_P2P] = { "mpa_p2p", KIWI_KIND_BOOL },
	[KIWI_SET_MPA_RTR] = { "mpa_rtr", KIWI_KIND_RTR },
	[KIWI_SET_MPA_RESPONDER_WAITS] = { "mpa_responder_waits",
					   KIWI_KIND_BOOL },
	[KIWI_SET_MPA_RDMAC] = { "mpa_rdmac", KIWI_KIND_BOOL },
	[KIWI_SET_LLP] = { "llp", KIWI_KIND_LLP },
	[KIWI_SET_ULPF00] = { "ulpf00", KIWI_KIND_BOOL },
};

/* Names of enum kiwi_llp_kind, indexed by value. */
static const char *const kiwi_llp_names[] = {
	[KIWI_LLP_TCP] = "tcp",
	[KIWI_LLP_SCTP] = "sctp",
};

/* RTR message types by name, in the order they are printed. */
static const struct {
	const char *name;
	u8 bit;
} kiwi_rtr_names[] = {
	{ "send", KIWI_MPA_RTR_SEND },
	{ "write", KIWI_MPA_RTR_WRITE },
	{ "read", KIWI_MPA_RTR_READ },
};

/* The module parameters: defaults of new devices (kiwi_settings_init). */
static u32 kiwi_defaults[KIWI_SET_NUM] = {
	[KIWI_SET_MPA_TIMEOUT] = 10,
	[KIWI_SET_DRAIN_TIMEOUT] = 3,
	[KIWI_SET_MPA_REV] = KIWI_MPA_REV_2,
	[KIWI_SET_MPA_CRC_OFF] = false,
	[KIWI_SET_MPA_MARKERS] = false,
	[KIWI_SET_MPA_P2P] = true,
	[KIWI_SET_MPA_RTR] = KIWI_MPA_RTR_ALL,
	[KIWI_SET_MPA_RESPONDER_WAITS] = true,
	[KIWI_SET_MPA_RDMAC] = false,
	[KIWI_SET_LLP] = KIWI_LLP_TCP,
	[KIWI_SET_ULPF00] = false,
};

/* One RTR type name of @len octets at @s; 0 if unknown. */
static u8 kiwi_rtr_bit(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kiwi_rtr_names); i++)
		if (strlen(kiwi_rtr_names[i].name) == len &&
		    !strncmp(s, kiwi_rtr_names[i].name, len))
			return kiwi_rtr_names[i].bit;
	return 0;
}

/* "write,read": a comma-separated, non-empty list of RTR types. */
static int kiwi_parse_rtr(const char *buf, u32 *out)
{
	size_t len = strcspn(buf, "\n");
	const char *end = buf + len;
	u32 set = 0;
	size_t n;
	u8 bit;

	if (buf[len] && strcmp(buf + len, "\n"))
		return -EINVAL;
	while (buf < end) {
		n = strcspn(buf, ",\n");
		bit = kiwi_rtr_bit(buf, n);
		if (!bit)
			return -EINVAL;
		set |= bit;
		buf += n;
		if (buf < end && ++buf == end)
			return -EINVAL;	/* a trailing comma */
	}
	if (!set)
		return -EINVAL;
	*out = set;
	return 0;
}

/* "tcp" or "sctp", with an optional newline. */
static int kiwi_parse_llp(const char *buf, u32 *out)
{
	size_t len = strcspn(buf, "\n");
	u32 i;

	if (buf[len] && strcmp(buf + len, "\n"))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(kiwi_llp_names); i++) {
		if (strlen(kiwi_llp_names[i]) == len &&
		    !strncmp(buf, kiwi_llp_names[i], len)) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int kiwi_setting_parse(const struct kiwi_setting_desc *d,
			      const char *buf, u32 *out)
{
	unsigned int v;
	bool b;

	switch (d->kind) {
	case KIWI_KIND_UINT:
		if (kstrtouint(buf, 10, &v) || v < d->min || v > d->max)
			return -EINVAL;
		*out = v;
		return 0;
	case KIWI_KIND_BOOL:
		if (kstrtobool(buf, &b))
			return -EINVAL;
		*out = b;
		return 0;
	case KIWI_KIND_LLP:
		return kiwi_parse_llp(buf, out);
	default:
		return kiwi_parse_rtr(buf, out);
	}
}

/* Print @v as a sysfs or module parameter value, with a newline. */
static int kiwi_setting_format(const struct kiwi_setting_desc *d, u32 v,
			       char *buf)
{
	int len = 0;
	size_t i;

	switch (d->kind) {
	case KIWI_KIND_UINT:
		return sysfs_emit(buf, "%u\n", v);
	case KIWI_KIND_BOOL:
		return sysfs_emit(buf, "%c\n", v ? 'Y' : 'N');
	case KIWI_KIND_LLP:
		return sysfs_emit(buf, "%s\n", kiwi_llp_names[v]);
	default:
		for (i = 0; i < ARRAY_SIZE(kiwi_rtr_names); i++)
			if (v & kiwi_rtr_names[i].bit)
				len += sysfs_emit_at(buf, len, "%s%s",
						     len ? "," : "",
						     kiwi_rtr_names[i].name);
		return len + sysfs_emit_at(buf, len, "\n");
	}
}

/*
 * The refusals' log lines are rate-limited per kind of setting, so that a
 * flood of bad writes to one setting leaves another's refusals logged.
 */
static struct ratelimit_state kiwi_refused_rs[KIWI_KIND_COUNT] = {
	[0 ... KIWI_KIND_COUNT - 1] =
		RATELIMIT_STATE_INIT(kiwi_refused_rs,
				     DEFAULT_RATELIMIT_INTERVAL,
				     DEFAULT_RATELIMIT_BURST),
};

/*
 * Log a refused value of @d, saying what it must be; @ibdev is NULL for a
 * module parameter (no device yet).
 */
static void kiwi_setting_refused(const struct ib_device *ibdev,
				 const struct kiwi_setting_desc *d,
				 const char *buf)
{
	int len = strcspn(buf, "\n");
	char want[48];

	if (!__ratelimit(&kiwi_refused_rs[d->kind]))
		return;
	switch (d->kind) {
	case KIWI_KIND_UINT:
		snprintf(want, sizeof(want), "an integer from %u to %u",
			 d->min, d->max);
		break;
	case KIWI_KIND_BOOL:
		strscpy(want, "Y or N", sizeof(want));
		break;
	case KIWI_KIND_LLP:
		strscpy(want, "tcp or sctp", sizeof(want));
		break;
	default:
		strscpy(want, "a comma-separated list of send, write, read",
			sizeof(want));
		break;
	}
	if (ibdev)
		ibdev_notice(ibdev, "%s: refused '%.*s': expected %s\n",
			     d->name, len, buf, want);
	else
		pr_notice("kiwi: parameter %s: refused '%.*s': expected %s\n",
			  d->name, len, buf, want);
}

/* --- module parameters: defaults for new devices --- */

static enum kiwi_setting_id kiwi_param_id(const struct kernel_param *kp)
{
	return (const struct kiwi_setting_desc *)kp->arg - kiwi_setting_descs;
}

static int kiwi_param_set(const char *val, const struct kernel_param *kp)
{
	enum kiwi_setting_id id = kiwi_param_id(kp);
	u32 v;

	if (kiwi_setting_parse(&kiwi_setting_descs[id], val, &v)) {
		kiwi_setting_refused(NULL, &kiwi_setting_descs[id], val);
		return -EINVAL;
	}
	WRITE_ONCE(kiwi_defaults[id], v);
	return 0;
}

static int kiwi_param_get(char *buf, const struct kernel_param *kp)
{
	enum kiwi_setting_id id = kiwi_param_id(kp);

	return kiwi_setting_format(&kiwi_setting_descs[id],
				   READ_ONCE(kiwi_defaults[id]), buf);
}

static const struct kernel_param_ops kiwi_param_ops = {
	.set = kiwi_param_set,
	.get = kiwi_param_get,
};

#define KIWI_PARAM(name, id)						\
	module_param_cb(name, &kiwi_param_ops,				\
			(void *)&kiwi_setting_descs[id], 0644)

KIWI_PARAM(mpa_timeout, KIWI_SET_MPA_TIMEOUT);
__MODULE_PARM_TYPE(mpa_timeout, "uint");
MODULE_PARM_DESC(mpa_timeout,
		 "Default for new devices: seconds for TCP connect plus the MPA Request/Reply, for the ULP's answer to a request, and for the peer's FIN after ours (1-600, default 10)");
KIWI_PARAM(drain_timeout, KIWI_SET_DRAIN_TIMEOUT);
__MODULE_PARM_TYPE(drain_timeout, "uint");
MODULE_PARM_DESC(drain_timeout,
		 "Default for new devices: seconds a graceful close (SQD, or the Terminate after a local error) may take to send what is queued before the connection is reset (1-60, default 3)");
KIWI_PARAM(mpa_rev, KIWI_SET_MPA_REV);
__MODULE_PARM_TYPE(mpa_rev, "uint");
MODULE_PARM_DESC(mpa_rev,
		 "Default for new devices: highest MPA revision, 2 = RFC 6581 IRD/ORD and RTR (default), 1 = RFC 5044 only (older iWARP RNICs)");
KIWI_PARAM(mpa_crc_off, KIWI_SET_MPA_CRC_OFF);
__MODULE_PARM_TYPE(mpa_crc_off, "bool");
MODULE_PARM_DESC(mpa_crc_off,
		 "Default for new devices: ask for no MPA CRC; CRC is still used when the peer asks for it, as RFC 5044 requires (default N)");
KIWI_PARAM(mpa_markers, KIWI_SET_MPA_MARKERS);
__MODULE_PARM_TYPE(mpa_markers, "bool");
MODULE_PARM_DESC(mpa_markers,
		 "Default for new devices: ask the peer for MPA markers (default N; Linux siw refuses connections that ask)");
KIWI_PARAM(mpa_p2p, KIWI_SET_MPA_P2P);
__MODULE_PARM_TYPE(mpa_p2p, "bool");
MODULE_PARM_DESC(mpa_p2p,
		 "Default for new devices: an initiator asks for RFC 6581 peer-to-peer mode and sends an RTR message (revision 2 only, default Y)");
KIWI_PARAM(mpa_rtr, KIWI_SET_MPA_RTR);
__MODULE_PARM_TYPE(mpa_rtr, "string");
MODULE_PARM_DESC(mpa_rtr,
		 "Default for new devices: RFC 6581 RTR types offered and accepted, a list of send, write, read (default send,write,read)");
KIWI_PARAM(mpa_responder_waits, KIWI_SET_MPA_RESPONDER_WAITS);
__MODULE_PARM_TYPE(mpa_responder_waits, "bool");
MODULE_PARM_DESC(mpa_responder_waits,
		 "Default for new devices: a responder outside peer-to-peer mode sends no FPDU before the initiator's first (RFC 5044 7.1.2, default Y); N lets server-first ULPs work with initiators that send no RTR");
KIWI_PARAM(mpa_rdmac, KIWI_SET_MPA_RDMAC);
__MODULE_PARM_TYPE(mpa_rdmac, "bool");
MODULE_PARM_DESC(mpa_rdmac,
		 "Default for new devices: answer RDMAC (MPA revision 0) peers as RFC 5044 C.2.1/C.2.2 describe, a revision 1 Reply and a graceful close (default N: reset at once); version 0 DDP/RDMAP is not implemented");
KIWI_PARAM(llp, KIWI_SET_LLP);
__MODULE_PARM_TYPE(llp, "string");
MODULE_PARM_DESC(llp,
		 "Default for new devices: the lower layer of new connections, tcp (MPA over TCP, default) or sctp (DDP over SCTP, RFC 5043 draft; needs sctp.ko, kiwi only)");
KIWI_PARAM(ulpf00, KIWI_SET_ULPF00);
__MODULE_PARM_TYPE(ulpf00, "bool");
MODULE_PARM_DESC(ulpf00,
		 "Default for new devices: TCP connections use the experimental ULP framing draft-00 profile (8-octet Length+Key header, no CRC, no markers) and refuse peers without it; kiwi only (default N)");

/**
 * kiwi_settings_init - a new device's settings: the current defaults
 * @s: the device's settings
 */
void kiwi_settings_init(struct kiwi_settings *s)
{
	int i;

	for (i = 0; i < KIWI_SET_NUM; i++)
		s->val[i] = READ_ONCE(kiwi_defaults[i]);
}

/* --- sysfs: /sys/class/infiniband/DEV/kiwi/ --- */

struct kiwi_setting_attr {
	struct device_attribute attr;
	enum kiwi_setting_id id;
};

static struct kiwi_settings *kiwi_dev_settings(struct device *dev)
{
	return &rdma_device_to_drv_device(dev, struct kiwi_device,
					  ibdev)->settings;
}

static enum kiwi_setting_id kiwi_attr_id(struct device_attribute *attr)
{
	return container_of(attr, struct kiwi_setting_attr, attr)->id;
}

static ssize_t kiwi_setting_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	enum kiwi_setting_id id = kiwi_attr_id(attr);

	return kiwi_setting_format(&kiwi_setting_descs[id],
				   kiwi_setting(kiwi_dev_settings(dev), id),
				   buf);
}

static ssize_t kiwi_setting_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	enum kiwi_setting_id id = kiwi_attr_id(attr);
	const struct kiwi_setting_desc *d = &kiwi_setting_descs[id];
	struct ib_device *ibdev = rdma_device_to_ibdev(dev);
	u32 v;

	if (kiwi_setting_parse(d, buf, &v)) {
		kiwi_setting_refused(ibdev, d, buf);
		return -EINVAL;
	}
	WRITE_ONCE(kiwi_dev_settings(dev)->val[id], v);
	ibdev_dbg(ibdev, "%s set to %.*s\n", d->name,
		  (int)strcspn(buf, "\n"), buf);
	return count;
}

#define KIWI_SETTING_ATTR(_name, _id)					\
	static struct kiwi_setting_attr kiwi_attr_##_name = {		\
		.attr = __ATTR(_name, 0644, kiwi_setting_show,		\
			       kiwi_setting_store),			\
		.id = _id,						\
	}

KIWI_SETTING_ATTR(mpa_timeout, KIWI_SET_MPA_TIMEOUT);
KIWI_SETTING_ATTR(drain_timeout, KIWI_SET_DRAIN_TIMEOUT);
KIWI_SETTING_ATTR(mpa_rev, KIWI_SET_MPA_REV);
KIWI_SETTING_ATTR(mpa_crc_off, KIWI_SET_MPA_CRC_OFF);
KIWI_SETTING_ATTR(mpa_markers, KIWI_SET_MPA_MARKERS);
KIWI_SETTING_ATTR(mpa_p2p, KIWI_SET_MPA_P2P);
KIWI_SETTING_ATTR(mpa_rtr, KIWI_SET_MPA_RTR);
KIWI_SETTING_ATTR(mpa_responder_waits, KIWI_SET_MPA_RESPONDER_WAITS);
KIWI_SETTING_ATTR(mpa_rdmac, KIWI_SET_MPA_RDMAC);
KIWI_SETTING_ATTR(llp, KIWI_SET_LLP);
KIWI_SETTING_ATTR(ulpf00, KIWI_SET_ULPF00);

/* libkiwi's match_device reads this (KIWI_SYSFS_ABI_FILE). */
static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", KIWI_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *kiwi_settings_attrs[] = {
	&dev_attr_abi_version.attr,
	&kiwi_attr_mpa_timeout.attr.attr,
	&kiwi_attr_drain_timeout.attr.attr,
	&kiwi_attr_mpa_rev.attr.attr,
	&kiwi_attr_mpa_crc_off.attr.attr,
	&kiwi_attr_mpa_markers.attr.attr,
	&kiwi_attr_mpa_p2p.attr.attr,
	&kiwi_attr_mpa_rtr.attr.attr,
	&kiwi_attr_mpa_responder_waits.attr.attr,
	&kiwi_attr_mpa_rdmac.attr.attr,
	&kiwi_attr_llp.attr.attr,
	&kiwi_attr_ulpf00.attr.attr,
	NULL,
};

const struct attribute_group kiwi_settings_group = {
	.name = KIWI_SYSFS_GROUP,
	.attrs = kiwi_settings_attrs,
};
