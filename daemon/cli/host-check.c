/* Profile loading and device matching for the device verbs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "daemon.h"
#include "cli.h"

int host_check_load(struct host_profile **out, const char *arg)
{
	struct strbuf errors = STRBUF_INIT;
	char *path = NULL;
	int rc;

	*out = NULL;
	rc = host_profile_resolve(&path, arg);
	if (rc < 0) {
		log_warnx("%s", err_last());
		rc = EXIT_USAGE;
		goto out;
	}
	if (host_profile_load(out, path, &errors) < 0) {
		fputs(errors.buf, stderr);
		log_warnx("host profile '%s' not loaded: %s", path, err_last());
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_OK;
out:
	strbuf_release(&errors);
	free(path);
	return rc;
}

int host_check_probe(struct kernel_probe **out)
{
	int rc = kernel_probe_new(out);

	if (rc == 0)
		return EXIT_OK;
	log_warnx("%s", err_last());
	return rc == -ENODEV || rc == -ENOENT ? EXIT_NODEVICE : EXIT_USAGE;
}

bool host_check_matches(const struct kernel_probe *probe, unsigned index,
			const struct host_profile *profile)
{
	return host_profile_has_device(profile) && index < probe->ndevices &&
	       kernel_device_matches(&probe->devices[index], profile->device_match,
				     profile->expected_driver);
}

int host_check_find(const struct kernel_probe *probe,
		    const struct host_profile *profile)
{
	int index;

	if (!host_profile_has_device(profile)) {
		log_warnx("host '%s' (%s) names no device: a CPU host, no GPU to use",
			  profile->name, profile->path);
		return -1;
	}
	index = kernel_probe_find(probe, profile->device_match, profile->expected_driver);
	if (index >= 0)
		return index;
	log_warnx("host '%s' (%s) expects a device named like '%s' with driver '%s'; found:",
		  profile->name, profile->path, profile->device_match,
		  profile->expected_driver);
	for (size_t i = 0; i < probe->ndevices; i++) {
		const struct kernel_device *d = &probe->devices[i];

		log_warnx("  device %u '%s', driver '%s' (%s)", d->index, d->name,
			  d->driver_name, d->driver_info);
	}
	return -1;
}

int host_check_device(struct host_profile **out_profile, struct kernel_probe **out_probe,
		      const char *arg)
{
	struct host_profile *profile = NULL;
	struct kernel_probe *probe = NULL;
	int rc;

	*out_profile = NULL;
	*out_probe = NULL;
	rc = host_check_load(&profile, arg);
	if (rc == EXIT_OK && !host_profile_has_device(profile)) {
		/* A CPU host: the machine as it is, no Vulkan asked for. */
		probe = kernel_probe_host_only();
	} else if (rc == EXIT_OK) {
		rc = host_check_probe(&probe);
		if (rc == EXIT_OK && host_check_find(probe, profile) < 0)
			rc = EXIT_NODEVICE;
	}
	if (rc != EXIT_OK) {
		host_profile_free(profile);
		kernel_probe_free(probe);
		return rc;
	}
	*out_profile = profile;
	*out_probe = probe;
	return EXIT_OK;
}

struct kernel_probe *host_check_unprofiled(void)
{
	struct kernel_probe *probe = NULL;

	if (kernel_probe_new(&probe) == 0) {
		log_info("no host profile: the fingerprint holds the %zu Vulkan device%s found, "
			 "device 0 '%s'", probe->ndevices, probe->ndevices == 1 ? "" : "s",
			 probe->devices[0].name);
		return probe;
	}
	log_warnx("no host profile; no Vulkan device found (%s): the fingerprint holds the "
		  "host alone", err_last());
	probe = kernel_probe_host_only();
	snprintf(probe->note, sizeof(probe->note), "no host profile; no Vulkan device found");
	return probe;
}
