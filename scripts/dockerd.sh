#!/usr/bin/env bash
# Starts or stops a Docker engine for the container tests, on a machine with no init system.
#
#   scripts/dockerd.sh start   # a dockerd when none answers (no bridge: every build and container uses
#                              # --network host, so nothing but loopback and the package registries is used)
#   scripts/dockerd.sh stop    # stops only a dockerd this script started
#
# The engine is Debian's docker.io. Started without a bridge, it needs no iptables rules and creates no
# network interface, so it runs where the kernel or the sandbox allows neither.
set -euo pipefail

state_dir=${POOLSCOPE_DOCKERD_STATE:-/run/poolscope-dockerd}
pid_file="$state_dir/dockerd.pid"
log_file="$state_dir/dockerd.log"
# Debian's client (20.10) builds with its own BuildKit; a newer client without the buildx plugin cannot.
docker_bin=${DOCKER:-$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker || true)}

answers() { [ -n "$docker_bin" ] && "$docker_bin" info >/dev/null 2>&1; }

case "${1:-}" in
  start)
    if answers; then
      echo "dockerd: an engine already answers; using it"
      exit 0
    fi
    command -v dockerd >/dev/null 2>&1 || { echo "dockerd: not installed (apt-get install docker.io)" >&2; exit 1; }
    mkdir -p "$state_dir"
    # setsid: the engine outlives this shell; its pid is kept so that `stop` ends it and nothing else.
    setsid dockerd --bridge=none --iptables=false --ip-masq=false >"$log_file" 2>&1 </dev/null &
    echo $! >"$pid_file"
    for _ in $(seq 1 60); do
      if answers; then
        echo "dockerd: started (pid $(cat "$pid_file"), log $log_file)"
        exit 0
      fi
      if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then break; fi
      sleep 0.5
    done
    echo "dockerd: did not answer within 30 s; its log:" >&2
    tail -20 "$log_file" >&2 || true
    exit 1
    ;;
  stop)
    [ -f "$pid_file" ] || { echo "dockerd: none started by this script"; exit 0; }
    pid=$(cat "$pid_file")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$pid_file"
    echo "dockerd: stopped (pid $pid)"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
