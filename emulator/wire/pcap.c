// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Classic pcap writer (see pcap.h).  Writers append records to a buffer
 * under a mutex; the buffer only ever holds whole records, so every
 * write(2) leaves the file readable up to a record boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pcap.h"
#include "emulator/lib/libc.h"
#include "emulator/lib/quiet_thread.h"

#define PCAP_MAGIC_USEC		0xa1b2c3d4u
#define PCAP_LINKTYPE_ETHERNET	1
#define PCAP_BUF_SIZE		(128 * 1024)	/* > a biggest record */

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_usec;
	uint32_t incl_len;
	uint32_t orig_len;
};

_Static_assert(sizeof(struct pcap_file_hdr) == 24, "pcap file header");
_Static_assert(sizeof(struct pcap_rec_hdr) == 16, "pcap record header");

struct pcap_writer {
	/* under registry_lock */
	struct pcap_writer *next;
	unsigned int refs;

	/* constant after open */
	dev_t dev;
	ino_t ino;
	char *path;
	int fd;
	pid_t pid;			/* process that owns the flusher */
	pthread_t flusher;

	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t cond;		/* to the flusher: data or stop */
	bool stop;
	bool failed;			/* a write failed: capture off */
	struct timespec first;		/* oldest record (MONOTONIC) */
	size_t used;
	unsigned char buf[PCAP_BUF_SIZE];
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcap_writer *open_writers;

static int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = emu_libc_write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

static void flush_locked(struct pcap_writer *w)
{
	int ret;

	if (!w->used || w->failed)
		goto out;
	ret = write_all(w->fd, w->buf, w->used);
	if (ret) {
		fprintf(stderr,
			"mana-emu: pcap %s: write: %s; capture stopped\n",
			w->path, strerror(-ret));
		w->failed = true;
	}
out:
	w->used = 0;
}

static struct timespec add_ms(struct timespec t, long ms)
{
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static void *flusher_main(void *arg)
{
	struct pcap_writer *w = arg;
	struct timespec due;
	int ret;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if (!w->used) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		due = add_ms(w->first, PCAP_FLUSH_MS);
		ret = pthread_cond_timedwait(&w->cond, &w->lock, &due);
		if (ret == ETIMEDOUT)
			flush_locked(w);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void pcap_write(struct pcap_writer *w, const void *frame, size_t len)
{
	struct pcap_rec_hdr rec;
	struct timespec now;
	size_t incl = len < PCAP_SNAPLEN ? len : PCAP_SNAPLEN;

	pthread_mutex_lock(&w->lock);
	if (w->failed)
		goto out;
	if (w->used + sizeof(rec) + incl > sizeof(w->buf))
		flush_locked(w);
	/* Stamped under the lock so the file is in time order. */
	clock_gettime(CLOCK_REALTIME, &now);
	rec.ts_sec = (uint32_t)now.tv_sec;
	rec.ts_usec = (uint32_t)(now.tv_nsec / 1000);
	rec.incl_len = (uint32_t)incl;
	rec.orig_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	if (!w->used) {
		clock_gettime(CLOCK_MONOTONIC, &w->first);
		pthread_cond_signal(&w->cond);
	}
	memcpy(w->buf + w->used, &rec, sizeof(rec));
	memcpy(w->buf + w->used + sizeof(rec), frame, incl);
	w->used += sizeof(rec) + incl;
out:
	pthread_mutex_unlock(&w->lock);
}

static int writer_sync_init(struct pcap_writer *w)
{
	pthread_condattr_t ca;
	int ret;

	ret = pthread_condattr_init(&ca);
	if (ret)
		return ret;
	ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		return ret;
	ret = pthread_mutex_init(&w->lock, NULL);
	if (ret)
		pthread_cond_destroy(&w->cond);
	return ret;
}

static int write_file_header(int fd)
{
	const struct pcap_file_hdr hdr = {
		.magic = PCAP_MAGIC_USEC,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = PCAP_SNAPLEN,
		.linktype = PCAP_LINKTYPE_ETHERNET,
	};

	return write_all(fd, &hdr, sizeof(hdr));
}

static struct pcap_writer *writer_create(const char *path)
{
	struct pcap_writer *w;
	struct stat st;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->refs = 1;
	w->pid = getpid();
	w->path = strdup(path);
	if (!w->path)
		goto err_free;
	w->fd = emu_libc_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		goto err_path;
	if (emu_libc_fstat(w->fd, &st))
		goto err_close;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	ret = write_file_header(w->fd);
	if (ret) {
		errno = -ret;
		goto err_close;
	}
	ret = writer_sync_init(w);
	if (ret)
		goto err_errno;
	ret = start_quiet_thread(&w->flusher, flusher_main, w);
	if (ret)
		goto err_sync;
	return w;

err_sync:
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
err_errno:
	errno = ret;
err_close:
	ret = errno;
	emu_libc_close(w->fd);
	errno = ret;
err_path:
	free(w->path);
err_free:
	ret = errno;
	free(w);
	errno = ret;
	return NULL;
}

/* A writer of this process already open on the file @path names. */
static struct pcap_writer *find_shared(const char *path)
{
	struct pcap_writer *w;
	struct stat st;

	if (emu_libc_stat(path, &st))
		return NULL;
	for (w = open_writers; w; w = w->next)
		if (w->dev == st.st_dev && w->ino == st.st_ino)
			return w;
	return NULL;
}

struct pcap_writer *pcap_open(const char *path)
{
	struct pcap_writer *w;

	pthread_mutex_lock(&registry_lock);
	w = find_shared(path);
	if (w) {
		w->refs++;
		goto out;
	}
	w = writer_create(path);
	if (w) {
		w->next = open_writers;
		open_writers = w;
	}
out:
	pthread_mutex_unlock(&registry_lock);
	return w;
}

/* Unlink @w from the registry if this was its last reference. */
static bool put_ref(struct pcap_writer *w)
{
	struct pcap_writer **pp;
	bool last;

	pthread_mutex_lock(&registry_lock);
	last = --w->refs == 0;
	for (pp = &open_writers; last && *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	return last;
}

/*
 * In a forked child the flusher and the buffered records are the
 * parent's (the file offset is shared): only drop our descriptor.
 */
static void forked_child_close(struct pcap_writer *w)
{
	emu_libc_close(w->fd);
	free(w->path);
	free(w);
}

void pcap_close(struct pcap_writer *w)
{
	if (!w || !put_ref(w))
		return;
	if (w->pid != getpid()) {
		forked_child_close(w);
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->flusher, NULL);

	flush_locked(w);	/* the flusher is gone: nobody else left */
	if (emu_libc_close(w->fd) && !w->failed)
		fprintf(stderr, "mana-emu: pcap %s: close: %s\n", w->path,
			strerror(errno));
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w->path);
	free(w);
}
