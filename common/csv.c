/* CSV fields (RFC 4180), as perfd's CSV answers write them; see common.h. */
#include <string.h>

#include "common.h"

void csv_text(struct strbuf *out, const char *s, size_t len)
{
	/* A spreadsheet runs a cell that starts with one of these as a
	 * formula: such a text is kept as text by a leading apostrophe. */
	bool formula = len && strchr("=+-@\t\r", s[0]);
	size_t i;

	if (!formula && !memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\n', len) &&
	    !memchr(s, '\r', len)) {
		strbuf_add(out, s, len);
		return;
	}
	strbuf_addch(out, '"');
	if (formula)
		strbuf_addch(out, '\'');
	for (i = 0; i < len; i++) {
		if (s[i] == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, s[i]);
	}
	strbuf_addch(out, '"');
}
