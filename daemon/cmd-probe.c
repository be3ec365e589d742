/* perfd probe: which Vulkan devices this host has, and whether they are
 * the ones its profile expects. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "daemon.h"
#include "cli.h"

const char cmd_probe_usage[] =
	"usage: perfd probe [--json] [--host PROFILE]\n"
	"\n"
	"List every Vulkan device the loader sees (name, vendor and device ids,\n"
	"driver, driver and API versions, UUIDs, timestamp support) and the host\n"
	"around them (kernel, CPU model, frequency governor).\n"
	"\n"
	"  --json          print the fingerprint instead: the same facts as one\n"
	"                  line of JSON with sorted keys, the text perfd stores\n"
	"                  with every build and comparison\n"
	"  --host PROFILE  check that the device and driver the host profile names\n"
	"                  are present; PROFILE is a path or a name in hosts/\n"
	"  -h, --help      show this text\n"
	"\n"
	"Exit status: 0 found (or listed), 2 a bad profile or a Vulkan failure,\n"
	"3 no Vulkan device, or not the one the profile expects.\n";

static void print_device(const struct kernel_device *d)
{
	printf("device %u: %s\n", d->index, d->name);
	printf("  type %s, vendor 0x%04x, device 0x%04x\n", d->type, d->vendor_id,
	       d->device_id);
	printf("  driver \"%s\" (%s), version %s, Vulkan %s\n",
	       d->driver_name[0] ? d->driver_name : "unknown",
	       d->driver_info[0] ? d->driver_info : "no info", d->driver_version,
	       d->api_version);
	printf("  device uuid %s, driver uuid %s\n", d->device_uuid, d->driver_uuid);
	if (d->timestamp_valid_bits)
		printf("  timestamps: %u valid bits, %g ns a tick%s\n",
		       d->timestamp_valid_bits, d->timestamp_period_ns,
		       d->timestamp_compute_and_graphics ? "" :
		       " (not on every compute queue)");
	else
		printf("  timestamps: none on the compute queue (timings fall back to wall time)\n");
}

static int print_probe(const struct kernel_probe *probe, const char *json)
{
	const struct kernel_host *h = &probe->host;
	char hash[KERNEL_HASH_LEN];

	if (kernel_fingerprint_hash(hash, json) < 0) {
		log_warnx("probe: %s", err_last());
		return EXIT_USAGE;
	}
	printf("host: Linux %s %s, %u cpus, \"%s\", governor %s\n", h->kernel_release,
	       h->machine, h->cpus_online, h->cpu_model[0] ? h->cpu_model : "unknown",
	       h->governor[0] ? h->governor : "unknown");
	printf("vulkan loader %s, %zu device%s\n", probe->loader_version,
	       probe->ndevices, probe->ndevices == 1 ? "" : "s");
	for (size_t i = 0; i < probe->ndevices; i++)
		print_device(&probe->devices[i]);
	printf("fingerprint %s\n", hash);
	return EXIT_OK;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "host", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct host_profile *profile = NULL;
	struct kernel_probe *probe = NULL;
	const char *host = NULL;
	bool json = false;
	char *text = NULL;
	int c, index, rc;

	if (cmd_wants_help(argc, argv, cmd_probe_usage))
		return EXIT_OK;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			host = optarg;
			break;
		default:
			return cli_usage_error("probe");
		}
	}
	if (optind < argc)
		return cli_extra_argument("probe", argv[optind]);
	if (host) {
		rc = host_check_load(&profile, host);
		if (rc != EXIT_OK)
			goto out;
	}
	if (profile && !host_profile_has_device(profile)) {
		/* A CPU host: nothing to match, and no Vulkan needed. */
		probe = kernel_probe_host_only();
	} else {
		rc = host_check_probe(&probe);
		if (rc != EXIT_OK)
			goto out;
	}
	text = kernel_probe_json(probe, false);
	if (json)
		printf("%s\n", text);
	else if ((rc = print_probe(probe, text)) != EXIT_OK)
		goto out;
	if (profile && !host_profile_has_device(profile)) {
		if (!json)
			printf("host '%s': a CPU host (no [device]): its processes run on this "
			       "machine as it is\n", profile->name);
	} else if (profile) {
		index = host_check_find(probe, profile);
		if (index < 0) {
			rc = EXIT_NODEVICE;
			goto out;
		}
		if (!json)
			printf("host '%s': device %d '%s' matches '%s' with driver '%s'\n",
			       profile->name, index, probe->devices[index].name,
			       profile->device_match, profile->expected_driver);
	}
	rc = EXIT_OK;
out:
	free(text);
	kernel_probe_free(probe);
	host_profile_free(profile);
	return rc;
}
