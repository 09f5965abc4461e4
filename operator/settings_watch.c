/* The --scheduler-settings watcher (settings_watch.h). */
#include "operator/settings_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"

#define MAX_SETTINGS_BYTES (1 << 20) /* op_settings_load's limit */

struct op_settings_watch {
	char *path;
	double interval_s;
	op_settings_changed_fn on_change;
	void *ctx;
	char *seen;       /* the content last looked at (valid or not) */
	size_t nseen;
	bool have_seen;   /* false: the file could not be read last time */
	char last_err[256]; /* the read error last logged ("" none) */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu; /* guards stop; cv wakes the thread to stop */
	pthread_cond_t cv;
	bool stop;
};

/* The whole file into *out (NUL-terminated), or -1 with why. */
static int read_all(const char *path, char **out, size_t *len, char *why, size_t whylen)
{
	*out = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return -1;
	}
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 4096 + 1 > cap) {
			char *nb = cap * 2 <= (size_t)MAX_SETTINGS_BYTES * 2 ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
		if (n > MAX_SETTINGS_BYTES) {
			free(buf);
			fclose(f);
			snprintf(why, whylen, "larger than 1 MiB");
			return -1;
		}
	}
	bool failed = ferror(f) != 0;
	fclose(f);
	if (!buf || failed) {
		free(buf);
		snprintf(why, whylen, "%s", failed ? "read error" : "out of memory");
		return -1;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int op_settings_watch_check(struct op_settings_watch *w)
{
	char *text = NULL, why[200];
	size_t len = 0;
	if (read_all(w->path, &text, &len, why, sizeof why) != 0) {
		if (strcmp(why, w->last_err)) {
			klog_error("Cannot read the scheduler settings; keeping the current ones", " file=%s err=\"%s\"", w->path,
				   why);
			snprintf(w->last_err, sizeof w->last_err, "%s", why);
		}
		w->have_seen = false;
		return -1;
	}
	w->last_err[0] = 0;
	if (w->have_seen && len == w->nseen && !memcmp(text, w->seen, len)) {
		free(text);
		return 0;
	}
	free(w->seen);
	w->seen = text;
	w->nseen = len;
	w->have_seen = true;
	struct op_settings s;
	char *err = NULL;
	if (op_settings_parse(text, len, w->path, &s, &err) != 0) {
		klog_error("Invalid scheduler settings; keeping the current ones", " err=\"%s\"", err ? err : "out of memory");
		free(err);
		return -1;
	}
	klog_info(0, "Scheduler settings changed; reconciling", " file=%s", w->path);
	w->on_change(w->ctx, &s);
	return 1;
}

static void *watch_main(void *arg)
{
	struct op_settings_watch *w = arg;
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long long ns = ts.tv_nsec + (long long)(w->interval_s * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000LL);
		ts.tv_nsec = (long)(ns % 1000000000LL);
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->mu);
		op_settings_watch_check(w);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int op_settings_watch_start(const char *path, double interval_s, op_settings_changed_fn on_change, void *ctx,
			    struct op_settings_watch **out, char **err)
{
	*out = NULL;
	struct op_settings_watch *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		if (err)
			*err = strdup("out of memory");
		return -1;
	}
	w->interval_s = interval_s > 0 ? interval_s : 1;
	w->on_change = on_change;
	w->ctx = ctx;
	char why[200];
	if (read_all(path, &w->seen, &w->nseen, why, sizeof why) == 0)
		w->have_seen = true;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		op_settings_watch_stop(w);
		if (err)
			*err = strdup("cannot start the settings watcher thread");
		return -1;
	}
	w->started = true;
	*out = w;
	return 0;
}

void op_settings_watch_stop(struct op_settings_watch *w)
{
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->seen);
	free(w->path);
	free(w);
}
