/*
 * A pull request's description or a commit's message as the forecasts'
 * reader takes it (web/forge/forecast.c): every line it keeps is bounded,
 * a forecast it accepts has a case and an ordered band within 0..1000%,
 * one it refuses says why, and the lines kept of a text read as the text.
 */
#include <string.h>

#include "forge.h"
#include "fuzz.h"

static void check(const struct web_forecast *f, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(strlen(f[i].line) <= WEB_FORECAST_LINE_MAX);
		if (f[i].dir == WEB_FORECAST_BAD) {
			FUZZ_CHECK(*f[i].why && !f[i].has_band);
			continue;
		}
		FUZZ_CHECK(*f[i].case_name);
		FUZZ_CHECK(!f[i].has_band || (f[i].lo >= 0 && f[i].lo <= f[i].hi && f[i].hi <= 10));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char kept[WEB_FORECAST_TEXT_MAX];
	struct web_forecast a[WEB_FORECASTS_MAX], b[WEB_FORECASTS_MAX];
	bool more_a, more_b;
	size_t len;
	int na, nb, i;

	na = web_forecasts_parse(a, WEB_FORECASTS_MAX, (const char *)data, size, &more_a);
	FUZZ_CHECK(na >= 0 && na <= WEB_FORECASTS_MAX);
	check(a, na);
	len = web_forecast_lines(kept, sizeof(kept), (const char *)data, size);
	FUZZ_CHECK(len < sizeof(kept));
	nb = web_forecasts_parse(b, WEB_FORECASTS_MAX, kept, len, &more_b);
	/* A NUL in the text ends a line early where the copy is read as a
	 * string: only texts without one must read the same. */
	if (!memchr(data, '\0', size)) {
		FUZZ_CHECK(na == nb && more_a == more_b);
		for (i = 0; i < na; i++)
			FUZZ_CHECK(a[i].dir == b[i].dir && !strcmp(a[i].line, b[i].line));
	}
	return 0;
}
