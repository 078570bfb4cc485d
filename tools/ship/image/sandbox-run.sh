#!/usr/bin/env bash
# Runs a command from an unpacked image root filesystem the way the Deployment's securityContext runs the container,
# without a container runtime (root needed for the namespace and mounts; the host network is shared):
#   - a private mount namespace; the root filesystem bind-mounted and remounted read-only;
#   - /tmp a fresh tmpfs (the Deployment's emptyDir), seeded with the files of <tmp-seed-dir> owned by 65532
#     (the kubeconfig, the webhook certificates that the Secret volume provides in a cluster);
#   - /proc, and a read-only /dev with only null, zero, random and urandom;
#   - user and group 65532, no supplementary groups, no capabilities (all are lost with the switch from uid 0), no new
#     privileges, and a bounding set reduced to what chroot needs to switch.
# What it does not do, unlike a runtime: no PID, network, IPC or user namespace, no cgroup limits, no seccomp filter.
# Usage: tools/ship/image/sandbox-run.sh <rootfs> <tmp-seed-dir> <command> [args...]
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 <rootfs> <tmp-seed-dir> <command> [args...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (mount namespace, bind mounts, chroot)" >&2; exit 2; }
rootfs=$(readlink -f "$1")
seed=$(readlink -f "$2")
shift 2
[ -x "$rootfs/usr/bin/node" ] || { echo "$0: $rootfs is not an unpacked image of @tally-ipam/ship (no /usr/bin/node)" >&2; exit 2; }

exec unshare --mount --propagation private -- /bin/sh -ec '
  root=$1 seed=$2
  shift 2
  mount --bind "$root" "$root"
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mount -t tmpfs -o mode=0755,nosuid,noexec,size=64k tmpfs "$root/dev"
  for device in null zero random urandom; do
    touch "$root/dev/$device"
    mount --bind "/dev/$device" "$root/dev/$device"
  done
  mount -o remount,ro,nosuid,noexec "$root/dev"
  mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs "$root/tmp"
  cp -a "$seed/." "$root/tmp/"
  chown -R 65532:65532 "$root/tmp"
  chmod 1777 "$root/tmp"
  mount -o remount,bind,ro,nosuid,nodev "$root"
  exec setpriv --no-new-privs --bounding-set=-all,+sys_chroot,+setuid,+setgid \
    chroot --userspec=65532:65532 --groups= "$root" "$@"
' sandbox "$rootfs" "$seed" "$@"
