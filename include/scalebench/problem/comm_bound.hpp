#pragma once
// The communication lower bounds of a parallel matrix multiply C (m×n) = A (m×k) · B (k×n) on p
// processes, in words (elements), against which a run's traffic is put as "x times the bound"
// (docs/output.md, `comm_bound`; docs/model.md, "How far from the least traffic").
//
// - Al Daas, Ballard, Grigori, Kumar, Rouse, "Tight memory-independent parallel matrix
//   multiplication communication lower bounds" (SPAA 2022), Theorem 3: with the dimensions sorted
//   d1 ≥ d2 ≥ d3, a process doing 1/p of the d1·d2·d3 products accesses at least
//     D = d2·d3 + (d1·d2 + d1·d3)/p          when p ≤ d1/d2,
//     D = 2·(d1·d2·d3²/p)^½ + d1·d2/p        when d1/d2 ≤ p ≤ d1·d2/d3²,
//     D = 3·(d1·d2·d3/p)^⅔                   when d1·d2/d3² ≤ p
//   words of A, B and C; with one copy of the inputs and output spread evenly it owns
//   (mn + mk + nk)/p of them, so it must move at least D − (mn + mk + nk)/p.
// - Kwasniewski et al., "Red-blue pebbling revisited" (SC19, COSMA), Theorem 2: with S words of
//   memory a process doing V = mnk/p products moves at least 2V/√S + S words when S ≤ V^⅔.
#include <cstdint>
#include <vector>

namespace scalebench {

struct GemmShape;

// D above: the words of A, B and C a process doing 1/p of the products must access.
double accessed_words_bound(const GemmShape& s, int p);
// (mn + mk + nk)/p: a process's even share of one copy of A, B and C.
double even_share_words(const GemmShape& s, int p);
// What a process must move when A, B and C start spread evenly: D − the even share (≥ 0).
double spread_bound_words(const GemmShape& s, int p);
// What a process that starts with none of A, B and C must move with S words of memory: the larger
// of D and, when S ≤ (mnk/p)^⅔, 2(mnk/p)/√S + S. S ≤ 0: memory not known, D alone.
double from_nothing_bound_words(const GemmShape& s, int p, double memory_words);
// What the process of a grid's block that touches the most words must move beyond its even share
// when A, B and C start spread evenly: rank (i, j) of a PR×PC grid reads the rows_i × k of A and
// k × cols_j of B and writes rows_i × cols_j of C (row blocks: a P×1 grid, cols = {n}).
double schedule_spread_words(const GemmShape& s, const std::vector<std::int64_t>& rows,
                             const std::vector<std::int64_t>& cols);

}  // namespace scalebench
