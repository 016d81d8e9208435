// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * socket:PATH as a virtual switch (emulator/wire/socket.c), through the
 * backend API:
 *
 * 1. the records (vswitch.h) against byte vectors, and the decoder's
 *    refusals;
 * 2. delivery, five ports of one process with identities: unicast only to
 *    the MAC's owner, RoCEv2 only to the GID's owner (also with a MAC
 *    nobody has, which a switch by MAC would flood), both ports of one
 *    identity get a copy, broadcast and unknown unicast flooded, never
 *    back to the sender; a port that left gets nothing, nor do the others
 *    in its stead; flow control: a receiver without room reads nothing,
 *    its sender is held back, nothing is lost, also of a sender that
 *    left meanwhile;
 * 3. eight processes, four sender -> receiver pairs; the first process to
 *    join (the old design's switch) and two others are killed with
 *    SIGKILL mid-transfer; the surviving pairs get every frame, in order,
 *    intact, nothing foreign, and the sender lost none -- one receiver
 *    takes each frame slowly (its sender is held back, not dropped).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emulator/wire/backend.h"
#include "emulator/wire/vswitch.h"
#include "check.h"

#define ETYPE		0x88b5	/* local experimental */
#define WAIT_MS		20000
#define STREAM_N	20000	/* frames per surviving pair */
#define SLOW_EVERY	200	/* the slow receiver sleeps 1 ms per this many */

static char tmpdir[64];

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* ---- 1. records -------------------------------------------------------- */

static void test_records(void)
{
	/* HELLO of 00:0d:3a:00:00:01 with ::ffff:10.0.0.1 */
	static const uint8_t want[] = {
		0x56, 0x02, 0x01, 0x00, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01,
		0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
		10, 0, 0, 1,
	};
	struct vsw_id id = { .mac = { 0, 0x0d, 0x3a, 0, 0, 1 }, .ngid = 1,
			     .gid = { { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 } } };
	uint8_t buf[VSW_HELLO_MAX + 8], hdr[VSW_HDR_LEN];
	struct vsw_msg m;
	size_t len;

	len = vsw_encode_hello(&id, buf, sizeof(buf));
	CHECK(len == sizeof(want) && !memcmp(buf, want, len),
	      "HELLO encodes to %zu bytes, not the vector", len);
	CHECK(!vsw_decode(want, sizeof(want), &m) && m.type == VSW_HELLO &&
	      !memcmp(&m.id.mac, id.mac, 6) && m.id.ngid == 1 &&
	      !memcmp(m.id.gid[0], id.gid[0], 16), "HELLO vector decode");
	CHECK(!vsw_encode_hello(&id, buf, sizeof(want) - 1), "short buffer");
	id.ngid = VSW_MAX_GIDS + 1;
	CHECK(!vsw_encode_hello(&id, buf, sizeof(buf)), "17 GIDs encoded");
	id.ngid = 1;
	id.mac[0] = 1;
	CHECK(!vsw_encode_hello(&id, buf, sizeof(buf)), "group MAC encoded");

	vsw_data_hdr(hdr);
	CHECK(!memcmp(hdr, "\x56\x01\x01\x00", 4), "DATA header");

	/* fail-closed: each byte changed, each length off by one */
	memcpy(buf, want, sizeof(want));
	buf[0] = 0x57;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "magic");
	buf[0] = 0x56;
	buf[2] = 2;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "version");
	buf[2] = 1;
	buf[3] = 1;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "reserved");
	buf[3] = 0;
	buf[11] = 1;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "hello reserved");
	buf[11] = 0;
	buf[10] = 17;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "17 GIDs");
	buf[10] = 1;
	buf[4] = 1;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "group MAC");
	buf[4] = 0;
	buf[1] = 3;
	CHECK(vsw_decode(buf, sizeof(want), &m) == -EINVAL, "type 3");
	buf[1] = 2;
	CHECK(vsw_decode(buf, sizeof(want) - 1, &m) == -EINVAL &&
	      vsw_decode(buf, sizeof(want) + 1, &m) == -EINVAL &&
	      vsw_decode(buf, 3, &m) == -EINVAL, "HELLO lengths");
	CHECK(!vsw_decode(buf, sizeof(want), &m), "restored vector");
	/* DATA: 14 .. 9216 frame bytes */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, hdr, 4);
	CHECK(vsw_decode(buf, 4 + 13, &m) == -EINVAL, "13-byte frame");
	CHECK(!vsw_decode(buf, 4 + 14, &m) && m.type == VSW_DATA &&
	      m.frame == buf + 4 && m.len == 14, "14-byte frame");
	CHECK(vsw_decode(buf, 4 + VSW_FRAME_MAX + 1, &m) == -EINVAL,
	      "frame too long");
}

/* ---- frames and identities --------------------------------------------- */

static void mac_of(unsigned int st, uint8_t mac[6])
{
	static const uint8_t base[6] = { 2, 0, 0, 0, 0x0c, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)st;
}

static void gid_of(unsigned int st, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = 10;
	gid[13] = 9;
	gid[15] = (uint8_t)st;
}

static void id_of(unsigned int st, struct vsw_id *id)
{
	memset(id, 0, sizeof(*id));
	mac_of(st, id->mac);
	id->ngid = 1;
	gid_of(st, id->gid[0]);
}

/* Test frame: kind and sender at 14, 15; seq at 16 (BE); pattern after. */
enum kind { K_UNI, K_ROCE, K_ROCE_ANYMAC, K_BCAST, K_UNKNOWN, K_FENCE,
	    K_STREAM, KINDS };

static uint8_t pat(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 13 + i * 3);
}

static size_t make(uint8_t *f, enum kind k, unsigned int from,
		   const uint8_t dmac[6], uint32_t dst_ip_last, uint32_t seq)
{
	size_t len = 64 + seq % 200, i;
	uint32_t be = htonl(seq);

	memset(f, 0, len);
	memcpy(f, dmac, 6);
	mac_of(from, f + 6);
	if (k == K_ROCE || k == K_ROCE_ANYMAC) {
		/* IPv4 UDP to 4791: a RoCEv2 packet as far as routing goes */
		f[12] = 0x08;
		f[14] = 0x45;
		f[23] = 17;
		f[26] = 10, f[27] = 9, f[29] = (uint8_t)from;
		f[30] = 10, f[31] = 9, f[33] = (uint8_t)dst_ip_last;
		f[36] = 4791 >> 8;
		f[37] = 4791 & 0xff;
		f[42] = (uint8_t)k;
		f[43] = (uint8_t)from;
		memcpy(f + 44, &be, 4);
		return len;
	}
	f[12] = ETYPE >> 8;
	f[13] = ETYPE & 0xff;
	f[14] = (uint8_t)k;
	f[15] = (uint8_t)from;
	memcpy(f + 16, &be, 4);
	for (i = 20; i < len; i++)
		f[i] = pat(seq, i);
	return len;
}

/* kind, sender and seq of a test frame; false if foreign or damaged */
static bool parse(const uint8_t *f, size_t len, unsigned int *k,
		  unsigned int *from, uint32_t *seq)
{
	uint32_t be;
	size_t i;

	if (len < 64)
		return false;
	if (f[12] == 0x08 && f[13] == 0 && f[23] == 17) {
		*k = f[42];
		*from = f[43];
		memcpy(&be, f + 44, 4);
		*seq = ntohl(be);
		return *k == K_ROCE || *k == K_ROCE_ANYMAC;
	}
	if (f[12] != ETYPE >> 8 || f[13] != (ETYPE & 0xff) || f[14] >= KINDS)
		return false;
	*k = f[14];
	*from = f[15];
	memcpy(&be, f + 16, 4);
	*seq = ntohl(be);
	if (len != 64 + *seq % 200)
		return false;
	for (i = 20; i < len; i++)
		if (f[i] != pat(*seq, i))
			return false;
	return true;
}

/* ---- 2. delivery, five ports in one process ----------------------------- */

#define NS 5
enum { S_A, S_B, S_T1, S_T2, S_W };	/* T1, T2: one identity */

struct station {
	struct backend *b;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int got[NS][KINDS];
	unsigned int bad;
	/* stream receivers (3.) */
	unsigned int want_from;
	uint32_t next_seq;
	bool slow;
	int progress_fd;
};

static void on_frame(void *ctx, unsigned int port, const void *frame,
		     size_t len)
{
	struct station *s = ctx;
	unsigned int k = KINDS, from;
	uint32_t seq = 1;

	(void)port;
	pthread_mutex_lock(&s->lock);
	if (!parse(frame, len, &k, &from, &seq) || from >= 8)
		s->bad++;
	else if (k == K_STREAM) {
		/* every frame, in order, only from the partner */
		if (from != s->want_from || seq != s->next_seq)
			s->bad++;
		else
			s->next_seq++;
		if (s->progress_fd >= 0 && s->next_seq == STREAM_N / 4 &&
		    write(s->progress_fd, "p", 1) != 1)
			s->bad++;
	} else if (from < NS) {
		s->got[from][k]++;
	} else {
		s->bad++;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	/* a receiver slower than its sender: the wire must hold it back */
	if (s->slow && k == K_STREAM && seq % SLOW_EVERY == 0)
		usleep(1000);
}

static int st_open(struct station *s, const char *spec, unsigned int idst)
{
	struct vsw_id id;

	memset(s, 0, sizeof(*s));
	s->progress_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	id_of(idst, &id);
	s->b = backend_open_id(spec, NULL, 1, on_frame, s, &id);
	return s->b ? 0 : -1;
}

static void st_close(struct station *s)
{
	backend_close(s->b);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

/* Wait until @s has @n frames of kind @k from @from. */
static bool st_wait(struct station *s, unsigned int from, enum kind k,
		    unsigned int n)
{
	long end = now_ms() + WAIT_MS;
	struct timespec ts;
	bool ok;

	pthread_mutex_lock(&s->lock);
	while (!(ok = s->got[from][k] >= n) && now_ms() < end) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void send_n(struct station *s, unsigned int from, enum kind k,
		   const uint8_t dmac[6], unsigned int ip_last, unsigned int n)
{
	uint8_t f[512];
	unsigned int i;
	size_t len;

	for (i = 0; i < n; i++) {
		len = make(f, k, from, dmac, ip_last, i);
		backend_xmit(s->b, f, len);
	}
}

static void test_delivery(void)
{
	/* per kind: which stations get A's frames */
	static const bool gets[KINDS][NS] = {
		[K_UNI] = { [S_B] = true },
		[K_ROCE] = { [S_T1] = true, [S_T2] = true },
		[K_ROCE_ANYMAC] = { [S_B] = true },
		[K_BCAST] = { [S_B] = 1, [S_T1] = 1, [S_T2] = 1, [S_W] = 1 },
		[K_UNKNOWN] = { [S_B] = 1, [S_T1] = 1, [S_T2] = 1, [S_W] = 1 },
		[K_FENCE] = { [S_B] = 1, [S_T1] = 1, [S_T2] = 1, [S_W] = 1 },
	};
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t nobody[6] = { 2, 0, 0, 0, 0x0c, 0x99 };
	struct station st[NS];
	char path[128], spec[160];
	uint8_t mac[6];
	unsigned int i, k, n = 50;
	struct backend_stats bs;

	snprintf(path, sizeof(path), "%s/deliver", tmpdir);
	snprintf(spec, sizeof(spec), "socket:%s", path);
	for (i = 0; i < NS; i++)
		/* T2 announces T1's identity: one VM, two processes */
		CHECK(!st_open(&st[i], spec, i == S_T2 ? S_T1 : i),
		      "open %u: %s", i, strerror(errno));
	if (check_failed)
		return;
	mac_of(S_B, mac);
	send_n(&st[S_A], S_A, K_UNI, mac, 0, n);
	mac_of(S_T1, mac);
	send_n(&st[S_A], S_A, K_ROCE, mac, S_T1, n);
	/* RoCE to B's address with a MAC nobody has: by GID, B only */
	send_n(&st[S_A], S_A, K_ROCE_ANYMAC, nobody, S_B, n);
	send_n(&st[S_A], S_A, K_BCAST, bcast, 0, n);
	send_n(&st[S_A], S_A, K_UNKNOWN, nobody, 0, n);
	/* the fence follows the same connections: after it, nothing more */
	send_n(&st[S_A], S_A, K_FENCE, bcast, 0, 1);
	for (i = 1; i < NS; i++)
		CHECK(st_wait(&st[i], S_A, K_FENCE, 1), "fence at %u", i);
	for (i = 0; i < NS; i++) {
		pthread_mutex_lock(&st[i].lock);
		for (k = 0; k < KINDS; k++) {
			unsigned int want = gets[k][i] ? (k == K_FENCE ? 1 : n) : 0;

			if (k == K_STREAM)
				continue;
			CHECK(st[i].got[S_A][k] == want,
			      "station %u: %u frames of kind %u, want %u", i,
			      st[i].got[S_A][k], k, want);
		}
		CHECK(!st[i].bad, "station %u: %u bad frames", i, st[i].bad);
		pthread_mutex_unlock(&st[i].lock);
	}
	backend_stats(st[S_A].b, &bs);
	CHECK(bs.tx_frames == 5 * n + 1 && !bs.tx_drops, "A: tx %lu drops %lu",
	      (unsigned long)bs.tx_frames, (unsigned long)bs.tx_drops);

	/*
	 * W leaves: unicast and RoCE for it are lost, not flooded to the
	 * others (whose NICs would have to filter them)
	 */
	st_close(&st[S_W]);
	mac_of(S_W, mac);
	send_n(&st[S_B], S_B, K_FENCE, bcast, 0, 1);	/* B's thread saw W go */
	CHECK(st_wait(&st[S_A], S_B, K_FENCE, 1), "fence from B");
	for (i = 0; i < 2000; i++) {
		/* A learns of it when its connection to W closes */
		send_n(&st[S_A], S_A, K_UNI, mac, 0, 1);
		backend_stats(st[S_A].b, &bs);
		if (bs.tx_drops)
			break;
		usleep(1000);
	}
	send_n(&st[S_A], S_A, K_UNI, mac, 0, 10);
	send_n(&st[S_A], S_A, K_ROCE, mac, S_W, 10);
	/* RoCE to an address nobody holds, by W's MAC: lost too */
	send_n(&st[S_A], S_A, K_ROCE, mac, 99, 10);
	send_n(&st[S_A], S_A, K_FENCE, bcast, 0, 1);
	for (i = 1; i < S_W; i++)
		CHECK(st_wait(&st[i], S_A, K_FENCE, 2), "second fence at %u", i);
	backend_stats(st[S_A].b, &bs);
	CHECK(bs.tx_drops >= 30, "A: frames for W: %lu dropped",
	      (unsigned long)bs.tx_drops);
	for (i = 0; i < S_W; i++) {
		pthread_mutex_lock(&st[i].lock);
		CHECK(st[i].got[S_A][K_UNI] == (i == S_B ? n : 0) &&
		      st[i].got[S_A][K_ROCE] == (i == S_T1 || i == S_T2 ? n : 0),
		      "station %u got frames for W", i);
		pthread_mutex_unlock(&st[i].lock);
	}
	for (i = 0; i < S_W; i++)
		st_close(&st[i]);
	CHECK(access(path, F_OK), "%s left behind", path);
}

/* ---- flow control: a receiver with no room, a sender held back ----------- */

static atomic_bool allow;
static atomic_int readies;

static bool room_fn(void *ctx, unsigned int port)
{
	(void)ctx;
	(void)port;
	return atomic_load(&allow);
}

static void ready_fn(void *ctx, unsigned int port)
{
	(void)ctx;
	(void)port;
	atomic_fetch_add(&readies, 1);
}

/*
 * R's device has no room: R reads nothing, S1's frames wait in the wire
 * until S1 is held back (backend_tx_busy), S2 leaves with frames still on
 * the way.  Once R has room, every frame of both arrives, in order, and
 * S1 is told it may go on.
 */
static void test_flow(void)
{
	struct station r, s1, s2;
	char path[128], spec[160];
	struct backend_stats bs;
	uint8_t f[1600], dmac[6];
	uint32_t n1 = 0, i;
	long end;
	size_t len;

	snprintf(path, sizeof(path), "%s/flow", tmpdir);
	snprintf(spec, sizeof(spec), "socket:%s", path);
	CHECK(!st_open(&r, spec, 1) && !st_open(&s1, spec, 2) &&
	      !st_open(&s2, spec, 3), "open: %s", strerror(errno));
	if (check_failed)
		return;
	r.want_from = 3;
	atomic_store(&allow, false);
	backend_set_flow(r.b, room_fn, NULL, NULL);
	backend_set_flow(s1.b, NULL, ready_fn, NULL);
	mac_of(1, dmac);
	/* S2: 100 frames, then it leaves */
	for (i = 0; i < 100; i++) {
		len = make(f, K_STREAM, 3, dmac, 0, i);
		backend_xmit(s2.b, f, len);
	}
	st_close(&s2);
	/* S1: until the wire holds it back (its socket buffer is bounded) */
	while (!backend_tx_busy(s1.b) && n1 < 100000) {
		len = make(f, K_UNI, 2, dmac, 0, n1++);
		backend_xmit(s1.b, f, len);
	}
	backend_stats(s1.b, &bs);
	CHECK(backend_tx_busy(s1.b) && bs.tx_frames == n1 && !bs.tx_drops,
	      "S1 not held back after %u frames (drops %lu)", n1,
	      (unsigned long)bs.tx_drops);
	pthread_mutex_lock(&r.lock);
	CHECK(!r.got[2][K_UNI] && !r.next_seq && !r.bad,
	      "R took frames without room");
	pthread_mutex_unlock(&r.lock);

	atomic_store(&allow, true);
	backend_rx_resume(r.b);
	CHECK(st_wait(&r, 2, K_UNI, n1), "R got %u of S1's %u", r.got[2][K_UNI],
	      n1);
	pthread_mutex_lock(&r.lock);
	CHECK(r.got[2][K_UNI] == n1 && r.next_seq == 100 && !r.bad,
	      "R: %u of %u from S1, %u of 100 from S2 (gone), bad %u",
	      r.got[2][K_UNI], n1, r.next_seq, r.bad);
	pthread_mutex_unlock(&r.lock);
	for (end = now_ms() + WAIT_MS; backend_tx_busy(s1.b) && now_ms() < end;)
		usleep(1000);
	CHECK(!backend_tx_busy(s1.b) && atomic_load(&readies) >= 1,
	      "S1 not released (ready callbacks %d)", atomic_load(&readies));
	st_close(&s1);
	st_close(&r);
	CHECK(access(path, F_OK), "%s left behind", path);
}

/* ---- 3. eight processes, three killed ------------------------------------ */

#define NP 8
/* pairs: 0 -> 1, 2 -> 3, 4 -> 5, 6 -> 7; 0, 1 and 2 are killed */
static bool killed(unsigned int i)
{
	return i <= 2;
}

/* A sender paces itself by the wire, as the device's SQs do. */
static bool send_stream(struct backend *b, unsigned int me, uint32_t n)
{
	uint8_t f[512], dmac[6];
	struct backend_stats bs;
	uint32_t seq;
	size_t len;

	mac_of(me + 1, dmac);
	for (seq = 0; seq < n; seq++) {
		while (backend_tx_busy(b))
			usleep(50);
		len = make(f, K_STREAM, me, dmac, 0, seq);
		backend_xmit(b, f, len);
	}
	while (backend_tx_busy(b))
		usleep(50);
	backend_stats(b, &bs);
	return bs.tx_frames == n && !bs.tx_drops;
}

/*
 * Station @me: opens (says 'o' on @up), waits for 'g', then sends or
 * receives.  Exit status: 0 all good, else what failed.
 */
static int proc_main(unsigned int me, const char *spec, int down, int up)
{
	struct station s;
	char c;
	int ret = 0;

	if (st_open(&s, spec, me))
		return 10;
	s.want_from = me - 1;
	s.slow = me == 7;
	s.progress_fd = me == 5 || me == 7 ? up : -1;
	if (write(up, "o", 1) != 1 || read(down, &c, 1) != 1)
		return 11;
	if (me % 2 == 0) {
		if (!send_stream(s.b, me, killed(me) ? UINT32_MAX : STREAM_N))
			ret = 12;
		/* stay on the wire until told: the receiver may still read */
		if (read(down, &c, 1) != 1)
			ret = ret ? ret : 13;
	} else {
		/* the parent says when the sender is done; the rest is in flight */
		if (read(down, &c, 1) != 1)
			ret = 14;
		pthread_mutex_lock(&s.lock);
		while (me != 3 && s.next_seq < STREAM_N && !s.bad) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += WAIT_MS / 1000;
			if (pthread_cond_timedwait(&s.cond, &s.lock, &ts))
				break;	/* nothing for that long: lost */
		}
		if (s.bad)
			ret = 15;
		else if (s.next_seq != STREAM_N && !killed(me) && me != 3)
			ret = 16;
		pthread_mutex_unlock(&s.lock);
	}
	st_close(&s);
	return ret;
}

static void test_kill_three(void)
{
	int down[NP][2], up[NP][2], status;
	pid_t pid[NP];
	char path[128], spec[160], c;
	unsigned int i, progress = 0;

	snprintf(path, sizeof(path), "%s/eight", tmpdir);
	snprintf(spec, sizeof(spec), "socket:%s", path);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	for (i = 0; i < NP; i++) {
		if (pipe(down[i]) || pipe(up[i])) {
			CHECK(0, "pipe: %s", strerror(errno));
			return;
		}
		pid[i] = fork();
		if (!pid[i]) {
			close(down[i][1]);
			close(up[i][0]);
			_exit(proc_main(i, spec, down[i][0], up[i][1]));
		}
		close(down[i][0]);
		close(up[i][1]);
		/* in order: station 0 is the first on the wire */
		CHECK(read(up[i][0], &c, 1) == 1 && c == 'o', "station %u open", i);
	}
	for (i = 0; i < NP; i++)
		CHECK(write(down[i][1], "g", 1) == 1, "go %u", i);
	/* mid-transfer: both surviving receivers have a quarter */
	for (i = 5; i < NP; i += 2)
		progress += read(up[i][0], &c, 1) == 1 && c == 'p';
	CHECK(progress == 2, "the surviving pairs did not start");
	for (i = 0; i < NP; i++)
		if (killed(i))
			kill(pid[i], SIGKILL);
	/* senders finish; then the receivers are asked */
	for (i = 4; i < NP; i += 2) {
		CHECK(write(down[i][1], "s", 1) == 1, "stop %u", i);
		CHECK(waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
		      !WEXITSTATUS(status), "sender %u: status %#x", i, status);
	}
	for (i = 1; i < NP; i += 2) {
		if (killed(i))
			continue;
		/* the receiver checks its count when told: the stream is in */
		CHECK(write(down[i][1], "s", 1) == 1, "stop %u", i);
	}
	for (i = 0; i < NP; i++) {
		if (i >= 4 && i % 2 == 0)
			continue;
		if (waitpid(pid[i], &status, 0) != pid[i])
			status = -1;
		if (killed(i))
			CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			      "station %u: status %#x", i, status);
		else
			CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			      "receiver %u: status %#x", i, status);
	}
	for (i = 0; i < NP; i++) {
		close(down[i][1]);
		close(up[i][0]);
	}
	/* the killed ports' files are removed by the last to leave */
	CHECK(access(path, F_OK), "%s left behind", path);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_vswitch.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_records();
	test_delivery();
	test_flow();
	test_kill_three();
	CHECK(!rmdir(tmpdir), "rmdir %s: %s", tmpdir, strerror(errno));
	return check_done();
}
