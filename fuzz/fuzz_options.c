// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-emu's option parser on arbitrary words: the launcher's argv
 * (words split at NUL bytes) and the MANA_EMU_OPTIONS string (the input
 * up to its first NUL).  Properties: 0 or MANA_EMU_OPT_ERROR with a
 * message; argv consumption within argc; accepted options format to a
 * string that parses back to options that format the same (the round
 * trip the launcher relies on to hand them to the library).
 */
#include <stdlib.h>
#include <string.h>

#include "emulator/core/options.h"
#include "fuzz_check.h"

#define FORMAT_MAX 16384
#define WORDS_MAX 64

static void round_trip(const struct mana_emu_options *opts)
{
	static char text[FORMAT_MAX], again[FORMAT_MAX];
	struct mana_emu_options back;
	char err[256];
	int n;

	n = mana_emu_options_format(opts, text, sizeof(text));
	FUZZ_CHECK(n >= 0 && (size_t)n < sizeof(text));
	mana_emu_options_init(&back);
	err[0] = 0;
	if (mana_emu_options_parse_string(&back, text, err, sizeof(err))) {
		fprintf(stderr, "formatted options rejected: %s\n  %s\n", text,
			err);
		FUZZ_CHECK(!"format output parses");
	}
	FUZZ_CHECK(mana_emu_options_format(&back, again, sizeof(again)) == n);
	FUZZ_CHECK(!strcmp(text, again));
}

static void check_result(int ret, const char *err,
			 const struct mana_emu_options *opts)
{
	FUZZ_CHECK(ret == 0 || ret == MANA_EMU_OPT_ERROR);
	FUZZ_CHECK(memchr(err, 0, 256));
	if (ret) {
		FUZZ_CHECK(err[0]);
		return;
	}
	FUZZ_CHECK(opts->ports >= 1 && opts->ports <= MANA_EMU_MAX_PORTS);
	FUZZ_CHECK(memchr(opts->pcap, 0, sizeof(opts->pcap)) &&
		   memchr(opts->stats, 0, sizeof(opts->stats)) &&
		   memchr(opts->backend, 0, sizeof(opts->backend)));
	round_trip(opts);
}

static void as_string(const uint8_t *data, size_t size)
{
	struct mana_emu_options opts;
	char err[256] = "";
	char *str = malloc(size + 1);
	int ret;

	FUZZ_CHECK(str);
	memcpy(str, data, size);
	str[size] = 0;
	mana_emu_options_init(&opts);
	ret = mana_emu_options_parse_string(&opts, str, err, sizeof(err));
	check_result(ret, err, &opts);
	free(str);
}

static void as_argv(const uint8_t *data, size_t size)
{
	struct mana_emu_options opts;
	char *words[WORDS_MAX], *buf = malloc(size + 1);
	char err[256] = "";
	int argc = 0, consumed = -1, ret;
	size_t i, start = 0;

	FUZZ_CHECK(buf);
	memcpy(buf, data, size);
	buf[size] = 0;
	for (i = 0; i <= size && argc < WORDS_MAX; i++) {
		if (buf[i])
			continue;
		words[argc++] = buf + start;
		start = i + 1;
	}
	mana_emu_options_init(&opts);
	ret = mana_emu_options_parse_argv(&opts, argc, words, &consumed, err,
					  sizeof(err));
	if (!ret)
		FUZZ_CHECK(consumed >= 0 && consumed <= argc);
	check_result(ret, err, &opts);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	as_string(data, size);
	as_argv(data, size);
	return 0;
}
