#!/usr/bin/env bash
# What a CI runner image would provide: a Docker engine for the kind lane.
#
#   .ci/docker-engine.sh start   installs Debian's docker.io (plus debootstrap and jq) when dockerd is missing, and
#                                starts dockerd unless an engine already answers; prints one line saying which
#   .ci/docker-engine.sh stop    stops only what `start` started (nothing when the engine was already there)
#   .ci/docker-engine.sh status  says whether an engine answers and whether this script started it
#
# Two things differ from a stock dockerd, both for these VMs:
# - The capability bounding set here lacks CAP_SYS_RESOURCE, and a privileged container asks for every capability,
#   so runc fails with "unable to apply caps: operation not permitted". dockerd's default runtime is a small wrapper
#   that removes that one capability from the OCI spec (and from `runc exec`'s process file) before calling runc.
# - Containers may reach each other and nothing else: forwarding out of any Docker bridge to another interface is
#   dropped (IPv4 in DOCKER-USER, IPv6 in FORWARD), and new connections from a bridge to the host itself are dropped
#   (INPUT). Docker's embedded DNS forwards from inside the container's network namespace, so its upstream queries
#   hit the same drop. Published ports still work from the host's loopback (docker-proxy connects from the host).
set -euo pipefail

state_dir=${TALLY_DOCKER_STATE_DIR:-/var/run/tally-docker-engine}
pid_file=$state_dir/dockerd.pid
log_file=$state_dir/dockerd.log
wrapper=$state_dir/runc-without-sys-resource
chain=TALLY-ISOLATION
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

say() { echo "docker-engine: $*"; }

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

started_here() { [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; }

install_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v jq >/dev/null || missing+=(jq)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} with apt"
  $sudo apt-get update -qq
  # policy-rc.d or no systemd: the package's own service is not started; this script starts dockerd itself.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

write_runc_wrapper() {
  $sudo mkdir -p "$state_dir"
  $sudo tee "$wrapper" >/dev/null <<'EOF'
#!/bin/sh
# Removes CAP_SYS_RESOURCE (absent from this machine's bounding set) from the OCI spec before runc applies it.
set -e
command=
bundle=.
process=
previous=
for argument in "$@"; do
  case "$previous" in
    --bundle | -b) bundle=$argument ;;
    --process | -p) process=$argument ;;
  esac
  case "$argument" in
    --bundle=*) bundle=${argument#--bundle=} ;;
    --process=*) process=${argument#--process=} ;;
    create | run | exec) [ -z "$command" ] && command=$argument ;;
  esac
  previous=$argument
done
drop='with_entries(.value |= if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end)'
rewrite() {
  jq -c "$1" "$2" >"$2.tally-tmp"
  mv "$2.tally-tmp" "$2"
}
case "$command" in
  create | run) [ -f "$bundle/config.json" ] && rewrite "if .process.capabilities then .process.capabilities |= $drop else . end" "$bundle/config.json" ;;
  exec) [ -n "$process" ] && [ -f "$process" ] && rewrite "if .capabilities then .capabilities |= $drop else . end" "$process" ;;
esac
exec runc "$@"
EOF
  $sudo chmod 0755 "$wrapper"
}

# Rules live in one chain of our own per table, so `stop` removes exactly what `start` added.
add_isolation_rules() {
  local tool
  for tool in iptables ip6tables; do
    $sudo "$tool" -N "$chain" 2>/dev/null || $sudo "$tool" -F "$chain"
    $sudo "$tool" -A "$chain" -o docker0 -j RETURN
    $sudo "$tool" -A "$chain" -o br-+ -j RETURN
    $sudo "$tool" -A "$chain" -j DROP
    $sudo "$tool" -N "$chain-INPUT" 2>/dev/null || $sudo "$tool" -F "$chain-INPUT"
    $sudo "$tool" -A "$chain-INPUT" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
    $sudo "$tool" -A "$chain-INPUT" -j DROP
    for bridge in docker0 br-+; do
      $sudo "$tool" -C INPUT -i "$bridge" -j "$chain-INPUT" 2>/dev/null || $sudo "$tool" -I INPUT -i "$bridge" -j "$chain-INPUT"
    done
  done
  # IPv4: dockerd keeps DOCKER-USER first in FORWARD and never flushes it.
  for bridge in docker0 br-+; do
    $sudo iptables -C DOCKER-USER -i "$bridge" -j "$chain" 2>/dev/null || $sudo iptables -I DOCKER-USER -i "$bridge" -j "$chain"
    # IPv6: dockerd 20.10 writes no ip6tables rules, so FORWARD is ours.
    $sudo ip6tables -C FORWARD -i "$bridge" -j "$chain" 2>/dev/null || $sudo ip6tables -I FORWARD -i "$bridge" -j "$chain"
  done
}

remove_isolation_rules() {
  local tool bridge
  for bridge in docker0 br-+; do
    while $sudo iptables -D DOCKER-USER -i "$bridge" -j "$chain" 2>/dev/null; do :; done
    while $sudo ip6tables -D FORWARD -i "$bridge" -j "$chain" 2>/dev/null; do :; done
    for tool in iptables ip6tables; do
      while $sudo "$tool" -D INPUT -i "$bridge" -j "$chain-INPUT" 2>/dev/null; do :; done
    done
  done
  for tool in iptables ip6tables; do
    for c in "$chain" "$chain-INPUT"; do
      $sudo "$tool" -F "$c" 2>/dev/null || true
      $sudo "$tool" -X "$c" 2>/dev/null || true
    done
  done
}

start() {
  if engine_answers; then
    if started_here; then say "dockerd (pid $(cat "$pid_file")) started earlier by this script answers"; else say "an engine already answers; nothing started"; fi
    return 0
  fi
  install_packages
  write_runc_wrapper
  say "starting dockerd (log: $log_file)"
  # --ip-masq=false: no masquerade for the default bridge (kind asks for it on its own network; the drop rules above
  # stop that traffic anyway). The host's iptables rules are written by dockerd itself.
  $sudo sh -c "nohup dockerd --pidfile '$pid_file' --add-runtime tally-runc='$wrapper' --default-runtime tally-runc \
    --ip-masq=false >'$log_file' 2>&1 &"
  local waited=0
  until engine_answers; do
    if [ $waited -ge 90 ]; then
      say "dockerd did not answer within 90 s; last log lines:"
      tail -n 20 "$log_file" || true
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  add_isolation_rules
  say "dockerd (pid $(cat "$pid_file")) answers after ${waited}s; containers reach only each other"
}

stop() {
  if ! [ -f "$pid_file" ]; then
    say "nothing to stop (this script did not start an engine)"
    return 0
  fi
  local pid
  pid=$(cat "$pid_file")
  remove_isolation_rules
  if kill -0 "$pid" 2>/dev/null; then
    $sudo kill -TERM "$pid"
    local waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 60 ]; do
      sleep 1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "dockerd (pid $pid) still running after 60 s; killing it"
      $sudo kill -KILL "$pid" || true
    fi
  fi
  $sudo rm -f "$pid_file"
  say "stopped dockerd (pid $pid)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if engine_answers; then
      if started_here; then say "answers (started by this script, pid $(cat "$pid_file"))"; else say "answers (not started by this script)"; fi
    else
      say "no engine answers"
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
