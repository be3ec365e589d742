/*
 * The fingerprint: the probe as JSON with sorted keys, and a short sha256 of
 * it. Stored beside every build and comparison; a change in the hash is a
 * change of driver, device, kernel or CPU setup.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "kernels.h"

static json_t *device_json(const struct kernel_device *d)
{
	char vendor[16], device[16];

	snprintf(vendor, sizeof(vendor), "0x%04x", d->vendor_id);
	snprintf(device, sizeof(device), "0x%04x", d->device_id);
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s,"
			 " s:f, s:b, s:I, s:b}",
			 "index", (json_int_t)d->index,
			 "name", d->name,
			 "vendor_id", vendor,
			 "device_id", device,
			 "type", d->type,
			 "driver_name", d->driver_name,
			 "driver_info", d->driver_info,
			 "driver_version", d->driver_version,
			 "driver_version_raw", (json_int_t)d->driver_version_raw,
			 "api_version", d->api_version,
			 "device_uuid", d->device_uuid,
			 "driver_uuid", d->driver_uuid,
			 "timestamp_period_ns", d->timestamp_period_ns,
			 "timestamp_compute_and_graphics", d->timestamp_compute_and_graphics,
			 "timestamp_valid_bits", (json_int_t)d->timestamp_valid_bits,
			 "compute_queue", d->has_compute_queue);
}

char *kernel_probe_json(const struct kernel_probe *probe, bool pretty)
{
	const struct kernel_host *h = &probe->host;
	json_t *root, *devices;
	char *text;

	devices = json_array();
	for (size_t i = 0; i < probe->ndevices; i++)
		json_array_append_new(devices, device_json(&probe->devices[i]));
	root = json_pack("{s:{s:s, s:s, s:s, s:s, s:I}, s:s, s:o}",
			 "host",
			 "kernel_release", h->kernel_release,
			 "machine", h->machine,
			 "cpu_model", h->cpu_model,
			 "cpu_governor", h->governor,
			 "cpus_online", (json_int_t)h->cpus_online,
			 "vulkan_loader", probe->loader_version,
			 "devices", devices);
	if (!root)
		fatalx("jansson: cannot build the fingerprint");
	text = json_dumps(root, JSON_SORT_KEYS |
			  (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	json_decref(root);
	if (!text)
		fatalx("jansson: out of memory");
	return text; /* jansson allocates with malloc: free() releases it */
}
