/* Output digests: a short sha256 that tells two outputs apart. */
#include <string.h>

#include <openssl/evp.h>

#include "kernels-internal.h"

void kernel_hash_parts(char out[KERNEL_HASH_LEN], const void *const parts[],
		       const size_t lens[], size_t n)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		fatalx("openssl: cannot start a sha256");
	for (size_t i = 0; i < n; i++)
		EVP_DigestUpdate(ctx, parts[i], lens[i]);
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	for (int i = 0; i < (KERNEL_HASH_LEN - 1) / 2; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[KERNEL_HASH_LEN - 1] = '\0';
}

void kernel_fingerprint_hash(char out[KERNEL_HASH_LEN], const char *text)
{
	const void *parts[] = { text };
	size_t lens[] = { strlen(text) };

	kernel_hash_parts(out, parts, lens, 1);
}
