#version 450
/*
 * Compute-bound canary: y = W x with W quantized to 4 bits. Blocks of 32
 * weights share one float scale; a weight is (nibble - 8) * scale. Nibbles
 * are packed two per byte, element 2i in the low nibble of byte i, so within
 * a little-endian uint element e of 8 sits at bits 4e..4e+3.
 *
 * Built twice: plainly, and with NIBBLE_SWAP defined, which reads the two
 * nibbles of each byte in the wrong order. That second build is the planted
 * control the canary's check must catch.
 *
 * One workgroup per row; the 64 partial sums are reduced in a fixed order
 * so the output is the same bits run to run.
 */
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Weights { uint w[]; };
layout(std430, binding = 1) readonly buffer Scales { float s[]; };
layout(std430, binding = 2) readonly buffer X { float x[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
	uint rows;
	uint cols;      /* a multiple of 32 */
} p;

shared float partial[64];

void main()
{
	uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	uint t = gl_LocalInvocationID.x;
	uint words = p.cols / 8u;
	float acc = 0.0;

	if (row < p.rows) {
		for (uint i = t; i < words; i += 64u) {
			uint word = w[row * words + i];
			uint col = i * 8u;
			float sum = 0.0;

			for (uint e = 0u; e < 8u; e++) {
#ifdef NIBBLE_SWAP
				uint shift = 4u * (e ^ 1u);
#else
				uint shift = 4u * e;
#endif
				float q = float(int((word >> shift) & 15u) - 8);
				sum += q * x[col + e];
			}
			acc += sum * s[row * (p.cols / 32u) + col / 32u];
		}
	}
	partial[t] = acc;
	barrier();
	for (uint n = 32u; n > 0u; n >>= 1) {
		if (t < n)
			partial[t] += partial[t + n];
		barrier();
	}
	if (t == 0u && row < p.rows)
		y[row] = partial[0];
}
