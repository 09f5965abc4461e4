#!/usr/bin/env bash
# A stand-in for what kubelet does with the schedkit-scheduler Deployment's pod template, for the
# demo and the e2e suites (no container runtime here), read from the rendered Deployment with
# kubectl -o json and jq:
#   - the init containers: an "image" is a local directory, IMAGES/<image with / and : mapped to _>/,
#     and `cp -f FILES... DIR/` copies IMAGES/<image>/FILE into the replica's plugin directory
#     (the emptyDir the Deployment mounts at DIR);
#   - the scheduler container's args, with the pod's paths mapped to local ones.
# Sourced (prints nothing on its own):
#   sk_image_dir IMAGES IMAGE                  the local directory standing for IMAGE
#   sk_deploy_plugins_hash NS                  the pod template's schedkit.io/plugins-hash ("" when none)
#   sk_deploy_run_init NS IMAGES PLUGIN_DIR    runs the init containers' copies into PLUGIN_DIR
#   sk_deploy_scheduler_args NS CONFIG_DIR PLUGIN_DIR
#                                              the scheduler container's args, one per line:
#                                              /etc/schedkit -> CONFIG_DIR, the SchedulerPlugin
#                                              emptyDir's --plugin-dir -> PLUGIN_DIR, the image's
#                                              --plugin-dir=/usr/lib/schedkit/plugins -> SK_IMAGE_PLUGIN_DIR
#                                              (default $SK_BIN/../lib/schedkit/plugins: what
#                                              `make install` puts in the image), --secure-port=0
# kubectl talks to $KUBECONFIG.

SK_DEPLOY_NAME=${SK_DEPLOY_NAME:-schedkit-scheduler}
SK_IMAGE_PLUGIN_DIR=${SK_IMAGE_PLUGIN_DIR:-${SK_BIN:+$SK_BIN/../lib/schedkit/plugins}}

sk_image_dir() { # IMAGES IMAGE
	printf '%s/%s\n' "$1" "$(printf '%s' "$2" | tr '/:' '__')"
}

sk__deploy_json() { # NS
	timeout 30 kubectl --request-timeout=20s -n "$1" get deployment "$SK_DEPLOY_NAME" -o json
}

sk_deploy_plugins_hash() { # NS
	sk__deploy_json "$1" | jq -r '.spec.template.metadata.annotations["schedkit.io/plugins-hash"] // ""'
}

# Each init container must be the copy the operator renders: command [cp, -f, FILES..., DIR/].
# Returns 1 (after saying why on stderr) on anything else, or when a file is not in its image.
sk_deploy_run_init() { # NS IMAGES PLUGIN_DIR
	local ns=$1 images=$2 dest=$3 json n i image src
	json=$(sk__deploy_json "$ns") || return 1
	mkdir -p "$dest" || return 1
	n=$(jq '.spec.template.spec.initContainers // [] | length' <<<"$json")
	for ((i = 0; i < n; i++)); do
		image=$(jq -r ".spec.template.spec.initContainers[$i].image" <<<"$json")
		mapfile -t cmd < <(jq -r ".spec.template.spec.initContainers[$i].command[]" <<<"$json")
		if [ "${#cmd[@]}" -lt 4 ] || [ "${cmd[0]}" != cp ] || [ "${cmd[1]}" != -f ]; then
			echo "init container $i: not a plugin copy: ${cmd[*]}" >&2
			return 1
		fi
		src=$(sk_image_dir "$images" "$image")
		local last=$((${#cmd[@]} - 1)) j
		for ((j = 2; j < last; j++)); do
			cp -f "$src${cmd[j]}" "$dest/" || { echo "image $image has no ${cmd[j]} ($src${cmd[j]})" >&2; return 1; }
		done
	done
}

sk_deploy_scheduler_args() { # NS CONFIG_DIR PLUGIN_DIR
	local ns=$1 cfg=$2 plugdir=$3
	sk__deploy_json "$ns" | jq -r '.spec.template.spec.containers[] | select(.name == "scheduler") | .args[]' |
		while IFS= read -r a; do
			case $a in
			--config=/etc/schedkit/*) printf -- '--config=%s/%s\n' "$cfg" "${a#--config=/etc/schedkit/}" ;;
			--plugin-dir=/usr/lib/schedkit/plugins) printf -- '--plugin-dir=%s\n' "$SK_IMAGE_PLUGIN_DIR" ;;
			--plugin-dir=*) printf -- '--plugin-dir=%s\n' "$plugdir" ;;
			--secure-port=*) printf -- '--secure-port=0\n' ;;
			*) printf '%s\n' "$a" ;;
			esac
		done
}
