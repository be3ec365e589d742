#version 450
/*
 * Memory-bound canary: copy count 16-byte words from src to dst. A grid-stride
 * loop, so any size fits in the dispatch limits.
 */
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Params {
	uint count;
} p;

void main()
{
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;

	for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride)
		dst[i] = src[i];
}
