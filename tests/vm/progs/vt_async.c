// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_async: open a device, signal readiness, then wait for an exact
 * sequence of asynchronous events on it.
 *
 *   vt_async [-d DEV] -e EVENT[,EVENT...] [-t SECONDS] [-q MSEC] [-r FILE]
 *
 * EVENT is PORT_ACTIVE, PORT_ERR or DEVICE_FATAL. Port events must name
 * port 1. A repeat of the event just matched is tolerated (and printed): a
 * driver may report one netdev transition twice (rxe does for UP and
 * CHANGE). After the last expected event the program keeps listening for
 * -q milliseconds (default 1000). Any other event, an event out of order
 * and a timeout (-t, default 60 s) are failures.
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <unistd.h>

#include "vt.h"

#define VT_MAX_EVENTS 16

static const struct {
	const char *name;
	enum ibv_event_type type;
} vt_event_names[] = {
	{ "PORT_ACTIVE", IBV_EVENT_PORT_ACTIVE },
	{ "PORT_ERR", IBV_EVENT_PORT_ERR },
	{ "DEVICE_FATAL", IBV_EVENT_DEVICE_FATAL },
};

static enum ibv_event_type parse_event(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(vt_event_names) / sizeof(vt_event_names[0]);
	     i++)
		if (!strcmp(name, vt_event_names[i].name))
			return vt_event_names[i].type;
	vt_fatal("unknown event name '%s'", name);
}

static size_t parse_list(char *list, enum ibv_event_type *out)
{
	size_t n = 0;
	char *tok, *save;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == VT_MAX_EVENTS)
			vt_fatal("more than %d events", VT_MAX_EVENTS);
		out[n++] = parse_event(tok);
	}
	if (!n)
		vt_fatal("empty event list");
	return n;
}

/* Wait up to @ms for the next event; false on timeout. */
static bool next_event(struct ibv_context *ctx, long long ms,
		       struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long long deadline = vt_now_ms() + ms;
	int rc;

	for (;;) {
		long long left = deadline - vt_now_ms();

		if (left < 0)
			left = 0;
		rc = poll(&pfd, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			vt_fatal("poll: %s", strerror(errno));
		if (rc == 0)
			return false;
		if (!ibv_get_async_event(ctx, ev))
			return true;
		if (errno != EAGAIN)
			vt_fatal("ibv_get_async_event: %s", strerror(errno));
	}
}

static void check_event(const struct ibv_async_event *ev,
			enum ibv_event_type want, size_t idx)
{
	bool port_ev = ev->event_type == IBV_EVENT_PORT_ACTIVE ||
		       ev->event_type == IBV_EVENT_PORT_ERR;

	if (ev->event_type != want) {
		vt_fail("event #%zu is %s, expected %s", idx,
			ibv_event_type_str(ev->event_type),
			ibv_event_type_str(want));
		return;
	}
	if (port_ev && ev->element.port_num != 1) {
		vt_fail("event #%zu %s names port %d, expected 1", idx,
			ibv_event_type_str(ev->event_type),
			ev->element.port_num);
		return;
	}
	vt_pass("event #%zu %s", idx, ibv_event_type_str(ev->event_type));
}

/* True (and printed) if @ev repeats the event matched just before #@i. */
static bool repeat(const struct ibv_async_event *ev,
		   const enum ibv_event_type *want, size_t i)
{
	if (!i || ev->event_type != want[i - 1])
		return false;
	printf("%s: note: repeated event %s\n", vt_prog,
	       ibv_event_type_str(ev->event_type));
	return true;
}

int main(int argc, char **argv)
{
	enum ibv_event_type want[VT_MAX_EVENTS];
	const char *dev = VT_DEFAULT_DEV, *ready = NULL;
	unsigned long timeout_s = 60, quiet_ms = 1000;
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	long long deadline;
	size_t n = 0, i;
	int opt, flags;

	vt_init("vt_async");
	while ((opt = getopt(argc, argv, "d:e:t:q:r:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'e':
			n = parse_list(optarg, want);
			break;
		case 't':
			timeout_s = vt_ulong("-t", optarg);
			break;
		case 'q':
			quiet_ms = vt_ulong("-q", optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			n = 0;
			break;
		}
	}
	if (!n || optind != argc) {
		fprintf(stderr, "usage: vt_async [-d DEV] -e EVENT[,EVENT...] [-t S] [-q MS] [-r FILE]\n");
		return 2;
	}
	ctx = vt_open(dev);
	flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		vt_fatal("fcntl(async_fd): %s", strerror(errno));
	vt_signal_ready(ready);

	deadline = vt_now_ms() + (long long)timeout_s * 1000;
	for (i = 0; i < n; i++) {
		if (!next_event(ctx, deadline - vt_now_ms(), &ev)) {
			vt_fail("timeout after %lus waiting for event #%zu %s",
				timeout_s, i, ibv_event_type_str(want[i]));
			break;
		}
		if (repeat(&ev, want, i)) {
			i--;
		} else {
			check_event(&ev, want[i], i);
		}
		ibv_ack_async_event(&ev);
	}
	while (i == n && next_event(ctx, quiet_ms, &ev)) {
		if (!repeat(&ev, want, n))
			vt_fail("unexpected extra event %s",
				ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	if (ibv_close_device(ctx))
		vt_fail("ibv_close_device: %s", strerror(errno));
	return vt_exit();
}
