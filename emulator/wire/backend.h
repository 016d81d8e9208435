/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Wire backends: where a port's transmitted frames go and where its
 * received frames come from.  One backend per port (--backend=, default
 * loopback), optionally wrapped by a pcap capture (--pcap=FILE).
 *
 * The device model calls backend_xmit() for every frame a send queue
 * transmits.  A backend hands every frame that arrives for the port to the
 * rx callback the device model registered, from whatever thread it runs on
 * (loopback: the caller of backend_xmit, after it returns — never
 * re-entrantly from inside backend_xmit; socket/tap: a backend thread).
 */
#ifndef MANA_EMU_BACKEND_H
#define MANA_EMU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define BACKEND_MAX_FRAME 9216	/* jumbo frames; larger are dropped and counted */

struct backend;

/* Device model entry point for a received frame (copied by the callee). */
typedef void (*backend_rx_fn)(void *rx_ctx, unsigned int port,
			      const void *frame, size_t len);

struct backend_stats {
	uint64_t tx_frames, tx_bytes, tx_drops;	/* drops: backend could not send */
	uint64_t rx_frames, rx_bytes, rx_drops;	/* drops: too large, malformed */
};

/* A message into @err (if any room), for callers that report parse errors. */
void emu_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parse a --backend value: "loopback", "null", "socket:PATH", "tap:IFNAME".
 * Returns 0 or -EINVAL and a message in err.  Used by the option parser.
 */
int backend_spec_check(const char *spec, char *err, size_t errlen);

/*
 * Open the backend of @port described by @spec, capturing to @pcap_path
 * (NULL: no capture).  Frames arriving are handed to rx(rx_ctx, port, ...).
 * Returns NULL with errno set and a message on stderr on failure.
 */
struct backend *backend_open(const char *spec, const char *pcap_path,
			     unsigned int port, backend_rx_fn rx, void *rx_ctx);

/*
 * Transmit one frame.  Loopback queues the frame and delivers it from
 * backend_poll(); the others send it now.  Never blocks for long; a frame
 * that cannot be sent is dropped and counted.
 */
void backend_xmit(struct backend *b, const void *frame, size_t len);

/*
 * Transmit without an intermediate copy: backend_tx_buf() returns a
 * buffer of at least @cap bytes (cap <= BACKEND_TX_BUF) to build the frame
 * in -- for loopback the next slot of its ring, else a buffer of the
 * backend's -- and backend_tx_commit() sends the first @len bytes of it
 * as backend_xmit() would.  One frame at a time, from one thread.
 */
#define BACKEND_TX_BUF (BACKEND_MAX_FRAME + 4)
void *backend_tx_buf(struct backend *b, size_t cap);
void backend_tx_commit(struct backend *b, void *buf, size_t len);

/* A received frame, as backend_rx_burst() hands it over. */
struct backend_rx {
	const void *data;
	size_t len;
};

/*
 * Loopback: the (at most @max) oldest queued frames by pointer into the
 * ring, counted as received and captured; they stay in place until
 * backend_rx_release(b, n) frees the n oldest.  Returns how many; 0 for
 * the other kinds (their frames come through the rx callback).
 */
unsigned int backend_rx_burst(struct backend *b, struct backend_rx *out,
			      unsigned int max);
void backend_rx_release(struct backend *b, unsigned int n);

/*
 * Deliver frames the backend queued for the caller's thread (loopback).
 * Returns the number delivered.  The device thread calls it after each
 * doorbell batch.
 */
unsigned int backend_poll(struct backend *b);

void backend_stats(const struct backend *b, struct backend_stats *out);

/* Stop threads, flush and close the capture, free. */
void backend_close(struct backend *b);

#endif /* MANA_EMU_BACKEND_H */
