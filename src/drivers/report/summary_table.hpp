#pragma once
// The summaries both drivers write are rows of cells rendered by small writers: a fixed-width text
// table (stdout), a Markdown table (summary.md), CSV (contrast.csv, summary.csv). Each driver says
// what its columns are and what each row's cells hold; the writers only lay them out. The JSON of
// a summary (contrast.json, summary.json) is the drivers' rows themselves.
#include <string>
#include <vector>

namespace scalebench::report {

enum class Align { left, right };

// A column of the text table: its heading, its width (0: as wide as its text, for the last
// column), its alignment and the gap written before it.
struct TextColumn {
  std::string head;
  int width = 0;
  Align align = Align::right;
  std::string gap = " ";
};

using Cells = std::vector<std::string>;

// The heading line and one line per row, each cell padded to its column's width.
std::string text_header(const std::vector<TextColumn>& columns);
std::string text_row(const std::vector<TextColumn>& columns, const Cells& cells);

// "| a | b |" lines: the heading, the "| --- |" rule, one line per row.
std::string markdown_header(const Cells& heads);
std::string markdown_row(const Cells& cells);

// One CSV line, each field quoted when it must be (csv_escape).
std::string csv_row(const Cells& fields);

}  // namespace scalebench::report
