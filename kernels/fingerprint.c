/*
 * The fingerprint: the probe as JSON with sorted keys, and a short sha256 of
 * it. Stored beside every build and comparison; a change in the hash is a
 * change of driver, device, kernel or CPU setup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kernels.h"

/* A JSON string of text a driver or the kernel gave (a device name, a CPU
 * model cut to fit its array), repaired where it is not UTF-8 so that
 * jansson takes it. */
static json_t *jtext(const char *s)
{
	return utf8_json(s, strlen(s));
}

static json_t *device_json(const struct kernel_device *d)
{
	char vendor[16], device[16];

	snprintf(vendor, sizeof(vendor), "0x%04x", d->vendor_id);
	snprintf(device, sizeof(device), "0x%04x", d->device_id);
	return json_pack("{s:I, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:I, s:o, s:o, s:o,"
			 " s:f, s:b, s:I, s:b}",
			 "index", (json_int_t)d->index,
			 "name", jtext(d->name),
			 "vendor_id", vendor,
			 "device_id", device,
			 "type", d->type,
			 "driver_name", jtext(d->driver_name),
			 "driver_info", jtext(d->driver_info),
			 "driver_version", jtext(d->driver_version),
			 "driver_version_raw", (json_int_t)d->driver_version_raw,
			 "api_version", jtext(d->api_version),
			 "device_uuid", jtext(d->device_uuid),
			 "driver_uuid", jtext(d->driver_uuid),
			 "timestamp_period_ns", d->timestamp_period_ns,
			 "timestamp_compute_and_graphics", d->timestamp_compute_and_graphics,
			 "timestamp_valid_bits", (json_int_t)d->timestamp_valid_bits,
			 "compute_queue", d->has_compute_queue);
}

/* With every string repaired, jansson fails only when it cannot allocate. */
char *kernel_probe_json(const struct kernel_probe *probe, bool pretty)
{
	const struct kernel_host *h = &probe->host;
	json_t *root, *devices, *dev;
	char *text;

	devices = json_array();
	if (!devices)
		xalloc_die();
	for (size_t i = 0; i < probe->ndevices; i++) {
		dev = device_json(&probe->devices[i]);
		if (!dev || json_array_append_new(devices, dev) < 0)
			xalloc_die();
	}
	root = json_pack("{s:{s:o, s:o, s:o, s:o, s:I}, s:o, s:o}",
			 "host",
			 "kernel_release", jtext(h->kernel_release),
			 "machine", jtext(h->machine),
			 "cpu_model", jtext(h->cpu_model),
			 "cpu_governor", jtext(h->governor),
			 "cpus_online", (json_int_t)h->cpus_online,
			 "vulkan_loader", jtext(probe->loader_version),
			 "devices", devices);
	if (!root)
		xalloc_die();
	/* Only when set: a fingerprint without a note keeps its text. */
	if (*probe->note && json_object_set_new(root, "note", jtext(probe->note)) < 0)
		xalloc_die();
	text = json_dumps(root, JSON_SORT_KEYS |
			  (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	json_decref(root);
	if (!text)
		xalloc_die();
	return text; /* jansson allocates with malloc: free() releases it */
}
