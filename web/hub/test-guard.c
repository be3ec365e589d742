/* Unit tests of web/hub/guard.c: who is admitted, who is displaced, and
 * deadlines kept, on real sockets (socket pairs: the guard shuts down one
 * end, the test reads the other's end of stream). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "hub-internal.h"

#define N 64

struct peer_sock {
	int fd[2];                   /* the server's end, the client's */
	struct web_conn *c;
};

static struct sockaddr_in addr(const char *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(40000) };

	assert_int_equal(inet_pton(AF_INET, a, &sa.sin_addr), 1);
	return sa;
}

/* Asks the guard to admit a connection from a; on yes, adds it. */
static bool connect_from(struct web_guard *g, struct peer_sock *p, const char *a)
{
	struct sockaddr_in sa = addr(a);

	if (!web_guard_admit(g, (struct sockaddr *)&sa))
		return false;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->fd), 0);
	p->c = web_guard_add(g, p->fd[0], (struct sockaddr *)&sa);
	return true;
}

/* Whether the server's end was shut down: the client's end reads its end
 * within wait_ms. */
static bool is_shut(struct peer_sock *p, int wait_ms)
{
	struct pollfd pfd = { .fd = p->fd[1], .events = POLLIN };
	char b;

	if (poll(&pfd, 1, wait_ms) != 1)
		return false;
	return recv(p->fd[1], &b, 1, MSG_DONTWAIT) == 0;
}

static void close_all(struct web_guard *g, struct peer_sock *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!p[i].c)
			continue;
		web_guard_remove(g, p[i].c);
		close(p[i].fd[0]);
		close(p[i].fd[1]);
		p[i].c = NULL;
	}
}

static void test_share(void **state)
{
	const struct web_guard_opts o = { .max_connections = 16, .header_timeout_s = 60,
					  .body_timeout_s = 60 };
	struct peer_sock a[N] = { { { -1, -1 }, NULL } }, b[4];
	struct web_conn_stats st;
	struct web_guard g;
	int i;

	assert_int_equal(web_guard_init(&g, &o), 0);
	/* Alone, one address takes the whole bound, and no more. */
	for (i = 0; i < 16; i++)
		assert_true(connect_from(&g, &a[i], "10.0.0.1"));
	assert_false(connect_from(&g, &a[16], "10.0.0.1"));
	/* Another address comes in by displacing the first's oldest. */
	memset(b, 0, sizeof(b));
	assert_true(connect_from(&g, &b[0], "10.0.0.2"));
	assert_true(is_shut(&a[0], 0));
	for (i = 1; i < 16; i++)
		assert_false(is_shut(&a[i], 0));
	/* The newest of the first address's is not the one displaced: the
	 * oldest waiting is, then the next oldest. */
	assert_true(connect_from(&g, &b[1], "10.0.0.2"));
	assert_true(is_shut(&a[1], 0));
	assert_false(is_shut(&a[15], 0));
	web_guard_stats(&g, &st);
	assert_int_equal(st.open, 16);
	assert_int_equal(st.displaced, 2);
	assert_int_equal(st.refused_share, 1);
	/* A connection busy with a body is not displaced. */
	for (i = 2; i < 16; i++)
		web_guard_phase(&g, a[i].c, WEB_PHASE_BODY);
	web_guard_phase(&g, b[0].c, WEB_PHASE_BODY);
	web_guard_phase(&g, b[1].c, WEB_PHASE_BODY);
	assert_false(connect_from(&g, &b[2], "10.0.0.3"));
	web_guard_stats(&g, &st);
	assert_int_equal(st.refused_full, 1);
	close_all(&g, a, N);
	close_all(&g, b, 2);
	web_guard_release(&g);
}

static void test_trusted_proxy(void **state)
{
	const char *const proxies[] = { "10.0.0.9" };
	const struct web_guard_opts o = { .max_connections = 16, .header_timeout_s = 60,
					  .body_timeout_s = 60, .trusted = proxies,
					  .ntrusted = 1 };
	struct peer_sock p[N], q[1];
	struct web_conn_stats st;
	struct web_guard g;
	int i;

	memset(p, 0, sizeof(p));
	memset(q, 0, sizeof(q));
	assert_int_equal(web_guard_init(&g, &o), 0);
	/* The proxy is held to no share: it takes the whole bound beside
	 * another address, and then more, each at the bound displacing the
	 * oldest connection waiting on its client of the address holding the
	 * most, its own: the other address's one connection stays. */
	assert_true(connect_from(&g, &q[0], "10.0.0.1"));
	for (i = 0; i < 40; i++)
		assert_true(connect_from(&g, &p[i], "10.0.0.9"));
	assert_false(is_shut(&q[0], 0));
	web_guard_stats(&g, &st);
	assert_int_equal(st.open, 16);
	assert_int_equal(st.refused_share, 0);
	assert_int_equal(st.displaced, 41 - 16);
	close_all(&g, p, N);
	close_all(&g, q, 1);
	web_guard_release(&g);
}

static void test_deadlines(void **state)
{
	const struct web_guard_opts o = { .max_connections = 16, .header_timeout_s = 0.2,
					  .body_timeout_s = 0.4 };
	struct peer_sock p[3];
	struct web_conn_stats st;
	struct web_guard g;
	int64_t t0;

	memset(p, 0, sizeof(p));
	assert_int_equal(web_guard_init(&g, &o), 0);
	t0 = time_monotonic_ns();
	assert_true(connect_from(&g, &p[0], "10.0.0.1"));
	assert_true(connect_from(&g, &p[1], "10.0.0.1"));
	assert_true(connect_from(&g, &p[2], "10.0.0.1"));
	web_guard_phase(&g, p[1].c, WEB_PHASE_BODY);
	/* A head whole and its answer sent: the next head is due anew. */
	web_guard_phase(&g, p[2].c, WEB_PHASE_BODY);
	web_guard_phase(&g, p[2].c, WEB_PHASE_IDLE);
	assert_false(is_shut(&p[0], 100));
	assert_true(is_shut(&p[0], 2000));
	assert_true(time_monotonic_ns() - t0 >= 190 * 1000000LL);
	assert_true(is_shut(&p[2], 2000));
	assert_false(is_shut(&p[1], 0));
	assert_true(is_shut(&p[1], 2000));
	assert_true(time_monotonic_ns() - t0 >= 390 * 1000000LL);
	web_guard_stats(&g, &st);
	assert_int_equal(st.closed_header, 2);
	assert_int_equal(st.closed_body, 1);
	assert_int_equal(st.open, 0);
	close_all(&g, p, 3);
	web_guard_release(&g);
}

/* Writes a request head from the client's end, which the server has not
 * read. */
static void send_head(struct peer_sock *p)
{
	static const char head[] = "GET /api/v1/hosts HTTP/1.1\r\nHost: perfd\r\n\r\n";

	assert_int_equal(send(p->fd[1], head, sizeof(head) - 1, 0), (ssize_t)sizeof(head) - 1);
}

static void test_waiting_on_server(void **state)
{
	const char *const proxies[] = { "10.0.0.9" };
	const struct web_guard_opts o = { .max_connections = 16, .header_timeout_s = 60,
					  .body_timeout_s = 60, .trusted = proxies,
					  .ntrusted = 1 };
	struct peer_sock p[N];
	struct web_conn_stats st;
	struct web_guard g;
	int i;

	memset(p, 0, sizeof(p));
	assert_int_equal(web_guard_init(&g, &o), 0);
	for (i = 0; i < 16; i++)
		assert_true(connect_from(&g, &p[i], "10.0.0.9"));
	/* The two oldest sent their whole request, which the server has not
	 * read yet: they wait on the server, not on their client. The third
	 * was heard from (its request line read): it is displaced first. */
	send_head(&p[0]);
	send_head(&p[1]);
	web_guard_heard(&g, p[2].c);
	assert_true(connect_from(&g, &p[16], "10.0.0.9"));
	assert_true(is_shut(&p[2], 0));
	assert_false(is_shut(&p[0], 0));
	assert_false(is_shut(&p[1], 0));
	/* Then the oldest that sent nothing. */
	assert_true(connect_from(&g, &p[17], "10.0.0.9"));
	assert_true(is_shut(&p[3], 0));
	assert_false(is_shut(&p[0], 0));
	/* When every one waits on the server, the oldest goes. */
	for (i = 4; i < 18; i++)
		send_head(&p[i]);
	assert_true(connect_from(&g, &p[18], "10.0.0.9"));
	assert_true(is_shut(&p[0], 0));
	assert_false(is_shut(&p[1], 0));
	send_head(&p[18]);
	/* A kept-alive connection's next head starts unheard again: its
	 * unread bytes keep it from being taken for one heard from. */
	web_guard_heard(&g, p[1].c);
	web_guard_phase(&g, p[1].c, WEB_PHASE_BODY);
	web_guard_phase(&g, p[1].c, WEB_PHASE_IDLE);
	assert_true(connect_from(&g, &p[19], "10.0.0.9"));
	assert_true(is_shut(&p[4], 0));
	assert_false(is_shut(&p[1], 0));
	web_guard_stats(&g, &st);
	assert_int_equal(st.displaced, 4);
	assert_int_equal(st.open, 16);
	close_all(&g, p, N);
	web_guard_release(&g);
}

static void test_address(void **state)
{
	const char *const bad[] = { "proxy.example" };
	const struct web_guard_opts o = { .max_connections = 16, .header_timeout_s = 1,
					  .body_timeout_s = 1, .trusted = bad, .ntrusted = 1 };
	unsigned char k4[16], k6[16];
	struct web_guard g;

	assert_int_equal(web_guard_address(k4, "127.0.0.1"), 0);
	assert_int_equal(web_guard_address(k6, "::ffff:127.0.0.1"), 0);
	assert_memory_equal(k4, k6, 16);
	assert_int_equal(web_guard_address(k6, "::1"), 0);
	assert_int_equal(web_guard_address(k6, "127.1"), -EINVAL);
	assert_int_equal(web_guard_init(&g, &o), -EINVAL);
	assert_non_null(strstr(err_last(), "'proxy.example' is not a numeric"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_trusted_proxy),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_waiting_on_server),
		cmocka_unit_test(test_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
