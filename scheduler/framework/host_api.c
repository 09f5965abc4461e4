/* The core's host table (schedkit/host_api.h): every plugin-API function, by the same X-macro list
 * the modules' forwarders are generated from, so the two cannot disagree on order or types. The
 * loader (loader.c) hands its address to each module's sk_module_init. */
#include "schedkit/host_api.h"
#include "scheduler/framework/loader.h"

#define HOST_ENTRY(ret, name, params, args) .name = name,

const struct sk_host_api sk_host_table = {
	.abi_major = SK_ABI_MAJOR,
	.abi_minor = SK_ABI_MINOR,
	.size = sizeof(struct sk_host_api),
	SK_HOST_API(HOST_ENTRY, HOST_ENTRY)
};
