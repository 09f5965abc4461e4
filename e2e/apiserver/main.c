/* main.c — bin/schedkit-apiserver: flag parsing around apis_server_start; runs until SIGINT
 * or SIGTERM, then stops cleanly. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "e2e/apiserver/server.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: schedkit-apiserver [flags]\n"
		"  --bind-address ADDR           listen address (default 127.0.0.1)\n"
		"  --port N                      port, 0 picks a free one (default 6443)\n"
		"  --write-kubeconfig PATH       write a kubeconfig once listening\n"
		"  --token T                     require Authorization: Bearer T\n"
		"  --tls                         serve HTTPS with a generated CA (in the kubeconfig)\n"
		"  --max-body-bytes N            request body limit (default 3145728)\n"
		"  --history N                   retained watch events (default 20000)\n"
		"  --workers N                   minimum worker threads (default 4; grows for watches)\n"
		"  --simulate-kubelet            bound pods on existing nodes become Running and Ready\n"
		"  --kubelet-delay-ms N          delay of the simulated kubelet (default 100)\n"
		"  --fault-seed N                seed for fault injection\n"
		"  --fault-error-rate F          fail this fraction of API requests (500 or 429)\n"
		"  --fault-close-watch-every S   close watch streams after S seconds\n"
		"  --fault-delay-ms N            delay every API response\n"
		"  --v N                         log verbosity\n");
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 6443;
	enum { BIND = 1, PORT, KCFG, TOKEN, TLS, MAXB, HIST, WORKERS, KUBELET, KDELAY, FSEED, FRATE, FCLOSE, FDELAY, VERB, HELP };
	static const struct option longs[] = {
		{ "bind-address", required_argument, 0, BIND },
		{ "port", required_argument, 0, PORT },
		{ "write-kubeconfig", required_argument, 0, KCFG },
		{ "token", required_argument, 0, TOKEN },
		{ "tls", no_argument, 0, TLS },
		{ "max-body-bytes", required_argument, 0, MAXB },
		{ "history", required_argument, 0, HIST },
		{ "workers", required_argument, 0, WORKERS },
		{ "simulate-kubelet", no_argument, 0, KUBELET },
		{ "kubelet-delay-ms", required_argument, 0, KDELAY },
		{ "fault-seed", required_argument, 0, FSEED },
		{ "fault-error-rate", required_argument, 0, FRATE },
		{ "fault-close-watch-every", required_argument, 0, FCLOSE },
		{ "fault-delay-ms", required_argument, 0, FDELAY },
		{ "v", required_argument, 0, VERB },
		{ "help", no_argument, 0, HELP },
		{ 0, 0, 0, 0 },
	};
	int c;
	long v;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case BIND: o.bind_address = optarg; break;
		case PORT:
			if (!parse_long(optarg, 0, 65535, &v))
				goto bad;
			o.port = (int)v;
			break;
		case KCFG: o.kubeconfig_path = optarg; break;
		case TOKEN: o.token = optarg; break;
		case TLS: o.tls = true; break;
		case MAXB:
			if (!parse_long(optarg, 1, 1L << 30, &v))
				goto bad;
			o.max_body_bytes = (size_t)v;
			break;
		case HIST:
			if (!parse_long(optarg, 1, 10000000, &v))
				goto bad;
			o.history_events = (int)v;
			break;
		case WORKERS:
			if (!parse_long(optarg, 1, 1024, &v))
				goto bad;
			o.workers = (int)v;
			break;
		case KUBELET: o.simulate_kubelet = true; break;
		case KDELAY:
			if (!parse_long(optarg, 1, 3600000, &v))
				goto bad;
			o.kubelet_delay_ms = (int)v;
			break;
		case FSEED: o.fault_seed = strtoul(optarg, NULL, 10); break;
		case FRATE: {
			char *end;
			double d = strtod(optarg, &end);
			if (*end || d < 0 || d > 1)
				goto bad;
			o.fault_error_rate = d;
			break;
		}
		case FCLOSE:
			if (!parse_long(optarg, 0, 86400, &v))
				goto bad;
			o.fault_close_watch_every = (int)v;
			break;
		case FDELAY:
			if (!parse_long(optarg, 0, 600000, &v))
				goto bad;
			o.fault_delay_ms = (int)v;
			break;
		case VERB:
			if (!parse_long(optarg, 0, 10, &v))
				goto bad;
			kube_log_set_verbosity((int)v);
			break;
		case HELP: usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind < argc)
		goto bad;
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
bad:
	usage(stderr);
	return 2;
}
