/* CPU lists as the kernel writes them (cpuset(7) "list format"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int parse_cpu(unsigned *out, const char *s, char **end)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return err_set(-EINVAL, "expected a CPU number at '%s'", s);
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno != 0 || v >= CPUS_MAX)
		return err_set(-EINVAL, "CPU number at '%s' is not below %d",
			       s, CPUS_MAX);
	*out = (unsigned)v;
	return 0;
}

int cpus_parse(struct cpus *out, const char *text)
{
	struct cpus set;
	const char *s = text;
	char *end;
	unsigned lo, hi;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&set, 0, sizeof(set));
	while (*s) {
		rc = parse_cpu(&lo, s, &end);
		if (rc < 0)
			return rc;
		hi = lo;
		s = end;
		if (*s == '-') {
			rc = parse_cpu(&hi, s + 1, &end);
			if (rc < 0)
				return rc;
			if (hi < lo)
				return err_set(-EINVAL, "range %u-%u runs backwards", lo, hi);
			s = end;
		}
		for (unsigned c = lo; c <= hi; c++) {
			if (cpus_has(&set, c))
				return err_set(-EINVAL, "CPU %u is listed twice in '%s'",
					       c, text);
			set.bits[c / 64] |= UINT64_C(1) << (c % 64);
			set.count++;
		}
		if (*s == ',') {
			s++;
			if (*s == '\0')
				return err_set(-EINVAL, "'%s' ends with ','", text);
		} else if (*s != '\0') {
			return err_set(-EINVAL,
				       "unexpected '%s' (expected a list like 4-7 or 0,2)", s);
		}
	}
	*out = set;
	return 0;
}

bool cpus_has(const struct cpus *cpus, unsigned cpu)
{
	if (cpu >= CPUS_MAX)
		return false;
	return cpus->bits[cpu / 64] & (UINT64_C(1) << (cpu % 64));
}

void cpus_format(struct strbuf *out, const struct cpus *cpus)
{
	unsigned c = 0, lo;
	bool first = true;

	while (c < CPUS_MAX) {
		if (!cpus_has(cpus, c)) {
			c++;
			continue;
		}
		lo = c;
		while (c + 1 < CPUS_MAX && cpus_has(cpus, c + 1))
			c++;
		strbuf_addf(out, first ? "%u" : ",%u", lo);
		if (c > lo)
			strbuf_addf(out, "-%u", c);
		first = false;
		c++;
	}
}
