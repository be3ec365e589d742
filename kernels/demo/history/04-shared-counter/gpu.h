/*
 * gpu.h: the Vulkan plumbing shared by demo.c and contract.c.
 *
 * It opens one compute device, loads shader.spv from the directory that
 * holds the program, and runs the row kernel on a matrix of int8-range
 * values, one workgroup per row, timing each dispatch. It is a header of
 * static functions so that each program builds from a single source file.
 * Any Vulkan error ends the program: a message on stderr, exit status 1.
 */
#ifndef DEMO_GPU_H
#define DEMO_GPU_H

/* clock_gettime and CLOCK_MONOTONIC under -std=c11: include this header
 * before any other. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vulkan/vulkan.h>

/* Must match local_size_x in shader.comp. */
#define GPU_GROUP_SIZE 256

/* The kernel's inputs and outputs, in the order of their bindings. */
enum { BIND_INPUT, BIND_OUTPUT, BIND_COUNT };

struct gpu {
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice device;
	VkQueue queue;
	uint32_t family;
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	VkPhysicalDeviceMemoryProperties mem;
	int timestamps;		/* the queue can write timestamps */
	uint64_t tick_mask;	/* its timestamps' valid bits */
	double tick_ns;		/* nanoseconds per timestamp tick */
	VkShaderModule shader;
	VkDescriptorSetLayout set_layout;
	VkPipelineLayout layout;
	VkPipeline pipeline;
	VkDescriptorPool pool;
	VkDescriptorSet set;
	VkCommandPool cmd_pool;
	VkCommandBuffer cmd;
	VkQueryPool queries;
	VkFence fence;
};

struct gpu_buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	VkDeviceSize size;
};

/* The push constants: the matrix's shape. */
struct gpu_shape {
	uint32_t rows;
	uint32_t cols;
};

static void gpu_fail(const char *what, VkResult r)
{
	fprintf(stderr, "%s failed: VkResult %d\n", what, (int)r);
	exit(1);
}

#define VK(call) do { \
		VkResult vk_r_ = (call); \
		if (vk_r_ != VK_SUCCESS) \
			gpu_fail(#call, vk_r_); \
	} while (0)

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

/* The matrix every program uses: values in [-127, 127] from a fixed
 * xorshift32 sequence, so that each run sees the same bytes. */
static void matrix_fill(int32_t *x, size_t n, uint32_t seed)
{
	uint32_t s = seed ? seed : 1;

	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		x[i] = (int32_t)(s % 255) - 127;
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* shader.spv beside the program: argv[0]'s directory, or "." when argv[0]
 * has none. The caller frees the words. */
static uint32_t *read_spirv(const char *argv0, size_t *len)
{
	const char *slash = strrchr(argv0, '/');
	size_t dir = slash ? (size_t)(slash - argv0 + 1) : 0;
	char *path = xmalloc(dir + sizeof("shader.spv"));
	uint32_t *code;
	FILE *f;
	long n;

	memcpy(path, argv0, dir);
	strcpy(path + dir, "shader.spv");
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || n % 4 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "cannot read SPIR-V from %s\n", path);
		exit(1);
	}
	code = xmalloc((size_t)n);
	if (fread(code, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read SPIR-V from %s\n", path);
		exit(1);
	}
	fclose(f);
	free(path);
	*len = (size_t)n;
	return code;
}

/* The device PERFD_DEMO_DEVICE names by index, else the first one with a
 * compute queue. Fills g->phys, g->family and the device's properties. */
static void pick_device(struct gpu *g)
{
	const char *want = getenv("PERFD_DEMO_DEVICE");
	VkPhysicalDevice *devs;
	uint32_t n = 0;
	long only = -1;

	if (want && *want) {
		char *end;

		only = strtol(want, &end, 10);
		if (*end || only < 0) {
			fprintf(stderr, "PERFD_DEMO_DEVICE=%s: expected a device index\n", want);
			exit(1);
		}
	}
	VK(vkEnumeratePhysicalDevices(g->instance, &n, NULL));
	if (n == 0) {
		fprintf(stderr, "no Vulkan device\n");
		exit(1);
	}
	devs = xmalloc(n * sizeof(*devs));
	VK(vkEnumeratePhysicalDevices(g->instance, &n, devs));
	for (uint32_t d = 0; d < n; d++) {
		VkQueueFamilyProperties fam[16];
		VkPhysicalDeviceProperties props;
		uint32_t nf = 16;

		if (only >= 0 && d != (uint32_t)only)
			continue;
		vkGetPhysicalDeviceQueueFamilyProperties(devs[d], &nf, fam);
		for (uint32_t f = 0; f < nf; f++) {
			if (!(fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT))
				continue;
			vkGetPhysicalDeviceProperties(devs[d], &props);
			g->phys = devs[d];
			g->family = f;
			memcpy(g->name, props.deviceName, sizeof(g->name));
			g->timestamps = fam[f].timestampValidBits > 0 &&
					props.limits.timestampPeriod > 0;
			g->tick_mask = fam[f].timestampValidBits >= 64 ? UINT64_MAX :
				       (UINT64_C(1) << fam[f].timestampValidBits) - 1;
			g->tick_ns = props.limits.timestampPeriod;
			vkGetPhysicalDeviceMemoryProperties(devs[d], &g->mem);
			free(devs);
			return;
		}
	}
	if (only >= 0)
		fprintf(stderr, "PERFD_DEMO_DEVICE=%ld: no such device with a compute queue (%u devices)\n",
			only, n);
	else
		fprintf(stderr, "no Vulkan device with a compute queue\n");
	exit(1);
}

/* Opens the device and builds the kernel's pipeline. */
static void gpu_open(struct gpu *g, const char *argv0)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "demo",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	float priority = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
	};
	VkDescriptorSetLayoutBinding bind[BIND_COUNT];
	VkPushConstantRange push = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = sizeof(struct gpu_shape),
	};
	VkDescriptorPoolSize pool_size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = BIND_COUNT,
	};
	size_t code_len;
	uint32_t *code;

	memset(g, 0, sizeof(*g));
	VK(vkCreateInstance(&ici, NULL, &g->instance));
	pick_device(g);
	qci.queueFamilyIndex = g->family;
	VK(vkCreateDevice(g->phys, &dci, NULL, &g->device));
	vkGetDeviceQueue(g->device, g->family, 0, &g->queue);

	code = read_spirv(argv0, &code_len);
	VK(vkCreateShaderModule(g->device, &(VkShaderModuleCreateInfo){
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = code_len,
		.pCode = code,
	}, NULL, &g->shader));
	free(code);

	for (uint32_t i = 0; i < BIND_COUNT; i++)
		bind[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	VK(vkCreateDescriptorSetLayout(g->device, &(VkDescriptorSetLayoutCreateInfo){
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = BIND_COUNT,
		.pBindings = bind,
	}, NULL, &g->set_layout));
	VK(vkCreatePipelineLayout(g->device, &(VkPipelineLayoutCreateInfo){
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &g->set_layout,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &push,
	}, NULL, &g->layout));
	VK(vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &(VkComputePipelineCreateInfo){
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = g->shader,
			.pName = "main",
		},
		.layout = g->layout,
	}, NULL, &g->pipeline));

	VK(vkCreateDescriptorPool(g->device, &(VkDescriptorPoolCreateInfo){
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = 1,
		.poolSizeCount = 1,
		.pPoolSizes = &pool_size,
	}, NULL, &g->pool));
	VK(vkAllocateDescriptorSets(g->device, &(VkDescriptorSetAllocateInfo){
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = g->pool,
		.descriptorSetCount = 1,
		.pSetLayouts = &g->set_layout,
	}, &g->set));

	VK(vkCreateCommandPool(g->device, &(VkCommandPoolCreateInfo){
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = g->family,
	}, NULL, &g->cmd_pool));
	VK(vkAllocateCommandBuffers(g->device, &(VkCommandBufferAllocateInfo){
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = g->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	}, &g->cmd));
	VK(vkCreateFence(g->device, &(VkFenceCreateInfo){
		.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
	}, NULL, &g->fence));
	if (g->timestamps)
		VK(vkCreateQueryPool(g->device, &(VkQueryPoolCreateInfo){
			.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
			.queryType = VK_QUERY_TYPE_TIMESTAMP,
			.queryCount = 2,
		}, NULL, &g->queries));
}

static void buffer_new(struct gpu *g, struct gpu_buffer *b, VkDeviceSize size,
		       VkBufferUsageFlags usage, VkMemoryPropertyFlags want)
{
	VkMemoryRequirements req;
	uint32_t type = UINT32_MAX;

	b->size = size;
	VK(vkCreateBuffer(g->device, &(VkBufferCreateInfo){
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	}, NULL, &b->buf));
	vkGetBufferMemoryRequirements(g->device, b->buf, &req);
	for (uint32_t i = 0; i < g->mem.memoryTypeCount && type == UINT32_MAX; i++)
		if ((req.memoryTypeBits & (1u << i)) &&
		    (g->mem.memoryTypes[i].propertyFlags & want) == want)
			type = i;
	if (type == UINT32_MAX)
		gpu_fail("finding a memory type", VK_ERROR_OUT_OF_DEVICE_MEMORY);
	VK(vkAllocateMemory(g->device, &(VkMemoryAllocateInfo){
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = type,
	}, NULL, &b->mem));
	VK(vkBindBufferMemory(g->device, b->buf, b->mem, 0));
}

static void buffer_free(struct gpu *g, struct gpu_buffer *b)
{
	vkDestroyBuffer(g->device, b->buf, NULL);
	vkFreeMemory(g->device, b->mem, NULL);
}

/* Waits for one command buffer; returns the wall time it took. */
static double submit_wait(struct gpu *g)
{
	double t0 = now_ms();

	VK(vkQueueSubmit(g->queue, 1, &(VkSubmitInfo){
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &g->cmd,
	}, g->fence));
	VK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
	VK(vkResetFences(g->device, 1, &g->fence));
	return now_ms() - t0;
}

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags from, VkAccessFlags src,
		    VkPipelineStageFlags to, VkAccessFlags dst)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = src,
		.dstAccessMask = dst,
	};

	vkCmdPipelineBarrier(cmd, from, to, 0, 1, &mb, 0, NULL, 0, NULL);
}

/*
 * Runs the kernel on the rows x cols matrix x and leaves one value per row
 * in out. The kernel runs once untimed, so that first-use costs stay out
 * of the figures, then reps times; ms (when not NULL) gets each timed
 * dispatch's time, by GPU timestamps where the queue has them, else by the
 * wall clock around its submit and wait.
 */
static void gpu_run(struct gpu *g, const int32_t *x, uint32_t rows, uint32_t cols,
		    uint32_t *out, int reps, double *ms)
{
	const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
	const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	/* Rounded up to 16 bytes and zero-padded, so that a kernel may read a
	 * row's end as whole vectors. */
	VkDeviceSize in_size = ((VkDeviceSize)rows * cols * sizeof(*x) + 15) & ~(VkDeviceSize)15;
	VkDeviceSize out_size = (VkDeviceSize)rows * sizeof(*out);
	struct gpu_buffer in_host, in_dev, out_host, out_dev;
	struct gpu_shape shape = { rows, cols };
	VkDescriptorBufferInfo info[BIND_COUNT];
	VkWriteDescriptorSet writes[BIND_COUNT];
	void *p;

	buffer_new(g, &in_host, in_size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host);
	buffer_new(g, &out_host, out_size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, host);
	buffer_new(g, &in_dev, in_size, storage | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	buffer_new(g, &out_dev, out_size, storage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
		   VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);

	VK(vkMapMemory(g->device, in_host.mem, 0, in_size, 0, &p));
	memset(p, 0, in_size);
	memcpy(p, x, (size_t)rows * cols * sizeof(*x));
	vkUnmapMemory(g->device, in_host.mem);

	info[BIND_INPUT] = (VkDescriptorBufferInfo){ in_dev.buf, 0, VK_WHOLE_SIZE };
	info[BIND_OUTPUT] = (VkDescriptorBufferInfo){ out_dev.buf, 0, VK_WHOLE_SIZE };
	for (uint32_t i = 0; i < BIND_COUNT; i++)
		writes[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = g->set,
			.dstBinding = i,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &info[i],
		};
	vkUpdateDescriptorSets(g->device, BIND_COUNT, writes, 0, NULL);

	/* Upload. */
	VK(vkBeginCommandBuffer(g->cmd, &(VkCommandBufferBeginInfo){
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
	}));
	vkCmdCopyBuffer(g->cmd, in_host.buf, in_dev.buf, 1, &(VkBufferCopy){ 0, 0, in_size });
	VK(vkEndCommandBuffer(g->cmd));
	submit_wait(g);

	/* One dispatch, recorded once and submitted 1 + reps times. The output
	 * starts at zero each time: a kernel may accumulate into it. */
	VK(vkBeginCommandBuffer(g->cmd, &(VkCommandBufferBeginInfo){
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
	}));
	if (g->timestamps)
		vkCmdResetQueryPool(g->cmd, g->queries, 0, 2);
	vkCmdFillBuffer(g->cmd, out_dev.buf, 0, out_size, 0);
	barrier(g->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
		VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
	vkCmdBindPipeline(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline);
	vkCmdBindDescriptorSets(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->layout, 0, 1,
				&g->set, 0, NULL);
	vkCmdPushConstants(g->cmd, g->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(shape), &shape);
	/* Bottom-of-pipe stamps: the first waits for the fill to finish, the
	 * second for the dispatch, so that their difference is the kernel. */
	if (g->timestamps)
		vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g->queries, 0);
	vkCmdDispatch(g->cmd, rows, 1, 1);
	if (g->timestamps)
		vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g->queries, 1);
	barrier(g->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
		VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
	vkCmdCopyBuffer(g->cmd, out_dev.buf, out_host.buf, 1, &(VkBufferCopy){ 0, 0, out_size });
	barrier(g->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
		VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
	VK(vkEndCommandBuffer(g->cmd));

	for (int r = -1; r < reps; r++) {
		double wall = submit_wait(g);
		uint64_t t[2];

		if (r < 0 || !ms)
			continue;
		if (!g->timestamps) {
			ms[r] = wall;
			continue;
		}
		VK(vkGetQueryPoolResults(g->device, g->queries, 0, 2, sizeof(t), t, sizeof(t[0]),
					 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
		ms[r] = (double)((t[1] - t[0]) & g->tick_mask) * g->tick_ns / 1e6;
	}

	VK(vkMapMemory(g->device, out_host.mem, 0, out_size, 0, &p));
	memcpy(out, p, (size_t)out_size);
	vkUnmapMemory(g->device, out_host.mem);

	buffer_free(g, &in_host);
	buffer_free(g, &in_dev);
	buffer_free(g, &out_host);
	buffer_free(g, &out_dev);
}

static void gpu_close(struct gpu *g)
{
	vkDeviceWaitIdle(g->device);
	if (g->queries)
		vkDestroyQueryPool(g->device, g->queries, NULL);
	vkDestroyFence(g->device, g->fence, NULL);
	vkDestroyCommandPool(g->device, g->cmd_pool, NULL);
	vkDestroyDescriptorPool(g->device, g->pool, NULL);
	vkDestroyPipeline(g->device, g->pipeline, NULL);
	vkDestroyPipelineLayout(g->device, g->layout, NULL);
	vkDestroyDescriptorSetLayout(g->device, g->set_layout, NULL);
	vkDestroyShaderModule(g->device, g->shader, NULL);
	vkDestroyDevice(g->device, NULL);
	vkDestroyInstance(g->instance, NULL);
}

#endif
