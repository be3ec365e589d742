#version 450
/*
 * The sum of squares of each row of a rows x cols matrix: one workgroup per
 * row. Each invocation walks the row with a stride of the workgroup size,
 * so that neighbouring invocations read neighbouring values, and adds each
 * square to the row's total in memory.
 */
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Input { int x[]; };
layout(std430, binding = 1) buffer Output { uint total[]; };
layout(push_constant) uniform Shape { uint rows; uint cols; };

void main()
{
	uint row = gl_WorkGroupID.x;
	uint base = row * cols;

	for (uint i = gl_LocalInvocationID.x; i < cols; i += gl_WorkGroupSize.x) {
		int v = x[base + i];
		atomicAdd(total[row], uint(v * v));
	}
}
