/*
 * Opening the Vulkan loader at run time and creating the instance: the one
 * place that knows where Vulkan comes from.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "vk-internal.h"

#define DEFAULT_LOADER "libvulkan.so.1"

struct vk_fns vk;
static void *loader;

static int load_loader(void)
{
	const char *path = getenv("PERFD_VULKAN_LOADER");

	if (loader)
		return 0;
	if (!path || !*path)
		path = DEFAULT_LOADER;
	loader = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!loader)
		return err_set(-ENOENT,
			       "cannot open the Vulkan loader '%s' (%s); install it (Debian: libvulkan1) or set PERFD_VULKAN_LOADER",
			       path, dlerror());
	vk.vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(loader,
								    "vkGetInstanceProcAddr");
	if (!vk.vkGetInstanceProcAddr) {
		dlclose(loader);
		loader = NULL;
		return err_set(-ENOENT, "'%s' is not a Vulkan loader: no vkGetInstanceProcAddr",
			       path);
	}
	return 0;
}

const char *vk_result_str(VkResult r)
{
	switch (r) {
#define R(x) case x: return #x;
	R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_INCOMPLETE)
	R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST)
	R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
	R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT)
	R(VK_ERROR_INCOMPATIBLE_DRIVER) R(VK_ERROR_TOO_MANY_OBJECTS)
	R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_UNKNOWN)
#undef R
	default:
		return "VK_ERROR (unnamed)";
	}
}

int vk_instance_new(VkInstance *out, char *loader_version, size_t len)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "perfd",
		.applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
		.pEngineName = "perfd",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkInstance instance;
	uint32_t version = VK_API_VERSION_1_0;
	VkResult r;
	int rc;

	*out = VK_NULL_HANDLE;
	if (len)
		loader_version[0] = '\0';
	rc = load_loader();
	if (rc < 0)
		return rc;
#define LOAD(name) vk.name = (PFN_##name)vk.vkGetInstanceProcAddr(NULL, #name);
	VK_GLOBAL_FNS(LOAD)
#undef LOAD
	if (!vk.vkCreateInstance)
		return err_set(-EIO, "the Vulkan loader has no vkCreateInstance");
	if (vk.vkEnumerateInstanceVersion)
		vk.vkEnumerateInstanceVersion(&version);
	snprintf(loader_version, len, "%u.%u.%u", VK_API_VERSION_MAJOR(version),
		 VK_API_VERSION_MINOR(version), VK_API_VERSION_PATCH(version));
	if (version < VK_API_VERSION_1_1)
		return err_set(-ENOENT, "the Vulkan loader is version %s; perfd needs 1.1 or later",
			       loader_version);
	if (version >= VK_API_VERSION_1_2)
		app.apiVersion = VK_API_VERSION_1_2;

	r = vk.vkCreateInstance(&info, NULL, &instance);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
		return err_set(-ENODEV,
			       "the Vulkan loader found no driver (%s); install one (Debian: mesa-vulkan-drivers) or check VK_DRIVER_FILES",
			       vk_result_str(r));
	if (r != VK_SUCCESS)
		return err_set(-EIO, "vkCreateInstance failed: %s", vk_result_str(r));
#define LOAD(name) vk.name = (PFN_##name)vk.vkGetInstanceProcAddr(instance, #name); \
	if (!vk.name) { \
		rc = err_set(-EIO, "the Vulkan loader lacks %s", #name); \
		goto out; \
	}
	VK_INSTANCE_FNS(LOAD)
#undef LOAD
	*out = instance;
	instance = VK_NULL_HANDLE;
	rc = 0;
out:
	if (instance != VK_NULL_HANDLE && vk.vkDestroyInstance)
		vk.vkDestroyInstance(instance, NULL);
	return rc;
}

int vk_device_load(VkDevice dev)
{
#define LOAD(name) vk.name = (PFN_##name)vk.vkGetDeviceProcAddr(dev, #name); \
	if (!vk.name) \
		return err_set(-EIO, "the Vulkan driver lacks %s", #name);
	VK_DEVICE_FNS(LOAD)
#undef LOAD
	return 0;
}
