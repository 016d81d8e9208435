// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Classic pcap writer (see pcap.h).  Each record goes to the file by one
 * write(2) under the writer's mutex, so the file is readable up to a
 * record boundary at any moment.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#define PCAP_MAGIC_USEC		0xa1b2c3d4u
#define PCAP_LINKTYPE_ETHERNET	1

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

#define PCAP_REC_MAX	(sizeof(struct pcap_rec_hdr) + PCAP_SNAPLEN)

struct pcap_writer {
	/* under registry_lock */
	struct pcap_writer *next;
	unsigned int refs;

	/* constant after open */
	dev_t dev;
	ino_t ino;
	char *path;
	int fd;

	pthread_mutex_t lock;		/* everything below */
	bool failed;			/* a write failed: capture off */
	unsigned char rec[PCAP_REC_MAX];	/* the record being written */
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

/*
 * Each record is written as it is captured, by one write(2) under the
 * lock: the file (the kernel's) holds every frame whatever way the
 * process ends afterwards -- SIGKILL, _exit(), or (glibc before 2.41)
 * a second thread's exit() ending the process while the first still
 * runs our destructor, as rping's CM thread does: frames held back in
 * the process for a later flush were lost with it.
 */
void pcap_write(struct pcap_writer *w, const void *frame, size_t len)
{
	struct pcap_rec_hdr rec;
	struct timespec now;
	size_t incl = len < PCAP_SNAPLEN ? len : PCAP_SNAPLEN;
	int ret;

	pthread_mutex_lock(&w->lock);
	if (w->failed)
		goto out;
	/* Stamped under the lock so the file is in time order. */
	clock_gettime(CLOCK_REALTIME, &now);
	rec.ts_sec = (uint32_t)now.tv_sec;
	rec.ts_usec = (uint32_t)(now.tv_nsec / 1000);
	rec.incl_len = (uint32_t)incl;
	rec.orig_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	memcpy(w->rec, &rec, sizeof(rec));
	memcpy(w->rec + sizeof(rec), frame, incl);
	ret = write_all(w->fd, w->rec, sizeof(rec) + incl);
	if (ret) {
		fprintf(stderr,
			"mana-emu: pcap %s: write: %s; capture stopped\n",
			w->path, strerror(-ret));
		w->failed = true;
	}
out:
	pthread_mutex_unlock(&w->lock);
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
	ret = pthread_mutex_init(&w->lock, NULL);
	if (ret) {
		errno = ret;
		goto err_close;
	}
	return w;

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
 * Every record is in the file already.  In a forked child the writer is
 * a copy whose descriptor shares the parent's file offset: each side's
 * records stay whole (one write(2) each) and it drops only its own fd.
 */
void pcap_close(struct pcap_writer *w)
{
	if (!w || !put_ref(w))
		return;
	if (emu_libc_close(w->fd) && !w->failed)
		fprintf(stderr, "mana-emu: pcap %s: close: %s\n", w->path,
			strerror(errno));
	pthread_mutex_destroy(&w->lock);
	free(w->path);
	free(w);
}
