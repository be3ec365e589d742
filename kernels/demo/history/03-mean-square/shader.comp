#version 450
/*
 * The mean square of each row of a rows x cols matrix (the sum of squares
 * over cols, rounded down), the statistic an RMS norm scales by: one
 * workgroup per row. Each invocation walks the row with a stride of the
 * workgroup size, so that neighbouring invocations read neighbouring
 * values, and keeps its own sum in a register; the workgroup then adds the
 * 256 sums as a tree in shared memory and one invocation writes the row's
 * mean square. No atomics: the row's result in memory is written once.
 */
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Input { int x[]; };
layout(std430, binding = 1) buffer Output { uint mean_square[]; };
layout(push_constant) uniform Shape { uint rows; uint cols; };

shared uint partial[gl_WorkGroupSize.x];

void main()
{
	uint row = gl_WorkGroupID.x;
	uint lane = gl_LocalInvocationID.x;
	uint base = row * cols;
	uint sum = 0;

	for (uint i = lane; i < cols; i += gl_WorkGroupSize.x) {
		int v = x[base + i];
		sum += uint(v * v);
	}

	/* Halve the live sums each step: 8 steps for 256 invocations. */
	partial[lane] = sum;
	barrier();
	for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
		if (lane < s)
			partial[lane] += partial[lane + s];
		barrier();
	}
	if (lane == 0)
		mean_square[row] = partial[0] / cols;
}
