#include "report/summary_table.hpp"

#include <fmt/format.h>

#include "results/files.hpp"

namespace scalebench::report {
using results::csv_escape;

namespace {

std::string cell(const TextColumn& c, const std::string& text) {
  std::string out = c.gap;
  if (c.width == 0) return out.append(text);
  return out.append(c.align == Align::left ? fmt::format("{:<{}}", text, c.width)
                                           : fmt::format("{:>{}}", text, c.width));
}

std::string piped(const Cells& cells) {
  std::string out = "|";
  for (const auto& c : cells) out.append(" ").append(c).append(" |");
  return out + "\n";
}

}  // namespace

std::string text_header(const std::vector<TextColumn>& columns) {
  std::string out;
  for (const auto& c : columns) out += cell(c, c.head);
  out.push_back('\n');
  return out;
}

std::string text_row(const std::vector<TextColumn>& columns, const Cells& cells) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += cell(columns[i], i < cells.size() ? cells[i] : "");
  return out + "\n";
}

std::string markdown_header(const Cells& heads) {
  std::string rule = "|";
  for (std::size_t i = 0; i < heads.size(); ++i) rule += " --- |";
  return piped(heads) + rule + "\n";
}

std::string markdown_row(const Cells& cells) { return piped(cells); }

std::string csv_row(const Cells& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(csv_escape(fields[i]));
  }
  out.push_back('\n');
  return out;
}

}  // namespace scalebench::report
