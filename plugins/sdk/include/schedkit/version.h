/* The version of the plugin ABI and of the SDK. A module (a shared plugin, module.h) records the
 * ABI it was built against; the scheduler loads it when the major is its own and the minor is not
 * newer (docs/plugins.md: the compatibility promise). Within one major, the plugin descriptor,
 * the views of types.h and the host table (host_api.h) only grow at their ends. */
#ifndef SK_SCHEDKIT_VERSION_H
#define SK_SCHEDKIT_VERSION_H

#define SK_ABI_MAJOR 1
#define SK_ABI_MINOR 3
#define SK_VERSION "0.2.0"

#endif
