#!/usr/bin/env python3
"""Rewrites an hwloc XML export in format 3.0 (hwloc >= 3) as format 2.0, which hwloc 2.x reads.

Only what differs between the two formats changes; every object, cpuset, nodeset, PCI id and
distance matrix is copied as is:
  - <topology version="3.0">      -> version="2.0"
  - osdev_type bit flags (3.0)    -> the 2.x enum: storage 1 -> 0 (block), GPU 4 -> 1,
                                     coprocessor 8 -> 5, network 16 -> 2, OpenFabrics 32 -> 3,
                                     DMA 64 -> 4 (a mix such as 12 keeps its coprocessor part)
  - topology-level <info> lines   -> moved into the Machine object, where 2.x keeps them
Usage: hwloc3_to_hwloc2.py IN.xml OUT.xml
"""
import re
import sys

OSDEV_V3_TO_V2 = [(8, 5), (4, 1), (1, 0), (16, 2), (32, 3), (64, 4)]  # first match wins


def osdev_v2(match):
    flags = int(match.group(1))
    for bit, v2 in OSDEV_V3_TO_V2:
        if flags & bit:
            return f'osdev_type="{v2}"'
    raise SystemExit(f"unknown osdev_type flags {flags}")


def main(src, dst):
    lines = open(src, encoding="utf-8").read().split("\n")
    out, top_infos, depth = [], [], 0
    for line in lines:
        stripped = line.strip()
        if stripped.startswith('<topology version="3.0">'):
            line = line.replace('version="3.0"', 'version="2.0"')
        # An <info> directly under <topology> (two-space indent, after the root object closed).
        if line.startswith("  <info ") and depth == 0:
            top_infos.append("  " + line)
            continue
        if stripped.startswith("<object "):
            depth += 0 if stripped.endswith("/>") else 1
        elif stripped == "</object>":
            depth -= 1
        out.append(re.sub(r'osdev_type="(\d+)"', osdev_v2, line))
    # Machine's infos come right after its opening line and its own <info> lines.
    machine = next(i for i, l in enumerate(out) if '<object type="Machine"' in l)
    at = machine + 1
    while out[at].strip().startswith("<info "):
        at += 1
    out[at:at] = top_infos
    open(dst, "w", encoding="utf-8").write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
