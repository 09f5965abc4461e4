/* Re-reading the operator's --scheduler-settings file while it runs (docs/operator.md, "Scheduler
 * settings"): a thread reads the file every interval (the mounted ConfigMap changes by kubelet's
 * atomic symlink swap, so its content, not its mtime, is compared) and, when the bytes changed,
 * parses them with op_settings_parse. A valid new version is handed to on_change; an invalid one
 * is logged (the file and the field, as at start) and the previous settings stay in force, so a
 * bad edit never replaces good settings. A file that cannot be read is logged once per change of
 * the error and changes nothing either.
 *
 * Threads: on_change runs on the watcher's thread; the watcher holds no lock while calling it. */
#ifndef OP_SETTINGS_WATCH_H
#define OP_SETTINGS_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "operator/settings.h"

struct op_settings_watch;

/* on_change(ctx, s): a new valid version; *s is moved to the callee (it frees it with
 * op_settings_free). */
typedef void (*op_settings_changed_fn)(void *ctx, struct op_settings *s);

/* Starts watching path. The file's content at start is read now and is the baseline (what the
 * caller loaded with op_settings_load): only a later change is reported. interval_s <= 0: 1 s.
 * Returns 0 and *out, or -1 and *err (caller frees). */
int op_settings_watch_start(const char *path, double interval_s, op_settings_changed_fn on_change, void *ctx,
			    struct op_settings_watch **out, char **err);
/* One check now, on the caller's thread (tests, with an interval long enough that the thread
 * never checks at the same time; the thread does the same every interval).
 * Returns 1 when a new version was reported, 0 when nothing changed, -1 when the change was
 * refused (invalid or unreadable). */
int op_settings_watch_check(struct op_settings_watch *w);
/* Stops the thread (joins) and frees. NULL is a no-op. */
void op_settings_watch_stop(struct op_settings_watch *w);

#endif
