/*
 * The server's connection guard: deadlines a trickle of bytes cannot
 * extend, and a bound on connections shared fairly between addresses
 * (docs/hub.md, "Bounds"). It knows sockets and addresses, not HTTP: the
 * server tells it when a connection starts, when its request head is whole,
 * when its answer is done and when it closes.
 *
 * A connection past its deadline, or displaced to let another address in,
 * is shut down (shutdown(2), both ways) by the guard; the server's thread
 * then sees the socket end and closes it. The guard shuts down only
 * descriptors it holds an entry for, under its lock, and the server removes
 * an entry (web_guard_remove, from MHD's close notification) before the
 * descriptor is closed: a number the kernel hands to a new connection is
 * never shut down in the old one's name.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "hub-internal.h"

struct web_conn {
	int fd;
	struct web_peer *peer;       /* the address it counts in; NULL once dropped */
	bool trusted;                /* from a trusted proxy: no share */
	int phase;                   /* WEB_PHASE_* */
	bool heard;                  /* the server has read the start of its head */
	double since;                /* when its phase began (monotonic s) */
	double deadline;
	int dropped;                 /* WEB_CLOSE_*: shut down, its close pending */
	struct web_conn *prev, *next;
};

/* An address holding connections; freed when it holds none. */
struct web_peer {
	unsigned char key[16];
	unsigned n;                  /* its live connections */
};

/* The sweeper looks at most this often, so that a look at every connection
 * costs little however many deadlines fall close together. */
#define SWEEP_GRAIN_S 0.1

static double now_s(void)
{
	return (double)time_monotonic_ns() / 1e9;
}

/*
 * The 16 bytes an address counts under: an IPv4 address (also as ::ffff:
 * a.b.c.d) as itself, an IPv6 address by its /64, which one holder gets
 * whole. full keeps all 16 bytes, for comparing with a trusted proxy.
 * false for another family.
 */
static bool addr_key(unsigned char key[16], const struct sockaddr *sa, bool full)
{
	memset(key, 0, 16);
	if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		memcpy(key, a, 16);
		if (!full && !IN6_IS_ADDR_V4MAPPED(a))
			memset(key + 8, 0, 8);
		return true;
	}
	return false;
}

int web_guard_address(unsigned char out[16], const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1) {
		memset(out, 0, 16);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &a4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &a6) == 1) {
		memcpy(out, &a6, 16);
		return 0;
	}
	return err_set(-EINVAL, "'%s' is not a numeric IPv4 or IPv6 address", addr);
}

static struct web_peer *peer_find(struct web_guard *g, const unsigned char key[16])
{
	size_t i;

	for (i = 0; i < g->npeers; i++)
		if (!memcmp(g->peers[i]->key, key, 16))
			return g->peers[i];
	return NULL;
}

/* c leaves its address's count (shut down or closed). */
static void peer_dec(struct web_guard *g, struct web_conn *c)
{
	struct web_peer *p = c->peer;
	size_t i;

	assert(p && p->n > 0);
	c->peer = NULL;
	g->nlive--;
	if (--p->n)
		return;
	for (i = 0; g->peers[i] != p; i++)
		;
	g->peers[i] = g->peers[--g->npeers];
	free(p);
}

/* Shuts c down for why; its entry stays until the server's close. */
static void drop(struct web_guard *g, struct web_conn *c, int why)
{
	shutdown(c->fd, SHUT_RDWR);
	c->dropped = why;
	peer_dec(g, c);
	if (why == WEB_CLOSE_HEADER)
		g->stats.closed_header++;
	else if (why == WEB_CLOSE_BODY)
		g->stats.closed_body++;
	else
		g->stats.displaced++;
}

/* Wakes the sweeper when deadline comes before the time it waits for. */
static void set_deadline(struct web_guard *g, struct web_conn *c, double deadline)
{
	c->deadline = deadline;
	if (deadline < g->next_wake)
		pthread_cond_signal(&g->wake);
}

static void *sweep(void *arg)
{
	struct web_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		double now = now_s(), next = INFINITY;
		struct web_conn *c;
		struct timespec ts;

		for (c = g->conns; c; c = c->next) {
			if (c->dropped)
				continue;
			if (now >= c->deadline)
				drop(g, c, c->phase == WEB_PHASE_BODY ? WEB_CLOSE_BODY :
					   WEB_CLOSE_HEADER);
			else if (c->deadline < next)
				next = c->deadline;
		}
		if (next < now + SWEEP_GRAIN_S)
			next = now + SWEEP_GRAIN_S;
		g->next_wake = next;
		if (isinf(next)) {
			pthread_cond_wait(&g->wake, &g->lock);
			continue;
		}
		/* The monotonic clock of time_monotonic_ns, which the
		 * condition variable waits on too. */
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&g->wake, &g->lock, &ts);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int web_guard_init(struct web_guard *g, const struct web_guard_opts *o)
{
	pthread_condattr_t ca;
	size_t i;
	int r;

	memset(g, 0, sizeof(*g));
	g->max = o->max_connections;
	g->crowd = g->max - g->max / 4;
	g->header_s = o->header_timeout_s;
	g->body_s = o->body_timeout_s;
	g->next_wake = INFINITY;
	g->peers = xcalloc(WEB_GUARD_SLOTS(g->max), sizeof(*g->peers));
	g->trusted = xcalloc(o->ntrusted + 1, sizeof(*g->trusted));
	for (i = 0; i < o->ntrusted; i++) {
		r = web_guard_address(g->trusted[g->ntrusted], o->trusted[i]);
		if (r < 0) {
			err_set(r, "trusted proxy %s", err_last());
			goto out;
		}
		g->ntrusted++;
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	g->ready = true;
	r = -pthread_create(&g->sweeper, NULL, sweep, g);
	if (r < 0) {
		err_set(r, "cannot start the connection guard's thread: %s", strerror(-r));
		goto out;
	}
	g->running = true;
	r = 0;
out:
	if (r < 0)
		web_guard_release(g);
	return r;
}

void web_guard_release(struct web_guard *g)
{
	struct web_conn *c, *next;
	size_t i;

	if (g->running) {
		pthread_mutex_lock(&g->lock);
		g->stop = true;
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->sweeper, NULL);
		g->running = false;
	}
	if (g->ready) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		g->ready = false;
	}
	for (c = g->conns; c; c = next) {
		next = c->next;
		free(c);
	}
	g->conns = NULL;
	for (i = 0; i < g->npeers; i++)
		free(g->peers[i]);
	g->npeers = 0;
	free(g->peers);
	g->peers = NULL;
	free(g->trusted);
	g->trusted = NULL;
}

static bool is_trusted(const struct web_guard *g, const struct sockaddr *sa)
{
	unsigned char full[16];
	size_t i;

	if (!addr_key(full, sa, true))
		return false;
	for (i = 0; i < g->ntrusted; i++)
		if (!memcmp(g->trusted[i], full, 16))
			return true;
	return false;
}

/*
 * Whether c waits on its client, as far as the server can tell without
 * reading from it: the server has read the start of its head (the rest is
 * the client's to send), or its socket holds no byte the server has not
 * read. A connection whose bytes wait unread is waiting on the server: a
 * burst of new connections would otherwise push out one whose whole
 * request came at once, before the server's thread got to it.
 */
static bool waits_on_client(const struct web_conn *c)
{
	int n = 0;

	if (c->heard)
		return true;
	return ioctl(c->fd, FIONREAD, &n) < 0 || n == 0;
}

/* Whether c is displaced before b: the older, after (by_holder) the one of
 * the address that holds more. */
static bool before(const struct web_conn *c, const struct web_conn *b, bool by_holder)
{
	if (by_holder && c->peer->n != b->peer->n)
		return c->peer->n > b->peer->n;
	return c->since < b->since;
}

/* Which connections a look of oldest() takes. */
enum { WAIT_HEARD, WAIT_SILENT, WAIT_ANY };

/*
 * The first candidate of the connections waiting for a head (new or kept
 * alive): with over, only those of an address over its share, the oldest;
 * else the oldest of the address that holds the most, so that a client
 * with one kept-alive connection is not the one pushed out while a proxy
 * holds hundreds. which: those the server has heard from (no system call),
 * those it has not whose socket holds nothing unread, or any. NULL if none.
 */
static struct web_conn *oldest(struct web_guard *g, unsigned share, bool over, int which)
{
	struct web_conn *c, *best = NULL;

	for (c = g->conns; c; c = c->next) {
		if (c->dropped || c->phase == WEB_PHASE_BODY)
			continue;
		if (over && (c->trusted || c->peer->n <= share))
			continue;
		if ((which == WAIT_HEARD && !c->heard) || (which == WAIT_SILENT && c->heard))
			continue;
		if (best && !before(c, best, !over))
			continue;
		if (which == WAIT_SILENT && !waits_on_client(c))
			continue;
		best = c;
	}
	return best;
}

/*
 * The connection to shut down for a new one: one waiting on its client,
 * first of an address over its share; only when none waits on its client,
 * one waiting on the server. NULL when every connection is busy with a
 * body or an answer.
 */
static struct web_conn *victim(struct web_guard *g, unsigned share)
{
	struct web_conn *v;

	if ((v = oldest(g, share, true, WAIT_HEARD)) || (v = oldest(g, share, true, WAIT_SILENT)) ||
	    (v = oldest(g, share, false, WAIT_HEARD)) || (v = oldest(g, share, false, WAIT_SILENT)) ||
	    (v = oldest(g, share, true, WAIT_ANY)))
		return v;
	return oldest(g, share, false, WAIT_ANY);
}

bool web_guard_admit(struct web_guard *g, const struct sockaddr *sa)
{
	unsigned char key[16];
	struct web_peer *p;
	unsigned share, held;
	size_t peers;
	bool ok = true;
	struct web_conn *v;

	if (!addr_key(key, sa, false))
		return false;
	pthread_mutex_lock(&g->lock);
	if (g->nlive < g->crowd)
		goto out;
	p = peer_find(g, key);
	held = p ? p->n : 0;
	peers = g->npeers + (p ? 0 : 1);
	share = g->max / (unsigned)peers;
	if (share < 1)
		share = 1;
	if (!is_trusted(g, sa) && held >= share) {
		g->stats.refused_share++;
		ok = false;
		goto out;
	}
	if (g->nlive < g->max)
		goto out;
	v = victim(g, share);
	if (!v) {
		g->stats.refused_full++;
		ok = false;
		goto out;
	}
	drop(g, v, WEB_CLOSE_DISPLACED);
out:
	pthread_mutex_unlock(&g->lock);
	return ok;
}

struct web_conn *web_guard_add(struct web_guard *g, int fd, const struct sockaddr *sa)
{
	struct web_conn *c = xcalloc(1, sizeof(*c));
	unsigned char key[16];
	struct web_peer *p;

	c->fd = fd;
	if (!addr_key(key, sa, false))
		memset(key, 0, sizeof(key));
	c->trusted = is_trusted(g, sa);
	c->phase = WEB_PHASE_HEAD;
	pthread_mutex_lock(&g->lock);
	c->since = now_s();
	p = peer_find(g, key);
	if (!p) {
		/* Room for it: the server takes at most WEB_GUARD_SLOTS(max). */
		assert(g->npeers < WEB_GUARD_SLOTS(g->max));
		p = xcalloc(1, sizeof(*p));
		memcpy(p->key, key, 16);
		g->peers[g->npeers++] = p;
	}
	c->peer = p;
	p->n++;
	g->nlive++;
	c->next = g->conns;
	if (g->conns)
		g->conns->prev = c;
	g->conns = c;
	set_deadline(g, c, c->since + g->header_s);
	pthread_mutex_unlock(&g->lock);
	return c;
}

void web_guard_phase(struct web_guard *g, struct web_conn *c, int phase)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (!c->dropped && c->phase != phase) {
		c->phase = phase;
		c->heard = false;
		c->since = now_s();
		set_deadline(g, c, c->since + (phase == WEB_PHASE_BODY ? g->body_s : g->header_s));
	}
	pthread_mutex_unlock(&g->lock);
}

void web_guard_heard(struct web_guard *g, struct web_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	c->heard = true;
	pthread_mutex_unlock(&g->lock);
}

void web_guard_remove(struct web_guard *g, struct web_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (!c->dropped)
		peer_dec(g, c);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void web_guard_stats(struct web_guard *g, struct web_conn_stats *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->stats;
	out->open = g->nlive;
	pthread_mutex_unlock(&g->lock);
}
