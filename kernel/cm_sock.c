// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the CM's socket helpers: creation in the device's namespace,
 * non-blocking
 * MPA startup frame I/O, addresses and close detection.
 */
#include <linux/kallsyms.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <rdma/rdma_cm.h>

#include "cm_ep.h"
#include "llp_sctp.h"

/* A TCP socket in @net. */
static int kiwi_cm_tcp_sock_create(struct net *net, int family,
				   struct socket **sockp)
{
	struct socket *sock;
	int rv;

	rv = sock_create_kern(net, family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (rv)
		return rv;
	sock_set_reuseaddr(sock->sk);
	tcp_sock_set_nodelay(sock->sk);
	*sockp = sock;
	return 0;
}

/*
 * A kernel socket does not pin its namespace, but kiwi's sockets can
 * outlive their device (a close waiting for the peer's FIN) and so the
 * net_device that tied the device to the namespace. Each one holds a
 * counted reference instead, as a user socket does: dropped when the
 * socket is freed, and inherited by TCP children accepted from a listener
 * (sk_clone_lock()); SCTP makes a kernel listener's children without one
 * (sk_alloc() for a kernel accept), so kiwi pins theirs on accept. A
 * namespace is dismantled only after kiwi let go.
 */
void kiwi_cm_sock_pin_net(struct sock *sk)
{
	struct net *net = sock_net(sk);

	sk->sk_net_refcnt = 1;
	get_net_track(net, &sk->ns_tracker, GFP_KERNEL);
	sock_inuse_add(net, 1);
}

/**
 * kiwi_cm_sock_open - a socket for a connection or listener of @cm_id
 * @cm_id: the iw_cm id; its device names the network namespace
 * @family: AF_INET or AF_INET6
 * @sctp: a DDP-enabled one-to-one SCTP socket rather than TCP
 * @sockp: the new socket
 *
 * Process context. The socket lives in the namespace of the device's
 * net_device, the one whose addresses rdma_cm resolved.
 *
 * Return: 0; -EAFNOSUPPORT; -ENETDOWN while the net_device's namespace is
 * being dismantled; or the error of the socket's creation.
 */
int kiwi_cm_sock_open(struct iw_cm_id *cm_id, int family, bool sctp,
		      struct socket **sockp)
{
	struct net *net;
	int rv;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	rcu_read_lock();
	net = maybe_get_net(dev_net(to_kdev(cm_id->device)->netdev));
	rcu_read_unlock();
	if (!net)
		return -ENETDOWN;
	rv = sctp ? kiwi_cm_sctp_sock_create(net, family, sockp) :
	     kiwi_cm_tcp_sock_create(net, family, sockp);
	if (!rv)
		kiwi_cm_sock_pin_net((*sockp)->sk);
	put_net(net);
	return rv;
}

/**
 * kiwi_cm_send - send an MPA Request or Reply
 * @sock: a connected socket
 * @f: the frame
 *
 * Startup frames are sent before any FPDU and are at most 532 octets, so
 * they fit the send buffer of a fresh connection; a short send is an
 * error rather than something to wait for. The frame ends a TCP record:
 * no FPDU joins its segment (llp_tcp.c), whose receiver may read the
 * frame alone.
 *
 * Return: 0 or a negative errno.
 */
int kiwi_cm_send(struct socket *sock, const struct kiwi_mpa_frame *f)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR,
	};
	struct kvec kv;
	size_t len;
	u8 *buf;
	int rv;

	buf = kmalloc(KIWI_MPA_FRAME_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rv = kiwi_mpa_frame_build(f, buf, KIWI_MPA_FRAME_MAX, &len);
	if (!rv) {
		kv.iov_base = buf;
		kv.iov_len = len;
		rv = kernel_sendmsg(sock, &msg, &kv, 1, len);
		if (rv >= 0)
			rv = rv == len ? 0 : -EIO;
	}
	kfree(buf);
	return rv;
}

/* The peer's FIN was received and nothing is left to read before it. */
static bool kiwi_cm_fin_eaten(struct sock *sk)
{
	return (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) &&
	       skb_queue_empty_lockless(&sk->sk_receive_queue);
}

/*
 * Read what @kv asks for at most, without blocking. TCP urgent data (a
 * peer's MSG_OOB) has no place in an MPA stream: read on, recvmsg() would
 * drop the urgent octet and misframe what follows. So it fails the read
 * with -EPROTO and the connection ends at once rather than at the MPA
 * timeout, as the data path ends the stream (kiwi_rx_urgent()).
 */
static int kiwi_cm_recv(struct socket *sock, struct kvec *kv)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct tcp_sock *tp = tcp_sk(sock->sk);
	u32 seq = READ_ONCE(tp->copied_seq);
	u32 skipped;
	int rv;

	if (READ_ONCE(tp->urg_data))
		return -EPROTO;
	rv = kernel_recvmsg(sock, &msg, kv, 1, kv->iov_len, MSG_DONTWAIT);
	if (rv <= 0)
		return rv;
	/*
	 * recvmsg() steps over an urgent octet it reaches first; it also
	 * counts the peer's FIN when the last octet it copied ends the
	 * segment carrying it (a peer that closes right after its frame,
	 * e.g. after a rejecting Reply): that is no urgent data.
	 */
	skipped = READ_ONCE(tp->copied_seq) - seq - rv;
	if (skipped == 1 && kiwi_cm_fin_eaten(sock->sk))
		skipped = 0;
	return skipped ? -EPROTO : rv;
}

/**
 * kiwi_cm_read_frame - read a startup frame, exactly, without blocking
 * @ep: the endpoint, ep->lock held; the frame so far is in ep->rbuf
 * @want_reply: the frame expected is a Reply (initiator)
 * @f: output: the frame, its private data pointing into ep->rbuf
 * @err: output: 0, or the socket error or -ECONNRESET (peer closed)
 *
 * Reads the 20-octet header first and then exactly PD_Length octets, so
 * octets after the frame (the first FPDU) stay on the socket for the QP
 * engine. TCP urgent data fails the read with -EPROTO.
 *
 * Return: the parse status; KIWI_MPA_ST_NEED_MORE with *@err 0 means wait
 * for more data.
 */
enum kiwi_mpa_status kiwi_cm_read_frame(struct kiwi_ep *ep, bool want_reply,
					struct kiwi_mpa_frame *f, int *err)
{
	enum kiwi_mpa_status st;
	struct kvec kv;
	size_t need;
	int rv;

	*err = 0;
	for (;;) {
		st = kiwi_mpa_frame_parse(ep->rbuf, ep->rlen, want_reply, f,
					  &need);
		if (st != KIWI_MPA_ST_NEED_MORE)
			return st;
		if (need > sizeof(ep->rbuf) || need <= ep->rlen)
			return KIWI_MPA_ST_BAD_PDLEN;
		kv.iov_base = ep->rbuf + ep->rlen;
		kv.iov_len = need - ep->rlen;
		rv = kiwi_cm_recv(ep->sock, &kv);
		if (rv == -EAGAIN)
			return st;
		if (rv == -EPROTO)
			kiwi_cm_obs_urgent(ep);
		if (rv <= 0) {
			*err = rv ? rv : -ECONNRESET;
			return st;
		}
		ep->rlen += rv;
	}
}

/*
 * An IPv4 connection accepted on a dual-stack IPv6 socket has IPv4-mapped
 * addresses; it is IPv4 on the wire and to rdma_cm, which finds the
 * device of a local address by its own family (rdma_translate_ip()).
 */
static void kiwi_cm_addr_unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 sin6 = *(struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	if (sin6.sin6_family != AF_INET6 ||
	    !ipv6_addr_v4mapped(&sin6.sin6_addr))
		return;
	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = sin6.sin6_port;
	sin->sin_addr.s_addr = sin6.sin6_addr.s6_addr32[3];
}

void kiwi_cm_addrs(struct socket *sock, struct sockaddr_storage *local,
		   struct sockaddr_storage *remote)
{
	memset(local, 0, sizeof(*local));
	memset(remote, 0, sizeof(*remote));
	if (kernel_getsockname(sock, (struct sockaddr *)local) < 0)
		memset(local, 0, sizeof(*local));
	if (kernel_getpeername(sock, (struct sockaddr *)remote) < 0)
		memset(remote, 0, sizeof(*remote));
	kiwi_cm_addr_unmap(local);
	kiwi_cm_addr_unmap(remote);
}

/**
 * kiwi_cm_peer_closed - did the connection end or the peer send its FIN?
 * @sock: the socket (SCTP: kiwi_sctp_peer_closed())
 * @err: output: the error to report (the socket's, else -ECONNRESET)
 *
 * Return: true if the peer closed (FIN), reset, or the connection failed.
 */
bool kiwi_cm_peer_closed(struct socket *sock, int *err)
{
	struct sock *sk = sock->sk;
	bool closed;

	if (sk->sk_protocol == IPPROTO_SCTP)
		return kiwi_sctp_peer_closed(sock, err);
	closed = READ_ONCE(sk->sk_state) == TCP_CLOSE ||
		 (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
		 READ_ONCE(sk->sk_err);
	*err = sock_error(sk);
	if (!*err)
		*err = -ECONNRESET;
	return closed;
}

/**
 * kiwi_cm_discard - read and drop what the peer sent, without blocking
 * @sock: a socket no QP uses any more (closing)
 *
 * A peer still sending when we closed can deliver its FIN only once its
 * data was read. At most 1 MiB per call, so a fast peer cannot keep the
 * CM's worker busy: the caller reads again later.
 *
 * Return: true if octets may remain queued.
 */
bool kiwi_cm_discard(struct socket *sock)
{
	struct kvec kv = { .iov_len = SZ_64K };
	struct msghdr msg = { };
	int i, rv;

	for (i = 0; i < 16; i++) {
		/* MSG_TRUNC: TCP drops the octets without copying them. */
		rv = kernel_recvmsg(sock, &msg, &kv, 1, kv.iov_len,
				    MSG_DONTWAIT | MSG_TRUNC);
		if (rv < (int)kv.iov_len)
			return false;
	}
	return true;
}

/* Address family and length of an iw_cm address, 0 if unsupported. */
int kiwi_cm_addr_len(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (ss->ss_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/**
 * kiwi_cm_bind_local - bind an active connection's socket to its address
 * @sock: the new socket
 * @laddr: the id's local address and port
 * @alen: its length
 *
 * rdma_cm picks the local port in its own port space, which TCP does not
 * see: another socket of the host may hold it (one in TIME_WAIT that had
 * no SO_REUSEADDR is enough). Then the connection takes a port TCP picks,
 * as under a port mapper; the events report the socket's real address.
 *
 * Return: 0 or a negative errno.
 */
int kiwi_cm_bind_local(struct socket *sock, const struct sockaddr_storage *laddr,
		       int alen)
{
	struct sockaddr_storage any_port = *laddr;
	int rv;

	rv = kernel_bind(sock, (struct sockaddr *)laddr, alen);
	if (rv != -EADDRINUSE)
		return rv;
	if (any_port.ss_family == AF_INET)
		((struct sockaddr_in *)&any_port)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&any_port)->sin6_port = 0;
	return kernel_bind(sock, (struct sockaddr *)&any_port, alen);
}

/*
 * A wildcard address of @ss's family; false for a specific one or another
 * family.
 */
bool kiwi_cm_addr_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

/*
 * rdma_cm, the one in-kernel user of iw_cm, listens through
 * iw_create_cm_id(device, iw_conn_req_handler, id_priv): the context is its
 * private id, whose first member is the struct rdma_cm_id that holds the
 * id's namespace. Another user's context is opaque, so it is read only
 * when the handler is rdma_cm's (sprint_symbol_no_offset() appends the
 * module's name in brackets).
 */
#define KIWI_RDMA_CM_IW_HANDLER "iw_conn_req_handler"

/* The namespace of @cm_id's rdma_cm id, or NULL if it is not rdma_cm's. */
static struct net *kiwi_cm_rdma_cm_net(struct iw_cm_id *cm_id)
{
	const size_t len = strlen(KIWI_RDMA_CM_IW_HANDLER);
	struct rdma_cm_id *id = cm_id->context;
	char *name;
	bool rdma_cm;

	if (!IS_ENABLED(CONFIG_KALLSYMS) || !id || !cm_id->cm_handler)
		return NULL;
	name = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!name)
		return NULL;
	sprint_symbol_no_offset(name, (unsigned long)cm_id->cm_handler);
	rdma_cm = !strncmp(name, KIWI_RDMA_CM_IW_HANDLER, len) &&
		  (name[len] == '\0' || name[len] == ' ');
	kfree(name);
	if (!rdma_cm || id->device != cm_id->device)
		return NULL;
	return id->route.addr.dev_addr.net;
}

/**
 * kiwi_cm_listen_elsewhere - a wildcard listen meant for another namespace
 * @cm_id: the listening id, address in m_local_addr
 *
 * rdma_cm asks every device to listen for a wildcard address, the devices
 * of every network namespace included when the RDMA subsystem is shared,
 * and it asks a device added later for every wildcard listen already
 * there, in the context of the process that adds the device. An iw_cm_id
 * does not say which namespace its listener is in; rdma_cm's id does
 * (kiwi_cm_rdma_cm_net()). For another iw_cm user the caller's namespace
 * stands for the listener's. A device whose net_device lives in another
 * namespace can bring this listener no connection, and a socket there
 * would take the port from that namespace's own users; it listens without
 * a socket. A specific address was resolved by rdma_cm, in the id's
 * namespace, to this device's net_device: it always gets its socket.
 *
 * Return: true if @cm_id's listen needs no socket on this device.
 */
bool kiwi_cm_listen_elsewhere(struct iw_cm_id *cm_id)
{
	struct net *net;
	bool elsewhere;

	if (!kiwi_cm_addr_any(&cm_id->m_local_addr))
		return false;
	net = kiwi_cm_rdma_cm_net(cm_id);
	if (!net && current->nsproxy)
		net = current->nsproxy->net_ns;
	if (!net)
		return false;
	rcu_read_lock();
	elsewhere = !net_eq(net, dev_net(to_kdev(cm_id->device)->netdev));
	rcu_read_unlock();
	return elsewhere;
}

/* A listening socket (TCP, or SCTP one-to-one) on the id's address. */
int kiwi_cm_listen_sock(struct iw_cm_id *cm_id, int backlog, bool sctp,
			struct socket **sockp)
{
	struct sockaddr_storage *laddr = &cm_id->m_local_addr;
	int alen = kiwi_cm_addr_len(laddr);
	struct socket *sock;
	int rv;

	if (!alen)
		return -EAFNOSUPPORT;
	rv = kiwi_cm_sock_open(cm_id, laddr->ss_family, sctp, &sock);
	if (rv)
		return rv;
	if (laddr->ss_family == AF_INET6 && cm_id->afonly)
		ip6_sock_set_v6only(sock->sk);
	rv = kernel_bind(sock, (struct sockaddr *)laddr, alen);
	if (!rv)
		rv = kernel_listen(sock, backlog);
	if (rv) {
		sock_release(sock);
		return rv;
	}
	*sockp = sock;
	return 0;
}
