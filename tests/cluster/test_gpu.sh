#!/usr/bin/env bash
# GPUs on 2 hosts of the test cluster, NCCL between them over the cluster's links
# (tests/cluster/start --gpus-per-host; docs/cluster.md, "GPU hosts"). The GPUs (nvidia-smi's, or
# CUDA_VISIBLE_DEVICES's entries) are split over 2 hosts, G = GPUs/2 each (2 GPUs: 2 x 1; 4: 2 x 2),
# one rank per GPU, NCCL_DEBUG=INFO passed on by mpirun -x:
#   - gemm --backend cublas --n 2048 --fill integer --distribution shared --transport nccl
#     --overlap on on every GPU of both hosts (--map-by ppr:G:node) and on 1 GPU of one host:
#     both ok, C identical (the records' verification.c_digest); the record's hosts are node1 and
#     node2, G ranks each, each GPU one of its host's; its network section moves bytes between
#     nodes, rows of A and C only at the node leaders and B once, on the record's b_lanes lanes
#     (rank j of each host its j-th slice; the shared distribution's model says so), the lanes
#     carried by NCCL between the hosts (distribution.b_lanes_transport), which NCCL's log shows;
#   - the same with --distribution replicated (B broadcast to every GPU by NCCL, across the
#     hosts): ok, C identical;
#   - gemm --algorithm summa2d --grid 2x2 --transport nccl, 4 ranks over the 2 hosts (needs G >= 2;
#     on 2 GPUs left out with a note): ok, C identical to the 1-GPU run's;
#   - montecarlo --problem pi --samples 1e9 --backend cuda on every GPU against 1 GPU: the
#     estimate's bits equal;
#   - NCCL's INFO log of each gemm across hosts: every connection between GPUs of different hosts
#     goes via NET/Socket (never P2P or SHM: the hosts' own hostnames give them their own host
#     hash), each run makes at least one (the shared run's B lanes, the replicated run's
#     collectives, Summa2D's), and NCCL's sockets use the hosts' eth0.
# Needs 2 GPUs (under ctest --resource-spec-file the 2 CTest gives it, else every GPU it sees) and
# a build with CUDA; skipped (exit 77) otherwise, saying why. Exit 1 with FAIL lines on a failure.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
skip() { echo "tests/cluster/test_gpu.sh: Skipped"; echo "$1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the test cluster needs root (network namespaces, a bridge)"
cluster_gpu_list || skip "needs 2 GPUs, one per host at least: $gpu_why"
total=${#gpu_list[@]}
[ "$total" -ge 2 ] || skip "needs 2 GPUs, one per host at least; $gpu_from gives $total (${gpu_list[*]})"
code=0
out=$("$bin" montecarlo --backend cuda --samples 1e6 --dry-run 2>&1) || code=$?
[ "$code" != 6 ] || skip "$out"
g=$((total / 2))
nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv,noheader >"$work/smi.csv" || fail "nvidia-smi --query-gpu"
cluster_up --hosts 2 --gpus-per-host "$g"
echo "cluster: 2 hosts x $g GPUs of $total ($gpu_from): $(tr '\n' ' ' <"$cluster/gpus")"

export NCCL_DEBUG=INFO
run() {  # run NAME RANKS PER-HOST ARGS...: scalebench under mpirun, record NAME.json, NCCL's log in nccl/NAME/
  local name="$1" ranks="$2" per_host="$3" code=0
  shift 3
  mkdir -p "$work/nccl/$name"
  timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np "$ranks" --map-by "ppr:$per_host:node" --bind-to none \
    -x NCCL_DEBUG -x "NCCL_DEBUG_FILE=$work/nccl/$name/%h.%p.log" \
    "$bin" "$@" --quiet --json "$work/$name.json" >"$work/$name.out" 2>&1 || code=$?
  if [ "$code" != 0 ]; then
    grep -v "NCCL INFO" "$work/$name.out" | tail -n 30
    fail "$name: $ranks ranks, $per_host per host: scalebench $* (exit $code)"
  fi
  echo "ran $name: $ranks rank(s), $per_host per host: scalebench $*"
}
gemm=(gemm --backend cublas --n 2048 --reps 1 --warmup 0 --fill integer)
run gemm_all $((2 * g)) "$g" "${gemm[@]}" --distribution shared --transport nccl --overlap on
run gemm_nccl $((2 * g)) "$g" "${gemm[@]}" --distribution replicated --transport nccl --overlap on
run gemm_one 1 1 "${gemm[@]}" --distribution shared --transport nccl --overlap on
summa=0
if [ "$g" -ge 2 ]; then
  run summa2d 4 2 "${gemm[@]}" --algorithm summa2d --grid 2x2 --transport nccl
  summa=1
else
  echo "note: summa2d on a 2x2 grid left out: it needs 2 GPUs per host, and $total GPUs give $g"
fi
mc=(montecarlo --problem pi --samples 1e9 --backend cuda --reps 1 --warmup 0)
run mc_all $((2 * g)) "$g" "${mc[@]}"
run mc_one 1 1 "${mc[@]}"

python3 - "$work" "$g" "$summa" "$cluster/gpus" <<'PY' || fail "the runs' records or NCCL's log (above)"
import collections, glob, json, re, sys
d, g, summa, gpus_file = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
problems = []
def load(name):
    return json.load(open(f"{d}/{name}.json"))
def bus(text):  # "00000000:1B:00.0" and "0000:1b:00.0" -> "1b:00.0"
    text = text.strip().lower()
    return text.split(":", 1)[1] if text.count(":") == 2 else text
# The GPUs: nvidia-smi index -> PCI bus; each host's GPUs (entries of its CUDA_VISIBLE_DEVICES) -> buses.
smi = [[f.strip() for f in line.split(",")] for line in open(f"{d}/smi.csv") if line.strip()]
bus_of_index = {i: bus(b) for i, b, _ in smi}
host_buses = {}
for line in open(gpus_file):
    host, entries, _ = line.split()
    buses = set()
    for e in entries.split(","):
        found = [bus(b) for i, b, u in smi if e == i or (e.startswith("GPU-") and u.startswith(e))]
        buses.update(found[:1])
    host_buses[host] = buses
host_of_bus = {b: h for h, bs in host_buses.items() for b in bs}
# NCCL names a GPU by its NVML index (decimal; NVML numbers as nvidia-smi does) or, before
# NCCL 2.12, by its bus id as a hex number (0000:1b:00.0 -> 1b000).
host_of_dev = {}
for i, b in bus_of_index.items():
    if b in host_of_bus:
        host_of_dev[i] = host_of_bus[b]
        host_of_dev["%x" % int(b.replace(":", "").replace(".", ""), 16)] = host_of_bus[b]

one = load("gemm_one")
if not one["ok"]:
    problems.append("the 1-GPU gemm is not ok")
for name in ["gemm_all", "gemm_nccl"] + (["summa2d"] if summa else []):
    rec = load(name)
    ranks = 4 if name == "summa2d" else 2 * g
    if not rec["ok"]:
        problems.append(f"{name}: not ok: {rec['verification']}")
    if rec["verification"]["c_digest"] != one["verification"]["c_digest"]:
        problems.append(f"{name}: C digest {rec['verification']['c_digest']} != the 1-GPU run's {one['verification']['c_digest']}")
    hosts = [i["host"] for i in rec["rank_info"]]
    per_host = ranks // 2
    if sorted(rec["hosts"]) != ["node1", "node2"] or collections.Counter(hosts) != {"node1": per_host, "node2": per_host}:
        problems.append(f"{name}: hosts {rec['hosts']}, ranks on {hosts}; want node1 and node2, {per_host} ranks each")
    devices = rec["gpus"]["devices"]
    if len({dv["uuid"] for dv in devices}) != ranks:
        problems.append(f"{name}: {len(devices)} GPUs used by {ranks} ranks: {devices}")
    for dv in devices:
        if host_buses.get(dv["host"]) and bus(dv["pci_bus_id"]) not in host_buses[dv["host"]]:
            problems.append(f"{name}: a rank on {dv['host']} used GPU {dv['pci_bus_id']}, not one of that host's ({sorted(host_buses[dv['host']])})")
    if name == "gemm_all":
        dist, net = rec["distribution"], rec["network"]
        if dist["scheme"] != "shared":
            problems.append(f"gemm_all: scheme {dist['scheme']}, not shared: {dist.get('warning')} {rec['warnings']}")
        if dist.get("b_lanes_transport") != "nccl":
            problems.append(f"gemm_all: B crossed the hosts by {dist.get('b_lanes_transport')}, not NCCL: {dist.get('warning')}")
        leaders = {m["leader"] for m in dist.get("host_memory_per_node", [])}
        inter = sum(p["inter_node_bytes"] for p in net["phases"].values())
        if inter <= 0:
            problems.append(f"gemm_all: no bytes between nodes in the network section: {net['phases']}")
        # Rows of A and C cross at the node leaders; B on b_lanes lanes: rank j < b_lanes of each
        # node receives the j-th slice, the slices of a node adding up to B.
        lanes = dist.get("b_lanes")
        seen = collections.Counter()
        node_rank = []
        for h in hosts:
            node_rank.append(seen[h])
            seen[h] += 1
        if "rank j of each node carries the j-th slice" in net["model"] and isinstance(lanes, int) and 1 <= lanes <= per_host:
            if len(leaders) != 2:
                problems.append(f"gemm_all: node leaders {sorted(leaders)}, not one per host")
            for phase, per_rank in dist["bytes_per_rank"].items():
                allowed = {r for r in range(ranks) if node_rank[r] < lanes} if phase == "broadcast" else leaders
                others = [r for r, b in enumerate(per_rank) if b and r not in allowed]
                if others:
                    problems.append(f"gemm_all: {phase}: bytes at ranks {others}, which carry nothing of it between nodes (leaders {sorted(leaders)}, {lanes} lanes for B)")
            b_received = sum(b for r, b in enumerate(dist["bytes_per_rank"]["broadcast"]) if hosts[r] != hosts[0])
            if b_received != 2048 * 2048 * 8:
                problems.append(f"gemm_all: the other host received {b_received} bytes of B, not B once (2048 x 2048 doubles)")
        else:
            problems.append(f"gemm_all: the network model does not say how B's lanes cross ({lanes} lanes): {net['model']}")
        if "nothing is copied inside a node" in net["model"]:
            inside = {p: v["intra_node_bytes"] for p, v in net["phases"].items() if v["intra_node_bytes"]}
            if inside:
                problems.append(f"gemm_all: bytes inside a node, which the model rules out: {inside}")
    # NCCL's log: "Channel 00/0 : 1[1] -> 2[2] [send] via NET/Socket/0" (P2P: "via P2P/CUMEM/read",
    # "via P2P/IPC"; shared memory: "via SHM/direct/direct").
    chan = re.compile(r"NCCL INFO Channel \d+(?:/\d+)? : (\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\](?: \[(send|receive)\])? via (\S+)")
    lines = []
    for path in sorted(glob.glob(f"{d}/nccl/{name}/*.log")) + [f"{d}/{name}.out"]:
        lines += open(path, errors="replace").read().splitlines()
    across, within, bad, unknown = collections.Counter(), collections.Counter(), [], set()
    for line in lines:
        m = chan.search(line)
        if not m:
            continue
        a, b = host_of_dev.get(m.group(2).lower()), host_of_dev.get(m.group(4).lower())
        if a is None or b is None:
            unknown.add(m.group(2) if a is None else m.group(4))
            continue
        how = m.group(6)
        kind = how.split("/")[0] + "/" + how.split("/")[1] if "/" in how else how
        if a != b:
            across[kind] += 1
            if not how.startswith("NET/Socket"):
                bad.append(line.strip())
        else:
            within[kind] += 1
    if unknown:
        problems.append(f"{name}: NCCL names GPUs {sorted(unknown)}, none of the hosts' ({host_of_dev})")
    if bad:
        problems.append(f"{name}: {len(bad)} connection(s) between hosts not via NET/Socket, e.g. " + " | ".join(bad[:3]))
    if not across:
        problems.append(f"{name}: NCCL's log shows no connection between the hosts ({len(lines)} lines; NCCL_DEBUG=INFO lost?)")
    using = set()
    for line in lines:
        m = re.search(r"NET/Socket : Using (.*)", line)
        if m:
            using.update(re.findall(r"\]([^:\s]+):", m.group(1)))
    if using - {"eth0"}:
        problems.append(f"{name}: NCCL's sockets use {sorted(using)}, not the hosts' eth0")
    nodes = {int(m.group(2)) for m in (re.search(r"nRanks (\d+) nNodes (\d+)", l) for l in lines) if m and int(m.group(1)) == ranks}
    if nodes and nodes != {2}:
        problems.append(f"{name}: NCCL counts {sorted(nodes)} nodes in the communicator of all {ranks} ranks, not 2")
    print(f"{name}: NCCL connections across hosts {dict(across)}, within a host {dict(within)}; sockets on {sorted(using) or '?'}")

mc = {n: load(n) for n in ("mc_all", "mc_one")}
for n, rec in mc.items():
    if not rec["ok"]:
        problems.append(f"{n}: not ok")
if sorted(mc["mc_all"]["hosts"]) != ["node1", "node2"]:
    problems.append(f"mc_all: hosts {mc['mc_all']['hosts']}")
est = [mc[n]["result"]["estimate"] for n in ("mc_all", "mc_one")]
if est[0].hex() != est[1].hex():
    problems.append(f"montecarlo: estimate {est[0].hex()} on {2 * g} GPUs, {est[1].hex()} on 1")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
echo "cluster GPUs: 2 hosts x $g GPUs: gemm (shared and replicated, nccl, overlap)$([ "$summa" = 1 ] && echo ", summa2d 2x2") C identical to 1 GPU; montecarlo bit-identical; NCCL between hosts via NET/Socket only"
