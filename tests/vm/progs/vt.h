/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the kiwi VM test programs: device lookup, option
 * parsing and failure reporting. Every program exits 0 only when every
 * check it made passed, 1 when a check failed and 2 on a usage or setup
 * error, and names each failed check on stderr.
 */
#ifndef KIWI_VT_H
#define KIWI_VT_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define VT_DEFAULT_DEV "kiwi0"

/* Number of failed checks so far; vt_exit() turns it into the exit code. */
extern unsigned int vt_failures;
extern const char *vt_prog;

/* Name the program in reports and make stdout line-buffered. */
void vt_init(const char *prog);
void vt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vt_pass(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vt_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* Report "FAIL: " and the message on stderr, then exit with @code. */
void vt_die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
int vt_exit(void);

/* Open the verbs device called @name or exit with status 2. */
struct ibv_context *vt_open(const char *name);

/* Write "ready\n" to @path (if not NULL) so a waiting scenario can go on. */
void vt_signal_ready(const char *path);

/*
 * Check that a verb returning NULL/nonzero failed with @want_errno.
 * @what names the check; @got_errno is errno (or the returned error code).
 */
void vt_expect_errno(const char *what, bool failed, int got_errno,
		     int want_errno);

/* Parse a non-negative decimal option value or exit with status 2. */
unsigned long vt_ulong(const char *opt, const char *arg);

/* Milliseconds of CLOCK_MONOTONIC. */
long long vt_now_ms(void);

/* One completion of @cq into @wc within @ms milliseconds, or false. */
bool vt_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms);

/* The state of @qp (ibv_query_qp), or exit with status 2. */
enum ibv_qp_state vt_qp_state(struct ibv_qp *qp);

/*
 * Move @qp to state @s; INIT also sets the access flags @access (the
 * attribute mask iw_cm uses). Return: ibv_modify_qp()'s result.
 */
int vt_qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s, int access);

/*
 * Post a signaled RDMA Write or Read (@op) of @len octets of @buf (@lkey)
 * to @raddr under @rkey on @qp. Return: ibv_post_send()'s result.
 */
int vt_post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		 void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey);

/*
 * Post a receive of up to @len octets into @buf (@lkey) as @wr_id on @qp.
 * Return: ibv_post_recv()'s result.
 */
int vt_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *buf, uint32_t len,
		 uint32_t lkey);

/*
 * Does `rdma res show qp -dd` show that QP @qpn of @ctx's device sent
 * Terminate @term ("L/E/0xEC")? Waits up to 5 s for it.
 */
bool vt_term_sent(struct ibv_context *ctx, uint32_t qpn, const char *term);

/*
 * write(2)-family system calls of this process so far (syscw of
 * /proc/self/io), or -1 without task I/O accounting. Reading it makes
 * none; nothing may be printed between two readings.
 */
long long vt_syscw(void);

#endif
