/* Shared plugins ("modules"): one .so with one exported entry point, sk_module_init, that the
 * scheduler's loader (--plugin-dir, scheduler/framework/loader.c) calls with its host table.
 * In exactly one .c file of the module:
 *
 *   #include <schedkit/plugin.h>
 *   #include <schedkit/module.h>
 *   static const struct sk_plugin_desc sample = { SK_PLUGIN_HEADER, .name = "Sample", ... };
 *   SK_MODULE("sample", &sample);          (one or more descriptors)
 *
 * SK_MODULE defines the entry point and one forwarder per plugin-API function (host_api.h): a
 * hidden-visibility function with the API's name and prototype that calls through the table. So
 * the module's other .c files include only <schedkit/plugin.h> and call the API as in-tree plugins
 * do, and the .so links with -shared -fPIC -fvisibility=hidden -Wl,--no-undefined against libc and
 * cJSON alone. The compiler checks every forwarder against the API's own declaration. */
#ifndef SK_SCHEDKIT_MODULE_H
#define SK_SCHEDKIT_MODULE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "schedkit/host_api.h"
#include "schedkit/version.h"

/* ---------- the layout signature ("build signature") ----------
 * A fingerprint of the sizes and field offsets of the structs a module and the scheduler share,
 * computed at compile time (FNV-1a over the numbers). The loader refuses a module whose signature
 * differs from its own: headers of another build (edited structs, another compiler's layout, a
 * 32-bit build) are caught even when they carry the same version numbers. */
#define SK__SIG_MIX(h, v) ((((uint64_t)(h)) ^ (uint64_t)(v)) * 0x100000001b3ULL)
#define SK__SIG_STRUCTS(h)                                                                              \
	SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(  \
	SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX( \
	SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX( \
	(h),                                                                                            \
	sizeof(struct sk_plugin_desc)), offsetof(struct sk_plugin_desc, name)),                          \
	offsetof(struct sk_plugin_desc, events_to_register)), sizeof(struct sk_plugin)),                 \
	sizeof(struct sk_status)), offsetof(struct sk_status, reasons)), sizeof(struct sk_pod)),         \
	offsetof(struct sk_pod, requests)), offsetof(struct sk_pod, spread)), offsetof(struct sk_pod, refcount)), \
	sizeof(struct sk_node)), offsetof(struct sk_node, allocatable)), sizeof(struct sk_node_info)),   \
	offsetof(struct sk_node_info, requested)), sizeof(struct sk_resource)), sizeof(struct sk_snapshot)), \
	sizeof(struct sk_queued_pod)), sizeof(struct sk_filter_diagnosis)), sizeof(struct sk_errors)),   \
	sizeof(struct sk_affinity_term)), sizeof(struct sk_spread_constraint)), sizeof(struct sk_pdb)),  \
	sizeof(struct sk_host_api)), sizeof(struct sk_tpmap_entry))
#define SK_LAYOUT_SIGNATURE                                                                             \
	SK__SIG_MIX(SK__SIG_MIX(SK__SIG_MIX(SK__SIG_STRUCTS(0xcbf29ce484222325ULL), sizeof(void *)),     \
				sizeof(long)), sizeof(struct sk_prefilter_result))

/* What sk_module_init returns: static data of the module. The first three fields have the same
 * meaning in every ABI major; the rest is append-only within a major. */
struct sk_module {
	uint32_t abi_major, abi_minor, size; /* SK_ABI_MAJOR, SK_ABI_MINOR, sizeof(struct sk_module) */
	uint64_t layout_signature;           /* SK_LAYOUT_SIGNATURE of the headers it was built with */
	const char *name;                    /* the module's name, for logs ("sample") */
	uint32_t nplugins;
	const struct sk_plugin_desc *const *plugins; /* [nplugins] */
};

/* The entry point (the only exported symbol of a module). host outlives every use the module
 * makes of it (the scheduler unloads a module only when nothing of it runs). Returns the module,
 * or NULL with a message in err[errlen] when the host cannot serve it. */
typedef const struct sk_module *(*sk_module_init_fn)(const struct sk_host_api *host, char *err, size_t errlen);
#define SK_MODULE_ENTRY "sk_module_init"
const struct sk_module *sk_module_init(const struct sk_host_api *host, char *err, size_t errlen);

/* have >= need (a function: with need a constant 0, an inline comparison trips -Wtype-limits). */
static inline int sk__version_at_least(uint32_t have, uint32_t need) { return have >= need; }

/* The module side of the ABI check: the host must have the module's major, at least its minor and
 * at least the table it was built against (a newer minor's functions appended). */
static inline const struct sk_module *sk_module_accept_host(const struct sk_host_api *host,
							    const struct sk_module *mod, char *err, size_t errlen)
{
	if (!host) {
		snprintf(err, errlen, "module \"%s\": no host table", mod->name);
		return NULL;
	}
	if (host->abi_major != SK_ABI_MAJOR || !sk__version_at_least(host->abi_minor, SK_ABI_MINOR)) {
		snprintf(err, errlen, "module \"%s\" needs ABI %d.%d (or a newer %d.x); this scheduler has ABI %u.%u",
			 mod->name, SK_ABI_MAJOR, SK_ABI_MINOR, SK_ABI_MAJOR, host->abi_major, host->abi_minor);
		return NULL;
	}
	if (host->size < sizeof(struct sk_host_api)) {
		snprintf(err, errlen, "module \"%s\": the scheduler's host table has %u bytes, the module needs %zu",
			 mod->name, host->size, sizeof(struct sk_host_api));
		return NULL;
	}
	return mod;
}

/* The forwarders SK_MODULE defines: the API's prototype, a call through the table. */
#define SK__FORWARD(ret, name, params, args) \
	__attribute__((visibility("hidden"))) ret name params { return sk__module_host->name args; }
#define SK__FORWARD_VOID(ret, name, params, args) \
	__attribute__((visibility("hidden"))) ret name params { sk__module_host->name args; }

/* The forwarders alone, and sk__module_host for the entry point to set: SK_MODULE uses it; a module
 * that writes its own sk_module_init (the loader's tests do, to build broken modules) too. */
#define SK_MODULE_FORWARDERS()                                                                           \
	__attribute__((visibility("hidden"))) const struct sk_host_api *sk__module_host;                 \
	SK_HOST_API(SK__FORWARD, SK__FORWARD_VOID)                                                       \
	__attribute__((visibility("hidden"))) struct sk_status sk_statusf(enum sk_code code, const char *fmt, ...) \
	{                                                                                                \
		va_list ap;                                                                              \
		va_start(ap, fmt);                                                                       \
		struct sk_status s = sk__module_host->sk_statusv(code, fmt, ap);                         \
		va_end(ap);                                                                              \
		return s;                                                                                \
	}                                                                                                \
	__attribute__((visibility("hidden"))) void sk_status_addf(struct sk_status *s, const char *fmt, ...) \
	{                                                                                                \
		va_list ap;                                                                              \
		va_start(ap, fmt);                                                                       \
		sk__module_host->sk_status_addv(s, fmt, ap);                                             \
		va_end(ap);                                                                              \
	}                                                                                                \
	__attribute__((visibility("hidden"))) void sk_errors_addf(struct sk_errors *e, const char *fmt, ...) \
	{                                                                                                \
		va_list ap;                                                                              \
		va_start(ap, fmt);                                                                       \
		sk__module_host->sk_errors_addv(e, fmt, ap);                                             \
		va_end(ap);                                                                              \
	}                                                                                                \
	__attribute__((visibility("hidden"))) void sk_log_emit(char sev, const char *file, int line,      \
							       const char *msg, const char *kv_fmt, ...) \
	{                                                                                                \
		va_list ap;                                                                              \
		va_start(ap, kv_fmt);                                                                    \
		sk__module_host->sk_log_emitv(sev, file, line, msg, kv_fmt, ap);                         \
		va_end(ap);                                                                              \
	}                                                                                                \
	struct sk__module_semicolon

#define SK_MODULE(modname, ...)                                                                          \
	SK_MODULE_FORWARDERS();                                                                          \
	static const struct sk_plugin_desc *const sk__module_plugins[] = { __VA_ARGS__ };                \
	static const struct sk_module sk__module = {                                                     \
		.abi_major = SK_ABI_MAJOR,                                                               \
		.abi_minor = SK_ABI_MINOR,                                                               \
		.size = sizeof(struct sk_module),                                                        \
		.layout_signature = SK_LAYOUT_SIGNATURE,                                                 \
		.name = (modname),                                                                       \
		.nplugins = (uint32_t)(sizeof(sk__module_plugins) / sizeof(sk__module_plugins[0])),      \
		.plugins = sk__module_plugins,                                                           \
	};                                                                                               \
	__attribute__((visibility("default"))) const struct sk_module *sk_module_init(                   \
		const struct sk_host_api *host, char *err, size_t errlen)                                \
	{                                                                                                \
		if (!sk_module_accept_host(host, &sk__module, err, errlen))                              \
			return NULL;                                                                     \
		sk__module_host = host;                                                                  \
		return &sk__module;                                                                      \
	}                                                                                                \
	struct sk__module_semicolon

#endif
