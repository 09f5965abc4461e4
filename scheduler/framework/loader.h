/* The module loader (--plugin-dir): loads every *.so of the given directories into a module set,
 * checks each module's ABI (major, minor, sizes, layout signature) and its descriptors (names
 * unique, none shadowing an in-tree plugin), and keeps the modules refcounted so a module is
 * dlclose'd only when no configuration and no framework holds it (docs/plugins.md). A module set
 * is immutable once loaded; each configuration generation holds its own (sk_config_opts.modules),
 * so two generations can run different sets side by side. Not for plugins. */
#ifndef SK_FRAMEWORK_LOADER_H
#define SK_FRAMEWORK_LOADER_H

#include <stddef.h>

#include "schedkit/plugin.h"

/* The core's host table (scheduler/framework/host_api.c; the struct is schedkit/host_api.h's,
 * which brings schedkit/log.h along, so core files that log through kube/log.h cannot include it). */
struct sk_host_api;
extern const struct sk_host_api sk_host_table;

/* Checks a descriptor's header (abi_major, abi_minor, size) against this build. 0, or -1 with
 * `plugin "<name>": ABI <major>.<minor> is not supported by this scheduler (ABI <ours>)` (or the size
 * problem) in msg[n]. */
int sk_desc_check_abi(const struct sk_plugin_desc *d, char *msg, size_t n);

struct sk_module_set;
struct sk_loaded_module;

/* Loads the *.so files of dirs[0..ndirs-1] (each directory's files sorted by name), each from a
 * private copy of its bytes (a memfd, so a replaced file loads anew even while the old one is
 * mapped). ndirs 0 gives an empty set. Returns 0 and *out (caller sk_module_set_unref's), or -1
 * and *err (caller frees) naming the file and the plugin; nothing stays loaded then. */
int sk_module_set_load(const char *const *dirs, int ndirs, struct sk_module_set **out, char **err);
struct sk_module_set *sk_module_set_ref(struct sk_module_set *set); /* NULL ok */
void sk_module_set_unref(struct sk_module_set *set);                 /* NULL ok */
/* The descriptor a loaded plugin registered under name, or NULL. set NULL ok. */
const struct sk_plugin_desc *sk_module_set_lookup(const struct sk_module_set *set, const char *name);
int sk_module_set_nplugins(const struct sk_module_set *set);
const struct sk_plugin_desc *sk_module_set_plugin(const struct sk_module_set *set, int i);
/* The module that provides desc (a pointer sk_module_set_lookup returned), or NULL. */
struct sk_loaded_module *sk_module_set_module_of(const struct sk_module_set *set, const struct sk_plugin_desc *desc);
/* The file the plugin named name was loaded from, or NULL. */
const char *sk_module_set_file_of(const struct sk_module_set *set, const char *name);

/* A framework built from a module's descriptor holds the module (framework.c). unref of the last
 * reference runs dlclose. NULL ok. */
struct sk_loaded_module *sk_module_ref(struct sk_loaded_module *m);
void sk_module_unref(struct sk_loaded_module *m);
/* Modules loaded and not yet closed in this process (tests, metrics). */
int sk_loader_live_modules(void);

/* sha256 (hex) over the names and contents of the *.so files of dirs, in load order: what the
 * config watcher compares to see a plugin file added, removed or changed. A missing directory
 * hashes as such (no error), so a directory created later is a change. 0, or -1 and *err. */
int sk_plugin_dirs_hash(const char *const *dirs, int ndirs, char out[65], char **err);

#endif
