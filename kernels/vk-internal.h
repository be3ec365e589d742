/*
 * The Vulkan entry points this folder uses, loaded from the loader at run
 * time. Only kernels/ includes this file (and so vulkan.h).
 */
#ifndef PERFD_KERNELS_VK_INTERNAL_H
#define PERFD_KERNELS_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#define VK_GLOBAL_FNS(X) \
	X(vkCreateInstance) \
	X(vkEnumerateInstanceVersion)

#define VK_INSTANCE_FNS(X) \
	X(vkDestroyInstance) \
	X(vkEnumeratePhysicalDevices) \
	X(vkEnumerateDeviceExtensionProperties) \
	X(vkGetPhysicalDeviceProperties) \
	X(vkGetPhysicalDeviceProperties2) \
	X(vkGetPhysicalDeviceQueueFamilyProperties) \
	X(vkGetPhysicalDeviceMemoryProperties) \
	X(vkCreateDevice) \
	X(vkGetDeviceProcAddr)

#define VK_DEVICE_FNS(X) \
	X(vkDestroyDevice) \
	X(vkGetDeviceQueue) \
	X(vkQueueSubmit) \
	X(vkCreateBuffer) \
	X(vkDestroyBuffer) \
	X(vkGetBufferMemoryRequirements) \
	X(vkAllocateMemory) \
	X(vkFreeMemory) \
	X(vkBindBufferMemory) \
	X(vkMapMemory) \
	X(vkCreateShaderModule) \
	X(vkDestroyShaderModule) \
	X(vkCreateDescriptorSetLayout) \
	X(vkDestroyDescriptorSetLayout) \
	X(vkCreatePipelineLayout) \
	X(vkDestroyPipelineLayout) \
	X(vkCreateComputePipelines) \
	X(vkDestroyPipeline) \
	X(vkCreateDescriptorPool) \
	X(vkDestroyDescriptorPool) \
	X(vkAllocateDescriptorSets) \
	X(vkUpdateDescriptorSets) \
	X(vkCreateCommandPool) \
	X(vkDestroyCommandPool) \
	X(vkAllocateCommandBuffers) \
	X(vkBeginCommandBuffer) \
	X(vkEndCommandBuffer) \
	X(vkCmdBindPipeline) \
	X(vkCmdBindDescriptorSets) \
	X(vkCmdPushConstants) \
	X(vkCmdDispatch) \
	X(vkCmdPipelineBarrier) \
	X(vkCmdCopyBuffer) \
	X(vkCmdFillBuffer) \
	X(vkCmdResetQueryPool) \
	X(vkCmdWriteTimestamp) \
	X(vkCreateQueryPool) \
	X(vkDestroyQueryPool) \
	X(vkGetQueryPoolResults) \
	X(vkCreateFence) \
	X(vkDestroyFence) \
	X(vkResetFences) \
	X(vkWaitForFences)

#define VK_DECLARE(name) PFN_##name name;
struct vk_fns {
	PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
	VK_GLOBAL_FNS(VK_DECLARE)
	VK_INSTANCE_FNS(VK_DECLARE)
	VK_DEVICE_FNS(VK_DECLARE)
};
#undef VK_DECLARE

/* The process's one table, filled by the calls below. */
extern struct vk_fns vk;

/*
 * Creates an instance (Vulkan 1.1 or later) with every entry point loaded,
 * opening the loader on first use. Returns 0, or -ENOENT (no loader),
 * -ENODEV (no driver), -EIO with a sentence in err_last(). The caller
 * destroys the instance with vk.vkDestroyInstance. *out is VK_NULL_HANDLE
 * on failure, and loader_version "" until the loader has said its version.
 */
int vk_instance_new(VkInstance *out, char *loader_version, size_t len);

/* Loads the device-level entry points for dev; -EIO when one is missing. */
int vk_device_load(VkDevice dev);

/* "VK_ERROR_DEVICE_LOST" and the like; static. */
const char *vk_result_str(VkResult r);

#endif
