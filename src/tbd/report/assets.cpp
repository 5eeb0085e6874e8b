#include "tbd/report/assets.h"

#include <cstddef>

// Defined by the source CMake generates from third_party/chartjs/chart.umd.js.
extern const unsigned char tbd_asset_chart_js[];
extern const std::size_t tbd_asset_chart_js_size;

namespace tbd {

std::string_view chart_js_source() {
  return {reinterpret_cast<const char*>(tbd_asset_chart_js), tbd_asset_chart_js_size};
}

std::string_view chart_js_version() {
  const std::string_view js = chart_js_source();
  const auto at = js.find("Chart.js v");
  if (at == std::string_view::npos) return "unknown";
  const auto start = at + 10, end = js.find_first_of(" \n", start);
  return js.substr(start, end - start);
}

}  // namespace tbd
