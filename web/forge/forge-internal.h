/* Shared by the files of web/forge/ and their unit tests alone. */
#ifndef PERFD_WEB_FORGE_INTERNAL_H
#define PERFD_WEB_FORGE_INTERNAL_H

#include <stdbool.h>

/* Whether a comment's body starts, on its first line, with "/perfd run"
 * (then *sha is "") or "/perfd run SHA" (SHA 7 to 40 hex digits, copied
 * lower-cased into sha); blanks before the command are skipped and
 * anything after it on the line makes it no command. */
bool web_run_command(char sha[41], const char *body);

#endif
