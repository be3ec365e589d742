/* perfd canary: run the fixed check kernels on one device and print the
 * line protocol, so the canary can itself be timed in pairs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "daemon.h"
#include "cli.h"

const char cmd_canary_usage[] =
	"usage: perfd canary [--host PROFILE] [--device INDEX] [--scale N]\n"
	"                    [--extra-work PERCENT]\n"
	"\n"
	"Run the canary kernels on one Vulkan device: a buffer copy (memory bound)\n"
	"and a 4-bit quantized matrix-vector product (compute bound), each checked\n"
	"against a CPU reference and timed with GPU timestamps, plus a planted wrong\n"
	"kernel that the check must catch. Prints TIMING, DIGEST, RESULT and\n"
	"SUMMARY lines, and TIMING_RECORD_VALID when every check passed.\n"
	"\n"
	"  --host PROFILE        run on the device the host profile names; exit 3\n"
	"                        when it is absent\n"
	"  --device INDEX        the device's index in `perfd probe` (default 0, or\n"
	"                        the profile's first match); with --host it must match\n"
	"  --scale N             multiply the work size by N, 1 to 64 (default 1);\n"
	"                        a GPU wants 16 or more for steady timings\n"
	"  --extra-work PERCENT  run PERCENT more q4 work, 0 to 1000 (default 0):\n"
	"                        the same result, a planted slowdown. Whole percents\n"
	"                        are whole dispatches (1 is one more of 100); a\n"
	"                        fraction such as 0.5 adds a dispatch over that part\n"
	"                        of the rows, and must come to whole rows (at --scale\n"
	"                        1, steps of 1/256 of a percent)\n"
	"  -h, --help            show this text\n"
	"\n"
	"Exit status: 0 every check passed and the control was caught, 1 a check\n"
	"failed, 2 a usage or Vulkan error, 3 the device is absent.\n";

/* A whole number option in [lo, hi], through the verbs' one parser. */
static int parse_uint(unsigned *out, const char *opt, const char *value,
		      unsigned lo, unsigned hi)
{
	int v;

	if (cli_parse_int(&v, opt, value, (int)lo, (int)hi) < 0)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static void print_result(const struct kernel_canary_result *res)
{
	const struct kernel_shape_result *sh;
	unsigned passed = 0;

	for (int i = 0; i < KERNEL_SHAPE_COUNT; i++) {
		sh = &res->shapes[i];
		passed += sh->passed;
		printf("RESULT %s %s on \"%s\": passed=%d total=1\n", sh->name, sh->detail,
		       res->device, sh->passed);
	}
	printf("RESULT %s %s on \"%s\": caught=%d total=1\n", res->control.name,
	       res->control.detail, res->device, res->control_caught);
	printf("SUMMARY canary on \"%s\": %u of %d shapes passed, control %s; timed by %s\n",
	       res->device, passed, KERNEL_SHAPE_COUNT,
	       res->control_caught ? "caught" : "NOT caught",
	       res->gpu_timed ? "gpu timestamps" :
	       "wall clock (the queue has no timestamps)");
	printf("TIMING");
	for (int i = 0; i < KERNEL_SHAPE_COUNT; i++)
		printf(" %s=%.4f", res->shapes[i].metric, res->shapes[i].ms);
	printf("\n");
	printf("DIGEST %s\n", res->digest);
	if (kernel_canary_is_ok(res))
		printf("TIMING_RECORD_VALID\n");
}

int cmd_canary(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "device", required_argument, NULL, 'd' },
		{ "scale", required_argument, NULL, 's' },
		{ "extra-work", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	struct kernel_canary_opts opts = { .device_index = 0, .scale = 1 };
	struct kernel_canary_result res;
	struct host_profile *profile = NULL;
	struct kernel_probe *probe = NULL;
	const char *host = NULL;
	bool device_set = false;
	int c, index, rc;

	if (cmd_wants_help(argc, argv, cmd_canary_usage))
		return EXIT_OK;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			host = optarg;
			break;
		case 'd':
			if (parse_uint(&opts.device_index, "--device", optarg, 0, 255) < 0)
				return EXIT_USAGE;
			device_set = true;
			break;
		case 's':
			if (parse_uint(&opts.scale, "--scale", optarg, 1,
				       KERNEL_CANARY_SCALE_MAX) < 0)
				return EXIT_USAGE;
			break;
		case 'x':
			if (cli_parse_double(&opts.extra_work_pct, "--extra-work", optarg, 0,
					     KERNEL_CANARY_EXTRA_MAX) < 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage_error("canary");
		}
	}
	if (optind < argc)
		return cli_extra_argument("canary", argv[optind]);
	if (kernel_canary_opts_check(&opts) < 0) {
		log_warnx("canary: %s", err_last());
		return EXIT_USAGE;
	}

	if (host) {
		rc = host_check_load(&profile, host);
		if (rc != EXIT_OK)
			goto out;
		rc = host_check_probe(&probe);
		if (rc != EXIT_OK)
			goto out;
		if (device_set) {
			if (!host_check_matches(probe, opts.device_index, profile)) {
				log_warnx("canary: device %u is not the one host '%s' expects",
					  opts.device_index, profile->name);
				host_check_find(probe, profile);
				rc = EXIT_NODEVICE;
				goto out;
			}
		} else {
			index = host_check_find(probe, profile);
			if (index < 0) {
				rc = EXIT_NODEVICE;
				goto out;
			}
			opts.device_index = (unsigned)index;
		}
	}

	rc = kernel_canary_run(&res, &opts);
	if (rc < 0) {
		log_warnx("canary: %s", err_last());
		rc = rc == -ENODEV || rc == -ENOENT ? EXIT_NODEVICE : EXIT_USAGE;
		goto out;
	}
	print_result(&res);
	rc = kernel_canary_is_ok(&res) ? EXIT_OK : EXIT_RESULT;
out:
	fflush(stdout);
	kernel_probe_free(probe);
	host_profile_free(profile);
	return rc;
}
