// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: wildcard listens shared between devices.
 *
 * rdma_cm asks every device to listen on a wildcard address (0.0.0.0 or
 * ::) and a port. Two kiwi devices of one network namespace cannot each
 * bind that address and port: the second bind would fail with EADDRINUSE
 * and rdma_listen() with it. So a wildcard listen does not own a socket.
 * Its endpoint joins a port: an endpoint of its own (KIWI_EPF_PORT) that
 * owns one listening socket per namespace, family, port number, IPv6-only
 * flag and transport, and hands each connection it accepts to the member
 * whose device the connection's local address belongs to
 * (kiwi_cm_port_accept(), cm_passive.c).
 *
 * Locking: kiwi_cm_ports_mutex serialises joining and leaving and protects
 * kiwi_cm_ports and every ep->port; a port's @members also change under
 * its child_lock, which is all its accepting work takes to read them.
 * Order: kiwi_cm_ports_mutex, then a port's lock, then a listener's lock
 * (each of its own lockdep class). A listener leaves its port before it
 * takes its own lock (kiwi_cm_unlisten()).
 */
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "cm_ep.h"

static DEFINE_MUTEX(kiwi_cm_ports_mutex);
static LIST_HEAD(kiwi_cm_ports);	/* port eps, by port_entry */

static struct lock_class_key kiwi_port_lock_key;

/* Under kiwi_cm_ports_mutex: does @port's socket serve @cm_id's listen? */
static bool kiwi_cm_port_matches(const struct kiwi_ep *port,
				 struct iw_cm_id *cm_id, struct net *net,
				 bool sctp)
{
	const struct sockaddr_in *sin = (void *)&cm_id->m_local_addr;
	struct sock *sk = port->sock->sk;
	int family = cm_id->m_local_addr.ss_family;

	/* sin_port and sin6_port sit at the same offset. */
	return net_eq(sock_net(sk), net) && sk->sk_family == family &&
	       (sk->sk_protocol == IPPROTO_SCTP) == sctp &&
	       inet_sk(sk)->inet_num == ntohs(sin->sin_port) &&
	       (family != AF_INET6 || ipv6_only_sock(sk) == !!cm_id->afonly);
}

static struct kiwi_ep *kiwi_cm_port_find(struct iw_cm_id *cm_id, bool sctp)
{
	struct net_device *netdev = to_kdev(cm_id->device)->netdev;
	struct kiwi_ep *port;

	list_for_each_entry(port, &kiwi_cm_ports, port_entry)
		if (kiwi_cm_port_matches(port, cm_id, dev_net(netdev), sctp))
			return port;
	return NULL;
}

/* Under kiwi_cm_ports_mutex: a new port listening for @cm_id's address. */
static int kiwi_cm_port_open(struct iw_cm_id *cm_id, int backlog, bool sctp,
			     struct kiwi_ep **portp)
{
	struct socket *sock;
	struct kiwi_ep *port;
	int rv;

	rv = kiwi_cm_listen_sock(cm_id, backlog, sctp, &sock);
	if (rv)
		return rv;
	port = kiwi_ep_alloc();
	if (!port) {
		sock_release(sock);
		return -ENOMEM;
	}
	lockdep_set_class(&port->lock, &kiwi_port_lock_key);
	set_bit(KIWI_EPF_PORT, &port->flags);
	mutex_lock(&port->lock);
	port->backlog = backlog;
	port->sctp_llp = sctp;
	kiwi_ep_sock_attach(port, sock, NULL);
	kiwi_ep_set_state(port, KIWI_EP_LISTEN);
	mutex_unlock(&port->lock);
	list_add_tail(&port->port_entry, &kiwi_cm_ports);
	*portp = port;
	return 0;
}

/**
 * kiwi_cm_port_join - a wildcard listener shares its port's socket
 * @l: the listener, not yet published (no cm_id yet: the port hands it
 *	nothing before it listens)
 * @cm_id: the listening id, a wildcard address in m_local_addr
 * @backlog: the listener's backlog; the socket's is the largest asked
 *
 * Process context. Opens the port if no kiwi device of the namespace
 * listens on it yet.
 *
 * Return: 0 or a negative errno (-EADDRINUSE: the port is taken by
 * another socket, e.g. of a process or of another family or transport).
 */
int kiwi_cm_port_join(struct kiwi_ep *l, struct iw_cm_id *cm_id, int backlog)
{
	struct kiwi_ep *port;
	int rv = 0;

	mutex_lock(&kiwi_cm_ports_mutex);
	port = kiwi_cm_port_find(cm_id, l->sctp_llp);
	if (!port) {
		rv = kiwi_cm_port_open(cm_id, backlog, l->sctp_llp, &port);
	} else if (backlog > port->backlog) {
		rv = kernel_listen(port->sock, backlog);
		if (!rv)
			port->backlog = backlog;
	}
	if (!rv) {
		kiwi_ep_get(port);
		l->port = port;
		l->port_dev = to_kdev(cm_id->device)->netdev;
		spin_lock_bh(&port->child_lock);
		list_add_tail(&l->port_entry, &port->members);
		spin_unlock_bh(&port->child_lock);
		kiwi_ep_queue(port, KIWI_EV_DATA);
	}
	mutex_unlock(&kiwi_cm_ports_mutex);
	return rv;
}

/**
 * kiwi_cm_port_leave - a wildcard listener stops sharing its port
 * @l: the listener, its lock not held
 *
 * Process context. Once it returns the port hands @l no connection; the
 * last member to leave closes the port's socket.
 */
void kiwi_cm_port_leave(struct kiwi_ep *l)
{
	struct kiwi_ep *port;
	bool last;

	mutex_lock(&kiwi_cm_ports_mutex);
	port = l->port;
	if (!port) {
		mutex_unlock(&kiwi_cm_ports_mutex);
		return;
	}
	spin_lock_bh(&port->child_lock);
	list_del_init(&l->port_entry);
	last = list_empty(&port->members);
	spin_unlock_bh(&port->child_lock);
	l->port = NULL;
	if (last) {
		list_del_init(&port->port_entry);
		kiwi_cm_close_listener(port);
	}
	mutex_unlock(&kiwi_cm_ports_mutex);
	kiwi_ep_put(port);
}

/*
 * Under rcu_read_lock(): the net_device in @net with the local address
 * @ss (an IPv6 link-local one on the interface its scope names), or NULL.
 * IPv4-mapped addresses were unmapped (kiwi_cm_addrs()).
 */
static struct net_device *kiwi_cm_addr_dev(struct net *net,
					   const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const void *)ss;
	struct net_device *scope = NULL;

	if (ss->ss_family == AF_INET)
		return __ip_dev_find(net,
				     ((const struct sockaddr_in *)ss)->sin_addr.s_addr,
				     false);
	if (ss->ss_family != AF_INET6)
		return NULL;
#if IS_ENABLED(CONFIG_IPV6)
	if (sin6->sin6_scope_id)
		scope = dev_get_by_index_rcu(net, sin6->sin6_scope_id);
	return ipv6_dev_find(net, &sin6->sin6_addr, scope);
#else
	return NULL;
#endif
}

/*
 * Under rcu_read_lock(): how well member @m fits a connection to an
 * address of @dev: 2 on its own device's net_device, 1 on one stacked on
 * it (a VLAN, a bond), 0 elsewhere; a wildcard listen takes connections
 * to every address of its namespace, as a single device's always did.
 */
static int kiwi_cm_member_fit(struct kiwi_ep *m, struct net_device *dev)
{
	if (!dev)
		return 0;
	if (m->port_dev == dev)
		return 2;
	return netdev_has_upper_dev_all_rcu(m->port_dev, dev) ? 1 : 0;
}

/**
 * kiwi_cm_port_member - the member a connection accepted on @port is for
 * @port: the port, its lock held
 * @sock: the accepted socket
 *
 * Return: the best fitting member (a reference; the first of equals), or
 * NULL if the port has none.
 */
struct kiwi_ep *kiwi_cm_port_member(struct kiwi_ep *port, struct socket *sock)
{
	struct sockaddr_storage local, remote;
	struct kiwi_ep *m, *best = NULL;
	struct net_device *dev;
	int fit, best_fit = -1;

	kiwi_cm_addrs(sock, &local, &remote);
	rcu_read_lock();
	dev = kiwi_cm_addr_dev(sock_net(sock->sk), &local);
	spin_lock_bh(&port->child_lock);
	list_for_each_entry(m, &port->members, port_entry) {
		fit = kiwi_cm_member_fit(m, dev);
		if (fit > best_fit) {
			best = m;
			best_fit = fit;
		}
	}
	if (best)
		kiwi_ep_get(best);
	spin_unlock_bh(&port->child_lock);
	rcu_read_unlock();
	return best;
}
