/* Command-line flags for the three binaries, pflag style: a table of flags (name, kind, where
 * the value goes in the caller's options struct, help text), one parser and one usage printer.
 * Accepted: `--name=value`, `--name value`, a bare `--bool` (true), `-X value` / `-X=value` for a
 * one-letter shorthand (`-v 2`), `-h` / `--help`. Errors use upstream's (pflag/cobra) wording. */
#ifndef KUBE_FLAGS_H
#define KUBE_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum kube_flag_kind {
	KUBE_FLAG_STRING,   /* char *: argv's string, or a copy (copy_strings) */
	KUBE_FLAG_BOOL,     /* bool (strconv.ParseBool; bare flag: true) */
	KUBE_FLAG_TRIBOOL,  /* int: 0 or 1 (the caller's -1 says "not given") */
	KUBE_FLAG_INT,      /* int in [min, max] */
	KUBE_FLAG_DURATION, /* int64_t milliseconds (time.ParseDuration), at least min */
	KUBE_FLAG_IGNORED,  /* takes a value, stores nothing; named in the one warning line (below) */
	KUBE_FLAG_IGNORED_BOOL, /* the same for a boolean flag: the value is optional and checked */
	KUBE_FLAG_FLOAT,    /* double (strconv.ParseFloat), in [min, max] */
	KUBE_FLAG_STRINGS,  /* char **: repeatable; each value appended (a copy) to a NULL-terminated
			       malloc'd array, whatever copy_strings says; free with kube_flag_strings_free */
};

struct kube_flag {
	const char *name;         /* without the dashes */
	char shorthand;           /* 'v' for -v; 0: none */
	enum kube_flag_kind kind;
	size_t offset;            /* of the field in the options struct (offsetof) */
	int64_t min, max;         /* INT: the range; DURATION: min is the least value (ms) */
	const char *arg;          /* in the usage line ("string", "N"); NULL: from the kind */
	const char *help;         /* usage text; each '\n' continues at the help column */
	/* INT: the reason given for a value out of range (default "must be between MIN and MAX");
	 * IGNORED: why the flag is ignored (warning text). */
	const char *note;
};

struct kube_flag_set {
	const char *prog;         /* names the program in messages */
	const char *head;         /* what the usage printer prints before the flag lines */
	const struct kube_flag *flags;
	size_t nflags;
	int column;               /* where help texts start in usage lines */
	bool copy_strings;        /* STRING values are strdup'd, freeing the field's earlier value
				     (the caller's defaults must then be NULL or malloc'd) */
	const char *help_help;    /* the text of the -h, --help line; NULL: "Help for PROG." */
	/* Non-NULL: --version[=true|false|raw] prints this line and exits (result 1, like --help),
	 * as component-base's version flag (k8s.io/component-base/version/verflag). */
	const char *version;
	/* Why the IGNORED flags are ignored: after the parse, one warning line on errout names every
	 * ignored flag given: "W: flags accepted and ignored (NOTE): --a, --b". */
	const char *ignored_note;
};

/* Parses argv[1..argc-1] into opts (initialised by the caller with the defaults). Returns 0
 * (run), 1 (--help or --version printed to out: exit 0) or 2 (an error printed to errout: exit 2).
 * The warning about IGNORED flags goes to errout too. */
int kube_flags_parse(const struct kube_flag_set *set, int argc, char **argv, void *opts, FILE *out, FILE *errout);
/* Frees a KUBE_FLAG_STRINGS array (each string and the array). NULL ok. */
void kube_flag_strings_free(char **v);
/* The number of strings in a KUBE_FLAG_STRINGS array (0 for NULL). */
int kube_flag_strings_len(char *const *v);
/* Prints set->head and a line per flag, then the -h, --help line. */
void kube_flags_usage(const struct kube_flag_set *set, FILE *f);

#endif
