/*
 * daemon/cli: what the verbs share beyond daemon.h. The device verbs
 * (probe, canary, pair, agent, demo) share loading a --host profile,
 * probing Vulkan, and finding the profile's device, each reporting its own
 * failure once and answering with the verb's exit status.
 */
#ifndef PERFD_DAEMON_CLI_H
#define PERFD_DAEMON_CLI_H

#include "hosts.h"
#include "kernels.h"

/*
 * Resolves and loads a --host argument. Returns EXIT_OK and the profile in
 * *out (the caller's), or EXIT_USAGE after printing every error. Like the
 * two below, it sets its outputs to NULL on entry: NULL on every failure.
 */
int host_check_load(struct host_profile **out, const char *arg);

/*
 * Probes Vulkan. Returns EXIT_OK and the probe in *out (the caller's), or,
 * after saying why, EXIT_NODEVICE when there is no loader, driver or device
 * and EXIT_USAGE when Vulkan fails otherwise.
 */
int host_check_probe(struct kernel_probe **out);

/*
 * The index of the profile's device in the probe, or -1 after printing what
 * the profile expected and every device and driver that was found.
 */
int host_check_find(const struct kernel_probe *probe,
		    const struct host_profile *profile);

/*
 * All three for a verb that needs the profile's device: loads the profile
 * arg names, probes Vulkan and finds the device; for a CPU host (a profile
 * without [device]) the probe holds the machine alone and Vulkan is not
 * asked. Returns EXIT_OK with the
 * profile and the probe in *out_profile and *out_probe (the caller's), or
 * the verb's exit status after saying why (both are NULL then).
 */
int host_check_device(struct host_profile **out_profile, struct kernel_probe **out_probe,
		      const char *arg);

/* True when device index of the probe is the one the profile describes. */
bool host_check_matches(const struct kernel_probe *probe, unsigned index,
			const struct host_profile *profile);

#endif
