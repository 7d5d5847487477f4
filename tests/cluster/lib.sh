# shellcheck shell=bash
# Shared by tests/cluster/{start,stop,rsh} and the cluster tests (sourced, not run).
# A test cluster's state folder holds:
#   created   one line per thing start made, in order: "holder PID", "pidfile FILE NAME",
#             "link IFNAME" (stop undoes them in reverse)
#   hosts     one line per host: NAME ADDRESS HOLDER-PID NET-NAMESPACE (e.g. net:[4026532250])
#   hostfile  Open MPI hostfile (the hosts' addresses, slots=S)
#   env       shell lines to source: the rsh agent, the MCA settings, SLURM_CONF
#   rsh       the rsh agent for Open MPI (plm_rsh_agent): rsh HOST COMMAND...

#   iproute   the folder ip and tc were taken from (--iproute), where start was told one
#   gpus      (--gpus-per-host) one line per host: NAME GPUS ORDER, GPUS its CUDA_VISIBLE_DEVICES
#             (e.g. 2,3), ORDER its CUDA_DEVICE_ORDER

# ip, tc and sysctl live in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

# Takes ip and tc from folder $1 before any on PATH: an iproute2 unpacked there (`dpkg -x
# iproute2_*.deb DIR` with its libraries' packages, on a machine without the package), its
# programs in DIR, DIR/sbin, DIR/usr/sbin or DIR/bin, its libraries in DIR's lib folders, found
# through LD_LIBRARY_PATH. Fails, saying why, when the folder lacks either program or they do not
# run.
cluster_use_iproute() {
  local dir="$1" d t found="" libs="" at
  [ -d "$dir" ] || { echo "tests/cluster: --iproute $dir: not a folder" >&2; return 2; }
  dir="$(cd "$dir" && pwd)"
  # Each where it runs from: Debian's package puts ip in bin/ (sbin/ip a link to /bin/ip, which
  # need not exist here) and tc in sbin/.
  for t in ip tc; do
    at=""
    for d in "$dir" "$dir/sbin" "$dir/usr/sbin" "$dir/bin" "$dir/usr/bin"; do
      if [ -f "$d/$t" ] && [ -x "$d/$t" ]; then at="$d"; break; fi
    done
    [ -n "$at" ] || { echo "tests/cluster: --iproute $dir: no $t in it (nor in its sbin, usr/sbin, bin or usr/bin)" >&2; return 2; }
    case ":$found:" in *":$at:"*) ;; *) found="$found${found:+:}$at" ;; esac
  done
  for d in "$dir"/lib "$dir"/lib/* "$dir"/usr/lib "$dir"/usr/lib/* "$dir"/lib64 "$dir"/usr/lib64; do
    if [ -d "$d" ] && compgen -G "$d/*.so*" >/dev/null; then libs="$libs${libs:+:}$d"; fi
  done
  export PATH="$found:$PATH"
  [ -z "$libs" ] || export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ip -V >/dev/null 2>&1 && tc -V >/dev/null 2>&1 ||
    { echo "tests/cluster: --iproute $dir: ip or tc from $found does not run here: $(ip -V 2>&1 | head -1)" >&2; return 2; }
}
if [ -n "${SCALEBENCH_IPROUTE_DIR:-}" ]; then cluster_use_iproute "$SCALEBENCH_IPROUTE_DIR" || exit 2; fi

# The namespace a process lives in (empty if it is gone).
cluster_ns_of() { readlink "/proc/$1/ns/net" 2>/dev/null || true; }

# The fields "name address pid netns" of host $2 (by name or address) of cluster $1.
cluster_host() {
  awk -v h="$2" '$1 == h || $2 == h { print; found = 1; exit } END { exit !found }' "$1/hosts"
}

# The GPUs of this machine that start --gpus-per-host shares out, into the array gpu_list:
# nvidia-smi's indices, or CUDA_VISIBLE_DEVICES's entries where it is set (as CUDA reads it: up to
# an entry -1; empty: none); gpu_from says which. Fails, the reason in gpu_why, where nvidia-smi is
# missing or lists no GPU, or the list is empty.
# shellcheck disable=SC2034 # gpu_list, gpu_from and gpu_why are for the caller
cluster_gpu_list() {
  local smi e entries
  gpu_list=() gpu_from="" gpu_why=""
  command -v nvidia-smi >/dev/null || { gpu_why="nvidia-smi not found (no NVIDIA driver on this machine)"; return 1; }
  smi=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>&1) ||
    { gpu_why="nvidia-smi lists no GPU: $(head -1 <<<"$smi")"; return 1; }
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    gpu_from="CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
    IFS=, read -ra entries <<<"${CUDA_VISIBLE_DEVICES// /}"
    for e in "${entries[@]}"; do [ "$e" != -1 ] || break; [ -z "$e" ] || gpu_list+=("$e"); done
  else
    gpu_from="nvidia-smi"
    mapfile -t gpu_list < <(tr -d ' ' <<<"$smi" | grep -E '^[0-9]+$' || true)
  fi
  [ ${#gpu_list[@]} -gt 0 ] || { gpu_why="no GPU here ($gpu_from lists none)"; return 1; }
}

# Sets the array host_env to the command words that give a command on host $2 (by name) of
# cluster $1 that host's environment: nothing, or where start was given --gpus-per-host, env(1)
# with the host's GPUs (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER) and without NCCL_HOSTID (with
# it NCCL would take every host for one and connect them by P2P or shared memory); where it was
# given --cores-per-host, taskset(1) with the host's CPUs.
cluster_host_env() {
  local gpus order cpus words=()
  host_env=()
  if [ -f "$1/gpus" ]; then
    read -r gpus order < <(awk -v h="$2" '$1 == h { print $2, $3 }' "$1/gpus")
    [ -n "${gpus:-}" ] || { echo "tests/cluster: host $2 has no GPUs in $1/gpus" >&2; return 255; }
    words=(-u NCCL_HOSTID "CUDA_VISIBLE_DEVICES=$gpus" "CUDA_DEVICE_ORDER=$order")
  fi
  if [ -f "$1/cpus" ]; then
    cpus=$(awk -v h="$2" '$1 == h { print $2 }' "$1/cpus")
    [ -n "$cpus" ] || { echo "tests/cluster: host $2 has no CPUs in $1/cpus" >&2; return 255; }
  fi
  [ ${#words[@]} = 0 ] || host_env=(env "${words[@]}")
  [ -z "${cpus:-}" ] || host_env+=(taskset -c "$cpus")
  return 0
}

# The CPUs this process may run on (its affinity list), one number a line, in order.
cluster_allowed_cpus() {
  local part a b
  for part in $(awk '/^Cpus_allowed_list:/ { gsub(",", " ", $2); print $2 }' /proc/self/status); do
    a=${part%-*} b=${part#*-}
    seq "$a" "$b"
  done
}

# Runs COMMAND... inside host $2's namespaces (net, UTS, mount) in the current folder, with the
# host's environment (cluster_host_env); refuses when the holder process is gone or is no longer
# in the namespace start made (pid reuse).
cluster_enter() {
  local dir="$1" host="$2" line name addr pid ns host_env
  shift 2
  line=$(cluster_host "$dir" "$host") || { echo "tests/cluster: cannot enter $host: no such host in $dir/hosts" >&2; return 255; }
  read -r name addr pid ns <<<"$line"
  [ "$(cluster_ns_of "$pid")" = "$ns" ] || { echo "tests/cluster: host $name ($addr) is not running" >&2; return 255; }
  cluster_host_env "$dir" "$name" || return 255
  nsenter --target "$pid" --net --uts --mount --wd="$PWD" -- "${host_env[@]}" "$@"
}

# The pids of every process inside any of cluster $1's host namespaces (one find over /proc).
cluster_pids_inside() {
  local dir="$1" ns match=()
  [ -f "$dir/hosts" ] || return 0
  for ns in $(awk '{ print $4 }' "$dir/hosts"); do
    ns="${ns//[/\\[}"
    match+=(-o -lname "${ns//]/\\]}")
  done
  [ ${#match[@]} -gt 0 ] || return 0
  # (find complains about processes that end while it runs: not an error here)
  { find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/net' \( "${match[@]:1}" \) -printf '%h\n' 2>/dev/null || true; } |
    cut -d/ -f3
}

# Bits per second of a tc rate such as 10gbit, 100gbit, 500mbit.
cluster_rate_bits() {
  local r="${1,,}" n
  n="${r%%[a-z]*}"
  case "${r#"$n"}" in
    gbit) echo $((n * 1000000000)) ;;
    mbit) echo $((n * 1000000)) ;;
    kbit) echo $((n * 1000)) ;;
    bit | "") echo "$n" ;;
    *) return 1 ;;
  esac
}
