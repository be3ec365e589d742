#version 450
/*
 * The mean square of each row of a rows x cols matrix (the sum of squares
 * over cols, rounded down), the statistic an RMS norm scales by: one
 * workgroup per row. Each invocation walks the row four values at a time,
 * one ivec4 load each, with a stride of the workgroup size, so that
 * neighbouring invocations read neighbouring vectors, and adds each four
 * squares to the row's total in shared memory; after a barrier the first
 * invocation writes the row's mean square.
 */
layout(local_size_x = 256) in;

/* The same matrix, read as vectors: a quarter of the loads and atomics. */
layout(std430, binding = 0) readonly buffer Input { ivec4 x4[]; };
layout(std430, binding = 1) buffer Output { uint mean_square[]; };
layout(push_constant) uniform Shape { uint rows; uint cols; };

/* One shared counter instead of a tree of partial sums: shared atomics
 * stay on chip, and there is no second pass over 256 sums. */
shared uint row_total;

void main()
{
	uint row = gl_WorkGroupID.x;
	uint lane = gl_LocalInvocationID.x;
	uint base = row * cols / 4;

	if (lane == 0)
		row_total = 0;
	barrier();
	for (uint i = lane; i < cols / 4; i += gl_WorkGroupSize.x) {
		ivec4 v = x4[base + i];
		atomicAdd(row_total, uint(v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w));
	}
	barrier();
	if (lane == 0)
		mean_square[row] = row_total / cols;
}
