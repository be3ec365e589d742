/*
 * The canary: small fixed kernels run on one device, each checked against
 * the CPU reference, timed with GPU timestamps, and a planted wrong kernel
 * that the check must reject. It tells whether a host computes correctly
 * and measures steadily before anything else is trusted on it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "kernels-internal.h"
#include "kernels-spirv.h"
#include "vk-internal.h"

#define MIB ((size_t)1 << 20)
#define COPY_MIB 16             /* times the scale */
#define COPY_REPS 8
#define COPY_VECTOR_BYTES 16    /* a copy invocation moves one uvec4 (shaders/copy.comp) */
#define COPY_GROUP_SIZE 256     /* the copy kernel's local_size_x */
#define Q4_ROWS 256             /* times the scale */
#define Q4_COLS 4096
#define Q4_REPS 100             /* so that --extra-work 1 is one more dispatch */
#define Q4_TOLERANCE 1e-5       /* of the row's sum of |w x| */
#define Q4_PER_BYTE 2           /* weights: two nibbles a byte */
#define WARMUP_DISPATCHES 1     /* untimed, before a shape's timed ones */
#define CONTROL_DISPATCHES 1    /* the control is there to fail its check, not to be timed */
#define PUSH_SIZE 8
#define MAX_BINDINGS 4
#define MAX_GROUPS 65535
#define CANARY_PIPELINES 3      /* copy, q4, control: a descriptor set each */
#define TIMESTAMP_QUERIES 2     /* before the first timed dispatch, after the last */
#define FENCE_TIMEOUT_NS (UINT64_C(60) * 1000000000)

/* A partial dispatch (--extra-work 0.5) covers its rows with one line of
 * groups, so that it runs exactly those rows and no more. */
_Static_assert(Q4_ROWS * KERNEL_CANARY_SCALE_MAX <= MAX_GROUPS, "q4 rows fit one line of groups");

struct buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	VkDeviceSize size;
	void *map;                      /* host-visible buffers only */
};

struct pipeline {
	VkShaderModule module;
	VkDescriptorSetLayout dsl;
	VkPipelineLayout layout;
	VkPipeline pipe;
	VkDescriptorSet set;
};

struct gpu {
	VkInstance instance;
	VkPhysicalDevice phys;
	VkPhysicalDeviceMemoryProperties mem;
	VkDevice dev;
	VkQueue queue;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkFence fence;
	VkDescriptorPool dpool;
	VkQueryPool queries;            /* VK_NULL_HANDLE: no timestamps */
	double period_ns;
	uint64_t ts_mask;
	struct buffer staging;
};

static int vk_fail(VkResult r, const char *what)
{
	if (r == VK_TIMEOUT)
		return err_set(-ETIMEDOUT, "%s: the device did not finish in %llu s",
			       what, (unsigned long long)(FENCE_TIMEOUT_NS / 1000000000));
	if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
		return err_set(-ENOMEM, "%s: %s", what, vk_result_str(r));
	return err_set(-EIO, "%s: %s", what, vk_result_str(r));
}

static int memory_type(const struct gpu *g, uint32_t bits, VkMemoryPropertyFlags want)
{
	for (uint32_t i = 0; i < g->mem.memoryTypeCount; i++)
		if ((bits & (1u << i)) &&
		    (g->mem.memoryTypes[i].propertyFlags & want) == want)
			return (int)i;
	return -1;
}

static int buffer_new(struct gpu *g, struct buffer *b, VkDeviceSize size, bool host)
{
	VkBufferCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
			 VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkMemoryRequirements req;
	VkMemoryAllocateInfo alloc = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	VkResult r;
	int type;

	memset(b, 0, sizeof(*b));
	b->size = size;
	r = vk.vkCreateBuffer(g->dev, &info, NULL, &b->buf);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreateBuffer");
	vk.vkGetBufferMemoryRequirements(g->dev, b->buf, &req);
	if (host) {
		type = memory_type(g, req.memoryTypeBits,
				   coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
		if (type < 0)
			type = memory_type(g, req.memoryTypeBits, coherent);
	} else {
		type = memory_type(g, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
		if (type < 0)
			type = memory_type(g, req.memoryTypeBits, 0);
	}
	if (type < 0)
		return err_set(-EIO, "no Vulkan memory type fits a %s buffer",
			       host ? "host-visible" : "device");
	alloc.allocationSize = req.size;
	alloc.memoryTypeIndex = (uint32_t)type;
	r = vk.vkAllocateMemory(g->dev, &alloc, NULL, &b->mem);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkAllocateMemory");
	r = vk.vkBindBufferMemory(g->dev, b->buf, b->mem, 0);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkBindBufferMemory");
	if (host) {
		r = vk.vkMapMemory(g->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
		if (r != VK_SUCCESS)
			return vk_fail(r, "vkMapMemory");
	}
	return 0;
}

/* Freeing the memory unmaps it. */
static void buffer_release(struct gpu *g, struct buffer *b)
{
	if (b->buf != VK_NULL_HANDLE)
		vk.vkDestroyBuffer(g->dev, b->buf, NULL);
	if (b->mem != VK_NULL_HANDLE)
		vk.vkFreeMemory(g->dev, b->mem, NULL);
	memset(b, 0, sizeof(*b));
}

static int cmd_begin(struct gpu *g)
{
	VkCommandBufferBeginInfo begin = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkResult r = vk.vkBeginCommandBuffer(g->cmd, &begin);

	return r == VK_SUCCESS ? 0 : vk_fail(r, "vkBeginCommandBuffer");
}

/* Ends the command buffer, submits it and waits for it. */
static int cmd_run(struct gpu *g)
{
	VkSubmitInfo submit = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &g->cmd,
	};
	VkResult r;

	r = vk.vkEndCommandBuffer(g->cmd);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkEndCommandBuffer");
	r = vk.vkQueueSubmit(g->queue, 1, &submit, g->fence);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkQueueSubmit");
	r = vk.vkWaitForFences(g->dev, 1, &g->fence, VK_TRUE, FENCE_TIMEOUT_NS);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkWaitForFences");
	r = vk.vkResetFences(g->dev, 1, &g->fence);
	return r == VK_SUCCESS ? 0 : vk_fail(r, "vkResetFences");
}

static int copy_buffer(struct gpu *g, VkBuffer dst, VkBuffer src, VkDeviceSize size)
{
	VkBufferCopy region = { .size = size };
	int rc = cmd_begin(g);

	if (rc < 0)
		return rc;
	vk.vkCmdCopyBuffer(g->cmd, src, dst, 1, &region);
	return cmd_run(g);
}

static int upload(struct gpu *g, struct buffer *dst, const void *data, size_t size)
{
	memcpy(g->staging.map, data, size);
	return copy_buffer(g, dst->buf, g->staging.buf, size);
}

static int download(struct gpu *g, void *data, struct buffer *src, size_t size)
{
	int rc = copy_buffer(g, g->staging.buf, src->buf, size);

	if (rc == 0)
		memcpy(data, g->staging.map, size);
	return rc;
}

/* Fills the buffer with 0xff bytes, so a kernel that writes nothing fails. */
static int poison(struct gpu *g, struct buffer *b)
{
	int rc = cmd_begin(g);

	if (rc < 0)
		return rc;
	vk.vkCmdFillBuffer(g->cmd, b->buf, 0, VK_WHOLE_SIZE, 0xffffffffu);
	return cmd_run(g);
}

static int pipeline_new(struct gpu *g, struct pipeline *p, const uint32_t *code,
			size_t size, struct buffer *const bufs[], unsigned nbufs)
{
	VkDescriptorSetLayoutBinding bindings[MAX_BINDINGS];
	VkDescriptorBufferInfo infos[MAX_BINDINGS];
	VkWriteDescriptorSet writes[MAX_BINDINGS];
	VkShaderModuleCreateInfo module = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = size,
		.pCode = code,
	};
	VkDescriptorSetLayoutCreateInfo dsl = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = nbufs,
		.pBindings = bindings,
	};
	VkPushConstantRange push = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = PUSH_SIZE,
	};
	VkPipelineLayoutCreateInfo layout = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &p->dsl,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &push,
	};
	VkComputePipelineCreateInfo pipe = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
		},
	};
	VkDescriptorSetAllocateInfo set = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = g->dpool,
		.descriptorSetCount = 1,
		.pSetLayouts = &p->dsl,
	};
	VkResult r;

	memset(p, 0, sizeof(*p));
	if (nbufs > MAX_BINDINGS)
		return err_set(-EINVAL, "a canary kernel has more than %d buffers", MAX_BINDINGS);
	for (unsigned i = 0; i < nbufs; i++) {
		bindings[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
		infos[i] = (VkDescriptorBufferInfo){ bufs[i]->buf, 0, VK_WHOLE_SIZE };
		writes[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstBinding = i,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &infos[i],
		};
	}
	r = vk.vkCreateShaderModule(g->dev, &module, NULL, &p->module);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreateShaderModule");
	r = vk.vkCreateDescriptorSetLayout(g->dev, &dsl, NULL, &p->dsl);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreateDescriptorSetLayout");
	r = vk.vkCreatePipelineLayout(g->dev, &layout, NULL, &p->layout);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreatePipelineLayout");
	pipe.stage.module = p->module;
	pipe.layout = p->layout;
	r = vk.vkCreateComputePipelines(g->dev, VK_NULL_HANDLE, 1, &pipe, NULL, &p->pipe);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreateComputePipelines");
	r = vk.vkAllocateDescriptorSets(g->dev, &set, &p->set);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkAllocateDescriptorSets");
	for (unsigned i = 0; i < nbufs; i++)
		writes[i].dstSet = p->set;
	vk.vkUpdateDescriptorSets(g->dev, nbufs, writes, 0, NULL);
	return 0;
}

/* The descriptor set goes back with the pool. */
static void pipeline_release(struct gpu *g, struct pipeline *p)
{
	if (p->pipe != VK_NULL_HANDLE)
		vk.vkDestroyPipeline(g->dev, p->pipe, NULL);
	if (p->layout != VK_NULL_HANDLE)
		vk.vkDestroyPipelineLayout(g->dev, p->layout, NULL);
	if (p->dsl != VK_NULL_HANDLE)
		vk.vkDestroyDescriptorSetLayout(g->dev, p->dsl, NULL);
	if (p->module != VK_NULL_HANDLE)
		vk.vkDestroyShaderModule(g->dev, p->module, NULL);
	memset(p, 0, sizeof(*p));
}

struct launch {
	const struct pipeline *pipeline;
	uint32_t push[PUSH_SIZE / 4];
	uint32_t groups_x;
	uint32_t groups_y;
};

/* One dispatch, then a barrier so the next one starts after it ends. */
static void record(struct gpu *g, const struct launch *l)
{
	VkMemoryBarrier barrier = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
	};

	vk.vkCmdBindPipeline(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, l->pipeline->pipe);
	vk.vkCmdBindDescriptorSets(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
				   l->pipeline->layout, 0, 1, &l->pipeline->set, 0, NULL);
	vk.vkCmdPushConstants(g->cmd, l->pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT,
			      0, PUSH_SIZE, l->push);
	vk.vkCmdDispatch(g->cmd, l->groups_x, l->groups_y, 1);
	vk.vkCmdPipelineBarrier(g->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
				VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
				0, 1, &barrier, 0, NULL, 0, NULL);
}

/*
 * Runs reps dispatches of l, then one of tail unless it is NULL, in one
 * submission and returns in *ms the time the device spent between the
 * first and the last: from timestamps when the queue has them, else the
 * wall time around the submission.
 */
static int run_timed(struct gpu *g, const struct launch *l, unsigned reps,
		     const struct launch *tail, double *ms)
{
	uint64_t ts[TIMESTAMP_QUERIES];
	int64_t start;
	VkResult r;
	int rc;

	rc = cmd_begin(g);
	if (rc < 0)
		return rc;
	if (g->queries != VK_NULL_HANDLE) {
		vk.vkCmdResetQueryPool(g->cmd, g->queries, 0, TIMESTAMP_QUERIES);
		vk.vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
				       g->queries, 0);
	}
	for (unsigned i = 0; i < reps; i++)
		record(g, l);
	if (tail)
		record(g, tail);
	if (g->queries != VK_NULL_HANDLE)
		vk.vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
				       g->queries, 1);
	start = time_monotonic_ns();
	rc = cmd_run(g);
	if (rc < 0)
		return rc;
	if (g->queries == VK_NULL_HANDLE) {
		*ms = (double)(time_monotonic_ns() - start) / 1e6;
		return 0;
	}
	r = vk.vkGetQueryPoolResults(g->dev, g->queries, 0, TIMESTAMP_QUERIES, sizeof(ts), ts,
				     sizeof(ts[0]),
				     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkGetQueryPoolResults");
	*ms = (double)((ts[1] - ts[0]) & g->ts_mask) * g->period_ns / 1e6;
	return 0;
}

/* The physical device at index: its properties in *out, its memory types in
 * g, its name in res. Its like stands in the demo's gpu.h, kept apart on
 * purpose: the demo is a program of its own, built by the agent from the
 * demo repository's sources, and cannot link perfd. */
static int gpu_pick_device(VkPhysicalDeviceProperties *out, struct gpu *g, unsigned index,
			   struct kernel_canary_result *res)
{
	VkPhysicalDevice *pds = NULL;
	uint32_t n = 0;
	VkResult r;
	int rc;

	r = vk.vkEnumeratePhysicalDevices(g->instance, &n, NULL);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkEnumeratePhysicalDevices");
	if (index >= n)
		return err_set(-ENODEV, "no Vulkan device %u (the loader lists %u)", index, n);
	pds = xcalloc(n, sizeof(*pds));
	r = vk.vkEnumeratePhysicalDevices(g->instance, &n, pds);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		rc = vk_fail(r, "vkEnumeratePhysicalDevices");
		goto out;
	}
	g->phys = pds[index];
	vk.vkGetPhysicalDeviceProperties(g->phys, out);
	vk.vkGetPhysicalDeviceMemoryProperties(g->phys, &g->mem);
	snprintf(res->device, sizeof(res->device), "%s", out->deviceName);
	rc = 0;
out:
	free(pds);
	return rc;
}

/* The queue family to run on: the first compute family that has
 * timestamps, else the first compute family. Its timestamps' valid bits
 * (0: none) go to *out_bits. -ENODEV when the device has no compute queue. */
static int gpu_pick_family(uint32_t *out, uint32_t *out_bits, const struct gpu *g,
			   const char *device_name)
{
	VkQueueFamilyProperties *fam;
	uint32_t n = 0, family = UINT32_MAX, valid_bits = 0;

	vk.vkGetPhysicalDeviceQueueFamilyProperties(g->phys, &n, NULL);
	fam = xcalloc(n, sizeof(*fam));
	vk.vkGetPhysicalDeviceQueueFamilyProperties(g->phys, &n, fam);
	for (uint32_t i = 0; i < n; i++) {
		if (!(fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
			continue;
		if (family == UINT32_MAX || (valid_bits == 0 && fam[i].timestampValidBits)) {
			family = i;
			valid_bits = fam[i].timestampValidBits;
		}
	}
	free(fam);
	if (family == UINT32_MAX)
		return err_set(-ENODEV, "'%s' has no compute queue", device_name);
	*out = family;
	*out_bits = valid_bits;
	return 0;
}

/* The logical device, with one queue of the family, and its entry points. */
static int gpu_create_device(struct gpu *g, uint32_t family)
{
	float priority = 1.0f;
	VkDeviceQueueCreateInfo queue = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = family,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkDeviceCreateInfo device = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &queue,
	};
	VkResult r;
	int rc;

	r = vk.vkCreateDevice(g->phys, &device, NULL, &g->dev);
	if (r != VK_SUCCESS)
		return vk_fail(r, "vkCreateDevice");
	rc = vk_device_load(g->dev);
	if (rc < 0)
		return rc;
	vk.vkGetDeviceQueue(g->dev, family, 0, &g->queue);
	return 0;
}

/* What every submission needs: a command pool and its one command buffer, a
 * fence, a descriptor set for each pipeline, and, when timed on the device,
 * the timestamp queries. */
static int gpu_create_objects(struct gpu *g, uint32_t family, bool timestamps)
{
	VkCommandPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = family,
	};
	VkCommandBufferAllocateInfo cmd = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkFenceCreateInfo fence = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkDescriptorPoolSize sizes = {
		VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, CANARY_PIPELINES * MAX_BINDINGS
	};
	VkDescriptorPoolCreateInfo dpool = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = CANARY_PIPELINES,
		.poolSizeCount = 1,
		.pPoolSizes = &sizes,
	};
	VkQueryPoolCreateInfo queries = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = TIMESTAMP_QUERIES,
	};
	VkResult r;

	r = vk.vkCreateCommandPool(g->dev, &pool, NULL, &g->pool);
	if (r == VK_SUCCESS) {
		cmd.commandPool = g->pool;
		r = vk.vkAllocateCommandBuffers(g->dev, &cmd, &g->cmd);
	}
	if (r == VK_SUCCESS)
		r = vk.vkCreateFence(g->dev, &fence, NULL, &g->fence);
	if (r == VK_SUCCESS)
		r = vk.vkCreateDescriptorPool(g->dev, &dpool, NULL, &g->dpool);
	if (r == VK_SUCCESS && timestamps)
		r = vk.vkCreateQueryPool(g->dev, &queries, NULL, &g->queries);
	return r == VK_SUCCESS ? 0 : vk_fail(r, "setting up the device");
}

/*
 * Opens device index with what the canary's submissions need, and says in
 * res which device it is and whether it is timed with GPU timestamps (a
 * compute queue with valid timestamp bits and a timestamp period). On
 * failure g holds what was created, for gpu_close.
 */
static int gpu_open(struct gpu *g, unsigned index, struct kernel_canary_result *res)
{
	VkPhysicalDeviceProperties props;
	char version[32];
	uint32_t family = 0, valid_bits = 0;
	int rc;

	memset(g, 0, sizeof(*g));
	rc = vk_instance_new(&g->instance, version, sizeof(version));
	if (rc < 0)
		return rc;
	if ((rc = gpu_pick_device(&props, g, index, res)) < 0 ||
	    (rc = gpu_pick_family(&family, &valid_bits, g, props.deviceName)) < 0 ||
	    (rc = gpu_create_device(g, family)) < 0 ||
	    (rc = gpu_create_objects(g, family,
				     valid_bits > 0 && props.limits.timestampPeriod > 0)) < 0)
		return rc;
	g->period_ns = props.limits.timestampPeriod;
	g->ts_mask = valid_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << valid_bits) - 1;
	res->gpu_timed = g->queries != VK_NULL_HANDLE;
	return 0;
}

/* Releases whatever gpu_open and the run created; safe on a partial open. */
static void gpu_close(struct gpu *g)
{
	buffer_release(g, &g->staging);
	if (g->dev != VK_NULL_HANDLE) {
		if (g->queries != VK_NULL_HANDLE)
			vk.vkDestroyQueryPool(g->dev, g->queries, NULL);
		if (g->dpool != VK_NULL_HANDLE)
			vk.vkDestroyDescriptorPool(g->dev, g->dpool, NULL);
		if (g->fence != VK_NULL_HANDLE)
			vk.vkDestroyFence(g->dev, g->fence, NULL);
		if (g->pool != VK_NULL_HANDLE)
			vk.vkDestroyCommandPool(g->dev, g->pool, NULL);
		vk.vkDestroyDevice(g->dev, NULL);
	}
	if (g->instance != VK_NULL_HANDLE)
		vk.vkDestroyInstance(g->instance, NULL);
	memset(g, 0, sizeof(*g));
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void shape_init(struct kernel_shape_result *s, const char *name, const char *metric)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->metric = metric;
}

/* One run of the canary: the device, its buffers and pipelines, and the
 * host side of every input and output. canary_release frees what exists. */
struct canary {
	struct gpu g;
	struct buffer src, dst;                 /* the copy's */
	struct buffer w, s, x, y, yc;           /* q4 weights, scales, x; y and the control's */
	struct pipeline copy, q4, control;
	struct q4_matrix m;
	uint64_t *host_src, *host_dst;          /* copy_words each */
	float *host_x, *host_y;                 /* Q4_COLS, rows */
	double *ref, *l1;                       /* the CPU's y and each row's sum of |w x| */
	size_t copy_bytes, copy_words;
	unsigned rows;
};

int kernel_canary_opts_check(const struct kernel_canary_opts *opts)
{
	unsigned whole, part;

	if (opts->scale < 1 || opts->scale > KERNEL_CANARY_SCALE_MAX)
		return err_set(-EINVAL, "scale %u is outside 1..%d", opts->scale,
			       KERNEL_CANARY_SCALE_MAX);
	return q4_extra_work(&whole, &part, opts->extra_work_pct, Q4_REPS, Q4_ROWS * opts->scale);
}

/* The inputs, from the fixed seed, always drawn in this order (the words
 * to copy, then the q4 matrix and x), so every run sees the same data. */
static void canary_inputs(struct canary *cv, unsigned scale)
{
	uint64_t prng = CANARY_SEED;

	memset(cv, 0, sizeof(*cv));
	cv->copy_bytes = (size_t)COPY_MIB * scale * MIB;
	cv->copy_words = cv->copy_bytes / sizeof(*cv->host_src);
	cv->host_src = xmalloc(cv->copy_bytes);
	cv->host_dst = xmalloc(cv->copy_bytes);
	for (size_t i = 0; i < cv->copy_words; i++)
		cv->host_src[i] = canary_prng_next(&prng);
	cv->rows = Q4_ROWS * scale;
	cv->host_x = xmalloc(Q4_COLS * sizeof(*cv->host_x));
	cv->host_y = xmalloc(cv->rows * sizeof(*cv->host_y));
	cv->ref = xmalloc(cv->rows * sizeof(*cv->ref));
	cv->l1 = xmalloc(cv->rows * sizeof(*cv->l1));
	q4_matrix_init_random(&cv->m, cv->host_x, cv->rows, Q4_COLS, &prng);
}

/* The device buffers, and the staging buffer every transfer goes through. */
static int canary_create_buffers(struct canary *cv)
{
	struct gpu *g = &cv->g;
	size_t rows = cv->rows;
	int rc;

	if ((rc = buffer_new(g, &g->staging, cv->copy_bytes, true)) < 0 ||
	    (rc = buffer_new(g, &cv->src, cv->copy_bytes, false)) < 0 ||
	    (rc = buffer_new(g, &cv->dst, cv->copy_bytes, false)) < 0 ||
	    (rc = buffer_new(g, &cv->w, rows * Q4_COLS / Q4_PER_BYTE, false)) < 0 ||
	    (rc = buffer_new(g, &cv->s, rows * Q4_COLS / Q4_BLOCK * sizeof(float), false)) < 0 ||
	    (rc = buffer_new(g, &cv->x, Q4_COLS * sizeof(float), false)) < 0 ||
	    (rc = buffer_new(g, &cv->y, rows * sizeof(float), false)) < 0 ||
	    (rc = buffer_new(g, &cv->yc, rows * sizeof(float), false)) < 0)
		return rc;
	return 0;
}

/* The inputs go up; every output buffer is poisoned, so that a kernel that
 * writes nothing fails its check. */
static int canary_upload(struct canary *cv)
{
	struct gpu *g = &cv->g;
	int rc;

	if ((rc = upload(g, &cv->src, cv->host_src, cv->copy_bytes)) < 0 ||
	    (rc = upload(g, &cv->w, cv->m.words, cv->w.size)) < 0 ||
	    (rc = upload(g, &cv->s, cv->m.scales, cv->s.size)) < 0 ||
	    (rc = upload(g, &cv->x, cv->host_x, cv->x.size)) < 0 ||
	    (rc = poison(g, &cv->dst)) < 0 || (rc = poison(g, &cv->y)) < 0 ||
	    (rc = poison(g, &cv->yc)) < 0)
		return rc;
	return 0;
}

/* The three kernels with their buffers bound: copy, q4 and the planted
 * wrong q4 (nibbles swapped), which writes yc. */
static int canary_create_pipelines(struct canary *cv)
{
	struct gpu *g = &cv->g;
	int rc;

	if ((rc = pipeline_new(g, &cv->copy, spirv_copy, spirv_copy_size,
			       (struct buffer *const[]){ &cv->src, &cv->dst }, 2)) < 0 ||
	    (rc = pipeline_new(g, &cv->q4, spirv_q4_matvec, spirv_q4_matvec_size,
			       (struct buffer *const[]){ &cv->w, &cv->s, &cv->x, &cv->y }, 4)) < 0 ||
	    (rc = pipeline_new(g, &cv->control, spirv_q4_matvec_swapped,
			       spirv_q4_matvec_swapped_size,
			       (struct buffer *const[]){ &cv->w, &cv->s, &cv->x, &cv->yc }, 4)) < 0)
		return rc;
	return 0;
}

/* Copy: one untimed dispatch to warm up, then COPY_REPS timed; every word
 * must arrive as it left. */
static int run_copy(struct canary *cv, struct kernel_shape_result *sh)
{
	size_t vectors = cv->copy_bytes / COPY_VECTOR_BYTES, mismatches = 0;
	struct launch l = {
		.pipeline = &cv->copy,
		.push = { (uint32_t)vectors },
		.groups_x = min_u32((uint32_t)(vectors + COPY_GROUP_SIZE - 1) / COPY_GROUP_SIZE,
				    MAX_GROUPS),
		.groups_y = 1,
	};
	int rc;

	sh->dispatches = COPY_REPS;
	if ((rc = run_timed(&cv->g, &l, WARMUP_DISPATCHES, NULL, &sh->ms)) < 0 ||
	    (rc = run_timed(&cv->g, &l, sh->dispatches, NULL, &sh->ms)) < 0 ||
	    (rc = download(&cv->g, cv->host_dst, &cv->dst, cv->copy_bytes)) < 0)
		return rc;
	for (size_t i = 0; i < cv->copy_words; i++)
		mismatches += cv->host_dst[i] != cv->host_src[i];
	sh->max_err = (double)mismatches;
	sh->tolerance = 0;
	sh->passed = mismatches == 0;
	snprintf(sh->detail, sizeof(sh->detail), "mib=%zu dispatches=%u mismatched_words=%zu",
		 cv->copy_bytes / MIB, sh->dispatches, mismatches);
	return 0;
}

/* A q4 kernel over every row: a workgroup a row, in rows of at most
 * MAX_GROUPS groups. */
static struct launch q4_launch(const struct canary *cv, const struct pipeline *pipeline)
{
	uint32_t groups_x = min_u32(cv->rows, MAX_GROUPS);

	return (struct launch){
		.pipeline = pipeline,
		.push = { cv->rows, Q4_COLS },
		.groups_x = groups_x,
		.groups_y = (cv->rows + groups_x - 1) / groups_x,
	};
}

/* Judges the y in host_y against the CPU's: the largest error relative to
 * its row's sum of |w x|, within Q4_TOLERANCE to pass. */
static void q4_check(struct kernel_shape_result *sh, const struct canary *cv)
{
	sh->max_err = q4_max_rel_err(cv->host_y, cv->ref, cv->l1, cv->rows);
	sh->tolerance = Q4_TOLERANCE;
	sh->passed = sh->max_err <= sh->tolerance;
}

/* q4 matrix-vector product: one untimed dispatch, then the timed ones
 * (--extra-work adds dispatches, the last perhaps over only the first rows;
 * the same result), checked against the CPU. */
static int run_q4(struct canary *cv, struct kernel_shape_result *sh, double extra_pct)
{
	struct launch l = q4_launch(cv, &cv->q4), partial;
	char partial_note[32];
	unsigned whole, part;
	int rc;

	rc = q4_extra_work(&whole, &part, extra_pct, Q4_REPS, cv->rows);
	if (rc < 0)
		return rc;
	partial = l;
	partial.groups_x = part;
	partial.groups_y = 1;
	sh->dispatches = Q4_REPS + whole;
	if ((rc = run_timed(&cv->g, &l, WARMUP_DISPATCHES, NULL, &sh->ms)) < 0 ||
	    (rc = run_timed(&cv->g, &l, sh->dispatches, part ? &partial : NULL, &sh->ms)) < 0 ||
	    (rc = download(&cv->g, cv->host_y, &cv->y, cv->y.size)) < 0)
		return rc;
	q4_matvec_ref(cv->ref, cv->l1, &cv->m, cv->host_x, false);
	q4_check(sh, cv);
	partial_note[0] = '\0';
	if (part)
		snprintf(partial_note, sizeof(partial_note), " partial_rows=%u", part);
	snprintf(sh->detail, sizeof(sh->detail),
		 "rows=%u cols=%u dispatches=%u%s max_rel_err=%.3g tolerance=%.0e",
		 cv->rows, Q4_COLS, sh->dispatches, partial_note, sh->max_err, sh->tolerance);
	return 0;
}

/* The digest over the checked outputs, in order: the copy's destination,
 * then q4's y. Taken before the control overwrites host_y. */
static int canary_digest(char out[KERNEL_HASH_LEN], const struct canary *cv)
{
	const void *parts[2] = { cv->host_dst, cv->host_y };
	size_t lens[2] = { cv->copy_bytes, cv->y.size };

	return kernel_hash_parts(out, parts, lens, 2);
}

/* The control: q4 with nibbles swapped, one dispatch, checked against the
 * same reference. Its check must fail; sh->passed says whether it did not. */
static int run_control(struct canary *cv, struct kernel_shape_result *sh)
{
	struct launch l = q4_launch(cv, &cv->control);
	int rc;

	sh->dispatches = CONTROL_DISPATCHES;
	if ((rc = run_timed(&cv->g, &l, sh->dispatches, NULL, &sh->ms)) < 0 ||
	    (rc = download(&cv->g, cv->host_y, &cv->yc, cv->yc.size)) < 0)
		return rc;
	q4_check(sh, cv);
	snprintf(sh->detail, sizeof(sh->detail),
		 "kernel=q4_matvec_nibble_swapped max_rel_err=%.3g tolerance=%.0e",
		 sh->max_err, sh->tolerance);
	return 0;
}

/* Frees whatever the run created, however far it got. */
static void canary_release(struct canary *cv)
{
	struct gpu *g = &cv->g;

	if (g->dev != VK_NULL_HANDLE) {
		pipeline_release(g, &cv->copy);
		pipeline_release(g, &cv->q4);
		pipeline_release(g, &cv->control);
		buffer_release(g, &cv->src);
		buffer_release(g, &cv->dst);
		buffer_release(g, &cv->w);
		buffer_release(g, &cv->s);
		buffer_release(g, &cv->x);
		buffer_release(g, &cv->y);
		buffer_release(g, &cv->yc);
	}
	gpu_close(g);
	q4_matrix_release(&cv->m);
	free(cv->host_src);
	free(cv->host_dst);
	free(cv->host_x);
	free(cv->host_y);
	free(cv->ref);
	free(cv->l1);
}

int kernel_canary_run(struct kernel_canary_result *out,
		      const struct kernel_canary_opts *opts)
{
	struct kernel_canary_result res;
	struct canary cv;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = kernel_canary_opts_check(opts);
	if (rc < 0)
		return rc;
	memset(&res, 0, sizeof(res));
	shape_init(&res.shapes[KERNEL_SHAPE_COPY], "copy", "copy_ms");
	shape_init(&res.shapes[KERNEL_SHAPE_Q4_MATVEC], "q4_matvec", "q4_matvec_ms");
	shape_init(&res.control, "control", "control_ms");
	canary_inputs(&cv, opts->scale);

	if ((rc = gpu_open(&cv.g, opts->device_index, &res)) < 0 ||
	    (rc = canary_create_buffers(&cv)) < 0 || (rc = canary_upload(&cv)) < 0 ||
	    (rc = canary_create_pipelines(&cv)) < 0 ||
	    (rc = run_copy(&cv, &res.shapes[KERNEL_SHAPE_COPY])) < 0 ||
	    (rc = run_q4(&cv, &res.shapes[KERNEL_SHAPE_Q4_MATVEC], opts->extra_work_pct)) < 0 ||
	    (rc = canary_digest(res.digest, &cv)) < 0)
		goto out;
	rc = run_control(&cv, &res.control);
	if (rc < 0)
		goto out;
	res.control_caught = !res.control.passed;
	*out = res;
out:
	canary_release(&cv);
	return rc;
}

bool kernel_canary_is_ok(const struct kernel_canary_result *res)
{
	for (int i = 0; i < KERNEL_SHAPE_COUNT; i++)
		if (!res->shapes[i].passed)
			return false;
	return res->control_caught;
}
