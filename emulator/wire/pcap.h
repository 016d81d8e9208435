/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frame capture in the classic libpcap file format (magic 0xa1b2c3d4 in
 * host byte order, version 2.4, snaplen 65535, LINKTYPE_ETHERNET,
 * microsecond timestamps), written without libpcap.
 *
 * Each record is written whole by one write(2) as the frame is captured,
 * as a kernel tap hands it over: the file holds every frame captured
 * before the process ended, however it ended (SIGKILL, _exit(), or
 * another thread's exit() cutting our destructor short).
 *
 * Opening a file that a writer of this process already has open (same
 * device and inode) shares that writer, so several ports can capture to
 * one file; their records interleave in time order.
 */
#ifndef MANA_EMU_PCAP_H
#define MANA_EMU_PCAP_H

#include <stddef.h>

#define PCAP_SNAPLEN	65535

struct pcap_writer;

/* Create or truncate @path and write the file header; NULL and errno. */
struct pcap_writer *pcap_open(const char *path);

/* Append one record stamped now; thread-safe.  Errors are reported once. */
void pcap_write(struct pcap_writer *w, const void *frame, size_t len);

/* Drop a reference; the last one closes the file. */
void pcap_close(struct pcap_writer *w);

#endif /* MANA_EMU_PCAP_H */
