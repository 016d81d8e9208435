// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The loopback wire: a single-producer single-consumer ring of reused
 * buffers (no lock, no allocation per frame), filled by backend_xmit()
 * or in place (backend_tx_buf(), backend_lb_*() of backend.h) and
 * delivered by backend_poll() or taken in place (backend_rx_burst(),
 * backend_lb_*()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend_int.h"
#include "pcap.h"

int backend_loopback_init(struct backend *b)
{
	b->lb.ring = calloc(LOOPBACK_DEPTH, sizeof(*b->lb.ring));
	return b->lb.ring ? 0 : -ENOMEM;
}

void backend_loopback_fini(struct backend *b)
{
	unsigned int i;

	for (i = 0; i < LOOPBACK_DEPTH; i++)
		free(b->lb.ring[i].data);
	free(b->lb.ring);
}

/* The slot for the next frame, holding at least @cap bytes; NULL if full. */
struct lb_slot *backend_lb_slot_get(struct backend *b, size_t cap)
{
	unsigned int tail = atomic_load_explicit(&b->lb.tail,
						 memory_order_relaxed);
	unsigned int head = atomic_load_explicit(&b->lb.head,
						 memory_order_acquire);
	struct lb_slot *s = &b->lb.ring[tail & (LOOPBACK_DEPTH - 1)];

	if (tail - head >= LOOPBACK_DEPTH)
		return NULL;
	if (s->cap < cap) {
		size_t n = cap < LB_SLOT_MIN ? LB_SLOT_MIN : cap;
		unsigned char *d = realloc(s->data, n);

		if (!d)
			return NULL;
		s->data = d;
		s->cap = n;
	}
	return s;
}

/* Publish the slot backend_lb_slot_get() returned, now holding @len bytes. */
void backend_lb_publish(struct backend *b, struct lb_slot *s, size_t len)
{
	unsigned int tail = atomic_load_explicit(&b->lb.tail,
						 memory_order_relaxed);

	s->len = len;
	/* before the frame is published, so its record precedes the received one */
	if (b->pcap)
		pcap_write(b->pcap, s->data, len);
	atomic_store_explicit(&b->lb.tail, tail + 1, memory_order_release);
}

bool backend_loopback_xmit(struct backend *b, const void *frame, size_t len)
{
	struct lb_slot *s = backend_lb_slot_get(b, len);

	if (!s)
		return false;
	memcpy(s->data, frame, len);
	backend_lb_publish(b, s, len);
	return true;
}

unsigned int backend_poll(struct backend *b)
{
	unsigned int head, tail, done = 0;

	if (b->kind != BACKEND_LOOPBACK)
		return 0;
	/* Only what is queued now, so rx callbacks that transmit end. */
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	tail = atomic_load_explicit(&b->lb.tail, memory_order_acquire);
	for (; head != tail; head++, done++) {
		const struct lb_slot *s = &b->lb.ring[head & (LOOPBACK_DEPTH - 1)];

		backend_deliver(b, s->data, s->len);
		/* the slot is free only once delivered */
		atomic_store_explicit(&b->lb.head, head + 1,
				      memory_order_release);
	}
	return done;
}

unsigned int backend_rx_burst(struct backend *b, struct backend_rx *out,
			      unsigned int max)
{
	unsigned int head, tail, n;
	uint64_t bytes = 0;

	if (b->kind != BACKEND_LOOPBACK)
		return 0;
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	tail = atomic_load_explicit(&b->lb.tail, memory_order_acquire);
	/* backend_loopback_xmit() and backend_tx_commit() queue only valid lengths */
	for (n = 0; n < max && head + n != tail; n++) {
		const struct lb_slot *s =
			&b->lb.ring[(head + n) & (LOOPBACK_DEPTH - 1)];

		out[n].data = s->data;
		out[n].len = s->len;
		bytes += s->len;
		if (b->pcap)
			pcap_write(b->pcap, s->data, s->len);
	}
	if (n) {
		count(&b->cnt.rx_frames, n);
		count(&b->cnt.rx_bytes, bytes);
	}
	return n;
}

void backend_rx_release(struct backend *b, unsigned int n)
{
	unsigned int head;

	if (!n)
		return;
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	atomic_store_explicit(&b->lb.head, head + n, memory_order_release);
}

struct backend_lb *backend_lb(struct backend *b)
{
	return b->kind == BACKEND_LOOPBACK && !b->pcap ? &b->lb : NULL;
}

void backend_lb_account(struct backend *b, uint64_t tx_frames,
			uint64_t tx_bytes, uint64_t rx_frames,
			uint64_t rx_bytes)
{
	count(&b->cnt.tx_frames, tx_frames);
	count(&b->cnt.tx_bytes, tx_bytes);
	count(&b->cnt.rx_frames, rx_frames);
	count(&b->cnt.rx_bytes, rx_bytes);
}

void *backend_tx_buf(struct backend *b, size_t cap)
{
	struct lb_slot *s;

	if (b->kind == BACKEND_LOOPBACK && cap <= BACKEND_TX_BUF) {
		s = backend_lb_slot_get(b, cap);
		if (s)
			return s->data;
	}
	/* full ring: backend_tx_commit() drops and counts it */
	return b->txbuf;
}

void backend_tx_commit(struct backend *b, void *buf, size_t len)
{
	unsigned int tail;
	struct lb_slot *s;

	if (buf == b->txbuf) {
		backend_xmit(b, buf, len);
		return;
	}
	tail = atomic_load_explicit(&b->lb.tail, memory_order_relaxed);
	s = &b->lb.ring[tail & (LOOPBACK_DEPTH - 1)];
	if (len < ETH_MIN_FRAME || len > BACKEND_MAX_FRAME || len > s->cap) {
		count(&b->cnt.tx_drops, 1);
		return;
	}
	backend_lb_publish(b, s, len);
	count(&b->cnt.tx_frames, 1);
	count(&b->cnt.tx_bytes, len);
}
