#version 450
/*
 * The mean square of each row of a rows x cols matrix (the sum of squares
 * over cols, rounded down), the statistic an RMS norm scales by: one
 * workgroup per row. Each invocation walks the row with a stride of the
 * workgroup size, so that neighbouring invocations read neighbouring
 * values, and adds each square to the row's total in shared memory; after
 * a barrier the first invocation writes the row's mean square.
 */
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Input { int x[]; };
layout(std430, binding = 1) buffer Output { uint mean_square[]; };
layout(push_constant) uniform Shape { uint rows; uint cols; };

/* One shared counter instead of a tree of partial sums: shared atomics
 * stay on chip, and there is no second pass over 256 sums. */
shared uint row_total;

void main()
{
	uint row = gl_WorkGroupID.x;
	uint lane = gl_LocalInvocationID.x;
	uint base = row * cols;

	if (lane == 0)
		row_total = 0;
	barrier();
	for (uint i = lane; i < cols; i += gl_WorkGroupSize.x) {
		int v = x[base + i];
		atomicAdd(row_total, uint(v * v));
	}
	barrier();
	if (lane == 0)
		mean_square[row] = row_total / cols;
}
