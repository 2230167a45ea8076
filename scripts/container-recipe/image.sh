# shellcheck shell=bash
# Running as the image would: the final stage's USER, ENV and CMD, read from the replay's $image; commands run in
# the app directory as that user with a clean environment; the server started in the background.
# Uses helper (the entry point), tmp (cleanup.sh), node_bin, app, data and image (build.sh); sets user, as_user,
# image_env, cmd, healthcheck, and with each start port, metrics_port, server_pid and signal_pid.
# shellcheck disable=SC2034,SC2154 # healthcheck is for runs.sh; globals of earlier parts, listed above

as_user=()

read_final_stage() {
  user=$(node "$helper" get "$image" user)
  mapfile -d '' -t image_env < <(node "$helper" get "$image" env)
  mapfile -d '' -t cmd < <(node "$helper" get "$image" cmd)
  mapfile -d '' -t healthcheck < <(node "$helper" get "$image" healthcheck.cmd)
  note "final stage: USER ${user:-root}, ENV ${image_env[*]}, CMD ${cmd[*]}"
}

# Run as the image's USER when this script is root; otherwise as whoever runs it. Sets as_user.
choose_service_user() {
  if [[ $(id -u) == 0 ]]; then
    [[ $user =~ ^([0-9]+):([0-9]+)$ ]] || die "USER must be numeric uid:gid (got '$user')"
    as_user=(setpriv --reuid="${BASH_REMATCH[1]}" --regid="${BASH_REMATCH[2]}" --clear-groups)
    mkdir -p "$tmp/home" && chown "$user" "$tmp/home"
  else
    mkdir -p "$tmp/home"
    warn "not root: running as $(id -un); the file-ownership checks are skipped"
  fi
}

# image_command [NAME=value...] command...: sets `run` to the command as the image would run it: USER, a clean
# environment with the image's ENV (DATA_DIR moved to the temporary directory), then the overrides (later win).
image_command() {
  local -a overrides=()
  while [[ $# -gt 0 && $1 == *=* ]]; do overrides+=("$1"); shift; done
  run=("${as_user[@]}" env -i PATH="$node_bin:/usr/local/bin:/usr/bin:/bin" HOME="$tmp/home"
    "${image_env[@]}" DATA_DIR="$data" "${overrides[@]}" "$@")
}
in_image() { image_command "$@" && (cd "$app" && exec "${run[@]}"); }

# start_server <log> [--tty] NAME=value...: starts the image's CMD; sets server_pid (the job to wait for),
# signal_pid (the server process), port and metrics_port.
start_server() {
  local log=$1 tty=
  shift
  if [[ ${1:-} == --tty ]]; then tty=1 && shift; fi
  port=$(node "$helper" port)
  metrics_port=$(node "$helper" port)
  # Loopback only on this machine; the image itself listens on 0.0.0.0.
  image_command HOST=127.0.0.1 METRICS_HOST=127.0.0.1 PORT="$port" METRICS_PORT="$metrics_port" "$@" "${cmd[@]}"
  if [[ -n $tty ]]; then
    start_under_terminal "$log"
  else
    # exec: the background job is the server itself, so that signals reach it and $! is its pid.
    (cd "$app" && exec "${run[@]}") >"$log" 2>&1 &
    server_pid=$!
    signal_pid=$server_pid
  fi
}

# A terminal on stdout, as `docker run -it` gives; script(1) -e exits with the server's exit code, and the
# server, its child, is the process to signal.
start_under_terminal() {
  local log=$1
  (cd "$app" && export SHELL=/bin/bash && exec script -qefc "exec $(printf '%q ' "${run[@]}")" /dev/null) \
    >"$log" 2>&1 </dev/null &
  server_pid=$!
  signal_pid=
  for _ in {1..50}; do
    signal_pid=$(ps -o pid= --ppid "$server_pid" | tr -d ' ') && [[ -n $signal_pid ]] && break
    sleep 0.1
  done
  [[ -n $signal_pid ]] || die "script(1) started no server"
}
