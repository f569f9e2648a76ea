#!/usr/bin/env bash
# Copyright ©2026 The repro Authors. All rights reserved.
# Use of this source code is governed by a BSD-style licence
# that can be found in the LICENSE file.
#
# slurm-local.sh brings a one-node Slurm cluster (munged, slurmctld and
# slurmd from Debian's slurm-wlm) up on this machine, or down again:
#
#	scripts/slurm-local.sh install   # apt-get install slurm-wlm munge (root)
#	scripts/slurm-local.sh up        # write the config, start the daemons
#	scripts/slurm-local.sh status    # sinfo
#	scripts/slurm-local.sh down      # stop the daemons this script started
#
# It must run as root (slurmd runs the jobs as the submitting user). The
# node has every CPU of the machine and one partition, debug. State, logs
# and pid files live under SLURM_LOCAL_DIR (/var/tmp/repro-slurm). The
# configuration uses proctrack/linuxproc and task/none, which work in
# containers where cgroups are not delegated; there is no accounting
# daemon, so sacct does not work (repro reads job states from squeue).
set -euo pipefail

dir=${SLURM_LOCAL_DIR:-/var/tmp/repro-slurm}
conf=/etc/slurm/slurm.conf

die() { echo "slurm-local: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

install() {
	need_root
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y slurm-wlm munge >/dev/null || { apt-get update >/dev/null && apt-get install -y slurm-wlm munge >/dev/null; }
}

stop_pid() { # name pidfile
	local p
	[ -f "$2" ] || return 0
	p=$(cat "$2")
	if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
		kill "$p"
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$p" 2>/dev/null && kill -9 "$p"
	fi
	rm -f "$2"
}

up() {
	need_root
	command -v slurmctld >/dev/null || die "slurmctld not found: run '$0 install' first"
	command -v munged >/dev/null || die "munged not found: run '$0 install' first"
	local host cpus mem
	host=$(hostname -s)
	cpus=$(nproc)
	# RealMemory in MiB: three quarters of the machine's memory.
	mem=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 3 / 4}' /proc/meminfo)
	mkdir -p "$dir"/{state,spool,log} /etc/munge /etc/slurm /run/munge /var/log/munge /var/lib/munge
	if [ ! -s /etc/munge/munge.key ]; then
		head -c 1024 /dev/urandom >/etc/munge/munge.key
	fi
	chown -R munge: /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
	chmod 400 /etc/munge/munge.key
	cat >"$conf" <<CONF
# Written by scripts/slurm-local.sh: a one-node cluster for tests.
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=600
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	if ! pgrep -x munged >/dev/null; then
		su -s /bin/sh munge -c "/usr/sbin/munged --force" || die "munged did not start"
	fi
	[ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null || slurmctld
	for _ in $(seq 50); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
	[ -f "$dir/slurmd.pid" ] && kill -0 "$(cat "$dir/slurmd.pid")" 2>/dev/null || slurmd
	for _ in $(seq 100); do
		if sinfo -h -o %t 2>/dev/null | grep -qxE 'idle|mix|alloc'; then
			sinfo
			return 0
		fi
		sleep 0.2
	done
	sinfo || true
	die "the node did not come up; see $dir/log"
}

down() {
	need_root
	stop_pid slurmd "$dir/slurmd.pid"
	stop_pid slurmctld "$dir/slurmctld.pid"
	local p
	p=$(cat /run/munge/munged.pid 2>/dev/null || true)
	if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
		kill "$p"
	fi
}

case "${1:-}" in
install) install ;;
up) up ;;
down) down ;;
status) sinfo ;;
*) echo "usage: $0 install|up|status|down" >&2; exit 2 ;;
esac
