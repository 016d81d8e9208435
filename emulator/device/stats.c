// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Statistics (the --stats file, also written from a fatal signal) and the
 * test API of mana_emu.h; process exit.
 */
#include "device.h"
#include "device_int.h"
#include "rc_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emulator/mana_emu.h"
#include "emulator/lib/libc.h"

static const char *type_name(enum emu_hwq_type t)
{
	return t == EMU_HWQ_SQ ? "sq" : t == EMU_HWQ_RQ ? "rq" : "cq";
}

/*
 * The statistics file is written with the real write() through a small
 * buffer: the same code runs from a fatal signal's handler (stats_out is
 * async-signal-safe but for vsnprintf of integers and strings).
 */
struct stats_out {
	int fd;
	int err;		/* first -errno */
	size_t n;
	char buf[4096];
};

static void sout_flush(struct stats_out *o)
{
	size_t off = 0;
	ssize_t w;

	while (off < o->n && !o->err) {
		w = emu_libc_write(o->fd, o->buf + off, o->n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? -errno : -EIO;
		else
			off += w;
	}
	o->n = 0;
}

static void __attribute__((format(printf, 2, 3)))
sout(struct stats_out *o, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (o->n > sizeof(o->buf) - 256)
		sout_flush(o);
	va_start(ap, fmt);
	len = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
	va_end(ap);
	if (len > 0)
		o->n += (size_t)len < sizeof(o->buf) - o->n ?
			(size_t)len : sizeof(o->buf) - o->n - 1;
}

static void dump_queue(struct stats_out *f, enum emu_hwq_type t, uint32_t id,
		       const struct emu_queue_stats *st)
{
	sout(f, "%s %u %llu %llu %llu %llu\n", type_name(t), id,
	     (unsigned long long)st->frames, (unsigned long long)st->bytes,
	     (unsigned long long)st->drops, (unsigned long long)st->errors);
}

static void dump_ports(struct stats_out *f)
{
	struct backend_stats bs;
	unsigned int p;

	sout(f, "# port N SPEC tx_frames tx_bytes tx_drops rx_frames "
	     "rx_bytes rx_drops unsteered\n");
	for (p = 1; p <= emu.opts.ports; p++) {
		struct backend *b = emu_ports[p - 1].backend;

		memset(&bs, 0, sizeof(bs));
		if (b)
			backend_stats(b, &bs);
		sout(f, "port %u %s %llu %llu %llu %llu %llu %llu %llu\n", p,
		     mana_emu_port_backend(&emu.opts, p),
		     (unsigned long long)bs.tx_frames,
		     (unsigned long long)bs.tx_bytes,
		     (unsigned long long)bs.tx_drops,
		     (unsigned long long)bs.rx_frames,
		     (unsigned long long)bs.rx_bytes,
		     (unsigned long long)(bs.rx_drops +
					  devst.port_rxq_drops[p - 1]),
		     (unsigned long long)devst.port_unsteered[p - 1]);
	}
}

static void stats_line(void *arg, const char *line)
{
	sout(arg, "%s\n", line);
}

/*
 * Destroyed queues first (in destruction order), then the live ones.
 * 0 or -errno, with the message on stderr.
 */
static int dump_stats(const char *path)
{
	static struct stats_out o;	/* not on a signal handler's stack */
	unsigned int t, b;
	struct emu_hwq *q;
	size_t i;

	o.n = 0;
	o.err = 0;
	o.fd = emu_libc_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (o.fd < 0) {
		o.err = -errno;
		goto out;
	}
	sout(&o, "# type id frames bytes drops errors\n");
	for (i = 0; i < devst.nretired; i++)
		dump_queue(&o, devst.retired[i].type, devst.retired[i].id,
			   &devst.retired[i].st);
	for (t = EMU_HWQ_SQ; t <= EMU_HWQ_CQ; t++)
		for (b = 0; b < HWQ_HASH_SIZE; b++)
			for (q = devst.hash[t][b]; q; q = q->hash_next)
				dump_queue(&o, q->type, q->id, &q->st);
	dump_ports(&o);
	emu_rc_stats(stats_line, &o);
	sout(&o, "# device doorbells bad_doorbells foreign_doorbells "
	     "frames_sent fatals cq_errors\n");
	sout(&o, "device %llu %llu %llu %llu %u %llu\n",
	     (unsigned long long)devst.doorbells,
	     (unsigned long long)devst.bad_doorbells,
	     (unsigned long long)devst.foreign_doorbells,
	     (unsigned long long)devst.tx_total, devst.fatal_count,
	     (unsigned long long)devst.cq_overruns);
	sout_flush(&o);
	if (emu_libc_close(o.fd) && !o.err && errno != EINTR)
		o.err = -errno;
out:
	if (o.err) {
		char msg[PATH_MAX + 96];
		int len = snprintf(msg, sizeof(msg), "mana-emu: stats %s: %s\n",
				   path, strerror(-o.err));

		if (len > 0 && emu_libc_write(STDERR_FILENO, msg, strnlen(msg, sizeof(msg))) < 0)
			len = 0;	/* nowhere left to say it */
		emu_report_failure('S');
	}
	return o.err;
}

/*
 * A fatal signal is about to end the process: write the statistics now,
 * as exit would.  Without the lock if another thread holds it (the
 * process is dying; a torn counter beats no file).
 */
void emu_device_dump_on_signal(void)
{
	const char *path = emu.opts.stats[0] ? emu.opts.stats :
					       getenv(MANA_EMU_ENV_STATS);
	bool locked = !pthread_mutex_trylock(&emu.lock);
	static atomic_bool done;

	if (path && *path && devst.used && !atomic_exchange(&done, true))
		dump_stats(path);
	if (locked)
		pthread_mutex_unlock(&emu.lock);
}

/* Wait (bounded) for the device thread to leave. */
void dev_stop(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	devst.shutdown = true;
	dev_wake();
	while (devst.running &&
	       pthread_cond_timedwait(&devst.stopped, &emu.lock, &until) !=
		       ETIMEDOUT)
		;
}

void emu_device_shutdown(void)
{
	const char *path = emu.opts.stats[0] ? emu.opts.stats :
					       getenv(MANA_EMU_ENV_STATS);
	unsigned int p;

	pthread_mutex_lock(&emu.lock);
	dev_stop();
	/* processes that never had a queue (helpers, children) keep quiet */
	if (path && *path && devst.used)
		dump_stats(path);
	pthread_mutex_unlock(&emu.lock);
	if (devst.running)
		return;		/* still inside the queues: leave it all */
	for (p = 1; p <= emu.opts.ports; p++) {
		backend_close(emu_ports[p - 1].backend);
		backend_close(emu_ports[p - 1].vm_wire);
		emu_ports[p - 1].backend = NULL;
		emu_ports[p - 1].vm_wire = NULL;
		emu_ports[p - 1].lb = NULL;
	}
}

EMU_EXPORT uint64_t mana_emu_user_faults(void)
{
	uint64_t pvm, faults;

	emu_user_copy_counters(&pvm, &faults);
	return faults + atomic_load(&devst.ucopy_faults);
}

EMU_EXPORT uint64_t mana_emu_device_syscalls(void)
{
	uint64_t pvm, faults;

	emu_user_copy_counters(&pvm, &faults);
	return pvm + atomic_load(&devst.sleep_syscalls);
}

EMU_EXPORT uint64_t mana_emu_device_wakeups(void)
{
	return trap_event_wake_calls();
}

/*
 * Wait until the device has handled every doorbell rung and every frame
 * received before the call: one whole round that found no work, begun
 * after we took the lock.  Stores are queued before they return, so none
 * can be missed.
 */
EMU_EXPORT int mana_emu_quiesce(int timeout_ms)
{
	struct timespec until;
	uint64_t round;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&emu.lock);
	round = devst.idle_rounds;
	while (devst.running && devst.idle_rounds == round && !ret) {
		dev_wake();
		ret = pthread_cond_timedwait(&devst.idle, &emu.lock, &until);
	}
	pthread_mutex_unlock(&emu.lock);
	return ret ? -ETIMEDOUT : 0;
}

EMU_EXPORT int mana_emu_queue_info(uint32_t type, uint32_t id,
				   struct mana_emu_queue_info *out)
{
	struct emu_hwq *q;
	int ret = -ENOENT;

	pthread_mutex_lock(&emu.lock);
	q = emu_hwq_find(type, id);
	if (q && out) {
		memset(out, 0, sizeof(*out));
		out->type = q->type;
		out->id = q->id;
		out->buf_addr = q->buf;
		out->buf_size = q->size;
		out->entries = q->type == EMU_HWQ_CQ ? q->count : 0;
		out->cq_id = q->cq ? q->cq->id : UINT32_MAX;
		out->port = q->port;
		out->tx_vp_offset = q->tx_vp_offset;
		out->db_page = devst.ops && devst.ops->db_page ?
			       devst.ops->db_page(q->ctx) : 0;
		out->frames = q->st.frames;
		out->bytes = q->st.bytes;
		out->drops = q->st.drops;
		out->errors = q->st.errors;
		ret = 0;
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

EMU_EXPORT int mana_emu_rss_info(uint32_t port, struct mana_emu_rss_info *out)
{
	const struct emu_port_rx *v;
	int ret = -ENOENT;
	unsigned int k;

	pthread_mutex_lock(&emu.lock);
	if (port >= 1 && port <= emu.opts.ports && out) {
		v = &emu_ports[port - 1].rx;
		if (v->programmed) {
			memset(out, 0, sizeof(*out));
			out->enabled = v->rss_enabled;
			out->num_entries = v->num_entries;
			out->default_rq = v->default_rq->id;
			for (k = 0; k < EMU_RSS_INDIR; k++)
				out->rq_ids[k] = v->indir[k]->id;
			memcpy(out->key, v->key, sizeof(out->key));
			out->fields_mask = v->fields_mask;
			ret = 0;
		}
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}
