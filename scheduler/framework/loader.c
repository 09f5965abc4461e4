/* The module loader (loader.h): directory listing, private copies (memfd) and dlopen, the host and
 * module ABI checks, descriptor copies at the host's size, the module set a configuration holds,
 * and the refcounts that defer dlclose until no framework runs a module's code. */
#include "scheduler/framework/loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "kube/object.h"
#include "kube/util.h"
#include "schedkit/module.h"
#include "scheduler/framework/registry.h"

/* The descriptor of ABI 1.0 ends with events_to_register: a smaller one is not a 1.x descriptor. */
#define DESC_SIZE_1_0 (offsetof(struct sk_plugin_desc, events_to_register) + sizeof(void (*)(void)))
/* struct sk_module of ABI 1.0 ends with plugins. */
#define MODULE_SIZE_1_0 (offsetof(struct sk_module, plugins) + sizeof(void *))

struct sk_loaded_module {
	atomic_int refs;
	void *dl;
	int memfd;                    /* kept open while loaded: its /proc/self/fd name stays unique */
	char *path;                   /* the file it was loaded from */
	const struct sk_module *mod;
	int ndescs;
	struct sk_plugin_desc *descs; /* host-sized copies (fields a smaller descriptor lacks are NULL) */
};

struct set_entry {
	const struct sk_plugin_desc *desc; /* in mod->descs */
	struct sk_loaded_module *mod;
};

struct sk_module_set {
	atomic_int refs;
	int nmods;
	struct sk_loaded_module **mods;
	int nplugins;
	struct set_entry *plugins;
};

static atomic_int live_modules;

int sk_loader_live_modules(void) { return atomic_load(&live_modules); }

int sk_desc_check_abi(const struct sk_plugin_desc *d, char *msg, size_t n)
{
	const char *name = d->name ? d->name : "";
	if (d->abi_major != SK_ABI_MAJOR || d->abi_minor > SK_ABI_MINOR) {
		snprintf(msg, n, "plugin \"%s\": ABI %u.%u is not supported by this scheduler (ABI %d.%d)", name,
			 d->abi_major, d->abi_minor, SK_ABI_MAJOR, SK_ABI_MINOR);
		return -1;
	}
	if (d->size < DESC_SIZE_1_0 || d->size > sizeof(struct sk_plugin_desc)) {
		snprintf(msg, n, "plugin \"%s\": descriptor of %u bytes does not match ABI %u.%u (%zu to %zu bytes)", name,
			 d->size, d->abi_major, d->abi_minor, (size_t)DESC_SIZE_1_0, sizeof(struct sk_plugin_desc));
		return -1;
	}
	/* score_batch (1.1) replaces score on the framework's hot path only; everything else that
	 * scores one node (and the Score point's membership) uses score */
	if (d->size >= offsetof(struct sk_plugin_desc, score_batch) + sizeof(d->score_batch) && d->score_batch &&
	    !d->score) {
		snprintf(msg, n, "plugin \"%s\": score_batch is set without score (a batch plugin also scores one node)",
			 name);
		return -1;
	}
	if (d->size >= offsetof(struct sk_plugin_desc, filter_batch) + sizeof(d->filter_batch) && d->filter_batch &&
	    !d->filter) {
		snprintf(msg, n, "plugin \"%s\": filter_batch is set without filter (a batch plugin also filters one node)",
			 name);
		return -1;
	}
	return 0;
}

/* ---------- modules ---------- */

static void module_close(struct sk_loaded_module *m)
{
	if (!m)
		return;
	if (m->dl) {
		dlclose(m->dl);
		atomic_fetch_sub(&live_modules, 1);
	}
	if (m->memfd >= 0)
		close(m->memfd);
	free(m->descs);
	free(m->path);
	free(m);
}

struct sk_loaded_module *sk_module_ref(struct sk_loaded_module *m)
{
	if (m)
		atomic_fetch_add(&m->refs, 1);
	return m;
}

void sk_module_unref(struct sk_loaded_module *m)
{
	if (m && atomic_fetch_sub(&m->refs, 1) == 1)
		module_close(m);
}

/* dlerror names the memfd ("/proc/self/fd/7: ..."): say the file instead. */
static const char *strip_fd_name(const char *msg, const char *fdname)
{
	size_t l = strlen(fdname);
	if (msg && !strncmp(msg, fdname, l) && msg[l] == ':')
		return msg + l + 1 + (msg[l + 1] == ' ');
	return msg ? msg : "unknown error";
}

/* The first plugin's name for messages about the whole module ("plugin \"Sample\""), or the
 * module's name. Reads only the fields every major keeps in place. */
static void module_subject(const struct sk_module *mod, char *buf, size_t n)
{
	if (mod->nplugins && mod->plugins && mod->plugins[0] && mod->plugins[0]->name)
		snprintf(buf, n, "plugin \"%s\"", mod->plugins[0]->name);
	else
		snprintf(buf, n, "module \"%s\"", mod->name ? mod->name : "");
}

/* SK_LAYOUT_SIGNATURE of each released minor of this major, indexed by minor. When SK_ABI_MINOR is
 * bumped, the previous minor's value (printed by the loader test) is appended here, so modules built
 * against it keep loading. The current minor's is SK_LAYOUT_SIGNATURE itself. */
static const uint64_t released_signatures[] = {
	0x1211bdfea04318afULL, /* 1.0 */
	0x3524af74a8f42ea7ULL, /* 1.1 */
	0x88311f5892749f4fULL, /* 1.2 */
};

static uint64_t released_signature(uint32_t minor)
{
	if (minor == SK_ABI_MINOR)
		return SK_LAYOUT_SIGNATURE;
	if (minor < sizeof(released_signatures) / sizeof(released_signatures[0]))
		return released_signatures[minor];
	return 0;
}

static int check_module(const struct sk_module *mod, char *msg, size_t n)
{
	char subject[256];
	module_subject(mod, subject, sizeof(subject));
	if (mod->abi_major != SK_ABI_MAJOR || mod->abi_minor > SK_ABI_MINOR) {
		snprintf(msg, n, "%s: ABI %u.%u is not supported by this scheduler (ABI %d.%d)", subject, mod->abi_major,
			 mod->abi_minor, SK_ABI_MAJOR, SK_ABI_MINOR);
		return -1;
	}
	if (mod->size < MODULE_SIZE_1_0) {
		snprintf(msg, n, "%s: module header of %u bytes is too small for ABI %u.%u (%zu)", subject, mod->size,
			 mod->abi_major, mod->abi_minor, (size_t)MODULE_SIZE_1_0);
		return -1;
	}
	/* The fingerprint covers this build's struct sizes, which an older minor's headers had smaller
	 * (append-only): a module of an older minor is compared against the fingerprint that minor
	 * shipped with (released_signature), one of ours against our own. */
	if (mod->layout_signature != released_signature(mod->abi_minor)) {
		snprintf(msg, n,
			 "%s: built against schedkit headers of another build (layout signature %016" PRIx64
			 ", this scheduler %016" PRIx64 ")",
			 subject, mod->layout_signature, (uint64_t)SK_LAYOUT_SIGNATURE);
		return -1;
	}
	if (!mod->nplugins || !mod->plugins) {
		snprintf(msg, n, "module \"%s\" provides no plugin", mod->name ? mod->name : "");
		return -1;
	}
	return 0;
}

static char *read_whole(const char *path, size_t *len, int *e)
{
	return kube_read_file(path, 0, len, e);
}

/* Loads one file; 0 and *out, or -1 and *err. */
static int module_open(const char *path, struct sk_loaded_module **out, char **err)
{
	size_t len = 0;
	int e = 0;
	char *bytes = read_whole(path, &len, &e);
	if (!bytes)
		return kube_errf(err, "plugin file \"%s\": %s", path, strerror(e));
	struct sk_loaded_module *m = calloc(1, sizeof(*m));
	if (!m) {
		free(bytes);
		return kube_errf(err, "plugin file \"%s\": out of memory", path);
	}
	atomic_init(&m->refs, 1);
	m->memfd = -1;
	m->path = strdup(path);
	const char *base = strrchr(path, '/');
	m->memfd = memfd_create(base ? base + 1 : path, MFD_CLOEXEC);
	int rc = -1;
	if (!m->path) {
		kube_errf(err, "plugin file \"%s\": out of memory", path);
		goto out;
	}
	if (m->memfd < 0) {
		kube_errf(err, "plugin file \"%s\": memfd_create: %s", path, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(m->memfd, bytes + off, len - off);
		if (w <= 0) {
			kube_errf(err, "plugin file \"%s\": copying: %s", path, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	char fdname[64];
	snprintf(fdname, sizeof(fdname), "/proc/self/fd/%d", m->memfd);
	m->dl = dlopen(fdname, RTLD_NOW | RTLD_LOCAL);
	if (!m->dl) {
		kube_errf(err, "plugin file \"%s\": %s", path, strip_fd_name(dlerror(), fdname));
		goto out;
	}
	atomic_fetch_add(&live_modules, 1);
	dlerror();
	sk_module_init_fn init;
	*(void **)&init = dlsym(m->dl, SK_MODULE_ENTRY);
	if (!init) {
		const char *de = dlerror();
		kube_errf(err, "plugin file \"%s\": not a schedkit plugin (no %s): %s", path, SK_MODULE_ENTRY,
			  strip_fd_name(de ? de : "symbol not found", fdname));
		goto out;
	}
	char msg[1024] = "";
	m->mod = init(&sk_host_table, msg, sizeof(msg));
	if (!m->mod) {
		kube_errf(err, "plugin file \"%s\": %s", path, msg[0] ? msg : "sk_module_init refused the scheduler");
		goto out;
	}
	if (check_module(m->mod, msg, sizeof(msg)) != 0) {
		kube_errf(err, "plugin file \"%s\": %s", path, msg);
		goto out;
	}
	m->descs = calloc(m->mod->nplugins, sizeof(*m->descs));
	if (!m->descs) {
		kube_errf(err, "plugin file \"%s\": out of memory", path);
		goto out;
	}
	for (uint32_t i = 0; i < m->mod->nplugins; i++) {
		const struct sk_plugin_desc *d = m->mod->plugins[i];
		if (!d || !d->name || !*d->name) {
			kube_errf(err, "plugin file \"%s\": module \"%s\": descriptor %u has no name", path,
				  m->mod->name ? m->mod->name : "", i);
			goto out;
		}
		if (sk_desc_check_abi(d, msg, sizeof(msg)) != 0) {
			kube_errf(err, "plugin file \"%s\": %s", path, msg);
			goto out;
		}
		/* Append-only: a descriptor of an older minor is read with the newer fields NULL. */
		memcpy(&m->descs[i], d, d->size);
		m->descs[i].size = sizeof(struct sk_plugin_desc);
		/* The queue and the metrics keep plugin names past a framework's life (the plugins that
		 * rejected a pod): interned copies outlive the module's own rodata. */
		m->descs[i].name = sk_intern(d->name);
		if (d->args_kind)
			m->descs[i].args_kind = sk_intern(d->args_kind);
		if (!m->descs[i].name || (d->args_kind && !m->descs[i].args_kind)) {
			kube_errf(err, "plugin file \"%s\": out of memory", path);
			goto out;
		}
		m->ndescs++;
	}
	rc = 0;
out:
	free(bytes);
	if (rc == 0)
		*out = m;
	else
		module_close(m);
	return rc;
}

/* ---------- directories ---------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The *.so paths of dir, sorted by file name. 0 (n may be 0), -1 with errno (ENOENT, ...). */
static int list_so(const char *dir, char ***out, int *n)
{
	*out = NULL;
	*n = 0;
	DIR *dp = opendir(dir);
	if (!dp)
		return -1;
	char **names = NULL;
	int cap = 0, cnt = 0, rc = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".so") || de->d_name[0] == '.')
			continue;
		char *p = NULL;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0) {
			rc = -1;
			errno = ENOMEM;
			break;
		}
		struct stat st;
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			char **nn = realloc(names, (size_t)cap * sizeof(*nn));
			if (!nn) {
				free(p);
				rc = -1;
				errno = ENOMEM;
				break;
			}
			names = nn;
		}
		names[cnt++] = p;
	}
	closedir(dp);
	if (rc != 0) {
		for (int i = 0; i < cnt; i++)
			free(names[i]);
		free(names);
		return -1;
	}
	if (cnt)
		qsort(names, (size_t)cnt, sizeof(*names), cmp_str);
	*out = names;
	*n = cnt;
	return 0;
}

static void free_list(char **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* ---------- sets ---------- */

static void set_free(struct sk_module_set *s)
{
	for (int i = 0; i < s->nmods; i++)
		sk_module_unref(s->mods[i]);
	free(s->mods);
	free(s->plugins);
	free(s);
}

struct sk_module_set *sk_module_set_ref(struct sk_module_set *set)
{
	if (set)
		atomic_fetch_add(&set->refs, 1);
	return set;
}

void sk_module_set_unref(struct sk_module_set *set)
{
	if (set && atomic_fetch_sub(&set->refs, 1) == 1)
		set_free(set);
}

static int set_add(struct sk_module_set *s, struct sk_loaded_module *m, char **err)
{
	for (int i = 0; i < m->ndescs; i++) {
		const char *name = m->descs[i].name;
		if (sk_registry_lookup(name))
			return kube_errf(err, "plugin file \"%s\": plugin \"%s\" shadows an in-tree plugin", m->path, name);
		for (int k = 0; k < i; k++)
			if (!strcmp(m->descs[k].name, name))
				return kube_errf(err, "plugin file \"%s\": plugin \"%s\" is provided twice", m->path, name);
		for (int k = 0; k < s->nplugins; k++)
			if (!strcmp(s->plugins[k].desc->name, name))
				return kube_errf(err, "plugin file \"%s\": plugin \"%s\" is also provided by \"%s\"", m->path,
						 name, s->plugins[k].mod->path);
	}
	struct sk_loaded_module **mods = realloc(s->mods, (size_t)(s->nmods + 1) * sizeof(*mods));
	if (!mods)
		return kube_errf(err, "plugin file \"%s\": out of memory", m->path);
	s->mods = mods;
	struct set_entry *pl = realloc(s->plugins, (size_t)(s->nplugins + m->ndescs) * sizeof(*pl));
	if (!pl)
		return kube_errf(err, "plugin file \"%s\": out of memory", m->path);
	s->plugins = pl;
	s->mods[s->nmods++] = m;
	for (int i = 0; i < m->ndescs; i++)
		s->plugins[s->nplugins++] = (struct set_entry){ &m->descs[i], m };
	return 0;
}

int sk_module_set_load(const char *const *dirs, int ndirs, struct sk_module_set **out, char **err)
{
	if (err)
		*err = NULL;
	*out = NULL;
	struct sk_module_set *s = calloc(1, sizeof(*s));
	if (!s)
		return kube_errf(err, "plugin loader: out of memory");
	atomic_init(&s->refs, 1);
	for (int d = 0; d < ndirs; d++) {
		char **files;
		int n;
		if (list_so(dirs[d], &files, &n) != 0) {
			kube_errf(err, "plugin dir \"%s\": %s", dirs[d], strerror(errno));
			set_free(s);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct sk_loaded_module *m = NULL;
			if (module_open(files[i], &m, err) != 0 || set_add(s, m, err) != 0) {
				module_close(m);
				free_list(files, n);
				set_free(s);
				return -1;
			}
			sk_log_info(2, "Loaded plugin file", " file=%s module=%s plugins=%u", files[i],
				    m->mod->name ? m->mod->name : "", m->mod->nplugins);
		}
		free_list(files, n);
	}
	*out = s;
	return 0;
}

const struct sk_plugin_desc *sk_module_set_lookup(const struct sk_module_set *set, const char *name)
{
	if (!set || !name)
		return NULL;
	for (int i = 0; i < set->nplugins; i++)
		if (!strcmp(set->plugins[i].desc->name, name))
			return set->plugins[i].desc;
	return NULL;
}

int sk_module_set_nplugins(const struct sk_module_set *set) { return set ? set->nplugins : 0; }

const struct sk_plugin_desc *sk_module_set_plugin(const struct sk_module_set *set, int i)
{
	return set && i >= 0 && i < set->nplugins ? set->plugins[i].desc : NULL;
}

struct sk_loaded_module *sk_module_set_module_of(const struct sk_module_set *set, const struct sk_plugin_desc *desc)
{
	for (int i = 0; set && i < set->nplugins; i++)
		if (set->plugins[i].desc == desc)
			return set->plugins[i].mod;
	return NULL;
}

const char *sk_module_set_file_of(const struct sk_module_set *set, const char *name)
{
	for (int i = 0; set && name && i < set->nplugins; i++)
		if (!strcmp(set->plugins[i].desc->name, name))
			return set->plugins[i].mod->path;
	return NULL;
}

/* ---------- the watcher's hash ---------- */

int sk_plugin_dirs_hash(const char *const *dirs, int ndirs, char out[65], char **err)
{
	out[0] = '\0';
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return kube_errf(err, "plugin dirs: sha256 unavailable");
	}
	int rc = 0;
	for (int d = 0; d < ndirs && rc == 0; d++) {
		char **files;
		int n;
		if (list_so(dirs[d], &files, &n) != 0) {
			char mark[64];
			snprintf(mark, sizeof(mark), "unreadable dir %d: %d", d, errno);
			EVP_DigestUpdate(ctx, mark, strlen(mark) + 1);
			continue;
		}
		EVP_DigestUpdate(ctx, dirs[d], strlen(dirs[d]) + 1);
		for (int i = 0; i < n; i++) {
			size_t len = 0;
			int e = 0;
			char *bytes = read_whole(files[i], &len, &e);
			EVP_DigestUpdate(ctx, files[i], strlen(files[i]) + 1);
			if (bytes) {
				char lenbuf[32];
				snprintf(lenbuf, sizeof(lenbuf), "%zu", len);
				EVP_DigestUpdate(ctx, lenbuf, strlen(lenbuf) + 1);
				EVP_DigestUpdate(ctx, bytes, len);
			} else {
				EVP_DigestUpdate(ctx, "unreadable", 11);
			}
			free(bytes);
		}
		free_list(files, n);
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1)
		rc = kube_errf(err, "plugin dirs: sha256 failed");
	EVP_MD_CTX_free(ctx);
	for (unsigned int i = 0; rc == 0 && i < mdlen && i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return rc;
}
