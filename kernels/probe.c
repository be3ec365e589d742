/* The device probe: every physical device and the host around it. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kernels.h"
#include "vk-internal.h"

#define VENDOR_NVIDIA 0x10de

static const char *type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return "integrated-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return "discrete-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return "virtual-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return "cpu";
	default:
		return "other";
	}
}

static void hex(char out[KERNEL_UUID_HEX], const uint8_t uuid[VK_UUID_SIZE])
{
	for (unsigned i = 0; i < VK_UUID_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

/* NVIDIA packs 10.8.8.6 bits; everyone else on Linux uses Vulkan's form. */
static void driver_version(char *out, size_t len, uint32_t vendor, uint32_t v)
{
	if (vendor == VENDOR_NVIDIA)
		snprintf(out, len, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff,
			 (v >> 6) & 0xff, v & 0x3f);
	else
		snprintf(out, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v),
			 VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static bool has_extension(VkPhysicalDevice pd, const char *name)
{
	VkExtensionProperties *ext;
	uint32_t n = 0;
	bool found = false;

	if (vk.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS)
		return false;
	ext = xcalloc(n, sizeof(*ext));
	if (vk.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = strcmp(ext[i].extensionName, name) == 0;
	free(ext);
	return found;
}

static void describe(struct kernel_device *d, unsigned index, VkPhysicalDevice pd)
{
	VkPhysicalDeviceDriverProperties drv = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
	};
	VkPhysicalDeviceIDProperties ids = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES,
	};
	VkPhysicalDeviceProperties2 props = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &ids,
	};
	const VkPhysicalDeviceProperties *p = &props.properties;
	VkQueueFamilyProperties *fam;
	uint32_t nfam = 0;

	vk.vkGetPhysicalDeviceProperties(pd, &props.properties);
	if (p->apiVersion >= VK_API_VERSION_1_2 ||
	    has_extension(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME))
		ids.pNext = &drv;
	vk.vkGetPhysicalDeviceProperties2(pd, &props);

	memset(d, 0, sizeof(*d));
	d->index = index;
	snprintf(d->name, sizeof(d->name), "%s", p->deviceName);
	d->vendor_id = p->vendorID;
	d->device_id = p->deviceID;
	d->type = type_name(p->deviceType);
	snprintf(d->driver_name, sizeof(d->driver_name), "%s", drv.driverName);
	snprintf(d->driver_info, sizeof(d->driver_info), "%s", drv.driverInfo);
	d->driver_version_raw = p->driverVersion;
	driver_version(d->driver_version, sizeof(d->driver_version), p->vendorID,
		       p->driverVersion);
	snprintf(d->api_version, sizeof(d->api_version), "%u.%u.%u",
		 VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
		 VK_API_VERSION_PATCH(p->apiVersion));
	hex(d->device_uuid, ids.deviceUUID);
	hex(d->driver_uuid, ids.driverUUID);
	d->timestamp_period_ns = p->limits.timestampPeriod;
	d->timestamp_compute_and_graphics = p->limits.timestampComputeAndGraphics;

	vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, NULL);
	fam = xcalloc(nfam, sizeof(*fam));
	vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, fam);
	for (uint32_t i = 0; i < nfam; i++) {
		if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			d->has_compute_queue = true;
			d->timestamp_valid_bits = fam[i].timestampValidBits;
			break;
		}
	}
	free(fam);
}

/* Reads the first line of path into out, without its newline; "" if none. */
static void read_first_line(char *out, size_t len, const char *path)
{
	FILE *f = fopen(path, "re");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

static void cpu_model(char *out, size_t len)
{
	static const char *const keys[] = { "model name", "Model", "Hardware", "cpu model" };
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	char *value;

	out[0] = '\0';
	if (!f)
		return;
	while (!out[0] && fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			size_t k = strlen(keys[i]);

			if (strncmp(line, keys[i], k) != 0 || !strchr(line, ':'))
				continue;
			if (line[k] != ' ' && line[k] != '\t' && line[k] != ':')
				continue;
			value = strchr(line, ':') + 1;
			value += strspn(value, " \t");
			value[strcspn(value, "\n")] = '\0';
			snprintf(out, len, "%s", value);
			break;
		}
	}
	fclose(f);
}

static void describe_host(struct kernel_host *h)
{
	struct utsname u;
	long n;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->kernel_release, sizeof(h->kernel_release), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	read_first_line(h->governor, sizeof(h->governor),
			"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	n = sysconf(_SC_NPROCESSORS_ONLN);
	h->cpus_online = n > 0 ? (unsigned)n : 0;
}

int kernel_probe_new(struct kernel_probe **out)
{
	struct kernel_probe *probe = xcalloc(1, sizeof(*probe));
	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice *pds = NULL;
	uint32_t n = 0;
	VkResult r;
	int rc;

	*out = NULL;
	describe_host(&probe->host);
	rc = vk_instance_new(&instance, probe->loader_version,
			     sizeof(probe->loader_version));
	if (rc < 0)
		goto out;
	r = vk.vkEnumeratePhysicalDevices(instance, &n, NULL);
	if (r != VK_SUCCESS) {
		rc = err_set(-EIO, "vkEnumeratePhysicalDevices failed: %s", vk_result_str(r));
		goto out;
	}
	if (n == 0) {
		rc = err_set(-ENODEV, "the Vulkan loader found no device");
		goto out;
	}
	pds = xcalloc(n, sizeof(*pds));
	r = vk.vkEnumeratePhysicalDevices(instance, &n, pds);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		rc = err_set(-EIO, "vkEnumeratePhysicalDevices failed: %s", vk_result_str(r));
		goto out;
	}
	probe->devices = xcalloc(n, sizeof(*probe->devices));
	for (uint32_t i = 0; i < n; i++)
		describe(&probe->devices[i], i, pds[i]);
	probe->ndevices = n;
	*out = probe;
	probe = NULL;
	rc = 0;
out:
	free(pds);
	if (instance != VK_NULL_HANDLE)
		vk.vkDestroyInstance(instance, NULL);
	kernel_probe_free(probe);
	return rc;
}

struct kernel_probe *kernel_probe_host_only(void)
{
	struct kernel_probe *probe = xcalloc(1, sizeof(*probe));

	describe_host(&probe->host);
	return probe;
}

void kernel_probe_free(struct kernel_probe *probe)
{
	if (!probe)
		return;
	free(probe->devices);
	free(probe);
}

bool kernel_device_matches(const struct kernel_device *d, const char *device_match,
			   const char *driver_match)
{
	if (!strcasestr(d->name, device_match))
		return false;
	return !driver_match || strcasestr(d->driver_name, driver_match) ||
	       strcasestr(d->driver_info, driver_match);
}

int kernel_probe_find(const struct kernel_probe *probe, const char *device_match,
		      const char *driver_match)
{
	for (size_t i = 0; i < probe->ndevices; i++)
		if (kernel_device_matches(&probe->devices[i], device_match, driver_match))
			return (int)i;
	return -ENODEV;
}
