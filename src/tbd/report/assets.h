// Files built into the binary (cmake/embed_file.cmake).
#pragma once

#include <string_view>

namespace tbd {

// Chart.js's minified UMD build (third_party/chartjs, MIT licence), inlined
// into HTML reports.
std::string_view chart_js_source();
std::string_view chart_js_version();  // "4.6.1", read from the file's banner

}  // namespace tbd
