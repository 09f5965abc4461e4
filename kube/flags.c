/* The flag table parser and usage printer of flags.h: one pass over argv, each argument looked
 * up in the table, its value converted by kind and stored at the flag's offset. */
#include "kube/flags.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

static const struct kube_flag *find_long(const struct kube_flag_set *set, const char *name, size_t len)
{
	for (size_t i = 0; i < set->nflags; i++)
		if (strlen(set->flags[i].name) == len && !strncmp(set->flags[i].name, name, len))
			return &set->flags[i];
	return NULL;
}

static const struct kube_flag *find_short(const struct kube_flag_set *set, char c)
{
	for (size_t i = 0; c && i < set->nflags; i++)
		if (set->flags[i].shorthand == c)
			return &set->flags[i];
	return NULL;
}

static bool takes_value(const struct kube_flag *f)
{
	return f->kind != KUBE_FLAG_BOOL && f->kind != KUBE_FLAG_TRIBOOL && f->kind != KUBE_FLAG_IGNORED_BOOL;
}

static int bad_bool(const struct kube_flag *f, const char *val, FILE *errout)
{
	fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: strconv.ParseBool: parsing \"%s\": invalid syntax\n",
		val, f->name, val);
	return 2;
}

/* Converts and stores one value (NULL: a bare boolean flag). 0, or 2 with the error printed. */
static int store(const struct kube_flag_set *set, const struct kube_flag *f, const char *val, void *opts,
		 FILE *errout)
{
	char *field = (char *)opts + f->offset;
	switch (f->kind) {
	case KUBE_FLAG_STRING: {
		char **dst = (char **)field;
		if (!set->copy_strings) {
			*dst = (char *)val;
			return 0;
		}
		char *copy = strdup(val);
		if (!copy) {
			fprintf(errout, "Error: out of memory\n");
			return 2;
		}
		free(*dst);
		*dst = copy;
		return 0;
	}
	case KUBE_FLAG_BOOL:
	case KUBE_FLAG_TRIBOOL: {
		bool b = true;
		if (val && kube_parse_bool(val, &b) != 0)
			return bad_bool(f, val, errout);
		if (f->kind == KUBE_FLAG_BOOL)
			*(bool *)field = b;
		else
			*(int *)field = b;
		return 0;
	}
	case KUBE_FLAG_INT: {
		int64_t v;
		if (kube_parse_int(val, f->min, f->max, &v) != 0) {
			int64_t any;
			fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: ", val, f->name);
			if (f->note)
				fprintf(errout, "%s\n", f->note);
			else if (kube_parse_int(val, INT64_MIN, INT64_MAX, &any) != 0)
				fprintf(errout, "strconv.ParseInt: parsing \"%s\": invalid syntax\n", val);
			else
				fprintf(errout, "must be between %" PRId64 " and %" PRId64 "\n", f->min, f->max);
			return 2;
		}
		*(int *)field = (int)v;
		return 0;
	}
	case KUBE_FLAG_DURATION: {
		int64_t ms;
		if (kube_duration_parse_ms(val, &ms) != 0 || ms < f->min) {
			fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: time: invalid duration \"%s\"\n",
				val, f->name, val);
			return 2;
		}
		*(int64_t *)field = ms;
		return 0;
	}
	case KUBE_FLAG_IGNORED:
		return 0;
	case KUBE_FLAG_IGNORED_BOOL: {
		bool b;
		return val && kube_parse_bool(val, &b) != 0 ? bad_bool(f, val, errout) : 0;
	}
	case KUBE_FLAG_FLOAT: {
		char *end;
		errno = 0;
		double v = strtod(val, &end);
		if (!*val || *end || errno || v != v) {
			fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: strconv.ParseFloat: parsing \"%s\": invalid syntax\n",
				val, f->name, val);
			return 2;
		}
		if (v < (double)f->min || v > (double)f->max) {
			fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: %s\n", val, f->name,
				f->note ? f->note : "out of range");
			return 2;
		}
		*(double *)field = v;
		return 0;
	}
	case KUBE_FLAG_STRINGS: {
		char ***dst = (char ***)field;
		int n = kube_flag_strings_len(*dst);
		char **grown = realloc(*dst, (size_t)(n + 2) * sizeof(*grown));
		char *copy = strdup(val);
		if (!grown || !copy) {
			if (grown)
				*dst = grown;
			free(copy);
			fprintf(errout, "Error: out of memory\n");
			return 2;
		}
		grown[n] = copy;
		grown[n + 1] = NULL;
		*dst = grown;
		return 0;
	}
	}
	return 0;
}

int kube_flag_strings_len(char *const *v)
{
	int n = 0;
	while (v && v[n])
		n++;
	return n;
}

void kube_flag_strings_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* --version[=V]: 1 (printed), 0 (=false: go on) or 2 (a bad value). */
static int version_flag(const struct kube_flag_set *set, const char *val, FILE *out, FILE *errout)
{
	bool b = true;
	if (val && strcmp(val, "raw") && kube_parse_bool(val, &b) != 0) {
		fprintf(errout, "Error: invalid argument \"%s\" for \"--version\" flag: strconv.ParseBool: parsing \"%s\": invalid syntax\n",
			val, val);
		return 2;
	}
	if (!b)
		return 0;
	fprintf(out, "%s\n", set->version);
	return 1;
}

/* One warning line naming the IGNORED flags of argv (each once, in table order). */
static void warn_ignored(const struct kube_flag_set *set, const bool *seen, FILE *errout)
{
	bool any = false;
	for (size_t i = 0; i < set->nflags; i++) {
		if (!seen[i])
			continue;
		if (!any)
			fprintf(errout, "W: flags accepted and ignored%s%s%s: ", set->ignored_note ? " (" : "",
				set->ignored_note ? set->ignored_note : "", set->ignored_note ? ")" : "");
		fprintf(errout, "%s--%s", any ? ", " : "", set->flags[i].name);
		any = true;
	}
	if (any)
		fputc('\n', errout);
}

static int parse_one(const struct kube_flag_set *set, int argc, char **argv, int *i, void *opts, FILE *out,
		     FILE *errout, bool *seen)
{
	const char *a = argv[*i];
	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		kube_flags_usage(set, out);
		return 1;
	}
	if (set->version && (!strcmp(a, "--version") || !strncmp(a, "--version=", 10)))
		return version_flag(set, a[9] ? a + 10 : NULL, out, errout);
	const struct kube_flag *f;
	const char *eq;
	if (!strncmp(a, "--", 2)) {
		eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (!(f = find_long(set, a + 2, len))) {
			fprintf(errout, "Error: unknown flag: --%.*s\nRun '%s --help' for usage.\n", (int)len, a + 2, set->prog);
			return 2;
		}
	} else if (a[0] == '-' && a[1]) {
		/* -X, -X=value or -X value; anything longer is a shorthand we do not have */
		f = (a[2] == '\0' || a[2] == '=') ? find_short(set, a[1]) : NULL;
		if (!f) {
			fprintf(errout, "Error: unknown shorthand flag: '%c' in %s\nRun '%s --help' for usage.\n", a[1], a,
				set->prog);
			return 2;
		}
		eq = a[2] == '=' ? a + 2 : NULL;
	} else {
		fprintf(errout, "Error: \"%s\" does not take any arguments, got [\"%s\"]\nRun '%s --help' for usage.\n",
			set->prog, a, set->prog);
		return 2;
	}
	const char *val = eq ? eq + 1 : NULL;
	if (!val && takes_value(f)) {
		if (*i + 1 >= argc) {
			fprintf(errout, "Error: flag needs an argument: --%s\n", f->name);
			return 2;
		}
		val = argv[++*i];
	}
	if (f->kind == KUBE_FLAG_IGNORED || f->kind == KUBE_FLAG_IGNORED_BOOL)
		seen[f - set->flags] = true;
	return store(set, f, val, opts, errout);
}

int kube_flags_parse(const struct kube_flag_set *set, int argc, char **argv, void *opts, FILE *out, FILE *errout)
{
	bool *seen = calloc(set->nflags + 1, sizeof *seen);
	if (!seen) {
		fprintf(errout, "Error: out of memory\n");
		return 2;
	}
	int rc = 0;
	for (int i = 1; i < argc && rc == 0; i++)
		rc = parse_one(set, argc, argv, &i, opts, out, errout, seen);
	if (rc == 0)
		warn_ignored(set, seen, errout);
	free(seen);
	return rc;
}

static const char *arg_name(const struct kube_flag *f)
{
	if (f->arg)
		return f->arg;
	switch (f->kind) {
	case KUBE_FLAG_STRING:
	case KUBE_FLAG_IGNORED:
		return "string";
	case KUBE_FLAG_STRINGS:
		return "strings";
	case KUBE_FLAG_INT:
		return "int";
	case KUBE_FLAG_DURATION:
		return "duration";
	case KUBE_FLAG_FLOAT:
		return "float";
	default:
		return "";
	}
}

static void usage_line(FILE *f, int column, char shorthand, const char *name, const char *arg, const char *help)
{
	int n = fprintf(f, "  ");
	if (shorthand)
		n += fprintf(f, "-%c, ", shorthand);
	n += fprintf(f, "--%s%s%s", name, *arg ? " " : "", arg);
	if (!help || !*help) {
		fputc('\n', f);
		return;
	}
	do
		fputc(' ', f);
	while (++n < column);
	for (const char *p = help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n' && p[1])
			fprintf(f, "%*s", column, "");
	}
	if (help[strlen(help) - 1] != '\n')
		fputc('\n', f);
}

void kube_flags_usage(const struct kube_flag_set *set, FILE *f)
{
	if (set->head)
		fputs(set->head, f);
	for (size_t i = 0; i < set->nflags; i++) {
		const struct kube_flag *fl = &set->flags[i];
		usage_line(f, set->column, fl->shorthand, fl->name, arg_name(fl), fl->help);
	}
	if (set->version)
		usage_line(f, set->column, 0, "version", "version[=true]", "--version, --version=raw prints version information and quits.");
	char help[256];
	if (set->help_help)
		snprintf(help, sizeof help, "%s", set->help_help);
	else
		snprintf(help, sizeof help, "Help for %s.", set->prog);
	usage_line(f, set->column, 'h', "help", "", help);
}
