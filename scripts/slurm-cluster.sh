#!/usr/bin/env bash
# A real single-node Slurm cluster (munged, MariaDB, slurmdbd, slurmctld, slurmd) on this
# machine, for CI and for measuring Slurm's per-job overhead. Needs root; no systemd and no
# cgroups (proctrack/linuxproc, task/none).
#
#   scripts/slurm-cluster.sh install     # apt-get install the missing Debian packages
#   scripts/slurm-cluster.sh start DIR   # start it all, every file under DIR; prints the env
#   scripts/slurm-cluster.sh stop DIR    # stop what `start DIR` started, by its recorded PIDs
#   scripts/slurm-cluster.sh status DIR  # which of its daemons are running
#
#   eval "$(scripts/slurm-cluster.sh start /tmp/slurm)"   # exports SLURM_CONF and PATH
#   sbatch --wrap hostname; squeue; sacct -X
#   scripts/slurm-cluster.sh stop /tmp/slurm
#
# `start` waits until the node is idle in `sinfo` and `sacct` answers. Every daemon runs in
# the foreground in its own session, with its PID in DIR/pids/NAME.pid and its output in
# DIR/log/NAME.out. The clients find the cluster through SLURM_CONF=DIR/etc/slurm.conf
# alone: munge's socket is in slurm.conf (AuthInfo for slurmctld and slurmd,
# AccountingStoragePass for slurmdbd). DIR/bin, first in the PATH that `start` prints, has
# wrappers of the clients that set SLURM_CONF when a program removed it from the
# environment. The ports are free ones chosen at each start. The cluster is called
# `depthpose`, its one partition `debug`, its one node `hostname -s` with all CPUs and 3/4
# of the memory (SLURM_CLUSTER_MEM_MB sets it); jobs without --mem get 1024 MB per CPU.
# The scheduler keeps Slurm's defaults, as a site would: a job starts up to 3 s after it
# is submitted or after a job ends (batch_sched_delay); SLURM_CLUSTER_SCHEDULER_PARAMETERS
# =batch_sched_delay=0 makes that ~1 s.
# If `start` fails, it says which daemon, shows the end of its log and stops what it started.
set -euo pipefail

PACKAGES=(slurm-wlm munge mariadb-server slurmdbd)
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)   # in start order; stopped in reverse
CLUSTER=depthpose
PARTITION=debug

exec 3>&2   # messages go here even from checks whose own output is silenced
say() { echo "slurm-cluster: $*" >&3; }
fail() { say "error: $*"; exit 1; }

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

# --- install ------------------------------------------------------------------------------

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

cmd_install() {
    [ "$(id -u)" -eq 0 ] || fail "install needs root"
    local missing=() p
    for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
    if [ ${#missing[@]} -eq 0 ]; then
        say "already installed: ${PACKAGES[*]}"
        return
    fi
    # The packages' scripts would start the daemons through invoke-rc.d; on a machine whose
    # /usr/sbin/policy-rc.d forbids that (containers) they don't, elsewhere they may.
    [ -x /usr/sbin/policy-rc.d ] || say "note: no /usr/sbin/policy-rc.d: the packages may start their own system daemons"
    local log
    log=$(mktemp /tmp/slurm-cluster-apt.XXXXXX)
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}")
    say "installing ${missing[*]}"
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
        apt-get update -qq >>"$log" 2>&1 || { tail -20 "$log" >&2; fail "apt-get update failed"; }
    fi
    if ! "${apt[@]}" >>"$log" 2>&1; then
        say "apt-get install failed; updating the package lists and trying again"
        if ! { apt-get update -qq >>"$log" 2>&1 && "${apt[@]}" >>"$log" 2>&1; }; then
            tail -30 "$log" >&2
            fail "apt-get install ${missing[*]} failed (log: $log)"
        fi
    fi
    rm -f "$log"
    say "installed ${missing[*]}"
}

# --- helpers ------------------------------------------------------------------------------

# Sets the cluster's paths from DIR.
layout() {
    [ -n "${1:-}" ] || usage
    case "$1" in /*) DIR=$1 ;; *) DIR=$PWD/$1 ;; esac
    DIR=${DIR%/}
    ETC=$DIR/etc PIDS=$DIR/pids LOG=$DIR/log RUN=$DIR/run SPOOL=$DIR/spool
    MUNGE=$DIR/munge MYSQL_DATA=$DIR/mysql MYSQL_SOCK=$DIR/mysql.sock
    CONF=$ETC/slurm.conf
}

# The PID recorded for daemon $1 if that process is still running (not a zombie) and is
# that daemon; nothing otherwise.
live_pid() {
    local f=$PIDS/$1.pid pid state comm
    [ -s "$f" ] || return 1
    pid=$(cat "$f")
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    # comm is cut to 15 characters; mariadbd may show as mysqld
    case "$1:$comm" in
        mariadbd:mariadbd | mariadbd:mysqld | "$1:$1") echo "$pid" ;;
        *) return 1 ;;
    esac
}

# A TCP port nobody listens on or uses, not among those already taken by this start.
TAKEN_PORTS=" "
free_port() {
    local port i used
    used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u | tr '\n' ' ')
    for i in $(seq 1 200); do
        port=$((20000 + RANDOM % 30000))
        case " $used $TAKEN_PORTS" in *" $port "*) continue ;; esac
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            TAKEN_PORTS="$TAKEN_PORTS$port "
            echo "$port"
            return
        fi
    done
    fail "no free TCP port found"
}

# Runs daemon $1 (command in the rest) in the foreground of its own session, detached from
# this shell, cwd DIR, output to DIR/log/$1.out, its PID (the daemon's own: exec) in
# DIR/pids/$1.pid.
launch() {
    local name=$1
    shift
    rm -f "$PIDS/$name.pid"
    (
        cd "$DIR"
        export SLURM_CLUSTER_DIR=$DIR   # marks the daemons' and their slurmstepds' environment
        # shellcheck disable=SC2016 # expanded by that bash
        exec setsid bash -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' \
            "$PIDS/$name.pid" "$@" </dev/null >>"$LOG/$name.out" 2>&1 3>&-
    ) &
    local i
    for i in $(seq 1 100); do
        [ -s "$PIDS/$name.pid" ] && break
        sleep 0.05
    done
    [ -s "$PIDS/$name.pid" ] || died "$name" "did not start"
    STARTED+=("$name")
}

# The end of daemon $1's log (its own log file, else what it printed).
show_log() {
    local f=$LOG/$1.log
    [ -s "$f" ] || f=$LOG/$1.out
    [ -s "$f" ] || return 0
    say "--- last lines of $f:"
    tail -n 25 "$f" | sed 's/^/    /' >&3
}

# Daemon $1 failed ($2 says how): its log, then stop everything this start started.
died() {
    say "error: $1 $2"
    show_log "$1"
    if [ "$1" = slurmd ] && live_pid slurmctld >/dev/null; then
        say "the node as slurmctld sees it: $(sinfo -h -N -o '%N %T, reason: %E' 2>&1 | head -n 3)"
        show_log slurmctld
    fi
    say "stopping what was started"
    stop_daemons || true
    exit 1
}

# Waits up to $2 seconds until command "${@:3}" succeeds, checking daemon $1 stays alive.
wait_for() {
    local name=$1 timeout=$2 what=$3
    shift 3
    local end=$((SECONDS + timeout))
    while :; do
        "$@" >/dev/null 2>&1 && return 0
        live_pid "$name" >/dev/null || died "$name" "exited while waiting for: $what"
        [ "$SECONDS" -lt "$end" ] || died "$name" "not ready after ${timeout}s (waiting for: $what)"
        sleep 0.3
    done
}

munge_ok() { munge -n -S "$MUNGE/munge.socket.2" | unmunge -S "$MUNGE/munge.socket.2"; }
mysql_ok() { mariadb-admin --no-defaults --socket="$MYSQL_SOCK" --user=root ping; }
dbd_ok() { sacctmgr -n -P list cluster; }
ctld_ok() { scontrol ping | grep -q 'is UP'; }
# The node is idle; fails the start at once if slurmctld rejected it (inval, drain).
node_idle() {
    local state
    state=$(sinfo -h -N -n "$NODE" -o %T 2>/dev/null) || return 1
    case "$state" in
        idle) return 0 ;;
        inval* | drain* | fail*) died slurmd "registered, but slurmctld set the node $state" ;;
    esac
    return 1
}
sacct_ok() { sacct -n -X -a -S now-1minutes; }

# --- start --------------------------------------------------------------------------------

cmd_start() {
    layout "${1:-}"
    [ "$(id -u)" -eq 0 ] || fail "start needs root"
    local p d
    for p in "${PACKAGES[@]}"; do installed "$p" || fail "$p is not installed: run '$0 install'"; done
    for d in "${DAEMONS[@]}"; do
        if pid=$(live_pid "$d"); then fail "$d of $DIR is already running (pid $pid): '$0 stop $DIR' first"; fi
    done

    local t0=$SECONDS
    mkdir -p "$DIR"
    chmod 755 "$DIR"
    mkdir -p "$ETC" "$PIDS" "$LOG" "$RUN" "$SPOOL/slurmctld" "$SPOOL/slurmd" "$MUNGE" "$DIR/tmp"
    chmod 755 "$MUNGE"   # munged wants its socket's folder open to all, and not writable
    STARTED=()
    export SLURM_CONF=$CONF
    # The daemons and clients started here see only this cluster.
    unset SLURM_JOB_ID SLURM_JOBID SLURM_CLUSTERS SLURM_TIME_FORMAT || true

    NODE=$(hostname -s)
    # the node's CPU layout as slurmd sees it (a layout that differs would drain the node)
    local hw cpus layout mem_mb
    hw=$(slurmd -C 2>/dev/null | head -n 1) || true
    cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
    layout=$(grep -o ' Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' <<<"$hw") || true
    [ -n "$cpus" ] || cpus=$(nproc)
    mem_mb=${SLURM_CLUSTER_MEM_MB:-$(awk '/^MemTotal:/ {print int($2 / 1024 * 3 / 4)}' /proc/meminfo)}
    local ctld_port slurmd_port dbd_port mysql_port
    ctld_port=$(free_port) slurmd_port=$(free_port) dbd_port=$(free_port) mysql_port=$(free_port)
    local socket=$MUNGE/munge.socket.2

    # munge: a key of this cluster's own
    if [ ! -s "$MUNGE/munge.key" ]; then
        mungekey --create --keyfile="$MUNGE/munge.key" 2>/dev/null ||
            dd if=/dev/urandom of="$MUNGE/munge.key" bs=1024 count=1 status=none
    fi
    chown root:root "$MUNGE/munge.key"
    chmod 0400 "$MUNGE/munge.key"
    launch munged munged --foreground --socket="$socket" --key-file="$MUNGE/munge.key" \
        --log-file="$LOG/munged.log" --pid-file="$RUN/munged.pid" --seed-file="$MUNGE/munged.seed"
    wait_for munged 15 "a munge credential" munge_ok

    # MariaDB for slurmdbd: a database and a password user `slurm` over TCP on 127.0.0.1
    if [ ! -d "$MYSQL_DATA/mysql" ]; then
        rm -rf "$MYSQL_DATA"
        mkdir -p "$MYSQL_DATA"
        mariadb-install-db --no-defaults --datadir="$MYSQL_DATA" --user=root \
            --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve \
            >"$LOG/mariadb-install-db.out" 2>&1 ||
            { say "error: mariadb-install-db failed"; LOG=$LOG show_log mariadb-install-db; stop_daemons || true; exit 1; }
    fi
    launch mariadbd mariadbd --no-defaults --user=root --datadir="$MYSQL_DATA" \
        --socket="$MYSQL_SOCK" --port="$mysql_port" --bind-address=127.0.0.1 --skip-name-resolve \
        --pid-file="$RUN/mariadbd.pid" --log-error="$LOG/mariadbd.log" --tmpdir="$DIR/tmp" \
        --innodb-buffer-pool-size=128M --innodb-log-file-size=64M --innodb-lock-wait-timeout=900 \
        --max-allowed-packet=64M
    wait_for mariadbd 90 "mariadb-admin ping" mysql_ok
    local pass
    pass=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    mariadb --no-defaults --socket="$MYSQL_SOCK" --user=root >"$LOG/mariadb-setup.out" 2>&1 <<SQL ||
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'slurm'@'localhost';
ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
        died mariadbd "rejected the setup of user slurm (see $LOG/mariadb-setup.out)"

    : >"$ETC/plugstack.conf"
    cat >"$CONF" <<EOF
# Written by scripts/slurm-cluster.sh start $DIR
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$SPOOL/slurmctld
SlurmdSpoolDir=$SPOOL/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$ETC/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
SchedulerType=sched/backfill
${SLURM_CLUSTER_SCHEDULER_PARAMETERS:+SchedulerParameters=$SLURM_CLUSTER_SCHEDULER_PARAMETERS}
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=5
MailProg=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
# the munge socket for talking to slurmdbd (AuthInfo is not used there)
AccountingStoragePass=$socket
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
NodeName=$NODE NodeHostname=$NODE NodeAddr=127.0.0.1 CPUs=$cpus$layout RealMemory=$mem_mb State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    (
        umask 077
        cat >"$ETC/slurmdbd.conf" <<EOF
# Written by scripts/slurm-cluster.sh start $DIR
AuthType=auth/munge
AuthInfo=socket=$socket
DbdHost=localhost
DbdPort=$dbd_port
SlurmUser=root
LogFile=$LOG/slurmdbd.log
PidFile=$RUN/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$mysql_port
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
    )
    chown root:root "$ETC/slurmdbd.conf"
    chmod 0600 "$ETC/slurmdbd.conf"

    # slurmdbd finds slurmdbd.conf beside $SLURM_CONF
    launch slurmdbd slurmdbd -D
    wait_for slurmdbd 90 "sacctmgr list cluster" dbd_ok
    if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
        sacctmgr -i add cluster "$CLUSTER" >"$LOG/sacctmgr.out" 2>&1 ||
            died slurmdbd "refused 'sacctmgr add cluster $CLUSTER' ($(tail -n 3 "$LOG/sacctmgr.out"))"
    fi

    launch slurmctld slurmctld -D -f "$CONF"
    wait_for slurmctld 60 "scontrol ping" ctld_ok
    launch slurmd slurmd -D -f "$CONF" -N "$NODE"
    wait_for slurmd 60 "sinfo: node $NODE idle" node_idle
    wait_for slurmdbd 30 "sacct" sacct_ok

    # Client wrappers in DIR/bin that fall back on this cluster's slurm.conf: programs that
    # clean the environment of SLURM_* before calling a client (Snakemake's slurm-jobstep
    # plugin does, for its `srun` inside the job) would otherwise look for
    # /etc/slurm/slurm.conf.
    mkdir -p "$DIR/bin"
    local c
    for c in sacct sacctmgr salloc sattach sbatch sbcast scancel scontrol sdiag sinfo sprio \
        squeue sreport srun sshare sstat strigger; do
        [ -x "/usr/bin/$c" ] || continue
        # shellcheck disable=SC2016 # for the wrapper
        printf '#!/bin/sh\n# scripts/slurm-cluster.sh: the cluster in %s unless SLURM_CONF says otherwise\n: "${SLURM_CONF:=%s}"\nexport SLURM_CONF\nexec /usr/bin/%s "$@"\n' \
            "$DIR" "$CONF" "$c" >"$DIR/bin/$c"
        chmod 755 "$DIR/bin/$c"
    done
    # shellcheck disable=SC2016 # for whoever sources it
    printf 'export SLURM_CONF=%q\nexport PATH=%q:"$PATH"\n' "$CONF" "$DIR/bin" >"$DIR/env.sh"
    say "cluster $CLUSTER up in $((SECONDS - t0))s: node $NODE ($cpus CPUs, ${mem_mb} MB), partition $PARTITION, state in $DIR"
    say "use it with: source $DIR/env.sh   (or eval the lines below)"
    cat "$DIR/env.sh"
}

# --- stop ---------------------------------------------------------------------------------

# Processes this cluster left behind once its daemons stopped: the slurmstepd of jobs that
# did not end (slurmd detaches them; they hold slurmd's log open), any process with the
# daemons' mark SLURM_CLUSTER_DIR=DIR in its environment, and all their descendants (the
# jobs' processes).
cluster_strays() {
    local roots="" f pid
    while IFS= read -r f; do
        [ "$(readlink "$f" 2>/dev/null)" = "$LOG/slurmd.log" ] || continue
        pid=${f#/proc/}
        roots="$roots ${pid%%/*}"
    done < <(find /proc/[0-9]*/fd -maxdepth 1 -lname "$LOG/slurmd.log" 2>/dev/null)
    for f in /proc/[0-9]*/environ; do
        grep -qzxF "SLURM_CLUSTER_DIR=$DIR" "$f" 2>/dev/null || continue
        pid=${f#/proc/}
        roots="$roots ${pid%%/*}"
    done
    [ -n "$roots" ] || return 0
    ps -eo pid=,ppid=,stat= | awk -v roots="$roots" -v self=$$ '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2; state[$1] = $3 }
        END {
            do { changed = 0
                 for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
            } while (changed)
            for (p in keep) if ((p in state) && state[p] !~ /^Z/ && p != self) print p
        }'
}

# Waits up to $1 tenths of a second until none of PIDs "${@:2}" runs (zombies count as gone).
wait_gone() {
    local n=$1 p alive
    shift
    while :; do
        alive=0
        for p in "$@"; do
            local st
            st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
            [ "$st" = Z ] || [ "$st" = X ] || alive=1
        done
        [ "$alive" -eq 1 ] && [ "$n" -gt 0 ] || return "$alive"
        n=$((n - 1))
        sleep 0.1
    done
}

# Stops the daemons recorded in DIR/pids, last started first (TERM, then KILL after 20 s),
# cancelling the jobs first, then whatever their jobs left. Fails if anything still runs.
stop_daemons() {
    local d pid i left=0 stray all=""
    for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
        d=${DAEMONS[$i]}
        pid=$(live_pid "$d") || { rm -f "$PIDS/$d.pid"; continue; }
        all="$all $pid"
        if [ "$d" = slurmd ] && live_pid slurmctld >/dev/null && [ -n "$(squeue -h -o %A 2>/dev/null)" ]; then
            say "cancelling the jobs still queued or running"
            squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null || true
            for _ in $(seq 1 20); do
                [ -z "$(squeue -h -t PD,R,CG,S -o %A 2>/dev/null)" ] && break
                sleep 0.5
            done
        fi
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_gone 200 "$pid"; then
            say "$d (pid $pid) did not stop in 20s: killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        if wait_gone 50 "$pid"; then
            say "stopped $d (pid $pid)"
            rm -f "$PIDS/$d.pid"
        else
            say "error: $d (pid $pid) is still running"
            left=1
        fi
    done
    stray=$(cluster_strays | tr '\n' ' ')
    if [ -n "${stray// /}" ]; then
        say "killing what the jobs left running: $stray"
        # shellcheck disable=SC2086
        kill -TERM $stray 2>/dev/null || true
        # shellcheck disable=SC2086
        wait_gone 20 $stray || kill -KILL $stray 2>/dev/null || true
        # shellcheck disable=SC2086
        wait_gone 50 $stray || { say "error: still running: $stray"; left=1; }
        all="$all $stray"
    fi
    # The stopped processes are zombies until init reaps them; give it a moment so that
    # `pgrep` right after `stop` lists none of them.
    local z
    for _ in $(seq 1 100); do
        z=0
        for pid in $all; do [ -e "/proc/$pid" ] && z=1; done
        [ "$z" -eq 0 ] && break
        sleep 0.1
    done
    return $left
}

cmd_stop() {
    layout "${1:-}"
    [ -d "$PIDS" ] || { say "nothing to stop: no $PIDS"; return 0; }
    export SLURM_CONF=$CONF
    stop_daemons || fail "some daemons of $DIR are still running"
    say "stopped the cluster in $DIR"
}

cmd_status() {
    layout "${1:-}"
    local d pid down=0
    for d in "${DAEMONS[@]}"; do
        if pid=$(live_pid "$d"); then echo "$d running (pid $pid)"; else echo "$d not running"; down=1; fi
    done
    return $down
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start "${2:-}" ;;
    stop) cmd_stop "${2:-}" ;;
    status) cmd_status "${2:-}" ;;
    *) usage ;;
esac
