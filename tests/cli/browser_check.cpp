#include "browser_check.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_runner.hpp"

namespace {

constexpr const char* kChromium = "chromium --headless --disable-gpu --no-sandbox --hide-scrollbars "
                                  "--enable-logging=stderr --v=0 ";

// How Chromium lays out `page` in a window `width` px wide: the window's inner width, the
// document's scroll width, and the box's scroll and client widths. The page is shown in a frame
// that wide (a headless window is at least 500 px) by a wrapper page whose script writes the
// numbers into the DOM Chromium dumps; the pages themselves have no script.
struct PageWidths {
  int window = 0, document = 0, box_scroll = 0, box_client = 0;
};

PageWidths widths_in_browser(const std::string& page, int width, const std::string& dir, const std::string& box) {
  const std::string w = std::to_string(width);
  const std::string wrapper = dir + "/widths-" + w + ".html";
  std::ofstream(wrapper) << "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=\"f\" src=\"file://" << page
                         << "\" style=\"width:" << w << "px;height:1000px;border:0\"></iframe><script>"
                         << "document.getElementById('f').addEventListener('load', () => {"
                            " const f = document.getElementById('f'), d = f.contentDocument;"
                            " const t = d.querySelector('"
                         << box
                         << "'), p = document.createElement('pre');"
                            " p.id = 'widths'; p.textContent = [f.contentWindow.innerWidth,"
                            " d.documentElement.scrollWidth, t.scrollWidth, t.clientWidth].join(' ');"
                            " document.body.appendChild(p); });</script></body></html>";
  const CliRun dom = run_command(std::string(kChromium) + "--allow-file-access-from-files --user-data-dir='" + dir +
                                 "/chromium-profile' --window-size=" + std::to_string(width + 100) +
                                 ",1100 --dump-dom 'file://" + wrapper + "' 2>/dev/null");
  const auto at = dom.output.find("<pre id=\"widths\">");
  EXPECT_NE(at, std::string::npos) << dom.output.substr(0, 2000);
  if (at == std::string::npos) return {};
  PageWidths out;
  std::istringstream in(dom.output.substr(at + 17));
  in >> out.window >> out.document >> out.box_scroll >> out.box_client;
  return out;
}

}  // namespace

std::string python_with_matplotlib() {
  // Asked once a test program: each ask starts Python and imports matplotlib (about half a second).
  static const std::string found = [] {
    for (const char* p : {"python3", "/usr/bin/python3"}) {
      if (run_command(std::string(p) + " -c 'import matplotlib' 2>/dev/null").exit_code == 0) return std::string(p);
    }
    return std::string();
  }();
  return found;
}

bool have_chromium() { return run_command("command -v chromium >/dev/null 2>&1").exit_code == 0; }

std::string dom_in_browser(const std::string& page, const std::string& dir) {
  const std::string log = dir + "/chromium.log";
  const CliRun dom = run_command(std::string(kChromium) + "--dump-dom 'file://" + page + "' 2>" + log);
  EXPECT_EQ(dom.exit_code, 0) << read_file(log);
  if (dom.exit_code != 0) return "";
  const std::string said = read_file(log);
  EXPECT_EQ(said.find("CONSOLE"), std::string::npos) << said;
  // Nothing fetched from the network (namespaces like xmlns="http://www.w3.org/2000/svg" are names).
  for (const char* fetch : {"src=\"http", "href=\"http", "url(http", "@import", "<script"}) {
    EXPECT_EQ(dom.output.find(fetch), std::string::npos) << fetch;
  }
  return dom.output;
}

void check_screenshot(const std::string& page, const std::string& dir) {
  const std::string log = dir + "/chromium.log";
  const std::string png = dir + "/shot.png";
  const CliRun shot = run_command(std::string(kChromium) + "--window-size=390,2400 --screenshot='" + png +
                                  "' 'file://" + page + "' 2>>" + log);
  ASSERT_EQ(shot.exit_code, 0) << read_file(log);
  const CliRun colours = run_command(
      python_with_matplotlib() +
      " -c 'import sys, numpy as np, matplotlib.image as m; a = m.imread(sys.argv[1]); "
      "print(len(np.unique((a[..., :3] * 255).astype(int).reshape(-1, 3), axis=0)), a.shape[0], a.shape[1])' '" +
      png + "'");
  ASSERT_EQ(colours.exit_code, 0) << colours.output;
  std::istringstream in(colours.output);
  int distinct = 0, height = 0, width = 0;
  in >> distinct >> height >> width;
  EXPECT_GT(distinct, 50) << "a blank page? " << colours.output;
  EXPECT_EQ(width, 390) << colours.output;
}

void check_widths(const std::string& page, const std::string& dir, const std::string& box) {
  for (const int width : {1300, 390}) {
    SCOPED_TRACE("window " + std::to_string(width) + " px");
    const PageWidths w = widths_in_browser(page, width, dir, box);
    EXPECT_EQ(w.window, width) << "the frame Chromium laid the page out in";
    EXPECT_LE(w.document, width) << "the page scrolls sideways";
    EXPECT_GT(w.box_client, 0);
    EXPECT_LE(w.box_scroll, w.box_client) << box << " scrolls sideways";
  }
}
