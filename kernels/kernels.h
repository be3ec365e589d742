/*
 * kernels: everything that talks to Vulkan. The device probe and the host
 * fingerprint, the GLSL compute kernels (built to SPIR-V at build time and
 * embedded), and the canary that runs them. No other folder sees a Vk type.
 *
 * The Vulkan loader is opened at run time (libvulkan.so.1, or the file
 * named by PERFD_VULKAN_LOADER), so a host without it can still run every
 * verb that needs no device; the verbs that do get a sentence saying so.
 *
 * Nothing here prints: results come back in structs, errors as a negative
 * errno with the detail in err_last().
 */
#ifndef PERFD_KERNELS_H
#define PERFD_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define KERNEL_NAME_MAX 256
#define KERNEL_UUID_HEX 33      /* 16 bytes as 32 hex digits and a NUL */
#define KERNEL_HASH_LEN 13      /* the first 12 hex digits of a sha256 */

/* One Vulkan physical device as the loader reports it. */
struct kernel_device {
	unsigned index;                         /* in the loader's order */
	char name[KERNEL_NAME_MAX];             /* deviceName */
	uint32_t vendor_id;
	uint32_t device_id;
	const char *type;                       /* "discrete-gpu", "integrated-gpu",
						 * "virtual-gpu", "cpu", "other"; static */
	char driver_name[KERNEL_NAME_MAX];      /* "" when the device cannot say */
	char driver_info[KERNEL_NAME_MAX];
	uint32_t driver_version_raw;
	char driver_version[32];                /* decoded the vendor's way */
	char api_version[32];                   /* "1.3.230" */
	char device_uuid[KERNEL_UUID_HEX];
	char driver_uuid[KERNEL_UUID_HEX];
	double timestamp_period_ns;             /* one timestamp tick */
	bool timestamp_compute_and_graphics;
	uint32_t timestamp_valid_bits;          /* of the compute queue; 0: none */
	bool has_compute_queue;
};

/* The machine around the devices. */
struct kernel_host {
	char kernel_release[128];               /* uname -r */
	char machine[65];                       /* uname -m */
	char cpu_model[KERNEL_NAME_MAX];        /* "" when /proc/cpuinfo has none */
	char governor[64];                      /* cpu0's cpufreq governor, or "" */
	unsigned cpus_online;
};

struct kernel_probe {
	struct kernel_host host;
	char loader_version[32];                /* vkEnumerateInstanceVersion */
	size_t ndevices;                        /* at least 1; 0 from kernel_probe_host_only */
	struct kernel_device *devices;
	char note[64];                          /* why there is no device, or ""; in the
						 * fingerprint as "note" when set */
};

/*
 * Probes the host and every Vulkan device into a new object, the caller's
 * to free with kernel_probe_free(). Returns 0; -ENOENT when the loader
 * cannot be opened, -ENODEV when it has no driver or no device, -EIO when
 * Vulkan fails otherwise; the detail, a sentence naming the problem, is in
 * err_last(). *out is set to NULL on entry: NULL on every failure.
 */
int kernel_probe_new(struct kernel_probe **out);
void kernel_probe_free(struct kernel_probe *probe);

/* The host part alone (kernel, CPU, governor) with no device: the
 * fingerprint of a comparison that uses no GPU. Touches no Vulkan loader;
 * the caller frees it with kernel_probe_free. */
struct kernel_probe *kernel_probe_host_only(void);

/*
 * True when the device's name contains device_match and its driver name or
 * driver info contains driver_match, both compared without case;
 * driver_match may be NULL.
 */
bool kernel_device_matches(const struct kernel_device *device,
			   const char *device_match, const char *driver_match);

/*
 * The index of the first device whose name contains device_match and whose
 * driver name or driver info contains driver_match, both compared without
 * case; driver_match may be NULL. Returns -ENODEV when none matches (no
 * detail is set: the caller knows what it asked for).
 */
int kernel_probe_find(const struct kernel_probe *probe, const char *device_match,
		      const char *driver_match);

/*
 * The fingerprint: the probe rendered as JSON, keys sorted, so that the same
 * host and driver give the same text. Compact when pretty is false (the
 * form that is stored and hashed). Returns a string the caller frees.
 */
char *kernel_probe_json(const struct kernel_probe *probe, bool pretty);

/* The first 12 hex digits of the sha256 of text, NUL-terminated; out "" and
 * -EIO with a detail when libcrypto cannot hash. */
int kernel_fingerprint_hash(char out[KERNEL_HASH_LEN], const char *text);

/* The canary's shapes, in the order they run and print. */
enum {
	KERNEL_SHAPE_COPY,
	KERNEL_SHAPE_Q4_MATVEC,
	KERNEL_SHAPE_COUNT,
};

#define KERNEL_CANARY_SCALE_MAX 64
#define KERNEL_CANARY_EXTRA_MAX 1000

struct kernel_canary_opts {
	unsigned device_index;
	unsigned scale;                 /* 1..KERNEL_CANARY_SCALE_MAX: work size */
	double extra_work_pct;          /* 0..KERNEL_CANARY_EXTRA_MAX percent more
					 * q4 work, same result: whole dispatches,
					 * the rest a dispatch over the first rows;
					 * it must come to whole rows */
};

struct kernel_shape_result {
	const char *name;               /* "copy", "q4_matvec"; static */
	const char *metric;             /* "copy_ms", "q4_matvec_ms"; static */
	double ms;                      /* the timed dispatches, all of them */
	unsigned dispatches;            /* how many were timed */
	double max_err;                 /* against the CPU reference */
	double tolerance;               /* max_err above this fails */
	bool passed;
	char detail[160];               /* "k=v ..." for the RESULT line */
};

struct kernel_canary_result {
	char device[KERNEL_NAME_MAX];   /* the device's name */
	bool gpu_timed;                 /* false: the queue has no timestamps,
					 * times are wall clock around a submit */
	struct kernel_shape_result shapes[KERNEL_SHAPE_COUNT];
	struct kernel_shape_result control;     /* planted wrong kernel */
	bool control_caught;            /* the check rejected it */
	char digest[KERNEL_HASH_LEN];   /* over every checked output buffer */
};

/* 0 when opts are in range and the extra work comes to whole rows at the
 * scale; -EINVAL with a sentence in err_last() otherwise. kernel_canary_run
 * checks them too; a verb calls this first to refuse before any device work. */
int kernel_canary_opts_check(const struct kernel_canary_opts *opts);

/*
 * Runs the canary on one device. Returns 0 when it ran, whatever the checks
 * found (see the result's passed and control_caught), or a negative errno
 * with a sentence in err_last() when it could not run: -EINVAL for bad
 * options, -ENOENT/-ENODEV as kernel_probe_new(), -ETIMEDOUT when the
 * device did not finish, -EIO for other Vulkan failures. *out is zeroed on
 * entry and filled only when the canary ran.
 */
int kernel_canary_run(struct kernel_canary_result *out,
		      const struct kernel_canary_opts *opts);

/* True when every shape passed and the control was caught. */
bool kernel_canary_is_ok(const struct kernel_canary_result *result);

#endif
