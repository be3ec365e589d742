/* Output digests: a short sha256 that tells two outputs apart. */
#include <string.h>

#include "kernels-internal.h"

int kernel_hash_parts(char out[KERNEL_HASH_LEN], const void *const parts[],
		      const size_t lens[], size_t n)
{
	char hex[SHA256_HEX_SIZE];
	int r;

	out[0] = '\0';
	r = sha256_hex_parts(hex, parts, lens, n);
	if (r < 0)
		return r;
	memcpy(out, hex, KERNEL_HASH_LEN - 1);
	out[KERNEL_HASH_LEN - 1] = '\0';
	return 0;
}

int kernel_fingerprint_hash(char out[KERNEL_HASH_LEN], const char *text)
{
	const void *parts[] = { text };
	size_t lens[] = { strlen(text) };

	return kernel_hash_parts(out, parts, lens, 1);
}
