/*
 * A metric's unit, read from its name's suffix: the one table of
 * docs/protocol.md ("Units"), used wherever a value is shown with its unit
 * and wherever the metric's direction is judged; and how a value or a gain
 * is shown, which the rule's reasons and every receipt share.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "runners.h"

struct unit_row {
	const char *suffix;     /* lower case, words joined by '_' */
	const char *text;       /* shown after a value; NULL: "WORD/s" */
	enum runner_metric_kind kind;
};

#define TIME RUNNER_METRIC_TIME
#define RATE RUNNER_METRIC_RATE

/* The longest suffix that ends the name on a word boundary wins, so that
 * "read_mb_s" is a rate and "wall_s" a time. */
static const struct unit_row units[] = {
	{ "ns", "ns", TIME }, { "us", "us", TIME }, { "ms", "ms", TIME },
	{ "s", "s", TIME }, { "sec", "s", TIME },
	{ "b_s", "B/s", RATE }, { "kb_s", "kB/s", RATE }, { "mb_s", "MB/s", RATE },
	{ "gb_s", "GB/s", RATE }, { "tb_s", "TB/s", RATE }, { "kib_s", "KiB/s", RATE },
	{ "mib_s", "MiB/s", RATE }, { "gib_s", "GiB/s", RATE }, { "tib_s", "TiB/s", RATE },
	{ "bytes_s", "bytes/s", RATE }, { "it_s", "it/s", RATE }, { "ops_s", "ops/s", RATE },
	{ "items_s", "items/s", RATE }, { "frames_s", "frames/s", RATE },
	{ "tokens_s", "tokens/s", RATE }, { "samples_s", "samples/s", RATE },
	{ "pixels_s", "pixels/s", RATE }, { "elements_s", "elements/s", RATE },
	{ "rays_s", "rays/s", RATE },
	{ "per_s", NULL, RATE }, { "per_sec", NULL, RATE }, { "per_second", NULL, RATE },
	{ "bps", "bps", RATE }, { "kbps", "kbps", RATE }, { "mbps", "Mbps", RATE },
	{ "gbps", "Gbps", RATE }, { "ops", "ops", RATE }, { "iops", "IOPS", RATE },
	{ "flops", "FLOPS", RATE }, { "gflops", "GFLOPS", RATE }, { "tflops", "TFLOPS", RATE },
	{ "fps", "fps", RATE }, { "qps", "qps", RATE }, { "rps", "rps", RATE },
	{ "tps", "tps", RATE }, { "hz", "Hz", RATE }, { "khz", "kHz", RATE },
	{ "mhz", "MHz", RATE }, { "ghz", "GHz", RATE },
	{ "rate", "", RATE }, { "throughput", "", RATE }, { "bandwidth", "", RATE },
};

/* True when row's suffix ends norm (of length len) on a word boundary. */
static bool ends_with(const char *norm, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return n <= len && !strcmp(norm + len - n, suffix) &&
	       (n == len || norm[len - n - 1] == '_');
}

void runner_metric_unit(struct runner_metric_unit *out, const char *name)
{
	char norm[128];
	const struct unit_row *best = NULL;
	size_t len, i, w, n;

	memset(out, 0, sizeof(*out));
	if (!name)
		return;
	/* The suffix is all that counts: a longer name is read by its tail. */
	len = strlen(name);
	if (len >= sizeof(norm))
		name += len - (sizeof(norm) - 1);
	/* Lower case, every separator ('.', ':', '-') read as '_'. */
	for (len = 0; name[len]; len++)
		norm[len] = isalnum((unsigned char)name[len]) ?
			    (char)tolower((unsigned char)name[len]) : '_';
	norm[len] = '\0';
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (ends_with(norm, len, units[i].suffix) &&
		    (!best || strlen(units[i].suffix) > strlen(best->suffix)))
			best = &units[i];
	}
	if (!best)
		return;
	out->kind = best->kind;
	if (best->text) {
		snprintf(out->text, sizeof(out->text), "%s", best->text);
		return;
	}
	/* NAME_per_s: the word before "per", as written, per second; a word
	 * too long for the text is left out ("/s"). */
	n = strlen(best->suffix);
	len = len > n ? len - n - 1 : 0;
	for (w = len; w > 0 && norm[w - 1] != '_'; w--)
		;
	n = len - w < sizeof(out->text) - 3 ? len - w : 0;
	snprintf(out->text, sizeof(out->text), "%.*s/s", (int)n, name + w);
}

bool runner_metric_needs_better(const char *name)
{
	struct runner_metric_unit u;

	runner_metric_unit(&u, name);
	return u.kind != RUNNER_METRIC_TIME;
}

void runner_format_value(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (v == floor(v) || fabs(v) >= 1e6)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.6g", v);
}

static void format_gain(char *buf, size_t len, double frac, bool sign)
{
	if (!isfinite(frac))
		snprintf(buf, len, "-");
	else if (sign)
		snprintf(buf, len, "%+.3f%%", frac * 100.0);
	else
		snprintf(buf, len, "%.3f%%", frac * 100.0);
}

void runner_format_gain(char *buf, size_t len, double frac)
{
	format_gain(buf, len, frac, false);
}

void runner_format_gain_signed(char *buf, size_t len, double frac)
{
	format_gain(buf, len, frac, true);
}
