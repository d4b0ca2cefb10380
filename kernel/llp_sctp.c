// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: DDP over SCTP as the LLP under DDP (llp.h; RFC 5043 draft,
 * Documentation/sctp.md), and the chunk I/O the SCTP CM shares.
 *
 * Transmit: the engine stages each DDP segment after KIWI_SCTP_TX_ROOM
 * octets: a length kept for send (never on the wire) and the DDP-SSN,
 * which counts every chunk of the session without a gap (SCTP-002/008).
 * send() hands every segment to SCTP as one unordered message, PPID 0x10.
 * SCTP never calls sk_write_space: the wait entry on the socket's wait
 * queue resumes a stalled TX when SCTP signals EPOLLOUT.
 *
 * Receive: SCTP delivers unordered chunks in arrival order; kiwi reads
 * them in a work item (recvmsg cannot run in sk_data_ready's softirq),
 * holds those ahead of the next DDP-SSN (within the draft's window of
 * 32767 chunks, KIWI_SCTP_HOLD_MAX octets at most) and hands the DDP
 * engine segments in DDP-SSN order, never by TSN (SCTP-032), so delivery
 * is that of an in-order stream. Placement need not wait: a segment
 * ahead of a gap that the engine can place on arrival (rx_early.c) is
 * placed then, and only its headers are held for its turn. Only the
 * kernel's socket interface is used: kiwi.ko needs no symbol of sctp.ko.
 */
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/sctp.h>
#include <net/sctp/sctp.h>
#include <net/sock.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"
#include "llp_sctp.h"

/* Transmit buffer room before a segment: length (host order), DDP-SSN. */
#define KIWI_SCTP_TX_LEN	4
#define KIWI_SCTP_TX_ROOM	(KIWI_SCTP_TX_LEN + KIWI_SCTP_SSN_LEN)
/* Chunks RX handles per run before it yields the worker. */
#define KIWI_SCTP_RX_BUDGET	64
/*
 * Chunks on other SCTP streams one kiwi_sctp_next() answers before it
 * gives its worker back: a peer that keeps sending them must not hold a
 * kiwi_wq or CM worker for as long as it likes.
 */
#define KIWI_SCTP_FOREIGN_BUDGET	16

static void kiwi_sctp_rx_work(struct work_struct *work);
static int kiwi_sctp_wake(struct wait_queue_entry *wait, unsigned int mode,
			  int sync, void *key);

/**
 * kiwi_sctp_conn_alloc - the state of an association carrying DDP
 * @responder: a listener's child: until a QP reads it, no chunk may be
 *             held ahead of the next one (the initiator sends only its
 *             Initiate before the Accept), so a peer cannot make the
 *             kernel hold KIWI_SCTP_HOLD_MAX for each association it
 *             opens and never starts
 *
 * Return: the state, or NULL.
 */
struct kiwi_sctp_conn *kiwi_sctp_conn_alloc(bool responder)
{
	struct kiwi_sctp_conn *sc = kzalloc(sizeof(*sc), GFP_KERNEL);

	if (!sc)
		return NULL;
	sc->rbuf = kmalloc(KIWI_SCTP_RBUF_LEN, GFP_KERNEL);
	sc->early = kzalloc(sizeof(*sc->early), GFP_KERNEL);
	if (!sc->rbuf || !sc->early) {
		kfree(sc->early);
		kfree(sc->rbuf);
		kfree(sc);
		return NULL;
	}
	xa_init(&sc->held);
	sc->hold_max = responder ? 0 : KIWI_SCTP_HOLD_MAX;
	INIT_WORK(&sc->rx_work, kiwi_sctp_rx_work);
	init_waitqueue_func_entry(&sc->wait, kiwi_sctp_wake);
	return sc;
}

/* The endpoint's last reference: no socket, no QP any more. */
void kiwi_sctp_conn_free(struct kiwi_sctp_conn *sc)
{
	struct kiwi_sctp_chunk *c;
	unsigned long i;

	if (!sc)
		return;
	xa_for_each(&sc->held, i, c)
		kfree(c);
	xa_destroy(&sc->held);
	kfree(sc->early);
	kfree(sc->rbuf);
	kfree(sc);
}

static int kiwi_sctp_setopt(struct socket *sock, int opt, void *val,
			    unsigned int len)
{
	return sock->ops->setsockopt(sock, SOL_SCTP, opt, KERNEL_SOCKPTR(val),
				     len);
}

/**
 * kiwi_sctp_sock_prepare - options of every kiwi SCTP socket
 * @sock: a new one-to-one SCTP socket, before bind
 *
 * The DDP Adaptation Layer Indication goes into our INIT or INIT-ACK,
 * which ask for as many inbound as outbound streams (8, SCTP-026: SCTP's
 * default inbound count is 65535); received chunks come with their PPID;
 * no Nagle-like delay (11.2, SCTP-038).
 *
 * Return: 0 or a negative errno.
 */
int kiwi_sctp_sock_prepare(struct socket *sock)
{
	struct sctp_setadaptation ad = {
		.ssb_adaptation_ind = KIWI_SCTP_ADAPT_DDP,
	};
	struct sctp_initmsg init = {
		.sinit_num_ostreams = KIWI_SCTP_STREAMS,
		.sinit_max_instreams = KIWI_SCTP_STREAMS,
	};
	int on = 1;
	int rv;

	sock_set_reuseaddr(sock->sk);
	rv = kiwi_sctp_setopt(sock, SCTP_ADAPTATION_LAYER, &ad, sizeof(ad));
	if (!rv)
		rv = kiwi_sctp_setopt(sock, SCTP_INITMSG, &init, sizeof(init));
	if (!rv)
		rv = kiwi_sctp_setopt(sock, SCTP_RECVRCVINFO, &on, sizeof(on));
	if (!rv)
		rv = kiwi_sctp_setopt(sock, SCTP_NODELAY, &on, sizeof(on));
	return rv;
}

/* @sc takes @sock: its wait entry joins the socket's wait queue. */
void kiwi_sctp_sock_attach(struct kiwi_sctp_conn *sc, struct socket *sock)
{
	sc->sock = sock;
	add_wait_queue(sk_sleep(sock->sk), &sc->wait);
}

/* Before the socket is released: no QP is attached any more. */
void kiwi_sctp_sock_detach(struct kiwi_sctp_conn *sc)
{
	if (!sc || !sc->sock)
		return;
	remove_wait_queue(sk_sleep(sc->sock->sk), &sc->wait);
	sc->sock = NULL;
}

/* Under @sk's lock: the association of one-to-one socket @sk, if any. */
static struct sctp_association *kiwi_sctp_asoc(struct sock *sk)
{
	return list_first_entry_or_null(&sctp_sk(sk)->ep->asocs,
					struct sctp_association, asocs);
}

/*
 * Under @sk's lock: the MULPDU of @asoc's path MTU now (section 9), no
 * larger than a kiwi peer reads in one chunk (KIWI_SCTP_RBUF_LEN): the
 * loopback's MTU of 65536 would allow segments of 65486 octets.
 */
static u32 kiwi_sctp_path_mulpdu(struct sock *sk,
				 const struct sctp_association *asoc)
{
	return min_t(u32, kiwi_sctp_mulpdu(asoc->pathmtu,
					   sk->sk_family == AF_INET6),
		     KIWI_SCTP_RBUF_LEN - KIWI_SCTP_SSN_LEN);
}

/**
 * kiwi_sctp_peer_check - the association is up: may DDP run on it?
 * @sc: its state; sc->sock established
 *
 * RFC 5043 draft 11.1: without the DDP Adaptation Indication in the
 * peer's INIT or INIT-ACK, DDP MUST NOT be performed on the association.
 * Sets sc->mulpdu from the path MTU (section 9, SCTP-027).
 *
 * Return: 0, -EPROTO (no or another indication), -ENOTCONN.
 */
int kiwi_sctp_peer_check(struct kiwi_sctp_conn *sc)
{
	struct sock *sk = sc->sock->sk;
	struct sctp_association *asoc;
	int rv = -ENOTCONN;

	lock_sock(sk);
	asoc = kiwi_sctp_asoc(sk);
	if (asoc) {
		rv = asoc->peer.adaptation_ind == KIWI_SCTP_ADAPT_DDP ?
		     0 : -EPROTO;
		sc->mulpdu = kiwi_sctp_path_mulpdu(sk, asoc);
	}
	release_sock(sk);
	return rv;
}

/* One unordered message on stream @sid with @ppid, without blocking. */
static int kiwi_sctp_sendmsg(struct socket *sock, u16 sid, void *buf,
			     u32 len, u32 ppid)
{
	union {
		struct cmsghdr hdr;
		u8 space[CMSG_SPACE(sizeof(struct sctp_sndinfo))];
	} cbuf = {};
	struct msghdr msg = {
		.msg_control = &cbuf,
		.msg_controllen = sizeof(cbuf),
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL,
	};
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct sctp_sndinfo *si;

	cbuf.hdr.cmsg_level = IPPROTO_SCTP;
	cbuf.hdr.cmsg_type = SCTP_SNDINFO;
	cbuf.hdr.cmsg_len = CMSG_LEN(sizeof(*si));
	si = CMSG_DATA(&cbuf.hdr);
	si->snd_sid = sid;
	si->snd_flags = SCTP_UNORDERED;
	/* The uapi field is a plain __u32 that holds network order. */
	si->snd_ppid = (__force u32)cpu_to_be32(ppid);
	return kernel_sendmsg(sock, &msg, &kv, 1, len);
}

/**
 * kiwi_sctp_send_ssc - send a Session Control message (PPID 0x11)
 * @sc: the association
 * @ssn: its DDP-SSN
 * @fn: enum kiwi_sctp_ssc_fn
 * @pd: Private Data (none for a Terminate)
 * @pd_len: its length, at most 512
 *
 * Return: 0 or a negative errno.
 */
int kiwi_sctp_send_ssc(struct kiwi_sctp_conn *sc, u16 ssn, u16 fn,
		       const void *pd, u32 pd_len)
{
	u8 *buf = kmalloc(KIWI_SCTP_SSC_MAX, GFP_KERNEL);
	int len, rv;

	if (!buf)
		return -ENOMEM;
	len = kiwi_sctp_ssc_encode(buf, KIWI_SCTP_SSC_MAX, ssn, fn, pd,
				   pd_len);
	rv = len;
	if (len > 0) {
		rv = kiwi_sctp_sendmsg(sc->sock, KIWI_SCTP_SID, buf, len,
				       KIWI_SCTP_PPID_SSC);
		if (rv >= 0)
			rv = rv == len ? 0 : -EIO;
	}
	kfree(buf);
	return rv;
}

/*
 * Read one message into sc->rbuf, with its PPID and stream. Return its
 * length (0: the peer shut the association down), or a negative errno
 * (-EAGAIN: nothing queued).
 */
static int kiwi_sctp_recv(struct kiwi_sctp_conn *sc, u32 *ppid, u16 *sid,
			  int *flags)
{
	union {
		struct cmsghdr hdr;
		u8 space[CMSG_SPACE(sizeof(struct sctp_rcvinfo))];
	} cbuf = {};
	struct msghdr msg = {
		.msg_control = &cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct kvec kv = { .iov_base = sc->rbuf, .iov_len = KIWI_SCTP_RBUF_LEN };
	struct sctp_rcvinfo *ri;
	int rv;

	rv = kernel_recvmsg(sc->sock, &msg, &kv, 1, kv.iov_len, MSG_DONTWAIT);
	if (rv < 0)
		return rv;
	*flags = msg.msg_flags;
	*ppid = 0;
	*sid = KIWI_SCTP_SID;
	/* put_cmsg() advanced msg_control: what it wrote starts at cbuf. */
	if (sizeof(cbuf) - msg.msg_controllen >= CMSG_LEN(sizeof(*ri)) &&
	    cbuf.hdr.cmsg_level == IPPROTO_SCTP &&
	    cbuf.hdr.cmsg_type == SCTP_RCVINFO) {
		ri = CMSG_DATA(&cbuf.hdr);
		*ppid = be32_to_cpu((__force __be32)ri->rcv_ppid);
		*sid = ri->rcv_sid;
	}
	return rv;
}

/*
 * Judge the chunk in sc->rbuf, before anything is allocated for it
 * (SCTP-034): an oversize segment is refused (SCTP-030). Return its
 * DDP-SSN, or a negative errno.
 */
static int kiwi_sctp_judge(struct kiwi_sctp_conn *sc, u32 ppid, u32 len)
{
	struct kiwi_sctp_ssc ssc;
	u16 ssn;

	if (ppid == KIWI_SCTP_PPID_DDP_SEG) {
		if (kiwi_sctp_seg_decode(sc->rbuf, len, sc->mulpdu, &ssn))
			return -EMSGSIZE;
	} else if (ppid == KIWI_SCTP_PPID_SSC) {
		if (kiwi_sctp_ssc_decode(&ssc, sc->rbuf, len))
			return -EPROTO;
		ssn = ssc.ssn;
	} else {
		return -EPROTO;
	}
	if (!kiwi_sctp_ssn_valid(sc->rx_next, ssn, KIWI_SCTP_SSN_WINDOW))
		return -EPROTO;
	return ssn;
}

/**
 * kiwi_sctp_hold - keep the chunk in sc->rbuf until its DDP-SSN's turn
 * @sc: the association
 * @ssn: its DDP-SSN, inside the window and not the next one
 * @ppid: its PPID
 * @len: its length
 * @qp: the attached QP whose RX reads @sc, or NULL (the CM reads)
 *
 * A duplicate DDP-SSN, or a chunk beyond the octets a QP may hold, is
 * refused before anything of it is placed. A DDP segment the QP places
 * now (kiwi_rx_early()) is kept as its headers only.
 *
 * Return: 0, -EPROTO (a duplicate), -ENOBUFS (over sc->hold_max) or
 * -ENOMEM.
 */
static int kiwi_sctp_hold(struct kiwi_sctp_conn *sc, u16 ssn, u32 ppid,
			  u32 len, struct kiwi_qp *qp)
{
	struct kiwi_sctp_chunk *c;
	u32 keep = len, seg_len = 0;
	int rv;

	if (xa_load(&sc->held, ssn))
		return -EPROTO;		/* a duplicate DDP-SSN */
	if (struct_size(c, data, len) > sc->hold_max - sc->held_len)
		return -ENOBUFS;
	if (qp && ppid == KIWI_SCTP_PPID_DDP_SEG &&
	    kiwi_rx_early(qp, sc->rbuf + KIWI_SCTP_SSN_LEN,
			  len - KIWI_SCTP_SSN_LEN)) {
		seg_len = len - KIWI_SCTP_SSN_LEN;
		keep = min_t(u32, len, KIWI_SCTP_SSN_LEN + KIWI_MPA_RX_HDR_MAX);
	}
	c = kmalloc(struct_size(c, data, keep), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->ppid = ppid;
	c->len = keep;
	c->seg_len = seg_len;
	memcpy(c->data, sc->rbuf, keep);
	rv = xa_err(xa_store(&sc->held, ssn, c, GFP_KERNEL));
	if (rv) {
		kfree(c);
		return rv;
	}
	sc->held_len += struct_size(c, data, keep);
	return 0;
}

/*
 * A chunk on SCTP stream @sid, where kiwi runs no DDP Stream Session: it
 * can only begin a session there, which fits no legal pattern but an
 * Initiate, and kiwi takes no second session per association. The draft
 * ends such a session with a Terminate on its own stream (6.1, 6.4);
 * the session on KIWI_SCTP_SID goes on (11.3: a DDP Stream ends, not the
 * association). A Terminate is not answered. A Terminate sent is counted
 * on @ibdev, if any, and logged.
 */
static void kiwi_sctp_foreign(struct kiwi_sctp_conn *sc,
			      struct ib_device *ibdev, u16 sid, u32 ppid,
			      u32 len)
{
	u8 term[KIWI_SCTP_SSC_HDR_LEN];
	struct kiwi_sctp_ssc ssc;

	if (ppid == KIWI_SCTP_PPID_SSC &&
	    !kiwi_sctp_ssc_decode(&ssc, sc->rbuf, len) &&
	    ssc.fn == KIWI_SCTP_SSC_TERMINATE)
		return;
	if (kiwi_sctp_ssc_encode(term, sizeof(term), 0,
				 KIWI_SCTP_SSC_TERMINATE, NULL, 0) != sizeof(term))
		return;
	if (kiwi_sctp_sendmsg(sc->sock, sid, term, sizeof(term),
			      KIWI_SCTP_PPID_SSC) != sizeof(term) || !ibdev)
		return;
	kiwi_dev_stat_inc(&to_kdev(ibdev)->stats, KIWI_STAT_SCTP_SSC_TERM_SENT);
	ibdev_info_ratelimited(ibdev,
			       "SCTP chunk on stream %u, which carries no DDP session, answered with a Session Terminate\n",
			       sid);
}

/**
 * kiwi_sctp_next - the chunk of DDP-SSN sc->rx_next, once it is here
 * @sc: the association (its reader: the CM before attach, RX after)
 * @m: output, valid until kiwi_sctp_consumed()
 * @ibdev: the device that counts what is answered on the way, or NULL
 * @qp: the QP whose RX reads (it may place segments ahead of a gap), or
 *	NULL
 *
 * Reads the socket until that chunk arrived, holding those ahead of it
 * (kiwi_sctp_hold()). A chunk without a whole DDP header, larger than the
 * MULPDU (draft section 9), with an unknown PPID or function code, a
 * DDP-SSN outside the window (section 10) or one already held, or one
 * beyond the octets held at most, ends the stream. A chunk on another
 * SCTP stream is answered there, counted on @ibdev (kiwi_sctp_foreign()).
 *
 * Return: 1 with @m set; 0 if it has not arrived; -EAGAIN after
 * KIWI_SCTP_FOREIGN_BUDGET chunks on other streams, when the caller
 * queues its reader again; -ECONNRESET if the association was shut down
 * or is gone; another negative errno for a chunk that ends the stream.
 */
int kiwi_sctp_next(struct kiwi_sctp_conn *sc, struct kiwi_sctp_msg *m,
		   struct ib_device *ibdev, struct kiwi_qp *qp)
{
	int rv, ssn, flags, foreign = 0;
	struct kiwi_sctp_chunk *c;
	u32 ppid;
	u16 sid;

	for (;;) {
		c = xa_load(&sc->held, sc->rx_next);
		if (c) {
			m->ppid = c->ppid;
			m->data = c->data;
			m->len = c->len;
			m->seg_len = c->seg_len;
			break;
		}
		rv = kiwi_sctp_recv(sc, &ppid, &sid, &flags);
		if (rv == -EAGAIN)
			return 0;
		if (rv <= 0)
			return -ECONNRESET;	/* shut down, aborted or failed */
		if (flags & MSG_NOTIFICATION)
			continue;	/* none subscribed; ignore */
		if (!(flags & MSG_EOR))
			return -EMSGSIZE;	/* larger than any valid chunk */
		if (sid != KIWI_SCTP_SID) {
			kiwi_sctp_foreign(sc, ibdev, sid, ppid, rv);
			if (++foreign == KIWI_SCTP_FOREIGN_BUDGET)
				return -EAGAIN;
			continue;
		}
		ssn = kiwi_sctp_judge(sc, ppid, rv);
		if (ssn < 0)
			return ssn;
		if (ssn == sc->rx_next) {
			m->ppid = ppid;
			m->data = sc->rbuf;
			m->len = rv;
			m->seg_len = 0;
			break;
		}
		rv = kiwi_sctp_hold(sc, ssn, ppid, rv, qp);
		if (rv)
			return rv;
	}
	m->ssn = sc->rx_next;
	return 1;
}

/* The chunk kiwi_sctp_next() returned is done with. */
void kiwi_sctp_consumed(struct kiwi_sctp_conn *sc)
{
	struct kiwi_sctp_chunk *c = xa_erase(&sc->held, sc->rx_next);

	if (c) {
		sc->held_len -= struct_size(c, data, c->len);
		kfree(c);
	}
	sc->rx_next++;
}

/**
 * kiwi_sctp_discard - read and drop what the peer still sends (closing)
 * @sc: the association; no QP reads it any more
 *
 * Return: true if messages may remain queued (read again later).
 */
bool kiwi_sctp_discard(struct kiwi_sctp_conn *sc)
{
	int i, flags;
	u32 ppid;
	u16 sid;

	for (i = 0; i < KIWI_SCTP_RX_BUDGET; i++)
		if (kiwi_sctp_recv(sc, &ppid, &sid, &flags) <= 0)
			return false;
	return true;
}

/**
 * kiwi_sctp_peer_closed - has the association ended, or failed to start?
 * @sock: a one-to-one SCTP socket after connect() or accept()
 * @err: output: the error to report (the socket's, else -ECONNRESET)
 *
 * A one-to-one socket stays in CLOSED while its association starts and
 * keeps its state when the association ends, so the association itself
 * is looked at: none any more, a socket error, or the peer's SHUTDOWN
 * once every message received before it was read. Process context.
 *
 * Return: true if the association is over.
 */
bool kiwi_sctp_peer_closed(struct socket *sock, int *err)
{
	struct sock *sk = sock->sk;
	bool closed;

	lock_sock(sk);
	closed = !kiwi_sctp_asoc(sk) || sk->sk_err ||
		 ((sk->sk_shutdown & RCV_SHUTDOWN) &&
		  skb_queue_empty(&sk->sk_receive_queue));
	release_sock(sk);
	*err = sock_error(sk);
	if (!*err)
		*err = -ECONNRESET;
	return closed;
}

/* --- the LLP: llp.h --- */

static int kiwi_llp_sctp_setup(struct kiwi_qp *qp, struct socket *sock,
			       const struct kiwi_llp_params *p)
{
	struct kiwi_sctp_conn *sc = p->sctp;
	wait_queue_head_t *wq = sk_sleep(sock->sk);
	unsigned long flags;

	if (!sc || sc->sock != sock)
		return -EINVAL;
	qp->tx.sctp = sc;
	qp->tx.mulpdu = sc->mulpdu;
	sc->hold_max = KIWI_SCTP_HOLD_MAX;
	memset(sc->early, 0, sizeof(*sc->early));
	qp->rx.early = sc->early;
	spin_lock_irqsave(&wq->lock, flags);
	sc->qp = qp;
	spin_unlock_irqrestore(&wq->lock, flags);
	return 0;
}

static u32 kiwi_llp_sctp_wire_len(const struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	return KIWI_SCTP_TX_ROOM + ulpdu_len;
}

/*
 * A batch takes the MULPDU of the association's path MTU now (draft
 * section 9): SCTP lowers it on an ICMP "fragmentation needed" or a route
 * change, and a DDP Segment sized for the old one would be fragmented by
 * SCTP. Segments framed already go out as they are. It never exceeds the
 * MULPDU the association started with (sc->mulpdu): a peer refuses
 * segments above the MULPDU of its own path MTU at startup, as kiwi does.
 */
static void kiwi_llp_sctp_batch(struct kiwi_qp_tx *tx, struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct sctp_association *asoc;
	u32 mulpdu = 0;

	lock_sock(sk);
	asoc = kiwi_sctp_asoc(sk);
	if (asoc)
		mulpdu = kiwi_sctp_path_mulpdu(sk, asoc);
	release_sock(sk);
	if (mulpdu)
		WRITE_ONCE(tx->mulpdu, min(mulpdu, tx->sctp->mulpdu));
}

/* The DDP-SSN goes in front; the length stays for send(). */
static int kiwi_llp_sctp_frame(struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	u8 *base = tx->buf + tx->len;
	u32 mlen = KIWI_SCTP_SSN_LEN + ulpdu_len;

	memcpy(base, &mlen, KIWI_SCTP_TX_LEN);
	put_unaligned_be16(tx->sctp->tx_ssn++, base + KIWI_SCTP_TX_LEN);
	tx->len += KIWI_SCTP_TX_LEN + mlen;
	return 0;
}

/* Each framed segment is one SCTP message; SCTP takes whole ones only. */
static int kiwi_llp_sctp_send(struct kiwi_qp_tx *tx, struct socket *sock)
{
	u32 pos = tx->sent, mlen;
	int rv = 0;

	while (pos < tx->len) {
		memcpy(&mlen, tx->buf + pos, KIWI_SCTP_TX_LEN);
		rv = kiwi_sctp_sendmsg(sock, KIWI_SCTP_SID,
				       tx->buf + pos + KIWI_SCTP_TX_LEN, mlen,
				       KIWI_SCTP_PPID_DDP_SEG);
		if (rv < 0)
			break;
		if (rv != mlen) {
			rv = -EIO;
			break;
		}
		pos += KIWI_SCTP_TX_LEN + mlen;
	}
	if (pos > tx->sent)
		return pos - tx->sent;
	return rv;
}

/*
 * SCTP wakes its socket's wait queue, never sk_write_space, when send
 * space returns: a stalled TX runs again. Runs under the wait queue's
 * lock, which also orders it against setup and stop.
 */
static int kiwi_sctp_wake(struct wait_queue_entry *wait, unsigned int mode,
			  int sync, void *key)
{
	struct kiwi_sctp_conn *sc = container_of(wait, struct kiwi_sctp_conn,
						 wait);
	struct kiwi_qp *qp = sc->qp;

	if (qp && (key_to_poll(key) & EPOLLOUT) &&
	    READ_ONCE(qp->tx.stalled)) {
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_WAKEUPS);
		kiwi_tx_kick(qp);
	}
	return 0;
}

/* A chunk in DDP-SSN order: a segment for DDP, or the peer's Terminate. */
static void kiwi_sctp_rx_msg(struct kiwi_qp *qp, struct kiwi_sctp_conn *sc,
			     const struct kiwi_sctp_msg *m)
{
	if (sc->peer_term)
		return;		/* nothing follows a Terminate */
	if (m->ppid == KIWI_SCTP_PPID_DDP_SEG && m->seg_len) {
		kiwi_rx_segment_placed(qp, m->data + KIWI_SCTP_SSN_LEN,
				       m->len - KIWI_SCTP_SSN_LEN, m->seg_len);
		return;
	}
	if (m->ppid == KIWI_SCTP_PPID_DDP_SEG) {
		kiwi_rx_segment(qp, m->data + KIWI_SCTP_SSN_LEN,
				m->len - KIWI_SCTP_SSN_LEN);
		return;
	}
	/* Only a Terminate may follow the startup (draft section 6). */
	if (get_unaligned_be16(m->data + KIWI_SCTP_SSN_LEN) !=
	    KIWI_SCTP_SSC_TERMINATE) {
		kiwi_rx_fail_llp(qp, KIWI_TERM_ERR_DDP_CATASTROPHIC);
		return;
	}
	sc->peer_term = true;
	kiwi_ep_sctp_peer_term(qp->tx.ep);
}

static void kiwi_sctp_rx_work(struct work_struct *work)
{
	struct kiwi_sctp_conn *sc = container_of(work, struct kiwi_sctp_conn,
						 rx_work);
	struct kiwi_qp *qp = sc->qp;
	struct kiwi_sctp_msg m;
	int n, rv;

	if (!qp || !READ_ONCE(qp->rx.active))
		return;
	for (n = 0; n < KIWI_SCTP_RX_BUDGET; n++) {
		rv = kiwi_sctp_next(sc, &m, qp->ibqp.device, qp);
		if (rv == 0)
			return;
		if (rv == -EAGAIN)
			break;
		if (rv == -ECONNRESET) {
			/* All read: the CM may end the connection now. */
			kiwi_ep_sctp_rx_ended(qp->tx.ep);
			return;
		}
		if (rv < 0) {
			ibdev_info_ratelimited(qp->ibqp.device,
					       "QP %u: SCTP chunk refused (%d)\n",
					       qp->ibqp.qp_num, rv);
			kiwi_rx_fail_llp(qp, KIWI_TERM_ERR_DDP_CATASTROPHIC);
			return;
		}
		kiwi_sctp_rx_msg(qp, sc, &m);
		kiwi_sctp_consumed(sc);
	}
	queue_work(kiwi_wq, &sc->rx_work);
}

/*
 * sk_data_ready, forwarded: the work reads (recvmsg may sleep), on kiwi_wq
 * because detach cancels it from the CM's workqueue.
 */
static void kiwi_llp_sctp_receive(struct kiwi_qp *qp, struct sock *sk)
{
	queue_work(kiwi_wq, &qp->tx.sctp->rx_work);
}

static void kiwi_llp_sctp_stop(struct kiwi_qp *qp)
{
	struct kiwi_sctp_conn *sc = qp->tx.sctp;
	wait_queue_head_t *wq = sk_sleep(sc->sock->sk);
	unsigned long flags;

	cancel_work_sync(&sc->rx_work);
	spin_lock_irqsave(&wq->lock, flags);
	sc->qp = NULL;
	spin_unlock_irqrestore(&wq->lock, flags);
}

const struct kiwi_llp_ops kiwi_llp_sctp = {
	.name = "sctp",
	.setup = kiwi_llp_sctp_setup,
	.seg_room = KIWI_SCTP_TX_ROOM,
	.seg_wire_len = kiwi_llp_sctp_wire_len,
	.seg_frame = kiwi_llp_sctp_frame,
	.batch = kiwi_llp_sctp_batch,
	.send = kiwi_llp_sctp_send,
	.receive = kiwi_llp_sctp_receive,
	.data_ready = kiwi_llp_sctp_receive,
	.close = kiwi_ep_llp_close,
	.drain = kiwi_ep_llp_drain,
	.stop = kiwi_llp_sctp_stop,
};
