/*
 * The hub's database, as its verbs open it (perfd serve --config, perfd
 * token): apart from config.c, which the configuration's fuzz targets
 * build without the verbs' helpers.
 */
#include <sys/stat.h>

#include "daemon.h"
#include "hubd.h"

struct db *hub_db_open(const struct hub_config *c)
{
	struct db_opts o = DB_OPTS_INIT;

	umask(077);
	o.path = c->database;
	return cli_db_open(&o);
}
