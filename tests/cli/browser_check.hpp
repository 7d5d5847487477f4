#pragma once
// Pages as a browser shows them (headless Chromium), for the tests of the HTML pages scalebench
// writes: report.html and the page of `compare --report`. Each check is a GoogleTest expectation.
#include <string>

// A Python with matplotlib, as the report itself looks for one; empty when none.
std::string python_with_matplotlib();
bool have_chromium();

// The DOM Chromium builds of `page`, checked: it loaded without a console message, and nothing in
// it is fetched from the network or run (no http source or link, url(http, @import, <script). Empty
// (and a failure) when Chromium could not load it. `dir` holds Chromium's log.
std::string dom_in_browser(const std::string& page, const std::string& dir);
// A screenshot of `page` in a phone's 390 px window is 390 px wide and not blank (more than 50
// colours). Needs python_with_matplotlib().
void check_screenshot(const std::string& page, const std::string& dir);
// In windows 1300 and 390 px wide, `page` does not scroll sideways, nor does the first element
// `box` (a CSS selector) holds.
void check_widths(const std::string& page, const std::string& dir, const std::string& box);
