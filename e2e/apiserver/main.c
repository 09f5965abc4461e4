/* main.c — bin/schedkit-apiserver: flag parsing around apis_server_start; runs until SIGINT
 * or SIGTERM, then stops cleanly. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/flags.h"
#include "kube/log.h"
#include "kube/version.h"
#include "e2e/apiserver/server.h"

/* What the flags set; copied into struct apis_opts (whose fields have other types) after. */
struct cli {
	char *bind_address, *kubeconfig_path, *token, *fault_error_rate, *token_auth_file, *authorization_mode;
	bool tls, simulate_kubelet;
	int port, max_body_bytes, history, workers, kubelet_delay_ms, fault_seed, fault_close_watch_every,
	    fault_delay_ms, verbosity;
};

#define OFF(f) offsetof(struct cli, f)
static const struct kube_flag flags[] = {
	{ "bind-address", 0, KUBE_FLAG_STRING, OFF(bind_address), .arg = "ADDR", .help = "listen address (default 127.0.0.1)" },
	{ "port", 0, KUBE_FLAG_INT, OFF(port), 0, 65535, .arg = "N", .help = "port, 0 picks a free one (default 6443)" },
	{ "write-kubeconfig", 0, KUBE_FLAG_STRING, OFF(kubeconfig_path), .arg = "PATH",
	  .help = "write a kubeconfig once listening" },
	{ "token", 0, KUBE_FLAG_STRING, OFF(token), .arg = "T", .help = "require Authorization: Bearer T" },
	{ "token-auth-file", 0, KUBE_FLAG_STRING, OFF(token_auth_file), .arg = "FILE",
	  .help = "more tokens: CSV lines token,user,uid[,\"group1,group2\"]" },
	{ "authorization-mode", 0, KUBE_FLAG_STRING, OFF(authorization_mode), .arg = "MODE",
	  .help = "AlwaysAllow (default) or RBAC: enforce the RBAC objects" },
	{ "tls", 0, KUBE_FLAG_BOOL, OFF(tls), .help = "serve HTTPS with a generated CA (in the kubeconfig)" },
	{ "max-body-bytes", 0, KUBE_FLAG_INT, OFF(max_body_bytes), 1, 1L << 30, .arg = "N",
	  .help = "request body limit (default 3145728)" },
	{ "history", 0, KUBE_FLAG_INT, OFF(history), 1, 10000000, .arg = "N", .help = "retained watch events (default 20000)" },
	{ "workers", 0, KUBE_FLAG_INT, OFF(workers), 1, 1024, .arg = "N",
	  .help = "minimum worker threads (default 4; grows for watches)" },
	{ "simulate-kubelet", 0, KUBE_FLAG_BOOL, OFF(simulate_kubelet),
	  .help = "bound pods on existing nodes become Running and Ready" },
	{ "kubelet-delay-ms", 0, KUBE_FLAG_INT, OFF(kubelet_delay_ms), 1, 3600000, .arg = "N",
	  .help = "delay of the simulated kubelet (default 100)" },
	{ "fault-seed", 0, KUBE_FLAG_INT, OFF(fault_seed), 0, 2147483647, .arg = "N", .help = "seed for fault injection" },
	{ "fault-error-rate", 0, KUBE_FLAG_STRING, OFF(fault_error_rate), .arg = "F",
	  .help = "fail this fraction of API requests (500 or 429)" },
	{ "fault-close-watch-every", 0, KUBE_FLAG_INT, OFF(fault_close_watch_every), 0, 86400, .arg = "S",
	  .help = "close watch streams after S seconds" },
	{ "fault-delay-ms", 0, KUBE_FLAG_INT, OFF(fault_delay_ms), 0, 600000, .arg = "N", .help = "delay every API response" },
	{ "v", 'v', KUBE_FLAG_INT, OFF(verbosity), 0, 10, .arg = "N", .help = "log verbosity" },
};

static const struct kube_flag_set flag_set = {
	.prog = "schedkit-apiserver",
	.head = "Usage: schedkit-apiserver [flags]\n",
	.flags = flags,
	.nflags = sizeof flags / sizeof flags[0],
	.column = 32,
	.help_help = "this help",
	.version = "schedkit-apiserver v" SCHEDKIT_VERSION " (serves the Kubernetes v1.32 API)",
};

/* 0 and *o, or 2 with the error printed. */
static int parse_args(int argc, char **argv, struct apis_opts *o)
{
	struct cli c = { .port = 6443, .verbosity = -1 };
	int rc = kube_flags_parse(&flag_set, argc, argv, &c, stdout, stderr);
	if (rc)
		return rc;
	double rate = 0;
	if (c.fault_error_rate) {
		char *end;
		rate = strtod(c.fault_error_rate, &end);
		if (!*c.fault_error_rate || *end || rate < 0 || rate > 1) {
			fprintf(stderr, "Error: invalid argument \"%s\" for \"--fault-error-rate\" flag: must be between 0 and 1\n",
				c.fault_error_rate);
			return 2;
		}
	}
	if (c.authorization_mode && strcmp(c.authorization_mode, "AlwaysAllow") && strcmp(c.authorization_mode, "RBAC")) {
		fprintf(stderr, "Error: invalid argument \"%s\" for \"--authorization-mode\" flag: AlwaysAllow or RBAC\n",
			c.authorization_mode);
		return 2;
	}
	if (c.verbosity >= 0)
		kube_log_set_verbosity(c.verbosity);
	*o = (struct apis_opts)APIS_OPTS_DEFAULT;
	if (c.bind_address)
		o->bind_address = c.bind_address;
	o->port = c.port;
	o->kubeconfig_path = c.kubeconfig_path;
	o->token = c.token;
	o->token_auth_file = c.token_auth_file;
	o->rbac = c.authorization_mode && !strcmp(c.authorization_mode, "RBAC");
	o->tls = c.tls;
	o->max_body_bytes = (size_t)c.max_body_bytes;
	o->history_events = c.history;
	o->workers = c.workers;
	o->simulate_kubelet = c.simulate_kubelet;
	o->kubelet_delay_ms = c.kubelet_delay_ms;
	o->fault_seed = (unsigned long)c.fault_seed;
	o->fault_error_rate = rate;
	o->fault_close_watch_every = c.fault_close_watch_every;
	o->fault_delay_ms = c.fault_delay_ms;
	return 0;
}

int main(int argc, char **argv)
{
	struct apis_opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : 2;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct apis_server *s;
	if (apis_server_start(&o, &s) < 0)
		return 1;
	fprintf(stderr, "schedkit-apiserver listening on %s\n", apis_server_url(s));
	int sig;
	sigwait(&set, &sig);
	apis_server_stop(s);
	return 0;
}
