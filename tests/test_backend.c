// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Wire backend tests: spec strings, loopback (order, content, overflow,
 * no delivery inside xmit), null, socket:PATH in one process, after a
 * crashed owner and between two processes started in either order, pcap
 * captures checked byte by byte (and by tshark when installed) including
 * one left by a killed process, and tap:IFNAME in a private network
 * namespace when root.  Ends by checking that no thread or descriptor
 * outlived its backend.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* unshare() */
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "emulator/wire/backend.h"
#include "emulator/wire/pcap.h"
#include "check.h"

#define TEST_ETHERTYPE	0x88b5		/* local experimental */
#define SEQ_PROBE	0xfffff000u	/* link probes, not data */
#define SEQ_BYE		0xfffffffeu	/* the forked peer stops */
#define LOOPBACK_DEPTH	4096		/* what backend.c promises */
#define WAIT_MS		10000

#ifdef __SANITIZE_THREAD__
#define COUNT_THREADS	0	/* TSan starts a thread of its own */
#else
#define COUNT_THREADS	1
#endif

static char tmpdir[64];

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- test frames --------------------------------------------------------- */

static size_t frame_len(uint32_t seq)
{
	if (seq % 97 == 0)
		return BACKEND_MAX_FRAME - seq % 5;
	return 60 + (seq * 37) % 1455;
}

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 7 + i);
}

/* Ours: 02:..:01 <- 02:..:02, TEST_ETHERTYPE, seq (BE), pattern. */
static void make_frame(uint32_t seq, uint8_t *buf, size_t len)
{
	static const uint8_t hdr[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	uint32_t be = htonl(seq);
	size_t i;

	memcpy(buf, hdr, sizeof(hdr));
	buf[12] = TEST_ETHERTYPE >> 8;
	buf[13] = TEST_ETHERTYPE & 0xff;
	memcpy(buf + 14, &be, 4);
	for (i = 18; i < len; i++)
		buf[i] = pattern(seq, i);
}

enum frame_class { FRAME_FOREIGN, FRAME_BAD, FRAME_OK };

static enum frame_class classify(const uint8_t *f, size_t len, uint32_t *seq)
{
	uint8_t want[18];
	uint32_t be;
	size_t i;

	if (len < 18 || f[12] != TEST_ETHERTYPE >> 8 ||
	    f[13] != (TEST_ETHERTYPE & 0xff))
		return FRAME_FOREIGN;
	memcpy(&be, f + 14, 4);
	*seq = ntohl(be);
	make_frame(*seq, want, sizeof(want));
	if (memcmp(f, want, sizeof(want)))
		return FRAME_BAD;
	for (i = 18; i < len; i++)
		if (f[i] != pattern(*seq, i))
			return FRAME_BAD;
	return FRAME_OK;
}

/* ---- the rx callback's side ---------------------------------------------- */

struct collector {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int port;
	uint32_t *seqs;
	size_t *lens;
	size_t n, cap;
	unsigned int bad, foreign, probes, wrong_port;
	bool bye;
	atomic_bool in_xmit;		/* set around backend_xmit() */
	atomic_uint reentered;		/* deliveries while it was set */
	_Atomic(struct backend *) echo;	/* send every frame back here */
};

static void collector_init(struct collector *c, unsigned int port)
{
	pthread_condattr_t ca;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	c->port = port;
}

static void collector_fini(struct collector *c)
{
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->seqs);
	free(c->lens);
}

static void collector_push(struct collector *c, uint32_t seq, size_t len)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->seqs = realloc(c->seqs, c->cap * sizeof(*c->seqs));
		c->lens = realloc(c->lens, c->cap * sizeof(*c->lens));
		if (!c->seqs || !c->lens)
			abort();
	}
	c->seqs[c->n] = seq;
	c->lens[c->n] = len;
	c->n++;
}

static void collect(void *ctx, unsigned int port, const void *frame, size_t len)
{
	struct collector *c = ctx;
	enum frame_class cls;
	struct backend *echo;
	uint32_t seq = 0;

	if (atomic_load(&c->in_xmit))
		atomic_fetch_add(&c->reentered, 1);
	cls = classify(frame, len, &seq);
	pthread_mutex_lock(&c->lock);
	if (port != c->port)
		c->wrong_port++;
	if (cls == FRAME_FOREIGN)
		c->foreign++;
	else if (cls == FRAME_BAD)
		c->bad++;
	else if (seq == SEQ_BYE)
		c->bye = true;
	else if (seq >= SEQ_PROBE)
		c->probes++;
	else
		collector_push(c, seq, len);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);

	echo = atomic_load(&c->echo);
	if (echo && cls == FRAME_OK && seq != SEQ_BYE)
		backend_xmit(echo, frame, len);
}

enum wait_what { WAIT_FRAMES, WAIT_PROBES, WAIT_BYE };

static bool collector_wait(struct collector *c, enum wait_what what,
			   size_t n, long timeout_ms)
{
	struct timespec due;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &due);
	due.tv_sec += timeout_ms / 1000;
	due.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (due.tv_nsec >= 1000000000L) {
		due.tv_sec++;
		due.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&c->lock);
	for (;;) {
		done = what == WAIT_FRAMES ? c->n >= n :
		       what == WAIT_PROBES ? c->probes >= n : c->bye;
		if (done || pthread_cond_timedwait(&c->cond, &c->lock, &due))
			break;
	}
	done = what == WAIT_FRAMES ? c->n >= n :
	       what == WAIT_PROBES ? c->probes >= n : c->bye;
	pthread_mutex_unlock(&c->lock);
	return done;
}

/* The frames seen are exactly seq first..first+n-1, in order, whole. */
static bool collector_in_order(struct collector *c, uint32_t first, size_t n)
{
	size_t i;

	if (c->n != n)
		return false;
	for (i = 0; i < n; i++)
		if (c->seqs[i] != first + i ||
		    c->lens[i] != frame_len(first + i))
			return false;
	return true;
}

static void xmit_seq(struct backend *b, struct collector *c, uint32_t seq)
{
	uint8_t buf[BACKEND_MAX_FRAME];
	size_t len = seq >= SEQ_PROBE ? 64 : frame_len(seq);

	make_frame(seq, buf, len);
	if (c)
		atomic_store(&c->in_xmit, true);
	backend_xmit(b, buf, len);
	if (c)
		atomic_store(&c->in_xmit, false);
}

static struct backend_stats stats_of(struct backend *b)
{
	struct backend_stats st;

	backend_stats(b, &st);
	return st;
}

static uint64_t bytes_of(uint32_t first, size_t n)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += frame_len(first + i);
	return sum;
}

/* ---- spec strings -------------------------------------------------------- */

static void test_spec(void)
{
	static const char *const good[] = {
		"loopback", "null", "socket:/tmp/x", "socket:rel",
		"tap:eth-emu", "tap:abcdefghijklmno",
	};
	static const char *const bad[] = {
		"", "loop", "loopback:", "nullx", "Null", "socket", "socket:",
		"tap:", "tap:abcdefghijklmnop", "tap:a/b", "tap:a b",
		"tap:a:b", "tap:.", "tap:..", "udp:127.0.0.1:9", "SOCKET:x",
	};
	char err[256], longpath[200];
	struct backend *b;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = '\0';
		CHECK(backend_spec_check(good[i], err, sizeof(err)) == 0,
		      "'%s' refused: %s", good[i], err);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(backend_spec_check(bad[i], err, sizeof(err)) == -EINVAL,
		      "'%s' accepted", bad[i]);
		CHECK(err[0] && (!bad[i][0] || strstr(err, bad[i])),
		      "'%s': message '%s' does not name it", bad[i], err);
	}
	CHECK(backend_spec_check(NULL, err, sizeof(err)) == -EINVAL, "NULL");
	CHECK(backend_spec_check("bogus", NULL, 0) == -EINVAL, "no err buffer");

	/* PATH is a directory; PATH/p.PID.PORT.SEQ must fit sun_path */
	memset(longpath, 'p', sizeof(longpath));
	memcpy(longpath, "socket:/", 8);
	longpath[7 + 84] = '\0';	/* PATH of 84 bytes: one too many */
	CHECK(backend_spec_check(longpath, err, sizeof(err)) == -EINVAL,
	      "84-byte PATH accepted");
	longpath[7 + 83] = '\0';
	CHECK(backend_spec_check(longpath, err, sizeof(err)) == 0,
	      "83-byte PATH refused: %s", err);

	fprintf(stderr, "(expected error message follows)\n");
	errno = 0;
	b = backend_open("ethernet", NULL, 1, collect, NULL);
	CHECK(!b && errno == EINVAL, "open of a bad spec: %p errno %d",
	      (void *)b, errno);
}

/* ---- loopback and null --------------------------------------------------- */

static void test_loopback_order(void)
{
	const uint32_t total = 10000, burst = 100;
	struct backend_stats st;
	struct collector c;
	struct backend *b;
	unsigned int got = 0;
	uint32_t seq;

	collector_init(&c, 3);
	b = backend_open("loopback", NULL, 3, collect, &c);
	CHECK(b, "open: %s", strerror(errno));
	if (!b)
		goto out;
	CHECK(backend_poll(b) == 0, "empty poll delivered");
	for (seq = 0; seq < total; seq++) {
		xmit_seq(b, &c, seq);
		if (seq % burst == burst - 1)
			got += backend_poll(b);
	}
	CHECK(got == total, "poll delivered %u of %u", got, total);
	CHECK(collector_in_order(&c, 0, total),
	      "%zu frames, not 0..%u in order", c.n, total - 1);
	CHECK(!c.bad && !c.foreign && !c.wrong_port,
	      "bad %u foreign %u wrong port %u", c.bad, c.foreign,
	      c.wrong_port);
	CHECK(atomic_load(&c.reentered) == 0, "%u deliveries inside xmit",
	      atomic_load(&c.reentered));
	st = stats_of(b);
	CHECK(st.tx_frames == total && st.rx_frames == total,
	      "tx %lu rx %lu", (unsigned long)st.tx_frames,
	      (unsigned long)st.rx_frames);
	CHECK(st.tx_bytes == bytes_of(0, total) && st.rx_bytes == st.tx_bytes,
	      "tx bytes %lu rx bytes %lu", (unsigned long)st.tx_bytes,
	      (unsigned long)st.rx_bytes);
	CHECK(!st.tx_drops && !st.rx_drops, "drops tx %lu rx %lu",
	      (unsigned long)st.tx_drops, (unsigned long)st.rx_drops);
	backend_close(b);
out:
	collector_fini(&c);
}

static void test_loopback_overflow(void)
{
	const uint32_t total = 10000;
	uint8_t buf[BACKEND_MAX_FRAME + 1];
	struct backend_stats st;
	struct collector c;
	struct backend *b;
	unsigned int got;
	uint32_t seq;

	collector_init(&c, 0);
	b = backend_open("loopback", NULL, 0, collect, &c);
	CHECK(b, "open: %s", strerror(errno));
	if (!b)
		goto out;
	for (seq = 0; seq < total; seq++)
		xmit_seq(b, &c, seq);
	st = stats_of(b);
	CHECK(st.tx_frames == LOOPBACK_DEPTH &&
	      st.tx_drops == total - LOOPBACK_DEPTH,
	      "tx %lu drops %lu", (unsigned long)st.tx_frames,
	      (unsigned long)st.tx_drops);
	CHECK(st.tx_bytes == bytes_of(0, LOOPBACK_DEPTH), "tx bytes %lu",
	      (unsigned long)st.tx_bytes);
	CHECK(c.n == 0, "%zu delivered before poll", c.n);
	got = backend_poll(b);
	CHECK(got == LOOPBACK_DEPTH, "poll delivered %u", got);
	CHECK(collector_in_order(&c, 0, LOOPBACK_DEPTH),
	      "not the first %d in order (%zu)", LOOPBACK_DEPTH, c.n);
	CHECK(backend_poll(b) == 0, "second poll delivered");

	/* Sizes: 14 and BACKEND_MAX_FRAME pass, one less/more do not. */
	make_frame(1, buf, sizeof(buf));
	backend_xmit(b, buf, 13);
	backend_xmit(b, buf, BACKEND_MAX_FRAME + 1);
	backend_xmit(b, NULL, 60);
	backend_xmit(b, buf, 14);
	backend_xmit(b, buf, BACKEND_MAX_FRAME);
	st = stats_of(b);
	CHECK(st.tx_drops == total - LOOPBACK_DEPTH + 3 &&
	      st.tx_frames == LOOPBACK_DEPTH + 2,
	      "size limits: tx %lu drops %lu", (unsigned long)st.tx_frames,
	      (unsigned long)st.tx_drops);
	CHECK(backend_poll(b) == 2, "size limits: not 2 delivered");
	CHECK(!stats_of(b).rx_drops, "rx drops");

	/* Closed with frames still queued: freed, not delivered. */
	for (seq = 0; seq < 10; seq++)
		xmit_seq(b, &c, seq);
	backend_close(b);
out:
	collector_fini(&c);
}

static void test_null(void)
{
	struct backend_stats st;
	struct collector c;
	struct backend *b;
	uint32_t seq;

	collector_init(&c, 1);
	b = backend_open("null", NULL, 1, collect, &c);
	CHECK(b, "open: %s", strerror(errno));
	if (!b)
		goto out;
	for (seq = 0; seq < 100; seq++)
		xmit_seq(b, &c, seq);
	CHECK(backend_poll(b) == 0, "null delivered");
	st = stats_of(b);
	CHECK(st.tx_frames == 100 && st.tx_bytes == bytes_of(0, 100) &&
	      !st.tx_drops, "tx %lu bytes %lu drops %lu",
	      (unsigned long)st.tx_frames, (unsigned long)st.tx_bytes,
	      (unsigned long)st.tx_drops);
	CHECK(!st.rx_frames && !c.n, "null received");
	backend_close(b);
out:
	collector_fini(&c);
}

/* ---- pcap ---------------------------------------------------------------- */

struct rec_want {
	uint32_t seq;
	size_t len;
};

static void *read_file(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	FILE *f;

	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || !(buf = malloc(st.st_size + 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, st.st_size, f);
	fclose(f);
	return buf;
}

static void check_pcap_header(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	static const uint8_t want[24] = {
		0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0, 0, 1, 0, 0, 0,
	};
#else
	static const uint8_t want[24] = {
		0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0xff, 0xff, 0, 0, 0, 1,
	};
#endif
	CHECK(!memcmp(p, want, sizeof(want)), "pcap global header differs");
}

/* Records in @p (after the header) are exactly @want, time-ordered. */
static void check_pcap_records(const uint8_t *p, size_t len,
			       const struct rec_want *want, size_t n,
			       time_t t0, time_t t1)
{
	uint32_t h[4], prev_sec = 0, prev_usec = 0, seq;
	size_t off = 24, i;

	for (i = 0; i < n; i++) {
		if (off + 16 > len) {
			CHECK(0, "record %zu missing (file %zu bytes)", i, len);
			return;
		}
		memcpy(h, p + off, 16);
		off += 16;
		CHECK(h[2] == want[i].len && h[3] == want[i].len,
		      "record %zu: incl %u orig %u, want %zu", i, h[2], h[3],
		      want[i].len);
		CHECK(h[0] >= t0 - 1 && h[0] <= t1 + 1 && h[1] < 1000000,
		      "record %zu: time %u.%06u outside the run", i, h[0],
		      h[1]);
		CHECK(h[0] > prev_sec ||
		      (h[0] == prev_sec && h[1] >= prev_usec),
		      "record %zu goes back in time", i);
		prev_sec = h[0];
		prev_usec = h[1];
		if (off + h[2] > len) {
			CHECK(0, "record %zu cut short", i);
			return;
		}
		CHECK(classify(p + off, h[2], &seq) == FRAME_OK &&
		      seq == want[i].seq, "record %zu: not frame %u", i,
		      want[i].seq);
		off += h[2];
	}
	CHECK(off == len, "%zu bytes after %zu records", len - off, n);
}

static bool have_tshark(void)
{
	return system("command -v tshark >/dev/null 2>&1") == 0;
}

/* tshark reads the file and finds exactly these frame lengths. */
static void check_tshark(const char *path, const struct rec_want *want,
			 size_t n)
{
	char cmd[512], line[64];
	size_t i = 0;
	FILE *f;
	int status;

	if (!have_tshark()) {
		printf("SKIP: tshark not installed; %s not read by it\n", path);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "tshark -r '%s' -T fields -e frame.len 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f, "popen tshark");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (i < n)
			CHECK(strtoul(line, NULL, 10) == want[i].len,
			      "tshark frame %zu: length %s", i, line);
		i++;
	}
	status = pclose(f);
	CHECK(status == 0, "tshark -r %s: status %d", path, status);
	CHECK(i == n, "tshark read %zu frames, want %zu", i, n);
}

static void test_pcap(void)
{
	const struct rec_want want[] = {
		/* port 1 transmits three, then receives them */
		{ 10, 60 }, { 11, 1514 }, { 12, BACKEND_MAX_FRAME },
		{ 10, 60 }, { 11, 1514 }, { 12, BACKEND_MAX_FRAME },
		{ 13, 14 + 4 + 100 },		/* the second port's tx */
	};
	uint8_t buf[BACKEND_MAX_FRAME];
	struct backend *a, *b;
	struct collector c;
	char path[128];
	size_t len = 0, i;
	time_t t0, t1;
	uint8_t *p;

	tmp_path(path, sizeof(path), "cap.pcap");
	collector_init(&c, 1);
	t0 = time(NULL);
	a = backend_open("loopback", path, 1, collect, &c);
	/* A second port capturing to the same file shares the writer. */
	b = backend_open("null", path, 2, NULL, NULL);
	CHECK(a && b, "open: %s", strerror(errno));
	if (!a || !b)
		goto out;
	for (i = 0; i < 3; i++) {
		make_frame(want[i].seq, buf, want[i].len);
		backend_xmit(a, buf, want[i].len);
	}
	backend_xmit(a, buf, 13);	/* dropped: not captured */
	CHECK(backend_poll(a) == 3, "loopback did not deliver 3");
	make_frame(want[6].seq, buf, want[6].len);
	backend_xmit(b, buf, want[6].len);
	backend_close(b);
	b = NULL;
	backend_close(a);
	a = NULL;
	t1 = time(NULL);

	p = read_file(path, &len);
	CHECK(p && len >= 24, "%s unreadable or short (%zu)", path, len);
	if (p && len >= 24) {
		check_pcap_header(p);
		check_pcap_records(p, len, want, 7, t0, t1);
	}
	free(p);
	check_tshark(path, want, 7);
out:
	backend_close(b);
	backend_close(a);
	collector_fini(&c);
	unlink(path);
}

/*
 * A process killed without closing leaves its frames readable, every one
 * of them: killed at once after its last capture (a writer that held
 * records back for a later flush lost them).  The parent kills it:
 * SIGKILL from outside also stops memcheck from reporting on a process
 * that never meant to clean up.
 */
static void test_pcap_killed(void)
{
	struct rec_want want[10];
	char path[128], x = 0;
	size_t len = 0;
	int status = 0, pfd[2];
	time_t t0 = time(NULL);
	struct backend *b;
	uint8_t *p;
	pid_t pid;
	uint32_t i;

	tmp_path(path, sizeof(path), "killed.pcap");
	for (i = 0; i < 5; i++) {
		want[i] = (struct rec_want){ i, frame_len(i) };
		want[i + 5] = want[i];
	}
	if (pipe(pfd)) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		b = backend_open("loopback", path, 1, NULL, NULL);
		for (i = 0; b && i < 5; i++)
			xmit_seq(b, NULL, i);
		if (b)
			backend_poll(b);
		if (write(pfd[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid < 0)
		goto out;
	CHECK(read(pfd[0], &x, 1) == 1, "child did not capture");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child status %#x", status);
	p = read_file(path, &len);
	CHECK(p && len >= 24, "%s unreadable or short (%zu)", path, len);
	if (p && len >= 24) {
		check_pcap_header(p);
		check_pcap_records(p, len, want, 10, t0, time(NULL));
	}
	free(p);
	check_tshark(path, want, 10);
	unlink(path);
out:
	close(pfd[0]);
}

/* ---- socket:PATH --------------------------------------------------------- */

static bool is_socket(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISSOCK(st.st_mode);
}

/* Send first..first+n-1 from @from, waiting for @to's collector every 8. */
static bool send_window(struct backend *from, struct collector *to,
			uint32_t first, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		xmit_seq(from, NULL, first + i);
		if ((i % 8 == 7 || i == n - 1) &&
		    !collector_wait(to, WAIT_FRAMES, i + 1, WAIT_MS))
			return false;
	}
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The one port file in directory @dir into @out; false if not exactly one. */
static bool only_port(const char *dir, char *out, size_t len)
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "p.", 2) && n++ == 0 &&
		    snprintf(out, len, "%s/%.64s", dir, de->d_name) >= (int)len)
			return closedir(d), false;
	closedir(d);
	return n == 1;
}

/* A raw connection to the port at @path, as another port would make. */
static int port_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One record of @len bytes: the 4-byte header @hdr, then a test frame. */
static bool put_record(int fd, const uint8_t hdr[4], size_t len)
{
	uint8_t buf[4 + BACKEND_MAX_FRAME + 1];

	if (len < 4 || len > sizeof(buf))
		return false;
	memcpy(buf, hdr, 4);
	make_frame(3, buf + 4, len - 4);
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len;
}

static void test_socket_no_peer(void)
{
	static const uint8_t data[4] = { 'V', 1, 1, 0 };
	static const uint8_t bad_magic[4] = { 'W', 1, 1, 0 };
	static const struct vsw_id anon = { .ngid = 0 };
	uint8_t hello[VSW_HELLO_MAX], ans[VSW_HELLO_MAX];
	char path[128], spec[160], port[256];
	struct backend_stats st;
	struct collector c;
	struct backend *a;
	size_t hlen;
	int fd;

	tmp_path(path, sizeof(path), "lonely");
	snprintf(spec, sizeof(spec), "socket:%s", path);
	collector_init(&c, 1);
	a = backend_open(spec, NULL, 1, collect, &c);
	CHECK(a, "open %s: %s", spec, strerror(errno));
	if (!a) {
		collector_fini(&c);
		return;
	}
	CHECK(is_dir(path) && only_port(path, port, sizeof(port)) &&
	      is_socket(port), "%s: no directory with one port", path);
	xmit_seq(a, NULL, 1);
	st = stats_of(a);
	CHECK(st.tx_drops == 1 && !st.tx_frames, "no peer: tx %lu drops %lu",
	      (unsigned long)st.tx_frames, (unsigned long)st.tx_drops);

	/* DATA before HELLO: refused, the connection closed */
	fd = port_connect(port);
	CHECK(fd >= 0 && put_record(fd, data, 64) && recv(fd, ans, sizeof(ans), 0) == 0,
	      "DATA before HELLO not refused");
	if (fd >= 0)
		close(fd);
	/* HELLO, then a bad magic, short and long frames, then a good one */
	hlen = vsw_encode_hello(&anon, hello, sizeof(hello));
	fd = port_connect(port);
	CHECK(fd >= 0 && send(fd, hello, hlen, 0) == (ssize_t)hlen &&
	      recv(fd, ans, sizeof(ans), 0) == (ssize_t)hlen,
	      "no HELLO answered");
	CHECK(fd >= 0 && put_record(fd, bad_magic, 64) &&
	      put_record(fd, data, 4 + 13) &&
	      put_record(fd, data, 4 + BACKEND_MAX_FRAME + 1) &&
	      put_record(fd, data, 64), "records into %s: %s", port,
	      strerror(errno));
	CHECK(collector_wait(&c, WAIT_FRAMES, 1, WAIT_MS), "good frame lost");
	st = stats_of(a);
	CHECK(st.rx_drops == 4 && st.rx_frames == 1, "rx %lu drops %lu",
	      (unsigned long)st.rx_frames, (unsigned long)st.rx_drops);
	/* that connection is a peer now: it gets our frames */
	xmit_seq(a, NULL, 2);
	CHECK(fd >= 0 && recv(fd, ans, sizeof(ans), 0) > 4 + 13 &&
	      !memcmp(ans, data, 4), "no DATA to the peer");
	if (fd >= 0)
		close(fd);
	backend_close(a);
	collector_fini(&c);
	CHECK(!is_dir(path), "%s left behind", path);
}

/* Two ports of one process joined through PATH, frames both ways. */
static void socket_exchange(const char *spec, const char *path)
{
	const uint32_t n = 2000;
	struct backend_stats sa, sb;
	struct collector ca, cb;
	struct backend *a, *b = NULL;

	collector_init(&ca, 1);
	collector_init(&cb, 2);
	a = backend_open(spec, NULL, 1, collect, &ca);
	CHECK(a, "open %s: %s", spec, strerror(errno));
	if (!a)
		goto out;
	b = backend_open(spec, NULL, 2, collect, &cb);
	CHECK(b, "second open %s: %s", spec, strerror(errno));
	if (!b)
		goto out;
	/* b talks first: a learns where b is from it. */
	CHECK(send_window(b, &ca, 0, n), "b->a: %zu of %u arrived", ca.n, n);
	CHECK(send_window(a, &cb, 0, n), "a->b: %zu of %u arrived", cb.n, n);
	CHECK(collector_in_order(&ca, 0, n) && collector_in_order(&cb, 0, n),
	      "out of order or damaged: %zu %zu", ca.n, cb.n);
	CHECK(!ca.bad && !cb.bad && !ca.wrong_port && !cb.wrong_port,
	      "bad %u %u, wrong port %u %u", ca.bad, cb.bad, ca.wrong_port,
	      cb.wrong_port);
	sa = stats_of(a);
	sb = stats_of(b);
	CHECK(sa.tx_frames == n && sb.rx_frames == n && sb.tx_frames == n &&
	      sa.rx_frames == n, "a tx %lu rx %lu, b tx %lu rx %lu",
	      (unsigned long)sa.tx_frames, (unsigned long)sa.rx_frames,
	      (unsigned long)sb.tx_frames, (unsigned long)sb.rx_frames);
	CHECK(sa.tx_bytes == bytes_of(0, n) && sb.rx_bytes == sa.tx_bytes &&
	      sb.tx_bytes == sa.tx_bytes && sa.rx_bytes == sa.tx_bytes,
	      "byte counts");
	CHECK(!sa.tx_drops && !sb.tx_drops && !sa.rx_drops && !sb.rx_drops,
	      "drops: a %lu/%lu b %lu/%lu", (unsigned long)sa.tx_drops,
	      (unsigned long)sa.rx_drops, (unsigned long)sb.tx_drops,
	      (unsigned long)sb.rx_drops);
	backend_close(b);
	b = NULL;
	CHECK(is_dir(path), "the second port's close removed %s", path);
out:
	backend_close(b);
	backend_close(a);
	CHECK(!is_dir(path) && !is_socket(path), "%s left behind", path);
	collector_fini(&ca);
	collector_fini(&cb);
}

static void test_socket_pair(void)
{
	char path[128], spec[160];

	tmp_path(path, sizeof(path), "link");
	snprintf(spec, sizeof(spec), "socket:%s", path);
	socket_exchange(spec, path);
}

/*
 * An earlier version's switch that crashed left a socket at PATH, and a
 * port that was killed its file in PATH: both are replaced or removed.
 */
static void test_socket_stale(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[80], spec[160], dead[100];
	struct backend *b;
	int fd;

	tmp_path(path, sizeof(path), "stale");
	snprintf(spec, sizeof(spec), "socket:%s", path);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&sun, sizeof(sun)),
	      "bind %s: %s", path, strerror(errno));
	close(fd);
	CHECK(is_socket(path), "no stale socket to test with");
	socket_exchange(spec, path);

	CHECK(!mkdir(path, 0700), "mkdir %s: %s", path, strerror(errno));
	snprintf(dead, sizeof(dead), "%s/p.1.1.1", path);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", dead);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&sun, sizeof(sun)),
	      "bind %s: %s", dead, strerror(errno));
	close(fd);
	CHECK(is_socket(dead), "no dead port to test with");
	socket_exchange(spec, path);
	CHECK(!is_socket(dead), "the dead port's %s stayed", dead);

	/* Not a socket: refused, left alone. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	fprintf(stderr, "(expected error message follows)\n");
	errno = 0;
	b = backend_open(spec, NULL, 1, collect, NULL);
	CHECK(!b && errno == EEXIST, "regular file at PATH: %p errno %d",
	      (void *)b, errno);
	backend_close(b);
	CHECK(access(path, F_OK) == 0, "regular file removed");
	unlink(path);
}

/* The forked peer: echo every frame until SEQ_BYE. */
static int echo_child(const char *spec, int go_fd, int ready_fd)
{
	struct collector c;
	struct backend *b;
	char x = 0;
	int ret = 1;

	if (go_fd >= 0 && read(go_fd, &x, 1) != 1)
		return 2;
	collector_init(&c, 5);
	b = backend_open(spec, NULL, 5, collect, &c);
	if (!b)
		return 3;
	atomic_store(&c.echo, b);
	if (write(ready_fd, "o", 1) == 1 &&
	    collector_wait(&c, WAIT_BYE, 0, 60000))
		ret = 0;
	backend_close(b);
	collector_fini(&c);
	return ret;
}

/* Probe until the child echoes: the rendezvous takes a moment. */
static bool wait_link(struct backend *b, struct collector *c)
{
	long deadline = now_ms() + WAIT_MS;
	uint32_t k = 0;

	while (now_ms() < deadline) {
		xmit_seq(b, NULL, SEQ_PROBE + k++);
		if (collector_wait(c, WAIT_PROBES, 1, 20))
			return true;
	}
	return false;
}

static void socket_fork_round(const char *spec, bool child_first)
{
	const uint32_t n = 300;
	int go[2], ready[2], status = -1;
	struct collector c;
	struct backend *b = NULL;
	char x;
	pid_t pid;

	if (pipe(go) || pipe(ready)) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	collector_init(&c, 4);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		status = echo_child(spec, child_first ? -1 : go[0], ready[1]);
		close(go[0]);
		close(ready[1]);
		_exit(status);
	}
	close(go[0]);
	close(ready[1]);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid < 0)
		goto out;
	if (child_first)
		CHECK(read(ready[0], &x, 1) == 1, "child did not open");
	b = backend_open(spec, NULL, 4, collect, &c);
	CHECK(b, "open %s: %s", spec, strerror(errno));
	CHECK(write(go[1], "g", 1) == 1, "cannot start the child");
	if (!child_first)
		CHECK(read(ready[0], &x, 1) == 1, "child did not open");
	if (!b)
		goto out;
	CHECK(wait_link(b, &c), "%s first: no echo from the other process",
	      child_first ? "child" : "parent");
	CHECK(send_window(b, &c, 0, n), "%zu of %u echoed", c.n, n);
	CHECK(collector_in_order(&c, 0, n) && !c.bad,
	      "echoes out of order or damaged (%zu, bad %u)", c.n, c.bad);
	xmit_seq(b, NULL, SEQ_BYE);
out:
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(pid <= 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
	      "child status %#x", status);
	backend_close(b);
	close(go[1]);
	close(ready[0]);
	collector_fini(&c);
}

static void test_socket_fork(void)
{
	char path[128], spec[160];

	tmp_path(path, sizeof(path), "fork");
	snprintf(spec, sizeof(spec), "socket:%s", path);
	socket_fork_round(spec, true);
	CHECK(!is_dir(path), "%s left behind (child first)", path);
	socket_fork_round(spec, false);
	CHECK(!is_dir(path), "%s left behind (parent first)", path);
}

/* ---- socket:PATH as a switch for three processes -------------------------- */

#define SW_ETHERTYPE	0x88b6
#define SW_STATIONS_T	3
#define SW_BCAST	0xff	/* destination: everyone */
#define SW_UNKNOWN	0xfe	/* destination: a MAC nobody has */

enum sw_kind { SWK_BCAST, SWK_UNI, SWK_UNKNOWN, SWK_FENCE, SWK_KINDS };

struct sw_counts {
	unsigned int rx[SW_STATIONS_T][SWK_KINDS];	/* by sender, kind */
	unsigned int foreign;
};

struct sw_station_t {
	unsigned int id;
	struct backend *b;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sw_counts c;
};

static void sw_mac_of(unsigned int station, uint8_t mac[6])
{
	static const uint8_t base[6] = { 2, 0, 0, 0, 0x0b, 0 };

	memcpy(mac, base, 6);
	if (station == SW_BCAST)
		memset(mac, 0xff, 6);
	else if (station == SW_UNKNOWN)
		mac[4] = 0x99;
	else
		mac[5] = (uint8_t)station;
}

static void sw_collect(void *ctx, unsigned int port, const void *frame,
		       size_t len)
{
	struct sw_station_t *st = ctx;
	const uint8_t *f = frame;

	(void)port;
	pthread_mutex_lock(&st->lock);
	if (len >= 16 && f[12] == SW_ETHERTYPE >> 8 &&
	    f[13] == (SW_ETHERTYPE & 0xff) && f[14] < SWK_KINDS &&
	    f[15] < SW_STATIONS_T)
		st->c.rx[f[15]][f[14]]++;
	else
		st->c.foreign++;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

static void sw_send(struct sw_station_t *st, enum sw_kind kind,
		    unsigned int dst, unsigned int n)
{
	uint8_t f[64] = { 0 };

	sw_mac_of(dst, f);
	sw_mac_of(st->id, f + 6);
	f[12] = SW_ETHERTYPE >> 8;
	f[13] = SW_ETHERTYPE & 0xff;
	f[14] = kind;
	f[15] = (uint8_t)st->id;
	while (n--)
		backend_xmit(st->b, f, sizeof(f));
}

/* Until every other station's count of @kind reaches @n (bounded wait). */
static bool sw_wait(struct sw_station_t *st, enum sw_kind kind, unsigned int n)
{
	struct timespec due;
	unsigned int s;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &due);
	due.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&st->lock);
	for (;;) {
		done = true;
		for (s = 0; s < SW_STATIONS_T; s++)
			if (s != st->id && st->c.rx[s][kind] < n)
				done = false;
		if (done || pthread_cond_timedwait(&st->cond, &st->lock, &due))
			break;
	}
	pthread_mutex_unlock(&st->lock);
	return done;
}

static int sw_open(struct sw_station_t *st, unsigned int id, const char *spec)
{
	pthread_condattr_t ca;

	memset(st, 0, sizeof(*st));
	st->id = id;
	pthread_mutex_init(&st->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cond, &ca);
	pthread_condattr_destroy(&ca);
	st->b = backend_open(spec, NULL, 1, sw_collect, st);
	return st->b ? 0 : -1;
}

static void sw_close(struct sw_station_t *st)
{
	backend_close(st->b);
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
}

/* A command to a station: op 'o'pen, 's'end, 'w'ait, 'r'eport, 'q'uit. */
struct sw_cmd {
	char op;
	uint8_t kind, dst, n;
};

/* Run command @c on @st (any process); 0 or 1 for the reply byte. */
static int sw_do(struct sw_station_t *st, const struct sw_cmd *c)
{
	if (c->op == 's') {
		sw_send(st, c->kind, c->dst, c->n);
		return 0;
	}
	if (c->op == 'w')
		return sw_wait(st, c->kind, c->n) ? 0 : 1;
	return 0;
}

static int sw_child(unsigned int id, const char *spec, int cmd_fd, int resp_fd)
{
	struct sw_station_t st;
	struct sw_cmd c;
	char r;

	if (read(cmd_fd, &c, sizeof(c)) != sizeof(c) || c.op != 'o')
		return 2;
	r = sw_open(&st, id, spec) ? 1 : 0;
	if (write(resp_fd, &r, 1) != 1 || r)
		return 3;
	while (read(cmd_fd, &c, sizeof(c)) == sizeof(c) && c.op != 'q') {
		if (c.op == 'r') {
			pthread_mutex_lock(&st.lock);
			r = write(resp_fd, &st.c, sizeof(st.c)) != sizeof(st.c);
			pthread_mutex_unlock(&st.lock);
		} else {
			r = (char)sw_do(&st, &c);
			/* a failed wait is the parent's to report */
			r = write(resp_fd, &r, 1) != 1;
		}
		if (r)
			break;
	}
	sw_close(&st);
	return 0;
}

struct sw_peer {
	pid_t pid;
	int cmd, resp;
};

/* Run @c on station @id (0: ours); false if it failed. */
static bool sw_run(struct sw_station_t *me, struct sw_peer *peers,
		   unsigned int id, struct sw_cmd c)
{
	char r = 1;

	if (!id)
		return !sw_do(me, &c);
	if (write(peers[id].cmd, &c, sizeof(c)) != sizeof(c) ||
	    read(peers[id].resp, &r, 1) != 1)
		return false;
	return !r;
}

/* Every station sends fence @round and waits for the others'. */
static bool sw_fence(struct sw_station_t *me, struct sw_peer *peers,
		     unsigned int round)
{
	unsigned int s;
	bool ok = true;

	for (s = 0; s < SW_STATIONS_T; s++)
		ok &= sw_run(me, peers, s, (struct sw_cmd){ 's', SWK_FENCE,
							  SW_BCAST, 1 });
	for (s = 0; s < SW_STATIONS_T; s++)
		ok &= sw_run(me, peers, s, (struct sw_cmd){ 'w', SWK_FENCE, 0,
							  (uint8_t)round });
	return ok;
}

/*
 * Three processes on one socket:PATH: broadcasts reach the two others,
 * unicast to a learned MAC reaches only its owner, an unknown destination
 * is flooded, and no station ever gets its own frame back.  Fences
 * (broadcasts that follow on the same paths) make "nothing else arrived"
 * a certainty rather than a wait.
 */
static void test_socket_switch(void)
{
	static const unsigned int uni[SW_STATIONS_T] = { 1, 2, 0 };	/* s -> uni[s] */
	struct sw_peer peers[SW_STATIONS_T] = { { 0 } };
	struct sw_counts got[SW_STATIONS_T];
	struct sw_station_t me;
	char path[128], spec[160], r;
	unsigned int i, s, k, want;
	int status;

	tmp_path(path, sizeof(path), "switch");
	snprintf(spec, sizeof(spec), "socket:%s", path);
	signal(SIGPIPE, SIG_IGN);	/* a station that died: a failed check */
	fflush(NULL);
	for (i = 1; i < SW_STATIONS_T; i++) {
		int cmd[2], resp[2];

		if (pipe(cmd) || pipe(resp)) {
			CHECK(0, "pipe: %s", strerror(errno));
			return;
		}
		peers[i].pid = fork();
		if (peers[i].pid == 0) {
			close(cmd[1]);
			close(resp[0]);
			_exit(sw_child(i, spec, cmd[0], resp[1]));
		}
		close(cmd[0]);
		close(resp[1]);
		peers[i].cmd = cmd[1];
		peers[i].resp = resp[0];
	}
	/* we are station 0 and the owner: we open first */
	CHECK(!sw_open(&me, 0, spec), "open %s: %s", spec, strerror(errno));
	for (i = 1; i < SW_STATIONS_T; i++) {
		struct sw_cmd c = { .op = 'o' };

		CHECK(write(peers[i].cmd, &c, sizeof(c)) == sizeof(c) &&
		      read(peers[i].resp, &r, 1) == 1 && !r, "station %u open", i);
	}
	if (check_failed)
		goto out;
	/*
	 * 1. a broadcast from each: everyone learns everyone.  The switch
	 * (station 0) knows a station once it has read a datagram from it:
	 * it waits for both broadcasts before it sends its own.
	 */
	for (s = 1; s < SW_STATIONS_T; s++)
		CHECK(sw_run(&me, peers, s, (struct sw_cmd){ 's', SWK_BCAST,
							SW_BCAST, 1 }),
		      "broadcast from %u", s);
	CHECK(sw_run(&me, peers, 0, (struct sw_cmd){ 'w', SWK_BCAST, 0, 1 }),
	      "the switch heard both stations");
	CHECK(sw_run(&me, peers, 0, (struct sw_cmd){ 's', SWK_BCAST, SW_BCAST, 1 }),
	      "broadcast from 0");
	CHECK(sw_fence(&me, peers, 1), "fence 1");
	/* 2. unicast to a learned MAC: 1 -> 2, 2 -> 0, 0 -> 1 */
	for (s = 0; s < SW_STATIONS_T; s++)
		CHECK(sw_run(&me, peers, s, (struct sw_cmd){ 's', SWK_UNI,
						     (uint8_t)uni[s], 10 }),
		      "unicast from %u", s);
	CHECK(sw_fence(&me, peers, 2), "fence 2");
	/* 3. an unknown destination from station 1: flooded */
	CHECK(sw_run(&me, peers, 1, (struct sw_cmd){ 's', SWK_UNKNOWN,
					      SW_UNKNOWN, 5 }), "unknown");
	CHECK(sw_fence(&me, peers, 3), "fence 3");

	pthread_mutex_lock(&me.lock);
	got[0] = me.c;
	pthread_mutex_unlock(&me.lock);
	for (i = 1; i < SW_STATIONS_T; i++) {
		struct sw_cmd c = { .op = 'r' };

		CHECK(write(peers[i].cmd, &c, sizeof(c)) == sizeof(c) &&
		      read(peers[i].resp, &got[i], sizeof(got[i])) ==
			      sizeof(got[i]), "report of %u", i);
	}
	for (i = 0; i < SW_STATIONS_T; i++) {
		CHECK(!got[i].foreign, "station %u: %u foreign frames", i,
		      got[i].foreign);
		for (s = 0; s < SW_STATIONS_T; s++) {
			for (k = 0; k < SWK_KINDS; k++) {
				if (i == s)
					want = 0;	/* never back to the sender */
				else if (k == SWK_BCAST)
					want = 1;
				else if (k == SWK_FENCE)
					want = 3;
				else if (k == SWK_UNI)
					want = uni[s] == i ? 10 : 0;
				else
					want = s == 1 ? 5 : 0;
				CHECK(got[i].rx[s][k] == want,
				      "station %u got %u frames of kind %u from %u, want %u",
				      i, got[i].rx[s][k], k, s, want);
			}
		}
	}
out:
	for (i = 1; i < SW_STATIONS_T; i++) {
		struct sw_cmd c = { .op = 'q' };

		if (write(peers[i].cmd, &c, sizeof(c)) != sizeof(c))
			CHECK(0, "quit %u", i);
		close(peers[i].cmd);
		close(peers[i].resp);
		status = -1;
		waitpid(peers[i].pid, &status, 0);
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		      "station %u status %#x", i, status);
	}
	sw_close(&me);
	CHECK(!is_dir(path), "%s left behind", path);
}

/* ---- tap:IFNAME (root, own network namespace) ---------------------------- */

#define TAP_NAME	"mtap0"

static int packet_socket(const char *ifname)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	int fd;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		return -1;
	if (!sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read from the packet socket until frame @seq shows up. */
static bool packet_wait(int fd, uint32_t seq, size_t len)
{
	long deadline = now_ms() + WAIT_MS;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint8_t buf[2048];
	uint32_t got;
	ssize_t n;

	while (now_ms() < deadline) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == (ssize_t)len && classify(buf, n, &got) == FRAME_OK &&
		    got == seq)
			return true;
	}
	return false;
}

static void tap_in_netns(void)
{
	uint8_t frame[256];
	struct backend_stats st;
	struct collector c;
	struct backend *b;
	int fd;

	collector_init(&c, 1);
	b = backend_open("tap:" TAP_NAME, NULL, 1, collect, &c);
	CHECK(b, "open tap:%s: %s", TAP_NAME, strerror(errno));
	if (!b)
		goto out;
	CHECK(system("ip link set dev " TAP_NAME " up") == 0, "ip link up");
	fd = packet_socket(TAP_NAME);
	CHECK(fd >= 0, "packet socket on %s: %s", TAP_NAME, strerror(errno));
	if (fd < 0)
		goto out_close;

	/* backend -> Linux: written to the tap, seen arriving on mtap0 */
	xmit_seq(b, NULL, 7);
	CHECK(packet_wait(fd, 7, frame_len(7)), "frame 7 not seen on %s",
	      TAP_NAME);
	/* Linux -> backend: sent out of mtap0, read from the tap */
	make_frame(8, frame, 200);
	CHECK(send(fd, frame, 200, 0) == 200, "send: %s", strerror(errno));
	CHECK(collector_wait(&c, WAIT_FRAMES, 1, WAIT_MS),
	      "frame 8 not received");
	CHECK(c.n >= 1 && c.seqs[0] == 8 && c.lens[0] == 200 && !c.bad,
	      "received %zu, first seq %u", c.n, c.n ? c.seqs[0] : 0);
	st = stats_of(b);
	CHECK(st.tx_frames == 1 && st.rx_frames >= 1, "tx %lu rx %lu",
	      (unsigned long)st.tx_frames, (unsigned long)st.rx_frames);
	close(fd);
out_close:
	backend_close(b);
	CHECK(if_nametoindex(TAP_NAME) == 0, "%s outlived its backend",
	      TAP_NAME);

	/* "lo" exists and is not a TAP. */
	fprintf(stderr, "(expected error message follows)\n");
	errno = 0;
	b = backend_open("tap:lo", NULL, 1, collect, &c);
	CHECK(!b && errno == EINVAL, "tap:lo: %p errno %d", (void *)b, errno);
	backend_close(b);
out:
	collector_fini(&c);
}

static void test_tap(void)
{
	int status = -1;
	pid_t pid;

	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK)) {
		printf("SKIP: tap: needs root and /dev/net/tun\n");
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(77);
		tap_in_netns();
		_exit(check_failed ? 1 : 0);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid < 0)
		return;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP: tap: cannot create a network namespace\n");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "tap checks in the namespace failed (status %#x)", status);
}

/* ---- leaks --------------------------------------------------------------- */

static int count_entries(const char *dir)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* opendir's own descriptor, or the main thread */
}

int main(void)
{
	/* Sanitizer runtimes may have descriptors and threads of their own. */
	int fds0 = count_entries("/proc/self/fd"), fds1;
	int tasks0 = count_entries("/proc/self/task"), tasks1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_backend.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_spec();
	test_loopback_order();
	test_loopback_overflow();
	test_null();
	test_pcap();
	test_pcap_killed();
	test_socket_no_peer();
	test_socket_pair();
	test_socket_stale();
	test_socket_fork();
	test_socket_switch();
	test_tap();

	fds1 = count_entries("/proc/self/fd");
	tasks1 = count_entries("/proc/self/task");
	CHECK(fds1 == fds0, "descriptors: %d at start, %d at end", fds0, fds1);
	CHECK(!COUNT_THREADS || tasks1 == tasks0,
	      "threads: %d at start, %d at end", tasks0, tasks1);
	CHECK(rmdir(tmpdir) == 0, "rmdir %s: %s", tmpdir, strerror(errno));
	return check_done();
}
